"""Runs `integration` scenarios: a live Job controller against an API (in-process or over HTTP).

Each scenario gets a fresh API and its own metrics; the Job is created through the API (defaulting,
validation, generated selector); steps act on pods through the API as upstream's integration tests do (there is
no kubelet: the test sets pod phases itself) and expectations poll until they hold or a deadline passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from kjobs.api.errors import ApiError
from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import format_time, parse_duration, parse_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.resources import EVENTS, JOBS, PODS
from kjobs.clock import RealClock
from kjobs.controllers.job import JobController, JobControllerSettings
from kjobs.job.config import SyncConfig
from kjobs.job.metrics import JobMetrics
from kjobs.server.exposition import exposition
from tests.conformance.gates import FEATURES
from tests.conformance.harness import check_metric_known, check_status_extras, compare_conditions, resolve_times
from tests.conformance.schema import check_step

WAIT = 30.0
ClientFactory = Callable[[], contextlib.AbstractAsyncContextManager[Client]]


async def eventually(check: Callable[[], Awaitable[Any]], what: str, timeout: float | None = None) -> Any:
    """Poll `check` (which raises AssertionError until it holds) for up to `timeout` seconds (default `WAIT`, read
    at call time so a test expecting a timeout can shorten it)."""
    deadline = time.monotonic() + (WAIT if timeout is None else timeout)
    while True:
        try:
            return await check()
        except AssertionError as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {exc}") from None
        await asyncio.sleep(0.02)


def scrape(metrics: JobMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the Job controller's /metrics text, by name and sorted labels."""
    text = exposition([metrics.registry]).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def merge_patch(target: Any, patch: Any) -> Any:
    """`updateJob`'s merge: objects merge key by key (so `{"template": {"spec": {"nodeSelector": ...}}}` changes
    only the node selector, as upstream's `updateJob` mutators do), `null` removes a key, anything else replaces."""
    if not isinstance(patch, dict) or not isinstance(target, dict):
        return patch
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class IntegrationScenario:
    """One scenario's live state."""

    def __init__(self, case: dict[str, Any], client: Client) -> None:
        env = case["env"]
        self.case = case
        self.client = client
        self.clock = RealClock()
        self.backoff = parse_duration(env.get("podFailureBackoff", "10s"))
        self.settings = JobControllerSettings(
            sync=SyncConfig(
                pod_failure_backoff=self.backoff,
                max_pod_failure_backoff=parse_duration(env.get("maxPodFailureBackoff", "10m")),
                max_uncounted_pods=int(env.get("maxUncountedPods", 500)),
                max_pod_create_delete_per_sync=int(env.get("maxPodCreateDeletePerSync", 500)),
            ),
            # Kubernetes' SyncJobBatchPeriod is 1 s; 0.1 s (as docs/kubernetes-e2e.md runs `kjobs up`) changes only
            # when syncs happen, and still leaves each intermediate state to the 20 ms polls for 5 of them
            batch_period=0.1,
        )
        self.metrics = JobMetrics()
        self.controller: JobController | None = None
        self.job: Obj = {}
        self.seen: list[tuple[int, Obj]] = []
        """Every state of the Job a watch delivered, with its resourceVersion: an `expectJob` holds when any state
        written after the previous step ended matches, so that a state the controller keeps for one batch period
        (0.1 s) is not missed by polls that a loaded machine slows."""
        self.mark = 0
        """The Job's resourceVersion when the previous step ended."""
        self._recorder: asyncio.Task[None] | None = None
        self.aliases: dict[str, list[str]] = {}

    async def start_controller(self) -> None:
        self.controller = JobController(self.client, clock=self.clock, settings=self.settings, metrics=self.metrics)
        await self.controller.start()

    async def stop_controller(self) -> None:
        if self.controller is not None:
            await self.controller.stop()
            self.controller = None

    async def create_job(self) -> None:
        job = resolve_times(self.case["job"], time.time())
        ns = (job.get("metadata") or {}).get("namespace") or "default"
        self.job = await self.client.create(JOBS, ns, job)
        self._recorder = asyncio.create_task(self._record(self.job["metadata"]["resourceVersion"]))

    async def _record(self, since: str) -> None:
        """Append each state of the Job from `since` on to `seen`, re-watching from the last one seen."""
        name = self.job["metadata"]["name"]
        while True:
            try:
                async for event in self.client.watch(
                    JOBS, self.ns, resource_version=since, field_selector=f"metadata.name={name}"
                ):
                    if event.type in ("ADDED", "MODIFIED"):
                        since = event.object["metadata"]["resourceVersion"]
                        self.seen.append((int(since), event.object))
            except ApiError:
                return  # too old to resume (410): the polls alone decide, as before
            await asyncio.sleep(0.02)

    async def stop_recording(self) -> None:
        if self._recorder is not None:
            self._recorder.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._recorder
            self._recorder = None

    async def end_step(self) -> None:
        """Note the Job's resourceVersion as a step ends: only states written after it may satisfy the next."""
        if self.job:
            self.mark = int((await self.refresh())["metadata"]["resourceVersion"])

    @property
    def ns(self) -> str:
        return str(self.job["metadata"]["namespace"])

    async def refresh(self) -> Obj:
        self.job = await self.client.get(JOBS, self.ns, self.job["metadata"]["name"])
        return self.job

    async def job_pods(self) -> list[Obj]:
        pods, _ = await self.client.list(PODS, self.ns)
        uid = self.job["metadata"]["uid"]
        owned = [
            p
            for p in pods
            if any(r.get("uid") == uid and r.get("controller") for r in p["metadata"].get("ownerReferences") or ())
        ]
        return sorted(owned, key=lambda p: p["metadata"]["name"])

    async def select(self, sel: dict[str, Any]) -> list[Obj]:
        pods = await self.job_pods()
        if "alias" in sel and len(sel) == 1:
            names = self.aliases[sel["alias"]]
            return [p for p in pods if p["metadata"]["name"] in names]
        chosen = pods
        if sel.get("nonTerminal"):
            chosen = [p for p in chosen if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        if sel.get("terminating"):
            chosen = [p for p in chosen if p["metadata"].get("deletionTimestamp")]
        if "index" in sel:
            want = str(sel["index"])
            chosen = [
                p
                for p in chosen
                if (p["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION) == want
            ]
        if "ordinal" in sel:
            chosen = chosen[int(sel["ordinal"]) : int(sel["ordinal"]) + 1]
        count = sel.get("count", 1 if not sel.get("all") else "all")
        if count != "all":
            chosen = chosen[: int(count)]
        if "alias" in sel:
            self.aliases[sel["alias"]] = [p["metadata"]["name"] for p in chosen]
        return chosen

    async def set_pod_status(self, step: dict[str, Any]) -> None:
        """Set the status of the pods `select` picks. With `retryUntilSuccess`, as upstream's loop around
        `setJobPodsPhase`: a pod whose write failed (its update kept conflicting, or it is gone) is a transient
        failure, and the next attempt picks only as many pods as are still `remaining` (those already written are
        terminal now, so a `nonTerminal` selection of the first count could never be met again)."""
        sel = step["select"]
        want = sel.get("count", 1 if not sel.get("all") else "all")
        remaining: list[int | str] = [want]

        async def attempt() -> None:
            pods = await self.select(dict(sel, count=remaining[0]) if remaining[0] != "all" else sel)
            assert pods and (want == "all" or len(pods) >= int(remaining[0])), f"no pods match {sel}"
            for pod in pods:
                if step.get("retryUntilSuccess"):
                    try:
                        await self._update_pod_status(pod, step)
                    except ApiError as exc:
                        raise AssertionError(f"transient failure setting {pod['metadata']['name']}: {exc}") from None
                    if remaining[0] != "all":
                        remaining[0] = int(remaining[0]) - 1
                else:
                    await self._update_pod_status(pod, step)

        await eventually(attempt, f"pods {sel}")

    async def _update_pod_status(self, pod: Obj, step: dict[str, Any]) -> None:
        for _ in range(20):
            fresh = await self.client.get(PODS, self.ns, pod["metadata"]["name"])
            status = dict(fresh.get("status") or {})
            if "status" in step:
                status = dict(resolve_times(step["status"], time.time()))
            elif "phase" in step:
                status["phase"] = step["phase"]
                if step["phase"] in ("Failed", "Succeeded"):
                    status["containerStatuses"] = [
                        {
                            "name": "",
                            "image": "",
                            "imageID": "",
                            "ready": False,
                            "restartCount": 0,
                            "state": {"terminated": {"exitCode": 0, "finishedAt": format_time(time.time())}},
                        }
                    ]
            else:
                status["phase"] = step["phaseOnly"]
            fresh["status"] = status
            try:
                await self.client.update(PODS, self.ns, fresh, subresource="status")
                return
            except ApiError as exc:
                if exc.code != 409:
                    raise
        raise AssertionError("could not update pod status")

    async def delete_pods(self, step: dict[str, Any]) -> None:
        for pod in await self.select(step["select"]):
            await self.client.delete(
                PODS, self.ns, pod["metadata"]["name"], grace_period_seconds=step.get("gracePeriodSeconds")
            )

    async def update_job(self, spec: dict[str, Any]) -> None:
        for _ in range(20):
            job = await self.refresh()
            job["spec"] = merge_patch(job["spec"], spec)
            try:
                self.job = await self.client.update(JOBS, self.ns, job)
                return
            except ApiError as exc:
                if exc.code != 409:
                    raise
        raise AssertionError("could not update the job")

    async def expect_job(self, step: dict[str, Any]) -> None:
        def matches(status: Obj) -> None:
            for key, value in (step.get("status") or {}).items():
                got = status.get(key)
                if key == "conditions":
                    compare_conditions(got, value)  # {type, status, reason[, message]}, times ignored
                    continue
                if key == "uncountedTerminatedPods":
                    got = {k: v for k, v in (got or {}).items() if v}
                    value = {k: v for k, v in (value or {}).items() if v}
                if value in (0, None) and got in (0, None):
                    continue
                assert got == value, f"status.{key} = {got!r}, want {value!r} (status {status})"
            check_status_extras(status, step)

        async def check() -> None:
            try:
                matches((await self.refresh()).get("status") or {})
            except AssertionError:
                for revision, job in self.seen:
                    if revision > self.mark:
                        with contextlib.suppress(AssertionError):
                            matches(job.get("status") or {})
                            return
                raise

        await eventually(check, f"job {step}")

    async def expect_indexed_pods(self, step: dict[str, Any]) -> None:
        async def check() -> None:
            pods = await self.job_pods()
            active = {
                int((p["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION, -1))
                for p in pods
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")  # non-terminal
            }
            assert active == set(step["activeIndexes"]), f"active indexes {sorted(active)}"
            status = (await self.refresh()).get("status") or {}
            assert (status.get("completedIndexes") or "") == step["completedIndexes"]
            assert status.get("failedIndexes") == step["failedIndexes"]

        await eventually(check, f"indexed pods {step}")

    async def expect_pods(self, step: dict[str, Any]) -> None:
        async def check() -> None:
            sel = dict(step["select"])
            if "count" in step:
                sel["count"] = "all"
            pods = await self.select(sel)
            if "count" in step:
                assert len(pods) == step["count"], f"{len(pods)} pods"
            assert pods or "count" in step
            for pod in pods:
                annotations = pod["metadata"].get("annotations") or {}
                for key, value in (step.get("annotations") or {}).items():
                    assert annotations.get(key) == value, f"{pod['metadata']['name']} {key}={annotations.get(key)}"

        await eventually(check, f"pods {step}")

    async def expect_no_tracking_finalizers(self) -> None:
        async def check() -> None:
            for pod in await self.job_pods():
                assert JOB_TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or ()), pod["metadata"]["name"]

        await eventually(check, "no tracking finalizers")

    async def wait_finalizer_removed(self, sel: dict[str, Any]) -> None:
        names = [p["metadata"]["name"] for p in await self.select(sel)]

        async def check() -> None:
            for pod in await self.job_pods():
                if pod["metadata"]["name"] in names:
                    assert JOB_TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or ())

        await eventually(check, f"finalizer removed from {names}")

    async def expect_event(self, step: dict[str, Any]) -> None:
        async def check() -> None:
            events, _ = await self.client.list(EVENTS, self.ns)
            assert any(
                e.get("reason") == step["reason"]
                and (e.get("involvedObject") or {}).get("name") == self.job["metadata"]["name"]
                and (e.get("reportingComponent") or (e.get("source") or {}).get("component"))
                == step.get("reportingController", "job-controller")
                for e in events
            ), f"no event {step['reason']}"

        await eventually(check, f"event {step['reason']}")

    async def expect_metric(self, step: dict[str, Any]) -> None:
        """Read as a scrape reads it: the exposition text kjobs serves at /metrics, parsed by prometheus_client's
        parser; a series not written counts as 0, as upstream's `GetCounterMetricValue(vec.WithLabelValues(...))`."""

        name = check_metric_known(self.metrics, step)

        async def check() -> None:
            scraped = scrape(self.metrics)
            for item in step["values"]:
                got = scraped.get((name, tuple(sorted(item["labels"].items()))), 0.0)
                assert got == item["value"], f"{step['name']}{item['labels']} = {got}, want {item['value']}"

        await eventually(check, f"metric {step['name']}")

    async def expect_backoff_delays(self, step: dict[str, Any]) -> None:
        pods = await self.select(dict(step["select"], count="all"))
        created = sorted(parse_time(p["metadata"]["creationTimestamp"]) for p in pods)
        finished = sorted(
            parse_time(cs["state"]["terminated"]["finishedAt"])
            for p in pods
            for cs in (p.get("status") or {}).get("containerStatuses") or ()
            if (cs.get("state") or {}).get("terminated", {}).get("finishedAt")
        )
        for k, (lo, hi) in enumerate(step["windows"]):
            delay = created[k + 1] - finished[k]
            # timestamps have whole-second precision: widen by one second each way
            assert lo * self.backoff - 1.0 <= delay < hi * self.backoff + 1.0, (k, delay)

    async def wait_active(self, count: int) -> None:
        await self.expect_job({"status": {"active": count}})


async def run_integration(case: dict[str, Any], client_factory: ClientFactory) -> None:
    """Run every step of one integration scenario against a fresh API from `client_factory`."""
    for i, step in enumerate(case["steps"]):
        check_step("integration", step, f"step {i}")
    async with client_factory() as client:
        sc = IntegrationScenario(case, client)
        await sc.start_controller()
        try:
            await sc.create_job()
            for step in case["steps"]:
                await _step(sc, step)
                await sc.end_step()
        finally:
            await sc.stop_recording()
            await sc.stop_controller()


async def _step(sc: IntegrationScenario, step: dict[str, Any]) -> None:
    op = step["op"]
    if op == "expectJob":
        await sc.expect_job(step)
    elif op == "setPodStatus":
        await sc.set_pod_status(step)
    elif op == "deletePods":
        await sc.delete_pods(step)
    elif op == "updateJob":
        await sc.update_job(step["spec"])
    elif op == "controller":
        if step["action"] in ("stop", "restart"):
            await sc.stop_controller()
        if step["action"] in ("start", "restart"):
            await sc.start_controller()
    elif op == "expectIndexedPods":
        await sc.expect_indexed_pods(step)
    elif op == "expectPods":
        await sc.expect_pods(step)
    elif op == "expectNoTrackingFinalizers":
        await sc.expect_no_tracking_finalizers()
    elif op == "waitPodFinalizerRemoved":
        await sc.wait_finalizer_removed(step["select"])
    elif op == "expectEvent":
        await sc.expect_event(step)
    elif op == "expectMetric":
        await sc.expect_metric(step)
    elif op == "expectBackoffDelays":
        await sc.expect_backoff_delays(step)
    elif op == "waitActive":
        await sc.wait_active(int(step["count"]))
    else:
        raise AssertionError(f"unknown step op {op!r}")


@contextlib.asynccontextmanager
async def local_client() -> AsyncIterator[Client]:
    """A fresh in-process API (memory store) on the real clock."""
    from kjobs.client.local import LocalClient
    from kjobs.server.service import ApiService
    from kjobs.server.storage import Storage
    from kjobs.store import MemoryStore

    service = ApiService(Storage(MemoryStore()), clock=time.time, features=FEATURES)
    await service.ensure_namespaces()
    yield LocalClient(service)


@contextlib.asynccontextmanager
async def http_client() -> AsyncIterator[Client]:
    """A fresh kjobs API server (memory store) on a loopback port, reached over HTTPS with `HttpClient` presenting
    the test admin certificate."""
    from kjobs.client.http import HttpClient
    from kjobs.client.kubeconfig import Connection
    from kjobs.server.app import create_app
    from kjobs.server.runner import serve
    from kjobs.store import MemoryStore
    from tests.support import client_tls, shared_pki

    store = MemoryStore()
    with serve(store, app=create_app(store, features=FEATURES), pki=shared_pki()) as url:
        client = HttpClient(Connection(server=url, ssl_context=client_tls()))
        try:
            yield client
        finally:
            await client.close()
    store.close()
