"""The API service with `--feature-gates`: a gated field is an unknown field while its gate is off, and part of
the API (stored, validated, in `/openapi/v3`) while it is on."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest

from kjobs.api.errors import ApiError
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.server import openapi
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.server.conftest import job_manifest

ON = FeatureGates.parse("AllAlpha=true")
JOBS = lookup("batch", "v1", "jobs")


def _create(features: FeatureGates, body: dict[str, Any], field_validation: str) -> Any:
    async def go() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 0.0, features=features)
        await service.ensure_namespaces()
        assert JOBS is not None
        return await service.create(JOBS, "default", copy.deepcopy(body), field_validation=field_validation)

    return asyncio.run(go())


def _restart_limited_job() -> dict[str, Any]:
    job = job_manifest("limited")
    spec = job["spec"]["template"]["spec"]  # type: ignore[index]
    spec.update(restartPolicy="OnFailure", maxRestartTimes=2)
    return job


def test_a_field_of_a_gate_that_is_off_is_an_unknown_field() -> None:
    with pytest.raises(ApiError) as info:
        _create(DEFAULT, _restart_limited_job(), "Strict")
    assert info.value.code == 400
    assert info.value.message == (
        'Job in version "v1" cannot be handled as a Job: strict decoding error: '
        'unknown field "spec.template.spec.maxRestartTimes"'
    )
    result = _create(DEFAULT, _restart_limited_job(), "Warn")
    assert result.warnings == ['unknown field "spec.template.spec.maxRestartTimes"']
    assert "maxRestartTimes" not in result.obj["spec"]["template"]["spec"]


def test_a_field_of_a_gate_that_is_on_is_stored_and_validated() -> None:
    result = _create(ON, _restart_limited_job(), "Strict")
    assert result.obj["spec"]["template"]["spec"]["maxRestartTimes"] == 2
    bad = _restart_limited_job()
    bad["spec"]["template"]["spec"]["maxRestartTimes"] = -1  # type: ignore[index]
    with pytest.raises(ApiError) as info:
        _create(ON, bad, "Strict")
    assert info.value.code == 422
    assert "spec.template.spec.maxRestartTimes: Invalid value: -1" in info.value.message


def test_container_restart_rules_follow_their_kubernetes_gate() -> None:
    job = job_manifest("rules")
    container = job["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    container.update(
        restartPolicy="Never",
        restartPolicyRules=[{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}],
    )
    created = _create(DEFAULT, job, "Strict")  # beta, on by default in 1.35
    assert created.obj["spec"]["template"]["spec"]["containers"][0]["restartPolicyRules"][0]["action"] == "Restart"
    with pytest.raises(ApiError) as info:
        _create(FeatureGates.parse("ContainerRestartRules=false"), job, "Strict")
    assert 'unknown field "spec.template.spec.containers[0].restartPolicyRules"' in info.value.message


def _schemas(features: FeatureGates) -> dict[str, Any]:
    doc = openapi.group_version_document("batch", "v1", features)
    assert doc is not None
    schemas: dict[str, Any] = orjson.loads(doc)["components"]["schemas"]
    return schemas


def test_openapi_shows_the_fields_of_the_gates_that_are_on() -> None:
    off, on = _schemas(DEFAULT), _schemas(ON)
    assert "maxRestartTimes" not in off["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert "maxRestartTimes" in on["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert "name" in on["io.k8s.api.batch.v1.PodFailurePolicyRule"]["properties"]
    assert "valueRanges" in on["io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement"]["properties"]
    assert "restartPolicyRules" in off["io.k8s.api.core.v1.Container"]["properties"]
    assert openapi.document_hash("batch", "v1", DEFAULT) != openapi.document_hash("batch", "v1", ON)
