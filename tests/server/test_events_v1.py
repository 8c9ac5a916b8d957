"""`events.k8s.io/v1`: the stored core Events served as a second version, over HTTP (kjobs.server.views)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx

from kjobs.client.local import LocalClient
from kjobs.client.resources import EVENTS, ResourceRef
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.server.conftest import Server

CORE = "/api/v1/namespaces/default/events"
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def v1_event(name: str, **fields: Any) -> dict[str, Any]:
    """A valid `events.k8s.io/v1` Event about a pod (what client-go's new recorder writes)."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-01-02T03:04:05.000000Z",
        "reportingController": "example.com/scheduler",
        "reportingInstance": "scheduler-1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": "Successfully assigned default/p to node-1",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u-1", "apiVersion": "v1"},
        **fields,
    }


def test_created_through_events_v1_reads_as_core_with_the_same_resource_version(http: httpx.Client) -> None:
    created = http.post(V1, json=v1_event("e1"))
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["apiVersion"] == "events.k8s.io/v1" and body["note"].startswith("Successfully assigned")
    assert body["deprecatedSource"] == {} and body["deprecatedFirstTimestamp"] is None
    core = http.get(f"{CORE}/e1").json()
    assert core["apiVersion"] == "v1"
    assert core["message"] == body["note"]
    assert core["involvedObject"] == body["regarding"]
    assert core["reportingComponent"] == "example.com/scheduler"
    assert core["reportingInstance"] == "scheduler-1"
    assert core["action"] == "Binding" and core["eventTime"] == body["eventTime"]
    assert "note" not in core and "regarding" not in core
    assert core["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]


def test_created_through_core_reads_as_events_v1(http: httpx.Client) -> None:
    core = {
        "metadata": {"name": "legacy"},
        "involvedObject": {"kind": "Job", "namespace": "default", "name": "j"},
        "reason": "SuccessfulCreate",
        "message": "Created pod: j-abc",
        "source": {"component": "job-controller"},
        "firstTimestamp": "2026-01-02T03:04:05Z",
        "lastTimestamp": "2026-01-02T03:04:06Z",
        "count": 2,
        "type": "Normal",
    }
    assert http.post(CORE, json=core).status_code == 201
    got = http.get(f"{V1}/legacy").json()
    assert got["kind"] == "Event" and got["apiVersion"] == "events.k8s.io/v1"
    assert got["note"] == "Created pod: j-abc"
    assert got["regarding"] == {"kind": "Job", "namespace": "default", "name": "j"}
    assert got["deprecatedSource"] == {"component": "job-controller"}
    assert (got["deprecatedFirstTimestamp"], got["deprecatedLastTimestamp"]) == (
        "2026-01-02T03:04:05Z",
        "2026-01-02T03:04:06Z",
    )
    assert got["deprecatedCount"] == 2 and got["eventTime"] is None
    listed = http.get(V1).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert [e["note"] for e in listed["items"]] == ["Created pod: j-abc"]


def test_events_v1_create_requires_what_a_new_event_needs(http: httpx.Client) -> None:
    body = v1_event("bad")
    for key in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
        del body[key]
    answer = http.post(V1, json=body)
    assert answer.status_code == 422
    status = answer.json()
    assert status["details"]["group"] == "events.k8s.io" and status["details"]["kind"] == "Event"
    assert [c["field"] for c in status["details"]["causes"]] == ["eventTime"]
    assert status["message"] == 'Event.events.k8s.io "bad" is invalid: eventTime: Required value'
    answer = http.post(V1, json=v1_event("bad2", type="Info", deprecatedCount=3))
    causes = {c["field"]: c["message"] for c in answer.json()["details"]["causes"]}
    assert causes == {
        "type": 'Invalid value: "": has invalid value: Info',
        "count": 'Invalid value: "": needs to be unset',
    }


def test_events_v1_patch_and_immutable_fields(http: httpx.Client) -> None:
    assert http.post(V1, json=v1_event("p1")).status_code == 201
    merge = {"Content-Type": "application/merge-patch+json"}
    labelled = http.patch(f"{V1}/p1", content=json.dumps({"metadata": {"labels": {"a": "b"}}}), headers=merge)
    assert labelled.status_code == 200, labelled.text
    assert labelled.json()["metadata"]["labels"] == {"a": "b"}
    series = {"series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:00.000000Z"}}
    assert http.patch(f"{V1}/p1", content=json.dumps(series), headers=merge).status_code == 200
    assert http.get(f"{CORE}/p1").json()["series"]["count"] == 2
    refused = http.patch(f"{V1}/p1", content=json.dumps({"note": "changed"}), headers=merge)
    assert refused.status_code == 422
    assert refused.json()["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "changed": field is immutable',
        "field": "message",
    }
    # through core the same change is allowed (the legacy rules only)
    assert http.patch(f"{CORE}/p1", content=json.dumps({"message": "changed"}), headers=merge).status_code == 200
    assert http.get(f"{V1}/p1").json()["note"] == "changed"


