"""Metadata-only reads (`as=PartialObjectMetadata[List]`), as client-go's metadata client (the garbage collector's)
asks for them: get, list and watch answer `PartialObjectMetadata`, and the wrong arity is 406."""

from __future__ import annotations

import httpx
import orjson

from tests.server.conftest import job_manifest, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"


def _accept(kind: str, version: str = "v1") -> str:
    """The Accept header of client-go's metadata client (protobuf first, which this server passes over)."""
    return (
        f"application/vnd.kubernetes.protobuf;as={kind};g=meta.k8s.io;v={version},"
        f"application/json;as={kind};g=meta.k8s.io;v={version},application/json"
    )


def test_get_and_list_answer_metadata_only(http: httpx.Client) -> None:
    assert http.post(PODS, json=pod_manifest("m1", labels={"app": "x"})).status_code == 201
    assert http.post(PODS, json=pod_manifest("m2")).status_code == 201
    full = http.get(f"{PODS}/m1").json()

    one = http.get(f"{PODS}/m1", headers={"Accept": _accept("PartialObjectMetadata")})
    assert one.status_code == 200 and one.headers["content-type"] == "application/json"
    assert one.json() == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]}

    listed = http.get(PODS, params={"limit": 1}, headers={"Accept": _accept("PartialObjectMetadataList")}).json()
    assert listed["kind"] == "PartialObjectMetadataList" and listed["apiVersion"] == "meta.k8s.io/v1"
    assert listed["metadata"].keys() == {"resourceVersion", "continue", "remainingItemCount"}
    assert listed["metadata"]["remainingItemCount"] == 1  # m2
    assert listed["items"] == [
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]}
    ]
    older = http.get(JOBS, headers={"Accept": _accept("PartialObjectMetadataList", "v1beta1")}).json()
    assert older["apiVersion"] == "meta.k8s.io/v1beta1" and older["items"] == []


def test_wrong_arity_is_not_acceptable(http: httpx.Client) -> None:
    assert http.post(JOBS, json=job_manifest("mj")).status_code == 201
    listed = http.get(JOBS, headers={"Accept": _accept("PartialObjectMetadata")})
    assert listed.status_code == 406
    assert listed.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "you requested PartialObjectMetadata, but the requested object is a list (*batch.JobList)",
        "reason": "NotAcceptable",
        "code": 406,
    }
    one = http.get(f"{JOBS}/mj", headers={"Accept": _accept("PartialObjectMetadataList")})
    assert one.status_code == 406
    assert one.json()["message"] == (
        "you requested PartialObjectMetadataList, but the requested object is not a list (*batch.Job)"
    )


def test_unknown_transformations_fall_through_to_the_next_range(http: httpx.Client) -> None:
    assert http.post(PODS, json=pod_manifest("m3")).status_code == 201
    accept = "application/json;as=Widget;g=meta.k8s.io;v=v1,application/json"
    assert http.get(f"{PODS}/m3", headers={"Accept": accept}).json()["kind"] == "Pod"


def test_watch_events_carry_metadata_only(http: httpx.Client) -> None:
    assert http.post(PODS, json=pod_manifest("w1")).status_code == 201
    rv = http.get(PODS).json()["metadata"]["resourceVersion"]
    assert http.delete(f"{PODS}/w1").status_code == 200
    url = f"{PODS}?watch=true&resourceVersion={rv}"
    with http.stream("GET", url, headers={"Accept": _accept("PartialObjectMetadata")}) as response:
        assert response.status_code == 200
        events = [orjson.loads(next(line for line in response.iter_lines() if line))]
    assert [e["type"] for e in events] == ["DELETED"]
    obj = events[0]["object"]
    assert obj["kind"] == "PartialObjectMetadata" and obj["apiVersion"] == "meta.k8s.io/v1"
    assert set(obj) == {"kind", "apiVersion", "metadata"} and obj["metadata"]["name"] == "w1"
    refused = http.get(f"{PODS}?watch=true", headers={"Accept": _accept("PartialObjectMetadataList")})
    assert refused.status_code == 406
