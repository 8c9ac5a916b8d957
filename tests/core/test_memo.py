"""`Memo`: bounded by starting over when full."""

from __future__ import annotations

from kjobs.memo import Memo


def test_a_full_memo_starts_over_and_keeps_the_newest() -> None:
    memo: Memo[str, int] = Memo(2)
    assert memo.put("a", 1) == 1 and memo.put("b", 2) == 2
    assert memo.get("a") == 1 and "b" in memo and len(memo) == 2
    assert memo.put("c", 3) == 3  # full: emptied first
    assert memo.get("a") is None and memo.get("b") is None and memo.get("c") == 3
    assert len(memo) == 1
