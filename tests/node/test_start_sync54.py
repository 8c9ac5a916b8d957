"""Stop 54: the node agent does not sync a pod again for what its runtime reported during a sync that left the
status write to a start in flight (the admission's Pending, in a real run: `kjobs run`'s pods were synced three
times, now twice). The start's answer (Running, or the container's end) queues the sync that writes.

Held against stop 53's `NodeAgent._sync_pod`, kept here as the oracle, in virtual time on the simulated runtime
with a start report delay (as the process runtime reports starts, `START_REPORT_DELAY`) and exits that are events
of their own: the same status patches at the same times, the same deletions and the same events, on generated
pods (restart policies, init containers, sidecars, two containers, exits before, at and after the start's report,
failures, restarts, deletions and active deadlines during the start and later, pods that read a ConfigMap)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import CONFIG_MAPS, EVENTS, PODS
from kjobs.clock import FakeClock, RealClock
from kjobs.node.agent import (
    TERMINAL_PHASES,
    NodeAgent,
    NodeAgentSettings,
    _deleting,
    _exit_lost,
    _phase,
    _uid,
    _waits_for_config,
    deletion_grace_seconds,
)
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.node.test_agent import MACHINE, NODE
from tests.support import INTEGRATION_ADMISSION, local_api, settle

DELAY = 0.02
"""The simulated runtime's start report delay: the process runtime's `START_REPORT_DELAY` (some cases take
2 s, to end a pod at its active deadline, or delete it, while its start is in flight)."""


class OldAgent(NodeAgent):
    """Stop 53's node agent: every sync that wrote nothing while the runtime reported during it is followed by
    another."""

    async def _sync_pod(self, key: Any) -> None:
        pod = self.pods.get(*key)
        waiting = self._mount_waiting.get(key)
        if waiting is not None and (pod is None or _uid(pod) != waiting[0]):
            del self._mount_waiting[key]
            self._drop_env_sources(waiting[0])
            self.runtime.forget(waiting[0])
        tracked = self._uid_of.get(key)
        if tracked and (pod is None or _uid(pod) != tracked):
            self._release(tracked)
        ended = self._ended.get(key)
        if ended and (pod is None or _uid(pod) != ended):
            del self._ended[key]
            self.runtime.forget(ended)
        if pod is None:
            return
        uid = _uid(pod)
        handle = self.runtime.get(uid)
        if handle is None:
            handle = await self._admit(pod)
            if handle is None:
                return
        else:
            self.runtime.update_pod(pod)
            if uid in self._remount:
                if handle.terminal:
                    del self._remount[uid]
                else:
                    await self._remount_volumes(pod)
        deleting = _deleting(pod)
        stop = deleting or _phase(pod) in TERMINAL_PHASES
        if stop and not handle.terminal and uid not in self._killing:
            self._killing.add(uid)
            self._record_killing(pod, handle)
            await self.runtime.kill_pod(uid, grace_seconds=deletion_grace_seconds(pod))
        if handle.terminal or not self.runtime.starting(uid):
            self._before_publish.pop(key, None)
            exited = self._exit_seen.pop(uid, None)
            if exited is not None and _exit_lost(exited, handle.status):
                await self._publish(pod, exited, terminal=False)
            await self._publish(pod, handle.status, terminal=handle.terminal)
        if handle.terminal:
            self._live.pop(uid, None)
            self._requests.pop(uid, None)
            self._load.remove(uid)
            if uid in self._env_refs:
                self._drop_env_sources(uid)
        if deleting and handle.terminal and self._written.get(uid, {}).get("phase") in TERMINAL_PHASES:
            await self._finish_deletion(pod)
        if uid in self._env_refs:
            if not handle.terminal and _waits_for_config(handle.status):
                await self._retry_config(pod, handle)
            else:
                self._config_retry.pop(uid, None)


_RANDOM = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|sim://[0-9a-f]{16}|kube-api-access-[a-z0-9]{5}"
)


class Recording(LocalClient):
    """The agent's client: its writes of pods and events, in order, with the virtual time of each (a uid, a container ID
    or a token volume's name, drawn at random, is replaced by its place in the run)"""

    def __init__(self, client: LocalClient, clock: FakeClock, log: list[Any]) -> None:
        super().__init__(client.service, manager="kubelet", shared_results=True)
        self._clock, self._log = clock, log

    def _note(self, *entry: Any) -> None:
        self._log.append((self._clock.now(), *entry))

    async def patch(self, resource: Any, namespace: Any, name: str, patch: Any, **kwargs: Any) -> Any:
        if resource in (PODS, EVENTS):
            self._note("patch", resource.plural, name if resource is PODS else "", patch, kwargs.get("subresource"))
        return await super().patch(resource, namespace, name, patch, **kwargs)

    async def delete(self, resource: Any, namespace: Any, name: str, **kwargs: Any) -> Any:
        if resource is PODS:
            self._note("delete", name, kwargs.get("grace_period_seconds"))
        return await super().delete(resource, namespace, name, **kwargs)

    async def create(self, resource: Any, namespace: Any, body: Any, **kwargs: Any) -> Any:
        if resource is EVENTS:
            event = {k: body.get(k) for k in ("reason", "message", "type", "count", "firstTimestamp", "lastTimestamp")}
            self._note("event", (body.get("involvedObject") or {}).get("name"), event)
        return await super().create(resource, namespace, body, **kwargs)


