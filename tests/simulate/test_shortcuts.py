"""What `kjobs simulate` leaves out for speed (issue #15 item 4) changes no decision: the same seed gives the same
Job status, the same trace and the same final state of every pod with and without each shortcut."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import re

import pytest

from kjobs.api.types import Obj
from kjobs.client.events import EventRecorder
from kjobs.client.local import LocalClient
from kjobs.client.resources import EVENTS, JOBS
from kjobs.clock import FakeClock
from kjobs.cluster import INTERPRETER_FROZEN
from kjobs.controllers.podgc import PodGCSettings
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.store import MemoryStore


def indexed_job(completions: int = 20, parallelism: int = 5) -> Obj:
    """An Indexed Job of instant pods (the default model: every container succeeds at once)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "shortcuts", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def test_a_results_repr_leaves_out_the_trace_and_the_job() -> None:
    # asyncio.Runner reprs the main task's result when it restores SIGINT: a trace in it cost ~1 s per 10k pods.
    result = simulate(indexed_job(), SimulationOptions(seed=1))
    text = repr(result)
    assert "outcome='Complete'" in text
    assert "pod-created" not in text and "trace" not in text and "managedFields" not in text


FLAKY = {
    "containers": {
        "runTime": {"constant": "30s"},
        "oomKillProbability": 0.05,
        "exitCodes": [{"code": 0, "weight": 0.8}, {"code": 1, "weight": 0.15}, {"code": 42, "weight": 0.05}],
    },
    "disruptions": [{"kind": "drain", "ratePerPodHour": 6}, {"kind": "preempt", "ratePerPodHour": 6}],
}


def flaky_job() -> Obj:
    """Per-index back-off, a policy with every action, and disruptions: many decisions that could differ."""
    job = indexed_job(completions=30, parallelism=8)
    spec = job["spec"]
    spec["backoffLimitPerIndex"] = 2
    spec["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    spec["podFailurePolicy"] = {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}},
            {"action": "Count", "onExitCodes": {"operator": "In", "values": [1, 137]}},
        ]
    }
    return job


def outcome(options: SimulationOptions) -> tuple[Obj, dict[str, str], list[tuple[float, str, str, str]]]:
    """The Job's final status, each pod's final state (its last phase, with exit codes or deletion), the trace."""
    result = simulate(flaky_job(), options)
    final: dict[str, str] = {}
    for _at, what, name, detail in result.trace:
        if what == "pod-phase":
            final[name] = detail
        elif what == "pod-deleted":
            final[name] = f"deleted after {final.get(name, 'Pending')}"
    return result.job["status"], final, result.trace


def test_the_shortcuts_change_no_decision() -> None:
    model = parse_model(FLAKY)
    full = outcome(SimulationOptions(model=model, seed=7, field_managers=True, events=True))
    status, final, _trace = full
    assert any(state.startswith("Failed") for state in final.values())  # the model did make pods fail
    assert status.get("failedIndexes") or status.get("failed")
    for switches in ({"field_managers": False}, {"events": False}, {"field_managers": False, "events": False}):
        options = SimulationOptions(model=model, seed=7, **{"field_managers": True, "events": True, **switches})
        assert outcome(options) == full, switches


def test_simulate_skips_the_human_only_bookkeeping_by_default() -> None:
    assert SimulationOptions().field_managers is False
    assert SimulationOptions().events is False


def test_without_the_bookkeeping_writes_carry_no_managed_fields_and_components_write_no_events() -> None:
    async def run(on: bool) -> tuple[Obj, list[Obj]]:
        clock = FakeClock()
        service = ApiService(Storage(MemoryStore()), clock=clock.now, field_managers=on, record_events=on)
        await service.ensure_namespaces()
        client = LocalClient(service, manager="job-controller")
        job = await client.create(JOBS, "default", indexed_job())
        job = await client.patch(JOBS, "default", "shortcuts", {"metadata": {"labels": {"a": "b"}}})
        recorder = EventRecorder(client, component="job-controller", clock=clock)
        recorder.event(job, "Normal", "SuccessfulCreate", "Created pod: shortcuts-0")
        await recorder.flush()
        events, _ = await client.list(EVENTS, "default")
        return job, events

    job, events = asyncio.run(run(True))
    assert [e["manager"] for e in job["metadata"]["managedFields"]] == ["job-controller"]
    assert [e["reason"] for e in events] == ["SuccessfulCreate"]
    job, events = asyncio.run(run(False))
    assert "managedFields" not in job["metadata"] and job["metadata"]["labels"]["a"] == "b"
    assert events == []


