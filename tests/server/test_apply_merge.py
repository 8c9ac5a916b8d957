"""Server-side apply merges by list and map type (structured-merge-diff v4.4.2 typed/merge.go), not by the
strategic-merge patch strategy: `kjobs.server.applymerge` and the API's apply.

The `struct grab bag` (`setStr`), `associative list`, `null/empty map` and `null/empty list` rows are
typed/merge_test.go's `mergeCases`, recast on Kubernetes kinds (SMD's inline schemas are not Kubernetes'):
`setStr` on `metadata.finalizers` (a `set`), the keyed `list` (keys `key`, `id`) on a container's `ports`
(keys `protocol`, `containerPort`; `value`, `bv`, `nv` as `name`, `hostIP`, `hostPort`), `atomicList` on a
container's `command`, the inner map on `metadata.labels` and the inner list on a Pod's `tolerations`
(atomic). A null the merge outputs is dropped, as the apiserver's conversion to the Go type does.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from kjobs.server import apply, applymerge, schema
from tests.server.conftest import job_manifest

POD = schema.strategies_for(schema.schema_name("", "v1", "Pod"))
JOB = schema.strategies_for(schema.schema_name("batch", "v1", "Job"))
APPLY = {"content-type": "application/apply-patch+yaml"}

SET_STR = [  # typed/merge_test.go "struct grab bag", the setStr triplets in order (lhs, rhs, out)
    (["a", "b", "c"], ["d", "e", "f", "x", "y", "z"], ["a", "b", "c", "d", "e", "f", "x", "y", "z"]),
    (["c", "d", "e", "f"], ["a", "c", "e"], ["a", "c", "d", "e", "f"]),
    (["a", "b", "c", "x", "y", "z"], ["d", "e", "f"], ["a", "b", "c", "x", "y", "z", "d", "e", "f"]),
    (["a", "b", "c", "x", "y", "z"], ["d", "e", "f", "x", "y", "z"], ["a", "b", "c", "d", "e", "f", "x", "y", "z"]),
    (["c", "a", "g", "f"], ["c", "f", "a", "g"], ["c", "f", "a", "g"]),
    (["a", "b", "c", "d"], ["d", "e", "f", "a"], ["b", "c", "d", "e", "f", "a"]),
    (
        ["c", "d", "e", "f", "g", "h", "i", "j"],
        ["2", "h", "3", "e", "4", "k", "l"],
        ["c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"],
    ),
    (
        ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
        ["1", "b", "2", "h", "3", "e", "4", "k", "l"],
        ["a", "1", "b", "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"],
    ),
    (["a", "b", "b"], ["c"], ["a", "b", "b", "c"]),  # a duplicate in LHS
    (["a", "b", "b"], ["b"], ["a", "b"]),
    (["a", "b", "b"], ["a"], ["a", "b", "b"]),
    (["a", "b", "c", "d", "e", "c"], ["1", "b", "2", "e", "d"], ["a", "1", "b", "c", "2", "e", "c", "d"]),
    (["a", "b", "c", "d", "e", "c"], ["1", "b", "2", "c", "e", "d"], ["a", "1", "b", "2", "c", "e", "d"]),
    (["a", "a", "b", "b"], ["b", "c", "d"], ["a", "a", "b", "c", "d"]),  # two duplicates, one replaced
    (["a", "a", "b", "b"], [], ["a", "a", "b", "b"]),  # two duplicates, nothing on the right
    (["c", "a", "g", "f", "c", "a"], ["c", "f", "a", "g"], ["c", "f", "a", "g"]),
]


@pytest.mark.parametrize(("lhs", "rhs", "out"), [pytest.param(*row, id=f"setStr-{i}") for i, row in enumerate(SET_STR)])
def test_a_set_merges_by_value_in_smds_order(lhs: list[str], rhs: list[str], out: list[str]) -> None:
    merged = applymerge.merge({"metadata": {"finalizers": lhs}}, {"metadata": {"finalizers": rhs}}, POD)
    assert merged == {"metadata": {"finalizers": out}}


_PORT_FIELDS = {"key": "protocol", "id": "containerPort", "value": "name", "bv": "hostIP", "nv": "hostPort"}
_KEY_VALUES = {"a": "TCP", "b": "UDP", "c": "SCTP"}


def _ports(row: str) -> dict[str, Any]:
    """An `associative list` row's object as a Pod with one container: `list` its ports, `atomicList` its
    command."""
    doc = orjson.loads(row)
    container: dict[str, Any] = {"name": "main"}
    if "list" in doc:
        container["ports"] = [
            {
                _PORT_FIELDS[k]: (_KEY_VALUES[v] if k == "key" else orjson.dumps(v).decode() if k == "value" else v)
                for k, v in element.items()
            }
            for element in doc["list"]
        ]
    if "atomicList" in doc:
        container["command"] = doc["atomicList"]
    return {"spec": {"containers": [container]}}


ASSOCIATIVE = [  # typed/merge_test.go "associative list", in order
    (
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
    ),
    (
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}',
    ),
    (
        '{"list":[{"key":"a","id":1},{"key":"b","id":1}]}',
        '{"list":[{"key":"a","id":1},{"key":"a","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}',
    ),
    (
        '{"list":[{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
    ),
    (
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"c","id":3},{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}',
    ),
    (
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"c","id":3},{"key":"a","id":1}]}',
        '{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}',
    ),
    ('{"atomicList":["a","a","a"]}', '{"atomicList":null}', "{}"),
    ('{"atomicList":["a","b","c"]}', '{"atomicList":[]}', '{"atomicList":[]}'),
    ('{"atomicList":["a","a","a"]}', '{"atomicList":["a","a"]}', '{"atomicList":["a","a"]}'),
    (
        '{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}',
        '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
    ),
    (
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
        '{"list":[]}',
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
    ),
    (
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
        "{}",
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
    ),
]


@pytest.mark.parametrize(
    ("lhs", "rhs", "out"), [pytest.param(*row, id=f"associative-list-{i}") for i, row in enumerate(ASSOCIATIVE)]
)
def test_a_keyed_list_merges_by_all_its_keys(lhs: str, rhs: str, out: str) -> None:
    assert applymerge.merge(_ports(lhs), _ports(rhs), POD) == _ports(out)


EMPTY_ROWS = [  # typed/merge_test.go "null/empty map" and "null/empty list": (lhs, rhs, out) of `inner`
    ("absent", "empty", "empty"),
    ("absent", "null", "null"),
    ("null", "empty", "empty"),
    ("empty", "null", "null"),
    ("empty", "empty", "empty"),
]


def _inner(parent: str, field: str, value: str, empty: Any) -> dict[str, Any]:
    """`{parent: {field: value}}`: absent, null or empty; an output's null is dropped (the Go type's zero)."""
    if value == "absent":
        return {parent: {}}
    return {parent: {field: None if value == "null" else empty}}


def _dropped(value: str) -> str:
    return "absent" if value == "null" else value


@pytest.mark.parametrize(
    ("lhs", "rhs", "out"), [pytest.param(*r, id=f"null-empty-map-{i}") for i, r in enumerate(EMPTY_ROWS)]
)
def test_null_and_empty_maps(lhs: str, rhs: str, out: str) -> None:
    merged = applymerge.merge(_inner("metadata", "labels", lhs, {}), _inner("metadata", "labels", rhs, {}), POD)
    assert merged.get("metadata", {}) == _inner("metadata", "labels", _dropped(out), {})["metadata"]


@pytest.mark.parametrize(
    ("lhs", "rhs", "out"), [pytest.param(*r, id=f"null-empty-list-{i}") for i, r in enumerate(EMPTY_ROWS)]
)
def test_null_and_empty_lists(lhs: str, rhs: str, out: str) -> None:
    """`tolerations` has no list type: atomic."""
    merged = applymerge.merge(_inner("spec", "tolerations", lhs, []), _inner("spec", "tolerations", rhs, []), POD)
    assert merged.get("spec", {}) == _inner("spec", "tolerations", _dropped(out), [])["spec"]


def test_job_status_conditions_are_atomic_though_their_patch_merge_key_is_type() -> None:
    """types.go: `+patchMergeKey=type +patchStrategy=merge +listType=atomic`. Strategic merge would keep
    `Suspended`; SMD replaces the list."""
    live = {"status": {"conditions": [{"type": "Suspended", "status": "True"}, {"type": "X", "status": "False"}]}}
    config = {"status": {"conditions": [{"type": "X", "status": "True"}]}}
    assert applymerge.merge(live, config, JOB) == config


def test_pod_host_ips_are_atomic() -> None:
    live = {"status": {"hostIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}}
    assert applymerge.merge(live, {"status": {"hostIPs": [{"ip": "10.0.0.2"}]}}, POD) == {
        "status": {"hostIPs": [{"ip": "10.0.0.2"}]}
    }


def test_a_set_without_patch_strategy_is_merged_not_replaced() -> None:
    """`UncountedTerminatedPods.succeeded`: `+listType=set`, no patch strategy (strategic merge replaces)."""
    live = {"status": {"uncountedTerminatedPods": {"succeeded": ["u1", "u2"], "failed": ["u9"]}}}
    config = {"status": {"uncountedTerminatedPods": {"succeeded": ["u3", "u1"]}}}
    assert applymerge.merge(live, config, JOB) == {
        "status": {"uncountedTerminatedPods": {"succeeded": ["u3", "u1", "u2"], "failed": ["u9"]}}
    }


def test_a_keyed_list_without_patch_strategy_is_merged_not_replaced() -> None:
    """`ResourceRequirements.claims`: `+listType=map +listMapKey=name`, no patch strategy."""
    live = _with_resources({"claims": [{"name": "a"}, {"name": "b"}]})
    config = _with_resources({"claims": [{"name": "c", "request": "r"}]})
    assert applymerge.merge(live, config, POD) == _with_resources(
        {"claims": [{"name": "a"}, {"name": "b"}, {"name": "c", "request": "r"}]}
    )


def _with_resources(resources: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "main", "resources": resources}]}}


def test_an_atomic_map_is_replaced_and_a_granular_one_merged() -> None:
    live = {"metadata": {"labels": {"a": "1"}}, "spec": {"nodeSelector": {"a": "1"}, "affinity": {"podAffinity": {}}}}
    config = {
        "metadata": {"labels": {"b": "2"}},
        "spec": {"nodeSelector": {"b": "2"}, "affinity": {"nodeAffinity": {}}},
    }
    merged = applymerge.merge(live, config, POD)
    assert merged["metadata"]["labels"] == {"a": "1", "b": "2"}  # map[string]string: granular
    assert merged["spec"]["nodeSelector"] == {"b": "2"}  # `+mapType=atomic`
    assert merged["spec"]["affinity"] == {"podAffinity": {}, "nodeAffinity": {}}  # a struct: granular
    selector = {"spec": {"selector": {"matchLabels": {"a": "1"}}}}
    again = applymerge.merge(selector, {"spec": {"selector": {"matchExpressions": []}}}, JOB)
    assert again == {"spec": {"selector": {"matchExpressions": []}}}  # LabelSelector: atomic


def test_a_null_keeps_a_live_granular_map_and_drops_a_scalar() -> None:
    live = {"metadata": {"labels": {"a": "1"}}, "spec": {"activeDeadlineSeconds": 5, "hostname": "h"}}
    config = {"metadata": {"labels": None}, "spec": {"activeDeadlineSeconds": None}}
    assert applymerge.merge(live, config, POD) == {"metadata": {"labels": {"a": "1"}}, "spec": {"hostname": "h"}}


def test_the_live_object_is_not_changed() -> None:
    live = {
        "metadata": {"finalizers": ["a"]},
        "spec": {"containers": [{"name": "main", "ports": [{"containerPort": 1}]}]},
    }
    before = orjson.dumps(live)
    applymerge.merge(
        live,
        {
            "metadata": {"finalizers": ["b"]},
            "spec": {"containers": [{"name": "main", "ports": [{"containerPort": 2}]}]},
        },
        POD,
    )
    assert orjson.dumps(live) == before


# ----------------------------------------------------------------------------------------------- the API


JOBS = "/apis/batch/v1/namespaces/default/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _apply(http: httpx.Client, url: str, body: object, manager: str, *, force: bool = False) -> httpx.Response:
    params = {"fieldManager": manager}
    if force:
        params["force"] = "true"
    return http.patch(url, params=params, content=orjson.dumps(body), headers=APPLY)


def _owned(obj: dict[str, Any], manager: str) -> set[str]:
    (entry,) = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return {apply.format_path(p) for p in apply.from_fields_v1(entry["fieldsV1"])}


def _status(conditions: list[dict[str, str]]) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "ssa"}, "status": {"conditions": conditions}}


def test_applying_job_status_conditions_replaces_the_list(http: httpx.Client) -> None:
    """An applier of `status.conditions` (a controller using SSA, `kubectl apply --server-side
    --subresource=status`) owns the list as one leaf and replaces it; another applier's different list
    conflicts on `.status.conditions`, not per condition."""
    assert http.post(JOBS, json=job_manifest("ssa", suspend=True)).status_code == 201
    first = [{"type": "Suspended", "status": "True"}, {"type": "Example", "status": "False"}]
    written = _apply(http, f"{JOBS}/ssa/status", _status(first), "first")
    assert written.status_code == 200, written.text
    assert _owned(written.json(), "first") == {".status.conditions"}
    second = [{"type": "Example", "status": "True"}]
    clash = _apply(http, f"{JOBS}/ssa/status", _status(second), "second")
    assert clash.status_code == 409
    assert clash.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "first" with subresource "status": .status.conditions'
    )
    forced = _apply(http, f"{JOBS}/ssa/status", _status(second), "second", force=True)
    assert forced.status_code == 200, forced.text
    assert [(c["type"], c["status"]) for c in forced.json()["status"]["conditions"]] == [("Example", "True")]
    assert [e["manager"] for e in forced.json()["metadata"]["managedFields"] if e["operation"] == "Apply"] == ["second"]


def _cronjob(ports: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox:1.36", "ports": ports}
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    spec = {"schedule": "@hourly", "jobTemplate": {"spec": {"template": template}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "ports"}, "spec": spec}


def _ports_of(obj: dict[str, Any]) -> list[tuple[int, str]]:
    (container,) = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    return [(p["containerPort"], p.get("protocol", "")) for p in container["ports"]]


def test_container_ports_are_keyed_by_port_and_protocol(http: httpx.Client) -> None:
    """`ports` is `+listType=map +listMapKey=containerPort +listMapKey=protocol` with `patchMergeKey=containerPort`:
    80/UDP applied beside 80/TCP is a second port with its own owner, not the first one's protocol changed."""
    created = _apply(http, f"{CRONJOBS}/ports", _cronjob([{"containerPort": 80, "protocol": "TCP"}]), "tcp")
    assert created.status_code == 201, created.text
    udp = _apply(http, f"{CRONJOBS}/ports", _cronjob([{"containerPort": 80, "protocol": "UDP"}]), "udp")
    assert udp.status_code == 200, udp.text
    assert _ports_of(udp.json()) == [(80, "TCP"), (80, "UDP")]
    prefix = '.spec.jobTemplate.spec.template.spec.containers[name="main"].ports'
    assert f'{prefix}[containerPort=80,protocol="UDP"].protocol' in _owned(udp.json(), "udp")
    assert f'{prefix}[containerPort=80,protocol="TCP"].protocol' in _owned(udp.json(), "tcp")
    # the first applier dropping its port leaves the other's
    alone = _apply(http, f"{CRONJOBS}/ports", _cronjob([{"containerPort": 8080}]), "tcp")
    assert alone.status_code == 200, alone.text
    assert _ports_of(alone.json()) == [(80, "UDP"), (8080, "TCP")]


