"""DELETE while another client writes the object: the server retries its read-modify-write, as Kubernetes'
registry does (`GuaranteedUpdate` retries a lost compare-and-swap), and answers 409 only to preconditions.

`RacingStorage` lands one write by "someone else" (the node agent, the scheduler) between the delete's read
and its compare-and-swap, deterministically.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kubernetes import client

from kjobs.api.types import Obj
from kjobs.server.storage import Storage
from tests.server.conftest import Server, job_manifest, pod_manifest
from tests.support import python_client_config

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"


class RacingStorage(Storage):
    """Before each of the next `races` compare-and-swap updates of `target`, another writer changes it."""

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage.store)
        self.target: tuple[str, str] = ("", "")
        self.races = 0
        self.landed = 0

    def arm(self, resource: str, name: str, races: int = 1) -> None:
        """Race the next `races` guarded writes of `resource` `name`."""
        self.target, self.races = (resource, name), races

    async def update(self, resource: str, obj: Obj, *, expected_rv: str | None) -> Obj:
        name = str((obj.get("metadata") or {}).get("name"))
        if self.races and expected_rv and (resource, name) == self.target:
            self.races -= 1
            namespace = str(obj["metadata"].get("namespace") or "")
            theirs = self.store.get(resource, namespace, name)
            theirs["metadata"].setdefault("annotations", {})["racer"] = str(self.landed)
            self.store.update(resource, namespace, name, theirs)
            self.landed += 1
        return await super().update(resource, obj, expected_rv=expected_rv)


@pytest.fixture
def racing(server: Server) -> Iterator[RacingStorage]:
    storage = RacingStorage(server.app.service.store)
    server.app.service.store = storage
    yield storage


def _owned_pod(name: str, job: Obj) -> dict[str, Any]:
    pod = pod_manifest(name, node="n1")
    pod["metadata"]["ownerReferences"] = [  # type: ignore[index]
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "blockOwnerDeletion": True,  # as the Job controller sets it: the pod holds a foreground deletion
        }
    ]
    return pod


def test_graceful_pod_delete_survives_a_concurrent_write(http: httpx.Client, racing: RacingStorage) -> None:
    http.post(PODS, json=pod_manifest("busy", node="n1"))
    racing.arm("pods", "busy", races=3)
    response = http.delete(PODS + "/busy")
    assert response.status_code == 200, response.text
    pod = response.json()
    assert pod["metadata"]["deletionTimestamp"] and pod["metadata"]["deletionGracePeriodSeconds"] == 30
    assert pod["metadata"]["annotations"] == {"racer": "2"}  # the other writer's changes are kept
    assert racing.landed == 3


def test_finalizer_delete_survives_a_concurrent_write(http: httpx.Client, racing: RacingStorage) -> None:
    body = job_manifest("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]  # type: ignore[index]
    http.post(JOBS, json=body)
    racing.arm("jobs.batch", "held")
    response = http.request("DELETE", JOBS + "/held", json={"propagationPolicy": "Background"})
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["deletionTimestamp"] and racing.landed == 1


def test_foreground_delete_survives_a_concurrent_write(http: httpx.Client, racing: RacingStorage) -> None:
    job = http.post(JOBS, json=job_manifest("fg")).json()
    http.post(PODS, json=_owned_pod("fg-pod", job))
    racing.arm("jobs.batch", "fg")
    response = http.request("DELETE", JOBS + "/fg", json={"propagationPolicy": "Foreground"})
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["finalizers"] == ["foregroundDeletion"] and racing.landed == 1
    assert http.get(PODS + "/fg-pod").json()["metadata"]["deletionTimestamp"]


def test_foreground_owner_goes_when_its_last_finalizer_races(http: httpx.Client, racing: RacingStorage) -> None:
    body = job_manifest("fgf")
    body["metadata"]["finalizers"] = ["example.com/hold"]  # type: ignore[index]
    job = http.post(JOBS, json=body).json()
    http.post(PODS, json=_owned_pod("fgf-pod", job))
    http.request("DELETE", JOBS + "/fgf", json={"propagationPolicy": "Foreground"})
    racing.arm("jobs.batch", "fgf")
    assert http.request("DELETE", PODS + "/fgf-pod", json={"gracePeriodSeconds": 0}).status_code == 200
    # the dependent is gone, so foregroundDeletion comes off despite the concurrent write
    assert http.get(JOBS + "/fgf").json()["metadata"]["finalizers"] == ["example.com/hold"]
    assert racing.landed == 1


def test_background_cascade_marks_a_dependent_written_concurrently(http: httpx.Client, racing: RacingStorage) -> None:
    job = http.post(JOBS, json=job_manifest("bg")).json()
    http.post(PODS, json=_owned_pod("bg-pod", job))
    racing.arm("pods", "bg-pod")
    assert http.request("DELETE", JOBS + "/bg", json={"propagationPolicy": "Background"}).status_code == 200
    assert http.get(PODS + "/bg-pod").json()["metadata"]["deletionTimestamp"] and racing.landed == 1


def test_delete_collection_survives_a_concurrent_write(http: httpx.Client, racing: RacingStorage) -> None:
    for name in ("c1", "c2"):
        http.post(PODS, json=pod_manifest(name, node="n1"))
    racing.arm("pods", "c2")
    response = http.delete(PODS)
    assert response.status_code == 200, response.text
    assert [p["metadata"]["name"] for p in response.json()["items"]] == ["c1", "c2"]
    assert all(p["metadata"]["deletionTimestamp"] for p in http.get(PODS).json()["items"])


def test_a_resource_version_precondition_still_conflicts(http: httpx.Client, racing: RacingStorage) -> None:
    rv = http.post(PODS, json=pod_manifest("pinned", node="n1")).json()["metadata"]["resourceVersion"]
    racing.arm("pods", "pinned")
    response = http.request("DELETE", PODS + "/pinned", json={"preconditions": {"resourceVersion": rv}})
    assert response.status_code == 409
    status = response.json()
    assert status["reason"] == "Conflict"
    # the first read passed `BeforeDelete`; the retry's read fails in storage, with its invalid-object error
    assert status["message"].startswith(
        'Operation cannot be fulfilled on pods "pinned": StorageError: invalid object, Code: 4, '
        "Key: /registry/pods/default/pinned, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: "
    )
    assert "deletionTimestamp" not in http.get(PODS + "/pinned").json()["metadata"]


def test_a_uid_precondition_holds_across_the_retry(http: httpx.Client, racing: RacingStorage) -> None:
    uid = http.post(PODS, json=pod_manifest("same", node="n1")).json()["metadata"]["uid"]
    racing.arm("pods", "same")
    response = http.request("DELETE", PODS + "/same", json={"preconditions": {"uid": uid}})
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["deletionTimestamp"]


def test_python_client_delete_survives_a_concurrent_write(server: Server, racing: RacingStorage) -> None:
    with client.ApiClient(python_client_config(server.url, server.pki)) as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", pod_manifest("py", node="n1"))
        racing.arm("pods", "py", races=2)
        core.delete_namespaced_pod("py", "default")
        assert core.read_namespaced_pod("py", "default").metadata.deletion_timestamp is not None


def _evict(http: httpx.Client, name: str, **delete_options: object) -> httpx.Response:
    body: dict[str, object] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if delete_options:
        body["deleteOptions"] = delete_options
    return http.post(f"{PODS}/{name}/eviction", json=body)


def test_eviction_survives_a_concurrent_write(http: httpx.Client, racing: RacingStorage) -> None:
    """eviction.go writes `DisruptionTarget` with `GuaranteedUpdate`: the node agent's status write in between
    makes it read again, not answer 409."""
    http.post(PODS, json=pod_manifest("evicted", node="n1"))
    racing.arm("pods", "evicted", races=3)
    response = _evict(http, "evicted")
    assert response.status_code == 201, response.text
    pod = http.get(PODS + "/evicted").json()
    assert pod["metadata"]["deletionTimestamp"]
    assert pod["metadata"]["annotations"] == {"racer": "2"}
    assert [c["reason"] for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"] == [
        "EvictionByEvictionAPI"
    ]
    assert racing.landed == 3


def test_eviction_with_a_resource_version_precondition_still_conflicts(
    http: httpx.Client, racing: RacingStorage
) -> None:
    rv = http.post(PODS, json=pod_manifest("kept", node="n1")).json()["metadata"]["resourceVersion"]
    racing.arm("pods", "kept")
    response = _evict(http, "kept", preconditions={"resourceVersion": rv})
    assert response.status_code == 409 and response.json()["reason"] == "Conflict"
    assert "deletionTimestamp" not in http.get(PODS + "/kept").json()["metadata"]
