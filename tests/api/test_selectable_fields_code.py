"""Stop 50: `selectable_fields` runs each resource's plan as code made from it (`_reader`) instead of walking the plan
for every write. The walk it replaced is kept here; hypothesis gives both the same objects, of every resource with
field labels (paths of one, two and three keys), as a create (no `prev`) and as an update that keeps, copies or
changes each top-level member of the stored version, with `known` that version's fields, or a `known` of another
plan (a custom resource's fields changed): the same values, in the same order."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import selectors
from kjobs.api.selectors import FIELD_ALIASES, FIELD_LABELS, _field_path, field_value, selectable_fields
from kjobs.api.types import Obj
from tests.core.test_pod_path_rewrites import OBJECTS
from tests.hypothesis_budget import examples

CUSTOM = "things.example.com"
CUSTOM_FIELDS = selectors._METADATA_FIELDS | {"spec.a.b", "spec.c", "status.d"}


def plain_selectable_fields(
    resource: str, obj: Obj, prev: Obj | None = None, known: dict[str, str] | None = None
) -> dict[str, str]:
    """`selectable_fields` as it was before stop 50: the plan walked field by field."""
    fields = FIELD_LABELS.get(resource, selectors._METADATA_FIELDS) - FIELD_ALIASES.get(resource, {}).keys()
    plan = selectors._plan(sorted(fields))
    values: dict[str, str] = {}
    whole = type(obj) is dict
    if known is not None and type(prev) is not dict:
        known = None
    for top, group in plan:
        base: Any = obj.get(top) if whole else None
        if known is not None and whole and base is prev.get(top):  # type: ignore[union-attr]
            try:
                for field, _, _, _ in group:
                    values[field] = known[field]
                continue
            except KeyError:
                pass
        nested = type(base) is dict
        for field, key, more, zero in group:
            if key is None:
                node: Any = base
            else:
                node = base.get(key) if nested else None
                for part in more:
                    node = node.get(part) if type(node) is dict else None
            if type(node) is str:
                values[field] = node
            elif node is None or type(node) is dict or type(node) is list:
                values[field] = zero
            else:
                values[field] = field_value(obj, field)
    return values


RESOURCES = st.sampled_from([*sorted(FIELD_LABELS), "configmaps", CUSTOM])
HOW = st.sampled_from(["keep", "copy", "other", "drop"])
THING = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries({}, optional={"name": st.sampled_from(["t", ""])}),
        "spec": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "a": st.one_of(st.fixed_dictionaries({}, optional={"b": st.sampled_from(["x", 3, None])}), OBJECTS),
                    "c": st.sampled_from(["y", 1.5, True]),
                },
            ),
            st.none(),
        ),
        "status": st.fixed_dictionaries({}, optional={"d": st.sampled_from(["z", [1]])}),
    },
)


@settings(max_examples=examples(1000), deadline=None)
@given(
    RESOURCES,
    st.one_of(OBJECTS, THING),
    st.one_of(OBJECTS, THING),
    st.fixed_dictionaries({k: HOW for k in ("metadata", "spec", "status", "involvedObject", "source", "reason")}),
    st.sampled_from(["none", "own", "other plan"]),
)
def test_the_code_reads_what_the_walk_read(
    resource: str, stored: Obj, other: Obj, hows: dict[str, str], known_of: str
) -> None:
    FIELD_LABELS[CUSTOM] = CUSTOM_FIELDS
    try:
        obj: Obj = {}
        for key in [*stored, *(k for k in other if k not in stored)]:
            how = hows.get(key, "keep")
            if key not in stored:
                obj[key] = other[key]
            elif how == "keep":
                obj[key] = stored[key]
            elif how == "copy":
                obj[key] = copy.deepcopy(stored[key])
            elif how == "other" and key in other:
                obj[key] = other[key]
        known: dict[str, str] | None = None
        if known_of == "own":
            known = plain_selectable_fields(resource, stored)
        elif known_of == "other plan":  # a field dropped, as a custom resource's fields change
            known = plain_selectable_fields(resource, stored)
            known.pop(max(known), None)
        prev = stored if known is not None else None
        values = selectable_fields(resource, obj, prev, known)
        plain = plain_selectable_fields(resource, obj, prev, known)
        assert values == plain
        assert list(values.items()) == list(plain.items())
        assert selectable_fields(resource, obj) == plain_selectable_fields(resource, obj)
    finally:
        del FIELD_LABELS[CUSTOM]
        selectors._PLANS.pop(CUSTOM, None)


def test_every_path_length_is_in_the_plans() -> None:
    """What the test above reaches: paths of one key (an event's `reason`), two and three (a custom field)."""
    lengths = {len(_field_path(f)) for fields in [*FIELD_LABELS.values(), CUSTOM_FIELDS] for f in fields}
    assert {1, 2, 3} <= lengths
