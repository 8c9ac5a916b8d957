"""Stop 54: `podclaims.selector_matches` compares a `matchLabels`-only selector in a loop, not `all` over a
generator (docs/jobctl54.md). Stop 53's form is kept here; hypothesis draws selectors whose values are strings,
numbers, booleans or null, with or without `matchExpressions`, missing or null `matchLabels`, and label maps that
match them, miss a key or differ in a value: the same answers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.selectors import label_selector_from_object
from kjobs.api.types import Obj
from kjobs.controllers.podclaims import selector_matches
from tests.hypothesis_budget import examples


def old_selector_matches(job: Obj, pod: Obj) -> bool:
    """Stop 53's `selector_matches`."""
    selector = (job.get("spec") or {}).get("selector")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if selector is not None and not selector.get("matchExpressions"):
        return all(labels.get(key) == str(value) for key, value in (selector.get("matchLabels") or {}).items())
    return label_selector_from_object(selector).matches_labels(labels)


_keys = st.sampled_from(["a", "b", "c"])
_values = st.one_of(st.sampled_from(["x", "y", "1", "True", ""]), st.integers(0, 2), st.booleans(), st.none())
_expressions = st.one_of(
    st.none(),
    st.just([]),
    st.just([{"key": "a", "operator": "Exists"}]),
)


@settings(max_examples=examples(400), deadline=None)
@given(
    match_labels=st.one_of(st.none(), st.dictionaries(_keys, _values, max_size=3)),
    expressions=_expressions,
    labels=st.one_of(st.none(), st.dictionaries(_keys, st.sampled_from(["x", "y", "1", "True", "", "0"]), max_size=3)),
    copy_selector=st.booleans(),
)
def test_selector_matches_is_stop_53s(
    match_labels: dict[str, Any] | None, expressions: Any, labels: dict[str, str] | None, copy_selector: bool
) -> None:
    selector: Obj = {}
    if match_labels is not None:
        selector["matchLabels"] = match_labels
    if expressions is not None:
        selector["matchExpressions"] = expressions
    if copy_selector and match_labels is not None:  # labels that match the selector exactly, as a Job's pods carry
        labels = {key: str(value) for key, value in match_labels.items()}
    job: Obj = {"spec": {"selector": selector}}
    pod: Obj = {"metadata": {"labels": labels}}
    try:
        expected: bool | type[Exception] = old_selector_matches(job, pod)
    except Exception as exc:  # an invalid selector (a non-string value with expressions): the same error
        expected = type(exc)
    try:
        got: bool | type[Exception] = selector_matches(job, pod)
    except Exception as exc:
        got = type(exc)
    assert got == expected
    assert selector_matches({"spec": {}}, pod) == old_selector_matches({"spec": {}}, pod)
