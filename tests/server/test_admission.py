"""DefaultTolerationSeconds: pods get bounded not-ready/unreachable NoExecute tolerations on create and update;
ServiceAccount: a pod created without an account runs as `default`."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from kubernetes import client

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.server.admission import AdmissionSettings, default_tolerations
from kjobs.server.app import create_app
from kjobs.server.registry import lookup
from kjobs.server.runner import serve
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.server.conftest import job_manifest, pod_manifest
from tests.support import python_client_config, shared_pki

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def _default(key: str, seconds: int = 300) -> Obj:
    return {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}


@pytest.mark.parametrize(
    ("given", "added"),
    [
        pytest.param([], [NOT_READY, UNREACHABLE], id="none"),
        pytest.param([{"operator": "Exists"}], [], id="tolerates-everything"),
        pytest.param([{"operator": "Exists", "effect": "NoExecute"}], [], id="every-noexecute"),
        pytest.param([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE], id="no-key-other"),
        pytest.param(
            [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
            [NOT_READY],
            id="one-already-with-its-own-seconds",
        ),
        pytest.param([{"key": NOT_READY, "operator": "Equal", "value": "x"}], [UNREACHABLE], id="key-any-effect"),
        pytest.param(
            [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}],
            [NOT_READY, UNREACHABLE],
            id="other-effect",
        ),
        pytest.param([{"key": "example.com/x", "operator": "Exists"}], [NOT_READY, UNREACHABLE], id="other-key"),
    ],
)
def test_which_tolerations_count_as_already_there(given: list[Obj], added: list[str]) -> None:
    result = default_tolerations(given, AdmissionSettings())
    assert result[: len(given)] == given
    assert result[len(given) :] == [_default(key) for key in added]


def test_the_flags_set_each_default() -> None:
    settings = AdmissionSettings(default_not_ready_toleration_seconds=7, default_unreachable_toleration_seconds=9)
    assert default_tolerations([], settings) == [_default(NOT_READY, 7), _default(UNREACHABLE, 9)]


def test_a_created_pod_gets_them_and_a_job_template_does_not(http: httpx.Client) -> None:
    pod = http.post("/api/v1/namespaces/default/pods", json=pod_manifest("p")).json()
    assert pod["spec"]["tolerations"] == [_default(NOT_READY), _default(UNREACHABLE)]
    assert http.get("/api/v1/namespaces/default/pods/p").json()["spec"]["tolerations"] == pod["spec"]["tolerations"]
    job = http.post("/apis/batch/v1/namespaces/default/jobs", json=job_manifest("j")).json()
    assert "tolerations" not in job["spec"]["template"]["spec"]  # only pods are admitted, as in Kubernetes


def test_a_created_pod_runs_as_the_default_service_account(http: httpx.Client) -> None:
    """As on a cluster, `kubectl get pod -o yaml` shows `serviceAccountName: default` (and the deprecated
    `serviceAccount` beside it), and `fieldRef: spec.serviceAccountName` reads `default` instead of ''."""
    pod = http.post("/api/v1/namespaces/default/pods", json=pod_manifest("sa")).json()
    assert (pod["spec"]["serviceAccountName"], pod["spec"]["serviceAccount"]) == ("default", "default")
    named = pod_manifest("named")
    named["spec"]["serviceAccount"] = "builder"  # the deprecated field, as old manifests have it
    pod = http.post("/api/v1/namespaces/default/pods", json=named).json()
    assert (pod["spec"]["serviceAccountName"], pod["spec"]["serviceAccount"]) == ("builder", "builder")
    job = http.post("/apis/batch/v1/namespaces/default/jobs", json=job_manifest("sa-job")).json()
    assert "serviceAccountName" not in job["spec"]["template"]["spec"]


def test_dry_run_shows_them(http: httpx.Client) -> None:
    pod = http.post("/api/v1/namespaces/default/pods?dryRun=All", json=pod_manifest("dry")).json()
    assert [t["key"] for t in pod["spec"]["tolerations"]] == [NOT_READY, UNREACHABLE]


def test_an_update_that_drops_them_gets_them_back(http: httpx.Client) -> None:
    """The plugin admits updates too; validation then sees the tolerations unchanged."""
    pod = http.post("/api/v1/namespaces/default/pods", json=pod_manifest("u")).json()
    del pod["spec"]["tolerations"]
    pod["metadata"]["labels"] = {"x": "1"}
    replaced = http.put("/api/v1/namespaces/default/pods/u", json=pod)
    assert replaced.status_code == 200, replaced.text
    assert [t["key"] for t in replaced.json()["spec"]["tolerations"]] == [NOT_READY, UNREACHABLE]


def test_the_python_client_sees_them() -> None:
    store = MemoryStore()
    app = create_app(
        store,
        admission=AdmissionSettings(default_not_ready_toleration_seconds=60, default_unreachable_toleration_seconds=0),
    )
    with serve(store, app=app, pki=shared_pki()) as url, client.ApiClient(python_client_config(url)) as api:
        core = client.CoreV1Api(api)
        body: dict[str, Any] = pod_manifest("py")
        body["spec"]["tolerations"] = [{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        created = core.create_namespaced_pod("default", body)
        got = [(t.key, t.operator, t.effect, t.toleration_seconds) for t in created.spec.tolerations]
        assert got == [
            ("example.com/gpu", "Exists", "NoSchedule", None),
            (NOT_READY, "Exists", "NoExecute", 60),
            (UNREACHABLE, "Exists", "NoExecute", 0),
        ]
    store.close()


def test_status_writes_are_not_admitted() -> None:
    """The plugin skips subresources: a status write leaves a stored pod without them as it is."""

    async def run() -> None:
        store = MemoryStore()
        service = ApiService(Storage(store), clock=FakeClock().now)
        await service.ensure_namespaces()
        pods = lookup("", "v1", "pods")
        assert pods is not None
        await service.create(pods, "default", pod_manifest("s"))
        old = store.get("pods", "default", "s")
        del old["spec"]["tolerations"]  # as stored before the plugin existed
        old = store.update("pods", "default", "s", old)
        old["status"]["phase"] = "Running"
        written = await service.update(pods, "default", "s", old, subresource="status")
        assert written.obj["status"]["phase"] == "Running" and "tolerations" not in written.obj["spec"]

    asyncio.run(run())
