"""HTTP behaviour of the API server: discovery negotiation, OpenAPI, errors, Tables, watch framing, auth."""

from __future__ import annotations

import hashlib
import time

import httpx
import orjson
import pytest

from kjobs.server import discovery, registry
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import Server, job_manifest, pod_manifest
from tests.support import client_tls, shared_pki

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"


def _watch_lines(http: httpx.Client, url: str, count: int, **headers: str) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                events.append(orjson.loads(line))
            if len(events) == count:
                break
    return events


def test_version_reports_1_32(http: httpx.Client) -> None:
    version = http.get("/version").json()
    assert (version["major"], version["minor"]) == ("1", "32")
    assert version["gitVersion"].startswith("v1.32.0")


@pytest.mark.parametrize(
    ("accept", "aggregated"),
    [
        ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", True),
        ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", False),
        ("application/json", False),
    ],
)
def test_discovery_negotiation(http: httpx.Client, accept: str, aggregated: bool) -> None:
    response = http.get("/apis", headers={"Accept": accept})
    body = response.json()
    if aggregated:
        assert (
            response.headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )
        assert body["kind"] == "APIGroupDiscoveryList"
        batch = next(i for i in body["items"] if i["metadata"]["name"] == "batch")
        jobs = batch["versions"][0]["resources"][0]
        assert (jobs["resource"], jobs["scope"], jobs["categories"]) == ("jobs", "Namespaced", ["all"])
    else:
        assert body["kind"] == "APIGroupList"
        assert {g["name"] for g in body["groups"]} >= {"batch", "policy"}


BUILT_IN_GROUP_ORDER = [
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "batch",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "metrics.k8s.io",
]


def test_discovery_lists_groups_as_kube_aggregator_does(http: httpx.Client) -> None:
    """By each group's APIService priority, highest first (events.k8s.io 17750 ... discovery.k8s.io 16200), the
    metrics APIService's 100 last; the legacy and the aggregated documents alike."""
    legacy = http.get("/apis").json()
    assert [g["name"] for g in legacy["groups"]] == BUILT_IN_GROUP_ORDER
    aggregated = http.get("/apis", headers={"Accept": discovery.AGGREGATED_CONTENT_TYPE}).json()
    assert [i["metadata"]["name"] for i in aggregated["items"]] == BUILT_IN_GROUP_ORDER


def test_custom_groups_come_after_the_built_in_ones_by_apiservice_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom resource's group has priority 1000 (crdregistration); ties go by the APIService's name,
    `VERSION.GROUP`, the smallest of a group's versions placing it."""
    monkeypatch.setitem(registry.GROUPS, "b.example.com", ["v1"])
    monkeypatch.setitem(registry.GROUPS, "a.example.com", ["v2"])
    monkeypatch.setitem(registry.GROUPS, "c.example.com", ["v2", "v1"])
    assert discovery.served_groups()[-4:] == ["discovery.k8s.io", "b.example.com", "c.example.com", "a.example.com"]


def test_core_resource_list_advertises_eviction(http: httpx.Client) -> None:
    resources = http.get("/api/v1").json()["resources"]
    eviction = next(r for r in resources if r["name"] == "pods/eviction")
    assert (eviction["group"], eviction["version"], eviction["kind"], eviction["verbs"]) == (
        "policy",
        "v1",
        "Eviction",
        ["create"],
    )
    pods = next(r for r in resources if r["name"] == "pods")
    assert pods["shortNames"] == ["po"] and pods["categories"] == ["all"]
    jobs = next(r for r in http.get("/apis/batch/v1").json()["resources"] if r["name"] == "jobs")
    assert "shortNames" not in jobs


