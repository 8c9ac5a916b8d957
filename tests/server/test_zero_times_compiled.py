"""Stop 43 made `kjobs.server.zerotimes`' walk into code per kind (it interpreted the plan on every write): the
filled object must be what the interpreter gave, for any object, with the same key order, the same objects
shared and nothing written into the input.

The interpreter is spelled out here as it was, and hypothesis feeds both objects shaped by each kind's plan:
Times present, absent or null, structs, slices and maps where the plan has them, and values of every other JSON
type wherever one can stand (a write may carry anything until validation refuses it)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import zerotimes
from kjobs.server.gotypes import ROOTS
from kjobs.server.zerotimes import Plan
from tests.hypothesis_budget import examples


def _plain_fill(value: Any, steps: str, plan: Plan) -> Any:
    """The interpreter of stops 42 and 43 before this change (`zerotimes._fill`)."""
    if steps:
        if steps[0] == "l" and type(value) is list:
            pairs: Any = enumerate(value)
        elif steps[0] == "m" and type(value) is dict:
            pairs = value.items()
        else:
            return value
        out: Any = None
        for key, item in pairs:
            filled = _plain_fill(item, steps[1:], plan)
            if filled is not item:
                if out is None:
                    out = type(value)(value)
                out[key] = filled
        return value if out is None else out
    if type(value) is not dict:
        return value
    made: dict[str, Any] | None = None
    for field, sub in plan.items():
        if sub is None:
            if field not in value:
                if made is None:
                    made = dict(value)
                made[field] = None
            continue
        item = value.get(field)
        if item is None:
            if not sub[2]:
                continue
            item = {}  # absent or null: Go decodes the zero struct and writes it
        filled = _plain_fill(item, sub[0], sub[1])
        if filled is not item:
            if made is None:
                made = dict(value)
            made[field] = filled
    return value if made is None else made


KINDS = sorted(key for key, root in ROOTS.items() if zerotimes._plan(root) is not None)
JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x", "2026-01-02T03:04:05Z"]), st.just([])
)


def _shaped(plan: Plan) -> st.SearchStrategy[Any]:
    """A struct of `plan`, any of its fields present, an unknown key now and then, or a value of another type."""
    fields = {field: _field(sub) for field, sub in plan.items()}
    fields["other"] = JUNK
    return st.one_of(st.fixed_dictionaries({}, optional=fields), JUNK, st.just({}))


def _field(sub: Any) -> st.SearchStrategy[Any]:
    if sub is None:
        return st.one_of(st.sampled_from(["2026-01-02T03:04:05Z", None]), JUNK)
    steps, plan, _ = sub
    return _through(steps, plan)


def _through(steps: str, plan: Plan) -> st.SearchStrategy[Any]:
    if not steps:
        return _shaped(plan)
    inner = _through(steps[1:], plan)
    made = st.lists(inner, max_size=3) if steps[0] == "l" else st.dictionaries(st.sampled_from("abc"), inner)
    return st.one_of(made, JUNK)


def _shares(a: Any, b: Any) -> bool:
    """Whether `a` and `b` are the same objects wherever one of them is an unchanged part of the input."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_shares(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_shares(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _sharing(out: Any, source: Any) -> Any:
    """The skeleton of `out` marking which containers are `source`'s own (by identity)."""
    if out is source:
        return "same"
    if type(out) is dict and type(source) is dict:
        return {k: _sharing(v, source.get(k)) for k, v in out.items()}
    if type(out) is list and type(source) is list:
        return [_sharing(v, source[i] if i < len(source) else None) for i, v in enumerate(out)]
    return "new"


def _with_top_level(obj: Any, kind: tuple[str, str]) -> Any:
    """`obj` with the kind's absent top-level zero fields set, in a copy (the same `obj` when none is absent)."""
    absent = [
        (field, zero)
        for field, zero in zerotimes._top_level(*kind)
        if type(obj) is dict and (field not in obj or (zero is not None and obj[field] is None))
    ]
    return {**obj, **{field: {} if zero == {} else zero for field, zero in absent}} if absent else obj


_COMPILED: dict[tuple[tuple[str, str], int], zerotimes.Filler] = {}


