"""Pod builders shared by the node tests."""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj
from kjobs.node.observations import Attempt, PodRecord

T0 = 1_700_000_000.0


def make_pod(
    containers: list[Obj] | None = None,
    *,
    init: list[Obj] | None = None,
    policy: str = "Never",
    uid: str = "uid-1",
    name: str = "job-0-abcde",
    **spec: Any,
) -> Obj:
    pod_spec: Obj = {"restartPolicy": policy, "containers": containers or [{"name": "main", "image": "busybox"}]}
    if init:
        pod_spec["initContainers"] = init
    pod_spec.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": {}, "annotations": {}},
        "spec": pod_spec,
    }


def attempt(
    container: str = "main",
    number: int = 0,
    *,
    start: float = T0,
    end: float | None = None,
    code: int | None = None,
    signal: int | None = None,
    oom: bool = False,
) -> Attempt:
    return Attempt(
        container=container,
        number=number,
        container_id=f"kjobs://{container}-{number}",
        started_at=start,
        finished_at=end,
        exit_code=code,
        signal=signal,
        oom=oom,
    )


def record(pod: Obj, *attempts: Attempt) -> PodRecord:
    rec = PodRecord(pod=pod, admitted_at=T0)
    for a in attempts:
        rec.attempts.setdefault(a.container, []).append(a)
    return rec
