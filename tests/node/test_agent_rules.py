"""The agent's pure rules: Node status setters, admission, lost pods, shutdown grace."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.node.admission import MEMORY_PRESSURE_MESSAGE, Load, admit, load_of, pod_requests
from kjobs.node.logsource import kubelet_endpoint
from kjobs.node.nodestatus import MachineInfo, NodeState, conditions, micro_time, node_status
from kjobs.node.recovery import lost_pod_status, ran_before
from kjobs.node.shutdown import rejected_status, shutdown_grace_seconds, shutdown_requested

T0 = 1_767_225_600.0
MACHINE = MachineInfo(cpu_cores=4, memory_bytes=8 << 30)
ALLOCATABLE = {"cpu": "4", "memory": "8Gi", "pods": "3", "ephemeral-storage": "10Gi"}


def pod(name: str, *, cpu: str | None = None, memory: str | None = None, **spec: Any) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: Obj = {"name": "main", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests, "limits": dict(requests)}
    return {"metadata": {"name": name, "uid": name}, "spec": {"containers": [container], **spec}}


# -------------------------------------------------------------------------------------------- node status


def test_conditions_keep_transition_time_while_unchanged_and_move_it_on_change() -> None:
    first = conditions(NodeState(), T0)
    later = conditions(NodeState(), T0 + 10, first)
    ready = later[-1]
    assert ready["lastTransitionTime"] == first[-1]["lastTransitionTime"]
    assert ready["lastHeartbeatTime"] > first[-1]["lastHeartbeatTime"]
    pressured = conditions(NodeState(memory_pressure=True), T0 + 20, later)
    assert pressured[0]["status"] == "True"
    assert pressured[0]["reason"] == "KubeletHasInsufficientMemory"
    assert pressured[0]["message"] == "kubelet has insufficient memory available"
    assert pressured[0]["lastTransitionTime"] > later[0]["lastTransitionTime"]


def test_shutting_down_node_is_not_ready_with_the_kubelet_reason() -> None:
    ready = conditions(NodeState(shutting_down=True), T0)[-1]
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "KubeletNotReady", "node is shutting down")


def test_status_reports_capacity_and_allocatable_minus_the_eviction_reserve() -> None:
    status = node_status(MACHINE, NodeState(), T0, name="n", memory_reserved_bytes=100 << 20)
    assert status["capacity"]["memory"] == "8388608Ki"
    assert status["allocatable"]["memory"] == "8286208Ki"
    assert status["capacity"]["cpu"] == "4"
    assert status["capacity"]["pods"] == "110"


def test_micro_time_has_microseconds() -> None:
    assert micro_time(T0 + 0.25) == "2026-01-01T00:00:00.250000Z"


def test_probe_fills_every_node_info_field_with_a_string() -> None:
    machine = MachineInfo.probe()
    assert machine.cpu_cores >= 1 and machine.memory_bytes > 0
    info = node_status(machine, NodeState(), T0, name="n")["nodeInfo"]
    assert all(isinstance(v, str) for v in info.values())
    assert info["operatingSystem"] == "linux"


# ---------------------------------------------------------------------------------------------- admission


def test_pods_fit_until_cpu_runs_out() -> None:
    running = [pod("a", cpu="2"), pod("b", cpu="1500m")]
    assert admit(pod("small", cpu="500m"), running, ALLOCATABLE) is None
    rejection = admit(pod("big", cpu="1"), running, ALLOCATABLE)
    assert rejection is not None
    assert rejection.reason == "OutOfcpu"
    assert rejection.message == "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000"


def test_the_load_of_the_admitted_pods_decides_as_the_pods_themselves() -> None:
    running = [pod("a", cpu="2"), pod("b", cpu="1500m", memory="1Gi")]
    load = load_of(pod_requests(p) for p in running)
    assert load == Load(2, {"cpu": 3500, "memory": 1 << 30})
    for candidate in (pod("small", cpu="500m"), pod("big", cpu="1"), pod("huge", memory="8Gi")):
        assert admit(candidate, load, ALLOCATABLE) == admit(candidate, running, ALLOCATABLE)
    assert admit(pod("d"), Load(3, {}), ALLOCATABLE) == admit(pod("d"), [pod("a"), pod("b"), pod("c")], ALLOCATABLE)


def test_memory_is_checked_in_bytes() -> None:
    rejection = admit(pod("big", memory="9Gi"), [], ALLOCATABLE)
    assert rejection is not None and rejection.reason == "OutOfmemory"
    assert rejection.message.endswith(f"requested: {9 << 30}, used: 0, capacity: {8 << 30}")


def test_too_many_pods() -> None:
    rejection = admit(pod("d"), [pod("a"), pod("b"), pod("c")], ALLOCATABLE)
    assert rejection is not None
    assert (rejection.reason, rejection.message) == (
        "OutOfpods",
        "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    )


def test_memory_pressure_rejects_only_best_effort_pods() -> None:
    rejection = admit(pod("be"), [], ALLOCATABLE, memory_pressure=True)
    assert rejection is not None and (rejection.reason, rejection.message) == ("Evicted", MEMORY_PRESSURE_MESSAGE)
    assert admit(pod("g", cpu="1", memory="1Gi"), [], ALLOCATABLE, memory_pressure=True) is None


def test_shutting_down_rejects_everything() -> None:
    rejection = admit(pod("x"), [], ALLOCATABLE, shutting_down=True)
    assert rejection is not None and rejection.reason == "NodeShutdown"
    status = rejected_status(pod("x"), rejection.reason, rejection.message)
    assert status == {
        "phase": "Failed",
        "reason": "NodeShutdown",
        "message": "Pod was rejected: Pod was rejected as the node is shutting down.",
        "qosClass": "BestEffort",
    }


def test_requests_take_the_largest_init_container() -> None:
    p = pod("p", cpu="100m")
    p["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]
    assert pod_requests(p)["cpu"] == 2000


# ------------------------------------------------------------------------------------------------ lost pods


def test_lost_running_container_is_unknown_and_the_pod_fails() -> None:
    p = pod("p")
    p["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {
                "name": "main",
                "image": "busybox",
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {}},
            }
        ],
    }
    assert ran_before(p)
    status = lost_pod_status(p, T0)
    assert status["phase"] == "Failed"
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert terminated == {
        "exitCode": 137,
        "reason": "ContainerStatusUnknown",
        "message": "The container could not be located when the pod was terminated",
    }
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodFailed")


def test_lost_pod_whose_containers_all_succeeded_is_succeeded() -> None:
    p = pod("p")
    p["status"] = {
        "phase": "Running",
        "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
    }
    assert lost_pod_status(p, T0)["phase"] == "Succeeded"


def test_pending_pod_never_ran() -> None:
    p = pod("p")
    p["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    assert not ran_before(p)
    status = lost_pod_status(p, T0)  # what a pod deleted before it started reports
    assert status["phase"] == "Failed"
    assert status["containerStatuses"][0]["state"]["terminated"]["reason"] == "ContainerStatusUnknown"


# ------------------------------------------------------------------------------------------------- shutdown


@pytest.mark.parametrize(
    ("own", "shutdown", "expected"),
    [(None, 30.0, 30.0), (5, 30.0, 5.0), (60, 30.0, 30.0), (None, 10.0, 10.0), (0, 10.0, 0.0)],
)
def test_shutdown_grace_is_the_shorter_of_pod_and_node(own: int | None, shutdown: float, expected: float) -> None:
    p = pod("p") if own is None else pod("p", terminationGracePeriodSeconds=own)
    assert shutdown_grace_seconds(p, shutdown) == expected


def test_shutdown_request_is_an_annotation() -> None:
    assert shutdown_requested({"metadata": {"annotations": {"node.kjobs.io/shutdown-requested": "now"}}})
    assert not shutdown_requested({"metadata": {}})
    assert not shutdown_requested(None)


# --------------------------------------------------------------------------------------------------- logs


@pytest.mark.parametrize(
    ("address", "port", "expected"),
    [
        ("127.0.0.1", 4321, "http://127.0.0.1:4321"),
        ("::1", 4321, "http://[::1]:4321"),
        ("127.0.0.1", 0, None),
        (None, 4321, None),
    ],
)
def test_kubelet_endpoint_of_a_node(address: str | None, port: int, expected: str | None) -> None:
    addresses = [{"type": "Hostname", "address": "n"}]
    if address:
        addresses.append({"type": "InternalIP", "address": address})
    node = {"status": {"addresses": addresses, "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}
    assert kubelet_endpoint(node) == expected
    assert kubelet_endpoint(None) is None


def test_requests_add_a_sidecar_to_the_regular_containers_and_to_each_later_init_container() -> None:
    """The node admits a pod on what the scheduler counted (component-helpers' PodRequests, the same example as
    tests/controllers/test_scheduler_fit.py): 500m sidecar + 3 CPU init container = 3.5 > 500m + 1 CPU."""
    p = pod("p", cpu="1")
    p["spec"]["initContainers"] = [
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "setup", "resources": {"requests": {"cpu": "3"}}},
    ]
    assert pod_requests(p)["cpu"] == 3500
    p["spec"]["initContainers"].pop()
    assert pod_requests(p)["cpu"] == 1500
