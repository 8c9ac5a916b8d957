"""Pod GC's delete path made cheaper (docs/delete59.md), held against the forms it replaced: the force-delete
counter's labelled child kept, and the generic delete's GC finalizers with no finalizers answered at once."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.server.service import _gc_finalizers_kept
from tests.controllers.test_podgc import run_pod, setup
from tests.hypothesis_budget import examples


def test_force_deletes_and_errors_count_by_namespace_and_reason_as_labels_counts_them() -> None:
    """The counter's children kept by (namespace, reason) count what `labels(...).inc()` on each delete counted,
    across reasons, beside a failed delete's error."""

    async def scenario() -> None:
        _, client, controller = await setup()
        done: list[Obj] = []
        for name in ["a", "b", "c"]:
            pod = await run_pod(client, name, "n1")
            pod["status"]["phase"] = "Succeeded"
            done.append(await client.update(PODS, "default", pod, subresource="status"))
        gone = await run_pod(client, "gone", "n1")
        await client.delete(PODS, "default", "gone", grace_period_seconds=0)
        await controller._collect(done[0], "terminated")
        await controller._collect(done[1], "terminated")
        await controller._collect(done[2], "orphaned")
        await controller._collect(gone, "terminated")
        registry = controller.metrics.registry

        def sample(name: str, reason: str) -> Any:
            return registry.get_sample_value(name, {"namespace": "default", "reason": reason})

        assert sample("pod_gc_collector_force_delete_pods_total", "terminated") == 3.0
        assert sample("pod_gc_collector_force_delete_pods_total", "orphaned") == 1.0
        assert sample("pod_gc_collector_force_delete_pod_errors_total", "terminated") == 1.0
        assert sample("pod_gc_collector_force_delete_pod_errors_total", "orphaned") is None
        for name in ["a", "b", "c"]:
            assert client.service.store.get("pods", "default", name) is None

    asyncio.run(scenario())


def plain_gc_finalizers_kept(finalizers: Any, propagation: str) -> list[str] | None:
    """`_gc_finalizers_kept` as it was before delete59."""
    names = [str(f) for f in finalizers or []]
    kept = [f for f in names if f not in ("orphan", "foregroundDeletion")]
    if propagation == "Orphan":
        kept.append("orphan")
    return None if set(kept) == set(names) else kept


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(
        st.none(),
        st.lists(st.sampled_from(["orphan", "foregroundDeletion", "batch.kubernetes.io/job-tracking", "x"])),
    ),
    st.sampled_from(["Background", "Orphan", "Foreground"]),
)
def test_gc_finalizers_kept_as_before(finalizers: list[str] | None, propagation: str) -> None:
    assert _gc_finalizers_kept(finalizers, propagation) == plain_gc_finalizers_kept(finalizers, propagation)
