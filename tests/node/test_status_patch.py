"""The node agent's status patch carries what differs from the API's status, as the kubelet's two-way patch does."""

from __future__ import annotations

from kjobs.node.agent import status_patch
from kjobs.server.patch import strategic_merge
from kjobs.server.schema import strategies_for

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z"
API = {
    "phase": "Running",
    "hostIP": "127.0.0.1",
    "startTime": T0,
    "qosClass": "BestEffort",
    "conditions": [
        {"type": "Initialized", "status": "True", "lastTransitionTime": T0},
        {"type": "Ready", "status": "True", "lastTransitionTime": T0},
        {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},  # not the agent's
    ],
    "containerStatuses": [{"name": "main", "state": {"running": {"startedAt": T0}}}],
}
WANTED = {
    "phase": "Succeeded",
    "hostIP": "127.0.0.1",
    "startTime": T0,
    "qosClass": "BestEffort",
    "conditions": [
        {"type": "Initialized", "status": "True", "lastTransitionTime": T0},
        {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": T1},
    ],
    "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 0, "finishedAt": T1}}}],
}


def test_the_patch_holds_only_what_changed_and_merging_it_gives_the_wanted_status() -> None:
    body = status_patch(API, WANTED, last_written={})
    assert set(body) == {"phase", "conditions", "containerStatuses"}
    assert [c["type"] for c in body["conditions"]] == ["Ready"]
    merged = strategic_merge({"status": API}, {"status": body}, strategies=strategies_for("io.k8s.api.core.v1.Pod"))
    status = merged["status"]
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        k: v for k, v in WANTED.items() if k != "conditions"
    }
    by_type = {c["type"]: c for c in status["conditions"]}
    assert by_type["Ready"] == WANTED["conditions"][1]
    assert by_type["DisruptionTarget"] == API["conditions"][2]  # others' conditions are left alone


def test_keys_the_agent_wrote_and_no_longer_wants_are_sent_as_null_and_an_equal_status_is_no_patch() -> None:
    written = {**WANTED, "reason": "Evicted", "message": "low memory"}
    body = status_patch({**WANTED, "reason": "Evicted", "message": "low memory"}, WANTED, last_written=written)
    assert body == {"reason": None, "message": None}
    assert status_patch(WANTED, WANTED, last_written=WANTED) == {}


def test_the_kubelets_condition_order_is_set_as_its_two_way_patch_sets_it() -> None:
    """The scheduler wrote PodScheduled first; the kubelet's status lists the conditions others own first, then
    its own with PodScheduled last (`kubectl describe pod` shows that order on a cluster)."""
    api = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    own = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    wanted = {"phase": "Running", "conditions": [{"type": t, "status": "True"} for t in own]}
    body = status_patch(api, wanted, last_written={})
    assert body["$setElementOrder/conditions"] == [{"type": t} for t in own]
    merged = strategic_merge({"status": api}, {"status": body}, strategies=strategies_for("io.k8s.api.core.v1.Pod"))
    assert merged["status"]["conditions"] == wanted["conditions"]
    # Once the order is the kubelet's, a change of one condition needs no order.
    later = {**wanted, "conditions": [*wanted["conditions"][:2], {"type": "Ready", "status": "False"}]}
    later["conditions"] += wanted["conditions"][3:]
    again = status_patch(merged["status"], later, last_written=wanted)
    assert "$setElementOrder/conditions" not in again and again["conditions"] == [{"type": "Ready", "status": "False"}]
