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
    assert spec["f:template"]["f:metadata"] == {"f:labels": {"f:app": {}}}  # what the request set, and only that
    assert spec["f:backoffLimit"] == {}  # a default applied as the request was decoded is the creator's
