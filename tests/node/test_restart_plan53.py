"""Stop 53: `restart.plan` reads the pod's `restartPolicy` and `maxRestartTimes` inline (not through
`restart_policy` and `restart_limit`) and a regular container's last attempt as running by `finished_at is None`
(not through the `Attempt.running` property); `PodRecord.any_running` too (docs/node53.md).

The plan is stop 49's `plain_plan` (tests/node/test_restart_plan_init.py, which calls the helpers) on what the API
could hold there and that test does not make: `restartPolicy` missing, null or empty, and `maxRestartTimes` a
bool, a float, a string or negative; `any_running` against the property on the same records."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node.observations import BackoffEntry, PodRecord
from kjobs.node.restart import plan
from tests.hypothesis_budget import examples
from tests.node.helpers import T0, attempt, make_pod
from tests.node.test_restart_plan_init import HISTORY, SPEC, plain_plan

_MISSING = object()


@settings(max_examples=examples(600), deadline=None)
@given(
    spec=SPEC,
    policy=st.sampled_from([_MISSING, None, "", "Always", "OnFailure", "Never"]),
    limit=st.sampled_from([_MISSING, None, True, False, 0, 1, 2, -1, 2.0, "2"]),
    history=HISTORY,
    backoff=st.dictionaries(st.sampled_from(["i1", "i2", "a", "b"]), st.floats(0, 40), max_size=2),
    later=st.floats(0, 200),
)
def test_plan_reads_the_spec_as_the_helpers_did(
    spec: tuple[Any, Any, str, int | None],
    policy: Any,
    limit: Any,
    history: dict[str, list[tuple[bool, int, float, float]]],
    backoff: dict[str, float],
    later: float,
) -> None:
    init, containers, _, _ = spec
    pod = make_pod(list(containers), init=list(init))
    if policy is _MISSING:
        del pod["spec"]["restartPolicy"]
    else:
        pod["spec"]["restartPolicy"] = policy
    if limit is not _MISSING:
        pod["spec"]["maxRestartTimes"] = limit
    record = PodRecord(pod=pod, admitted_at=T0)
    for name, runs in history.items():
        at = T0
        for number, (running, code, length, gap) in enumerate(runs):
            ends = not running or number < len(runs) - 1
            record.attempts.setdefault(name, []).append(
                attempt(name, number, start=at, end=at + length if ends else None, code=code if ends else None)
            )
            at += length + gap
    record.backoff = {name: BackoffEntry(duration=d, last_update=T0 + d) for name, d in backoff.items()}
    now = T0 + later
    assert plan(record, now) == plain_plan(record, now)
    assert record.any_running() is any(runs and runs[-1].running for runs in record.attempts.values())
