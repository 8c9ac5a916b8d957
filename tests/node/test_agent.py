"""The node agent against the in-process API, with the simulated runtime, on virtual time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import EVENTS, LEASES, NODES, PODS
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.nodestatus import MachineInfo
from kjobs.node.observations import Attempt
from kjobs.node.runtime import PodHandle
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.progress import RunView
from tests.support import INTEGRATION_ADMISSION, local_api, settle

NODE = "node-1"
MACHINE = MachineInfo(
    cpu_cores=4,
    memory_bytes=8 << 30,
    ephemeral_storage_bytes=100 << 30,
    machine_id="m",
    system_uuid="s",
    boot_id="b",
    kernel_version="6.1.0",
    os_image="Test Linux",
)


def by_name(outcomes: dict[str, Outcome]) -> Any:
    def outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
        return outcomes.get(pod["metadata"]["name"], Outcome())

    return outcome


@dataclass
class Node:
    clock: FakeClock
    client: LocalClient
    agent: NodeAgent
    runtime: SimulatedRuntime
    monitor: FakeMemoryMonitor

    def pod(self, name: str) -> Obj | None:
        return self.agent.pods.get("default", name)

    def phase(self, name: str) -> str:
        pod = self.pod(name)
        return str(((pod or {}).get("status") or {}).get("phase") or "")

    async def create_pod(self, name: str, *, node: str = NODE, **spec: Any) -> Obj:
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "restartPolicy": "Never",
                "nodeName": node,
                "containers": [{"name": "main", "image": "busybox:1.36"}],
                **spec,
            },
        }
        return await self.client.create(PODS, "default", body)

    async def events(self, reason: str) -> list[Obj]:
        await self.agent.events.flush()
        items, _ = await self.client.list(EVENTS, "default")
        return [e for e in items if e["reason"] == reason]


async def start_node(
    outcomes: dict[str, Outcome] | None = None,
    *,
    clock: FakeClock | None = None,
    client: LocalClient | None = None,
    **settings: Any,
) -> Node:
    clock = clock or FakeClock()
    # The kubelet's own tests give pods a bare `spec.priority` (no API server, so no Priority plugin).
    client = client or await local_api(clock, admission=INTEGRATION_ADMISSION)
    runtime = SimulatedRuntime(clock=clock, outcome=by_name(outcomes or {}))
    monitor = FakeMemoryMonitor(available_bytes=4 << 30, capacity_bytes=8 << 30)
    agent = NodeAgent(
        client,
        name=NODE,
        clock=clock,
        runtime=runtime,
        settings=NodeAgentSettings(machine=MACHINE, **settings),
        memory_monitor=monitor,
    )
    await agent.start()
    return Node(clock, client, agent, runtime, monitor)


def with_node(test: Callable[[Node], Awaitable[None]]) -> Callable[[], None]:
    """Run an async test against a started node agent (on a fresh loop), stopping the agent afterwards."""

    def run() -> None:
        async def scenario() -> None:
            started = await start_node({"fails": Outcome(duration=3, exit_code=42)})
            try:
                await test(started)
            finally:
                await started.agent.stop()

        asyncio.run(scenario())

    run.__name__, run.__doc__ = test.__name__, test.__doc__
    return run


def run_async(test: Callable[[], Awaitable[None]]) -> Callable[[], None]:
    def run() -> None:
        async def scenario() -> None:
            await test()

        asyncio.run(scenario())

    run.__name__, run.__doc__ = test.__name__, test.__doc__
    return run


async def shut_down(node: Node) -> None:
    """The agent's graceful shutdown, virtual time passing while its pods stop."""
    task = asyncio.ensure_future(node.agent.shutdown_node())
    await settle(node.clock, task.done)
    await task


def condition(obj: Obj, ctype: str) -> Obj:
    return next(c for c in obj["status"].get("conditions") or [] if c["type"] == ctype)


# ------------------------------------------------------------------------------------------- registration