def test_openapi_v3_index_and_document(http: httpx.Client) -> None:
    index = http.get("/openapi/v3").json()["paths"]
    url = index["apis/batch/v1"]["serverRelativeURL"]
    response = http.get(url)
    assert response.headers["cache-control"] == "public, immutable" and response.headers["etag"]
    doc = response.json()
    patch = doc["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "batch", "version": "v1", "kind": "Job"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    assert "podFailurePolicy" in doc["components"]["schemas"]["io.k8s.api.batch.v1.JobSpec"]["properties"]


def test_openapi_v3_index_has_an_etag_and_answers_304_to_it(http: httpx.Client) -> None:
    """handler3's HandleDiscovery: the index's SHA-512 is its ETag, and http.ServeContent answers a matching
    If-None-Match with 304 Not Modified and no body."""
    response = http.get("/openapi/v3")
    etag = response.headers["etag"]
    assert etag == f'"{hashlib.sha512(response.content).hexdigest().upper()}"'
    again = http.get("/openapi/v3", headers={"If-None-Match": f'"other", {etag}'})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert http.get("/openapi/v3", headers={"If-None-Match": '"other"'}).status_code == 200


def test_openapi_v3_stale_hash_is_moved_to_the_current_one(http: httpx.Client) -> None:
    """kube-openapi's handler3: a hash that is not the document's is a 301 to the current link, never an
    immutable answer a client's HTTP cache would keep under the stale link."""
    current = http.get("/openapi/v3").json()["paths"]["api/v1"]["serverRelativeURL"]
    response = http.get("/openapi/v3/api/v1?hash=0BAD")
    assert response.status_code == 301 and response.headers["cache-control"] != "public, immutable"
    assert response.headers["location"] == current
    assert response.text == f'<a href="{current}">Moved Permanently</a>.\n\n'
    assert http.get(current).headers["cache-control"] == "public, immutable"


@pytest.mark.parametrize(
    ("method", "path", "code", "reason"),
    [
        ("GET", "/api/v1/namespaces/default/widgets", 404, "NotFound"),
        ("GET", "/apis/nope/v1", 404, "NotFound"),
        ("GET", "/api/v1/nodes/n1/eviction", 404, "NotFound"),
        ("PUT", "/api/v1/namespaces/default/pods", 405, "MethodNotAllowed"),
        ("POST", "/apis", 405, "MethodNotAllowed"),
        ("GET", "/api/v1/namespaces/default/pods/p/log/extra/segments", 404, "NotFound"),
    ],
)
def test_routing_errors_are_status_objects(
    http: httpx.Client, method: str, path: str, code: int, reason: str | None
) -> None:
    response = http.request(method, path)
    assert response.status_code == code
    if reason:
        body = response.json()
        assert (body["kind"], body["status"], body["reason"], body["code"]) == ("Status", "Failure", reason, code)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [(b"{not json", "application/json"), (b"[1, 2", None), (b"a: [", "application/yaml")],
)
def test_bad_bodies_are_400(http: httpx.Client, content: bytes, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = http.post(JOBS, content=content, headers=headers)
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"


def test_yaml_and_untyped_bodies(http: httpx.Client) -> None:
    import yaml

    created = http.post(
        PODS, content=yaml.safe_dump(pod_manifest("y")).encode(), headers={"content-type": "application/yaml"}
    )
    assert created.status_code == 201
    untyped = http.post(PODS, content=orjson.dumps(pod_manifest("u")))  # the Python client sends no Content-Type
    assert untyped.status_code == 201
    wrong = http.post(PODS, json={**pod_manifest("w"), "apiVersion": "v2"})
    assert wrong.status_code == 400


def test_tables(http: httpx.Client) -> None:
    http.post(JOBS, json=job_manifest("t1"))
    http.post(JOBS, json=job_manifest("t0"))
    table = http.get(JOBS, headers={"Accept": TABLE}).json()
    assert table["kind"] == "Table" and table["metadata"]["resourceVersion"]
    assert [row["cells"][0] for row in table["rows"]] == ["t0", "t1"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    full = http.get(JOBS + "?includeObject=Object", headers={"Accept": TABLE}).json()
    assert full["rows"][0]["object"]["kind"] == "Job"
    one = http.get(JOBS + "/t1", headers={"Accept": TABLE}).json()
    assert len(one["rows"]) == 1 and one["rows"][0]["cells"][:3] == ["t1", "Running", "0/1"]


def test_watch_framing(http: httpx.Client) -> None:
    http.post(PODS, json=pod_manifest("a"))
    listed = http.get(PODS).json()
    rv = listed["metadata"]["resourceVersion"]
    http.post(PODS, json=pod_manifest("b"))
    # from a list revision: only later changes
    events = _watch_lines(http, f"{PODS}?watch=true&resourceVersion={rv}", 1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "b")]  # type: ignore[index]
    # RV 0 / unset: a synthetic ADDED per object first
    events = _watch_lines(http, f"{PODS}?watch=1&resourceVersion=0", 2)
    assert [e["object"]["metadata"]["name"] for e in events] == ["a", "b"]  # type: ignore[index]
    # Table watch: header only on the first event
    events = _watch_lines(http, f"{PODS}?watch=true", 2, Accept=TABLE)
    assert events[0]["object"]["columnDefinitions"] and events[1]["object"]["columnDefinitions"] == []  # type: ignore[index]
    # bookmarks only when asked, with the watched kind
    events = _watch_lines(http, f"{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true", 2)
    assert events[1]["type"] == "BOOKMARK" and events[1]["object"]["kind"] == "Pod"  # type: ignore[index]
    events = _watch_lines(http, f"{PODS}?watch=true&resourceVersion={rv}&timeoutSeconds=1", 99)
    assert [e["type"] for e in events] == ["ADDED"]


def test_watch_with_send_initial_events_ends_them_with_a_bookmark(http: httpx.Client) -> None:
    """The WatchList form of a watch (client-go's reflector with WatchListClient): the current objects as ADDED
    events, then a bookmark annotated `k8s.io/initial-events-end` at the revision they were read at."""
    for name in ("a", "b"):
        http.post(PODS, json=pod_manifest(name))
    rv = http.get(PODS).json()["metadata"]["resourceVersion"]
    query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    events = _watch_lines(http, f"{PODS}?{query}&resourceVersion={rv}", 3)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [  # type: ignore[index]
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("BOOKMARK", None),
    ]
    assert events[2]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "resourceVersion": rv,
            "creationTimestamp": None,
            "annotations": {"k8s.io/initial-events-end": "true"},
        },
        "spec": {"containers": None},  # the zero Pod, as Go encodes it (docs/zerovalues43.md)
        "status": {},
    }
    (empty,) = _watch_lines(http, f"/api/v1/namespaces/kube-system/pods?{query}", 1)
    assert empty["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}  # type: ignore[index]
    # without initial events: from the revision given, or from now
    http.post(PODS, json=pod_manifest("c"))
    later = "watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
    events = _watch_lines(http, f"{PODS}?{later}&resourceVersion={rv}", 99)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "c")]  # type: ignore[index]
    assert _watch_lines(http, f"{PODS}?{later}", 99) == []


