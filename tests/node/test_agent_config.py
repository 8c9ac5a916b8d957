"""The node agent reads the ConfigMaps and Secrets a pod's containers use, through its client; a missing one
keeps the container waiting (CreateContainerConfigError, a Failed event) until it exists; a restarted container
reads their current values, as the kubelet's watch-based managers give them. Virtual time."""

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
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.node.test_agent import MACHINE, NODE, Node
from tests.support import local_api, settle


class RecordingRuntime(SimulatedRuntime):
    """The simulated runtime, keeping the environment each container started with."""

    envs: dict[str, dict[str, str]]
    attempts: dict[str, list[dict[str, str]]]
    """Per pod/container, the environment of each attempt in order."""

    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        self.envs[f"{record.pod['metadata']['name']}/{container['name']}"] = env
        self.attempts.setdefault(f"{record.pod['metadata']['name']}/{container['name']}", []).append(env)
        return super()._spawn(record, container, number, env, argv)


def fails_first(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """A container named `flaky` runs 5 s and exits 1 the first time (`twice`: the first two times), then
    succeeds at once; others succeed."""
    failures = {"flaky": 1, "twice": 2}.get(container["name"], 0)
    return Outcome(duration=5, exit_code=1) if attempt < failures else Outcome()


def run(test: Any) -> Any:
    def scenario() -> None:
        async def body() -> None:
            clock = FakeClock()
            runtime = RecordingRuntime(clock=clock, outcome=fails_first)
            runtime.envs, runtime.attempts = {}, {}
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
    assert node.agent.config_sources.watched() == []


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


FLAKY = {
    "name": "flaky",
    "image": "busybox:1.36",
    "envFrom": [{"secretRef": {"name": "creds"}}],
    "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}}],
}


def container_status(node: Node, name: str) -> Obj:
    pod = node.pod(name) or {}
    return dict(((pod.get("status") or {}).get("containerStatuses") or [{}])[0])


@run
async def test_a_restarted_container_reads_the_current_values(node: Node, runtime: RecordingRuntime) -> None:
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "old"}})
    await node.client.create(SECRETS, "default", {"metadata": {"name": "creds"}, "stringData": {"TOKEN": "t1"}})
    await node.create_pod("flaky", restartPolicy="OnFailure", containers=[FLAKY])
    await node.create_pod("reader", restartPolicy="OnFailure", containers=[{**FLAKY, "name": "main"}])
    await settle(node.clock, lambda: "running" in (container_status(node, "flaky").get("state") or {}))
    # one watch per object, however many pods read it
    assert node.agent.config_sources.watched() == [("configmap", "default", "app"), ("secret", "default", "creds")]
    await node.client.patch(CONFIG_MAPS, "default", "app", {"data": {"MODE": "new"}}, patch_type="merge")
    await node.client.patch(SECRETS, "default", "creds", {"stringData": {"TOKEN": "t2"}}, patch_type="merge")
    await settle(node.clock, lambda: node.phase("flaky") == "Succeeded")
    assert runtime.attempts["flaky/flaky"] == [{"TOKEN": "t1", "MODE": "old"}, {"TOKEN": "t2", "MODE": "new"}]
    assert runtime.attempts["reader/main"] == [{"TOKEN": "t1", "MODE": "old"}]  # it never restarted
    assert container_status(node, "flaky")["restartCount"] == 1
    assert node.agent.config_sources.watched() == []  # both pods are done: nothing is watched any more


@run
async def test_a_restart_after_its_config_map_is_deleted_waits_until_it_is_back(
    node: Node, runtime: RecordingRuntime
) -> None:
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "old"}})
    await node.client.create(SECRETS, "default", {"metadata": {"name": "creds"}, "stringData": {"TOKEN": "t"}})
    await node.create_pod("flaky", restartPolicy="OnFailure", containers=[FLAKY])
    await settle(node.clock, lambda: "running" in (container_status(node, "flaky").get("state") or {}))
    await node.client.delete(CONFIG_MAPS, "default", "app")
    await settle(node.clock, lambda: waiting(node, "flaky").get("reason") == "CreateContainerConfigError")
    status = container_status(node, "flaky")
    assert status["state"]["waiting"] == {
        "reason": "CreateContainerConfigError",
        "message": 'configmap "app" not found',
    }
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["restartCount"] == 0  # no second container was created
    assert node.phase("flaky") == "Running"  # the kubelet's getPhase: a container waiting to restart
    [failed] = await node.events("Failed")
    assert (failed["type"], failed["message"]) == ("Warning", 'Error: configmap "app" not found')
    assert len(runtime.attempts["flaky/flaky"]) == 1
    created = node.clock.now()
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "back"}})
    await settle(node.clock, lambda: node.phase("flaky") == "Succeeded")
    assert node.clock.now() - created <= 10.5  # the kubelet's 10 s back-off before the pod's next sync
    assert runtime.attempts["flaky/flaky"] == [{"TOKEN": "t", "MODE": "old"}, {"TOKEN": "t", "MODE": "back"}]
    assert container_status(node, "flaky")["restartCount"] == 1


