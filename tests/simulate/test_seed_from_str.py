"""Stop 52: `Model.outcome` seeds its generator with `seed_from_str`, `random.Random.seed(key)` without the Python
wrapper. The generator must come out in the very state `random.Random(key)` starts in — every later draw depends on
it — for any key (non-ASCII ones included), and must forget a spare `gauss` draw as `seed` does."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kjobs.simulate.model import seed_from_str


@given(key=st.text(max_size=40), before=st.text(max_size=8))
def test_same_state_as_random_seeded_with_the_key(key: str, before: str) -> None:
    rng = random.Random(before)
    rng.gauss(0.0, 1.0)  # leaves a spare normal draw, which seeding must drop
    seed_from_str(rng, key)
    fresh = random.Random(key)
    assert rng.getstate() == fresh.getstate()
    assert [rng.random(), rng.gauss(0.0, 1.0), rng.getrandbits(64)] == [
        fresh.random(),
        fresh.gauss(0.0, 1.0),
        fresh.getrandbits(64),
    ]


def test_the_keys_a_simulation_makes() -> None:
    for key in ("0/0/0/main/0", "7/pod/3/worker/12", "123456789/99999/2/a-b.c/0"):
        rng = random.Random()
        seed_from_str(rng, key)
        assert rng.getstate() == random.Random(key).getstate()
