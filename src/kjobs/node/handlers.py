"""Probes and lifecycle hooks, which the process runtime does not run.

Design note: pure. A kubelet runs a container's `startupProbe`, `livenessProbe` and `readinessProbe` (pkg/kubelet/
prober) and its `lifecycle.postStart`/`preStop` hooks (pkg/kubelet/lifecycle); kjobs runs none of them: a
container is Running and ready from its start until its exit, a failing liveness probe never restarts it, and
`preStop` is not run before SIGTERM. That changes what a Job does (a liveness failure on a cluster fails the pod),
so the node agent says so in a Warning event on the pod (kjobs' own reason: a kubelet runs them) and `kjobs run`
prints it before the Job starts, as for volumes (`kjobs.node.volumes`) and securityContext fields
(`kjobs.node.security`).
"""

from __future__ import annotations

from kjobs.api.types import Obj

NOT_RUN = "HandlersNotRun"

_PROBES = ("startupProbe", "livenessProbe", "readinessProbe")
_HOOKS = ("postStart", "preStop")


def not_run(pod: Obj) -> list[str]:
    """The probes and hooks of the pod's containers, `livenessProbe (container main)`, in spec order (empty for
    most pods)."""
    spec = pod.get("spec") or {}
    found: list[str] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            names = [probe for probe in _PROBES if container.get(probe)]
            lifecycle = container.get("lifecycle") or {}
            names += [f"lifecycle.{hook}" for hook in _HOOKS if lifecycle.get(hook)]
            if names:
                found.append(f"{', '.join(names)} (container {container.get('name', '')})")
    return found


def not_run_message(found: list[str]) -> str:
    """The Warning event's message for what `not_run` found."""
    return (
        "kjobs runs no probes or lifecycle hooks: "
        + "; ".join(found)
        + " not run; the containers count as started and ready while they run"
    )