def _configmap(finalizers: list[str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fin", "finalizers": finalizers}}


def test_finalizers_merge_as_a_set_in_smds_order(http: httpx.Client) -> None:
    """`finalizers` is `+listType=set`: a second applier's finalizers join the first's; the shared one comes
    where the second applier puts it (strategic merge would append the new one at the end)."""
    assert _apply(http, f"{CONFIGMAPS}/fin", _configmap(["example.com/a", "example.com/b"]), "one").status_code == 201
    two = _apply(http, f"{CONFIGMAPS}/fin", _configmap(["example.com/c", "example.com/a"]), "two")
    assert two.status_code == 200, two.text
    assert two.json()["metadata"]["finalizers"] == ["example.com/c", "example.com/a", "example.com/b"]
    assert _owned(two.json(), "two") == {
        '.metadata.finalizers[="example.com/c"]',
        '.metadata.finalizers[="example.com/a"]',
    }
    # "one" stops applying `b`, which nobody else owns: removed; `a` is still "two"'s
    one = _apply(http, f"{CONFIGMAPS}/fin", _configmap([]), "one")
    assert one.json()["metadata"]["finalizers"] == ["example.com/c", "example.com/a"]
    http.patch(
        f"{CONFIGMAPS}/fin",
        content=b'{"metadata":{"finalizers":null}}',
        headers={"content-type": "application/merge-patch+json"},
    )


def test_an_uncounted_set_is_merged_by_the_status_applier(http: httpx.Client) -> None:
    assert http.post(JOBS, json=job_manifest("ssa", suspend=True)).status_code == 201
    body = {**_status([]), "status": {"uncountedTerminatedPods": {"succeeded": ["u1", "u2"]}}}
    assert _apply(http, f"{JOBS}/ssa/status", body, "controller").status_code == 200
    body = {**_status([]), "status": {"uncountedTerminatedPods": {"succeeded": ["u3"]}}}
    merged = _apply(http, f"{JOBS}/ssa/status", body, "other")
    assert merged.status_code == 200, merged.text
    assert merged.json()["status"]["uncountedTerminatedPods"]["succeeded"] == ["u1", "u2", "u3"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            _cronjob([{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]),
            "failed to create typed patch object (/ports; batch/v1, Kind=CronJob): "
            '.spec.jobTemplate.spec.template.spec.containers[name="main"].ports: '
            'duplicate entries for key [containerPort=80,protocol="TCP"]',
            id="map",
        ),
        pytest.param(
            _configmap(["example.com/a", "example.com/b", "example.com/a"]),
            "failed to create typed patch object (/fin; /v1, Kind=ConfigMap): "
            '.metadata.finalizers: duplicate entries for key [="example.com/a"]',
            id="set",
        ),
    ],
)
def test_a_configuration_repeating_an_element_is_refused(http: httpx.Client, body: Any, message: str) -> None:
    """typed/validate.go `visitListItems`: the typed patch object allows no repeated key (the live object may
    have them), so there is never a repeat for the merge to choose from."""
    name = body["metadata"]["name"]
    url = f"{CRONJOBS if body['kind'] == 'CronJob' else CONFIGMAPS}/{name}"
    refused = _apply(http, url, body, "dup")
    assert (refused.status_code, refused.json()["reason"], refused.json()["message"]) == (400, "BadRequest", message)
