"""Stop 52: `selectable_fields` interns each value it reads (the name excepted) and `index_of` no longer interns
the fields in a pass of its own. Stop 51's reader and `index_of`'s fields are kept here as they were; on stop 40's
hypothesis objects and updates (members kept, copied, replaced, dropped), for every resource: the same fields in
the same order, the old record's dict exactly when stop 51 took it, and every value but the name interned."""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import selectors
from kjobs.api.selectors import FIELD_ALIASES, FIELD_LABELS, field_value
from kjobs.api.types import Obj
from kjobs.store.events import Record, index_of
from tests.core.test_pod_path_rewrites import OBJECTS
from tests.hypothesis_budget import examples
from tests.store.test_index_reuse import HOW, LABELS, RESOURCES, _member, _with_labels


def old_reader(plan: Any) -> Any:
    """Stop 51's `selectable_fields` reader: no value interned."""
    lines = ["def read(obj, prev, known):", "    values = {}", "    whole = type(obj) is dict"]
    lines.append("    if known is not None and (not whole or type(prev) is not dict):")
    lines.append("        known = None")
    for top, group in plan:
        lines.append(f"    base = obj.get({top!r}) if whole else None")
        have = " and ".join(f"{field!r} in known" for field, _, _, _ in group)
        lines.append(f"    if known is not None and base is prev.get({top!r}) and {have}:")
        lines += [f"        values[{field!r}] = known[{field!r}]" for field, _, _, _ in group]
        lines.append("    else:")
        lines.append("        nested = type(base) is dict")
        for field, key, more, zero in group:
            if key is None:
                lines.append("        node = base")
            else:
                lines.append(f"        node = base.get({key!r}) if nested else None")
                lines += [f"        node = node.get({part!r}) if type(node) is dict else None" for part in more]
            lines.append("        if type(node) is str:")
            lines.append(f"            values[{field!r}] = node")
            lines.append("        elif node is None or type(node) is dict or type(node) is list:")
            lines.append(f"            values[{field!r}] = {zero!r}")
            lines.append("        else:")
            lines.append(f"            values[{field!r}] = field_value(obj, {field!r})")
    lines.append("    return values")
    namespace: dict[str, Any] = {"field_value": field_value}
    exec(compile("\n".join(lines), "<old selectable_fields>", "exec"), namespace)
    return namespace["read"]


def old_fields(resource: str, obj: Obj, like: Record | None, prev: Obj | None) -> dict[str, str]:
    """Stop 51's `index_of` fields: read, then taken from `like` when equal, else each but the name interned."""
    fields_of = FIELD_LABELS.get(resource, selectors._METADATA_FIELDS) - FIELD_ALIASES.get(resource, {}).keys()
    read = old_reader(selectors._plan(sorted(fields_of)))
    fields: dict[str, str] = read(obj, prev, None if like is None or prev is None else like.fields)
    if like is not None and fields == like.fields:
        return like.fields
    for field, value in fields.items():
        if field != "metadata.name":
            fields[field] = sys.intern(value)
    return fields


def check(resource: str, obj: Obj, like: Record | None, prev: Obj | None) -> None:
    new = index_of(resource, obj, like, prev)[1]
    old = old_fields(resource, obj, like, prev)
    assert list(new.items()) == list(old.items())
    assert like is None or (new is like.fields) == (old is like.fields)
    for field, value in new.items():
        if field != "metadata.name":
            assert sys.intern(value) is value, field


@settings(max_examples=examples(500), deadline=None)
@given(RESOURCES, OBJECTS, OBJECTS, LABELS, LABELS, st.fixed_dictionaries(
    {k: HOW for k in ("metadata", "spec", "status", "involvedObject", "source", "reason", "type")}))  # fmt: skip
def test_fields_are_stop_51s_and_interned(
    resource: str, stored: Obj, other: Obj, labels: Any, other_labels: Any, hows: dict[str, str]
) -> None:
    stored = _with_labels(stored, labels)
    other = _with_labels(other, other_labels)
    check(resource, stored, None, None)
    like = Record(b"{}", 1, *index_of(resource, stored))
    obj: Obj = {}
    for key in [*stored, *(k for k in other if k not in stored)]:
        how = hows.get(key, "keep")
        if how != "drop" or key not in stored:
            obj[key] = _member(how, stored.get(key), other.get(key)) if key in stored else other[key]
    if type(obj.get("metadata")) is not dict:
        obj["metadata"] = {}
    check(resource, obj, like, None)
    check(resource, obj, like, stored)


def test_values_made_at_run_time_are_interned() -> None:
    """A pod's fields as a decode leaves them (strings made at run time, not the test's constants), and a
    rendered non-string value (`spec.hostNetwork: true`) and a zero (`false`)."""
    made = "".join(["Runn", "ing"]), "".join(["node", "-1"])
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"nodeName": made[1], "hostNetwork": True}}
    pod["status"] = {"phase": made[0]}
    check("pods", pod, None, None)
    assert index_of("pods", pod)[1]["status.phase"] is sys.intern("Running")
    assert index_of("pods", {"metadata": {"name": "p"}})[1]["spec.hostNetwork"] is sys.intern("false")
