"""Stop 39, second round: `ValidateObjectMetaUpdate` with its shortcuts gives the errors it gave.

`_validate_meta_collections` reads whether a collection is the stored object's own inline (no helper call), and
the immutable fields' loop skips `semantic_equal` for the very same str or None. The plain version is kept here;
hypothesis makes stored metadata (valid or not) and updates that keep, copy or change each field, so that both
the shared and the copied paths are taken, and the errors are compared (the same list, in the same order).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_meta as V
from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.validation_access import get_list, get_str_map
from tests.hypothesis_budget import examples

_READ = V._READ


def plain_collections(meta: Any, path: str, errs: Any, stored: Any, finalizers: Any = _READ) -> None:
    def shared(key: str) -> bool:
        value = meta.get(key)
        return stored is not None and value is not None and value is stored.get(key)

    if not shared("labels"):
        V.validate_labels(get_str_map(meta, "labels", f"{path}.labels", errs), f"{path}.labels", errs)
    if not shared("annotations"):
        annotations = get_str_map(meta, "annotations", f"{path}.annotations", errs)
        V.validate_annotations(annotations, f"{path}.annotations", errs)
    refs_path = f"{path}.ownerReferences"
    if not shared("ownerReferences"):
        V._validate_owner_references(get_list(meta, "ownerReferences", refs_path, errs), refs_path, errs)
    if not shared("finalizers"):
        if finalizers is _READ:
            finalizers = get_list(meta, "finalizers", f"{path}.finalizers", errs)
        V._validate_finalizers(finalizers, f"{path}.finalizers", errs)


TEXT = st.sampled_from(["", "a", "job-1", "Bad Name", "x" * 70, "kubernetes.io/x", "batch.kubernetes.io/job-tracking"])
VALUE = st.one_of(st.none(), TEXT, st.integers(-1, 3), st.booleans(), st.lists(TEXT, max_size=2))
REF = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["batch/v1", "", "v1"]),
        "kind": st.sampled_from(["Job", ""]),
        "name": TEXT,
        "uid": st.sampled_from(["u1", "u2", ""]),
        "controller": st.booleans(),
    },
)
META = st.fixed_dictionaries(
    {},
    optional={
        "name": TEXT,
        "namespace": TEXT,
        "uid": st.one_of(TEXT, st.integers(0, 2)),
        "resourceVersion": st.one_of(TEXT, st.integers(0, 2)),
        "generation": st.integers(-1, 3),
        "creationTimestamp": st.one_of(st.none(), st.just("2026-01-01T00:00:00Z"), st.just([])),
        "deletionTimestamp": st.one_of(st.none(), st.just("2026-01-01T00:00:00Z"), st.just({})),
        "deletionGracePeriodSeconds": st.one_of(st.none(), st.integers(0, 30), st.just(30.0)),
        "labels": st.one_of(st.dictionaries(TEXT, VALUE, max_size=3), VALUE),
        "annotations": st.one_of(st.dictionaries(TEXT, VALUE, max_size=3), VALUE),
        "ownerReferences": st.one_of(st.lists(REF, max_size=2), VALUE),
        "finalizers": st.one_of(st.lists(TEXT, max_size=3), VALUE),
    },
)
HOW = st.sampled_from(["keep", "copy", "drop", "change"])


IMMUTABLE = ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
KEYS = (*IMMUTABLE, "labels", "annotations", "ownerReferences", "finalizers", "generation", "resourceVersion")


def fresh(value: Any) -> Any:
    """An equal value that is no other's object (a str rebuilt; "" and one-letter strs are Python's singletons)."""
    if type(value) is str:
        return "".join(list(value)) if len(value) > 1 else value
    return copy.deepcopy(value)


def outcome(meta: dict[str, Any], old: dict[str, Any]) -> Any:
    """The errors, or the exception's type (a stored object's malformed finalizers fail both versions alike)."""
    try:
        return V.validate_object_meta_update(meta, old)
    except TypeError as err:
        return type(err)


@settings(max_examples=examples(500), deadline=None)
@given(old=META, other=META, hows=st.dictionaries(st.sampled_from(KEYS), HOW))
def test_meta_update_errors_as_before(old: dict[str, Any], other: dict[str, Any], hows: dict[str, str]) -> None:
    """The plain run: the collections checked as they were, and the immutable fields made fresh objects in both
    metadata, so that each is compared by `semantic_equal`; the collections keep what they share."""
    meta = dict(old)
    for key, how in hows.items():
        if how == "copy" and key in old:
            meta[key] = copy.deepcopy(old[key])
        elif how == "drop":
            meta.pop(key, None)
        elif how == "change" and key in other:
            meta[key] = other[key]
    new = outcome(meta, old)
    plain_meta = {k: fresh(v) if k in IMMUTABLE else v for k, v in meta.items()}
    plain_old = {k: fresh(v) if k in IMMUTABLE else v for k, v in old.items()}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(V, "_validate_meta_collections", plain_collections)
        plain = outcome(plain_meta, plain_old)
    assert new == plain
    if isinstance(new, list):  # and the immutable fields' errors are those of `semantic_equal` on each
        shown = [e for e in new if e.field in {f"metadata.{k}" for k in IMMUTABLE} and e.detail == V.IMMUTABLE_MSG]
        assert shown == plain_immutable(meta, old)


def plain_immutable(meta: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    errs = []
    for key in IMMUTABLE:
        value = meta.get(key)
        if not V.semantic_equal(value, old.get(key)):
            shown = value if value is not None else ("" if key in ("name", "namespace", "uid") else None)
            errs.append(FieldError(f"metadata.{key}", ErrorType.FieldValueInvalid, V.IMMUTABLE_MSG, shown))
    return errs


@pytest.mark.parametrize("value", [None, "", "a", "job-1", "2026-01-01T00:00:00Z", "x" * 300])
def test_the_same_str_or_none_is_semantically_equal(value: str | None) -> None:
    """What the immutable fields' shortcut takes for granted."""
    assert V.semantic_equal(value, value)


@pytest.mark.parametrize("stored", [None, {}, {"labels": {"a": "b"}}])
def test_create_reads_no_stored_collection(stored: dict[str, Any] | None) -> None:
    meta = {"name": "x", "labels": {"Bad Key!": "v"}, "finalizers": ["bad finalizer"]}
    errs: list[Any] = []
    plain: list[Any] = []
    V._validate_meta_collections(meta, "metadata", errs, stored)
    plain_collections(meta, "metadata", plain, stored)
    assert errs == plain
    assert {e.field.split("[")[0] for e in errs} == {"metadata.labels", "metadata.finalizers"}
