"""Upstream rows of test/integration/podgc/podgc_test.go, run against kjobs' pod GC and API.

Upstream starts kube-apiserver and PodGC (threshold 0, period 0.5 s, quarantine 1 s: `setup`) and plays the
kubelet by hand; here the in-process API and kjobs' real `PodGCController` run on virtual time with the same
settings, and the test writes pods and nodes through the API. Upstream's `wait.Poll...` windows (15 s) are
virtual seconds. The `PodDisruptionConditions` / `JobPodReplacementPolicy` gates are on in the Kubernetes kjobs
follows (the first GA and locked), so the rows that turn one off expect what their gate-on twins expect.
Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.podgc import PodGCController, PodGCSettings
from tests.controllers.disruption_support import condition, get_or_none, node_manifest
from tests.controllers.upstream_support import poll_until
from tests.support import local_api

FINALIZER = "test.k8s.io/finalizer"
WINDOW = 15.0  # wait.Poll...(time.Second, time.Second*15, ...)
DELETION_BY_POD_GC = ("True", "DeletionByPodGC", "PodGC: node no longer exists")
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "", "effect": "NoExecute"}


@dataclass
class Env:
    clock: FakeClock
    client: Any

    async def pod(self, name: str = "testpod") -> Obj | None:
        return await get_or_none(self.client, PODS, "default", name)

    async def wait_for(self, what: str, check: Any, name: str = "testpod") -> Obj | None:
        """Poll the pod as upstream's `wait.Poll...(time.Second, time.Second*15, ...)`, on virtual time."""
        seen: dict[str, Obj | None] = {}

        async def probe() -> bool:
            seen["pod"] = await self.pod(name)
            return bool(check(seen["pod"]))

        await poll_until(self.clock, probe, window=WINDOW, what=f"pod {name} {what}")
        return seen["pod"]


@asynccontextmanager
async def setup() -> AsyncIterator[Env]:
    """`setup`: an API and PodGC with `NewPodGCInternal(..., 0, 500*time.Millisecond, time.Second)`."""
    clock = FakeClock()
    client = await local_api(clock)
    settings = PodGCSettings(period=0.5, quarantine=1.0, terminated_pod_threshold=0)
    controller = PodGCController(client, clock=clock, settings=settings)
    await controller.start()
    try:
        yield Env(clock, client)
    finally:
        await controller.stop()


def pod_body(name: str, node: str, *, finalizer: bool, **container: Any) -> Obj:
    """Upstream's test pod: container foo/bar, bound to `node`, with the test finalizer when asked."""
    meta: Obj = {"name": name, "namespace": "default"}
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node, "containers": [{"name": "foo", "image": "bar", **container}]},
    }


def target_of(pod: Obj | None) -> tuple[str, str, str] | None:
    """The pod's DisruptionTarget condition without its lastTransitionTime (`cmpopts.IgnoreFields`)."""
    cond = condition(pod or {}, "DisruptionTarget")
    return None if cond is None else (cond["status"], cond.get("reason", ""), cond.get("message", ""))


def getting_evicted(pod: Obj | None) -> bool:
    """`testutils.PodIsGettingEvicted`: the pod has a deletionTimestamp."""
    return pod is not None and bool((pod.get("metadata") or {}).get("deletionTimestamp"))


# ------------------------------------------------------------------------ TestPodGcOrphanedPodsWithFinalizer


@pytest.mark.parametrize(
    ("phase", "want_phase", "want_target"),
    [
        pytest.param("Pending", "Failed", DELETION_BY_POD_GC, id="PodDisruptionConditions enabled"),
        pytest.param(
            "Pending", "Failed", DELETION_BY_POD_GC, id="PodDisruptionConditions and PodReplacementPolicy enabled"
        ),
        # gate off upstream: Failed without the condition; PodDisruptionConditions is GA and locked on
        pytest.param(
            "Pending", "Failed", DELETION_BY_POD_GC, id="Only PodReplacementPolicy enabled; no PodDisruptionCondition"
        ),
        # gate off upstream: stays Pending without the condition; GA and locked on
        pytest.param("Pending", "Failed", DELETION_BY_POD_GC, id="PodDisruptionConditions disabled"),
        pytest.param("Succeeded", "Succeeded", None, id="PodDisruptionConditions enabled; succeeded pod"),
        pytest.param("Failed", "Failed", None, id="PodDisruptionConditions enabled; failed pod"),
    ],
)
def test_pod_gc_orphaned_pods_with_finalizer(
    phase: str, want_phase: str, want_target: tuple[str, str, str] | None
) -> None:
    """A pod a finalizer holds, orphaned by its node's deletion, is deleted and ends terminal: a pod not yet
    terminal is Failed with DisruptionTarget `DeletionByPodGC`; a terminal one keeps its phase, unmarked."""

    async def scenario() -> None:
        async with setup() as env:
            await env.client.create(NODES, None, node_manifest("node", env.clock))
            await env.client.create(PODS, "default", pod_body("testpod", "node", finalizer=True))
            pod = await env.pod()
            assert pod is not None
            pod["status"]["phase"] = phase
            await env.client.update(PODS, "default", pod, subresource="status")
            await env.client.delete(NODES, None, "node")  # we delete the node to orphan the pod
            pod = await env.wait_for("terminating", getting_evicted)
            assert pod is not None
            assert target_of(pod) == want_target
            assert pod["status"]["phase"] == want_phase

    asyncio.run(scenario())