@with_node
async def test_registers_a_ready_node_with_capacity_and_node_info(node: Node) -> None:
    registered = await node.client.get(NODES, None, NODE)
    status = registered["status"]
    assert status["capacity"] == {"cpu": "4", "ephemeral-storage": "104857600Ki", "memory": "8388608Ki", "pods": "110"}
    assert status["allocatable"]["memory"] == "8286208Ki"  # capacity minus the 100Mi hard eviction threshold
    ready = condition(registered, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
    )
    assert [c["type"] for c in status["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    assert condition(registered, "MemoryPressure")["reason"] == "KubeletHasSufficientMemory"
    assert status["addresses"] == [
        {"type": "InternalIP", "address": "127.0.0.1"},
        {"type": "Hostname", "address": NODE},
    ]
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}  # no log endpoint served
    info = status["nodeInfo"]
    assert set(info) >= {
        "machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
        "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture",
    }  # fmt: skip
    assert info["kubeletVersion"].startswith("v1.32")
    assert registered["metadata"]["labels"]["kubernetes.io/hostname"] == NODE
    assert registered["metadata"]["labels"]["kubernetes.io/os"] == "linux"


@with_node
async def test_lease_and_ready_heartbeat_are_renewed_every_ten_seconds(node: Node) -> None:
    first = await node.client.get(LEASES, "kube-node-lease", NODE)
    assert first["spec"]["holderIdentity"] == NODE
    assert first["spec"]["leaseDurationSeconds"] == 40
    heartbeat = condition(await node.client.get(NODES, None, NODE), "Ready")["lastHeartbeatTime"]
    start = node.clock.now()
    await settle(node.clock, lambda: node.clock.now() >= start + 10.5)
    renewed = await node.client.get(LEASES, "kube-node-lease", NODE)
    assert renewed["spec"]["renewTime"] > first["spec"]["renewTime"]
    again = condition(await node.client.get(NODES, None, NODE), "Ready")
    assert again["lastHeartbeatTime"] > heartbeat
    assert again["lastTransitionTime"] <= heartbeat  # still Ready: the transition time is kept


@run_async
async def test_an_api_server_gone_after_registration_does_not_stop_the_agent() -> None:
    """`kjobs node join` registers, then starts; the API server dying in between (it closed the connection of the
    Lease's create) is outlasted as a kubelet outlasts it: the agent starts, and the heartbeat creates the Lease
    10 s later. Before, the error ended the agent (a crash-safety e2e test saw it under load)."""
    clock = FakeClock()
    client = await local_api(clock)
    real_patch = client.patch
    refused: list[str] = []

    async def patch(resource: Any, namespace: str | None, name: str, body: Obj, **kwargs: Any) -> Obj:
        if resource is LEASES and not refused:
            refused.append(name)
            raise aiohttp.ServerDisconnectedError()  # killed as it answered
        return await real_patch(resource, namespace, name, body, **kwargs)

    client.patch = patch  # type: ignore[method-assign]
    agent = NodeAgent(
        client,
        name=NODE,
        clock=clock,
        runtime=SimulatedRuntime(clock=clock, outcome=by_name({})),
        settings=NodeAgentSettings(machine=MACHINE),
    )
    await agent.register()
    await agent.start(registered=True)
    try:
        assert refused == [NODE]
        with pytest.raises(ApiError) as missing:
            await client.get(LEASES, "kube-node-lease", NODE)
        assert missing.value.code == 404
        start = clock.now()
        await settle(clock, lambda: clock.now() >= start + 10.5)
        lease = await client.get(LEASES, "kube-node-lease", NODE)
        assert lease["spec"]["holderIdentity"] == NODE
    finally:
        await agent.stop()


@run_async
async def test_adopts_an_existing_node_keeping_its_spec() -> None:
    clock = FakeClock()
    client = await local_api(clock)
    await client.create(
        NODES,
        None,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": NODE, "labels": {"team": "a"}},
            "spec": {"unschedulable": True},
        },
    )
    started = await start_node(clock=clock, client=client)
    try:
        node = await client.get(NODES, None, NODE)
        assert node["spec"]["unschedulable"] is True
        assert node["metadata"]["labels"]["team"] == "a"
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == NODE
        assert condition(node, "Ready")["status"] == "True"
    finally:
        await started.agent.stop()


# ------------------------------------------------------------------------------------------ pod lifecycle


