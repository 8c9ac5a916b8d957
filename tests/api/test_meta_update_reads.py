"""Stop 50: `validate_object_meta_update` reads `finalizers`, `resourceVersion` and `generation` in place when each
is of its type, and builds their field paths only for an error. The version it replaced is kept here; hypothesis
gives both stored and new metadata with values of every JSON type there (big and negative numbers, floats,
booleans, strings, lists, maps): the same errors, in the same order."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_meta as V
from kjobs.api.errors import FieldError
from kjobs.api.validation_access import get_int, get_list, get_str
from tests.api.test_meta_rewrites import META
from tests.hypothesis_budget import examples

Invalid, Forbidden = V.Invalid, V.Forbidden


def plain_meta_update(meta: Any, old: Any, *, path: str = "metadata") -> list[FieldError]:
    """`validate_object_meta_update` as it was before stop 50."""
    errs: list[FieldError] = []
    if type(meta) is not dict:
        return [FieldError(path, Invalid, "must be of type object", meta)]
    if type(old) is not dict:
        old = {}
    finalizers = get_list(meta, "finalizers", f"{path}.finalizers", errs)
    if old.get("deletionTimestamp"):
        new_set = {f for f in finalizers or [] if isinstance(f, str)}
        old_set = {f for f in old.get("finalizers") or [] if isinstance(f, str)}
        extra = sorted(new_set - old_set)
        if extra:
            listing = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(
                FieldError(
                    f"{path}.finalizers",
                    Forbidden,
                    f"no new finalizers can be added if the object is being deleted, found new finalizers {listing}",
                )
            )
    resource_version = get_str(meta, "resourceVersion", f"{path}.resourceVersion", errs) or ""
    if not resource_version:
        errs.append(FieldError(f"{path}.resourceVersion", Invalid, "must be specified for an update", ""))
    generation = get_int(meta, "generation", f"{path}.generation", errs, bits=64) or 0
    raw_old_generation = old.get("generation")
    old_generation = raw_old_generation if type(raw_old_generation) is int else 0
    if generation < old_generation:
        errs.append(FieldError(f"{path}.generation", Invalid, "must not be decremented", generation))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        new_value = meta.get(key)
        old_value = old.get(key)
        if new_value is old_value and (new_value is None or type(new_value) is str):
            continue
        if not V.semantic_equal(new_value, old_value):
            shown = new_value if new_value is not None else ("" if key in ("name", "namespace", "uid") else None)
            errs.append(FieldError(f"{path}.{key}", Invalid, V.IMMUTABLE_MSG, shown))
    V._validate_meta_collections(meta, path, errs, old, finalizers)
    return errs


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 0, -1]),
    st.floats(allow_nan=False),
    st.sampled_from(["", "7", "x"]),
    st.lists(st.sampled_from(["a", "kubernetes.io/x", 1]), max_size=2),
    st.dictionaries(st.sampled_from(["a"]), st.integers(0, 1)),
)
READS = st.fixed_dictionaries({}, optional={k: ODD for k in ("finalizers", "resourceVersion", "generation")})


def outcome(fn: Any, meta: Any, old: Any) -> Any:
    try:
        return fn(meta, old)
    except TypeError as err:  # a stored object's malformed finalizers fail both versions alike
        return type(err)


@settings(max_examples=examples(1000), deadline=None)
@given(META, META, READS, READS, st.booleans())
def test_meta_update_errors_as_before(
    old: dict[str, Any], new: dict[str, Any], reads: dict[str, Any], old_reads: dict[str, Any], keep: bool
) -> None:
    old = {**old, **old_reads}
    meta = {**(old if keep else new), **reads}
    assert outcome(V.validate_object_meta_update, meta, old) == outcome(plain_meta_update, copy.copy(meta), old)
