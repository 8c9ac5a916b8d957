"""Stop 49: `ContainerModel.draw` takes what depends on the model alone (the run-time distribution, the exit codes'
total weight, the SIGTERM exit code) from `_fixed`, computed once a model, instead of once an attempt.

The form it replaced is kept here as it was. Hypothesis makes models (every run-time distribution, weights that
do not sum to 1, zero weights, OOM probabilities, both `sigterm` values) and seeds; both forms draw from
generators seeded alike, and must give the same outcomes and leave the generators in the same state: a seed's
trace is the same draw for draw.
"""

from __future__ import annotations

import pickle
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node.sim_runtime import Outcome
from kjobs.simulate.model import DISTRIBUTIONS, SIGTERM_EXIT, SIGTERM_IGNORE, ContainerModel, ExitCode, RunTime


def plain_draw(model: ContainerModel, rng: random.Random) -> Outcome:
    run = model.run_time if isinstance(model.run_time, RunTime) else RunTime("constant", model.run_time)
    duration = run.draw(rng)
    killed = rng.random() < model.oom if model.oom > 0 else False
    total = sum(e.weight for e in model.exit_codes)
    pick = rng.random() * total
    code = model.exit_codes[-1].code
    for entry in model.exit_codes:
        if pick < entry.weight:
            code = entry.code
            break
        pick -= entry.weight
    term = None if model.sigterm == SIGTERM_IGNORE else 143
    if killed:
        return Outcome(duration=duration, exit_code=137, oom=True, term_exit_code=term)
    return Outcome(duration=duration, exit_code=code, term_exit_code=term)


SECONDS = st.floats(0.0, 100.0, allow_nan=False)
RUN_TIME = st.one_of(
    SECONDS,
    st.builds(RunTime, st.sampled_from(DISTRIBUTIONS), SECONDS, SECONDS),
)
WEIGHT = st.one_of(st.sampled_from([0.0, 0.05, 0.95, 1.0, 0.1, 0.2, 0.7]), st.floats(0.0, 5.0, allow_nan=False))
MODEL = st.builds(
    ContainerModel,
    run_time=RUN_TIME,
    exit_codes=st.lists(st.builds(ExitCode, st.integers(0, 255), WEIGHT), min_size=1, max_size=5).map(tuple),
    oom=st.sampled_from([0.0, 0.01, 0.5, 1.0]),
    sigterm=st.sampled_from([SIGTERM_IGNORE, SIGTERM_EXIT]),
)


@settings(max_examples=400, deadline=None)
@given(model=MODEL, seed=st.text(max_size=12), draws=st.integers(1, 5))
def test_draws_as_before(model: ContainerModel, seed: str, draws: int) -> None:
    new, old = random.Random(seed), random.Random(seed)
    for _ in range(draws):  # the model's fixed part, computed at the first draw, serves the later ones
        assert model.draw(new) == plain_draw(model, old)
    assert new.getstate() == old.getstate()
    # the total weight is the very float the plain form sums (an exit code at the boundary of a pick depends on
    # its last bit, which the outcomes above would almost never show)
    assert model._fixed[1] == sum(e.weight for e in model.exit_codes)


def test_the_fixed_part_is_no_field() -> None:
    """Kept beside the fields: equality, hashing and pickling (`--workers`) see the model as before."""
    model = ContainerModel(run_time=2.0, exit_codes=(ExitCode(0, 0.9), ExitCode(1, 0.1)))
    fresh = ContainerModel(run_time=2.0, exit_codes=(ExitCode(0, 0.9), ExitCode(1, 0.1)))
    model.draw(random.Random(1))
    assert model == fresh and hash(model) == hash(fresh)
    assert pickle.loads(pickle.dumps(model)) == fresh
    assert "_fixed" not in repr(model)