def test_the_watch_trigger_index_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pod writes offered only to their node's watch (`kjobs.store.triggers`) or to every watch: the same run,
    on several nodes (each agent watches its own)."""
    from kjobs.store import triggers

    options = SimulationOptions(model=parse_model(FLAKY), seed=3, nodes=4)
    indexed = outcome(options)
    monkeypatch.setattr(triggers, "TRIGGER_FIELDS", {})
    assert outcome(options) == indexed


MIXED = {
    "containers": {
        "runTime": {"constant": "30s"},
        "oomKillProbability": 0.05,
        "exitCodes": [{"code": 0, "weight": 0.8}, {"code": 1, "weight": 0.15}, {"code": 42, "weight": 0.05}],
    },
    "overrides": [
        {
            "indexes": "0-19",
            "runTime": {"constant": "0s"},
            "oomKillProbability": 0.05,
            "exitCodes": [{"code": 0, "weight": 0.7}, {"code": 1, "weight": 0.2}, {"code": 42, "weight": 0.1}],
        }
    ],
    "disruptions": [{"kind": "drain", "ratePerPodHour": 6}, {"kind": "preempt", "ratePerPodHour": 6}],
}
"""Instant containers (indexes 0-19, failing and OOM-killed too) beside 30 s ones that disruptions can reach."""


_RANDOM_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|sim://[0-9a-f]{32}")


def final_pods(options: SimulationOptions) -> tuple[Obj, dict[str, Obj], list[tuple[float, str, str, str]]]:
    """The Job's final status, every pod still stored at the end (status and metadata but its resourceVersion,
    which counts writes; uids and container IDs, random in every run, numbered in order of appearance), and the
    trace."""
    result = simulate(flaky_job(), options)
    pods = {}
    for name, pod in sorted((p["metadata"]["name"], p) for p in result.view.pods.values()):
        meta = {k: v for k, v in pod["metadata"].items() if k != "resourceVersion"}
        pods[name] = {"metadata": meta, "spec": pod["spec"], "status": pod["status"]}
    ids: dict[str, str] = {}
    text = _RANDOM_ID.sub(lambda m: ids.setdefault(m.group(0), f"id-{len(ids)}"), json.dumps(pods))
    return result.job["status"], json.loads(text), result.trace


def test_instant_containers_written_once_change_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container that ends as it starts gets one status write, the terminal one (`SimulatedRuntime.
    instant_exits_at_start`), not Running and then its end at the same instant: the Job's status, every pod's
    final state and the trace are the same but for the Running phases of the instant pods, which no one saw."""
    from kjobs.node.sim_runtime import SimulatedRuntime

    options = SimulationOptions(model=parse_model(MIXED), seed=11, nodes=2)
    status, pods, trace = final_pods(options)
    assert final_pods(options) == (status, pods, trace)  # deterministic per seed
    monkeypatch.setattr(SimulatedRuntime, "instant_exits_at_start", False)
    old_status, old_pods, old_trace = final_pods(options)
    assert status == old_status
    assert status.get("failedIndexes") and status.get("completedIndexes")
    assert pods == old_pods
    ran = {name for _at, what, name, detail in trace if what == "pod-phase" and detail == "Running"}
    old_ran = {name for _at, what, name, detail in old_trace if what == "pod-phase" and detail == "Running"}
    instant = {name for _at, what, name, index in trace if what == "pod-created" and int(index) < 20}
    assert instant and ran == old_ran - instant and instant <= old_ran
    # The same entries at the same virtual times; within one instant, components may see them in another order.
    unseen = [e for e in old_trace if e[1] == "pod-phase" and e[3] == "Running" and e[2] in instant]
    assert sorted(trace) == sorted(e for e in old_trace if e not in unseen)
    # What the kubelet shows for such a pod: ended at the instant it started, never ready.
    for name in instant & set(pods):
        pod_status = pods[name]["status"]
        (main,) = pod_status["containerStatuses"]
        terminated = main["state"]["terminated"]
        assert terminated["startedAt"] == terminated["finishedAt"] and pod_status["startTime"]
        assert main["ready"] is False and main["started"] is False
        conditions = {c["type"]: c["status"] for c in pod_status["conditions"]}
        assert conditions["Ready"] == conditions["ContainersReady"] == "False"
        assert conditions["PodReadyToStartContainers"] == "False"