@run
async def test_a_restart_after_its_back_off_shows_the_config_error(node: Node, runtime: RecordingRuntime) -> None:
    """The second restart comes after a 10 s crash-loop back-off; it fails for the deleted ConfigMap and says so
    until the agent's next try 10 s later (not at once, which would only step the back-off)."""
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "old"}})
    await node.client.create(SECRETS, "default", {"metadata": {"name": "creds"}, "stringData": {"TOKEN": "t"}})
    await node.create_pod("twice", restartPolicy="OnFailure", containers=[{**FLAKY, "name": "twice"}])
    await settle(node.clock, lambda: waiting(node, "twice").get("reason") == "CrashLoopBackOff")
    await node.client.delete(CONFIG_MAPS, "default", "app")
    await settle(node.clock, lambda: waiting(node, "twice").get("reason") == "CreateContainerConfigError")
    failed_at = node.clock.now()
    later = asyncio.ensure_future(node.clock.sleep(5))  # a deadline of the test's own, before the agent's next try
    await settle(node.clock, later.done)
    assert waiting(node, "twice") == {"reason": "CreateContainerConfigError", "message": 'configmap "app" not found'}
    await node.client.create(CONFIG_MAPS, "default", {"metadata": {"name": "app"}, "data": {"MODE": "back"}})
    await settle(node.clock, lambda: node.phase("twice") == "Succeeded")
    assert node.clock.now() - failed_at <= 10.5
    assert [env["MODE"] for env in runtime.attempts["twice/twice"]] == ["old", "old", "back"]


@run
async def test_probes_and_hooks_are_not_run_and_the_pod_says_so(node: Node, runtime: RecordingRuntime) -> None:
    """A liveness probe that would fail on a cluster, restarting or failing the pod, is never run here: the pod
    must say so rather than complete as if it had passed."""
    probe = {"exec": {"command": ["cat", "healthy"]}, "periodSeconds": 1}
    container = {
        "name": "main",
        "image": "busybox",
        "livenessProbe": probe,
        "readinessProbe": probe,
        "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}}},
    }
    await node.create_pod("probed", containers=[container])
    await settle(node.clock, lambda: node.phase("probed") == "Succeeded")
    [event] = await node.events("HandlersNotRun")
    assert (event["type"], event["message"]) == (
        "Warning",
        "kjobs runs no probes or lifecycle hooks: livenessProbe, readinessProbe, lifecycle.preStop (container main) "
        "not run; the containers count as started and ready while they run",
    )


@run
async def test_a_pod_waits_until_its_claim_is_bound(node: Node, runtime: RecordingRuntime) -> None:
    """The kubelet's volume manager keeps a pod whose claim is missing or unbound from starting (docs/storage.md):
    the pod stays Pending with no container started, and starts once the claim is Bound."""
    from kjobs.client.resources import PERSISTENT_VOLUME_CLAIMS

    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    await node.create_pod("claimant", volumes=volumes)
    for _ in range(30):  # three seconds of the agent's one-second checks
        node.clock.advance(0.1)
        await asyncio.sleep(0)
    assert node.phase("claimant") == "Pending"
    assert runtime.attempts == {}
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    made = await node.client.create(PERSISTENT_VOLUME_CLAIMS, "default", claim)
    made["status"] = {"phase": "Bound"}
    await node.client.update(PERSISTENT_VOLUME_CLAIMS, "default", made, subresource="status")
    await settle(node.clock, lambda: node.phase("claimant") == "Succeeded")
