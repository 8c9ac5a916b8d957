"""Go's zero values as a 1.32 kube-apiserver writes them, where kjobs left them out (docs/zerovalues43.md): a core
Event's `eventTime: null`, a PodDisruptionBudget's zero counters, an eviction's `DisruptionTarget` with
`lastProbeTime: null`, a watch bookmark's zero object; and the checker `kjobs.server.gozero` that found them."""

from __future__ import annotations

import httpx
import orjson

from kjobs.server import gotypes, gotypesgen, gozero
from tests.server.conftest import pod_manifest

PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def test_a_core_event_written_without_its_always_encoded_fields_reads_back_with_them(http: httpx.Client) -> None:
    """A core Event's `eventTime` (MicroTime), `firstTimestamp`/`lastTimestamp`, `source` and `involvedObject`
    are structs, `reportingComponent`/`reportingInstance` untagged `omitempty`: Go writes them all."""
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "zv1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test",
        "message": "by hand",
    }
    created = http.post(EVENTS, json=event)
    assert created.status_code == 201, created.text
    for read in (created.json(), http.get(f"{EVENTS}/zv1").json()):
        assert {key: read[key] for key in gozero.zero_object("", "Event") or {} if key != "metadata"} == {
            "eventTime": None,
            "firstTimestamp": None,
            "lastTimestamp": None,
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "source": {},
            "reportingComponent": "",
            "reportingInstance": "",
        }
        assert gozero.differences(read, "", "Event") == []
    v1 = http.get("/apis/events.k8s.io/v1/namespaces/default/events/zv1").json()
    assert v1["eventTime"] is None and v1["deprecatedSource"] == {}


def test_a_created_budget_has_its_zero_counters(http: httpx.Client) -> None:
    """`PrepareForCreate` clears a PodDisruptionBudget's status; its four counters have no `omitempty`, so a
    budget created with no status (`kubectl apply`) reads `currentHealthy: 0, ...` as one `kubectl create pdb`
    sends them."""
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "zv2"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "none"}}},
    }
    created = http.post(PDBS, json=pdb)
    assert created.status_code == 201, created.text
    assert created.json()["status"] == {
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "disruptionsAllowed": 0,
        "expectedPods": 0,
    }
    assert gozero.differences(http.get(f"{PDBS}/zv2").json(), "policy", "PodDisruptionBudget") == []


