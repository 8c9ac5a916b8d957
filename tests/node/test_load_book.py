"""`LoadBook`: the node agent's admission load kept as pods come and go is the sum `load_of` would compute."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kjobs.node.admission import LoadBook, load_of

_REQUESTS = st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage"]), st.integers(0, 4000), max_size=3)
_STEPS = st.lists(st.tuples(st.booleans(), st.integers(0, 9), _REQUESTS), max_size=60)


@given(_STEPS, st.integers(0, 9))
def test_the_book_is_the_sum_of_the_pods_it_counts(steps: list[tuple[bool, int, dict[str, int]]], asked: int) -> None:
    book, counted = LoadBook(), {}
    for adding, number, requests in steps:
        uid = f"pod-{number}"
        if adding:
            book.add(uid, requests)
            counted.setdefault(uid, requests)  # a pod is counted once, with its first requests
        else:
            book.remove(uid)
            counted.pop(uid, None)
    load = book.without(f"pod-{asked}")
    expected = load_of(r for uid, r in counted.items() if uid != f"pod-{asked}")
    assert load.count == expected.count
    assert {k: v for k, v in load.used.items() if v} == {k: v for k, v in expected.used.items() if v}