@with_node
async def test_bound_pod_runs_and_succeeds_with_container_statuses(node: Node) -> None:
    node.runtime.outcome = by_name({"ok": Outcome(duration=5, output=b"hi\n")})
    await node.create_pod("ok")
    await settle(node.clock, lambda: node.phase("ok") == "Running")
    running = node.pod("ok")
    assert running is not None
    state = running["status"]["containerStatuses"][0]["state"]
    assert "running" in state
    assert condition(running, "Ready")["status"] == "True"
    await settle(node.clock, lambda: node.phase("ok") == "Succeeded")
    done = node.pod("ok")
    assert done is not None
    cs = done["status"]["containerStatuses"][0]
    assert cs["name"] == "main" and cs["image"] == "busybox:1.36" and cs["imageID"] == ""
    assert cs["state"]["terminated"]["exitCode"] == 0
    assert cs["state"]["terminated"]["reason"] == "Completed"
    assert done["status"]["hostIP"] == "127.0.0.1"
    messages = [(e["reason"], e["message"], e["source"]["component"]) for e in await node.events("Created")]
    assert messages == [("Created", "Created container: main", "kubelet")]
    assert [e["message"] for e in await node.events("Pulled")] == [
        'Container image "busybox:1.36" already present on machine'
    ]
    assert [e["message"] for e in await node.events("Started")] == ["Started container main"]


@with_node
async def test_exit_42_makes_the_pod_failed(node: Node) -> None:
    await node.create_pod("fails")
    await settle(node.clock, lambda: node.phase("fails") == "Failed")
    pod = node.pod("fails")
    assert pod is not None
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (42, "Error")


@with_node
async def test_pods_of_other_nodes_are_not_run(node: Node) -> None:
    await node.create_pod("elsewhere", node="node-2")
    await node.create_pod("fails")
    await settle(node.clock, lambda: node.phase("fails") == "Failed")
    other = await node.client.get(PODS, "default", "elsewhere")
    assert "phase" not in other["status"] or other["status"]["phase"] == "Pending"
    assert node.runtime.get(other["metadata"]["uid"]) is None