@pytest.mark.parametrize(
    ("query", "messages"),
    [
        (
            "sendInitialEvents=true",
            ["Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"],
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            ["Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"],
        ),
        (
            "sendInitialEvents=true&resourceVersionMatch=Exact",
            [
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                'Unsupported value: "Exact": supported values: "NotOlderThan"',
            ],
        ),
    ],
)
def test_watch_options_are_validated_as_validate_watch_options_does(
    http: httpx.Client, query: str, messages: list[str]
) -> None:
    response = http.get(f"{PODS}?watch=true&{query}")
    status = response.json()
    assert (response.status_code, status["reason"]) == (422, "Invalid")
    assert status["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert [c["message"] for c in status["details"]["causes"]] == messages
    assert {c["field"] for c in status["details"]["causes"]} == {"resourceVersionMatch"}


def test_watch_from_a_forgotten_revision_is_an_expired_error_event() -> None:
    store = MemoryStore(history_size=1)
    with serve(store, pki=shared_pki()) as url, httpx.Client(base_url=url, verify=client_tls()) as http:
        rv = http.get(PODS).json()["metadata"]["resourceVersion"]
        for name in ("x", "y", "z"):
            http.post(PODS, json=pod_manifest(name))
        events = _watch_lines(http, f"{PODS}?watch=true&resourceVersion={rv}", 99)
    store.close()
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"  # type: ignore[index]
    assert status["message"].startswith(f"too old resource version: {rv} (")  # type: ignore[index]


def test_empty_metadata_maps_and_lists_are_not_stored_for_a_job_either(http: httpx.Client) -> None:
    # ObjectMeta's omitempty: `annotations: {}` or `finalizers: []` in a manifest (as templates render them) is not
    # in the object a cluster returns; a created Job kept them (its stored copy is the Job strategy's).
    for manifest, url in ((job_manifest("bare"), JOBS), (pod_manifest("bare"), PODS)):
        manifest["metadata"] = {"name": "bare", "annotations": {}, "finalizers": [], "ownerReferences": []}
        created = http.post(url, json=manifest)
        assert created.status_code == 201, created.text
        meta = created.json()["metadata"]
        assert not {"annotations", "finalizers", "ownerReferences"} & set(meta), meta
        assert not {"f:annotations", "f:finalizers"} & set(meta["managedFields"][0]["fieldsV1"].get("f:metadata", {}))
        assert not {"annotations", "finalizers"} & set(http.get(f"{url}/bare").json()["metadata"])


def test_job_delete_without_policy_orphans_with_warning(http: httpx.Client) -> None:
    http.post(JOBS, json=job_manifest("o"))
    response = http.delete(JOBS + "/o")
    assert response.status_code == 200
    assert response.headers["warning"] == (
        '299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to '
        'remove them or set propagationPolicy=Orphan to suppress this warning"'
    )
    assert "warning" not in http.request("DELETE", JOBS + "/o", json={"propagationPolicy": "Orphan"}).headers


def test_delete_preconditions(http: httpx.Client) -> None:
    """`rest.BeforeDelete` checks a DELETE's preconditions first, in a Conflict that names the kind
    (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go): what `kubectl delete` prints on a cluster."""
    meta = http.post(PODS, json=pod_manifest("pre")).json()["metadata"]
    response = http.request("DELETE", PODS + "/pre", json={"preconditions": {"uid": "nope"}})
    assert response.status_code == 409
    assert response.json()["message"] == (
        f'Operation cannot be fulfilled on Pod "pre": the UID in the precondition (nope) does not match the UID in '
        f"record ({meta['uid']}). The object might have been deleted and then recreated"
    )
    assert response.json()["details"] == {"name": "pre", "kind": "Pod"}
    response = http.request("DELETE", PODS + "/pre", json={"preconditions": {"resourceVersion": "1"}})
    assert response.json()["message"] == (
        'Operation cannot be fulfilled on Pod "pre": the ResourceVersion in the precondition (1) does not match the '
        f"ResourceVersion in record ({meta['resourceVersion']}). The object might have been modified"
    )
    job = http.post(JOBS, json=job_manifest("pre")).json()["metadata"]
    response = http.request("DELETE", JOBS + "/pre", json={"preconditions": {"uid": "nope"}})
    assert response.json()["message"].startswith('Operation cannot be fulfilled on Job.batch "pre": the UID in')
    assert response.json()["details"] == {"name": "pre", "group": "batch", "kind": "Job"}
    assert http.get(JOBS + "/pre").json()["metadata"]["uid"] == job["uid"]


def test_finalizers_hold_deletion_until_removed(server: Server, http: httpx.Client) -> None:
    body = job_manifest("fin")
    body["metadata"]["finalizers"] = ["example.com/hold"]  # type: ignore[index]
    http.post(JOBS, json=body)
    marked = http.request("DELETE", JOBS + "/fin", json={"propagationPolicy": "Background"}).json()
    assert marked["metadata"]["deletionTimestamp"]
    patch = http.patch(
        JOBS + "/fin",
        content=b'{"metadata":{"finalizers":null}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patch.status_code == 200
    assert http.get(JOBS + "/fin").status_code == 404


def test_json_patch_and_unsupported_patch_type(http: httpx.Client) -> None:
    http.post(JOBS, json=job_manifest("jp"))
    ops = [{"op": "add", "path": "/metadata/labels/x", "value": "1"}]
    response = http.patch(
        JOBS + "/jp", content=orjson.dumps(ops), headers={"content-type": "application/json-patch+json"}
    )
    assert response.status_code == 200 and response.json()["metadata"]["labels"]["x"] == "1"
    response = http.patch(JOBS + "/jp", content=b"{}", headers={"content-type": "text/plain"})
    assert response.status_code == 415


def test_field_validation_warn_reports_escaped_warning(http: httpx.Client) -> None:
    body = job_manifest("warned", bogus=1)
    response = http.post(JOBS + "?fieldValidation=Warn", json=body)
    assert response.status_code == 201
    assert response.headers["warning"] == '299 - "unknown field \\"spec.bogus\\""'
    assert "bogus" not in response.json()["spec"]


def test_namespaces_lifecycle(http: httpx.Client) -> None:
    denied = http.delete("/api/v1/namespaces/default")
    assert denied.status_code == 403
    assert denied.json()["message"] == 'namespaces "default" is forbidden: this namespace may not be deleted'
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).json()["status"] == {"phase": "Active"}
    http.post("/apis/batch/v1/namespaces/team/jobs", json=job_manifest("inside"))
    assert http.delete("/api/v1/namespaces/team").status_code == 200
    assert http.get("/api/v1/namespaces/team").status_code == 404
    assert http.get("/apis/batch/v1/namespaces/team/jobs").json()["items"] == []


def test_job_warnings_are_sent_as_warning_headers(http: httpx.Client) -> None:
    body = job_manifest("not.a.label")
    response = http.post(JOBS, json=body)
    assert response.status_code == 201
    assert response.headers["warning"] == (
        '299 - "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; '
        'a DNS label is recommended: [must not contain dots]"'
    )


def test_cronjob_warnings_are_sent_as_warning_headers(http: httpx.Client) -> None:
    # pkg/registry/batch/cronjob/strategy.go WarningsOnCreate: the name, and the Job template's pod spec
    template = job_manifest("unused")["spec"]
    template["template"]["spec"]["imagePullSecrets"] = [{"name": ""}]
    body = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly.report"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": template}},
    }
    response = http.post("/apis/batch/v1/namespaces/default/cronjobs", json=body)
    assert response.status_code == 201
    assert response.headers.get_list("warning") == [
        '299 - "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; '
        'a DNS label is recommended: [must not contain dots]"',
        '299 - "spec.jobTemplate.spec.template.spec.imagePullSecrets[0].name: invalid empty name \\"\\""',
    ]