def test_field_selectors_in_each_version(http: httpx.Client) -> None:
    assert http.post(V1, json=v1_event("a")).status_code == 201
    assert (
        http.post(V1, json=v1_event("b", regarding={"kind": "Job", "namespace": "default", "name": "j"})).status_code
        == 201
    )
    by_kind = http.get(V1, params={"fieldSelector": "regarding.kind=Job"}).json()
    assert [e["metadata"]["name"] for e in by_kind["items"]] == ["b"]
    core = http.get(CORE, params={"fieldSelector": "involvedObject.kind=Pod"}).json()
    assert [e["metadata"]["name"] for e in core["items"]] == ["a"]
    controller = http.get(V1, params={"fieldSelector": "reportingController=example.com/scheduler"}).json()
    assert len(controller["items"]) == 2
    refused = http.get(V1, params={"fieldSelector": "involvedObject.kind=Job"})
    assert refused.status_code == 400
    assert refused.json()["message"] == "field label not supported: involvedObject.kind"


def test_limit_and_continue(http: httpx.Client) -> None:
    for name in ("c1", "c2", "c3"):
        assert http.post(V1, json=v1_event(name)).status_code == 201
    first = http.get(V1, params={"limit": 2}).json()
    assert [e["metadata"]["name"] for e in first["items"]] == ["c1", "c2"]
    rest = http.get(V1, params={"limit": 2, "continue": first["metadata"]["continue"]}).json()
    assert [e["metadata"]["name"] for e in rest["items"]] == ["c3"]
    # the pages are events.k8s.io/v1 lists of that version's Events; their items, as a built-in kind's in any
    # list, carry no apiVersion nor kind (kjobs.server.listitems)
    assert first["apiVersion"] == rest["apiVersion"] == "events.k8s.io/v1"
    assert all("apiVersion" not in e and e["note"].startswith("Successfully") for e in first["items"] + rest["items"])


def test_watch_from_a_resource_version_sees_core_writes_in_events_v1(server: Server, http: httpx.Client) -> None:
    created = http.post(V1, json=v1_event("w1")).json()
    rv = created["metadata"]["resourceVersion"]
    lines: list[dict[str, Any]] = []
    ready = threading.Event()

    def watch() -> None:
        params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "5"}
        with http.stream("GET", V1, params=params) as answer:
            ready.set()
            for line in answer.iter_lines():
                lines.append(json.loads(line))
                if len(lines) == 2:
                    return

    thread = threading.Thread(target=watch)
    thread.start()
    ready.wait(5)
    merge = {"Content-Type": "application/merge-patch+json"}
    assert (
        http.patch(f"{CORE}/w1", content=json.dumps({"metadata": {"labels": {"x": "y"}}}), headers=merge).status_code
        == 200
    )
    assert http.delete(f"{V1}/w1").status_code == 200
    thread.join(10)
    assert [(e["type"], e["object"]["apiVersion"]) for e in lines] == [
        ("MODIFIED", "events.k8s.io/v1"),
        ("DELETED", "events.k8s.io/v1"),
    ]
    assert lines[0]["object"]["note"] == created["note"]
    assert http.get(f"{CORE}/w1").status_code == 404


def test_not_found_names_the_group(http: httpx.Client) -> None:
    answer = http.get(f"{V1}/missing")
    assert answer.status_code == 404
    assert answer.json()["message"] == 'events.events.k8s.io "missing" not found'


def test_discovery_and_table(http: httpx.Client) -> None:
    group = http.get("/apis/events.k8s.io").json()
    assert group["preferredVersion"] == {"groupVersion": "events.k8s.io/v1", "version": "v1"}
    resources = http.get("/apis/events.k8s.io/v1").json()["resources"]
    assert [(r["name"], r["kind"], r.get("shortNames")) for r in resources] == [("events", "Event", ["ev"])]
    openapi = http.get("/openapi/v3/apis/events.k8s.io/v1").json()
    assert "io.k8s.api.events.v1.Event" in openapi["components"]["schemas"]
    assert http.post(V1, json=v1_event("t1")).status_code == 201
    table = http.get(V1, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]][:4] == ["Last Seen", "Type", "Reason", "Object"]
    assert table["rows"][0]["cells"][1:4] == ["Normal", "Scheduled", "pod/p"]


def test_write_errors_name_the_resource_addressed(http: httpx.Client) -> None:
    assert http.post(V1, json=v1_event("dup")).status_code == 201
    taken = http.post(V1, json=v1_event("dup"))
    assert taken.status_code == 409
    assert taken.json()["message"] == 'events.events.k8s.io "dup" already exists'
    assert taken.json()["details"] == {"name": "dup", "group": "events.k8s.io", "kind": "events"}
    stale = http.get(f"{V1}/dup").json()
    stale["metadata"]["resourceVersion"] = "1"
    stale["metadata"]["labels"] = {"a": "b"}
    conflict = http.put(f"{V1}/dup", json=stale)
    assert conflict.status_code == 409
    assert conflict.json()["message"].startswith('Operation cannot be fulfilled on events.events.k8s.io "dup": ')


def test_in_process_client_watches_events_v1() -> None:
    """A component in this process (`LocalClient`) reads the view as an HTTP client does."""
    events_v1 = ResourceRef("events.k8s.io", "v1", "events", "Event")
    note = v1_event("local")["note"]

    async def scenario() -> None:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 0.0)
        await service.ensure_namespaces()
        client = LocalClient(service)
        await client.create(events_v1, "default", v1_event("local"))
        async for event in client.watch(events_v1, "default"):
            assert (event.type, event.object["apiVersion"], event.object["note"]) == ("ADDED", "events.k8s.io/v1", note)
            break
        assert (await client.get(EVENTS, "default", "local"))["message"] == note

    asyncio.run(scenario())
