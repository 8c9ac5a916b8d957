"""EventRecorder through the in-process API: the Events a user lists (`kubectl get events`, `describe`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.events import EventRecorder
from kjobs.client.local import LocalClient
from kjobs.client.resources import EVENTS, JOBS, NODES
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from tests.support import local_api, settle

JOB: Obj = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "work", "namespace": "default"},
    "spec": {
        "parallelism": 30,
        "completions": 30,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
    },
}


def scenario(body: Callable[[FakeClock, LocalClient, EventRecorder], Awaitable[None]]) -> None:
    async def run() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        await body(clock, client, EventRecorder(client, component="job-controller", clock=clock))

    asyncio.run(run())


async def describe_events(client: LocalClient, obj: Obj) -> list[Obj]:
    """The events `kubectl describe` lists for `obj` (its field selector), oldest first."""
    meta = obj["metadata"]
    namespace = meta.get("namespace") or ""
    selector = (
        f"involvedObject.name={meta['name']},involvedObject.namespace={namespace},"
        f"involvedObject.kind={obj['kind']},involvedObject.uid={meta['uid']}"
    )
    items, _ = await client.list(EVENTS, namespace or None, field_selector=selector)
    return sorted(items, key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))


def test_a_thousand_similar_events_become_ten_events_and_the_rest_is_dropped() -> None:
    async def body(clock: FakeClock, client: LocalClient, events: EventRecorder) -> None:
        job = await client.create(JOBS, "default", JOB)
        for i in range(1000):
            events.event(job, "Normal", "SuccessfulCreate", f"Created pod: work-{i}")
        await events.flush()
        listed = await describe_events(client, job)
        # 9 single events, the 10th starts the aggregate, 15 more update it: the bucket of 25 is empty.
        assert [(e["message"], e["count"]) for e in listed] == [
            *((f"Created pod: work-{i}", 1) for i in range(9)),
            ("(combined from similar events): Created pod: work-24", 16),
        ]
        assert {e["source"]["component"] for e in listed} == {"job-controller"}
        events.event(job, "Normal", "Completed", "Job completed")
        await events.flush()
        assert len(await describe_events(client, job)) == 10
        clock.advance(300)  # one token more
        events.event(job, "Normal", "Completed", "Job completed")
        await events.flush()
        listed = await describe_events(client, job)
        # client-go counted the dropped one: the patch finds no Event and creates it, with count 2 since then.
        [completed] = [e for e in listed if e["reason"] == "Completed"]
        assert (completed["count"], completed["firstTimestamp"], completed["lastTimestamp"]) == (
            2,
            format_time(clock.now() - 300),
            format_time(clock.now()),
        )
        assert len(listed) == 11

    scenario(body)


def test_a_repeated_event_is_one_event_with_a_count_and_a_last_timestamp() -> None:
    async def body(clock: FakeClock, client: LocalClient, events: EventRecorder) -> None:
        job = await client.create(JOBS, "default", JOB)
        start = format_time(clock.now())
        for _ in range(3):
            events.event(job, "Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            clock.advance(10)
        await events.flush()
        [event] = await describe_events(client, job)
        assert (event["count"], event["firstTimestamp"], event["lastTimestamp"]) == (
            3,
            start,
            format_time(clock.now() - 10),
        )
        assert (event["type"], event["reason"], event["reportingComponent"]) == (
            "Warning",
            "BackoffLimitExceeded",
            "job-controller",
        )
        assert event["metadata"]["name"].startswith("work.")

    scenario(body)


def test_a_repeated_event_whose_event_was_deleted_is_written_again() -> None:
    async def body(clock: FakeClock, client: LocalClient, events: EventRecorder) -> None:
        job = await client.create(JOBS, "default", JOB)
        events.event(job, "Normal", "Suspended", "Job suspended")
        await events.flush()
        [first] = await describe_events(client, job)
        await client.delete(EVENTS, "default", first["metadata"]["name"])
        clock.advance(5)
        events.event(job, "Normal", "Suspended", "Job suspended")
        await events.flush()
        [again] = await describe_events(client, job)
        assert (again["metadata"]["name"], again["count"]) == (first["metadata"]["name"], 2)

    scenario(body)


def test_node_events_live_in_default_and_are_found_by_describe_node() -> None:
    async def body(clock: FakeClock, client: LocalClient, events: EventRecorder) -> None:
        node = await client.create(NODES, None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        events.event(node, "Normal", "NodeNotReady", "Node n1 status is now: NodeNotReady")
        await events.flush()
        [event] = await describe_events(client, node)
        assert event["metadata"]["namespace"] == "default"
        assert "namespace" not in event["involvedObject"]

    scenario(body)


def test_failures_and_bad_types_are_not_raised() -> None:
    async def body(clock: FakeClock, client: LocalClient, events: EventRecorder) -> None:
        ghost = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "nowhere"}}
        events.event(ghost, "Normal", "SuccessfulCreate", "Created pod: x-1")  # the namespace does not exist
        job = await client.create(JOBS, "default", JOB)
        events.event(job, "Info", "Odd", "not a Kubernetes event type")
        await events.flush()
        items, _ = await client.list(EVENTS, None)
        assert items == []

    scenario(body)


def test_the_job_controller_writes_the_events_kubernetes_would_for_30_pods() -> None:
    async def run() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        jobs = JobController(client, clock=clock)
        await jobs.start()
        try:
            job = await client.create(JOBS, "default", JOB)
            await settle(clock, lambda: len(jobs.pods.list("default")) == 30)
            await jobs.events.flush()
            listed = await describe_events(client, job)
        finally:
            await jobs.stop()
        assert {e["reason"] for e in listed} == {"SuccessfulCreate"}
        assert len(listed) == 10
        [aggregate] = [e for e in listed if e["message"].startswith("(combined from similar events): Created pod: ")]
        assert aggregate["count"] == 16

    asyncio.run(run())


def test_a_rate_limited_recorder_writes_its_burst_then_qps_and_drops_past_its_queue() -> None:
    """The kubelet's event client (eventRecordQPS 50, eventBurst 100): a burst at once, then 50 a second; at
    most 1,000 wait, more are dropped."""

    async def run() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        recorder = EventRecorder(client, component="kubelet", clock=clock, host="n1", qps=50, burst=100)
        for i in range(1500):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            }
            recorder.event(pod, "Normal", "Started", "Started container main")
        assert recorder.dropped == 500  # the queue holds 1,000
        for _ in range(50):
            await asyncio.sleep(0)
        written, _ = await client.list(EVENTS, "default")
        assert len(written) == 100  # the burst
        clock.advance(1.0)
        for _ in range(200):
            await asyncio.sleep(0)
        written, _ = await client.list(EVENTS, "default")
        assert len(written) == 150  # one second later: 50 more
        await recorder.shutdown()
        assert recorder.dropped == 500 + 850  # what was still queued at shutdown

    asyncio.run(run())


def test_a_queued_event_is_stamped_with_the_time_it_was_recorded_not_the_time_it_is_written() -> None:
    """A rate-limited recorder builds an event when its turn to be written comes (most of a busy queue is dropped
    at shutdown unbuilt); what it says is still what was recorded, when it was recorded."""

    async def run() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        recorder = EventRecorder(client, component="kubelet", clock=clock, host="n1", qps=1, burst=1)
        recorded_at = format_time(clock.now())
        for i in range(3):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            }
            recorder.event(pod, "Normal", "Started", f"Started container c{i}")
        for _ in range(50):  # the first is written at once; the second waits for a token
            await asyncio.sleep(0)
        clock.advance(1.0)
        for _ in range(50):
            await asyncio.sleep(0)
        written, _ = await client.list(EVENTS, "default")
        assert sorted(e["message"] for e in written) == ["Started container c0", "Started container c1"]
        assert {e["firstTimestamp"] for e in written} == {recorded_at}
        assert {e["involvedObject"]["name"] for e in written} == {"p0", "p1"}
        await recorder.shutdown()
        assert recorder.dropped == 1

    asyncio.run(run())
