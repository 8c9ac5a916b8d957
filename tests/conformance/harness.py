"""Runs `controller-sync` and `tracking` scenarios through kjobs' public sync/tracking functions.

The pod control and status writer are recording fakes (as upstream's fake PodControl and status handler):
creations, deletions and finalizer patches are counted but do not change the seeded pods.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter, Histogram

from kjobs.api.defaults import default_job
from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV
from kjobs.api.timeutil import format_time, parse_duration, parse_time
from kjobs.api.types import Obj
from kjobs.job.backoff import BackoffRecord
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.config import SyncConfig
from kjobs.job.context import is_indexed
from kjobs.job.execute import SyncOutcome, TrackingOutcome, run_tracking, sync_job
from kjobs.job.intervals import Intervals
from kjobs.job.metrics import JobMetrics
from kjobs.job.sync import compute_failed_index_state, job_key, new_context
from kjobs.job.tracking import plan_tracking

_REL = re.compile(r"^@now(?:([+-])(\d+(?:\.\d+)?)s)?$")


def resolve_times(value: Any, now: float) -> Any:
    """Replace `@now` / `@now-Ns` markers by timestamps relative to the scenario clock (`@now+Ns` too); any other
    string starting with `@now` is a form the harness does not know and fails rather than being kept as text."""
    if isinstance(value, str):
        if not value.startswith("@now"):
            return value
        m = _REL.match(value)
        if not m:
            raise AssertionError(f"unknown timestamp form {value!r} (known: @now, @now-Ns, @now+Ns)")
        offset = float(m.group(2) or 0)
        return format_time(now - offset if m.group(1) == "-" else now + offset)
    if isinstance(value, list):
        return [resolve_times(v, now) for v in value]
    if isinstance(value, dict):
        return {k: resolve_times(v, now) for k, v in value.items()}
    return value


@dataclass
class RecordingPodControl:
    """Counts pod writes; can be told to fail finalizer patches."""

    patch_error: bool = False
    inline: bool = False  # batches go through asyncio.gather, as over a network
    created: list[Obj] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    finalizer_patches: int = 0

    async def create_pod(self, namespace: str, pod: Obj) -> Obj:
        created = dict(
            pod, metadata=dict(pod["metadata"], name=f"{pod['metadata']['generateName']}{len(self.created)}")
        )
        self.created.append(created)
        return created

    async def delete_pod(self, namespace: str, name: str) -> None:
        self.deleted.append(name)

    async def remove_tracking_finalizer(self, namespace: str, name: str) -> None:
        self.finalizer_patches += 1
        if self.patch_error:
            raise ApiError(500, "InternalError", "injected pod patch error")


@dataclass
class RecordingStatusWriter:
    """Captures status writes; can be told to fail them."""

    error: bool = False
    writes: list[Obj] = field(default_factory=list)

    async def update_job_status(self, job: Obj, status: Obj) -> Obj:
        # A write that fails is still a write the controller made (upstream's status handler records, then errs).
        self.writes.append(status)
        if self.error:
            raise ApiError(500, "InternalError", "injected status update error")
        return dict(job, status=status)


@dataclass
class RecordingEvents:
    """Collects Events as (type, reason, message)."""

    items: list[tuple[str, str, str]] = field(default_factory=list)

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.items.append((type_, reason, message))


class UnitScenario:
    """State of one unit-style scenario while its steps run."""

    def __init__(self, case: dict[str, Any]) -> None:
        env = case["env"]
        self.now = parse_time(env["now"]) if env.get("now") else parse_time("2025-01-01T00:00:00Z")
        self.config = SyncConfig(
            pod_failure_backoff=parse_duration(env.get("podFailureBackoff", "10s")),
            max_pod_failure_backoff=parse_duration(env.get("maxPodFailureBackoff", "10m")),
            max_uncounted_pods=int(env.get("maxUncountedPods", 500)),
            max_pod_create_delete_per_sync=int(env.get("maxPodCreateDeletePerSync", 500)),
        )
        job = resolve_times(case["job"], self.now)
        # `applyDefaults: true` means "as created through the API"; the unit kinds use `false` (job as given)
        self.job: Obj = default_job(job) if case.get("applyDefaults") else job
        self.job.setdefault("metadata", {}).setdefault("namespace", "default")
        self.key = job_key(self.job)
        self.pods: list[Obj] = []
        self.book = BookkeepingStore()
        self.metrics = JobMetrics()
        self.pod_control = RecordingPodControl()
        self.status_writer = RecordingStatusWriter()
        self.events = RecordingEvents()
        self.status: Obj = dict(self.job.get("status") or {})
        self.last_sync: SyncOutcome | None = None
        self.last_tracking: TrackingOutcome | None = None
        self.metric_baseline: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def seed_pods(self, pods: list[Obj]) -> None:
        meta = self.job["metadata"]
        selector = ((self.job.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        for raw in pods:
            pod = resolve_times(raw, self.now)
            pmeta = pod.setdefault("metadata", {})
            pmeta.setdefault("namespace", meta["namespace"])
            pmeta.setdefault("uid", pmeta.get("name"))
            pmeta["labels"] = {**selector, **(pmeta.get("labels") or {})}
            pmeta.setdefault(
                "ownerReferences",
                [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": meta.get("name"),
                        "uid": meta.get("uid", ""),
                        "controller": True,
                    }
                ],
            )
            pod.setdefault("status", {})
            self.pods.append(pod)

    def _begin_action(self) -> None:
        """`expectActions`, `expectStatusUpdates` and a tracking `expectMetric` are about the step just run."""
        self.pod_control.created.clear()
        self.pod_control.deleted.clear()
        self.pod_control.finalizer_patches = 0
        self.status_writer.writes.clear()
        self.metric_baseline = metric_samples(self.metrics)

    def sync(self) -> None:
        self._begin_action()
        self.last_sync = asyncio.run(
            sync_job(
                self.job,
                self.pods,
                now=self.now,
                book=self.book,
                config=self.config,
                pod_control=self.pod_control,
                status_writer=self.status_writer,
                events=self.events,
                metrics=self.metrics,
            )
        )
        if self.status_writer.writes:
            self.status = self.status_writer.writes[-1]

    def track(self, step: dict[str, Any]) -> None:
        self._begin_action()
        inject = step.get("inject") or {}
        self.pod_control.patch_error = bool(inject.get("podPatchError"))
        self.status_writer.error = bool(inject.get("statusUpdateError"))
        ctx = new_context(
            self.job, self.pods, now=self.now, expected_rm_finalizers=frozenset(step.get("expectedRmFinalizers") or ())
        )
        finished = step.get("finishedCondition")
        ctx.finished_condition = resolve_times(finished, self.now) if finished else None
        if is_indexed(self.job):
            # As TestTrackJobStatusAndRemoveFinalizers builds its context: the succeeded indexes are the stored
            # `completedIndexes` alone (syncJob would add every succeeded pod's index first) and there is no
            # previous set, so the step itself records each newly succeeded index, up to `maxUncountedPods`.
            total = int((self.job.get("spec") or {}).get("completions") or 0)
            ctx.prev_succeeded_indexes = Intervals()
            ctx.succeeded_indexes = Intervals.parse((self.job.get("status") or {}).get("completedIndexes"), total)
            compute_failed_index_state(ctx)
        plan = plan_tracking(
            ctx, needs_flush=bool(step.get("needsFlush")), max_uncounted=self.config.max_uncounted_pods
        )
        self.last_tracking = asyncio.run(
            run_tracking(
                self.job,
                plan,
                key=self.key,
                book=self.book,
                pod_control=self.pod_control,
                status_writer=self.status_writer,
                events=self.events,
                metrics=self.metrics,
            )
        )
        if not self.status_writer.error and self.status_writer.writes:
            self.status = self.status_writer.writes[-1]
        if inject.get("expectError"):
            assert self.last_tracking.errors, "the injected failure must surface as a sync error"
        else:
            assert not self.last_tracking.errors, self.last_tracking.errors


def seed_backoff(sc: UnitScenario, step: dict[str, Any]) -> None:
    last = step.get("lastFailureTime")
    sc.book.backoff[sc.key] = BackoffRecord(
        int(step["failuresAfterLastSuccess"]), parse_time(resolve_times(last, sc.now)) if last else None
    )


def check_created_indexes(sc: UnitScenario, expected: list[int]) -> None:
    created = sc.pod_control.created
    indexes = sorted(int(p["metadata"]["annotations"][JOB_COMPLETION_INDEX_ANNOTATION]) for p in created)
    assert indexes == sorted(expected)
    name = sc.job["metadata"]["name"]
    for pod in created:
        ix = pod["metadata"]["annotations"][JOB_COMPLETION_INDEX_ANNOTATION]
        assert pod["spec"]["hostname"] == f"{name}-{ix}"
        assert pod["metadata"]["generateName"] == f"{name}-{ix}-"
        assert pod["metadata"]["labels"][JOB_COMPLETION_INDEX_ANNOTATION] == ix
        for container in pod["spec"]["containers"]:
            assert any(e["name"] == JOB_COMPLETION_INDEX_ENV for e in container.get("env") or ())


def normalise_status(status: Obj) -> Obj:
    """Drop zero/empty values so absent and zero compare equal; conditions reduced to compared keys."""
    out: Obj = {}
    for key, value in (status or {}).items():
        if key == "uncountedTerminatedPods":
            value = {k: v for k, v in (value or {}).items() if v}
            if not value:
                continue
        if key == "conditions":
            value = [{k: c.get(k) for k in ("type", "status", "reason", "message")} for c in value or ()]
            if not value:
                continue
        if value in (None, 0, "", [], {}) and key not in ("failedIndexes",):
            continue
        if value is None:
            continue
        out[key] = value
    return out


def compare_conditions(actual: list[Obj] | None, expected: list[Obj]) -> None:
    got = list(actual or ())
    assert len(got) == len(expected), f"conditions {got} != {expected}"
    for g, e in zip(got, expected, strict=True):
        for k in ("type", "status", "reason", "message"):
            if k in e:
                assert g.get(k) == e[k], f"condition {k}: {g} != {e}"


def expect_job(sc: UnitScenario, step: dict[str, Any]) -> None:
    actual = normalise_status(sc.status)
    expected = resolve_times(step.get("status") or {}, sc.now)
    for key, value in expected.items():
        if key == "conditions":
            compare_conditions(sc.status.get("conditions"), value)
        elif key == "uncountedTerminatedPods":
            assert actual.get(key, {}) == {k: v for k, v in (value or {}).items() if v}, key
        elif value is None:
            assert sc.status.get(key) is None, f"{key}: {sc.status.get(key)!r} should be absent"
        elif value in (0, "") and key not in ("failedIndexes",):
            assert not sc.status.get(key), f"{key}: {sc.status.get(key)!r} != {value!r}"
        else:
            assert sc.status.get(key) == value, f"{key}: {sc.status.get(key)!r} != {value!r}"
    check_status_extras(sc.status, step)


def check_status_extras(status: Obj, step: dict[str, Any]) -> None:
    """The `expectJob` keys beside `status` (README §3.1), shared by the unit and the integration runners:
    `exact`, `startTimeSet`, `hasConditions`, `conditionStatus`."""
    if step.get("exact"):
        ignored = {"startTime", "completionTime", "ready"}
        actual = normalise_status(status)
        extra = {k for k in actual if k not in (step.get("status") or {}) and k not in ignored}
        assert not extra, f"unexpected status fields {extra}: {actual}"
    if "startTimeSet" in step:
        assert bool(status.get("startTime")) == step["startTimeSet"], f"startTime {status.get('startTime')!r}"
    for cond in step.get("hasConditions") or ():
        assert any(
            c.get("type") == cond["type"] and c.get("status") == cond["status"] for c in status.get("conditions") or ()
        ), f"no condition {cond}: {status.get('conditions')}"
    if "conditionStatus" in step:
        cs = step["conditionStatus"]
        found = next((c for c in status.get("conditions") or () if c.get("type") == cs["type"]), None)
        got = None if found is None else found.get("status")
        assert got == cs["status"], f"condition {cs['type']} status {got!r}, want {cs['status']!r}"


def expect_event(events: RecordingEvents, step: dict[str, Any]) -> None:
    """An Event with the reason was emitted about the Job (the unit controller reports as job-controller)."""
    reasons = [reason for _, reason, _ in events.items]
    assert step["reason"] in reasons, f"no event {step['reason']!r}: {reasons}"


def expect_status_updates(sc: UnitScenario, updates: list[Obj]) -> None:
    writes = sc.status_writer.writes
    assert len(writes) == len(updates), f"{len(writes)} writes: {writes}"
    for got, want in zip(writes, updates, strict=True):
        want = resolve_times(want, sc.now)
        got_n, want_n = normalise_status(got), normalise_status(want)
        assert got_n == want_n, f"{got_n} != {want_n}"


def metric_samples(metrics: JobMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the registry, keyed by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): float(sample.value)
        for family in metrics.registry.collect()
        for sample in family.samples
    }


def check_metric_known(metrics: JobMetrics, step: dict[str, Any]) -> str:
    """The exposition name of `step["name"]` (a counter may be named with or without `_total`); fails when kjobs has
    no such metric or the labels are not exactly its label names, since an unknown series would read as 0 and a
    step expecting 0 would pass without checking anything."""
    families = {
        collector._name: collector  # type: ignore[attr-defined]
        for collector in vars(metrics).values()
        if isinstance(collector, (Counter, Histogram))
    }
    name = step["name"]
    base = name.removesuffix("_total")
    collector = families.get(base) or families.get(name)
    assert collector is not None, f"unknown metric {name!r} (known: {sorted(families)})"
    label_names = set(collector._labelnames)  # type: ignore[attr-defined]
    for item in step["values"]:
        assert set(item["labels"]) == label_names, f"{name}: labels {sorted(item['labels'])} != {sorted(label_names)}"
    return f"{base}_total" if isinstance(collector, Counter) else name


def expect_metric(sc: UnitScenario, step: dict[str, Any]) -> None:
    """Counter values; for a tracking step, the change the step made (the corpus' "delta of the step")."""
    check_metric_known(sc.metrics, step)
    tracking = sc.last_tracking is not None
    for item in step["values"]:
        got = sc.metrics.value(step["name"], item["labels"])
        if tracking:
            labels = tuple(sorted(item["labels"].items()))
            got -= sc.metric_baseline.get(
                (step["name"], labels), sc.metric_baseline.get((f"{step['name']}_total", labels), 0.0)
            )
        assert got == item["value"], (step["name"], item, got)
