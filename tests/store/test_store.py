"""Store CRUD: revisions, compare-and-swap, Kubernetes errors, list order and selectors (both backends)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import orjson
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.store import Store
from tests.store.conftest import StoreFactory, pod, rv


def test_create_stamps_a_global_increasing_resource_version(store: Store) -> None:
    a = store.create("pods", "default", "a", pod("a"))
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"}}
    j = store.create("jobs.batch", "default", "j", job)
    n = store.create("nodes", "", "n1", {"kind": "Node", "metadata": {"name": "n1"}})
    assert rv(a) < rv(j) < rv(n)
    assert store.revision == rv(n)
    assert store.get("jobs.batch", "default", "j")["metadata"]["resourceVersion"] == str(rv(j))


def test_objects_handed_in_and_out_are_independent_of_the_store(store: Store) -> None:
    mine = pod("a")
    created = store.create("pods", "default", "a", mine)
    assert "resourceVersion" not in mine["metadata"]
    mine["metadata"]["labels"]["changed"] = "yes"
    created["metadata"]["labels"]["changed"] = "yes"
    got = store.get("pods", "default", "a")
    got["spec"]["containers"].clear()
    assert store.get("pods", "default", "a") == created | {"metadata": {**created["metadata"], "labels": {}}}


def test_create_of_existing_key_is_already_exists(store: Store) -> None:
    store.create("jobs.batch", "default", "x", {"metadata": {"name": "x"}})
    with pytest.raises(ApiError) as info:
        store.create("jobs.batch", "default", "x", {"metadata": {"name": "x"}})
    err = info.value
    assert (err.code, err.reason, err.message) == (409, "AlreadyExists", 'jobs.batch "x" already exists')
    assert err.details == {"name": "x", "kind": "jobs", "group": "batch"}


@pytest.mark.parametrize(
    ("resource", "message"),
    [
        pytest.param("jobs.batch", 'jobs.batch "x" not found', id="grouped"),
        pytest.param("pods", 'pods "x" not found', id="core"),
    ],
)
def test_missing_object_is_not_found(store: Store, resource: str, message: str) -> None:
    calls: list[Callable[[], Obj]] = [
        lambda: store.get(resource, "default", "x"),
        lambda: store.update(resource, "default", "x", {"metadata": {"name": "x"}}),
        lambda: store.delete(resource, "default", "x"),
    ]
    for call in calls:
        with pytest.raises(ApiError) as info:
            call()
        assert (info.value.code, info.value.reason, info.value.message) == (404, "NotFound", message)


def test_update_with_current_resource_version_succeeds_and_stale_one_conflicts(store: Store) -> None:
    created = store.create("jobs.batch", "default", "x", {"metadata": {"name": "x"}, "spec": {"parallelism": 1}})
    first = dict(created, spec={"parallelism": 2})
    updated = store.update("jobs.batch", "default", "x", first, expected_rv=created["metadata"]["resourceVersion"])
    assert rv(updated) > rv(created)
    stale = dict(created, spec={"parallelism": 3})
    with pytest.raises(ApiError) as info:
        store.update("jobs.batch", "default", "x", stale, expected_rv=created["metadata"]["resourceVersion"])
    assert (info.value.code, info.value.reason) == (409, "Conflict")
    assert info.value.message == (
        'Operation cannot be fulfilled on jobs.batch "x": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert store.get("jobs.batch", "default", "x")["spec"] == {"parallelism": 2}


def test_update_without_expected_version_is_unconditional(store: Store) -> None:
    created = store.create("pods", "default", "a", pod("a"))
    store.update("pods", "default", "a", pod("a", x="1"))
    last = store.update("pods", "default", "a", pod("a", x="2"), expected_rv=None)
    assert rv(last) == rv(created) + 2
    assert store.get("pods", "default", "a")["metadata"]["labels"] == {"x": "2"}


def test_update_that_changes_nothing_keeps_the_resource_version(store: Store) -> None:
    created = store.create("pods", "default", "a", pod("a", x="1"))
    again = store.update("pods", "default", "a", pod("a", x="1"), expected_rv=created["metadata"]["resourceVersion"])
    assert again == created
    assert store.revision == rv(created)


def test_delete_returns_last_state_at_a_new_revision(store: Store) -> None:
    created = store.create("pods", "default", "a", pod("a", x="1"))
    gone = store.delete("pods", "default", "a")
    assert rv(gone) == rv(created) + 1 == store.revision
    assert gone["metadata"]["labels"] == {"x": "1"}
    with pytest.raises(ApiError):
        store.get("pods", "default", "a")
    again = store.create("pods", "default", "a", pod("a"))
    assert rv(again) == rv(gone) + 1


def test_delete_preconditions_conflict_with_kubernetes_wording(store: Store) -> None:
    obj = pod("a")
    obj["metadata"]["uid"] = "u1"
    created = store.create("pods", "default", "a", obj)
    store.update("pods", "default", "a", dict(created, spec={}))
    with pytest.raises(ApiError) as info:
        store.delete("pods", "default", "a", expected_rv=created["metadata"]["resourceVersion"])
    assert info.value.code == 409
    assert info.value.message == (
        'Operation cannot be fulfilled on pods "a": Precondition failed: ResourceVersion in precondition: '
        f"{rv(created)}, ResourceVersion in object meta: {rv(created) + 1}"
    )
    with pytest.raises(ApiError) as info:
        store.delete("pods", "default", "a", expected_uid="u2")
    assert info.value.message == (
        'Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: u2, '
        "UID in object meta: u1"
    )
    store.delete("pods", "default", "a", expected_uid="u1", expected_rv=str(rv(created) + 1))


def test_list_is_in_kubernetes_key_order_with_the_read_revision(store: Store) -> None:
    for ns, name in [("b", "z"), ("a", "y"), ("a-b", "x"), ("a", "b.1"), ("a", "b")]:
        store.create("pods", ns, name, pod(name, ns))
    items, revision = store.list("pods")
    # etcd keys are "<ns>/<name>": "a-b/..." sorts before "a/..." because '-' < '/'
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items] == [
        ("a-b", "x"),
        ("a", "b"),
        ("a", "b.1"),
        ("a", "y"),
        ("b", "z"),
    ]
    assert revision == store.revision
    items, _ = store.list("pods", "a")
    assert [o["metadata"]["name"] for o in items] == ["b", "b.1", "y"]
    assert store.list("jobs.batch") == ([], store.revision)


def test_list_filters_by_label_and_field_selectors(store: Store) -> None:
    for i in range(6):
        obj = pod(f"p{i}", "ns", app="web" if i % 2 else "db")
        obj["spec"]["nodeName"] = f"node-{i % 3}"
        store.create("pods", "ns", f"p{i}", obj)

    def names(items: list[Obj]) -> list[str]:
        return [o["metadata"]["name"] for o in items]

    assert names(store.list("pods", label_selector="app=web")[0]) == ["p1", "p3", "p5"]
    assert names(store.list("pods", field_selector="spec.nodeName=node-0")[0]) == ["p0", "p3"]
    both = store.list("pods", "ns", label_selector="app in (web)", field_selector="spec.nodeName!=node-0")
    assert names(both[0]) == ["p1", "p5"]
    with pytest.raises(ApiError) as info:
        store.list("pods", label_selector="app in web")
    assert info.value.code == 400


def test_label_lists_follow_relabeling_and_deletion(store: Store) -> None:
    store.create("pods", "a", "p1", pod("p1", "a", job="x"))
    store.create("pods", "b", "p2", pod("p2", "b", job="x"))
    store.create("pods", "a", "p3", pod("p3", "a", job="y"))

    def names(selector: str, namespace: str | None = None) -> list[str]:
        return [o["metadata"]["name"] for o in store.list("pods", namespace, label_selector=selector)[0]]

    assert names("job=x") == ["p1", "p2"]
    assert names("job in (x),job!=y", "a") == ["p1"]
    store.update("pods", "a", "p1", pod("p1", "a", job="y"))
    assert names("job=x") == ["p2"]
    assert names("job==y") == ["p1", "p3"]
    store.delete("pods", "a", "p3")
    assert names("job=y") == ["p1"]
    assert names("job=z") == []
    assert names("!job") == []


def test_list_page_continues_after_the_last_key(store: Store) -> None:
    for i in range(7):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns", odd=str(i % 2)))
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        raws, _, after, _ = store.list_page("pods", "ns", label_selector="odd=0", limit=2, continue_after=after)
        pages += 1
        seen += [raw.decode().split('"name":"')[1].split('"')[0] for raw in raws]
        if after is None:
            break
    assert seen == ["p0", "p2", "p4", "p6"]
    assert pages == 2


def test_concurrent_compare_and_swap_loses_no_increment(store: Store) -> None:
    store.create("counters", "", "c", {"metadata": {"name": "c"}, "value": 0})
    threads, rounds = 8, 25

    def bump() -> None:
        for _ in range(rounds):
            while True:
                cur = store.get("counters", "", "c")
                cur["value"] += 1
                try:
                    store.update("counters", "", "c", cur, expected_rv=cur["metadata"]["resourceVersion"])
                    break
                except ApiError as err:
                    assert err.code == 409

    workers = [threading.Thread(target=bump) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert store.get("counters", "", "c")["value"] == threads * rounds


def test_async_writes_from_one_event_loop(store: Store) -> None:
    async def main() -> list[int]:
        created = await asyncio.gather(*(store.acreate("pods", "ns", f"p{i}", pod(f"p{i}", "ns")) for i in range(50)))
        first = created[0]
        updated = await store.aupdate("pods", "ns", "p0", dict(first, spec={}), expected_rv=str(rv(first)))
        with pytest.raises(ApiError) as info:
            await store.aupdate("pods", "ns", "p0", dict(first, spec={"x": 1}), expected_rv=str(rv(first)))
        assert info.value.code == 409
        deleted = await store.adelete("pods", "ns", "p1")
        return [rv(o) for o in created] + [rv(updated), rv(deleted)]

    revisions = asyncio.run(main())
    assert len(set(revisions)) == 52
    assert max(revisions) == store.revision
    assert len(store.list("pods")[0]) == 49


@pytest.mark.parametrize(("namespace", "name"), [("ns", ""), ("ns", "a/b"), ("n/s", "a")])
def test_keys_that_would_collide_are_rejected(store: Store, namespace: str, name: str) -> None:
    with pytest.raises(ApiError) as info:
        store.create("pods", namespace, name, pod(name or "x", namespace))
    assert info.value.code == 400
    assert store.revision == 0


def test_non_json_object_is_rejected(store: Store) -> None:
    with pytest.raises(ApiError) as info:
        store.create("pods", "ns", "a", {"metadata": {"name": "a"}, "spec": {1, 2}})
    assert info.value.code == 400
    assert store.revision == 0


def test_stats_count_objects_watchers_and_commits(store: Store) -> None:
    store.create("pods", "ns", "a", pod("a", "ns"))
    store.create("pods", "ns", "b", pod("b", "ns"))
    store.create("nodes", "", "n", {"metadata": {"name": "n"}})
    store.delete("pods", "ns", "b")
    with store.watch("pods", since=None):
        stats = store.stats()
    assert stats.revision == 4
    assert stats.objects == {"pods": 1, "nodes": 1}
    assert stats.watchers == {"pods": 1}
    assert stats.commits == stats.committed_changes == 4
    assert store.stats().watchers == {}


def _names(raws: list[bytes]) -> list[str]:
    return [orjson.loads(raw)["metadata"]["name"] for raw in raws]


def test_list_page_at_a_revision_undoes_later_changes(store: Store) -> None:
    for i in range(4):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns", job="x"))
    store.create("pods", "other", "q", pod("q", "other", job="x"))
    raws, first, after, _ = store.list_page("pods", "ns", label_selector="job=x", limit=2)
    assert _names(raws) == ["p0", "p1"] and after == "ns/p1"
    store.update("pods", "ns", "p2", pod("p2", "ns", job="y"))  # leaves the selector now
    store.delete("pods", "ns", "p3")
    store.create("pods", "ns", "p4", pod("p4", "ns", job="x"))
    store.create("pods", "ns", "p21", pod("p21", "ns", job="x"))

    raws, revision, after, _ = store.list_page(
        "pods", "ns", label_selector="job=x", limit=2, continue_after="ns/p1", at_revision=first
    )
    assert revision == first and after is None
    assert _names(raws) == ["p2", "p3"]
    assert [orjson.loads(r)["metadata"]["labels"]["job"] for r in raws] == ["x", "x"]
    raws, revision, _, _ = store.list_page("pods", "ns", label_selector="job=x", continue_after="ns/p1")
    assert revision == store.revision and _names(raws) == ["p21", "p4"]


def test_list_page_counts_what_follows_only_without_selectors(store: Store) -> None:
    """etcd3's remainingItemCount: the objects after the page, as of the page's revision; none with a selector
    (it would count keys, not matches) or on the last page."""
    for i in range(5):
        store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns", job="x"))
    store.create("pods", "other", "q", pod("q", "other", job="x"))
    raws, first, after, remaining = store.list_page("pods", "ns", limit=2)
    assert (_names(raws), remaining) == (["p0", "p1"], 3)
    assert store.list_page("pods", "ns", label_selector="job=x", limit=2)[3] is None
    store.delete("pods", "ns", "p4")
    store.create("pods", "ns", "p31", pod("p31", "ns"))  # absent at `first`: not counted
    raws, _, after, remaining = store.list_page("pods", "ns", limit=1, continue_after=after, at_revision=first)
    assert (_names(raws), remaining) == (["p2"], 2)  # p3, p4
    assert store.list_page("pods", "ns", limit=1, continue_after=after)[3] == 1  # now: p3 on the page, then p31
    raws, _, after, remaining = store.list_page("pods", "ns", limit=3, continue_after="ns/p1")
    assert (_names(raws), after, remaining) == (["p2", "p3", "p31"], None, None)


def test_list_page_at_a_revision_beyond_the_history_is_gone(make_store: StoreFactory) -> None:
    store = make_store(history_size=2)
    store.create("pods", "ns", "a", pod("a", "ns"))
    first = store.revision
    for i in range(3):
        store.create("pods", "ns", f"b{i}", pod(f"b{i}", "ns"))
    with pytest.raises(ApiError) as gone:
        store.list_page("pods", "ns", at_revision=first)
    assert gone.value.code == 410 and gone.value.reason == "Expired"
    with pytest.raises(ApiError):
        store.list_page("pods", "ns", at_revision=store.revision + 1)
    raws, _, _, _ = store.list_page("pods", "ns", at_revision=store.revision - 1)
    assert _names(raws) == ["a", "b0", "b1"]
