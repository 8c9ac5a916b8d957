"""Stop 54: `_remove_finalizers` reads each pod's uid once for the expectations and the result, and
`_record_decisions` returns at once when no failed pod was decided and reads a pod's uid once (docs/jobctl54.md).
Stop 53's forms are kept here; on hypothesis batches of pods (duplicated uids among them) whose removal succeeds,
finds the pod gone or fails, with decisions for some of them, the two leave the same expectations, return the same
removed uids and errors, and record the same events and metric samples, in the same order."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.backoff import BackoffRecord
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.decisions import FailureDecision
from kjobs.job.execute import EventSink, PodControl, _batch, _record_decisions, _remove_finalizers
from kjobs.job.metrics import JobMetrics
from kjobs.job.tracking import TrackingPlan
from tests.hypothesis_budget import examples


async def old_remove_finalizers(
    pods: list[Obj], key: str, book: BookkeepingStore, pod_control: PodControl
) -> tuple[set[str], list[Exception]]:
    """Patch the finalizer out of each pod; a pod already gone counts as done."""
    if not pods:
        return set(), []
    book.expect_finalizers_removed(key, [P.uid(p) for p in pods])

    async def one(pod: Obj) -> Exception | None:
        try:
            await pod_control.remove_tracking_finalizer(
                str(pod["metadata"].get("namespace") or ""), pod["metadata"]["name"]
            )
        except ApiError as exc:
            book.finalizer_removal_observed(key, P.uid(pod))
            return None if exc.code == 404 else exc
        return None

    results = await _batch([one(p) for p in pods], pod_control.inline)
    removed = {P.uid(p) for p, err in zip(pods, results, strict=True) if err is None}
    return removed, [err for err in results if err is not None]


def old_record_decisions(
    job: Obj, tracking: TrackingPlan, removed: set[str], events: EventSink, metrics: JobMetrics
) -> None:
    """One Event and one `kjobs_job_pod_failure_policy_decisions_total` sample per failed pod whose finalizer just
    went: a pod loses its finalizer once, so no pod is reported twice, even by a restarted controller (which
    never sees the finalizer again). See `kjobs.job.decisions`."""
    for pod in tracking.finalizer_removals:
        decision = tracking.decisions.get(P.uid(pod))
        if decision is None or P.uid(pod) not in removed:
            continue
        events.event(job, decision.event_type, decision.reason, decision.message())
        metrics.policy_decisions.labels(decision.action, decision.rule_label).inc()


class _Control:
    """Pod control whose finalizer removals succeed, find the pod gone (404) or fail (500), by name."""

    def __init__(self, outcomes: dict[str, int], inline: bool) -> None:
        self.outcomes, self.inline, self.calls = outcomes, inline, []

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        self.calls.append((namespace, name))
        code = self.outcomes.get(name, 200)
        if code != 200:
            raise ApiError(code, "NotFound" if code == 404 else "InternalError", f"pod {name}")


class _Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[Any, ...]] = []

    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        self.recorded.append((obj["metadata"]["name"], event_type, reason, message))


_pod = st.tuples(st.integers(0, 3), st.sampled_from([200, 404, 500]), st.sampled_from([None, "Ignore", "Count"]))


def _decision(uid: str, action: str) -> FailureDecision:
    return FailureDecision(uid, 1, "exit code 1", action, 0, None, "not counted" if action == "Ignore" else "counted")


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_pod, max_size=6), st.booleans())
def test_removals_and_decisions_are_stop_53s(drawn: list[tuple[int, int, str | None]], inline: bool) -> None:
    pods = [{"metadata": {"name": f"p{n}", "namespace": "ns", "uid": f"u{n}"}} for n, _, _ in drawn]
    outcomes = {f"p{n}": code for n, code, _ in drawn}
    decisions = {f"u{n}": _decision(f"u{n}", action) for n, _, action in drawn if action is not None}
    job: Obj = {"metadata": {"name": "j", "namespace": "ns", "uid": "j"}}

    async def run(remove: Any, record: Any) -> tuple[Any, ...]:
        book, control, events, metrics = BookkeepingStore(), _Control(outcomes, inline), _Events(), JobMetrics()
        removed, errors = await remove(pods, "ns/j", book, control)
        tracking = TrackingPlan(None, BackoffRecord(), pods, decisions=dict(decisions))
        record(job, tracking, removed, events, metrics)
        samples = [(s.name, s.labels, s.value) for m in metrics.registry.collect() for s in m.samples
                   if not s.name.endswith("_created")]  # fmt: skip
        return removed, [str(e) for e in errors], book.finalizers, control.calls, events.recorded, samples

    assert asyncio.run(run(_remove_finalizers, _record_decisions)) == asyncio.run(
        run(old_remove_finalizers, old_record_decisions)
    )
