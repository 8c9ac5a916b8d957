"""The PVC protection controller's pod handler reads the phase in place and stops at a pod without claims
(docs/sched49.md): held against the handler as it was (`PlainPVCProtection`, through `_terminal` and the
namespace read first) over pod events of every phase and status shape, with and without claims."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.storage import pod_claim_names
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.controllers.volumes import PVCProtectionController, _meta, _terminal
from tests.hypothesis_budget import examples


class PlainPVCProtection(PVCProtectionController):
    """`_on_pod` as it was before stop 49."""

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and not _terminal(new):
            return
        obj = new if new is not None else old
        assert obj is not None
        namespace = _meta(obj).get("namespace") or ""
        for name in pod_claim_names(obj):
            self.queue.add(f"{namespace}/{name}")


_PHASES = st.sampled_from([None, "", "Pending", "Running", "Succeeded", "Failed", "Unknown", 0, 3, True, ["Failed"]])
_VOLUME = st.one_of(
    st.just({"name": "v", "emptyDir": {}}),
    st.builds(lambda n: {"name": "v", "persistentVolumeClaim": {"claimName": n}}, st.sampled_from(["a", "b", ""])),
    st.just("junk"),
)


@st.composite
def pods(draw: st.DrawFn) -> Obj:
    pod: Obj = {"metadata": {"name": "p"}}
    if draw(st.booleans()):
        pod["metadata"]["namespace"] = draw(st.sampled_from([None, "", "ns"]))
    status = draw(st.sampled_from(["absent", "dict", "null", "list"]))
    if status == "dict":
        pod["status"] = {"phase": draw(_PHASES)} if draw(st.booleans()) else {}
    elif status != "absent":
        pod["status"] = None if status == "null" else ["Succeeded"]
    if draw(st.booleans()):
        pod["spec"] = {"volumes": draw(st.lists(_VOLUME, max_size=3))}
    return pod


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), pods()), st.one_of(st.none(), pods())), min_size=1, max_size=8))
def test_pod_events_queue_what_they_did(events: list[tuple[Obj | None, Obj | None]]) -> None:
    clock = FakeClock()
    made = PVCProtectionController(cast(Any, None), clock)
    plain = PlainPVCProtection(cast(Any, None), clock)
    for old, new in events:
        if old is None and new is None:
            continue
        made._on_pod(old, new)
        plain._on_pod(old, new)
        assert list(made.queue._queue) == list(plain.queue._queue)


def test_finished_or_gone_pod_queues_its_claims() -> None:
    claimed: Obj = {
        "metadata": {"namespace": "ns", "name": "p"},
        "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]},
        "status": {"phase": "Running"},
    }
    controller = PVCProtectionController(cast(Any, None), FakeClock())
    controller._on_pod(None, claimed)
    assert list(controller.queue._queue) == []
    controller._on_pod(claimed, {**claimed, "status": {"phase": "Failed"}})
    assert list(controller.queue._queue) == ["ns/data"]
    other = PVCProtectionController(cast(Any, None), FakeClock())
    other._on_pod(claimed, None)
    assert list(other.queue._queue) == ["ns/data"]