@with_node
async def test_delete_during_run_terminates_then_removes_the_pod(node: Node) -> None:
    node.runtime.outcome = by_name({"long": Outcome(duration=600, term_delay=3)})
    created = await node.create_pod("long", terminationGracePeriodSeconds=20)
    await settle(node.clock, lambda: node.phase("long") == "Running")
    await node.client.delete(PODS, "default", "long")
    deleted_at = node.clock.now()
    seen: list[Obj] = []
    node.agent.pods.add_handler(lambda old, new: seen.append(new) if new is not None else None)
    uid = created["metadata"]["uid"]
    await settle(node.clock, lambda: node.pod("long") is None and node.runtime.get(uid) is None)
    with pytest.raises(ApiError) as gone:
        await node.client.get(PODS, "default", "long")
    assert gone.value.code == 404
    last = seen[-1]
    assert last["status"]["phase"] == "Failed"
    terminated = last["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated.get("signal")) == (143, 15)  # SIGTERM honoured within the grace
    assert node.clock.now() - deleted_at < 20
    assert [e["message"] for e in await node.events("Killing")] == ["Stopping container main"]


@with_node
async def test_a_sidecar_stopped_when_the_main_container_ends_gets_a_killing_event(node: Node) -> None:
    """`killContainer` records `Killing` "Stopping container NAME" for every container the kubelet kills, also a
    sidecar it stops once the regular containers are done (before, only kills the agent asked for had one), and
    for containers it kills at the pod's activeDeadlineSeconds."""
    node.runtime.outcome = lambda pod, container, attempt: Outcome(
        duration=600 if container["name"] == "proxy" or pod["metadata"]["name"] == "late" else 1
    )
    proxy = {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}
    await node.create_pod("sidecar", initContainers=[proxy])
    await settle(node.clock, lambda: node.phase("sidecar") == "Succeeded")
    await node.create_pod("late", activeDeadlineSeconds=5)
    await settle(node.clock, lambda: node.phase("late") == "Failed")
    killing = sorted((e["involvedObject"]["name"], e["message"]) for e in await node.events("Killing"))
    assert killing == [("late", "Stopping container main"), ("sidecar", "Stopping container proxy")]


@with_node
async def test_delete_with_a_finalizer_keeps_the_terminal_pod_until_the_finalizer_goes(node: Node) -> None:
    node.runtime.outcome = by_name({"held": Outcome(duration=600)})
    await node.create_pod("held")
    await node.client.patch(PODS, "default", "held", {"metadata": {"finalizers": ["example.com/hold"]}})
    await settle(node.clock, lambda: node.phase("held") == "Running")
    await node.client.delete(PODS, "default", "held", grace_period_seconds=5)
    await settle(node.clock, lambda: node.phase("held") == "Failed")
    pod = await node.client.get(PODS, "default", "held")
    assert pod["metadata"]["deletionTimestamp"]
    await node.client.patch(PODS, "default", "held", {"metadata": {"finalizers": None}})
    await settle(node.clock, lambda: node.pod("held") is None)


# -------------------------------------------------------------------------------------- memory pressure


@with_node
async def test_memory_pressure_evicts_one_pod_by_the_kubelet_ranking(node: Node) -> None:
    outcomes = {name: Outcome(duration=3600) for name in ("small", "hog", "important")}
    node.runtime.outcome = by_name(outcomes)
    small = await node.create_pod(
        "small", containers=[{"name": "main", "image": "busybox", "resources": {"requests": {"memory": "64Mi"}}}]
    )
    hog = await node.create_pod("hog")
    important = await node.create_pod("important", priority=1000)
    await settle(node.clock, lambda: all(node.phase(n) == "Running" for n in ("small", "hog", "important")))
    node.monitor.pods = {
        small["metadata"]["uid"]: {"main": 32 << 20},  # within its request
        hog["metadata"]["uid"]: {"main": 200 << 20},
        important["metadata"]["uid"]: {"main": 300 << 20},  # exceeds too, but higher priority
    }
    node.monitor.available_bytes = 50 << 20
    await settle(node.clock, lambda: node.phase("hog") == "Failed")
    pod = node.pod("hog")
    assert pod is not None
    message = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container main was using 200Mi, request is 0, has larger consumption of memory. "
    )
    assert pod["status"]["reason"] == "Evicted"
    assert pod["status"]["message"] == message
    target = condition(pod, "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == ("True", "TerminationByKubelet", message)
    assert node.phase("important") == "Running" and node.phase("small") == "Running"  # one pod per interval
    evicted = await node.events("Evicted")
    assert [(e["type"], e["message"]) for e in evicted] == [("Warning", message)]
    registered = await node.client.get(NODES, None, NODE)
    pressure = condition(registered, "MemoryPressure")
    assert (pressure["status"], pressure["reason"]) == ("True", "KubeletHasInsufficientMemory")
    assert {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"} in registered["spec"]["taints"]
    # Next interval: the next in rank (exceeds its request, higher priority than nothing else left) goes.
    await settle(node.clock, lambda: node.phase("important") == "Failed")
    assert node.phase("small") == "Running"


@with_node
async def test_memory_pressure_clears_after_the_transition_period(node: Node) -> None:
    node.monitor.available_bytes = 10 << 20
    await settle(node.clock, lambda: node.agent.state.memory_pressure)
    node.monitor.available_bytes = 4 << 30
    relieved = node.clock.now()
    await settle(node.clock, lambda: not node.agent.state.memory_pressure)
    assert node.clock.now() - relieved >= 290  # evictionPressureTransitionPeriod 5m
    registered = await node.client.get(NODES, None, NODE)
    assert condition(registered, "MemoryPressure")["status"] == "False"
    assert not registered["spec"].get("taints")


# --------------------------------------------------------------------------------------------- shutdown


@with_node
async def test_graceful_shutdown_fails_every_pod_with_termination_by_kubelet(node: Node) -> None:
    node.runtime.outcome = by_name({"a": Outcome(duration=3600, term_delay=2), "b": Outcome(duration=3600)})
    await node.create_pod("a")
    await node.create_pod("b")
    await settle(node.clock, lambda: node.phase("a") == "Running" and node.phase("b") == "Running")
    await shut_down(node)
    message = "Pod was terminated in response to imminent node shutdown."
    for name in ("a", "b"):
        pod = await node.client.get(PODS, "default", name)
        assert pod["status"]["phase"] == "Failed"
        assert (pod["status"]["reason"], pod["status"]["message"]) == ("Terminated", message)
        target = condition(pod, "DisruptionTarget")
        assert (target["status"], target["reason"], target["message"]) == ("True", "TerminationByKubelet", message)
    ready = condition(await node.client.get(NODES, None, NODE), "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "KubeletNotReady", "node is shutting down")
    # Pods bound afterwards are rejected, not run.
    await node.create_pod("late")
    await settle(node.clock, lambda: node.phase("late") == "Failed")
    late = node.pod("late")
    assert late is not None
    assert late["status"]["reason"] == "NodeShutdown"
    assert late["status"]["message"] == "Pod was rejected: Pod was rejected as the node is shutting down."


@with_node
async def test_shutdown_requested_through_the_node_annotation(node: Node) -> None:
    node.runtime.outcome = by_name({"a": Outcome(duration=3600)})
    await node.create_pod("a")
    await settle(node.clock, lambda: node.phase("a") == "Running")
    await node.client.patch(NODES, None, NODE, {"metadata": {"annotations": {"node.kjobs.io/shutdown-requested": "x"}}})
    await settle(node.clock, lambda: node.phase("a") == "Failed")
    assert node.agent.shutting_down
    pod = node.pod("a")
    assert pod is not None and pod["status"]["reason"] == "Terminated"


# ------------------------------------------------------------------------------------------ restart safety


class AdoptingRuntime(SimulatedRuntime):
    """A simulated runtime that, like `ProcessRuntime` after an agent crash, knows how a pod's container ended."""

    def __init__(self, *, clock: FakeClock, ended: dict[str, Attempt]) -> None:
        super().__init__(clock=clock, outcome=by_name({}))
        self.ended = ended
        self.claimed: set[str] | None = None

    def adopt(self, pod: Obj) -> PodHandle | None:
        attempt = self.ended.pop(pod["metadata"]["name"], None)
        return None if attempt is None else self.admit(pod, attempts={attempt.container: [attempt]})

    def release_unclaimed(self, uids: set[str]) -> None:
        self.claimed = set(uids)


@run_async
async def test_a_restarted_agent_reports_an_adopted_container_as_it_ended() -> None:
    first = await start_node({"running": Outcome(duration=3600)})
    running = await first.create_pod("running")
    await settle(first.clock, lambda: first.phase("running") == "Running")
    await first.agent.stop()
    started = first.clock.now() - 5
    ended = Attempt("main", 0, "kjobs://adopted", started_at=started, finished_at=started + 2, exit_code=3)
    runtime = AdoptingRuntime(clock=first.clock, ended={"running": ended})
    agent = NodeAgent(
        first.client, name=NODE, clock=first.clock, runtime=runtime, settings=NodeAgentSettings(machine=MACHINE)
    )
    await agent.start()
    second = Node(first.clock, first.client, agent, runtime, first.monitor)
    try:
        assert runtime.claimed == {running["metadata"]["uid"]}
        await settle(second.clock, lambda: second.phase("running") == "Failed")
        pod = second.pod("running")
        assert pod is not None
        terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"], terminated["containerID"]) == (
            3,
            "Error",
            "kjobs://adopted",
        )
    finally:
        await agent.stop()


@run_async
async def test_restarted_agent_does_not_rerun_a_finished_never_pod() -> None:
    first = await start_node({"done": Outcome(duration=1), "running": Outcome(duration=3600)})
    await first.create_pod("done")
    await first.create_pod("running")
    await settle(first.clock, lambda: first.phase("done") == "Succeeded" and first.phase("running") == "Running")
    await first.agent.stop()  # the agent dies; its runtime's processes with it
    starts: list[str] = []

    def record(pod: Obj, container: Obj, attempt: int) -> Outcome:
        starts.append(pod["metadata"]["name"])
        return Outcome(duration=1)

    second = await start_node(clock=first.clock, client=first.client)
    second.runtime.outcome = record
    try:
        await settle(second.clock, lambda: second.phase("running") == "Failed")
        assert starts == []
        assert second.phase("done") == "Succeeded"
        lost = second.pod("running")
        assert lost is not None
        terminated = lost["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (137, "ContainerStatusUnknown")
        # A new pod still runs.
        await second.create_pod("fresh")
        await settle(second.clock, lambda: second.phase("fresh") == "Succeeded")
        assert starts == ["fresh"]
    finally:
        await second.agent.stop()


@run_async
async def test_pod_deleted_while_the_agent_was_down_is_finished_on_return() -> None:
    first = await start_node({"running": Outcome(duration=3600)})
    await first.create_pod("running")
    await settle(first.clock, lambda: first.phase("running") == "Running")
    await first.agent.stop()
    await first.client.delete(PODS, "default", "running")
    second = await start_node(clock=first.clock, client=first.client)
    try:
        await settle(second.clock, lambda: second.agent.pods.synced.is_set() and second.pod("running") is None)
        with pytest.raises(ApiError):
            await second.client.get(PODS, "default", "running")
    finally:
        await second.agent.stop()


@with_node
async def test_a_pod_that_does_not_fit_is_rejected_out_of_cpu(node: Node) -> None:
    node.runtime.outcome = by_name({"big": Outcome(duration=3600)})
    resources = {"requests": {"cpu": "3"}}
    await node.create_pod("big", containers=[{"name": "main", "image": "busybox", "resources": resources}])
    await node.create_pod("more", containers=[{"name": "main", "image": "busybox", "resources": resources}])
    await settle(node.clock, lambda: node.phase("big") == "Running" and node.phase("more") == "Failed")
    rejected = node.pod("more")
    assert rejected is not None
    assert rejected["status"]["reason"] == "OutOfcpu"
    assert rejected["status"]["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 3000, capacity: 4000"
    )
    assert [e["type"] for e in await node.events("OutOfcpu")] == ["Warning"]
    assert node.runtime.get(rejected["metadata"]["uid"]) is None


@run_async
async def test_a_rejoining_agent_clears_an_old_shutdown_request() -> None:
    first = await start_node()
    await first.client.patch(
        NODES, None, NODE, {"metadata": {"annotations": {"node.kjobs.io/shutdown-requested": "then"}}}
    )
    await settle(first.clock, lambda: first.agent.shutting_down)
    await first.agent.stop()
    second = await start_node(clock=first.clock, client=first.client)
    try:
        node = await second.client.get(NODES, None, NODE)
        assert "node.kjobs.io/shutdown-requested" not in (node["metadata"].get("annotations") or {})
        assert condition(node, "Ready")["status"] == "True"
        await second.create_pod("fresh")
        await settle(second.clock, lambda: second.phase("fresh") == "Succeeded")
        assert not second.agent.shutting_down
    finally:
        await second.agent.stop()


@run_async
async def test_a_restarted_agent_announces_no_old_containers() -> None:
    first = await start_node({"running": Outcome(duration=3600)})
    await first.create_pod("running")
    await settle(first.clock, lambda: first.phase("running") == "Running")
    assert len(await first.events("Started")) == 1
    await first.agent.stop()
    second = await start_node(clock=first.clock, client=first.client)
    try:
        await settle(second.clock, lambda: second.phase("running") == "Failed")
        assert len(await second.events("Started")) == 1
        assert len(await second.events("Pulled")) == 1
    finally:
        await second.agent.stop()


@with_node
async def test_a_condition_message_the_kubelet_no_longer_sets_is_removed(node: Node) -> None:
    node.runtime.outcome = by_name({"ok": Outcome(duration=30)})
    await node.create_pod("ok")
    await settle(node.clock, lambda: node.phase("ok") == "Running")
    stale = {"type": "Ready", "status": "True", "message": "stale words", "reason": "Old"}
    await node.client.patch(PODS, "default", "ok", {"status": {"conditions": [stale]}}, subresource="status")
    await settle(node.clock, lambda: node.phase("ok") == "Succeeded")
    ready = condition(await node.client.get(PODS, "default", "ok"), "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    assert "message" not in ready


@with_node
async def test_a_pod_failed_by_someone_else_is_stopped(node: Node) -> None:
    node.runtime.outcome = by_name({"ok": Outcome(duration=3600)})
    created = await node.create_pod("ok")
    await settle(node.clock, lambda: node.phase("ok") == "Running")
    patch = {"status": {"phase": "Failed", "reason": "DeadlineExceeded", "message": "set by a controller"}}
    await node.client.patch(PODS, "default", "ok", patch, subresource="status")
    handle = node.runtime.get(created["metadata"]["uid"])
    assert handle is not None
    await settle(node.clock, lambda: handle.terminal and node.agent.status_written(handle.uid) == handle.status)
    assert node.clock.now() - parse_time(created["metadata"]["creationTimestamp"]) < 60
    pod = await node.client.get(PODS, "default", "ok")
    assert pod["status"]["phase"] == "Failed"
    assert (pod["status"]["reason"], pod["status"]["message"]) == ("DeadlineExceeded", "set by a controller")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143


@run_async
async def test_a_rejoining_agent_without_pressure_removes_a_stale_memory_pressure_taint() -> None:
    clock = FakeClock()
    client = await local_api(clock)
    stale = {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}
    other = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}, "spec": {"taints": [stale, other]}}
    await client.create(NODES, None, body)
    started = await start_node(clock=clock, client=client)
    try:
        node = await client.get(NODES, None, NODE)
        assert node["spec"]["taints"] == [other]
    finally:
        await started.agent.stop()


@with_node
async def test_a_crash_looping_container_restarts_with_back_off_events(node: Node) -> None:
    attempts: list[int] = []

    def crash(pod: Obj, container: Obj, attempt: int) -> Outcome:
        attempts.append(attempt)
        return Outcome(duration=1, exit_code=1 if attempt < 2 else 0)

    node.runtime.outcome = crash
    created = await node.create_pod("flaky", restartPolicy="OnFailure")
    await settle(node.clock, lambda: node.phase("flaky") == "Succeeded")
    pod = node.pod("flaky")
    assert pod is not None
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 2
    ref = f"flaky_default({created['metadata']['uid']})"
    backoffs = [e["message"] for e in await node.events("BackOff")]
    assert backoffs == [f"Back-off restarting failed container main in pod {ref}"]  # the 1st restart is at once
    [started] = await node.events("Started")  # the same event three times: one Event, counted (client-go)
    assert started["count"] == 3


@with_node
async def test_each_start_of_a_fast_crash_loop_is_announced_though_no_status_showed_it(node: Node) -> None:
    """An instant failure restarts at once (the first restart has no back-off), so two starts can fall between two
    status reports; the kubelet announces every start it makes, and so does the agent."""
    node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=0, exit_code=3 if attempt < 3 else 0)
    await node.create_pod("fast", restartPolicy="OnFailure")
    await settle(node.clock, lambda: node.phase("fast") == "Succeeded")
    pod = node.pod("fast")
    assert pod is not None
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 3
    for reason in ("Pulled", "Created", "Started"):
        [event] = await node.events(reason)
        assert event["count"] == 4, reason


@with_node
async def test_a_container_ignoring_sigterm_is_killed_after_the_grace_period(node: Node) -> None:
    node.runtime.outcome = by_name({"stubborn": Outcome(duration=3600, term_delay=1000)})
    created = await node.create_pod("stubborn", terminationGracePeriodSeconds=5)
    await settle(node.clock, lambda: node.phase("stubborn") == "Running")
    seen: list[Obj] = []
    node.agent.pods.add_handler(lambda old, new: seen.append(new) if new is not None else None)
    await node.client.delete(PODS, "default", "stubborn")
    deleted_at = node.clock.now()
    uid = created["metadata"]["uid"]
    await settle(node.clock, lambda: node.pod("stubborn") is None and node.runtime.get(uid) is None)
    assert 5 <= node.clock.now() - deleted_at < 10
    terminated = seen[-1]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (seen[-1]["status"]["phase"], terminated["exitCode"], terminated.get("signal")) == ("Failed", 137, 9)


def test_an_unreachable_api_server_is_retried_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """While the API server restarts, status writes fail with connection errors: retried, logged in one line."""

    class Flaky(LocalClient):
        refusals = 2

        async def patch(self, resource: Any, namespace: str | None, name: str, patch: Any, **kw: Any) -> Obj:
            if resource == PODS and self.refusals > 0:
                self.refusals -= 1
                raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 6443)")
            return await super().patch(resource, namespace, name, patch, **kw)

    async def scenario() -> None:
        clock = FakeClock()
        base = await local_api(clock)
        node = await start_node(clock=clock, client=Flaky(base.service))
        try:
            with caplog.at_level("INFO", logger="kjobs.node.agent"):
                await node.create_pod("ok")
                await settle(node.clock, lambda: node.phase("ok") == "Succeeded")
        finally:
            await node.agent.stop()

    asyncio.run(scenario())
    refused = [r for r in caplog.records if "Connect call failed" in r.getMessage()]
    assert refused, "the refused writes are logged"
    assert all(r.exc_info is None for r in caplog.records if r.name == "kjobs.node.agent")


