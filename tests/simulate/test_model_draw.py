"""Stop 49: `Model.outcome` seeds one generator afresh for each attempt instead of making one, and
`ContainerModel.draw` takes what depends on the model alone (the run-time distribution, the exit codes'
total weight, the SIGTERM exit code) from `_fixed`, computed once a model, instead of once an attempt.

The form it replaced is kept here as it was. Hypothesis makes models (every run-time distribution, weights that
do not sum to 1, zero weights, OOM probabilities, both `sigterm` values) and seeds; both forms draw from
generators seeded alike, and must give the same outcomes and leave the generators in the same state: a seed's
trace is the same draw for draw.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import CONTROLLER_UID_LABEL, JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome
from kjobs.simulate.model import (
    DISTRIBUTIONS,
    SIGTERM_EXIT,
    SIGTERM_IGNORE,
    AttemptSlots,
    ContainerModel,
    ExitCode,
    Model,
    Override,
    RunTime,
)
from kjobs.testing.virtual import command_outcome
from tests.hypothesis_budget import examples


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


@settings(max_examples=examples(400), deadline=None)
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


def plain_outcome(model: Model, seed: int, slots: AttemptSlots) -> Callable[[Obj, Obj, int], Outcome]:
    runs: dict[tuple[int | None, str], int] = {}

    def decide(pod: Obj, container: Obj, attempt: int) -> Outcome:
        slot = slots.slot(pod)
        if slot is None:
            return command_outcome(pod, container, attempt)
        index, pod_attempt = slot
        name = str(container.get("name"))
        key = f"{seed}/{index if index is not None else 'pod'}/{pod_attempt}/{name}/{attempt}"
        rng = random.Random(key)
        chosen = model.container_model(name, index)
        if chosen.attempts:
            run = runs.get((index, name), 0)
            runs[(index, name)] = run + 1
            chosen = chosen.for_run(run)
        return chosen.draw(rng)

    return decide


def job_pod(uid: str, index: int | None) -> Obj:
    annotations = {} if index is None else {JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
    labels = {CONTROLLER_UID_LABEL: "job-uid"}
    return {"metadata": {"uid": uid, "labels": labels, "annotations": annotations}, "spec": {}}


@settings(max_examples=examples(200), deadline=None)
@given(
    model=MODEL,
    spread=MODEL,
    seed=st.integers(0, 2**40),
    calls=st.lists(
        st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 3)), st.sampled_from(["a", "b"])),
        max_size=12,
    ),
)
def test_one_generator_seeded_each_attempt_draws_as_a_new_one(
    model: ContainerModel, spread: ContainerModel, seed: int, calls: list[tuple[int, int | None, str]]
) -> None:
    """`Model.outcome` seeds one generator for every attempt: the same outcomes, in any order of pods,
    containers and attempts, with a normal run time (whose `gauss` keeps a spare draw) among them."""
    whole = Model(
        containers=model,
        overrides=(Override("b", None, ContainerModel(run_time=RunTime("normal", 5.0, 2.0), attempts=(spread,))),),
    )
    new = whole.outcome(seed, AttemptSlots())
    old = plain_outcome(whole, seed, AttemptSlots())
    for n, (pod, index, name) in enumerate(calls):
        uid = f"pod-{pod}-{index}"
        assert new(job_pod(uid, index), {"name": name}, n % 3) == old(job_pod(uid, index), {"name": name}, n % 3)