def test_metrics_endpoint_serves_the_given_registries() -> None:
    from prometheus_client import CollectorRegistry, Counter

    registry = CollectorRegistry()
    Counter("job_syncs", "The number of job syncs", namespace="job_controller", registry=registry).inc()
    store = MemoryStore()
    with (
        serve(store, app=create_app(store, metrics=[registry]), pki=shared_pki()) as url,
        httpx.Client(base_url=url, verify=client_tls()) as http,
    ):
        response = http.get("/metrics")
    store.close()
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "job_controller_job_syncs_total 1" in response.text.splitlines()  # client_golang writes 1, not 1.0


def test_yaml_aliases_are_refused(http: httpx.Client) -> None:
    bomb = b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"
    response = http.post(PODS, content=bomb, headers={"content-type": "application/yaml"})
    assert response.status_code == 400 and "aliases are not supported" in response.json()["message"]


def test_patch_without_content_type_is_415(http: httpx.Client) -> None:
    http.post(PODS, json=pod_manifest("ct"))
    response = http.patch(PODS + "/ct", content=b'{"metadata":{"labels":{"a":"b"}}}')
    assert response.status_code == 415 and response.json()["reason"] == "UnsupportedMediaType"


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded"])
def test_bodies_of_a_type_the_resource_does_not_accept_are_415(http: httpx.Client, content_type: str) -> None:
    body = orjson.dumps(pod_manifest("csrf"))  # valid JSON, as a cross-site form could send it
    response = http.post(PODS, content=body, headers={"content-type": content_type})
    assert response.status_code == 415
    status = response.json()
    assert (status["reason"], status["code"]) == ("UnsupportedMediaType", 415)
    assert status["message"].startswith("the body of the request was in an unknown format - accepted media types")
    assert http.get(PODS + "/csrf").status_code == 404