@with_node
async def test_node_status_events_say_what_changed(node: Node) -> None:
    # The kubelet records "Starting", an event for each node condition that takes a new status (a new node: all
    # four), and NodeNotSchedulable/NodeSchedulable at the first status update after a cordon/uncordon, which
    # `kubectl describe node` lists; kjobs recorded none of them.
    def said(event: Obj) -> tuple[str, str, str, str]:
        ref = event["involvedObject"]
        return ref["kind"], ref["name"], event["source"]["component"], event["message"]

    [starting] = await node.events("Starting")
    assert said(starting) == ("Node", NODE, "kubelet", "Starting kubelet.")
    for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"):
        [event] = await node.events(reason)
        assert said(event) == ("Node", NODE, "kubelet", f"Node {NODE} status is now: {reason}")
    assert await node.events("NodeNotSchedulable") == []
    for unschedulable, reason in ((True, "NodeNotSchedulable"), (None, "NodeSchedulable")):
        await node.client.patch(NODES, None, NODE, {"spec": {"unschedulable": unschedulable}})
        update = node.clock.now() + 10.5  # the next status update
        await settle(node.clock, lambda until=update: node.clock.now() >= until)
        [event] = await node.events(reason)
        assert said(event)[3] == f"Node {NODE} status is now: {reason}"
    node.monitor.available_bytes = 10 << 20
    await settle(node.clock, lambda: node.agent.state.memory_pressure)
    [pressure] = await node.events("NodeHasInsufficientMemory")
    assert pressure["type"] == "Normal"


