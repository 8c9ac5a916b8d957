"""Timers of the whole embedded cluster on virtual time fire at their exact virtual times (issue 15, item 1):
the Job controller's pod-failure back-off, activeDeadlineSeconds, container run time in the simulated runtime,
and tolerationSeconds on an unreachable node after the node monitor grace period."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kjobs import virtualtime
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, NODES, PODS
from kjobs.clock import FakeClock
from kjobs.cluster import ClusterSettings
from kjobs.controllers.nodelifecycle import NodeLifecycleSettings
from kjobs.node.shutdown import SHUTDOWN_ANNOTATION, request_shutdown
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.simulate.model import Model
from kjobs.simulate.session import virtual_cluster


def job(**spec: Any) -> Obj:
    pod_spec = spec.pop("pod_spec", {})
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}], **pod_spec}
            },
            **spec,
        },
    }


def model(**containers: Any) -> Model:
    return parse_model({"containers": containers})


def times(trace: list[tuple[float, str, str, str]], what: str, detail: str = "") -> list[float]:
    return [t for t, kind, _, d in trace if kind == what and d.startswith(detail)]


def test_pod_failure_backoff_of_10s_doubles_at_exact_virtual_times() -> None:
    result = simulate(job(backoffLimit=3), SimulationOptions(model=model(exitCodes=[{"code": 1}])))
    # Each replacement waits 10 s · 2^(failures-1) after the last failure (pkg/controller/job/backoff_utils.go).
    assert times(result.trace, "pod-created") == [0.0, 10.0, 30.0, 70.0]
    # The Job fails when the sync batched 1 s after the 4th failure runs (syncJobBatchPeriod).
    assert (result.outcome, result.reason, result.virtual_seconds) == ("Failed", "BackoffLimitExceeded", 71.0)


def test_active_deadline_of_600s_fails_the_job_at_start_plus_600() -> None:
    result = simulate(job(activeDeadlineSeconds=600), SimulationOptions(model=model(runTime={"constant": "1h"})))
    assert times(result.trace, "job", "FailureTarget=True (DeadlineExceeded") == [600.0]
    # The running pod is deleted at once; its container, with no SIGTERM handler (the model's default `sigterm:
    # Ignore`), runs out the 30 s grace period; Failed follows when its termination is seen (1 s batch).
    assert times(result.trace, "pod-phase", "Failed") == [630.0]
    assert (result.outcome, result.reason, result.virtual_seconds) == ("Failed", "DeadlineExceeded", 631.0)
    dying = model(runTime={"constant": "1h"}, sigterm="Exit")
    dies = simulate(job(activeDeadlineSeconds=600), SimulationOptions(model=dying))
    assert times(dies.trace, "pod-phase", "Failed") == [600.0]
    assert (dies.outcome, dies.virtual_seconds) == ("Failed", 601.0)


def test_a_one_hour_container_takes_one_virtual_hour_and_little_wall_time() -> None:
    wall = time.perf_counter()
    result = simulate(job(), SimulationOptions(model=model(runTime={"constant": "1h"})))
    assert time.perf_counter() - wall < 20  # not an hour: a bound generous for a loaded 2-core machine
    assert times(result.trace, "pod-phase", "Succeeded") == [3600.0]
    assert (result.outcome, result.virtual_seconds) == ("Complete", 3601.0)


def test_toleration_seconds_on_an_unreachable_node_evict_after_the_grace_period_plus_300s() -> None:
    lifecycle = NodeLifecycleSettings()
    toleration = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    manifest = job(
        backoffLimit=0,
        pod_spec={"tolerations": [{**toleration, "tolerationSeconds": 300}]},
        podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
    )
    clock = FakeClock()
    seen: dict[str, float] = {}
    stopped: list[str] = []

    async def scenario() -> Obj:
        # Two nodes: with every node of a zone unreachable, the node lifecycle controller assumes the control
        # plane is cut off and taints nothing (full disruption, pkg/controller/nodelifecycle).
        outcome = model(runTime={"constant": "1h"}).outcome(0)
        settings = ClusterSettings(nodes=2, runtime="sim", sim_outcome=outcome)
        async with virtual_cluster(settings) as cluster:
            pods, nodes = cluster.informers.informer(PODS), cluster.informers.informer(NODES)
            evicted = asyncio.Event()

            def on_node(_old: Obj | None, new: Obj | None) -> None:
                taints = ((new or {}).get("spec") or {}).get("taints") or []
                if not stopped or (new or {}).get("metadata", {}).get("name") != stopped[0]:
                    return
                if any(t["key"] == toleration["key"] and t["effect"] == "NoExecute" for t in taints):
                    seen.setdefault("tainted", clock.now())

            def on_pod(_old: Obj | None, new: Obj | None) -> None:
                conditions = ((new or {}).get("status") or {}).get("conditions") or []
                if any(c["type"] == "DisruptionTarget" for c in conditions):
                    seen.setdefault("evicted", clock.now())
                    evicted.set()

            nodes.add_handler(on_node)
            pods.add_handler(on_pod)
            user = LocalClient(cluster.service)
            await user.create(JOBS, "default", manifest)
            await asyncio.sleep(60)  # the pod runs; then its node goes silent
            seen["silent"] = clock.now()
            (running,) = pods.list("default")
            stopped.append(running["spec"]["nodeName"])
            (agent,) = [a for a in cluster.agents if a.name == stopped[0]]
            await agent.stop()
            await asyncio.wait_for(evicted.wait(), 3600)
            (pod,) = [p for p in pods.list("default") if p["status"].get("conditions")]
            return pod

    pod = virtualtime.run(scenario(), clock)
    # The node monitor (every 5 s) stamps a heartbeat when it sees it, marks the node Unknown at its first tick
    # past the grace period, and taints it NoExecute at the tick after (processTaintBaseEviction reads the
    # condition observed before that update): grace period plus up to three ticks after the agent stopped.
    silent_for = seen["tainted"] - seen["silent"]
    assert lifecycle.grace_period < silent_for <= lifecycle.grace_period + 3 * lifecycle.monitor_period
    assert seen["evicted"] - seen["tainted"] == 300.0
    target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert target["reason"] == "DeletionByTaintManager"


def test_a_shutdown_request_on_a_virtual_clock_is_stamped_with_virtual_time() -> None:
    clock = FakeClock(start=1_000_000_000.0)  # 2001: far from the wall clock

    async def scenario() -> Obj:
        async with virtual_cluster(ClusterSettings(runtime="sim")) as cluster:
            client = LocalClient(cluster.service)
            await asyncio.sleep(30)
            await request_shutdown(client, cluster.node_names()[0], now=clock.now())
            return await client.get(NODES, None, cluster.node_names()[0])

    node = virtualtime.run(scenario(), clock)
    assert node["metadata"]["annotations"][SHUTDOWN_ANNOTATION] == format_time(1_000_000_030.0)