def test_an_evicted_pods_disruption_target_has_a_null_probe_time(http: httpx.Client) -> None:
    """eviction.go's `addConditionAndDeletePod` writes a Go PodCondition: its zero `lastProbeTime` is null."""
    pod = pod_manifest("zv3")
    pod["metadata"]["finalizers"] = ["example.com/keep"]  # type: ignore[index]
    assert http.post(PODS, json=pod).status_code == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "zv3", "namespace": "default"}}
    answer = http.post(f"{PODS}/zv3/eviction", json=eviction)
    assert answer.status_code == 201, answer.text
    read = http.get(f"{PODS}/zv3").json()
    (target,) = [c for c in read["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert "lastProbeTime" in target and target["lastProbeTime"] is None
    assert target["reason"] == "EvictionByEvictionAPI"


def test_a_bookmark_carries_the_kinds_zero_object(http: httpx.Client) -> None:
    """The cacher's bookmark is the kind's `newFunc()` with the revision set, encoded by Go: a Pod's has `spec:
    {containers: null}` and `status: {}`, a Job's its template's, every one `creationTimestamp: null`."""
    query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    for url, kind, api_version, rest in (
        (PODS, "Pod", "v1", {"spec": {"containers": None}, "status": {}}),
        (
            "/apis/batch/v1/namespaces/default/jobs",
            "Job",
            "batch/v1",
            {
                "spec": {"template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}}},
                "status": {},
            },
        ),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1", {}),
    ):
        with http.stream("GET", f"{url}?{query}") as response:
            line = next(line for line in response.iter_lines() if line)
        bookmark = orjson.loads(line)
        assert bookmark["type"] == "BOOKMARK"
        marked = bookmark["object"]
        assert list(marked)[:3] == ["kind", "apiVersion", "metadata"]
        rv = marked["metadata"]["resourceVersion"]
        assert marked == {
            "kind": kind,
            "apiVersion": api_version,
            "metadata": {
                "resourceVersion": rv,
                "creationTimestamp": None,
                "annotations": {"k8s.io/initial-events-end": "true"},
            },
            **rest,
        }


def test_the_checker_names_what_go_would_write_otherwise() -> None:
    """`gozero.differences`: a missing always-written field, a null where Go writes a zero scalar, an empty
    `omitempty` field Go drops, a field the Go struct lacks."""
    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {}},
        "spec": {"containers": [{"name": "main", "image": "busybox", "ports": [{"containerPort": None}]}]},
        "status": {
            "containerStatuses": [{"name": "main", "image": "busybox", "ready": False, "restartCount": 0}],
            "kjobsInternal": 1,
        },
    }
    assert gozero.differences(pod, "", "Pod") == [
        (".metadata.labels", "omitted", {}),
        (".spec.containers[0].ports[0].containerPort", "differs", 0),
        (".spec.containers[0].resources", "missing", {}),
        (".status.containerStatuses[0].imageID", "missing", ""),
        (".status.containerStatuses[0].lastState", "missing", {}),
        (".status.containerStatuses[0].state", "missing", {}),
        (".status.kjobsInternal", "unknown", 1),
    ]
    assert gozero.zero("resource.Quantity") == "0" and gozero.zero("*int32") is None
    assert gozero.zero("core/v1.DaemonEndpoint") == {"Port": 0}


def test_the_generator_records_the_fields_without_omitempty() -> None:
    """`gotypesgen.parse` keeps, per struct, the tags without `omitempty`, inline embeddings merged in."""
    source = (
        "type Outer struct {\n"
        '\tmetav1.TypeMeta `json:",inline"`\n'
        '\tName string `json:"name" protobuf:"bytes,1,opt,name=name"`\n'
        '\tCount *int32 `json:"count,omitempty"`\n'
        '\tInner `json:",inline"`\n'
        "}\n"
        "type Inner struct {\n"
        '\tReady bool `json:"ready"`\n'
        '\tSkipped string `json:"-"`\n'
        "}\n"
    )
    structs: dict[str, dict[str, str]] = {}
    always: dict[str, set[str]] = {}
    gotypesgen.parse("core/v1", source, structs, {}, always)
    assert gotypesgen.flatten_always(structs, always) == {
        "core/v1.Inner": ["ready"],
        "core/v1.Outer": ["name", "ready"],
    }


def test_absent_top_level_fields_read_back_at_their_zero_values(http: httpx.Client) -> None:
    """A Lease `kubectl apply`-ed without `spec` reads `spec: {}` (a struct); an EndpointSlice without `ports`
    reads `ports: null` (a slice tagged without omitempty), as Go's decode-then-encode gives them."""
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "zv5"}}
    assert http.post(leases, json=lease).json()["spec"] == {}
    assert http.put(f"{leases}/zv5", json=http.get(f"{leases}/zv5").json() | {"spec": None}).json()["spec"] == {}
    slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
    body = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "zv6"},
        "addressType": "IPv4",
        "endpoints": [],
    }
    created = http.post(slices, json=body)
    assert created.status_code == 201, created.text
    read = http.get(f"{slices}/zv6").json()
    assert "ports" in read and read["ports"] is None and read["endpoints"] == []
    assert gozero.differences(read, "discovery.k8s.io", "EndpointSlice") == []


def test_the_omitempty_table_names_fields_of_the_go_types() -> None:
    """`goalways-v1.32.json` and `gotypes-v1.32.json` come from one run of `gotypesgen`: every field it lists is
    a field of that struct; the fields known to lack `omitempty` are there, and those known to have it are not."""
    structs = gotypes._tables()[0]
    for struct, fields in gozero.always_written().items():
        assert fields <= set(structs[struct]), struct
    always = gozero.always_written()
    assert {"image", "imageID", "name", "ready", "restartCount"} <= always["core/v1.ContainerStatus"]
    assert "eventTime" in always["events/v1.Event"] and "ports" in always["discovery/v1.EndpointSlice"]
    assert "meta/v1.ObjectMeta" not in always and "state" not in always["core/v1.ContainerStatus"]
