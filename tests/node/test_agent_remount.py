"""A running pod's configMap, secret, downwardAPI and projected volumes follow what they show, as the kubelet's
volume manager remounts them at each sync of the pod (pkg/kubelet/volumemanager, pkg/volume/util/atomic_writer.go):
a ConfigMap or Secret change within one jittered `sync_frequency` (the kubelet's 1-minute resync, requeued 60 to
90 s later), a label or annotation change at the pod's next sync, through a new `..data`; an unchanged payload is
not written again; a deleted ConfigMap keeps the old files and gets `FailedMount`. Virtual time; volumes are
written to a temporary directory."""

from __future__ import annotations

import asyncio
import base64
import copy
import os
import random
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kjobs.client.resources import CONFIG_MAPS, PODS, SECRETS
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.sim_runtime import Outcome
from tests.node.test_agent import MACHINE, NODE, Node
from tests.node.test_agent_volumes import MountingRuntime
from tests.support import local_api, settle

SYNC = 60.0
LONGEST = 1.5 * SYNC
"""The longest resync: pod_workers.go requeues at `wait.Jitter(resyncInterval, 0.5)`."""

Scenario = Callable[[Node, MountingRuntime], Awaitable[None]]


class Fixed(random.Random):
    """A random source that always draws `value` (the jitter's extremes, exactly)."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


class RemountingRuntime(MountingRuntime):
    """Records when each remount (not the first set-up) happens."""

    remounts: list[float]

    def prepare_volumes(self, pod: dict[str, object], sources: object, *, remount: bool = False) -> list[str]:
        if remount:
            self.remounts.append(self.clock.now())
        return super().prepare_volumes(pod, sources, remount=remount)  # type: ignore[arg-type]


def run(test: Scenario, rng: random.Random | None = None) -> Callable[[], None]:
    """Run `test` against an agent whose pods' containers run for an hour (virtual), its jitter drawn from `rng`
    (seeded when not given)."""

    def scenario() -> None:
        async def body() -> None:
            clock = FakeClock()
            runtime = RemountingRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=3600.0))
            runtime.root, runtime.set_ups, runtime.remounts = Path(tempfile.mkdtemp()), [], []
            client = await local_api(clock)
            agent = NodeAgent(
                client,
                name=NODE,
                clock=clock,
                runtime=runtime,
                settings=NodeAgentSettings(machine=MACHINE, sync_frequency=SYNC),
                memory_monitor=FakeMemoryMonitor(available_bytes=4 << 30, capacity_bytes=8 << 30),
                rng=rng or random.Random(37),
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


CONTAINER = {
    "name": "main",
    "image": "busybox",
    "volumeMounts": [
        {"name": "config", "mountPath": "/etc/app"},
        {"name": "one", "mountPath": "/etc/one", "subPath": "mode"},
    ],
}


def volume_dir(node: Node, runtime: MountingRuntime, pod: str, plugin: str, volume: str) -> Path:
    uid = str((node.pod(pod) or {})["metadata"]["uid"])
    return runtime.root / uid / "volumes" / f"kubernetes.io~{plugin}" / volume


async def running(node: Node, name: str) -> None:
    await settle(node.clock, lambda: node.phase(name) == "Running")


@run
async def test_a_config_map_change_reaches_a_running_pod_within_one_sync_period(
    node: Node, runtime: MountingRuntime
) -> None:
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "slow"}})
    volumes = [{"name": "config", "configMap": {"name": "app"}}, {"name": "one", "configMap": {"name": "app"}}]
    await node.create_pod("reader", containers=[CONTAINER], volumes=volumes)
    await running(node, "reader")
    config = volume_dir(node, runtime, "reader", "configmap", "config")
    first = os.readlink(config / "..data")
    unchanged_until = node.clock.now() + 2 * LONGEST + 1
    await settle(node.clock, lambda: node.clock.now() >= unchanged_until)
    assert os.readlink(config / "..data") == first  # two periodic remounts wrote nothing: nothing changed
    await node.client.update(
        CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "fast", "extra": "1"}}
    )
    changed = node.clock.now()
    await settle(node.clock, lambda: (config / "mode").read_text() == "fast", max_virtual=LONGEST + 1)
    assert node.clock.now() - changed <= LONGEST
    assert os.readlink(config / "..data") != first
    assert sorted(os.listdir(config)) == sorted(["..data", os.readlink(config / "..data"), "mode", "extra"])
    assert os.readlink(config / "extra") == "..data/extra"
    assert node.phase("reader") == "Running"
    assert await node.events("FailedMount") == []


@run
async def test_a_label_change_reaches_the_downward_api_files_at_the_next_sync(
    node: Node, runtime: MountingRuntime
) -> None:
    items = [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "tier", "fieldRef": {"fieldPath": "metadata.labels['tier']"}},
    ]
    volumes = [
        {"name": "config", "downwardAPI": {"items": items}},
        {"name": "one", "projected": {"sources": [{"downwardAPI": {"items": items}}]}},
    ]
    container = {**CONTAINER, "volumeMounts": [{"name": "config", "mountPath": "/etc/podinfo"}]}
    pod = await node.create_pod("labelled", containers=[container], volumes=volumes)
    await running(node, "labelled")
    files = volume_dir(node, runtime, "labelled", "downward-api", "config")
    projected = volume_dir(node, runtime, "labelled", "projected", "one")
    assert (files / "labels").read_text() == ""
    pod = copy.deepcopy(node.pod("labelled") or pod)
    pod["metadata"]["labels"] = {"tier": "gold", "app": "x"}
    await node.client.update(PODS, "default", pod)
    changed = node.clock.now()
    await settle(node.clock, lambda: (files / "tier").read_text() == "gold", max_virtual=SYNC)
    assert node.clock.now() - changed < 1  # a pod update is a sync, which remounts: no wait for the period
    assert (files / "labels").read_text() == 'app="x"\ntier="gold"'
    assert (projected / "tier").read_text() == "gold"


@run
async def test_a_secret_change_reaches_a_projected_volume_and_a_deleted_one_keeps_the_old_files(
    node: Node, runtime: MountingRuntime
) -> None:
    def secret(value: str) -> dict[str, object]:
        return {"metadata": {"name": "creds"}, "data": {"password": base64.b64encode(value.encode()).decode()}}

    await node.client.create(SECRETS, "default", secret("one"))
    sources = [{"secret": {"name": "creds", "items": [{"key": "password", "path": "db/password"}]}}]
    volumes = [{"name": "config", "projected": {"sources": sources}}, {"name": "one", "emptyDir": {}}]
    await node.create_pod("creds", containers=[CONTAINER], volumes=volumes)
    await running(node, "creds")
    files = volume_dir(node, runtime, "creds", "projected", "config")
    await node.client.update(SECRETS, "default", secret("two"))
    await settle(node.clock, lambda: (files / "db" / "password").read_text() == "two", max_virtual=LONGEST + 1)
    await node.client.delete(SECRETS, "default", "creds")
    deadline = node.clock.now() + LONGEST + 1
    await settle(node.clock, lambda: node.clock.now() >= deadline)
    seen = await node.events("FailedMount")
    assert [e["message"] for e in seen] == ['MountVolume.SetUp failed for volume "config" : secret "creds" not found']
    assert (files / "db" / "password").read_text() == "two"  # kept, as the kubelet keeps a failed remount's files
    assert node.phase("creds") == "Running"


async def _remount_gaps(node: Node, runtime: RemountingRuntime, count: int) -> list[float]:
    """The seconds between a pod's first `count` + 1 periodic remounts (nothing about it changes meanwhile)."""
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"mode": "slow"}})
    container = {**CONTAINER, "volumeMounts": CONTAINER["volumeMounts"][:1]}
    await node.create_pod("steady", containers=[container], volumes=[{"name": "config", "configMap": {"name": "app"}}])
    await running(node, "steady")
    await settle(node.clock, lambda: len(runtime.remounts) > count, max_virtual=(count + 1) * LONGEST)
    return [round(b - a, 6) for a, b in zip(runtime.remounts, runtime.remounts[1:], strict=False)]


