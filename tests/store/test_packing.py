"""Cold records packed against a shared dictionary (`kjobs.store.packing`): every read gives back the very bytes
an unpacked store gives, for `kjobs up`'s pods with and without the ServiceAccount token volume."""

from __future__ import annotations

import gc
import uuid
from pathlib import Path

import orjson
import pytest

from kjobs.api.types import Obj
from kjobs.store import MemoryStore, SqliteStore, Store
from kjobs.store.events import EventType
from kjobs.store.packing import MARK, PACK_ABOVE
from tests.store.conftest import StoreFactory

JOB_UID = "565fc24c-9b41-4963-b0a1-190c54e20b91"
OTHER_JOB_UID = "0b8e5a5e-8f0c-4f59-9d7a-3c3f0a4f1e22"

TOKEN_VOLUME = {
    "name": "kube-api-access-5wh99",
    "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                    ]
                }
            },
        ],
    },
}


def job_pod(index: int, *, token_volume: bool, job_uid: str = JOB_UID, job: str = "bench") -> Obj:
    """A finished pod of an Indexed Job as `kjobs up` stores it (managedFields, defaults, a terminal status)."""
    suffix = uuid.UUID(int=index + 7).hex[:5]
    container: Obj = {
        "name": "main",
        "image": "busybox",
        "imagePullPolicy": "Always",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    spec: Obj = {
        "restartPolicy": "Never",
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "hostname": f"{job}-{index}",
        "enableServiceLinks": True,
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "priority": 0,
        "nodeName": "kjobs-node",
    }
    if token_volume:
        container["volumeMounts"] = [
            {
                "name": TOKEN_VOLUME["name"],
                "readOnly": True,
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            }
        ]
        spec["volumes"] = [TOKEN_VOLUME]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{job}-{index}-",
            "namespace": "default",
            "labels": {
                "job-name": job,
                "batch.kubernetes.io/job-name": job,
                "controller-uid": job_uid,
                "batch.kubernetes.io/controller-uid": job_uid,
                "batch.kubernetes.io/job-completion-index": str(index),
            },
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": job_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "name": f"{job}-{index}-{suffix}",
            "uid": str(uuid.UUID(int=index * 7919 + 11)),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-01-01T00:00:01Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {"f:job-name": {}}}},
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Succeeded" if index % 20 else "Failed",
            "qosClass": "BestEffort",
            "hostIP": "127.0.0.1",
            "startTime": "2026-01-01T00:00:00Z",
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {"terminated": {"exitCode": 1 if index % 20 == 0 else 0, "reason": "Completed"}},
                    "containerID": f"sim://{index:032x}",
                }
            ],
        },
    }


def _fill(store: Store, pods: list[Obj]) -> list[Obj]:
    return [store.create("pods", p["metadata"]["namespace"], p["metadata"]["name"], p) for p in pods]


def _mixed_pods() -> list[Obj]:
    """Two Jobs' pods with the token volume, one Job's without, and pods no Job owns, interleaved."""
    pods: list[Obj] = []
    for i in range(30):
        pods.append(job_pod(i, token_volume=True))
        pods.append(job_pod(i, token_volume=False, job_uid=OTHER_JOB_UID, job="plain"))
        pods.append(job_pod(i, token_volume=True, job_uid=str(uuid.UUID(int=99)), job="other"))
        if i % 3 == 0:
            lone = job_pod(i, token_volume=bool(i % 2), job="lone")
            lone["metadata"]["labels"] = {"app": "lone"}
            pods.append(lone)
    return pods


def _packed(store: Store) -> int:
    return sum(r.data[0] == MARK for r in store._buckets["pods"].records.values())


@pytest.mark.parametrize("token_volume", [True, False], ids=["with-token-volume", "without-token-volume"])
def test_a_packed_record_reads_back_byte_identical(token_volume: bool) -> None:
    plain, packed = MemoryStore(cold_after=0), MemoryStore(cold_after=1)
    pods = [job_pod(i, token_volume=token_volume) for i in range(50)]
    written = _fill(plain, pods)
    assert _fill(packed, pods) == written  # same objects, same resourceVersions
    assert _packed(plain) == 0
    assert _packed(packed) == 48  # all but the dictionary (the first) and the newest write
    for obj in written:
        name = obj["metadata"]["name"]
        assert packed.get_raw("pods", "default", name) == plain.get_raw("pods", "default", name) == orjson.dumps(obj)
        assert packed.get("pods", "default", name) == obj
    assert packed.list_raw("pods") == plain.list_raw("pods")
    selector = "batch.kubernetes.io/job-completion-index in (3,4,5)"
    assert packed.list_raw("pods", label_selector=selector) == plain.list_raw("pods", label_selector=selector)


def test_a_kjobs_up_pod_packs_to_a_tenth_of_its_json() -> None:
    store = MemoryStore(cold_after=1)
    _fill(store, [job_pod(i, token_volume=True) for i in range(3)])
    record = store._buckets["pods"].records[f"default/{job_pod(1, token_volume=True)['metadata']['name']}"]
    assert record.data[0] == MARK
    assert len(record.raw) > 2000
    assert len(record.data) * 10 < len(record.raw)


