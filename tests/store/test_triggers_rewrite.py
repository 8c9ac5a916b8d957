"""Stop 40: `Watchers.for_change` returns a tuple rather than yielding; it must list the watchers the generator
listed, in the same order, for any registered watchers and any change (kept here as it was)."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.selectors import parse_field_selector, parse_label_selector
from kjobs.store.events import Change, EventType, Record
from kjobs.store.triggers import Watchers
from kjobs.store.watch import Watch
from tests.hypothesis_budget import examples


def _plain_for_change(watchers: Watchers, change: Change) -> Iterator[Watch]:
    """`for_change` before stop 40."""
    yield from watchers._plain
    field = watchers._field
    if field is None or not watchers._by_value:
        return
    value = change.record.fields.get(field)
    if value is not None:
        yield from watchers._by_value.get(value, ())
    prev = change.prev
    if prev is not None:
        before = prev.fields.get(field)
        if before is not None and before != value:
            yield from watchers._by_value.get(before, ())


NODES = st.sampled_from(["n1", "n2", "n3"])
SELECTORS = st.one_of(
    st.just(""),
    NODES.map("spec.nodeName={}".format),
    NODES.map("spec.nodeName!={}".format),
    NODES.map("status.phase=Running,spec.nodeName={}".format),
)


def _record(node: str | None) -> Record:
    return Record(b"{}", 1, {}, {} if node is None else {"spec.nodeName": node}, "")


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(["pods", "jobs.batch"]),
    st.lists(SELECTORS, max_size=6),
    st.lists(st.integers(0, 5), max_size=3),
    st.one_of(st.none(), NODES),
    st.one_of(st.none(), st.just("missing"), NODES),
)
def test_for_change_lists_what_the_generator_yielded(
    resource: str, selectors: list[str], removed: list[int], node: str | None, before: str | None
) -> None:
    watchers = Watchers(resource)
    made = [
        Watch(
            resource=resource,
            namespace=None,
            label_selector=parse_label_selector(""),
            field_selector=parse_field_selector(s),
        )
        for s in selectors
    ]
    for w in made:
        watchers.add(w)
    for i in removed:
        if i < len(made):
            watchers.remove(made[i])
    prev = None if before == "missing" else _record(before)
    change = Change(EventType.MODIFIED, "default", "p", _record(node), prev)
    assert list(watchers.for_change(change)) == list(_plain_for_change(watchers, change))