def _jitter_case(draw: float, gap: float) -> Callable[[], None]:
    async def test(node: Node, runtime: MountingRuntime) -> None:
        assert await _remount_gaps(node, runtime, 3) == [gap, gap, gap]  # type: ignore[arg-type]

    return run(test, Fixed(draw))


test_a_resync_drawing_zero_comes_after_exactly_the_sync_frequency = _jitter_case(0.0, SYNC)
test_a_resync_drawing_one_half_comes_a_quarter_later = _jitter_case(0.5, 1.25 * SYNC)
test_a_resync_drawing_nearly_one_comes_nearly_half_later = _jitter_case(0.999, SYNC + 0.999 * 0.5 * SYNC)


@run
async def test_resyncs_are_spread_over_60_to_90_seconds(node: Node, runtime: MountingRuntime) -> None:
    """pod_workers.go `completeWork`: each successful sync requeues the pod at `wait.Jitter(resyncInterval, 0.5)`,
    a fresh draw each time, so a pod's syncs (and the remounts they bring) do not keep a fixed beat."""
    gaps = await _remount_gaps(node, runtime, 8)  # type: ignore[arg-type]
    assert all(SYNC <= gap < LONGEST for gap in gaps), gaps
    assert len(set(gaps)) == len(gaps)


@run
async def test_an_immutable_config_maps_files_are_never_refreshed_and_it_is_no_longer_watched(
    node: Node, runtime: MountingRuntime
) -> None:
    """pkg/kubelet/util/manager/watch_based_manager.go `objectCache.Get`: a read that finds the object immutable
    stops its reflector and keeps the copy, which answers every later read (the volume manager's remounts). So a
    ConfigMap made `immutable: true`, then deleted and made again with other data, leaves the pod's files as they
    were, with no FailedMount, and nothing lists or watches it again; a mutable one beside it follows."""
    calls: list[tuple[str, str | None]] = []
    listing, watching = node.client.list, node.client.watch

    async def list_(resource: Any, namespace: str | None = None, **options: Any) -> Any:
        calls.append(("list", options.get("field_selector")))
        return await listing(resource, namespace, **options)

    def watch(resource: Any, namespace: str | None = None, **options: Any) -> Any:
        calls.append(("watch", options.get("field_selector")))
        return watching(resource, namespace, **options)

    node.client.list, node.client.watch = list_, watch  # type: ignore[method-assign]
    for name, immutable in (("frozen", True), ("live", False)):
        body = {"metadata": {"name": name}, "data": {"mode": "one"}, "immutable": immutable}
        await node.client.create(CONFIG_MAPS, "default", body)
    volumes = [{"name": "config", "configMap": {"name": "frozen"}}, {"name": "two", "configMap": {"name": "live"}}]
    container = {**CONTAINER, "volumeMounts": [CONTAINER["volumeMounts"][0], {"name": "two", "mountPath": "/b"}]}
    await node.create_pod("reader", containers=[container], volumes=volumes)
    await running(node, "reader")
    frozen = volume_dir(node, runtime, "reader", "configmap", "config")
    live = volume_dir(node, runtime, "reader", "configmap", "two")
    assert (frozen / "mode").read_text() == (live / "mode").read_text() == "one"
    assert node.agent.config_sources.watched() == [("configmap", "default", "live")]
    assert node.agent.config_sources.kept() == [("configmap", "default", "frozen")]
    before = [call for call in calls if call[1] == "metadata.name=frozen"]
    assert [kind for kind, _ in before] == ["list", "watch"]  # the first read's, before the pod started
    for name in ("frozen", "live"):
        await node.client.delete(CONFIG_MAPS, "default", name)
        await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": name}, "data": {"mode": "two"}})
    await settle(node.clock, lambda: (live / "mode").read_text() == "two", max_virtual=LONGEST + 1)
    until = node.clock.now() + 400  # past a watch's 300 s timeout: a live watch would be made again
    await settle(node.clock, lambda: node.clock.now() >= until)
    assert (frozen / "mode").read_text() == "one"
    assert [call for call in calls if call[1] == "metadata.name=frozen"] == before
    assert len(runtime.remounts) >= 5  # periodic remounts went on, reading the kept copy
    assert await node.events("FailedMount") == []
