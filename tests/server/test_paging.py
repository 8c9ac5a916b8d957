"""A paged list is one snapshot: every page is read at the first page's revision, carried by the continue token;
410 Expired with an inconsistent-continue token once the store's history no longer reaches it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki

PODS = "/api/v1/namespaces/default/pods"


def _names(body: dict[str, object]) -> list[str]:
    items = body["items"]
    assert isinstance(items, list)
    return [item["metadata"]["name"] for item in items]


@pytest.fixture
def small_history() -> Iterator[httpx.Client]:
    store = MemoryStore(history_size=3)
    app = create_app(store)
    with (
        serve(store, app=app, pki=shared_pki()) as url,
        httpx.Client(base_url=url, timeout=10, verify=client_tls()) as client,
    ):
        yield client
    store.close()


def test_later_pages_show_the_first_pages_revision(http: httpx.Client) -> None:
    for name in ("a", "b", "c", "d"):
        assert http.post(PODS, json=pod_manifest(name)).status_code == 201
    first = http.get(PODS, params={"limit": 2}).json()
    assert _names(first) == ["a", "b"]
    revision, token = first["metadata"]["resourceVersion"], first["metadata"]["continue"]

    patched = http.patch(
        f"{PODS}/c",
        json={"metadata": {"labels": {"patched": "yes"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200
    assert http.delete(f"{PODS}/d").status_code == 200
    assert http.post(PODS, json=pod_manifest("e")).status_code == 201

    second = http.get(PODS, params={"limit": 2, "continue": token}).json()
    assert second["metadata"] == {"resourceVersion": revision}
    assert _names(second) == ["c", "d"]
    assert "patched" not in second["items"][0]["metadata"].get("labels", {})
    assert all(int(item["metadata"]["resourceVersion"]) <= int(revision) for item in second["items"])
    assert _names(http.get(PODS).json()) == ["a", "b", "c", "e"]


def test_a_continue_token_beyond_the_history_is_expired(small_history: httpx.Client) -> None:
    http = small_history
    for name in ("a", "b", "c"):
        assert http.post(PODS, json=pod_manifest(name)).status_code == 201
    token = http.get(PODS, params={"limit": 1}).json()["metadata"]["continue"]
    for name in ("d", "e", "f", "g"):
        assert http.post(PODS, json=pod_manifest(name)).status_code == 201

    expired = http.get(PODS, params={"limit": 1, "continue": token})
    assert expired.status_code == 410
    status = expired.json()
    assert status["reason"] == "Expired" and status["code"] == 410
    assert status["message"].startswith(
        "The provided continue parameter is too old to display a consistent list result. You can start a new "
        "list without the continue parameter, or use the continue token in this response to retrieve the "
        "remainder of the results."
    )
    inconsistent = status["metadata"]["continue"]
    rest = http.get(PODS, params={"continue": inconsistent}).json()
    assert _names(rest) == ["b", "c", "d", "e", "f", "g"]
    assert rest["metadata"]["resourceVersion"] == http.get(PODS).json()["metadata"]["resourceVersion"]


def test_a_list_at_revision_0_is_not_paged(http: httpx.Client) -> None:
    """`resourceVersion=0` lists are served from the watch cache, which ignores `limit` (cacher.go
    `shouldDelegateList`: only a limit at another revision goes to etcd); a continue token still pages."""
    for name in ("a", "b", "c"):
        assert http.post(PODS, json=pod_manifest(name)).status_code == 201
    cached = http.get(PODS, params={"limit": 1, "resourceVersion": "0"}).json()
    assert _names(cached) == ["a", "b", "c"] and "continue" not in cached["metadata"]
    paged = http.get(PODS, params={"limit": 1, "resourceVersion": "1", "resourceVersionMatch": "NotOlderThan"}).json()
    assert _names(paged) == ["a"] and paged["metadata"]["remainingItemCount"] == 2
    token = paged["metadata"]["continue"]
    rest = http.get(PODS, params={"limit": 1, "resourceVersion": "0", "continue": token}).json()
    assert _names(rest) == ["b"]
