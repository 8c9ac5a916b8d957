"""Who `managedFields` names for a write: the `fieldManager` parameter, else the User-Agent's product, as the
apiserver's `managerOrUserAgent` does (the Python client sends no `fieldManager`)."""

from __future__ import annotations

import httpx
import orjson
import pytest

from kjobs.server.app import manager_from_user_agent
from tests.server.conftest import job_manifest

JOBS = "/apis/batch/v1/namespaces/default/jobs"
PYTHON_CLIENT = "OpenAPI-Generator/31.0.0/python"


def _managers(obj: dict[str, object]) -> list[tuple[str, str, str]]:
    return [
        (e["manager"], e["operation"], e.get("subresource", ""))
        for e in obj["metadata"]["managedFields"]  # type: ignore[index]
    ]


def test_a_create_without_field_manager_is_recorded_under_the_user_agents_product(http: httpx.Client) -> None:
    created = http.post(JOBS, json=job_manifest("ua"), headers={"user-agent": PYTHON_CLIENT})
    assert created.status_code == 201, created.text
    assert _managers(created.json()) == [("OpenAPI-Generator", "Update", "")]


def test_the_field_manager_parameter_wins_over_the_user_agent(http: httpx.Client) -> None:
    created = http.post(
        JOBS,
        json=job_manifest("param"),
        params={"fieldManager": "kubectl-create"},
        headers={"user-agent": PYTHON_CLIENT},
    )
    assert _managers(created.json()) == [("kubectl-create", "Update", "")]
    patched = http.patch(
        f"{JOBS}/param",
        content=orjson.dumps({"metadata": {"labels": {"tier": "batch"}}}),
        headers={"content-type": "application/merge-patch+json", "user-agent": "my-tool/1.0"},
    )
    assert patched.status_code == 200, patched.text
    assert ("my-tool", "Update", "") in _managers(patched.json())


def test_server_side_apply_still_needs_the_parameter(http: httpx.Client) -> None:
    response = http.patch(
        f"{JOBS}/ssa-ua",
        content=orjson.dumps(job_manifest("ssa-ua")),
        headers={"content-type": "application/apply-patch+yaml", "user-agent": PYTHON_CLIENT},
    )
    assert response.status_code == 422  # the User-Agent does not stand in for it (ValidatePatchOptions)
    assert "fieldManager: Required value: is required for apply patch" in response.json()["message"]


@pytest.mark.parametrize(
    ("user_agent", "manager"),
    [
        ("kubectl/v1.31.0 (linux/amd64) kubernetes/abc", "kubectl"),
        (
            "kube-controller-manager/v1.31.0 (linux/amd64) kubernetes/abc/system:serviceaccount",
            "kube-controller-manager",
        ),
        ("no-slash", "no-slash"),
        ("tab\there/1", "tabhere"),
        ("é" * 100, "é" * 64),
        ("", ""),
    ],
)
def test_the_product_is_what_precedes_the_first_slash_printable_and_at_most_128_bytes(
    user_agent: str, manager: str
) -> None:
    assert manager_from_user_agent(user_agent) == manager


def test_the_creator_does_not_own_the_selector_and_labels_the_job_strategy_generates(http: httpx.Client) -> None:
    # kube-apiserver's create handler records the managed fields before the strategy's PrepareForCreate adds
    # the generated selector and pod template labels: nobody owns them, so no apply by the creator drops them.
    created = http.post(JOBS, json=job_manifest("owned"), params={"fieldManager": "kubectl-client-side-apply"})
    assert created.status_code == 201, created.text
    job = created.json()
    assert job["spec"]["selector"]["matchLabels"] == {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}
    [entry] = job["metadata"]["managedFields"]
    spec = entry["fieldsV1"]["f:spec"]
    assert "f:selector" not in spec
    # What the request set, and only that; the labels map is new to the template's metadata, so it owns its `.`;
    # the zero `creationTimestamp` Go decoded (and writes as null) is the request's too.
    assert spec["f:template"]["f:metadata"] == {"f:creationTimestamp": {}, "f:labels": {".": {}, "f:app": {}}}
    assert spec["f:backoffLimit"] == {}  # a default applied as the request was decoded is the creator's


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _owners(obj: dict[str, object]) -> dict[str, object]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"].get("managedFields") or []}  # type: ignore[attr-defined]


