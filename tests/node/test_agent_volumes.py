"""The node agent sets a pod's volumes up before its containers start, as the kubelet's volume manager does: a
volume that cannot be (a ConfigMap not there yet, a hostPath of the wrong type) gets a `FailedMount` Warning, the
pod stays Pending with its containers ContainerCreating, and the set-up is retried with the volume manager's
back-off until it succeeds. Virtual time; volumes are written to a temporary directory."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from kjobs.api.types import Obj
from kjobs.client.resources import CONFIG_MAPS, PODS
from kjobs.clock import FakeClock
from kjobs.node import volumesetup
from kjobs.node.agent import MOUNT_RETRY_INITIAL, NodeAgent, NodeAgentSettings
from kjobs.node.envvars import EnvSources
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.sim_runtime import SimulatedRuntime
from tests.node.test_agent import MACHINE, NODE, Node
from tests.support import local_api, settle


class MountingRuntime(SimulatedRuntime):
    """The simulated runtime, setting volumes up as `ProcessRuntime` does (into `root`), counting the set-ups."""

    mounts_volumes = True
    root: Path
    set_ups: list[float]

    def prepare_volumes(self, pod: Obj, sources: EnvSources | None, *, remount: bool = False) -> list[str]:
        if not remount:
            self.set_ups.append(self.clock.now())
        pod_dir = self.root / str(pod["metadata"]["uid"])
        pod_dir.mkdir(parents=True, exist_ok=True)
        return volumesetup.set_up(pod, pod_dir, sources, host_ip="10.0.0.1", pod_ip="10.0.0.2", remount=remount)


def run(test: Any) -> Any:
    def scenario() -> None:
        async def body() -> None:
            clock = FakeClock()
            runtime = MountingRuntime(clock=clock)
            runtime.root, runtime.set_ups = Path(tempfile.mkdtemp()), []
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
                shutil.rmtree(runtime.root, ignore_errors=True)

        asyncio.run(body())

    scenario.__name__ = test.__name__
    return scenario


MOUNTS_CONFIG = {"name": "main", "image": "busybox", "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]}


def container_waiting(node: Node, name: str) -> str:
    pod = node.pod(name) or {}
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return str(((statuses[0].get("state") or {}).get("waiting") or {}).get("reason") or "")


@run
async def test_a_missing_config_map_fails_the_mount_with_back_off_until_it_exists(
    node: Node, runtime: MountingRuntime
) -> None:
    volumes = [{"name": "config", "configMap": {"name": "late"}}]
    await node.create_pod("waits", containers=[MOUNTS_CONFIG], volumes=volumes)
    await settle(node.clock, lambda: len(runtime.set_ups) >= 4)
    start = runtime.set_ups[0]
    gaps = [round(b - a, 3) for a, b in zip(runtime.set_ups, runtime.set_ups[1:], strict=False)]
    assert gaps[:3] == [MOUNT_RETRY_INITIAL, 2 * MOUNT_RETRY_INITIAL, 4 * MOUNT_RETRY_INITIAL]
    assert (node.phase("waits"), container_waiting(node, "waits")) == ("Pending", "ContainerCreating")
    assert "podIP" not in (node.pod("waits") or {}).get("status", {})
    events = await node.events("FailedMount")
    assert {(e["type"], e["message"]) for e in events} == {
        ("Warning", 'MountVolume.SetUp failed for volume "config" : configmap "late" not found')
    }
    assert runtime.get(str((node.pod("waits") or {})["metadata"]["uid"])) is None  # no container started
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "late"}, "data": {"mode": "fast"}})
    await settle(node.clock, lambda: node.phase("waits") == "Succeeded")
    assert node.clock.now() - start < 60
    uid = str((node.pod("waits") or {})["metadata"]["uid"])
    assert (runtime.root / uid / "volumes" / "kubernetes.io~configmap" / "config" / "mode").read_text() == "fast"


@run
async def test_a_host_path_of_the_wrong_type_keeps_the_pod_waiting(node: Node, runtime: MountingRuntime) -> None:
    path = runtime.root / "absent"
    volumes = [{"name": "data", "hostPath": {"path": str(path), "type": "Directory"}}]
    container = {"name": "main", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    await node.create_pod("host", containers=[container], volumes=volumes)
    await settle(node.clock, lambda: len(runtime.set_ups) >= 2)
    [event] = await node.events("FailedMount")
    assert event["message"] == f'MountVolume.SetUp failed for volume "data" : hostPath {path} doesn\'t exist'
    path.mkdir()
    await settle(node.clock, lambda: node.phase("host") == "Succeeded")


@run
async def test_a_pod_deleted_while_it_waits_for_its_volumes_is_let_go(node: Node, runtime: MountingRuntime) -> None:
    volumes = [{"name": "config", "configMap": {"name": "never"}}]
    await node.create_pod("gone", containers=[MOUNTS_CONFIG], volumes=volumes)
    await settle(node.clock, lambda: len(runtime.set_ups) >= 2)
    assert node.agent.config_sources.watched() == [("configmap", "default", "never")]
    await node.client.delete(PODS, "default", "gone", grace_period_seconds=0)
    await settle(node.clock, lambda: node.pod("gone") is None and not node.agent._mount_waiting)
    await settle(node.clock, lambda: node.agent.config_sources.watched() == [])


@run
async def test_what_is_set_up_starts_at_once_and_token_projections_are_warned_about(
    node: Node, runtime: MountingRuntime
) -> None:
    volumes = [{"name": "config", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]
    await node.create_pod("ready", containers=[MOUNTS_CONFIG], volumes=volumes)
    await settle(node.clock, lambda: node.phase("ready") == "Succeeded")
    assert len(runtime.set_ups) == 1
    assert await node.events("FailedMount") == []
    [event] = await node.events("VolumesNotMounted")
    assert event["message"] == (
        "kjobs mounts emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim volumes "
        "only, and issues service account tokens only to pods that can reach its API server (kjobs up): "
        'serviceAccountToken projection of volume "config" at /etc/app (container main) '
        "not mounted; the containers start without them"
    )