def _normalised(log: list[Any]) -> list[Any]:
    seen: dict[str, str] = {}
    text = _RANDOM.sub(lambda m: seen.setdefault(m.group(0), f"<{len(seen)}>"), json.dumps(log, sort_keys=False))
    return json.loads(text)  # type: ignore[no-any-return]


Case = dict[str, Any]


async def _run(agent_class: type[NodeAgent], case: Case) -> tuple[list[Any], list[Any], int]:
    """The case's pods on one node agent of `agent_class`: its writes (with their times), the pods' final
    statuses and the number of syncs."""
    clock = FakeClock()
    client = await local_api(clock, admission=INTEGRATION_ADMISSION)
    log: list[Any] = []
    outcomes: dict[tuple[str, str], list[Outcome]] = case["outcomes"]

    def outcome(pod: Obj, container: Obj, number: int) -> Outcome:
        runs = outcomes.get((pod["metadata"]["name"], container["name"]), [Outcome(duration=1)])
        return runs[min(number, len(runs) - 1)]

    runtime = SimulatedRuntime(clock=clock, outcome=outcome, start_report_delay=case["delay"])
    runtime.instant_exits_at_start = False  # as a process's exit: an event after its start, never within it
    agent = agent_class(
        Recording(client, clock, log),
        name=NODE,
        clock=clock,
        runtime=runtime,
        settings=NodeAgentSettings(machine=MACHINE),
    )
    syncs = 0
    plain = agent._sync_pod

    async def counted(key: Any) -> None:
        nonlocal syncs
        syncs += 1
        await plain(key)

    agent._sync_pod = counted  # type: ignore[method-assign]
    await client.create(CONFIG_MAPS, "default", {"metadata": {"name": "settings"}, "data": {"a": "1"}})
    await agent.start()
    try:
        start = clock.now()
        uids: dict[str, str] = {}
        for name, spec in case["pods"].items():
            body = {"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": NODE, **spec}}
            uids[name] = (await client.create(PODS, "default", body))["metadata"]["uid"]
        for at, name, grace in sorted(case["deletions"], key=lambda d: d[0]):
            # at 0: once the agent has admitted the pod, its start in flight (reported `delay` later)
            def due(at: float = at, uid: str = uids[name]) -> bool:
                return clock.now() >= start + at and (at > 0 or runtime.get(uid) is not None)

            await settle(clock, due, max_virtual=900)
            await client.delete(PODS, "default", name, grace_period_seconds=grace)
        horizon = start + case["horizon"]
        await settle(clock, lambda: clock.now() >= horizon, max_virtual=900)
        await settle(clock, lambda: agent.queue.idle())
        pods, _ = await client.list(PODS, "default")
        final = [(p["metadata"]["name"], p.get("status")) for p in sorted(pods, key=lambda p: p["metadata"]["name"])]
    finally:
        await agent.stop()
    return _normalised(log), _normalised(final), syncs


def _both(case: Case) -> tuple[tuple[list[Any], list[Any], int], tuple[list[Any], list[Any], int]]:
    return asyncio.run(_run(OldAgent, case)), asyncio.run(_run(NodeAgent, case))


def _container(name: str, **extra: Any) -> Obj:
    return {"name": name, "image": "busybox:1.36", **extra}


def _pod(*containers: Obj, init: tuple[Obj, ...] = (), policy: str = "Never", **spec: Any) -> Obj:
    body: Obj = {"restartPolicy": policy, "containers": list(containers), **spec}
    if init:
        body["initContainers"] = list(init)
    return body


def _case(pods: dict[str, Obj], outcomes: dict[tuple[str, str], list[Outcome]], **rest: Any) -> Case:
    return {
        "pods": pods,
        "outcomes": outcomes,
        "deletions": rest.get("deletions", []),
        "horizon": rest.get("horizon", 60),
        "delay": rest.get("delay", DELAY),
    }


