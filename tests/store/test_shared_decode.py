"""In-process watchers of one change share one decoded object, and the mutation detector catches a change to it."""

from __future__ import annotations

import pytest

from kjobs.store import MemoryStore, mutation


def _pod(name: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}}, "spec": {"nodeName": "n1"}}


def test_watchers_of_one_change_share_one_decoded_object() -> None:
    store = MemoryStore()
    first = store.watch("pods", None, since=store.revision)
    second = store.watch("pods", "default", since=store.revision, label_selector="app=x")
    store.create("pods", "default", "a", _pod("a"))
    one, two = first.next(timeout=1), second.next(timeout=1)
    assert one is not None and two is not None
    assert one.object is two.object
    assert one.object["metadata"]["name"] == "a"


def test_a_changed_shared_object_is_reported_with_its_name() -> None:
    mutation.check()
    store = MemoryStore()
    w = store.watch("pods", None, since=store.revision)
    store.create("pods", "default", "a", _pod("a"))
    event = w.next(timeout=1)
    assert event is not None
    event.object["spec"]["nodeName"] = "elsewhere"
    with pytest.raises(mutation.CacheMutationError, match="default/a"):
        mutation.check()
    mutation.check()  # reported once, then forgotten
