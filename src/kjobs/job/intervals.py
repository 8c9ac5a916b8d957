"""Ordered index intervals: the compressed form of `status.completedIndexes` / `status.failedIndexes`.

The string form is Kubernetes': sorted, comma separated, runs of three or more as `a-b`, a pair as `a,b`.
Parsing drops indexes at or above `completions` (so scaling an elastic Indexed Job down forgets them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import lru_cache

from kjobs.api.goints import go_atoi


class Intervals:
    """An immutable, sorted, non-overlapping, non-adjacent list of closed intervals of indexes."""

    __slots__ = ("_firsts", "_spans")

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        # Each sync makes several of these from the Job's whole lists: the span being extended is kept in locals
        # (not read back from the list and rebuilt at each extension) and the firsts are listed in the same loop.
        merged: list[tuple[int, int]] = []
        firsts: list[int] = []
        started = False
        cur_first = cur_last = 0
        for first, last in spans:
            if started and first <= cur_last + 1:
                if last > cur_last:
                    cur_last = last
            else:
                if started:
                    merged.append((cur_first, cur_last))
                    firsts.append(cur_first)
                cur_first, cur_last, started = first, last, True
        if started:
            merged.append((cur_first, cur_last))
            firsts.append(cur_first)
        self._spans = tuple(merged)
        self._firsts = firsts

    @classmethod
    def of(cls, indexes: Iterable[int]) -> Intervals:
        """Intervals covering exactly the given indexes."""
        ordered = sorted(set(indexes))
        # (i, i) pairs made in C, not by a generator; one list twice (no `strict=`: a keyword parses slowly here)
        return cls(zip(ordered, ordered))  # noqa: B905

    @classmethod
    def parse(cls, text: str | None, completions: int) -> Intervals:
        """Parse Kubernetes' interval string, ignoring corrupt parts and indexes >= completions.

        A sync parses its Job's `completedIndexes` and `failedIndexes`, and the metrics count both of the status
        written and of the one before (`count_indexes`): the same strings again and again. An `Intervals` never
        changes, so the last few strings parsed are kept with their result (docs/node53.md)."""
        if not text:
            return cls()
        if type(text) is not str:  # not what the API stores (it fails as it did, uncached)
            return _parse.__wrapped__(text, completions)
        return _parse(text, completions)

    def merge(self, other: Intervals) -> Intervals:
        """The union of both interval lists."""
        if not other._spans:  # nothing to add: this one, as the sort and merge below would make it again
            return self
        return Intervals(_sorted_spans([*self._spans, *other._spans]))

    def with_indexes(self, indexes: Iterable[int]) -> Intervals:
        """The union with individual indexes."""
        return self.merge(Intervals.of(indexes))

    def total(self) -> int:
        """How many indexes the intervals hold."""
        count = 0  # a loop, not `sum` over a generator (a call on this Python)
        for first, last in self._spans:
            count += last - first + 1
        return count

    def has(self, index: int) -> bool:
        """Whether `index` is covered."""
        pos = bisect_left(self._firsts, index + 1) - 1
        return pos >= 0 and self._spans[pos][1] >= index

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The (first, last) pairs, ascending."""
        return self._spans

    def __iter__(self) -> Iterator[int]:
        for first, last in self._spans:
            yield from range(first, last + 1)

    def __len__(self) -> int:
        return len(self._spans)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Intervals) and self._spans == other._spans

    def __hash__(self) -> int:
        return hash(self._spans)

    def __str__(self) -> str:
        parts = []
        for first, last in self._spans:
            if last == first:
                parts.append(str(first))
            elif last == first + 1:
                parts.append(f"{first},{last}")
            else:
                parts.append(f"{first}-{last}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"Intervals({str(self)!r})"


def _sorted_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return sorted(spans)


@lru_cache(maxsize=64)
def _parse(text: str, completions: int) -> Intervals:
    """`Intervals.parse` of a non-empty string (kept for the strings parsed last: a few a Job)."""
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
    return Intervals(_sorted_spans(spans))


def count_indexes(text: str | None, completions: int) -> int:
    """Number of indexes in an interval string that are below `completions` (absent string: 0)."""
    return 0 if text is None else Intervals.parse(text, completions).total()
