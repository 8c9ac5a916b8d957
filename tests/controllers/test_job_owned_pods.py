"""The Job controller's per-Job pod set stays in name order as pods come, change and go."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.controllers.job import _facts, _InNameOrder, _OwnedPods
from kjobs.job.pods import sync_facts
from kjobs.job.sync import new_context
from tests.hypothesis_budget import examples

_ops = st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 3)), max_size=80)


@settings(max_examples=examples(200), deadline=None)
@given(ops=_ops)
def test_pods_come_out_in_name_order_with_their_newest_versions(ops: list[tuple[bool, int, int]]) -> None:
    owned, model = _OwnedPods(), {}
    for present, n, version in ops:
        uid, pod = f"uid-{n}", {"metadata": {"name": f"pod-{n * 7 % 31}", "uid": f"uid-{n}"}, "v": version}
        if present:
            owned.observe(uid, pod)
            model[uid] = pod
        else:
            owned.observe(uid, None)
            model.pop(uid, None)
    expected = sorted(model.values(), key=lambda p: (p["metadata"]["name"], p["metadata"]["uid"]))
    assert owned.in_name_order() == expected


@settings(max_examples=examples(300), deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(("add", "remove", "read")), st.integers(0, 30), st.integers(0, 3))))
@example(ops=[("add", 1, 0), ("read", 0, 0), ("remove", 1, 0), ("add", 1, 1), ("read", 0, 0)])  # gone and back
@example(ops=[("add", 1, 0), ("add", 2, 0), ("remove", 2, 0), ("read", 0, 0)])  # came and went between reads
def test_reads_between_the_changes_see_the_name_order_of_that_moment(ops: list[tuple[str, int, int]]) -> None:
    """The order is brought up to date at a read (pods that came, went, or went and came back since the last
    one): every read, wherever it falls, lists the pods present then, each once, in name order."""
    owned, model = _OwnedPods(), {}
    for op, n, version in ops:
        uid = f"uid-{n}"
        if op == "add":
            pod = {"metadata": {"name": f"pod-{n * 7 % 31}", "uid": uid}, "v": version}
            owned.observe(uid, pod)
            model[uid] = pod
        elif op == "remove":
            owned.observe(uid, None)
            model.pop(uid, None)
        else:
            expected = sorted(model.values(), key=lambda p: (p["metadata"]["name"], p["metadata"]["uid"]))
            assert owned.in_name_order() == expected
    expected = sorted(model.values(), key=lambda p: (p["metadata"]["name"], p["metadata"]["uid"]))
    assert owned.in_name_order() == expected


_PHASES = ("Pending", "Running", "Succeeded", "Failed")
_pod_ops = st.lists(
    st.tuples(st.booleans(), st.integers(0, 30), st.sampled_from(_PHASES), st.booleans(), st.booleans(), st.booleans()),
    max_size=80,
)


def _pod(n: int, phase: str, tracked: bool, deleting: bool, ready: bool) -> dict[str, object]:
    meta: dict[str, object] = {"name": f"pod-{n * 7 % 31}", "uid": f"uid-{n}"}
    if tracked:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2026-11-30T00:00:00Z"
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return {"metadata": meta, "status": status}


@settings(max_examples=examples(300), deadline=None)
@given(ops=_pod_ops)
def test_a_sync_reading_only_the_unsettled_pods_classifies_them_as_one_reading_all(
    ops: list[tuple[bool, int, str, bool, bool, bool]],
) -> None:
    """The controller keeps apart the pods not yet finished or counted; the sync's classification from those
    alone (active, ready, terminating, tracked, all in name order) is the one from every pod."""
    owned, model = _OwnedPods(), {}
    for present, n, phase, tracked, deleting, ready in ops:
        uid = f"uid-{n}"
        if present:
            pod = _pod(n, phase, tracked, deleting, ready)
            owned.observe(uid, pod, sync_facts(pod))
            model[uid] = pod
        else:
            owned.observe(uid, None)
            model.pop(uid, None)
    pods = owned.in_name_order()
    unsettled = owned.unsettled_in_name_order()
    assert unsettled == [p for p in pods if _facts(p)[0] or not _facts(p)[1]]
    job = {"metadata": {"name": "j", "namespace": "ns", "uid": "job"}, "spec": {}, "status": {}}
    everyone = new_context(job, pods, now=0.0, expected_rm_finalizers=frozenset())
    few = new_context(job, pods, now=0.0, expected_rm_finalizers=frozenset(), unsettled=unsettled)
    assert few == everyone
    # The remembered facts are those of the objects `pods` holds now, each under its own object's id (a pod
    # replaced or gone took its entry with it), and a sync classifies from them as from the pods.
    assert owned.facts == {id(pod): sync_facts(pod) for pod in owned.pods.values()}
    remembered = new_context(
        job, pods, now=0.0, expected_rm_finalizers=frozenset(), unsettled=unsettled, facts=owned.facts
    )
    assert remembered == everyone
    assert remembered.active_indexes() == everyone.active_indexes()


def test_a_pod_observed_again_as_the_same_object_keeps_its_facts() -> None:
    owned = _OwnedPods()
    pod = _pod(1, "Running", True, False, True)
    owned.observe("uid-1", pod)
    owned.observe("uid-1", pod)  # a resync hands over the object the informer holds
    assert owned.facts == {id(pod): sync_facts(pod)}
    newer = _pod(1, "Succeeded", True, False, False)
    owned.observe("uid-1", newer)
    assert owned.facts == {id(newer): sync_facts(newer)}
    owned.observe("uid-1", None)
    assert owned.facts == {}


def test_the_lazy_view_lists_the_pods_in_name_order_at_its_first_read() -> None:
    owned = _OwnedPods()
    for n in (3, 1, 2):
        owned.observe(f"uid-{n}", {"metadata": {"name": f"pod-{n}", "uid": f"uid-{n}"}})
    view = _InNameOrder(owned)
    owned.observe("uid-0", {"metadata": {"name": "pod-0", "uid": "uid-0"}})  # before the first read: listed
    names = [p["metadata"]["name"] for p in view]
    assert names == ["pod-0", "pod-1", "pod-2", "pod-3"]
    assert len(view) == 4 and view[1]["metadata"]["name"] == "pod-1"
    assert [p["metadata"]["name"] for p in view[2:]] == ["pod-2", "pod-3"]
    assert list(_InNameOrder(None)) == []
