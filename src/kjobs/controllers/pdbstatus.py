"""PodDisruptionBudget status arithmetic (`pkg/controller/disruption`), pure.

`expected_and_desired` turns `minAvailable`/`maxUnavailable` (integer or percent, percentages rounded up) into
(expectedPods, desiredHealthy): an integer `minAvailable` counts the selected pods; anything else needs the
scale of each pod's controller, which kjobs can only answer with Kubernetes' error ("jobs.batch does not
implement the scale subresource" for Jobs). `status_for` then counts healthy pods (Ready, not being deleted,
not recently disrupted), prunes `disruptedPods` entries older than 2 minutes and sets the `DisruptionAllowed`
condition (`SufficientPods`/`InsufficientPods`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kjobs.api.conditions import find_condition, set_status_condition
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.job import pods as P

DELETION_TIMEOUT = 120.0
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"


class ExpectedCountError(Exception):
    """The expected pod count cannot be computed (the text is Kubernetes' error message)."""


@dataclass(frozen=True)
class Counts:
    """The numbers a PDB's status is made of."""

    expected: int
    desired_healthy: int
    unmanaged: tuple[str, ...] = ()


def scaled_value(value: object, total: int) -> int:
    """`intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value[:-1] if value.endswith("%") else None
        if text is not None and text.lstrip("-").isdigit():
            return math.ceil(int(text) * total / 100)
        raise ExpectedCountError(f"invalid value for IntOrString: invalid value {value!r}")
    raise ExpectedCountError(f"invalid value for IntOrString: invalid type: {type(value).__name__}")


def _controller_ref(pod: Obj) -> Obj | None:
    return next((r for r in (pod.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")), None)


ScaleLookup = Callable[[Obj], int]
"""A controller reference → its scale (`spec.replicas` of its scale subresource); raises ExpectedCountError."""


def no_scale(served: dict[tuple[str, str], str]) -> ScaleLookup:
    """The lookup for a server whose kinds have no scale subresource (kjobs): Kubernetes' errors.

    `served` maps (group, kind) to the resource the server serves it as, e.g. ("batch", "Job") → "jobs".
    """

    def lookup(ref: Obj) -> int:
        api_version = str(ref.get("apiVersion") or "")
        group = api_version.rpartition("/")[0]
        kind = str(ref.get("kind") or "")
        resource = served.get((group, kind))
        if resource is None:
            raise ExpectedCountError(f'no matches for kind "{kind}" in version "{api_version}"')
        name = f"{resource}.{group}" if group else resource
        raise ExpectedCountError(f"{name} does not implement the scale subresource")

    return lookup


def expected_scale(pods: list[Obj], scale_of: ScaleLookup) -> tuple[int, tuple[str, ...]]:
    """`getExpectedScale`: the sum of the scales of the selected pods' controllers (each counted once).

    Pods without a controller are returned as unmanaged instead.
    """
    unmanaged: list[str] = []
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller_ref(pod)
        if ref is None:
            unmanaged.append(str(pod["metadata"].get("name") or ""))
            continue
        uid = str(ref.get("uid") or "")
        if uid not in scales:
            scales[uid] = scale_of(ref)
    return sum(scales.values()), tuple(unmanaged)


def expected_and_desired(pdb: Obj, pods: list[Obj], scale_of: ScaleLookup) -> Counts:
    """`getExpectedPodCount`."""
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        expected, unmanaged = expected_scale(pods, scale_of)
        desired = max(0, expected - scaled_value(spec["maxUnavailable"], expected))
        return Counts(expected, desired, unmanaged)
    min_available = spec.get("minAvailable")
    if isinstance(min_available, int) and not isinstance(min_available, bool):
        return Counts(len(pods), min_available)
    if isinstance(min_available, str):
        expected, unmanaged = expected_scale(pods, scale_of)
        return Counts(expected, scaled_value(min_available, expected), unmanaged)
    return Counts(0, 0)


def disrupted_pods(pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None, list[str]]:
    """`buildDisruptedPodMap`: still-pending disruptions, the next recheck time, and pods never deleted."""
    recorded: dict[str, str] = (pdb.get("status") or {}).get("disruptedPods") or {}
    kept: dict[str, str] = {}
    recheck: float | None = None
    overdue: list[str] = []
    for pod in pods:
        if P.is_deleting(pod):
            continue
        name = str(pod["metadata"].get("name") or "")
        stamp = recorded.get(name)
        if stamp is None:
            continue
        expected_deletion = parse_time(stamp) + DELETION_TIMEOUT
        if expected_deletion < now:
            overdue.append(name)
        else:
            kept[name] = stamp
            recheck = expected_deletion if recheck is None else min(recheck, expected_deletion)
    return kept, recheck, overdue


def count_healthy(pods: list[Obj], disrupted: dict[str, str], now: float) -> int:
    """`countHealthyPods`: Ready pods that are neither being deleted nor disrupted within the timeout."""
    healthy = 0
    for pod in pods:
        if P.is_deleting(pod):
            continue
        stamp = disrupted.get(str(pod["metadata"].get("name") or ""))
        if stamp is not None and parse_time(stamp) + DELETION_TIMEOUT > now:
            continue
        if P.is_ready(pod):
            healthy += 1
    return healthy


def _allowed_condition_current(status: Obj, generation: int) -> bool:
    cond = find_condition(status.get("conditions"), DISRUPTION_ALLOWED)
    if cond is None or status.get("observedGeneration") != generation:
        return False
    if int(status.get("disruptionsAllowed") or 0) > 0:
        return cond.get("status") == "True" and cond.get("reason") == SUFFICIENT_PODS
    return cond.get("status") == "False" and cond.get("reason") == INSUFFICIENT_PODS


def status_for(pdb: Obj, counts: Counts, healthy: int, disrupted: dict[str, str], now: float) -> Obj | None:
    """`updatePdbStatus`: the new status, or None when the current one is already right."""
    allowed = healthy - counts.desired_healthy
    if counts.expected <= 0 or allowed <= 0:
        allowed = 0
    old: Obj = pdb.get("status") or {}
    generation = int((pdb.get("metadata") or {}).get("generation") or 0)
    if (
        int(old.get("currentHealthy") or 0) == healthy
        and int(old.get("desiredHealthy") or 0) == counts.desired_healthy
        and int(old.get("expectedPods") or 0) == counts.expected
        and int(old.get("disruptionsAllowed") or 0) == allowed
        and (old.get("disruptedPods") or {}) == disrupted
        and _allowed_condition_current(old, generation)
    ):
        return None
    conditions: list[Obj] = [dict(c) for c in old.get("conditions") or []]
    sufficient = allowed > 0
    set_status_condition(
        conditions,
        {
            "type": DISRUPTION_ALLOWED,
            "status": "True" if sufficient else "False",
            "reason": SUFFICIENT_PODS if sufficient else INSUFFICIENT_PODS,
            "observedGeneration": generation,
        },
        now,
    )
    status: Obj = {"observedGeneration": generation}
    if disrupted:
        status["disruptedPods"] = dict(disrupted)
    status.update(
        disruptionsAllowed=allowed,
        currentHealthy=healthy,
        desiredHealthy=counts.desired_healthy,
        expectedPods=counts.expected,
        conditions=conditions,
    )
    return status


def fail_safe_status(pdb: Obj, message: str, now: float) -> Obj:
    """`failSafe`: allow no disruption and say why in the `DisruptionAllowed` condition."""
    status: Obj = dict(pdb.get("status") or {})
    status["disruptionsAllowed"] = 0
    conditions: list[Obj] = [dict(c) for c in status.get("conditions") or []]
    condition: Obj = {"type": DISRUPTION_ALLOWED, "status": "False", "reason": SYNC_FAILED, "message": message}
    if status.get("observedGeneration") is not None:
        condition["observedGeneration"] = status["observedGeneration"]
    set_status_condition(conditions, condition, now)
    status["conditions"] = conditions
    return status
