"""A scheduling attempt's own work (docs/sched54.md), held against the form it replaced: stop 53's `schedule_one`
and `_assume` (kept below as `MainScheduler`) made the failure cache's key for every attempt, built the cluster
scorer for a single feasible node, asked for the default spread selector in a namespace without Services, copied
the assumed pod through `with_field`, and read the pod's claims again in `_assume` and `_bind`.

Both schedulers get the same nodes, Services and pods (requests, priorities, `preemptionPolicy`, node selectors,
taints and tolerations, pod anti-affinity, spread constraints, host ports, claims, nominations) and schedule every
pending pod twice (the second round finds the failures the first cached); what they decide must be the same:
each binding and status patch they start, each event, the placements, the failure cache, the nominations and
the metrics."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.storage import pod_claim_names
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.controllers import volumebinding
from kjobs.controllers.interpod import cluster_scorer, default_spread_selector, prefilter
from kjobs.controllers.preemption import PREFIX as PREEMPTION_PREFIX
from kjobs.controllers.preemption import REASON_NOT_HELPFUL, nominated_on, preempt
from kjobs.controllers.scheduler import Scheduler, _signature
from kjobs.controllers.scheduling import (
    NO_NODES_AVAILABLE,
    FilterStatus,
    NodeInfo,
    PodInfo,
    filter_node,
    fit_error,
    pod_info,
    select_host,
    with_field,
    with_node_name,
)
from tests.hypothesis_budget import examples
from tests.support import local_api


class _Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, str, str, str]] = []

    def event(self, obj: Obj, type_: str, reason: str, message: str, *, field_path: str = "") -> None:
        self.recorded.append((obj["metadata"]["name"], type_, reason, message))


class Recording(Scheduler):
    """The scheduler with its background work recorded, not run: what each binding and status patch would be."""

    def setup(self) -> None:
        self.spawned: list[tuple[Any, ...]] = []
        self.events = _Events()  # type: ignore[assignment]

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        args = dict(coro.cr_frame.f_locals)  # type: ignore[attr-defined]
        coro.close()
        if coro.__name__ == "_bind":
            if "has_claims" in args:  # the flag `_bind` now gets is what it read itself before
                assert args["has_claims"] == bool(pod_claim_names(args["pod"].pod))
            self.spawned.append(("bind", args["pod"], args["attempts"]))
        else:
            self.spawned.append((coro.__name__, args["pod"].key, args.get("patch")))


class MainScheduler(Recording):
    """`schedule_one` and `_assume` as they were at stop 53."""

    async def schedule_one(self, key: str) -> None:
        pod = self._pending.get(key)
        if pod is None or pod.uid in self._assumed:
            return
        seq = self._event_seq
        has_claims = bool(volumebinding.pod_claim_names(pod.pod))
        if has_claims:
            problem = volumebinding.prefilter(pod.pod, self._claim, self._storage_class)
            if problem is not None:
                count = len(self._ready_nodes())
                not_helpful = fit_error(count, {}, absent_reason=REASON_NOT_HELPFUL)
                message = f"0/{count} nodes are available: {problem}. {PREEMPTION_PREFIX}{not_helpful}"
                self._unschedulable(pod, message, seq, None)
                return
        nominated = self._nominated_node.get(pod.uid, pod.nominated_node)
        if nominated != pod.nominated_node:
            pod = with_field(pod, "nominated_node", nominated)
        nodes = self._ready_nodes()
        signature = None if nominated or has_claims else _signature(pod, nodes)
        cached = self._failures.get(signature) if signature is not None else None
        if cached is not None and cached[0] == self._state:
            self._unschedulable(pod, cached[1], seq, cached[2])
            return
        if not nodes:
            self._unschedulable(pod, NO_NODES_AVAILABLE, seq, None)
            return
        cycle = prefilter(pod, nodes, self._namespace_labels)
        feasible: list[NodeInfo] = []
        statuses: dict[str, FilterStatus] = {}
        nominations = self._nominated
        for node in nodes:
            reserved = nominated_on(node.name, pod, nominations) if nominations.get(node.name) else ()
            status = filter_node(pod, node, reserved, cycle)
            if status is None and has_claims:
                labels = dict(node.labels)
                if volumebinding.node_conflict(pod.pod, labels, node.name, self._claim, self._volume):
                    status = FilterStatus((volumebinding.ERR_REASON_NODE_CONFLICT,), False)
                elif volumebinding.selected_elsewhere(pod.pod, node.name, self._claim_assumed, self._storage_class):
                    status = FilterStatus((volumebinding.ERR_REASON_BIND_CONFLICT,), False)
            if status is None:
                feasible.append(node)
            else:
                statuses[node.name] = status
        if feasible:
            if nominated and any(n.name == nominated for n in feasible):
                chosen = nominated
            else:
                selector = default_spread_selector(pod, self._service_selectors) if not pod.any_spread else None
                chosen = select_host(pod, feasible, cluster_scorer(pod, nodes, self._namespace_labels, selector))
            self._main_assume(pod, chosen)
            return
        reasons = {name: status.reasons for name, status in statuses.items()}
        self.metrics.preemption_attempts.inc()
        result = preempt(
            pod, nodes, statuses, nominated=self._nominated, pdbs=self._budgets, now=self.clock.now(), cycle=cycle
        )
        nomination: str | None = None
        if result.candidate is not None:
            await self._preempt(pod, result.candidate)
            self.metrics.preemption_victims.observe(len(result.candidate.victims))
            nomination = result.candidate.node
        elif result.clear_nomination:
            nomination = ""
        message = fit_error(len(nodes), reasons, post_filter=result.message)
        if signature is not None and result.candidate is None:
            if len(self._failures) > 10_000:
                self._failures.clear()
            self._failures[signature] = (self._state, message, nomination)
        self._unschedulable(pod, message, seq, nomination)

    def _main_assume(self, pod: PodInfo, host: str) -> None:
        assumed = with_field(pod, "node_name", host)
        self._assumed.add(pod.uid)
        self._place(assumed)
        self._set_nomination(pod.uid, "")
        for claim in volumebinding.claims_to_provision(pod.pod, self._claim_assumed, self._storage_class):
            if not volumebinding.selected_node(claim):
                self._selected[str((claim.get("metadata") or {}).get("uid") or "")] = host
        self.spawned.append(("bind", assumed, self._attempts.get(pod.key, 0) + 1))


ZONES = ("a", "b")


@st.composite
def nodes(draw: st.DrawFn) -> list[Obj]:
    made = []
    for i in range(draw(st.integers(0, 4))):
        spec: Obj = {}
        if draw(st.booleans()):
            spec["taints"] = [
                {"key": "gpu", "value": "yes", "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))}
            ]
        made.append(
            {
                "metadata": {
                    "name": f"n{i}",
                    "labels": {
                        "kubernetes.io/hostname": f"n{i}",
                        "topology.kubernetes.io/zone": draw(st.sampled_from(ZONES)),
                    },
                },
                "spec": spec,
                "status": {
                    "allocatable": {
                        "cpu": draw(st.sampled_from(["1", "2", "4"])),
                        "memory": "8Gi",
                        "pods": draw(st.sampled_from(["2", "110"])),
                    },
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    return made


@st.composite
def pods(draw: st.DrawFn) -> list[Obj]:
    made = []
    for i in range(draw(st.integers(1, 9))):
        app = draw(st.sampled_from(["a", "b"]))
        container: Obj = {
            "name": "main",
            "resources": {"requests": {"cpu": draw(st.sampled_from(["100m", "500m", "1", "3"]))}},
        }
        if draw(st.integers(0, 5)) == 0:
            container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        spec: Obj = {"containers": [container], "priority": draw(st.sampled_from([0, 0, 10, 100]))}
        if draw(st.integers(0, 4)) == 0:
            spec["preemptionPolicy"] = "Never"
        if draw(st.integers(0, 4)) == 0:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(ZONES))}
        if draw(st.booleans()):
            spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
        kind = draw(st.integers(0, 7))
        if kind == 0:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        elif kind == 1:
            spec["affinity"] = {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]
                }
            }
        elif kind == 2:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                    "labelSelector": {"matchLabels": {"app": app}},
                }
            ]
        elif kind == 3:
            spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]
        status: Obj = {"phase": "Pending"}
        where = draw(st.integers(0, 5))
        if where == 0:
            spec["nodeName"] = f"n{draw(st.integers(0, 3))}"  # already bound: counted on its node
        elif where == 1:
            status["nominatedNodeName"] = f"n{draw(st.integers(0, 3))}"
        made.append(
            {
                "metadata": {
                    "name": f"p{i}",
                    "namespace": "default",
                    "uid": f"uid-{i}",
                    "labels": {"app": app},
                    "creationTimestamp": f"2026-01-01T00:00:0{i}Z",
                },
                "spec": spec,
                "status": status,
            }
        )
    return made


async def _run(kind: type[Recording], node_objs: list[Obj], pod_objs: list[Obj], service: bool) -> dict[str, Any]:
    clock = FakeClock()
    sched = kind(await local_api(clock), clock=clock)
    sched.setup()
    if service:
        sched._on_service(
            None, {"metadata": {"namespace": "default", "name": "web"}, "spec": {"selector": {"app": "a"}}}
        )
    for n in node_objs:
        sched._on_node(None, n)
    for p in pod_objs:
        sched._on_pod(None, p)
    for _ in range(2):
        for key in sorted(sched._pending, key=sched._order):
            await sched.schedule_one(key)
    sched.queue.shutdown()
    return observed(sched)


def observed(sched: Recording) -> dict[str, Any]:
    """Everything a scheduling decision leaves behind that a user or a later attempt can see: bindings, events,
    placements, the nodes' pods, the failure cache, nominations, parked pods, state counters and metrics."""
    return {
        "spawned": sched.spawned,
        "events": sched.events.recorded,  # type: ignore[attr-defined]
        "placed": sched._placed,
        "assumed": sched._assumed,
        "node pods": {name: dict(info.pods) for name, info in sched._node_infos.items()},
        "failures": sched._failures,
        "nominated": (sched._nominated, sched._nominated_node),
        "parked": (sched._parked, sched._parked_for_pods, sched._attempts),
        "state": (sched._state, sched._event_seq),
        "metrics": [
            (s.name, s.labels, s.value)
            for family in sched.metrics.registry.collect()
            for s in family.samples
            if not s.name.endswith("_created")
        ],
    }


