"""`Intervals.parse` keeps the strings it parsed last with their result, `merge` (so `with_indexes`) hands back
the intervals themselves when nothing is added, and the constructor, `of` and `total` run without a generator or a
rebuilt tuple a span (docs/node53.md): each gives what stop 52's form gives — the same
spans, `str`, `total` and `has` — for well-formed, unsorted, overlapping and corrupt strings, indexes at and past
`completions`, and parsed again after other strings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.goints import go_atoi
from kjobs.job.intervals import Intervals, count_indexes
from tests.hypothesis_budget import examples


def old_parse(text: str | None, completions: int) -> Intervals:
    """Stop 52's `Intervals.parse`: every string parsed afresh."""
    if not text:
        return Intervals()
    spans: list[tuple[int, int]] = []
    for part in text.split(","):
        limits = part.split("-")
        first = go_atoi(limits[0])
        if first is None:
            continue
        if first >= completions:
            break
        if len(limits) > 1:
            last = go_atoi(limits[1])
            if last is None:
                continue
            last = min(last, completions - 1)
        else:
            last = first
        spans.append((first, last))
    return Intervals(sorted(spans))


def old_merge(a: Intervals, b: Intervals) -> Intervals:
    """Stop 52's `merge`: a new object, sorted and merged, also when `b` is empty."""
    return Intervals(sorted([*a.spans, *b.spans]))


_part = st.one_of(
    st.integers(0, 30).map(str),
    st.tuples(st.integers(0, 30), st.integers(0, 30)).map(lambda p: f"{p[0]}-{p[1]}"),
    st.sampled_from(["", "x", "-", "3-", "-4", "1-2-3", "+5", "07", " 2", "99999999999999999999"]),
)
_texts = st.one_of(st.none(), st.lists(_part, max_size=8).map(",".join))


def _same(a: Intervals, b: Intervals) -> None:
    assert a.spans == b.spans
    assert str(a) == str(b)
    assert a.total() == b.total()
    assert [i for i in range(-1, 32) if a.has(i)] == [i for i in range(-1, 32) if b.has(i)]


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.tuples(_texts, st.integers(0, 32)), min_size=1, max_size=6))
def test_parse_is_stop_52s_also_parsed_again(calls: list[tuple[str | None, int]]) -> None:
    for text, completions in [*calls, *reversed(calls)]:  # each string parsed twice, others between
        _same(Intervals.parse(text, completions), old_parse(text, completions))
        assert count_indexes(text, completions) == (0 if text is None else old_parse(text, completions).total())


@settings(max_examples=examples(1000), deadline=None)
@given(_texts, st.lists(st.integers(0, 31), max_size=6), st.integers(0, 32))
def test_with_indexes_and_merge_are_stop_52s(text: str | None, indexes: list[int], completions: int) -> None:
    base = Intervals.parse(text, completions)
    _same(base.with_indexes(indexes), old_merge(base, Intervals.of(indexes)))
    _same(base.merge(Intervals()), old_merge(base, Intervals()))
    _same(Intervals().merge(base), old_merge(Intervals(), base))


def test_a_non_string_fails_as_before() -> None:
    """What the API never stores: an unhashable value raises what `str.split`'s absence raised, not the cache's
    TypeError."""
    for value in ([1], 5):
        try:
            old_parse(value, 4)  # type: ignore[arg-type]
        except Exception as exc:
            expected = type(exc)
        try:
            Intervals.parse(value, 4)  # type: ignore[arg-type]
        except Exception as exc:
            assert type(exc) is expected
        else:
            raise AssertionError("no error")


class OldIntervals:
    """Stop 52's constructor, `of` and `total`."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for first, last in spans:
            if merged and first <= merged[-1][1] + 1:
                if last > merged[-1][1]:
                    merged[-1] = (merged[-1][0], last)
            else:
                merged.append((first, last))
        self.spans = tuple(merged)
        self.firsts = [s[0] for s in merged]

    @classmethod
    def of(cls, indexes: list[int]) -> OldIntervals:
        return cls([(i, i) for i in sorted(set(indexes))])

    def total(self) -> int:
        return sum(last - first + 1 for first, last in self.spans)


_spans = st.lists(st.tuples(st.integers(-3, 30), st.integers(-3, 30)), max_size=8)


@settings(max_examples=examples(1500), deadline=None)
@given(st.one_of(_spans, _spans.map(sorted)), st.lists(st.integers(-2, 31), max_size=8))
def test_the_constructor_of_and_total_are_stop_52s(spans: list[tuple[int, int]], indexes: list[int]) -> None:
    """Any pairs (the constructor is handed sorted ones, but takes what it is given: reversed, overlapping, inside
    one another, first past last) and any indexes: the same spans, firsts and totals."""
    new, old = Intervals(spans), OldIntervals(spans)
    assert new.spans == old.spans
    assert new._firsts == old.firsts
    assert new.total() == old.total()
    new_of, old_of = Intervals.of(indexes), OldIntervals.of(indexes)
    assert new_of.spans == old_of.spans
    assert new_of._firsts == old_of.firsts
    assert Intervals.of(iter(indexes)).spans == old_of.spans  # a one-pass iterable too