def test_a_body_without_content_type_is_json(http: httpx.Client) -> None:
    response = http.post(PODS, content=orjson.dumps(pod_manifest("untyped")))
    assert response.status_code == 201


def test_protobuf_bodies_beyond_kubectl_create_job_are_415(http: httpx.Client) -> None:
    pod = b"k8s\x00\n\x08\n\x02v1\x12\x03Pod\x12\x00"  # a Pod: not a kind this server reads as protobuf
    response = http.post(PODS, content=pod, headers={"content-type": "application/vnd.kubernetes.protobuf"})
    assert response.status_code == 415 and response.json()["reason"] == "UnsupportedMediaType"
    cbor = http.post(JOBS, content=b"\xa0", headers={"content-type": "application/cbor"})
    assert cbor.status_code == 415


def test_dry_run_writes_nothing(http: httpx.Client) -> None:
    created = http.post(JOBS + "?dryRun=All", json=job_manifest("dry"))
    assert created.status_code == 201 and created.json()["spec"]["backoffLimit"] == 6  # defaulted, validated
    assert http.get(JOBS + "/dry").status_code == 404
    http.post(JOBS, json=job_manifest("dry"))
    before = http.get(JOBS + "/dry").json()
    patched = http.patch(
        JOBS + "/dry?dryRun=All",
        content=b'{"spec":{"backoffLimit":1}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200 and patched.json()["spec"]["backoffLimit"] == 1
    assert http.get(JOBS + "/dry").json() == before
    assert http.request("DELETE", JOBS + "/dry?dryRun=All").status_code == 200
    assert http.get(JOBS + "/dry").json() == before
    # a dry-run create of a taken name fails as the create would (DryRunnableStorage.Create: KeyExistsError)
    taken = http.post(JOBS + "?dryRun=All", json=job_manifest("dry"))
    assert taken.status_code == 409
    assert (taken.json()["reason"], taken.json()["message"]) == ("AlreadyExists", 'jobs.batch "dry" already exists')
    generated = job_manifest("")
    generated["metadata"] = {"generateName": "dry"}
    assert http.post(JOBS + "?dryRun=All", json=generated).json()["metadata"]["name"].startswith("dry")


def test_a_dry_run_delete_answers_what_the_delete_would(http: httpx.Client) -> None:
    """DryRunnableStorage computes the graceful or finalizer update, or reads the object to delete, and stores
    neither: the answer is the DELETE's own, the object as marked for deletion or the Success Status."""
    job = http.post(JOBS, json=job_manifest("dd")).json()
    background = http.request("DELETE", JOBS + "/dd", params={"dryRun": "All", "propagationPolicy": "Background"})
    assert background.status_code == 200
    assert background.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "dd", "group": "batch", "kind": "jobs", "uid": job["metadata"]["uid"]},
    }
    foreground = http.request("DELETE", JOBS + "/dd", params={"dryRun": "All", "propagationPolicy": "Foreground"})
    meta = foreground.json()["metadata"]
    assert (meta["finalizers"], meta["deletionGracePeriodSeconds"]) == (["foregroundDeletion"], 0)
    assert meta["deletionTimestamp"] and meta["resourceVersion"] == job["metadata"]["resourceVersion"]
    http.post(PODS, json=pod_manifest("dp", node="n1"))
    pod = http.request("DELETE", PODS + "/dp", params={"dryRun": "All"}).json()
    assert (pod["kind"], pod["metadata"]["deletionGracePeriodSeconds"]) == ("Pod", 30)
    assert pod["metadata"]["deletionTimestamp"]
    assert "deletionTimestamp" not in http.get(PODS + "/dp").json()["metadata"]
    assert http.get(JOBS + "/dd").json() == job