@settings(max_examples=examples(120), deadline=None)
@given(nodes(), pods(), st.booleans())
def test_schedule_one_decides_as_stop_53(node_objs: list[Obj], pod_objs: list[Obj], service: bool) -> None:
    new = asyncio.run(_run(Recording, node_objs, pod_objs, service))
    old = asyncio.run(_run(MainScheduler, node_objs, pod_objs, service))
    assert new == old


def test_the_failure_cache_is_still_used() -> None:
    """A second pod of a failed pod's shape gets the cached answer without filtering (the key is made late now)."""
    big = {
        "metadata": {"name": "big-0", "namespace": "default", "uid": "u0", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "8"}}}], "preemptionPolicy": "Never"},
        "status": {"phase": "Pending"},
    }
    node = {
        "metadata": {"name": "n0", "labels": {}},
        "status": {"allocatable": {"cpu": "1", "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]},
    }
    filtered: list[str] = []

    class Counting(Recording):
        async def schedule_one(self, key: str) -> None:
            from kjobs.controllers import scheduler

            real = scheduler.filter_node

            def counted(pod: PodInfo, *args: Any) -> Any:
                filtered.append(pod.name)
                return real(pod, *args)

            scheduler.filter_node = counted  # type: ignore[assignment]
            try:
                await super().schedule_one(key)
            finally:
                scheduler.filter_node = real

    async def scenario() -> dict[str, Any]:
        clock = FakeClock()
        sched = Counting(await local_api(clock), clock=clock)
        sched.setup()
        sched._on_node(None, node)
        sched._on_pod(None, big)
        await sched.schedule_one("default/big-0")
        sched._on_pod(None, {**big, "metadata": {**big["metadata"], "name": "big-1", "uid": "u1"}})
        await sched.schedule_one("default/big-1")
        sched.queue.shutdown()
        return {"events": sched.events.recorded, "failures": len(sched._failures)}  # type: ignore[attr-defined]

    result = asyncio.run(scenario())
    assert filtered and set(filtered) == {"big-0"}  # big-1 filters nothing (big-0: its ranking, then the full path)
    assert result["failures"] == 1
    assert [e[1:3] for e in result["events"]] == [("Warning", "FailedScheduling")] * 2
    assert result["events"][0][3] == result["events"][1][3]


def test_with_node_name_is_dataclasses_replace() -> None:
    """Every field but `node_name` is carried over, by position, to the one it belongs in."""
    pod = {
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u",
            "labels": {"app": "a"},
            "creationTimestamp": "2026-01-01T00:00:01Z",
        },
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1"}}, "ports": [{"containerPort": 1, "hostPort": 2}]}
            ],
            "schedulerName": "s",
            "nodeSelector": {"k": "v"},
            "tolerations": [{"key": "t", "operator": "Exists"}],
            "schedulingGates": [{"name": "g"}],
        },
        "status": {"nominatedNodeName": "n9", "startTime": "2026-01-01T00:00:02Z"},
    }
    info = pod_info(pod, priority=3, preempt_never=True)
    for f in dataclasses.fields(PodInfo):  # a distinct value in every field: a field read into another shows
        info = dataclasses.replace(info, **{f.name: object()})
    moved = with_node_name(info, "n1")
    assert moved == dataclasses.replace(info, node_name="n1") and moved.node_name == "n1"
    assert all(
        getattr(moved, f.name) is getattr(info, f.name) for f in dataclasses.fields(PodInfo) if f.name != "node_name"
    )