def test_every_read_is_the_same_over_mixed_groups(make_store: StoreFactory) -> None:
    """Jobs with and without the token volume and unowned pods interleaved: LIST, paged LIST, GET, WATCH from 0
    and from a revision, updates and deletes of packed records give what a store that never packs gives."""
    plain, packed = MemoryStore(cold_after=0), make_store(cold_after=1)
    pods = _mixed_pods()
    assert _fill(packed, pods) == _fill(plain, pods)
    assert _packed(packed) > len(pods) * 3 // 4
    start = plain.revision
    # An update of a packed record, one that changes nothing (same revision back), and a delete of one.
    for store in (plain, packed):
        first = store.get("pods", "default", pods[0]["metadata"]["name"])
        first["metadata"]["labels"]["extra"] = "1"
        store.update("pods", "default", first["metadata"]["name"], first)
        same = store.get("pods", "default", pods[3]["metadata"]["name"])
        assert store.update("pods", "default", same["metadata"]["name"], same) == same
        store.delete("pods", "default", pods[4]["metadata"]["name"])
    assert packed.list_raw("pods") == plain.list_raw("pods")
    for limit in (1, 7):
        after = None
        while True:
            page = packed.list_page("pods", limit=limit, continue_after=after, at_revision=start)
            assert page == plain.list_page("pods", limit=limit, continue_after=after, at_revision=start)
            if page[2] is None:
                break
            after = page[2]
    for since in (0, start - 5):
        watches = [s.watch("pods", since=since) for s in (plain, packed)]
        got = [[(e.type, e.raw, e.revision) for e in w.drain()] for w in watches]
        for w in watches:
            w.close()
        assert got[0] == got[1]
        assert got[0]
    if isinstance(packed, SqliteStore):
        packed.close()
        reopened = SqliteStore(packed.path, cold_after=1, pack_above=0)
        try:
            assert _packed(reopened) > len(pods) // 2
            assert reopened.list_raw("pods") == plain.list_raw("pods")
        finally:
            reopened.close()


def test_a_record_written_recently_is_not_packed() -> None:
    store = MemoryStore(cold_after=10)
    _fill(store, [job_pod(i, token_volume=True) for i in range(15)])
    records = list(store._buckets["pods"].records.values())
    newest = sorted(records, key=lambda r: r.revision)[-10:]
    assert all(r.data[:1] == b"{" for r in newest)
    assert _packed(store) == 4  # 15 written, the 10 newest and the dictionary are not packed


def test_a_resource_with_fewer_objects_than_pack_above_stays_whole() -> None:
    """A small store pays no CPU for packing (`PACK_ABOVE`): records leaving the recent window while their resource
    holds fewer objects stay JSON; once it holds `pack_above`, cold records are packed, reads unchanged."""
    store = MemoryStore(cold_after=1, pack_above=10)
    pods = [job_pod(i, token_volume=True) for i in range(15)]
    _fill(store, pods[:9])
    assert _packed(store) == 0
    _fill(store, pods[9:])
    assert _packed(store) > 0
    assert all(r.data[:1] == b"{" for r in store._buckets["pods"].records.values() if r.revision <= 9)
    assert [store.get("pods", "default", p["metadata"]["name"])["metadata"]["name"] for p in pods] == [
        p["metadata"]["name"] for p in pods
    ]


def test_sqlite_store_packs_only_a_large_resource_by_default(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "db.sqlite"))
    try:
        assert store._packer is not None and store._packer.pack_above == PACK_ABOVE
    finally:
        store.close()


def test_a_jobs_dictionary_goes_with_its_last_pod() -> None:
    store = MemoryStore(cold_after=1)
    pods = [job_pod(i, token_volume=True) for i in range(5)]
    _fill(store, pods)
    _fill(store, [job_pod(0, token_volume=True, job_uid=OTHER_JOB_UID, job="next")])
    assert store._packer is not None
    dictionaries = store._packer._dictionaries
    assert ("pods", JOB_UID) in dictionaries
    for p in pods:
        store.delete("pods", "default", p["metadata"]["name"])
    store._history("pods").changes.clear()  # the bounded history would let go of them in time
    store._packer._recent.clear()
    gc.collect()
    assert ("pods", JOB_UID) not in dictionaries


def test_a_watch_event_of_a_packed_record_decodes(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "db.sqlite"), cold_after=1, pack_above=0)
    try:
        written = _fill(store, [job_pod(i, token_volume=True) for i in range(4)])
        w = store.watch("pods", since=int(written[0]["metadata"]["resourceVersion"]) - 1)
        events = w.drain()
        w.close()
        assert [e.type for e in events] == [EventType.ADDED] * 4
        assert [e.object for e in events] == written
    finally:
        store.close()


def test_a_record_with_finalizers_is_left_whole_until_they_are_removed() -> None:
    """A Job's pod keeps the tracking finalizer until the Job controller counts it: packing it would be undone by
    that write at once."""
    store = MemoryStore(cold_after=1)
    pods = [job_pod(i, token_volume=True) for i in range(4)]
    for p in pods:
        p["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    written = _fill(store, pods)
    assert _packed(store) == 0
    for obj in written:
        del obj["metadata"]["finalizers"]
        store.update("pods", "default", obj["metadata"]["name"], obj)
    assert _packed(store) == 2  # the first is the dictionary, the last one written is not cold yet
    assert store.list_raw("pods")[0] == [
        orjson.dumps(store.get("pods", "default", o["metadata"]["name"])) for o in written
    ]
