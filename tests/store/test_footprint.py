"""What the store keeps per object (bench/bench_memory.py): exact-size JSON, a label index whose one-object
values are bare keys, interned index strings; none of it may change what a reader gets or leak a change."""

from __future__ import annotations

import asyncio
import tracemalloc

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.store import MemoryStore, Store
from kjobs.store.events import index_of
from tests.hypothesis_budget import examples
from tests.store.conftest import pod

INDEX = "batch.kubernetes.io/job-completion-index"


def indexed_pod(name: str, index: int, job: str = "j") -> Obj:
    obj = pod(name, **{"job-name": job, INDEX: str(index)})
    obj["spec"] = {"nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]}
    obj["status"] = {"phase": "Succeeded"}
    return obj


def test_stored_json_is_byte_identical(store: Store) -> None:
    written = [store.create("pods", "default", f"p{i}", indexed_pod(f"p{i}", i)) for i in range(20)]
    for i, obj in enumerate(written):
        assert store.get_raw("pods", "default", f"p{i}") == orjson.dumps(obj)
    raws, _ = store.list_raw("pods")
    assert raws == [orjson.dumps(o) for o in sorted(written, key=lambda o: o["metadata"]["name"])]


def test_the_store_holds_no_more_than_its_json_and_a_small_index() -> None:
    """orjson hands back its whole growing buffer (16 KB for 2 KB of JSON); a stored record keeps only the JSON."""
    store = MemoryStore()
    pods = []
    for i in range(50):
        obj = indexed_pod(f"p{i}", i)
        obj["metadata"]["annotations"] = {"note": "x" * 2000}
        pods.append(obj)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for obj in pods:
            store.create("pods", "default", obj["metadata"]["name"], obj)
        held = (tracemalloc.get_traced_memory()[0] - before) / len(pods)
    finally:
        tracemalloc.stop()
    size = len(store.get_raw("pods", "default", "p0"))
    assert size < held < size + 2000


def test_an_update_stores_exact_size_json_too(store: Store) -> None:
    created = store.create("pods", "default", "a", indexed_pod("a", 0))
    created["status"]["phase"] = "Failed"
    updated = store.update("pods", "default", "a", created)
    assert store.get_raw("pods", "default", "a") == orjson.dumps(updated)


def test_adopted_writes_store_the_same_bytes_as_copied_ones() -> None:
    copied, adopted = MemoryStore(), MemoryStore()
    copied.create("pods", "default", "a", indexed_pod("a", 3))
    asyncio.run(adopted.acreate("pods", "default", "a", indexed_pod("a", 3), adopt=True))
    assert copied.get_raw("pods", "default", "a") == adopted.get_raw("pods", "default", "a")


def test_index_strings_are_interned_but_dicts_are_each_objects_own() -> None:
    a, b = indexed_pod("a", 0), indexed_pod("b", 1)
    la, fa, _ = index_of("pods", orjson.loads(orjson.dumps(a)))
    lb, fb, _ = index_of("pods", orjson.loads(orjson.dumps(b)))
    assert la["job-name"] is lb["job-name"]
    assert fa["spec.nodeName"] is fb["spec.nodeName"] and fa["status.phase"] is fb["status.phase"]
    assert la is not lb and fa is not fb
    assert (la, fa["metadata.name"], fb["metadata.name"]) == ({"job-name": "j", INDEX: "0"}, "a", "b")


def test_an_update_shares_the_index_dicts_it_leaves_equal_and_builds_those_it_changes(store: Store) -> None:
    """An update whose labels (or selectable fields) equal the stored record's keeps that record's dicts; a
    changed one gets its own, and lists and watches by label and field see the new values only."""
    created = store.create("pods", "default", "a", indexed_pod("a", 0))
    first = store._lookup(("pods", "default", "a"))
    status_only = {**created, "status": {"phase": "Failed"}}
    store.update("pods", "default", "a", status_only)
    second = store._lookup(("pods", "default", "a"))
    assert first is not None and second is not None and second.revision > first.revision
    assert second.labels is first.labels and second.fields is not first.fields
    assert second.fields["status.phase"] == "Failed"
    relabelled = store.get("pods", "default", "a")
    relabelled["metadata"]["labels"] = {"job-name": "k", INDEX: "0"}
    store.update("pods", "default", "a", relabelled)
    third = store._lookup(("pods", "default", "a"))
    assert third is not None and third.labels is not second.labels and third.fields is second.fields
    assert third.labels == {"job-name": "k", INDEX: "0"} and second.labels == {"job-name": "j", INDEX: "0"}
    assert third.labels["job-name"] is index_of("pods", {"metadata": {"labels": {"job-name": "k"}}})[0]["job-name"]
    assert [o["metadata"]["name"] for o in store.list("pods", label_selector="job-name=k")[0]] == ["a"]
    assert store.list("pods", label_selector="job-name=j")[0] == []
    assert [o["metadata"]["name"] for o in store.list("pods", field_selector="status.phase=Failed")[0]] == ["a"]


def test_changing_an_object_read_back_changes_neither_the_store_nor_its_index(store: Store) -> None:
    store.create("pods", "default", "a", indexed_pod("a", 0))
    store.create("pods", "default", "b", indexed_pod("b", 1))
    got = store.get("pods", "default", "a")
    got["metadata"]["labels"]["job-name"] = "other"
    got["metadata"]["labels"][INDEX] = "1"
    got["spec"]["nodeName"] = "node-2"
    names = [o["metadata"]["name"] for o in store.list("pods", label_selector="job-name=j")[0]]
    assert names == ["a", "b"]
    assert [o["metadata"]["name"] for o in store.list("pods", label_selector=f"{INDEX}=1")[0]] == ["b"]
    assert [o["metadata"]["name"] for o in store.list("pods", field_selector="spec.nodeName=node-1")[0]] == ["a", "b"]
    assert store.get("pods", "default", "a")["metadata"]["labels"] == {"job-name": "j", INDEX: "0"}


def test_a_label_value_moving_between_one_object_and_many_keeps_the_index(store: Store) -> None:
    for i in range(3):
        store.create("pods", "default", f"p{i}", indexed_pod(f"p{i}", i))

    def names(selector: str) -> list[str]:
        return [o["metadata"]["name"] for o in store.list("pods", label_selector=selector)[0]]

    p0 = store.get("pods", "default", "p0")
    p0["metadata"]["labels"][INDEX] = "1"  # now two objects carry index 1, none index 0
    store.update("pods", "default", "p0", p0)
    assert (names(f"{INDEX}=0"), names(f"{INDEX}=1"), names(f"{INDEX}=2")) == ([], ["p0", "p1"], ["p2"])
    store.delete("pods", "default", "p1")  # back to one
    assert names(f"{INDEX}=1") == ["p0"]
    store.delete("pods", "default", "p0")
    assert names(f"{INDEX}=1") == [] and names("job-name=j") == ["p2"]


_LABEL_OPS = st.lists(
    st.tuples(st.sampled_from(["put", "delete"]), st.integers(0, 5), st.integers(0, 2), st.integers(0, 2)),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(ops=_LABEL_OPS)
def test_label_lists_match_a_scan_whatever_the_writes(ops: list[tuple[str, int, int, int]]) -> None:
    store = MemoryStore()
    expected: dict[str, dict[str, str]] = {}
    for op, n, a, b in ops:
        name = f"p{n}"
        if op == "delete":
            if name in expected:
                store.delete("pods", "default", name)
                del expected[name]
            continue
        labels = {"a": str(a), "b": str(b)}
        if name in expected:
            store.update("pods", "default", name, pod(name, **labels))
        else:
            store.create("pods", "default", name, pod(name, **labels))
        expected[name] = labels
    for key in ("a", "b"):
        for value in ("0", "1", "2"):
            got = [o["metadata"]["name"] for o in store.list("pods", label_selector=f"{key}={value}")[0]]
            assert got == sorted(n for n, labels in expected.items() if labels[key] == value)
            page, _, _, _ = store.list_page("pods", label_selector=f"{key}={value}", limit=100)
            assert [orjson.loads(r)["metadata"]["name"] for r in page] == got


@pytest.mark.parametrize("adopt", [pytest.param(False, id="copied"), pytest.param(True, id="adopted")])
def test_records_do_not_share_label_dicts_with_the_written_object(adopt: bool) -> None:
    store = MemoryStore()
    obj = indexed_pod("a", 0)
    if adopt:
        asyncio.run(store.acreate("pods", "default", "a", obj, adopt=True))
    else:
        store.create("pods", "default", "a", obj)
    record = store._buckets["pods"].records["default/a"]
    assert record.labels is not obj["metadata"]["labels"]


@settings(max_examples=examples(200), deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(("create", "delete", "list")), st.sampled_from(("a", "b")), st.integers(0, 12))
    )
)
@example(ops=[("create", "a", 0), ("list", "a", 0), ("delete", "a", 0), ("create", "a", 0), ("list", "a", 0)])
def test_lists_between_creates_and_deletes_are_in_key_order(ops: list[tuple[str, str, int]]) -> None:
    """The keys are put in order when a list reads them (objects created, deleted, or deleted and created again
    since the last list): every list, wherever it falls, has each stored object once, in key order."""
    store, model = MemoryStore(), set()
    for op, namespace, n in ops:
        if op == "create" and (namespace, f"p{n}") not in model:
            store.create("pods", namespace, f"p{n}", pod(f"p{n}", namespace))
            model.add((namespace, f"p{n}"))
        elif op == "delete" and (namespace, f"p{n}") in model:
            store.delete("pods", namespace, f"p{n}")
            model.discard((namespace, f"p{n}"))
        elif op == "list":
            listed = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("pods")[0]]
            assert listed == sorted(model)
            in_b = [o["metadata"]["name"] for o in store.list("pods", "b")[0]]
            assert in_b == sorted(name for ns, name in model if ns == "b")
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("pods")[0]] == sorted(model)
