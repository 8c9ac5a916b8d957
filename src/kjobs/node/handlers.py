"""Probes and lifecycle hooks a runtime does not run, said on the pod.

Design note: pure. The process runtime runs a container's `startupProbe`, `livenessProbe` and `readinessProbe`
(`exec`, `httpGet`, `tcpSocket`) and its `lifecycle.postStart`/`preStop` hooks (`exec`, `httpGet`, `sleep`) as a
kubelet does (`kjobs.node.handlerrunner`); `grpc` probes and the deprecated `tcpSocket` hook it does not run,
and the simulated runtime runs none (its containers are started and ready while they run, and get no
`preStop`). What is not run changes what a Job does (a liveness failure on a cluster fails the pod), so the node
agent says so in a Warning event on the pod (kjobs' own reason: a kubelet runs them) and `kjobs run` prints it
before the Job starts, as for volumes (`kjobs.node.volumes`) and securityContext fields (`kjobs.node.security`).
"""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.node.probing import PROBES, RUNNABLE_HOOK_ACTIONS, RUNNABLE_PROBE_ACTIONS, action_of

NOT_RUN = "HandlersNotRun"

_HOOKS = ("postStart", "preStop")
_PROBE_KEYS = frozenset(PROBES)


def not_run(pod: Obj, *, runs_handlers: bool = True) -> list[str]:
    """The probes and hooks of the pod's containers that are not run, `livenessProbe (container main)`, in spec
    order (empty for most pods); with `runs_handlers` False (the simulated runtime), all of them."""
    spec = pod.get("spec") or {}
    found: list[str] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            # each comprehension is a call on this Python: made only for a container with a probe or a lifecycle
            names = (
                [
                    probe
                    for probe in PROBES
                    if isinstance(container.get(probe), dict)
                    and not (runs_handlers and action_of(container[probe], RUNNABLE_PROBE_ACTIONS))
                ]
                if not _PROBE_KEYS.isdisjoint(container)
                else []
            )
            lifecycle = container.get("lifecycle") or {}
            if lifecycle:
                names += [
                    f"lifecycle.{hook}"
                    for hook in _HOOKS
                    if isinstance(lifecycle.get(hook), dict)
                    and not (runs_handlers and action_of(lifecycle[hook], RUNNABLE_HOOK_ACTIONS))
                ]
            if names:
                found.append(f"{', '.join(names)} (container {container.get('name', '')})")
    return found


def not_run_message(found: list[str], *, runs_handlers: bool = True) -> str:
    """The Warning event's message for what `not_run` found."""
    what = "grpc probes or tcpSocket lifecycle hooks" if runs_handlers else "probes or lifecycle hooks"
    return (
        f"kjobs runs no {what}: "
        + "; ".join(found)
        + " not run; the containers count as started and ready while they run"
    )
