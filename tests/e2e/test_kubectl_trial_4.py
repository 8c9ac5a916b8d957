"""The fourth kubectl trial on `kjobs up` (docs/kubectl-trial-4.md): raw list pages as kubectl and the official
client read them, and kubectl edit's re-opened file after an invalid change. Each test is what a user types and
what a cluster answers."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("kubectl-trial-4")) as kubectl:
        yield kubectl


def _job(name: str) -> str:
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  suspend: true\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n"
        "        command: [sh, -c, 'sleep 2']\n"
    )


def test_a_page_of_jobs_has_items_without_apiversion_and_kind(up: Up) -> None:
    # kube-apiserver converts a list item by item, leaving each item's TypeMeta empty: `get --raw` of a page shows
    # items starting at `metadata`, and the official client's `items[0].kind` is None. kjobs sent each item as
    # stored, apiVersion and kind first.
    for name in ("page-a", "page-b"):
        assert up.ok("apply", "-f", "-", stdin=_job(name)) == f"job.batch/{name} created"
    page = json.loads(up.ok("get", "--raw", "/apis/batch/v1/namespaces/default/jobs?limit=1"))
    assert (page["kind"], page["apiVersion"]) == ("JobList", "batch/v1")
    assert page["metadata"]["remainingItemCount"] == 1 and page["metadata"]["continue"]
    assert list(page["items"][0]) == ["metadata", "spec", "status"]
    assert page["items"][0]["metadata"]["name"] == "page-a"

    api = k8s_config.new_client_from_config(str(up.config))
    try:
        batch = k8s.BatchV1Api(api)
        first = batch.list_namespaced_job("default", limit=1)
        assert (first.kind, first.api_version) == ("JobList", "batch/v1")
        assert (first.items[0].kind, first.items[0].api_version) == (None, None)
        rest = batch.list_namespaced_job("default", limit=1, _continue=first.metadata._continue)
        assert [job.metadata.name for job in rest.items] == ["page-b"] and rest.items[0].kind is None
        assert rest.metadata._continue is None
    finally:
        api.close()
    # kubectl fills each item's kind from the list's, as against a cluster
    assert up.ok("get", "jobs", "-o", "jsonpath={.items[*].kind}") == "Job Job"
    assert up.ok("get", "jobs", "--chunk-size=1", "-o", "name") == "job.batch/page-a\njob.batch/page-b"
    up.ok("delete", "jobs", "page-a", "page-b")


def test_kubectl_edit_reopens_the_file_with_the_servers_errors(up: Up) -> None:
    # An edit of the immutable template: kubectl opens the editor again with the Invalid causes as comments above
    # the object, then (the same file saved again) gives up.
    assert up.ok("apply", "-f", "-", stdin=_job("edited")) == "job.batch/edited created"
    seen = up.home / "seen"
    seen.mkdir()
    editor = up.home / "editor.sh"
    editor.write_text(f'#!/bin/sh\nn=$(ls {seen} | wc -l)\ncp "$1" {seen}/$n.yaml\nsed -i "s/sleep 2/sleep 3/" "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.run(
        ["kubectl", "edit", "job", "edited"], capture_output=True, text=True, env={**env, "EDITOR": str(editor)}
    )
    assert proc.returncode == 1
    out = proc.stderr.strip()
    assert out.startswith('error: jobs.batch "edited" is invalid\nA copy of your changes has been stored to "'), out
    assert out.endswith("error: Edit cancelled, no valid changes were saved."), out
    first, second = (seen / "0.yaml").read_text(), (seen / "1.yaml").read_text()
    assert not first.splitlines()[3].startswith("# jobs.batch")
    lines = second.splitlines()
    assert lines[3:5] == ["#", '# jobs.batch "edited" was not valid:']
    assert lines[5].startswith("# * spec.template: Invalid value: ") and lines[5].endswith(": field is immutable")
    assert lines[6] == "#" and lines[7] == "apiVersion: batch/v1"
    up.ok("delete", "job", "edited")
