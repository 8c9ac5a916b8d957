"""The token bucket at epoch-second times: the moment it names for the next token does hold a token, so a
waiter on a virtual clock (which jumps exactly there) makes progress instead of waking again and again."""

from __future__ import annotations

import pytest

from kjobs.client.flowcontrol import TokenBucket


@pytest.mark.parametrize("qps", [0.1, 1 / 3, 10.0, 50.0, 1000.0])
def test_the_next_token_time_grants_a_token(qps: float) -> None:
    now = 1_767_225_600.123
    bucket = TokenBucket(qps, 1, now=now)
    for _ in range(200):
        assert bucket.try_accept(now)
        later = bucket.next_token_at(now)
        assert later is not None and later > now
        assert bucket.try_accept(later), (qps, later)
        now = later
        assert bucket.next_token_at(now) is not None
        now = bucket.next_token_at(now) or now