@pytest.mark.parametrize("inline_depth", [zerotimes._INLINE_DEPTH, 2])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: "/".join(k))
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_the_code_fills_what_the_interpreter_filled(
    kind: tuple[str, str], inline_depth: int, data: st.DataObject
) -> None:
    plan = zerotimes._plan(ROOTS[kind])
    assert plan is not None
    obj = data.draw(_shaped(plan))
    before = copy.deepcopy(obj)
    if (kind, inline_depth) not in _COMPILED:  # a small depth: the structs beneath in functions of their own
        _COMPILED[kind, inline_depth] = zerotimes._compile(plan, inline_depth)
    filled = _COMPILED[kind, inline_depth](obj)
    expected = _plain_fill(obj, "", plan)
    assert orjson.dumps(filled) == orjson.dumps(expected)  # the same values in the same key order
    assert _sharing(filled, obj) == _sharing(expected, obj)  # the same parts shared, copies where it copied
    assert obj == before and orjson.dumps(obj) == orjson.dumps(before)  # the input untouched
    # `fill` itself: the absent top-level zeros set (`_top_level`), then the stored kind's plan without its own
    # metadata
    root_plan = zerotimes._root_plan(ROOTS[kind])
    through_fill = zerotimes.fill(obj, *kind)
    top = _with_top_level(obj, kind)
    expected = _plain_fill(top, "", root_plan) if root_plan is not None else top
    assert orjson.dumps(through_fill) == orjson.dumps(expected)
    assert _sharing(through_fill, obj) == _sharing(expected, obj)


PLANS = st.recursive(
    st.dictionaries(st.sampled_from("tuv"), st.none(), min_size=1, max_size=3),
    lambda inner: st.dictionaries(
        st.sampled_from("abctuv"),
        st.one_of(st.none(), st.tuples(st.sampled_from(["", "", "l", "m", "lm"]), inner, st.booleans())),
        min_size=1,
        max_size=4,
    ),
    max_leaves=6,
)
"""Plans of any shape (Times and structs beneath in any order, slices, maps, structs Go makes when absent): what
the Go types hold today is a few of these; the order of the nulls a copy appends is seen only where a struct has
both its own Times and a struct Go makes."""


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), plan=PLANS, inline_depth=st.sampled_from([1, 2, zerotimes._INLINE_DEPTH]))
def test_any_plan_fills_as_the_interpreter_did(data: st.DataObject, plan: Plan, inline_depth: int) -> None:
    obj = data.draw(_shaped(plan))
    before = copy.deepcopy(obj)
    filled = zerotimes._compile(plan, inline_depth)(obj)
    expected = _plain_fill(obj, "", plan)
    assert orjson.dumps(filled) == orjson.dumps(expected)
    assert _sharing(filled, obj) == _sharing(expected, obj)
    assert orjson.dumps(obj) == orjson.dumps(before)


def test_a_templates_absent_metadata_is_made_with_its_null() -> None:
    job = {"metadata": {"name": "j"}, "spec": {"template": {"spec": {"containers": []}}}}
    filled = zerotimes.fill(job, "batch", "Job")
    assert filled["spec"]["template"] == {"spec": {"containers": []}, "metadata": {"creationTimestamp": None}}
    assert "metadata" not in job["spec"]["template"] and "creationTimestamp" not in filled["metadata"]


def test_fill_of_a_kind_without_times_is_the_object() -> None:
    obj = {"kind": "ConfigMap", "data": {"conditions": [{}]}}
    assert zerotimes.fill(obj, "", "ConfigMap") is obj
    assert zerotimes.fill(obj, "example.com", "Unknown") is obj


def test_a_pod_status_missing_times_is_filled_in_place_of_its_keys() -> None:
    status = {
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t"}],
        "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 1}}, "lastState": {}}],
    }
    pod = {"metadata": {"name": "p"}, "status": status}
    filled = zerotimes.fill(pod, "", "Pod")
    assert filled is not pod and filled["metadata"] is pod["metadata"]  # the server's own: not filled
    assert list(filled["status"]["conditions"][0]) == ["type", "status", "lastTransitionTime", "lastProbeTime"]
    assert filled["status"]["containerStatuses"][0]["state"]["terminated"] == {
        "exitCode": 1,
        "finishedAt": None,
        "startedAt": None,
    }
    assert "lastProbeTime" not in status["conditions"][0]  # the input is not written into
    assert zerotimes.fill(filled, "", "Pod") is filled  # nothing missing: the object itself