def _labelled_configmap(http: httpx.Client) -> dict[str, object]:
    """A ConfigMap created by one manager and labelled by another, as read back (managedFields included)."""
    http.post(CONFIGMAPS, params={"fieldManager": "creator"}, json={"metadata": {"name": "kept"}, "data": {"a": "1"}})
    labelled = http.patch(
        f"{CONFIGMAPS}/kept",
        params={"fieldManager": "labeller"},
        content=b'{"metadata":{"labels":{"x":"y"}}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert labelled.status_code == 200, labelled.text
    return labelled.json()  # type: ignore[no-any-return]


def test_a_put_without_managed_fields_keeps_the_live_ones(http: httpx.Client) -> None:
    """`kubectl replace -f` of what `kubectl get -o yaml` printed (kubectl leaves managedFields out): the apiserver
    starts from the live object's managedFields (fieldmanager.go `decodeLiveOrNew`), so the creator and labeller
    keep what they own and the replacer owns only what it changed; the same body again is a no-op."""
    body = _labelled_configmap(http)
    del body["metadata"]["managedFields"]  # type: ignore[attr-defined]
    body["data"] = {"a": "1", "b": "2"}
    replaced = http.put(f"{CONFIGMAPS}/kept", params={"fieldManager": "replacer"}, json=body)
    assert replaced.status_code == 200, replaced.text
    assert _owners(replaced.json()) == {
        "creator": {"f:data": {".": {}, "f:a": {}}},  # each created the map it set (the `.` member)
        "labeller": {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
        "replacer": {"f:data": {"f:b": {}}},
    }
    again = {**replaced.json(), "metadata": {**replaced.json()["metadata"]}}
    del again["metadata"]["managedFields"]
    unchanged = http.put(f"{CONFIGMAPS}/kept", params={"fieldManager": "replacer"}, json=again)
    assert unchanged.json()["metadata"]["resourceVersion"] == replaced.json()["metadata"]["resourceVersion"]


def test_managed_fields_a_put_sends_replace_the_live_ones_unless_they_do_not_decode(http: httpx.Client) -> None:
    """A body's own managedFields are taken (a manager renamed stays renamed); ones that do not decode (an
    operation that is neither Apply nor Update) are dropped for the live ones."""
    body = _labelled_configmap(http)
    entries = body["metadata"]["managedFields"]  # type: ignore[index]
    renamed = [{**e, "manager": "renamed"} if e["manager"] == "labeller" else e for e in entries]
    body["metadata"]["managedFields"] = renamed  # type: ignore[index]
    put = http.put(f"{CONFIGMAPS}/kept", json=body)
    assert set(_owners(put.json())) == {"creator", "renamed"}
    bogus = put.json()
    bogus["metadata"]["managedFields"] = [{**e, "operation": "Bogus"} for e in bogus["metadata"]["managedFields"]]
    bogus["data"] = {"a": "1", "q": "1"}
    put = http.put(f"{CONFIGMAPS}/kept", params={"fieldManager": "editor"}, json=bogus)
    assert put.status_code == 200, put.text
    entries = put.json()["metadata"]["managedFields"]
    assert {(e["manager"], e["operation"]) for e in entries} == {
        ("creator", "Update"),
        ("editor", "Update"),
        ("renamed", "Update"),
    }
    # In upstream's order: by time to the second, then by manager (the writes may straddle a second).
    assert [(e["time"], e["manager"]) for e in entries] == sorted((e["time"], e["manager"]) for e in entries)


@pytest.mark.parametrize("reset", [[], [{}]], ids=["empty-list", "one-empty-entry"])
def test_managed_fields_are_reset_by_an_empty_list_or_one_empty_entry(http: httpx.Client, reset: object) -> None:
    """`isResetManagedFields`: a patch setting managedFields to `[]` or `[{}]` strips them all."""
    _labelled_configmap(http)
    patched = http.patch(
        f"{CONFIGMAPS}/kept",
        content=orjson.dumps({"metadata": {"managedFields": reset}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert "managedFields" not in patched.json()["metadata"]


def test_a_status_write_keeps_the_live_managed_fields(http: httpx.Client) -> None:
    """A subresource write never takes the body's managedFields (`ignoreManagedFieldsFromRequestObject`)."""
    created = http.post(JOBS, json=job_manifest("st"), params={"fieldManager": "creator"})
    body = created.json()
    body["metadata"]["managedFields"] = [{**e, "manager": "forged"} for e in body["metadata"]["managedFields"]]
    put = http.put(f"{JOBS}/st/status", json=body, params={"fieldManager": "statuser"})
    assert put.status_code == 200, put.text
    assert "forged" not in {e["manager"] for e in put.json()["metadata"]["managedFields"]}
