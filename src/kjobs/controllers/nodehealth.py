"""What the node lifecycle controller concludes from a node's heartbeats (pure; `tryUpdateNodeHealth`).

A node is healthy while either signal is fresh: its `Ready` condition's `lastHeartbeatTime` changing, or its
Lease in `kube-node-lease` being renewed. The controller remembers, per node, when it last saw a signal move
(`probe_timestamp`, on its own clock, so skew between kubelet and controller does not matter). When no
signal moved for the grace period (40 s; 60 s for a node that never posted status), the Ready,
MemoryPressure, DiskPressure and PIDPressure conditions become `Unknown` with Kubernetes' reasons, and the
caller writes that status. Zones (`topology.kubernetes.io/region`/`zone`) and their disruption states are
here too, since they decide whether NoExecute taints may be added at all.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kjobs.api.taints import (
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
)
from kjobs.api.timeutil import format_time, parse_time
from kjobs.api.types import Obj

READY = "Ready"
MONITORED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
"""Conditions set to Unknown when heartbeats stop (NetworkUnavailable is managed elsewhere)."""

CONDITION_TAINTS: dict[tuple[str, str], str] = {
    ("Ready", "False"): TAINT_NOT_READY,
    ("Ready", "Unknown"): TAINT_UNREACHABLE,
    ("MemoryPressure", "True"): TAINT_MEMORY_PRESSURE,
    ("DiskPressure", "True"): TAINT_DISK_PRESSURE,
    ("NetworkUnavailable", "True"): TAINT_NETWORK_UNAVAILABLE,
    ("PIDPressure", "True"): TAINT_PID_PRESSURE,
}
"""`nodeConditionToTaintKeyStatusMap`: which condition status earns which NoSchedule taint key."""

CONDITION_TAINT_KEYS = frozenset(CONDITION_TAINTS.values()) | {TAINT_UNSCHEDULABLE}

STATE_INITIAL = "Initial"
STATE_NORMAL = "Normal"
STATE_FULL_DISRUPTION = "FullDisruption"
STATE_PARTIAL_DISRUPTION = "PartialDisruption"

EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"


@dataclass
class NodeHealth:
    """What the controller last saw of a node, and when (on the controller's clock)."""

    probe_timestamp: float
    ready_transition_timestamp: float
    ready: Obj | None
    lease_renew: float | None = None


@dataclass
class Observation:
    """One health check: the health to remember, the Ready condition before and after, and a status to write."""

    health: NodeHealth
    observed_ready: Obj
    current_ready: Obj | None
    new_status: Obj | None


def conditions_of(node: Obj) -> list[Obj]:
    """The node's `status.conditions`."""
    return [c for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def condition_of(node: Obj, cond_type: str) -> Obj | None:
    """The node condition of `cond_type`."""
    return next((c for c in conditions_of(node) if c.get("type") == cond_type), None)


def is_ready(node: Obj) -> bool:
    """`IsNodeReady`: the Ready condition is True."""
    cond = condition_of(node, READY)
    return cond is not None and cond.get("status") == "True"


def _time(value: object, default: float) -> float:
    if isinstance(value, str) and value:
        try:
            return parse_time(value)
        except ValueError:
            return default
    return default


def lease_renew_time(lease: Obj | None) -> float | None:
    """A Lease's `spec.renewTime` as epoch seconds."""
    if lease is None:
        return None
    value = (lease.get("spec") or {}).get("renewTime")
    return _time(value, 0.0) if value else None


def observe(
    node: Obj,
    saved: NodeHealth | None,
    lease_renew: float | None,
    *,
    now: float,
    grace_period: float,
    startup_grace_period: float,
) -> Observation:
    """Decide the node's health from its status, its lease and what was seen before."""
    meta = node.get("metadata") or {}
    created_text = str(meta.get("creationTimestamp") or format_time(now))
    created = _time(created_text, now)
    current = condition_of(node, READY)
    if current is None:
        observed: Obj = {
            "type": READY,
            "status": "Unknown",
            "lastHeartbeatTime": created_text,
            "lastTransitionTime": created_text,
        }
        grace = startup_grace_period
        if saved is None:
            saved = NodeHealth(created, created, None)
        else:  # the remembered status is replaced by this Ready-less one before comparing
            saved = NodeHealth(saved.probe_timestamp, saved.ready_transition_timestamp, None, saved.lease_renew)
    else:
        observed = copy.deepcopy(current)
        grace = grace_period
    saved_ready = saved.ready if saved is not None else None
    saved_lease = saved.lease_renew if saved is not None else None
    health: NodeHealth
    if saved is None or (saved_ready is None and current is not None):
        health = NodeHealth(now, now, copy.deepcopy(current))
    elif saved_ready is not None and current is None:
        health = NodeHealth(now, now, None)
    elif (
        saved_ready is not None
        and current is not None
        and saved_ready.get("lastHeartbeatTime") != current.get("lastHeartbeatTime")
    ):
        moved = saved_ready.get("lastTransitionTime") != current.get("lastTransitionTime")
        health = NodeHealth(now, now if moved else saved.ready_transition_timestamp, copy.deepcopy(current))
    else:
        health = NodeHealth(saved.probe_timestamp, saved.ready_transition_timestamp, saved_ready)
    health.lease_renew = saved_lease
    if lease_renew is not None and (saved_lease is None or saved_lease < lease_renew):
        health.lease_renew = lease_renew
        health.probe_timestamp = now

    if now <= health.probe_timestamp + grace:
        return Observation(health, observed, current, None)
    status = copy.deepcopy(node.get("status") or {})
    conditions: list[Obj] = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    stamp = format_time(now)
    for cond_type in MONITORED_CONDITIONS:
        cond = next((c for c in conditions if c.get("type") == cond_type), None)
        if cond is None:
            conditions.append(
                {
                    "type": cond_type,
                    "status": "Unknown",
                    "lastHeartbeatTime": created_text,
                    "lastTransitionTime": stamp,
                    "reason": "NodeStatusNeverUpdated",
                    "message": "Kubelet never posted node status.",
                }
            )
        elif cond.get("status") != "Unknown":
            cond["status"] = "Unknown"
            cond["reason"] = "NodeStatusUnknown"
            cond["message"] = "Kubelet stopped posting node status."
            cond["lastTransitionTime"] = stamp
    status["conditions"] = conditions
    new_ready = next(c for c in conditions if c.get("type") == READY)
    if new_ready == observed:
        return Observation(health, observed, current, None)
    written = NodeHealth(health.probe_timestamp, now, copy.deepcopy(new_ready), lease_renew)
    return Observation(written, observed, new_ready, status)


def desired_no_schedule_taints(node: Obj) -> list[Obj]:
    """The NoSchedule taints the node's conditions (and `spec.unschedulable`) call for (no timeAdded yet)."""
    taints: list[Obj] = []
    for cond in conditions_of(node):
        key = CONDITION_TAINTS.get((str(cond.get("type")), str(cond.get("status"))))
        if key is not None:
            taints.append({"key": key, "effect": "NoSchedule"})
    if (node.get("spec") or {}).get("unschedulable"):
        taints.append({"key": TAINT_UNSCHEDULABLE, "effect": "NoSchedule"})
    return taints


def zone_key(node: Obj) -> str:
    """`topology.GetZoneKey`: region and zone labels (GA, else beta), or "" without either."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    region = labels.get("topology.kubernetes.io/region") or labels.get("failure-domain.beta.kubernetes.io/region") or ""
    zone = labels.get("topology.kubernetes.io/zone") or labels.get("failure-domain.beta.kubernetes.io/zone") or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def excluded_from_disruption(node: Obj) -> bool:
    """Nodes labelled `node.kubernetes.io/exclude-disruption` do not count towards zone health."""
    return EXCLUDE_DISRUPTION_LABEL in ((node.get("metadata") or {}).get("labels") or {})


def zone_state(ready_conditions: list[Obj | None], unhealthy_threshold: float) -> tuple[int, str]:
    """`ComputeZoneState`: (not-ready count, state). No Ready node: full disruption; many not ready: partial."""
    ready = sum(1 for c in ready_conditions if c is not None and c.get("status") == "True")
    not_ready = len(ready_conditions) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, STATE_FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= unhealthy_threshold:
        return not_ready, STATE_PARTIAL_DISRUPTION
    return not_ready, STATE_NORMAL
