"""Watches and lists from a resourceVersion the store has not reached, and bookmarks, as kube-apiserver's watch cache
serves them (staging/src/k8s.io/apiserver/pkg/storage/cacher: `cacher.go` `Watch`, `watch_cache.go`
`waitUntilFreshAndBlock`, `cache_watcher.go` `nextBookmarkTime`, `process`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import orjson

from kjobs.server.app import BOOKMARK_INTERVAL, create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

PODS = "/api/v1/namespaces/default/pods"
WATCH_LIST = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
WRITE_DELAY = 0.5
"""Seconds a test lets a request reach the server before it makes the write the request waits for (a late request
finds the write made and passes all the same)."""


@contextmanager
def _server(**settings: float) -> Iterator[httpx.Client]:
    store = MemoryStore()
    app = create_app(store, **settings)  # type: ignore[arg-type]
    with serve(store, app=app, pki=shared_pki()) as url, httpx.Client(base_url=url, verify=client_tls()) as http:
        yield http
    store.close()


def _rv(http: httpx.Client) -> int:
    return int(http.get(PODS).json()["metadata"]["resourceVersion"])


def _lines(response: httpx.Response, until: int) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for line in response.iter_lines():
        if line:
            events.append(orjson.loads(line))
        if len(events) == until:
            break
    return events


def _meta(event: dict[str, object]) -> dict[str, str]:
    return event["object"]["metadata"]  # type: ignore[index,no-any-return]


def test_a_watch_from_a_revision_not_reached_yet_gets_only_the_changes_after_it() -> None:
    """A plain watch from a resourceVersion newer than the store's is not refused and does not wait: it starts,
    and sends the changes after that revision only, and no bookmark before the store has passed it (cacher
    `Watch`: no wait without sendInitialEvents; `cacheWatcher.process` sends what is newer than the revision)."""
    with _server(bookmark_interval=0.2) as http:
        target = _rv(http) + 2
        query = f"watch=true&allowWatchBookmarks=true&timeoutSeconds=60&resourceVersion={target}"
        with http.stream("GET", f"{PODS}?{query}") as response:
            assert response.status_code == 200
            after = []
            for i in range(4):
                created = http.post(PODS, json=pod_manifest(f"p{i}")).json()
                if int(created["metadata"]["resourceVersion"]) > target:
                    after.append(created["metadata"]["name"])
            events: list[dict[str, object]] = []
            for line in response.iter_lines():
                if line:
                    events.append(orjson.loads(line))
                    if events[-1]["type"] == "ADDED" and _meta(events[-1])["name"] == after[-1]:
                        break
        assert [(e["type"], _meta(e)["name"]) for e in events if e["type"] != "BOOKMARK"] == [
            ("ADDED", name) for name in after
        ]
        assert all(int(_meta(e)["resourceVersion"]) > target for e in events)


def test_a_watch_list_from_a_revision_never_reached_ends_with_a_too_large_error_event() -> None:
    """A `sendInitialEvents` watch from a resourceVersion the store does not reach within the wait (3 s; 0.5 s here)
    is a 200 stream with one ERROR event carrying the 504 Status, not an HTTP 504 (cacher `Watch` returns
    `newErrWatcher`); client-go's reflector then lists from the current state (`isTooLargeResourceVersionError`)."""
    with _server(resource_version_wait=0.5) as http:
        current = _rv(http)
        started = time.monotonic()
        with http.stream("GET", f"{PODS}?{WATCH_LIST}&resourceVersion={current + 100}") as response:
            assert response.status_code == 200
            events = _lines(response, 99)
        assert time.monotonic() - started >= 0.5
    assert events == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"Timeout: Too large resource version: {current + 100}, current: {current}",
                "reason": "Timeout",
                "details": {
                    "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                    "retryAfterSeconds": 1,
                },
                "code": 504,
            },
        }
    ]


def test_a_watch_list_waits_for_a_write_to_reach_its_revision() -> None:
    """A `sendInitialEvents` watch from the next revision starts once a write makes it: the state it sends
    includes that write (the watch cache's `waitUntilFreshAndBlock` ends when the cache catches up)."""
    with _server(resource_version_wait=30) as http, ThreadPoolExecutor(1) as pool:
        target = _rv(http) + 1

        def watch() -> list[dict[str, object]]:
            with http.stream("GET", f"{PODS}?{WATCH_LIST}&resourceVersion={target}&timeoutSeconds=60") as response:
                assert response.status_code == 200
                return _lines(response, 2)

        events = pool.submit(watch)
        time.sleep(WRITE_DELAY)
        http.post(PODS, json=pod_manifest("late"))
        added, end = events.result(timeout=60)
    assert (added["type"], _meta(added)["name"]) == ("ADDED", "late")
    assert end["type"] == "BOOKMARK" and int(_meta(end)["resourceVersion"]) >= target