# ------------------------------------------------------------------------ TestTerminatingOnOutOfServiceNode


@pytest.mark.parametrize(
    ("with_finalizer", "want_phase"),
    [
        pytest.param(True, "Failed", id="pod has phase changed to Failed when PodDisruptionConditions enabled"),
        # gate off upstream: the phase stays Pending; PodDisruptionConditions is GA and locked on
        pytest.param(True, "Failed", id="pod has phase unchanged when PodDisruptionConditions disabled"),
        pytest.param(False, None, id="pod is getting deleted when no finalizer and PodDisruptionConditions enabled"),
        pytest.param(False, None, id="pod is getting deleted when no finalizer and PodDisruptionConditions disabled"),
        pytest.param(
            True,
            "Failed",
            id="pod has phase changed when PodDisruptionConditions disabled, but JobPodReplacementPolicy enabled",
        ),
    ],
)
def test_terminating_on_out_of_service_node(with_finalizer: bool, want_phase: str | None) -> None:
    """A pod terminating on a NotReady node is force-deleted once the node is tainted out-of-service: gone
    without a finalizer; with one, Failed and without DisruptionTarget (the node is not gone)."""

    async def scenario() -> None:
        async with setup() as env:
            await env.client.create(NODES, None, node_manifest("node", env.clock, ready="False"))
            body = pod_body("testpod", "node", finalizer=with_finalizer)
            body["status"] = {"phase": "Running"}
            await env.client.create(PODS, "default", body)
            # trigger termination of the pod, but with long grace period so that it is not removed immediately
            await env.client.delete(PODS, "default", "testpod", grace_period_seconds=300)
            await env.wait_for("terminating", getting_evicted)
            node = await env.client.get(NODES, None, "node")
            node.setdefault("spec", {}).setdefault("taints", []).append(dict(OUT_OF_SERVICE))
            await env.client.update(NODES, None, node)
            if with_finalizer:
                pod = await env.wait_for("in its phase", lambda p: p is not None and p["status"]["phase"] == want_phase)
                assert target_of(pod) is None
            else:
                await env.wait_for("deleted", lambda p: p is None)

    asyncio.run(scenario())


# -------------------------------------------------------------------- TestPodGcForPodsWithDuplicatedFieldKeys


@pytest.mark.parametrize(
    "container",
    [
        pytest.param(
            {"env": [{"name": "XYZ", "value": "1"}, {"name": "XYZ", "value": "2"}]},
            id="Orphan pod with duplicated env vars",
        ),
        pytest.param(
            {"ports": [{"containerPort": 93, "hostPort": 9376}, {"containerPort": 93, "hostPort": 9377}]},
            id="Orphan pod with duplicated ports; scenario from https://issues.k8s.io/113482",
        ),
    ],
)
def test_pod_gc_for_pods_with_duplicated_field_keys(container: Obj) -> None:
    """Regression test for https://issues.k8s.io/118261: PodGC's status write must not trip over list items
    with duplicated keys in the pod's spec; the orphan is Failed with DisruptionTarget and a transition time."""

    async def scenario() -> None:
        async with setup() as env:
            body = pod_body("testpod", "non-existing-node", finalizer=True, **container)
            await env.client.create(PODS, "default", body)
            # getting evicted due to NodeName being "non-existing-node"
            pod = await env.wait_for("terminating", getting_evicted)
            assert pod is not None
            assert target_of(pod) == DELETION_BY_POD_GC
            cond = condition(pod, "DisruptionTarget")
            assert cond is not None and cond.get("lastTransitionTime")
            assert pod["status"]["phase"] == "Failed"

    asyncio.run(scenario())
