"""A list's items as kube-apiserver writes them: a built-in kind's items have no `apiVersion` and `kind` (the list
has them), whatever order the stored object's keys came in; a custom resource's items, a Table's rows and a
watch's objects keep theirs (kjobs.server.listitems)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from kjobs.server.listitems import untyped_raws
from tests.server.conftest import job_manifest, pod_manifest

JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_a_list_of_a_built_in_kind_has_untyped_items(http: httpx.Client) -> None:
    for name in ("a", "b"):
        assert http.post(JOBS, json=job_manifest(name)).status_code == 201
    # a body whose keys come in another order, and one without apiVersion and kind (the path names them)
    reordered = job_manifest("c")
    reordered = {"metadata": reordered["metadata"], "spec": reordered["spec"], "kind": "Job", "apiVersion": "batch/v1"}
    assert http.post(JOBS, json=reordered).status_code == 201
    bare = {k: v for k, v in pod_manifest("p").items() if k not in ("apiVersion", "kind")}
    assert http.post(PODS, json=bare).status_code == 201

    body = http.get(JOBS).json()
    assert (body["kind"], body["apiVersion"]) == ("JobList", "batch/v1")
    assert [item["metadata"]["name"] for item in body["items"]] == ["a", "b", "c"]
    for item in body["items"]:
        assert "apiVersion" not in item and "kind" not in item, item
        assert next(iter(item)) == "metadata"
    paged = http.get(JOBS, params={"limit": 1}).json()
    assert paged["metadata"]["continue"] and list(paged["items"][0]) == ["metadata", "spec", "status"]
    pods = http.get(PODS).json()
    assert pods["kind"] == "PodList" and "kind" not in pods["items"][0]
    # across namespaces, and for a view (events.k8s.io serves the core Events)
    assert all("kind" not in item for item in http.get("/apis/batch/v1/jobs").json()["items"])
    events = http.get("/apis/events.k8s.io/v1/events").json()
    assert events["kind"] == "EventList" and all("kind" not in item for item in events["items"])

    # one object, and a watch's objects, are typed
    one = http.get(f"{JOBS}/c").json()
    assert (one["apiVersion"], one["kind"]) == ("batch/v1", "Job")
    with http.stream("GET", JOBS, params={"watch": "1", "timeoutSeconds": "1"}) as stream:
        lines = [line for line in stream.iter_lines() if line]
    objects = [json.loads(line)["object"] for line in lines]
    assert [(o["apiVersion"], o["kind"]) for o in objects] == [("batch/v1", "Job")] * 3
    # a Table's rows carry the whole object, typed (asTable converts each)
    table = http.get(JOBS, params={"includeObject": "Object"}, headers={"Accept": TABLE}).json()
    assert [row["object"]["kind"] for row in table["rows"]] == ["Job", "Job", "Job"]


def test_a_delete_collection_answers_untyped_items(http: httpx.Client) -> None:
    for name in ("a", "b"):
        assert http.post(JOBS, json=job_manifest(name)).status_code == 201
    body = http.request("DELETE", JOBS, json={"propagationPolicy": "Background"}).json()
    assert body["kind"] == "JobList"
    assert [item["metadata"]["name"] for item in body["items"]] == ["a", "b"]
    assert all("kind" not in item and "apiVersion" not in item for item in body["items"])


CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


def test_a_custom_resources_list_keeps_its_items_kind(http: httpx.Client) -> None:
    # apiextensions-apiserver lists the stored unstructured objects as they are
    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).status_code == 201
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "size": 3}
    deadline = time.monotonic() + 20
    while (created := http.post(widgets, json=widget)).status_code == 404 and time.monotonic() < deadline:
        time.sleep(0.05)  # served once the CRD is Established
    assert created.status_code == 201, created.text
    body = http.get(widgets).json()
    assert body["kind"] == "WidgetList"
    assert [(item["apiVersion"], item["kind"]) for item in body["items"]] == [("example.com/v1", "Widget")]
    deleted = http.request("DELETE", widgets, json={}).json()
    assert [(item["apiVersion"], item["kind"]) for item in deleted["items"]] == [("example.com/v1", "Widget")]


def test_untyped_raws_cuts_either_order_and_decodes_any_other() -> None:
    raws = [
        b'{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"a"}}',
        b'{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"b"}}',
        b'{"metadata":{"name":"c"},"kind":"Event","apiVersion":"events.k8s.io/v1","note":"x"}',
        b'{"apiVersion":"v1","kind":"Event","metadata":{"name":"d"}}',  # another version's: decoded too
    ]
    joined = untyped_raws(raws, "events.k8s.io/v1", "Event")
    assert json.loads(b"[" + joined + b"]") == [
        {"metadata": {"name": "a"}},
        {"metadata": {"name": "b"}},
        {"metadata": {"name": "c"}, "note": "x"},
        {"metadata": {"name": "d"}},
    ]
    assert untyped_raws([], "v1", "Pod") == b""
