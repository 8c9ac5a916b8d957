"""Restart decisions and crash-loop back-off (kubelet computePodActions / doBackOff)."""

from __future__ import annotations

import pytest

from kjobs.node.observations import BackoffEntry, KillRequest
from kjobs.node.restart import next_backoff, plan, restart_due, should_restart
from tests.node.helpers import T0, attempt, make_pod, record

INIT = [{"name": "init-a", "image": "x"}, {"name": "init-b", "image": "x"}]
TWO = [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]


@pytest.mark.parametrize(
    ("policy", "code", "expected"),
    [
        pytest.param("Always", 0, True, id="always-success"),
        pytest.param("Always", 3, True, id="always-failure"),
        pytest.param("OnFailure", 0, False, id="onfailure-success"),
        pytest.param("OnFailure", 1, True, id="onfailure-failure"),
        pytest.param("Never", 1, False, id="never-failure"),
        pytest.param("Never", 0, False, id="never-success"),
    ],
)
def test_should_restart(policy: str, code: int, expected: bool) -> None:
    assert should_restart(policy, code) is expected


@pytest.mark.parametrize(
    ("pod", "attempts", "start", "done"),
    [
        pytest.param(make_pod(init=INIT), [], ("init-a",), False, id="first-init-first"),
        pytest.param(make_pod(init=INIT), [attempt("init-a")], (), False, id="init-running-blocks"),
        pytest.param(
            make_pod(init=INIT), [attempt("init-a", end=T0 + 1, code=0)], ("init-b",), False, id="next-init-in-order"
        ),
        pytest.param(
            make_pod(init=INIT),
            [attempt("init-a", end=T0 + 1, code=0), attempt("init-b", end=T0 + 2, code=0)],
            ("main",),
            False,
            id="containers-after-all-inits",
        ),
        pytest.param(
            make_pod(init=INIT, policy="Never"),
            [attempt("init-a", end=T0 + 1, code=2)],
            (),
            True,
            id="init-fails-never",
        ),
        pytest.param(
            make_pod(init=INIT, policy="OnFailure"),
            [attempt("init-a", end=T0 + 1, code=2)],
            ("init-a",),
            False,
            id="init-restarts-onfailure",
        ),
        pytest.param(
            make_pod(init=INIT, policy="Always"),
            [attempt("init-a", end=T0 + 1, code=2)],
            ("init-a",),
            False,
            id="init-restarts-always",
        ),
        pytest.param(make_pod(TWO), [], ("a", "b"), False, id="containers-start-together"),
        pytest.param(make_pod(TWO), [attempt("a", end=T0, code=0), attempt("b")], (), False, id="one-still-running"),
        pytest.param(
            make_pod(TWO), [attempt("a", end=T0, code=0), attempt("b", end=T0, code=1)], (), True, id="never-all-done"
        ),
        pytest.param(
            make_pod(TWO, policy="OnFailure"),
            [attempt("a", end=T0, code=0), attempt("b", end=T0, code=1)],
            ("b",),
            False,
            id="onfailure-restarts-failed-only",
        ),
        pytest.param(
            make_pod(TWO, policy="OnFailure"),
            [attempt("a", end=T0, code=0), attempt("b", end=T0, code=0)],
            (),
            True,
            id="onfailure-all-succeeded",
        ),
        pytest.param(
            make_pod(policy="Always"), [attempt(end=T0, code=0)], ("main",), False, id="always-restarts-success"
        ),
    ],
)
def test_plan(pod: dict, attempts: list, start: tuple[str, ...], done: bool) -> None:
    decisions = plan(record(pod, *attempts), T0 + 5)
    assert decisions.start == start
    assert decisions.done is done


def test_config_error_keeps_pod_pending_without_restarting() -> None:
    rec = record(make_pod())
    rec.config_errors["main"] = ("CreateContainerConfigError", 'configmap "x" not found')
    decisions = plan(rec, T0)
    assert decisions.start == ()
    assert decisions.done is False


def test_a_restart_whose_configuration_failed_waits_for_the_next_try() -> None:
    rec = record(make_pod(policy="OnFailure"), attempt(end=T0, code=1))
    assert plan(rec, T0 + 1).start == ("main",)
    rec.config_errors["main"] = ("CreateContainerConfigError", 'configmap "x" not found')
    decisions = plan(rec, T0 + 1)
    assert (decisions.start, decisions.wake_at, decisions.done) == ((), None, False)


def test_kill_starts_nothing_and_is_done_when_nothing_runs() -> None:
    rec = record(make_pod(policy="Always"), attempt(end=T0, code=1))
    rec.kill = KillRequest(requested_at=T0, grace_seconds=30)
    assert plan(rec, T0 + 1).start == ()
    assert plan(rec, T0 + 1).done is True
    running = record(make_pod(), attempt())
    running.kill = KillRequest(requested_at=T0, grace_seconds=30)
    assert plan(running, T0 + 1).done is False


def test_back_off_delays_restart_until_due() -> None:
    rec = record(make_pod(policy="OnFailure"), attempt(number=0, end=T0, code=1), attempt(number=1, end=T0 + 1, code=1))
    rec.backoff["main"] = BackoffEntry(duration=10, last_update=T0)
    early = plan(rec, T0 + 5)
    assert early.start == ()
    assert early.backing_off == {"main": T0 + 11}
    assert early.wake_at == T0 + 11
    assert plan(rec, T0 + 11).start == ("main",)


def test_back_off_sequence_matches_kubelet() -> None:
    """First restart immediate, then 10s, 20s, 40s, … capped at 5 min."""
    entry = None
    delays = []
    now = T0
    for _ in range(8):
        due = restart_due(entry, now, cap=300)
        delays.append(due - now)
        entry = next_backoff(entry, now, due, base=10, cap=300)
        now = due + 1  # the attempt runs one second, then fails again
    assert delays == [0, 10, 20, 40, 80, 160, 300, 300]


def test_back_off_forgotten_after_long_run() -> None:
    entry = BackoffEntry(duration=300, last_update=T0)
    assert restart_due(entry, T0 + 601, cap=300) == T0 + 601
    assert next_backoff(entry, T0 + 601, T0 + 601, base=10, cap=300).duration == 10
    assert restart_due(entry, T0 + 599, cap=300) == T0 + 899