def test_the_pod_gc_delete_path_without_extra_decodes_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pod GC deleting terminated pods beyond a low threshold: a delete that stamps the deleter's own read
    (`Store.adelete(last=...)`) and skips decoding the Job when its JSON names no `foregroundDeletion`, beside the
    delete that decodes the stored record and the Job every time. Same Job status, pods, trace."""
    from kjobs import cluster
    from kjobs.simulate import session
    from kjobs.store import base

    settings = functools.partial(cluster.ClusterSettings, pod_gc=PodGCSettings(terminated_pod_threshold=5))
    monkeypatch.setattr(session, "ClusterSettings", settings)
    options = SimulationOptions(model=parse_model(FLAKY), seed=5, nodes=3)
    status, pods, trace = final_pods(options)
    assert sum(1 for entry in trace if entry[1] == "pod-deleted") > 10  # pod GC did delete
    monkeypatch.setattr(base, "_read_at", lambda obj, current: False)
    monkeypatch.setattr(ApiService, "_awaits_foreground", lambda self, r, namespace, name: True)
    assert final_pods(options) == (status, pods, trace)


def test_the_schedulers_node_memo_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes keeping their filter status and score for the last pod spec (`NodeMemo`), beside a scheduler that
    evaluates every node afresh for every pod (no `SpecInfo` to key on): same placements, status, pods, trace."""
    from kjobs.controllers import scheduler

    options = SimulationOptions(model=parse_model(FLAKY), seed=9, nodes=4)
    status, pods, trace = final_pods(options)
    assert len({pod["spec"].get("nodeName") for pod in pods.values()}) > 1  # the choice of node mattered
    fresh = scheduler.pod_info
    monkeypatch.setattr(scheduler, "pod_info", lambda *a, **kw: dataclasses.replace(fresh(*a, **kw), spec=None))
    assert final_pods(options) == (status, pods, trace)


def test_a_sparse_young_generation_gc_changes_no_decision_and_is_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sparse_gc` while a simulation runs, beside the thresholds it found (and a GC at every 100 allocations):
    the same run; afterwards the caller's thresholds are back."""
    import gc

    from kjobs.simulate import session

    options = SimulationOptions(model=parse_model(FLAKY), seed=4, nodes=2)
    before = gc.get_threshold()
    try:
        gc.set_threshold(100, 10, 10)
        sparse = final_pods(options)
        assert gc.get_threshold() == (100, 10, 10)
        # what the run left is in the old generation, nothing stays frozen (beyond what CPython 3.12 starts with)
        assert gc.get_freeze_count() <= INTERPRETER_FROZEN
        monkeypatch.setattr(session, "sparse_gc", contextlib.nullcontext)
        assert final_pods(options) == sparse
    finally:
        gc.set_threshold(*before)


def test_status_patches_whose_results_are_discarded_change_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node agent sends its status patches with `discard=True` (it never read their results): a client then
    need not decode (HTTP) or copy (in process) the object. The same seed gives the same Job status, every pod's
    same final state and the same trace as when every result is returned."""
    options = SimulationOptions(model=parse_model(MIXED), seed=11, nodes=2)
    discarded = final_pods(options)
    original = LocalClient.patch
    calls: list[bool] = []

    async def returning(self: LocalClient, *args: object, discard: bool = False, **kwargs: object) -> Obj:
        calls.append(discard)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(LocalClient, "patch", returning)
    assert final_pods(options) == discarded
    assert True in calls  # the agent's patches did ask for no result


def test_node_agent_syncs_left_out_change_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node agent leaves out the syncs that would do nothing (`NodeAgent.coalesce_syncs`): updates of a pod
    that ended on it and whose final status is written (that write coming back, the tracking finalizer's
    removal), and a runtime report inside the sync that writes it anyway. Beside an agent that syncs at every
    pod event and report: the same Job status, every pod's final state and the same trace, with instant and
    30 s containers, failures, OOM kills, drains and preemptions (deletions), and pod GC deleting ended pods."""
    from kjobs import cluster
    from kjobs.node.agent import NodeAgent
    from kjobs.simulate import session

    settings = functools.partial(cluster.ClusterSettings, pod_gc=PodGCSettings(terminated_pod_threshold=5))
    monkeypatch.setattr(session, "ClusterSettings", settings)
    options = SimulationOptions(model=parse_model(MIXED), seed=11, nodes=2)
    coalesced = final_pods(options)
    assert any(entry[1] == "pod-deleted" for entry in coalesced[2])
    monkeypatch.setattr(NodeAgent, "coalesce_syncs", False)
    assert final_pods(options) == coalesced


def test_an_instant_pod_costs_its_node_agent_one_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod whose container ends as it starts is synced once by its node agent: that sync admits it, starts it
    and writes its terminal status; its status coming back and the Job controller's removal of its tracking
    finalizer leave the agent nothing to do, and queue no sync (there were four a pod)."""
    from kjobs.node.agent import NodeAgent

    syncs: list[tuple[str, str]] = []
    original = NodeAgent._sync_pod

    async def counted(self: NodeAgent, key: tuple[str, str]) -> None:
        syncs.append(key)
        await original(self, key)

    monkeypatch.setattr(NodeAgent, "_sync_pod", counted)
    result = simulate(indexed_job(completions=20, parallelism=5), SimulationOptions(seed=1, nodes=2))
    assert result.outcome == "Complete" and result.pods_created == 20
    assert len(syncs) == 20 and len(set(syncs)) == 20
