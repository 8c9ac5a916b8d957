"""The node agent reads the ConfigMaps and Secrets a pod's containers use, through its client; a missing one
keeps the container waiting (CreateContainerConfigError, a Failed event) until it exists. Virtual time."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import CONFIG_MAPS, SECRETS
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.observations import Attempt, PodRecord
from kjobs.node.sim_runtime import SimulatedRuntime
from tests.node.test_agent import MACHINE, NODE, Node
from tests.support import local_api, settle


class RecordingRuntime(SimulatedRuntime):
    """The simulated runtime, keeping the environment each container started with."""

    envs: dict[str, dict[str, str]]

    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        self.envs[f"{record.pod['metadata']['name']}/{container['name']}"] = env
        return super()._spawn(record, container, number, env, argv)


def run(test: Any) -> Any:
    def scenario() -> None:
        async def body() -> None:
            clock = FakeClock()
            runtime = RecordingRuntime(clock=clock)
            runtime.envs = {}
            client = await local_api(clock)
            agent = NodeAgent(
                client,
                name=NODE,
                clock=clock,
                runtime=runtime,
                settings=NodeAgentSettings(machine=MACHINE),
                memory_monitor=FakeMemoryMonitor(available_bytes=4 << 30, capacity_bytes=8 << 30),
            )
            await agent.start()
            node = Node(clock, client, agent, runtime, agent.memory_monitor)  # type: ignore[arg-type]
            try:
                await test(node, runtime)
            finally:
                await agent.stop()

        asyncio.run(body())

    scenario.__name__ = test.__name__
    return scenario


def waiting(node: Node, name: str) -> Obj:
    pod = node.pod(name) or {}
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return dict((statuses[0].get("state") or {}).get("waiting") or {})


CONTAINER = {
    "name": "main",
    "image": "busybox:1.36",
    "envFrom": [{"configMapRef": {"name": "app"}, "prefix": "APP_"}],
    "env": [
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        {"name": "EXTRA", "valueFrom": {"configMapKeyRef": {"name": "extra", "key": "x", "optional": True}}},
    ],
}


@run
async def test_a_missing_config_map_waits_then_starts_once_created(node: Node, runtime: RecordingRuntime) -> None:
    secret = {"metadata": {"name": "creds"}, "data": {"token": base64.b64encode(b"s3cr3t").decode()}}
    await node.client.create(SECRETS, "default", secret)
    await node.create_pod("reader", containers=[CONTAINER])
    await settle(node.clock, lambda: waiting(node, "reader").get("reason") == "CreateContainerConfigError")
    assert waiting(node, "reader")["message"] == 'configmap "app" not found'
    assert node.phase("reader") == "Pending"
    [failed] = await node.events("Failed")
    assert (failed["type"], failed["message"]) == ("Warning", 'Error: configmap "app" not found')
    started = node.clock.now()
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "fast"}})
    await settle(node.clock, lambda: node.phase("reader") == "Succeeded")
    assert node.clock.now() - started <= 10.5  # the kubelet's 10 s back-off before the pod's next sync
    assert runtime.envs["reader/main"] == {"APP_MODE": "fast", "TOKEN": "s3cr3t"}


@run
async def test_a_missing_key_waits_with_the_kubelets_message(node: Node, runtime: RecordingRuntime) -> None:
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {}})
    await node.client.create(SECRETS, "default", {"metadata": {"name": "creds"}, "stringData": {"other": "1"}})
    await node.create_pod("reader", containers=[CONTAINER])
    await settle(node.clock, lambda: waiting(node, "reader").get("reason") == "CreateContainerConfigError")
    assert waiting(node, "reader")["message"] == "couldn't find key token in Secret default/creds"
    await node.client.patch(SECRETS, "default", "creds", {"stringData": {"token": "t"}}, patch_type="merge")
    await settle(node.clock, lambda: node.phase("reader") == "Succeeded")
    assert runtime.envs["reader/main"] == {"TOKEN": "t"}


@run
async def test_a_pod_without_references_reads_nothing(node: Node, runtime: RecordingRuntime) -> None:
    await node.create_pod("plain")
    await settle(node.clock, lambda: node.phase("plain") == "Succeeded")
    assert node.agent._env_refs == {}
    assert runtime._env_sources == {}


@run
async def test_a_mounted_config_map_is_not_mounted_and_the_pod_says_so(node: Node, runtime: RecordingRuntime) -> None:
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"a": "1"}})
    container = {"name": "main", "image": "busybox", "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}]}
    volumes = [{"name": "cfg", "configMap": {"name": "app"}}, {"name": "scratch", "emptyDir": {}}]
    await node.create_pod("mounts", containers=[container], volumes=volumes)
    await settle(node.clock, lambda: node.phase("mounts") == "Succeeded")
    [event] = await node.events("VolumesNotMounted")
    assert (event["type"], event["message"]) == (
        "Warning",
        'kjobs runs containers as host processes and mounts no volumes: ConfigMap "app" at /etc/app (container '
        "main) not mounted; the containers start without them (read ConfigMaps and Secrets through env or envFrom)",
    )