CASES = {
    "exit-within-the-report-delay": _case({"p": _pod(_container("main"))}, {("p", "main"): [Outcome(duration=0.0)]}),
    "exit-at-the-report-delay": _case({"p": _pod(_container("main"))}, {("p", "main"): [Outcome(duration=DELAY)]}),
    "exit-after-the-report": _case(
        {"p": _pod(_container("main"))}, {("p", "main"): [Outcome(duration=5, exit_code=3)]}
    ),
    "onfailure-restarts": _case(
        {"p": _pod(_container("main"), policy="OnFailure")},
        {("p", "main"): [Outcome(duration=0.0, exit_code=1), Outcome(duration=2, exit_code=1), Outcome(duration=0.01)]},
    ),
    "always-restarts-then-deleted": _case(
        {"p": _pod(_container("main"), policy="Always")},
        {("p", "main"): [Outcome(duration=0.0), Outcome(duration=0.01), Outcome(duration=600)]},
        deletions=[(20.0, "p", 5)],
    ),
    "init-then-main": _case(
        {"p": _pod(_container("main"), init=(_container("setup"),))},
        {("p", "setup"): [Outcome(duration=0.0)], ("p", "main"): [Outcome(duration=0.03)]},
    ),
    "sidecar": _case(
        {"p": _pod(_container("main"), init=(_container("proxy", restartPolicy="Always"),))},
        {("p", "proxy"): [Outcome(duration=600)], ("p", "main"): [Outcome(duration=0.0)]},
    ),
    "two-containers": _case(
        {"p": _pod(_container("a"), _container("b"))},
        {("p", "a"): [Outcome(duration=0.0)], ("p", "b"): [Outcome(duration=3, exit_code=2)]},
    ),
    "deleted-during-the-start": _case(
        {"p": _pod(_container("main"))}, {("p", "main"): [Outcome(duration=600)]}, deletions=[(0.0, "p", 30)]
    ),
    "force-deleted-during-the-start": _case(
        {"p": _pod(_container("main"))}, {("p", "main"): [Outcome(duration=600)]}, deletions=[(0.0, "p", 0)]
    ),
    "deleted-while-running": _case(
        {"p": _pod(_container("main"))},
        {("p", "main"): [Outcome(duration=600, term_delay=1)]},
        deletions=[(2.0, "p", 10)],
    ),
    "deadline-during-the-start": _case(
        {"p": _pod(_container("main"), activeDeadlineSeconds=1)}, {("p", "main"): [Outcome(duration=600)]}, delay=2.0
    ),
    "reads-a-configmap": _case(
        {"p": _pod(_container("main", envFrom=[{"configMapRef": {"name": "settings"}}]))},
        {("p", "main"): [Outcome(duration=0.0)]},
    ),
    "waits-for-a-missing-configmap": _case(
        {"p": _pod(_container("main", envFrom=[{"configMapRef": {"name": "missing"}}]))},
        {("p", "main"): [Outcome(duration=0.0)]},
        deletions=[(25.0, "p", 0)],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_writes_as_stop_53(name: str) -> None:
    (old_log, old_final, old_syncs), (log, final, syncs) = _both(CASES[name])
    assert log == old_log
    assert final == old_final
    assert syncs <= old_syncs


def test_a_pod_whose_container_starts_and_ends_is_synced_twice() -> None:
    """The benchmark's pod (issue #15, `kjobs run` of `sh -c true`): its admission starts the container and
    writes nothing (the start is in flight), its end is written; stop 53 synced it a third time in between."""
    pods = {f"p{i}": _pod(_container("main")) for i in range(5)}
    case = _case(pods, {(name, "main"): [Outcome(duration=0.0)] for name in pods})
    (old_log, _, old_syncs), (log, _, syncs) = _both(case)
    assert log == old_log
    assert (old_syncs, syncs) == (15, 10)


OUTCOMES = st.lists(
    st.builds(
        Outcome,
        duration=st.sampled_from([0.0, 0.01, DELAY, 0.03, 1.0, 5.0, 600.0]),
        exit_code=st.sampled_from([0, 0, 1, 42]),
        term_delay=st.sampled_from([0.0, 0.01, 1.0]),
    ),
    min_size=1,
    max_size=3,
)


@st.composite
def cases(draw: Callable[..., Any]) -> Case:
    pods: dict[str, Obj] = {}
    outcomes: dict[tuple[str, str], list[Outcome]] = {}
    deletions: list[tuple[float, str, int]] = []
    for i in range(draw(st.integers(1, 3))):
        name = f"p{i}"
        regular = [_container(n) for n in ("a", "b")[: draw(st.integers(1, 2))]]
        init_kind = draw(st.sampled_from(["none", "init", "sidecar"]))
        init = (
            ()
            if init_kind == "none"
            else (_container("i", **({"restartPolicy": "Always"} if init_kind == "sidecar" else {})),)
        )
        spec = _pod(*regular, init=init, policy=draw(st.sampled_from(["Never", "OnFailure", "Always"])))
        if draw(st.booleans()):
            spec["activeDeadlineSeconds"] = draw(st.sampled_from([1, 30]))
        pods[name] = spec
        for container in (*regular, *init):
            outcomes[(name, container["name"])] = draw(OUTCOMES)
        if draw(st.booleans()):
            deletions.append((draw(st.sampled_from([0.0, 0.01, 0.5, 3.0])), name, draw(st.sampled_from([0, 1, 30]))))
    return _case(pods, outcomes, deletions=deletions, horizon=90, delay=draw(st.sampled_from([DELAY, DELAY, 2.0])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_same_writes_as_stop_53_on_generated_pods(case: Case) -> None:
    (old_log, old_final, old_syncs), (log, final, syncs) = _both(case)
    assert log == old_log
    assert final == old_final
    assert syncs <= old_syncs


def _summary(status: Obj) -> tuple[Any, ...]:
    """What a status write says, less its times: the phase, and each container's state, started and ready."""
    containers = [*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())]
    return (
        status.get("phase"),
        tuple((c["name"], *sorted(c.get("state") or {}), c.get("started"), c.get("ready")) for c in containers),
    )


async def _run_processes(agent_class: type[NodeAgent], root: Path) -> tuple[dict[str, list[Any]], int]:
    """Real processes (the process runtime, its start report delay): a container that ends at once, one with a
    postStart hook and a readiness probe, one that fails and is restarted (OnFailure), one deleted while it
    starts. What each pod's status writes said, in order, and the number of syncs."""
    clock = RealClock()
    service = ApiService(Storage(MemoryStore()), clock=clock.now)
    await service.ensure_namespaces()
    client = LocalClient(service)
    writes: dict[str, list[Any]] = {}

    class Writes(LocalClient):
        async def patch(self, resource: Any, namespace: Any, name: str, patch: Any, **kwargs: Any) -> Any:
            result = await super().patch(resource, namespace, name, patch, **kwargs)
            if resource is PODS and kwargs.get("subresource") == "status":
                writes.setdefault(name, []).append(_summary((await client.get(PODS, "default", name))["status"]))
            return result

    agent = agent_class(
        Writes(service, manager="kubelet"),
        name="local",
        clock=clock,
        settings=NodeAgentSettings(),
        runtime_factory=lambda on_status: ProcessRuntime(root_dir=root, clock=clock, on_status=on_status),
    )
    syncs = 0
    plain = agent._sync_pod

    async def counted(key: Any) -> None:
        nonlocal syncs
        syncs += 1
        await plain(key)

    agent._sync_pod = counted  # type: ignore[method-assign]
    hooked = _container(
        "main",
        command=["sh", "-c", "sleep 1.5"],
        lifecycle={"postStart": {"exec": {"command": ["sh", "-c", "sleep 0.3"]}}},
        readinessProbe={"exec": {"command": ["true"]}, "periodSeconds": 1},
    )
    pods = {
        "instant": _pod(_container("main", command=["true"])),
        "hooked": _pod(hooked),
        "restarted": _pod(
            # Its failed attempt runs well past the start report delay (from its command's start: docs/start55.md),
            # so that both runs report it Running first.
            _container(
                "main", command=["sh", "-c", "test -e $0 || { touch $0; sleep 0.2; exit 3; }", str(root / "ran")]
            ),
            policy="OnFailure",
        ),
        "deleted": _pod(_container("main", command=["sleep", "30"]), terminationGracePeriodSeconds=1),
    }
    await agent.start()
    try:
        for name, spec in pods.items():
            body = {"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": "local", **spec}}
            created = await client.create(PODS, "default", body)
            if name == "deleted":  # as soon as the agent admitted it: its start is in flight
                while agent.runtime.get(created["metadata"]["uid"]) is None:
                    await asyncio.sleep(0.001)
                await client.delete(PODS, "default", name)
        deadline = time.monotonic() + 30
        while True:
            left, _ = await client.list(PODS, "default")
            if all((p.get("status") or {}).get("phase") in TERMINAL_PHASES for p in left) and agent.queue.idle():
                break
            assert time.monotonic() < deadline, left
            await asyncio.sleep(0.05)
    finally:
        await agent.stop()
    return writes, syncs


def test_the_same_writes_as_stop_53_with_real_processes(tmp_path: Path) -> None:
    """The process runtime's own paths (its shim's start and exit reports, a postStart hook, a readiness probe, a
    restart, a deletion while the start is in flight) write the same statuses; in real time, so what is compared
    leaves the times out (the cases above, in virtual time, compare the times too)."""
    old, old_syncs = asyncio.run(_run_processes(OldAgent, tmp_path / "old"))
    new, syncs = asyncio.run(_run_processes(NodeAgent, tmp_path / "new"))
    assert new == old
    assert old["hooked"] == [
        ("Running", (("main", "running", True, False),)),
        ("Running", (("main", "running", True, True),)),
        ("Succeeded", (("main", "terminated", False, False),)),
    ]
    assert syncs < old_syncs