@with_node
async def test_every_exit_of_an_instant_crash_loop_is_written_before_the_restart_that_hides_it(node: Node) -> None:
    """A container that fails as it starts restarts at once (the first restart has no back-off): by the agent's
    status write the second run had ended too, and the write took only the newest status, so no status ever
    showed the first exit and `kjobs run` said `restarted (restartCount 1)` without its exit code. As with the
    kubelet, which writes the status of each sync, each exit is now written (state terminated) before the
    status that shows only a later one; `kjobs run` says every restart with the exit it followed."""
    codes = [3, 4, 5, 0]
    node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=0, exit_code=codes[attempt])
    _, revision = await node.client.list(PODS, "default")
    versions: list[Obj] = []

    async def watch() -> None:
        async for event in node.client.watch(PODS, "default", resource_version=revision):
            versions.append(event.object)

    watching = asyncio.ensure_future(watch())
    try:
        await node.create_pod("fast", restartPolicy="OnFailure")
        await settle(node.clock, lambda: node.phase("fast") == "Succeeded")
        await asyncio.sleep(0)  # the watch has the last write
    finally:
        watching.cancel()
    job: Obj = {
        "metadata": {"name": "j"},
        "spec": {"backoffLimit": 6, "template": {"spec": {"restartPolicy": "OnFailure"}}},
    }
    view = RunView(job, show_restarts=True)
    lines = [line for pod in versions for line in view.update_pod(pod) if "restarted" in line]
    assert [line.split(" → ")[0] for line in lines] == [
        f"pod fast container main restarted (after exit code {code}, restartCount {n})"
        for n, code in enumerate(codes[:-1], start=1)
    ]


@with_node
async def test_a_condition_another_writer_adds_is_not_written_back(node: Node) -> None:
    """The Eviction API's DisruptionTarget on a running pod changes nothing the kubelet owns, so the agent writes no
    status for it (isPodStatusByKubeletEqual): a write that only reordered the conditions would break the
    resourceVersion the eviction pins for the delete that follows."""
    node.runtime.outcome = by_name({"ok": Outcome(duration=3600)})
    await node.create_pod("ok")
    await settle(node.clock, lambda: node.phase("ok") == "Running")
    target = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}
    patched = await node.client.patch(PODS, "default", "ok", {"status": {"conditions": [target]}}, subresource="status")
    version = patched["metadata"]["resourceVersion"]

    def seen() -> bool:
        pod = node.agent.pods.get("default", "ok")
        return pod is not None and pod["metadata"]["resourceVersion"] == version

    await settle(node.clock, seen)
    turns = iter(range(2000))
    await settle(node.clock, lambda: next(turns) == 1999)  # the agent's sync of that version has run
    pod = await node.client.get(PODS, "default", "ok")
    assert pod["metadata"]["resourceVersion"] == version
    assert pod["status"]["phase"] == "Running"
