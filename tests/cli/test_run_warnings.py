"""`kjobs run` says, before the Job starts, what the node will not do for its pods (it shows no Events)."""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.cli.run import template_warnings


def job(spec: Obj) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": spec}}}


def test_probes_hooks_and_volumes_of_the_template_are_named() -> None:
    container = {
        "name": "main",
        "image": "busybox",
        "command": ["true"],
        "startupProbe": {"exec": {"command": ["true"]}},
        "volumeMounts": [{"name": "scratch", "mountPath": "/data"}],
    }
    warnings = template_warnings(job({"containers": [container], "volumes": [{"name": "scratch", "emptyDir": {}}]}))
    assert warnings == [
        'kjobs runs containers as host processes and mounts no volumes: emptyDir "scratch" at /data (container main) '
        "not mounted; the containers start without them (read ConfigMaps and Secrets through env or envFrom)",
        "kjobs runs no probes or lifecycle hooks: startupProbe (container main) not run; the containers count as "
        "started and ready while they run",
    ]


def test_a_plain_template_gets_no_warning() -> None:
    assert template_warnings(job({"containers": [{"name": "main", "image": "busybox", "command": ["true"]}]})) == []
