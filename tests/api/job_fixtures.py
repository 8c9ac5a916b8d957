"""Builders for valid Jobs and Pods used by the validation and defaulting tests."""

from __future__ import annotations

from typing import Any

from kjobs.api.defaults import default_job, prepare_job_for_create
from kjobs.api.types import Obj

UID = "1a2b3c"


def raw_job(name: str = "myjob", **spec: Any) -> Obj:
    """A minimal Job manifest as a user writes it (restartPolicy Never, one container)."""
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}],
                }
            },
        },
    }
    body["spec"].update(spec)
    return body


def api_job(name: str = "myjob", **spec: Any) -> Obj:
    """The same Job after defaulting and `PrepareForCreate`, i.e. what `validate_job` sees on create."""
    return prepare_job_for_create(default_job(raw_job(name, **spec)), uid=UID)


def stored_job(name: str = "myjob", **spec: Any) -> Obj:
    """A created Job as stored (resourceVersion set), the `old` object of an update."""
    job = default_job(api_job(name, **spec))
    job["metadata"]["resourceVersion"] = "1"
    return job


def template_spec(job: Obj) -> Obj:
    """The pod spec inside a Job's template."""
    spec: Obj = job["spec"]["template"]["spec"]
    return spec
