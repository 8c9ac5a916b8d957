"""Stop 40: an update's index (labels, selectable fields) taken from the record it replaces where the new object
holds the very members the stored one held (`index_of`'s `prev`, `selectable_fields`' `known`) must be the index
computed afresh, for any object: the same labels and fields, in the same order; the fields shared with the old record
exactly when the plain path shares them, the labels at least then (labels that are the stored object's own but
hold a value no string, which validation refuses, are the old record's equal dict rather than an equal copy)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import selectors
from kjobs.api.selectors import FIELD_LABELS, selectable_fields
from kjobs.api.types import Obj
from kjobs.store.events import Record, index_of
from kjobs.store.memory import MemoryStore
from tests.core.test_pod_path_rewrites import OBJECTS, VALUES
from tests.hypothesis_budget import examples

RESOURCES = st.one_of(st.just("pods"), st.sampled_from([*sorted(FIELD_LABELS), "configmaps"]))
LABELS = st.one_of(VALUES, st.dictionaries(st.sampled_from(["app", "x"]), st.sampled_from(["a", "b", ""])))
HOW = st.sampled_from(["keep", "copy", "other", "drop", "mix"])


def _with_labels(obj: Obj, labels: Any) -> Obj:
    """`obj` with `labels`, and with object metadata, as the store holds every object (`_adopted`)."""
    meta = obj.get("metadata")
    meta = dict(meta) if type(meta) is dict else {}
    if labels is not None:
        meta["labels"] = labels
    return {**obj, "metadata": meta}


def _member(how: str, before: Any, other: Any) -> Any:
    """A member of the new version: the stored one itself, an equal copy, another value, or a new dict holding
    the stored one's values themselves where it has them (a write that replaced the dict but not its values)."""
    if how == "keep":
        return before
    if how == "copy":
        return copy.deepcopy(before)
    if how == "mix" and type(before) is dict:
        mixed = dict(before)
        if type(other) is dict:
            mixed.update({k: v for i, (k, v) in enumerate(other.items()) if i % 2})
        return mixed
    return other


@settings(max_examples=examples(500), deadline=None)
@given(RESOURCES, OBJECTS, OBJECTS, LABELS, LABELS, st.fixed_dictionaries(
    {k: HOW for k in ("metadata", "spec", "status", "involvedObject", "source", "reason", "type")}))  # fmt: skip
def test_an_index_taken_from_the_stored_values_is_the_index_computed(
    resource: str, stored: Obj, other: Obj, labels: Any, other_labels: Any, hows: dict[str, str]
) -> None:
    stored = _with_labels(stored, labels)
    other = _with_labels(other, other_labels)
    like = Record(b"{}", 1, *index_of(resource, stored))
    obj: Obj = {}
    for key in [*stored, *(k for k in other if k not in stored)]:
        how = hows.get(key, "keep")
        if how != "drop" or key not in stored:
            value = _member(how, stored.get(key), other.get(key)) if key in stored else other[key]
            obj[key] = value
    if type(obj.get("metadata")) is not dict:
        obj["metadata"] = {}
    plain = index_of(resource, obj, like)
    reused = index_of(resource, obj, like, stored)
    assert reused == plain
    assert list(reused[1].items()) == list(plain[1].items())
    assert (reused[1] is like.fields) == (plain[1] is like.fields)
    assert reused[0] is like.labels or plain[0] is not like.labels


def test_a_pods_finalizer_removal_reads_no_field_of_the_kept_spec_and_status() -> None:
    """The kept members' fields come from the old record (a field of theirs changed there would show), the
    others are read: a move to another node is seen."""
    spec, status = {"nodeName": "n1", "restartPolicy": "Never"}, {"phase": "Succeeded", "podIP": "10.0.0.1"}
    meta = {"name": "p", "namespace": "default", "labels": {"app": "a"}, "finalizers": ["f"]}
    stored = {"metadata": meta, "spec": spec, "status": status}
    known = {**selectable_fields("pods", stored), "spec.nodeName": "marked", "status.phase": "marked"}
    removal = {"metadata": {**meta, "finalizers": []}, "spec": spec, "status": status}
    taken = selectable_fields("pods", removal, stored, known)
    assert taken["spec.nodeName"] == taken["status.phase"] == "marked"  # not read again
    assert list(taken) == list(known)
    moved = {**removal, "spec": {**spec, "nodeName": "n2"}}
    assert selectable_fields("pods", moved, stored, known)["spec.nodeName"] == "n2"
    assert selectable_fields("pods", moved, stored, known)["status.phase"] == "marked"


def test_known_fields_of_another_plan_are_read_again() -> None:
    """A custom resource whose selectable fields changed between two writes: the old record lacks a field."""
    FIELD_LABELS["things.example.com"] = selectors._METADATA_FIELDS | {"spec.a"}
    try:
        spec = {"a": "x", "b": "y"}
        stored = {"metadata": {"name": "t"}, "spec": spec}
        known = selectable_fields("things.example.com", stored)
        FIELD_LABELS["things.example.com"] = selectors._METADATA_FIELDS | {"spec.a", "spec.b"}
        selectors._PLANS.pop("things.example.com", None)
        fields = selectable_fields("things.example.com", {**stored, "metadata": {"name": "t"}}, stored, known)
        assert fields == {"metadata.name": "t", "metadata.namespace": "", "spec.a": "x", "spec.b": "y"}
    finally:
        del FIELD_LABELS["things.example.com"]
        selectors._PLANS.pop("things.example.com", None)


def test_the_store_indexes_a_handed_over_update_as_it_did() -> None:
    """Through the store: a handed-over update that keeps the stored spec and status (a finalizer's removal) is
    selected by the same field selectors as before, and one that moves the pod is found under its new node."""
    store = MemoryStore()
    pod: Obj = {
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}, "finalizers": ["f"]},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"},
    }
    store.create("pods", "default", "p", pod)
    import asyncio

    async def writes() -> None:
        shared = store.get_shared("pods", "default", "p")
        kept = {**shared, "metadata": {**shared["metadata"], "finalizers": []}}
        await store.aupdate("pods", "default", "p", kept, adopt=True)
        shared = store.get_shared("pods", "default", "p")
        assert shared is kept
        moved = {**shared, "metadata": dict(shared["metadata"]), "spec": {"nodeName": "n2"}}
        await store.aupdate("pods", "default", "p", moved, adopt=True)

    asyncio.run(writes())
    items, _ = store.list("pods", field_selector="spec.nodeName=n2,status.phase=Running")
    assert [o["metadata"]["name"] for o in items] == ["p"]
    assert store.list("pods", field_selector="spec.nodeName=n1")[0] == []