def test_delete_collection_by_label(http: httpx.Client) -> None:
    for name, tier in (("c1", "a"), ("c2", "a"), ("c3", "b")):
        http.post(PODS, json=pod_manifest(name, labels={"tier": tier}))
    response = http.delete(PODS + "?labelSelector=tier%3Da")
    assert response.status_code == 200 and response.json()["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in response.json()["items"]] == ["c1", "c2"]
    assert [p["metadata"]["name"] for p in http.get(PODS).json()["items"]] == ["c3"]


def test_apiserver_request_metrics(http: httpx.Client) -> None:
    http.post(JOBS, json=job_manifest("m"))
    http.get(JOBS + "/m")
    http.get(JOBS + "/missing")
    http.get(JOBS)
    text = http.get("/metrics").text
    for line in (
        'apiserver_request_total{code="201",component="apiserver",dry_run="",group="batch",resource="jobs",'
        'scope="namespace",subresource="",verb="POST",version="v1"} 1',
        'apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch",resource="jobs",'
        'scope="resource",subresource="",verb="GET",version="v1"} 1',
        'apiserver_request_total{code="404",component="apiserver",dry_run="",group="batch",resource="jobs",'
        'scope="resource",subresource="",verb="GET",version="v1"} 1',
        'apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch",resource="jobs",'
        'scope="namespace",subresource="",verb="LIST",version="v1"} 1',
    ):
        assert line in text.splitlines(), line
    assert 'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="batch"' in text


@pytest.mark.parametrize(
    ("method", "url", "query", "headers", "message"),
    [
        pytest.param(
            "POST",
            JOBS,
            "dryRun=Foo",
            {},
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"',
            id="create-dry-run",
        ),
        pytest.param(
            "PUT",
            f"{JOBS}/w",
            "fieldValidation=strict",
            {},
            'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
            'supported values: "", "Ignore", "Strict", "Warn"',
            id="update-field-validation",
        ),
        pytest.param(
            "PATCH",
            f"{JOBS}/w",
            "force=true",
            {"content-type": "application/merge-patch+json"},
            'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
            id="patch-force",
        ),
        pytest.param(
            "PATCH",
            f"{JOBS}/w",
            "fieldManager=" + "m" * 129,
            {"content-type": "application/merge-patch+json"},
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
            id="patch-long-manager",
        ),
    ],
)
def test_write_options_are_validated_before_the_body(
    http: httpx.Client, method: str, url: str, query: str, headers: dict[str, str], message: str
) -> None:
    """What `ValidateCreateOptions`/`ValidateUpdateOptions`/`ValidatePatchOptions` refuse is a 422 of the options
    kind, whatever the body (here: not even JSON) and before the object is looked up."""
    response = http.request(method, f"{url}?{query}", content=b"{not json", headers=headers)
    status = response.json()
    assert (response.status_code, status["reason"], status["message"]) == (422, "Invalid", message)
    assert status["details"]["group"] == "meta.k8s.io"


@pytest.mark.parametrize(
    "query",
    ["limit=abc", "limit=1.5", "limit=1_0", "timeoutSeconds=abc", "watch=true&timeoutSeconds=2s"],
)
def test_an_integer_parameter_that_does_not_decode_is_a_bad_request(http: httpx.Client, query: str) -> None:
    """`DecodeParameters` fails on it (strconv.ParseInt), and the handler answers 400 rather than ignoring it."""
    response = http.get(f"{PODS}?{query}")
    value = query.rpartition("=")[2]
    assert (response.status_code, response.json()["message"]) == (
        400,
        f'strconv.ParseInt: parsing "{value}": invalid syntax',
    )


def test_boolean_parameters_decode_as_apimachinery_decodes_them(http: httpx.Client) -> None:
    """Only `false` and `0` are false: `watch=yes` is a watch, as on a real cluster."""
    http.post(PODS, json=pod_manifest("a"))
    for value in ("yes", "True", "1"):
        events = _watch_lines(http, f"{PODS}?watch={value}", 1)
        assert [e["type"] for e in events] == ["ADDED"]
    for value in ("false", "FALSE", "0"):
        assert http.get(f"{PODS}?watch={value}").json()["kind"] == "PodList"


def test_a_watch_gets_a_bookmark_shortly_before_its_timeout() -> None:
    """Two seconds before `timeoutSeconds` runs out an idle watch that allows bookmarks gets one (the cacher's
    `nextBookmarkTime`), however far off the periodic one is, so a client resumes from the latest revision."""
    store = MemoryStore()
    app = create_app(store, bookmark_interval=60)
    with serve(store, app=app, pki=shared_pki()) as url, httpx.Client(base_url=url, verify=client_tls()) as http:
        rv = http.get(PODS).json()["metadata"]["resourceVersion"]
        started = time.monotonic()
        with http.stream("GET", f"{PODS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=3") as response:
            lines = [(orjson.loads(line), time.monotonic() - started) for line in response.iter_lines() if line]
        assert [(event["type"], event["object"]["metadata"]) for event, _ in lines] == [  # type: ignore[index]
            ("BOOKMARK", {"resourceVersion": rv, "creationTimestamp": None})
        ]
        assert 0.5 < lines[0][1] < 2.5
        short = _watch_lines(http, f"{PODS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1", 99)
        assert short == []  # too short for one
    store.close()


def test_a_watch_without_timeout_seconds_ends_after_one_to_two_min_request_timeouts() -> None:
    """A watch that names no `timeoutSeconds` does not run for ever: kube-apiserver ends it after a random time
    between one and two `--min-request-timeout`s (1,800 s by default; 0.5 s here), and the client watches again."""
    store = MemoryStore()
    app = create_app(store, min_request_timeout=0.5)
    with serve(store, app=app, pki=shared_pki()) as url, httpx.Client(base_url=url, verify=client_tls()) as http:
        ends = []
        for _ in range(3):
            started = time.monotonic()
            assert _watch_lines(http, f"{PODS}?watch=true", 99) == []
            ends.append(time.monotonic() - started)
        assert all(0.45 < end < 1.0 + 1.5 for end in ends), ends  # slack for a loaded machine
    store.close()


def test_curl_browsers_and_pretty_get_indented_json(http: httpx.Client) -> None:
    """responsewriters `isPrettyPrint`: `?pretty=` decides when given (strconv.ParseBool, an unparsable value is
    false), else a User-Agent of curl, wget or a browser gets JSON indented by two spaces (json.MarshalIndent);
    other clients get it compact. Watches are not indented."""
    http.post(JOBS, json=job_manifest("pp"))
    compact = http.get(JOBS + "/pp")
    curl = http.get(JOBS + "/pp", headers={"user-agent": "curl/8.5.0"})
    assert curl.content == orjson.dumps(compact.json(), option=orjson.OPT_INDENT_2)
    assert curl.headers["content-length"] == str(len(curl.content))
    assert curl.text.startswith('{\n  "apiVersion": "batch/v1",\n')
    assert http.get(JOBS + "/pp", params={"pretty": "true"}).content == curl.content
    assert http.get(JOBS + "/pp", params={"pretty": "1"}).content == curl.content
    for value in ("false", "yes"):
        answer = http.get(JOBS + "/pp", params={"pretty": value}, headers={"user-agent": "curl/8.5.0"})
        assert answer.content == compact.content
    missing = http.get(JOBS + "/none", headers={"user-agent": "Mozilla/5.0 (X11)"})
    assert missing.status_code == 404 and missing.text.startswith('{\n  "kind": "Status",\n')
    assert list(missing.json())[-2:] == ["details", "code"]
    with http.stream(
        "GET", JOBS, params={"watch": "1", "timeoutSeconds": "1"}, headers={"user-agent": "curl/8.5.0"}
    ) as watch:
        assert next(watch.iter_lines()).startswith('{"type":"ADDED"')