def test_a_list_waits_for_a_write_to_reach_its_revision() -> None:
    """A LIST from the next revision (NotOlderThan) answers once a write makes it, with that write, rather than a
    504 at once (the watch cache's `WaitUntilFreshAndList`)."""
    with _server(resource_version_wait=30) as http, ThreadPoolExecutor(1) as pool:
        target = _rv(http) + 1
        listed = pool.submit(http.get, PODS, params={"resourceVersion": str(target)})
        time.sleep(WRITE_DELAY)
        http.post(PODS, json=pod_manifest("late"))
        response = listed.result(timeout=60)
    assert response.status_code == 200
    assert [item["metadata"]["name"] for item in response.json()["items"]] == ["late"]
    assert int(response.json()["metadata"]["resourceVersion"]) >= target


def test_a_bookmark_carries_the_stores_revision_past_changes_the_watch_does_not_select() -> None:
    """A watch with a selector is bookmarked at the store's revision, not at its own last event: changes it does
    not select move it on too, so it resumes from as late a revision as a cluster's would (the cacher's bookmark
    carries the watch cache's revision)."""
    with _server(bookmark_interval=0.3) as http:
        start = _rv(http)
        for i in range(3):
            other = pod_manifest(f"o{i}")
            other["metadata"]["labels"] = {"app": "other"}  # type: ignore[index]
            latest = http.post(PODS, json=other).json()["metadata"]["resourceVersion"]
        query = f"watch=true&allowWatchBookmarks=true&labelSelector=app%3Dmine&resourceVersion={start}"
        with http.stream("GET", f"{PODS}?{query}&timeoutSeconds=60") as response:
            (first,) = _lines(response, 1)
    assert (first["type"], _meta(first)) == ("BOOKMARK", {"resourceVersion": latest, "creationTimestamp": None})


def test_bookmarks_keep_their_period_while_events_keep_coming() -> None:
    """Bookmarks come every period from the watch's start whether or not events flow meanwhile (the cacher
    schedules the next one when it sends one, `nextBookmarkTime`), so a busy watch gets them too: here the first
    comes while pods are created one after another, well before the writes pause for a whole period."""
    with _server(bookmark_interval=1.0) as http, ThreadPoolExecutor(1) as pool:
        start = _rv(http)
        seen = threading.Event()

        def watch() -> list[dict[str, object]]:
            query = f"watch=true&allowWatchBookmarks=true&resourceVersion={start}&timeoutSeconds=120"
            events: list[dict[str, object]] = []
            with http.stream("GET", f"{PODS}?{query}") as response:
                for line in response.iter_lines():
                    if line:
                        events.append(orjson.loads(line))
                        if events[-1]["type"] == "BOOKMARK":
                            seen.set()
                            return events
            return events

        events = pool.submit(watch)
        started = time.monotonic()
        deadline = started + 60
        i = 0
        while not seen.is_set() and time.monotonic() < deadline:
            http.post(PODS, json=pod_manifest(f"p{i}"))
            i += 1
        got = events.result(timeout=60)
        assert time.monotonic() - started < 15  # due after 1 s; a slow machine may take longer to send it
    assert got[-1]["type"] == "BOOKMARK"
    assert [e["type"] for e in got[:-1]] == ["ADDED"] * (len(got) - 1) and len(got) > 1
    assert int(_meta(got[-1])["resourceVersion"]) >= int(_meta(got[-2])["resourceVersion"])


def test_the_bookmark_period_is_the_cachers_minute() -> None:
    """kube-apiserver bookmarks a watch about once a minute (cacher.go `defaultBookmarkFrequency`)."""
    assert BOOKMARK_INTERVAL == 60.0
    assert create_app(MemoryStore()).bookmark_interval == 60.0


def test_a_watch_ends_at_its_timeout_while_events_keep_coming() -> None:
    """`timeoutSeconds` ends a watch also when it never runs out of events to send (the handler's context times
    out, `handlers/get.go` `ListResource`); it used to end only in a pause between events. Here every chunk the
    server sends makes the next change, for up to 30 s."""
    store = MemoryStore()
    app = create_app(store)
    written = 0

    async def go() -> float:
        started = time.monotonic()
        requested = False

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await asyncio.Event().wait()  # the client never leaves
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal written
            streaming = message["type"] == "http.response.start" or message.get("more_body")
            if streaming and time.monotonic() - started < 30:
                store.create("pods", "default", f"p{written}", pod_manifest(f"p{written}"))
                written += 1

        query = b"watch=true&timeoutSeconds=1"
        scope = {"type": "http", "method": "GET", "path": PODS, "query_string": query, "headers": []}
        await asyncio.wait_for(app(scope, receive, send), 60)
        return time.monotonic() - started

    elapsed = asyncio.run(go())
    store.close()
    assert written > 1
    assert elapsed < 20  # 1 s, and a loaded machine's delays
