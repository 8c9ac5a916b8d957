"""The pods a sync plans are private copies of the template: the API may complete them in place."""

from __future__ import annotations

import copy
from typing import Any

from kjobs.job.sync import plan_sync

NOW = 1_767_225_600.0


def indexed_job() -> dict[str, Any]:
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["sh", "-c", "echo $(GREETING)"],
        "env": [{"name": "GREETING", "value": "hi"}],
        "resources": {"limits": {"memory": "64Mi"}},
    }
    return {
        "metadata": {"name": "j", "namespace": "default", "uid": "u"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 3,
            "parallelism": 3,
            "template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"restartPolicy": "Never", "containers": [container]},
            },
        },
    }


def test_planned_pods_share_nothing_with_the_job_or_each_other() -> None:
    job = indexed_job()
    before = copy.deepcopy(job)
    pods = plan_sync(job, [], now=NOW).creations
    assert [p["spec"]["hostname"] for p in pods] == ["j-0", "j-1", "j-2"]
    for pod in pods:
        (main,) = pod["spec"]["containers"]
        assert main["command"] == ["sh", "-c", "echo $(GREETING)"]
        assert [e["name"] for e in main["env"]] == ["GREETING", "JOB_COMPLETION_INDEX"]
        # What an API server's defaulting does to a pod it is handed: requests from limits, fields filled in.
        main["resources"]["requests"] = dict(main["resources"]["limits"])
        main["env"][0]["value"] = "changed"
        main["command"].append("more")
        pod["metadata"]["labels"]["extra"] = "x"
    assert job == before
    assert pods[1]["spec"]["containers"][0]["command"] == ["sh", "-c", "echo $(GREETING)", "more"]
