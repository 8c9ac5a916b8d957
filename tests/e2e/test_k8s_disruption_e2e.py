"""Kubernetes' DisruptionController e2e tests (test/e2e/apps/disruption.go), run against `kjobs up`.

Each test is one `It` of kubernetes/kubernetes test/e2e/apps/disruption.go, named after it, with its steps and
assertions, against one `kjobs up` started for the module and a namespace of its own per test, through the
official `kubernetes` Python client (client-go's calls: create, update with retry on conflict, merge patches of
the object and of `/status`, the dynamic client's `/status` get, delete-collection, the Eviction API).
docs/kubernetes-e2e.md lists what was ported, changed and left out.

The pause image becomes a local `sh -c` that runs until signalled and exits 0 then. kjobs serves no ReplicaSets:
an `It` that uses one only to have N pods matching `foo=bar` gets N bare pods (`createPodsOrDie`'s), with a PDB
whose counts need no controller's scale; "should block an eviction until the PDB is updated to allow it", which
needs an evicted pod replaced, gets a Job of parallelism 3 (its podFailurePolicy ignores the eviction). Pods that
are Running and not Ready (upstream: a readiness probe that passes only after minutes) carry a readiness gate
nothing sets (written when kjobs ran no probes; a readiness probe would do as well now).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from tests.e2e.test_k8s_job_e2e import retry_on_conflict, until
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

DEFAULT_NAME = "foo"
DEFAULT_LABELS = {"foo": "bar"}
PAUSE = "trap 'exit 0' TERM; sleep 1000000 & wait"
"""The pause image: runs until SIGTERM, then exits 0."""
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
"""policyv1.DisruptionBudgetCause: a StatusCause's type (`reason` on the wire)."""
NOT_READY_GATE = "example.com/ready"
"""A readiness gate no one sets: the pod runs and is not Ready (the stand-in for a slow readiness probe)."""


@dataclass
class Cluster:
    api: k8s.ApiClient
    core: k8s.CoreV1Api
    batch: k8s.BatchV1Api
    policy: k8s.PolicyV1Api


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` (one node; pod-failure back-off 0.2 s for the Job that replaces an evicted pod)."""
    tmp = tmp_path_factory.mktemp("k8sdisruption")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args, "--backoff", "0.2", "--job-batch-period", "0.1") as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        yield Cluster(api, k8s.CoreV1Api(api), k8s.BatchV1Api(api), k8s.PolicyV1Api(api))
        api.close()


def _namespace(c: Cluster) -> Iterator[str]:
    name = f"disruption-{secrets.token_hex(4)}"
    c.core.create_namespace({"metadata": {"name": name}})
    yield name
    c.core.delete_namespace(name)


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """f.Namespace: a namespace of the test's own, deleted after it."""
    yield from _namespace(cluster)


@pytest.fixture
def another_ns(cluster: Cluster) -> Iterator[str]:
    """anotherFramework.Namespace ("disruption-2")."""
    yield from _namespace(cluster)


# --- disruption.go's helpers --------------------------------------------------------------------------------------


def wait_for_pdb_to_be_processed(c: Cluster, ns: str, name: str) -> None:
    """waitForPdbToBeProcessed: status.observedGeneration caught up with metadata.generation."""

    def processed() -> bool:
        pdb = c.policy.read_namespaced_pod_disruption_budget(name, ns)
        return (pdb.status.observed_generation or 0) >= (pdb.metadata.generation or 0)

    until(processed, f"pdb {name} processed")


def create_pdb_min_available(c: Cluster, ns: str, name: str, min_available: int | str, labels: dict[str, str]) -> None:
    """createPDBMinAvailableOrDie."""
    body = {
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"selector": {"matchLabels": DEFAULT_LABELS}, "minAvailable": min_available},
    }
    c.policy.create_namespaced_pod_disruption_budget(ns, body)
    wait_for_pdb_to_be_processed(c, ns, name)


def create_pdb_max_unavailable(
    c: Cluster, ns: str, name: str, max_unavailable: int | str, unhealthy_pod_eviction_policy: str | None
) -> None:
    """createPDBMaxUnavailableOrDie."""
    spec: dict[str, Any] = {"selector": {"matchLabels": DEFAULT_LABELS}, "maxUnavailable": max_unavailable}
    if unhealthy_pod_eviction_policy is not None:
        spec["unhealthyPodEvictionPolicy"] = unhealthy_pod_eviction_policy
    c.policy.create_namespaced_pod_disruption_budget(ns, {"metadata": {"name": name, "namespace": ns}, "spec": spec})
    wait_for_pdb_to_be_processed(c, ns, name)


def get_pdb(c: Cluster, ns: str, name: str) -> k8s.V1PodDisruptionBudget:
    pdb: k8s.V1PodDisruptionBudget = c.policy.read_namespaced_pod_disruption_budget(name, ns)
    return pdb


def update_pdb(
    c: Cluster,
    ns: str,
    name: str,
    mutate: Callable[[k8s.V1PodDisruptionBudget], None],
    api: Callable[..., k8s.V1PodDisruptionBudget],
) -> k8s.V1PodDisruptionBudget:
    """updatePDBOrDie: get, change, `api` (Update or UpdateStatus), retried on conflict; then processed."""

    def update() -> k8s.V1PodDisruptionBudget:
        old = get_pdb(c, ns, name)
        mutate(old)
        return api(name, ns, old)

    updated = retry_on_conflict(update)
    wait_for_pdb_to_be_processed(c, ns, name)
    return updated


def get_pdb_status(c: Cluster, ns: str, name: str) -> dict[str, Any]:
    """getPDBStatusOrDie: the dynamic client's GET of the `status` subresource, as the JSON object."""
    pdbs = DynamicClient(c.api).resources.get(api_version="policy/v1", kind="PodDisruptionBudget")
    found: dict[str, Any] = pdbs.subresources["status"].get(name=name, namespace=ns).to_dict()
    return found


def create_merge_patch(old: Any, new: Any) -> Any:
    """jsonpatch.CreateMergePatch (RFC 7386): what changes `old` into `new`; a key `new` lacks becomes null."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            patch[key] = create_merge_patch(old[key], value) if isinstance(value, dict) else value
    return patch


def patch_pdb(
    c: Cluster,
    ns: str,
    name: str,
    make_patch: Callable[[dict[str, Any]], Any],
    *subresources: str,
    processed: Callable[[Cluster, str, str], None] | None = None,
) -> k8s.V1PodDisruptionBudget:
    """patchPDBOrDie: read through the dynamic client's `status` GET, merge-patch the object (or `/status`), then
    wait until the controller processed it (`processed`; waitForPdbToBeProcessed unless given)."""
    patch = (
        c.policy.patch_namespaced_pod_disruption_budget_status
        if subresources == ("status",)
        else c.policy.patch_namespaced_pod_disruption_budget
    )

    def attempt() -> k8s.V1PodDisruptionBudget:
        old = get_pdb_status(c, ns, name)
        body = make_patch(old)
        patched: k8s.V1PodDisruptionBudget = patch(name, ns, body, _content_type="application/merge-patch+json")
        return patched

    patched = retry_on_conflict(attempt)
    (processed or wait_for_pdb_to_be_processed)(c, ns, name)
    return patched


def wait_for_pdb_sync_failed(c: Cluster, ns: str, name: str) -> None:
    """The controller failed safe on the budget: DisruptionAllowed False, reason SyncFailed, nothing allowed."""

    def failed() -> bool:
        status = get_pdb(c, ns, name).status
        conditions = status.conditions or []
        found = any(x.type == "DisruptionAllowed" and x.reason == "SyncFailed" for x in conditions)
        return found and status.disruptions_allowed == 0

    until(failed, f"pdb {name} failing safe")


def delete_pdb(c: Cluster, ns: str, name: str) -> None:
    """deletePDBOrDie: delete, then wait for a 404."""
    c.policy.delete_namespaced_pod_disruption_budget(name, ns)

    def deleted() -> bool:
        try:
            get_pdb(c, ns, name)
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    until(deleted, f"pdb {name} deleted")


def list_pdbs(c: Cluster, ns: str | None, selector: str, count: int, names: list[str]) -> None:
    """listPDBs: `count` items, whose names are `names` in any order."""
    if ns is None:
        found = c.policy.list_pod_disruption_budget_for_all_namespaces(label_selector=selector)
    else:
        found = c.policy.list_namespaced_pod_disruption_budget(ns, label_selector=selector)
    assert len(found.items) == count
    assert sorted(p.metadata.name for p in found.items) == sorted(names)


def delete_pdb_collection(c: Cluster, ns: str) -> None:
    """deletePDBCollection and waitForPDBCollectionToBeDeleted."""
    c.policy.delete_collection_namespaced_pod_disruption_budget(ns)
    until(lambda: not c.policy.list_namespaced_pod_disruption_budget(ns).items, "pdb collection deleted")


def pod_manifest(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    """createPodsOrDie's pod: container `donothing` (pause), restartPolicy Always."""
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "containers": [{"name": "donothing", "image": "pause", "command": ["sh", "-c", PAUSE]}],
            "restartPolicy": "Always",
            **spec,
        },
    }


def create_pods(c: Cluster, ns: str, n: int, **spec: Any) -> None:
    """createPodsOrDie: pods pod-0..pod-(n-1) labelled foo=bar."""
    for i in range(n):
        c.core.create_namespaced_pod(ns, pod_manifest(f"pod-{i}", DEFAULT_LABELS, **spec))


def is_ready(pod: k8s.V1Pod) -> bool:
    """podutil.IsPodReady and not being deleted (waitForPodsOrDie's and locateRunningPod's test)."""
    ready = any(x.type == "Ready" and x.status == "True" for x in pod.status.conditions or [])
    return ready and pod.metadata.deletion_timestamp is None


def wait_for_pods(c: Cluster, ns: str, n: int) -> None:
    """waitForPodsOrDie: at least `n` pods labelled foo=bar are Ready and not being deleted."""

    def enough() -> bool:
        pods = c.core.list_namespaced_pod(ns, label_selector="foo=bar").items
        return sum(is_ready(p) for p in pods) >= n

    until(enough, f"{n} ready pods")


def locate_running_pod(c: Cluster, ns: str) -> k8s.V1Pod:
    """locateRunningPod: a pod of the namespace that is Ready and not being deleted."""

    def first() -> k8s.V1Pod | None:
        return next((p for p in c.core.list_namespaced_pod(ns).items if is_ready(p)), None)

    found: k8s.V1Pod = until(first, "a running pod")
    return found


def wait_for_pdb_to_observe_healthy_pods(c: Cluster, ns: str, healthy: int, desired: int) -> None:
    """waitForPdbToObserveHealthyPods: the status of pdb `foo` says currentHealthy/desiredHealthy."""

    def observed() -> bool:
        status = get_pdb(c, ns, DEFAULT_NAME).status
        return (status.current_healthy, status.desired_healthy) == (healthy, desired)

    until(observed, f"pdb observing {healthy} healthy of {desired} desired")


def evict(c: Cluster, ns: str, name: str) -> None:
    """EvictV1."""
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}}
    c.core.create_namespaced_pod_eviction(name, ns, body)


def has_status_cause(exc: ApiException, cause: str) -> bool:
    """apierrors.HasStatusCause: the Status's details name a cause of that type."""
    status = json.loads(exc.body or "{}")
    return any(c.get("reason") == cause for c in (status.get("details") or {}).get("causes") or [])


def assert_eviction_denied_by_budget(c: Cluster, ns: str, name: str) -> None:
    """'pod eviction should fail with DisruptionBudget cause'."""
    with pytest.raises(ApiException) as denied:
        evict(c, ns, name)
    assert has_status_cause(denied.value, DISRUPTION_BUDGET_CAUSE), denied.value.body


def is_pdb_erroring(pdb: k8s.V1PodDisruptionBudget) -> bool:
    """isPDBErroring: a SyncFailed condition saying a pod has no controller reference."""
    return any(
        "SyncFailed" in (cond.reason or "") and "found no controller ref for pod" in (cond.message or "")
        for cond in pdb.status.conditions or []
    )


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --- the Its of test/e2e/apps/disruption.go, in its order ---------------------------------------------------------


def test_listing_pod_disruption_budgets_for_all_namespaces_should_list_and_delete_a_collection_of_pdbs(
    cluster: Cluster, ns: str, another_ns: str
) -> None:
    special = {"foo_pdb": "bar_pdb"}
    selector = "foo_pdb=bar_pdb"
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, 2, special)
    create_pdb_min_available(cluster, ns, "foo2", "1%", special)
    create_pdb_min_available(cluster, another_ns, "foo3", 2, special)

    list_pdbs(cluster, None, selector, 3, [DEFAULT_NAME, "foo2", "foo3"])
    list_pdbs(cluster, ns, selector, 2, [DEFAULT_NAME, "foo2"])
    delete_pdb_collection(cluster, ns)


def test_should_create_a_pod_disruption_budget(cluster: Cluster, ns: str) -> None:
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, "1%", DEFAULT_LABELS)

    def two_percent(pdb: k8s.V1PodDisruptionBudget) -> None:
        pdb.spec.min_available = "2%"

    updated = update_pdb(
        cluster, ns, DEFAULT_NAME, two_percent, cluster.policy.replace_namespaced_pod_disruption_budget
    )
    assert updated.spec.min_available == "2%"

    patched = patch_pdb(cluster, ns, DEFAULT_NAME, lambda _old: {"spec": {"minAvailable": "3%"}})
    assert patched.spec.min_available == "3%"

    delete_pdb(cluster, ns, DEFAULT_NAME)


def test_should_observe_pod_disruption_budget_status_updated(cluster: Cluster, ns: str) -> None:
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, 1, DEFAULT_LABELS)
    create_pods(cluster, ns, 3)
    wait_for_pods(cluster, ns, 3)
    # disruptionsAllowed starts at 0: seeing it positive means the controller works
    until(lambda: (get_pdb(cluster, ns, DEFAULT_NAME).status.disruptions_allowed or 0) > 0, "disruptions allowed")


def test_should_update_patch_pod_disruption_budget_status(cluster: Cluster, ns: str) -> None:
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, 1, DEFAULT_LABELS)
    # the disrupted pod must exist, or the controller drops it from the status
    create_pods(cluster, ns, 1)
    wait_for_pods(cluster, ns, 1)
    pod = locate_running_pod(cluster, ns)

    def disrupt(old: k8s.V1PodDisruptionBudget) -> None:
        old.status.disrupted_pods = {pod.metadata.name: _now()}

    update_pdb(cluster, ns, DEFAULT_NAME, disrupt, cluster.policy.replace_namespaced_pod_disruption_budget_status)
    updated = get_pdb_status(cluster, ns, DEFAULT_NAME)
    assert pod.metadata.name in (updated["status"].get("disruptedPods") or {})

    def clear_disrupted(old: dict[str, Any]) -> Any:
        new = json.loads(json.dumps(old))
        new["status"].pop("disruptedPods", None)  # an empty map, which Go's omitempty leaves out
        return create_merge_patch(old, new)

    patched = patch_pdb(cluster, ns, DEFAULT_NAME, clear_disrupted, "status")
    assert not patched.status.disrupted_pods


def test_should_observe_that_the_pod_disruption_budget_status_is_not_updated_for_unmanaged_pods(
    cluster: Cluster, ns: str
) -> None:
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, 1, DEFAULT_LABELS)
    create_pods(cluster, ns, 3)
    wait_for_pods(cluster, ns, 3)
    # gomega.Consistently for a minute, once a second; here, once the controller has counted the three pods (it
    # synced with them), ten reads 0.2 s apart
    until(lambda: get_pdb(cluster, ns, DEFAULT_NAME).status.current_healthy == 3, "pdb counting the pods")
    for _ in range(10):
        assert not is_pdb_erroring(get_pdb(cluster, ns, DEFAULT_NAME)), "pod shouldn't error for unmanaged pod"
        time.sleep(0.2)  # Consistently's interval, not a wait for the controller


@pytest.mark.parametrize(
    ("min_available", "pod_count", "should_deny"),
    [
        pytest.param(None, 1, False, id="no PDB => should allow an eviction"),
        pytest.param(2, 2, True, id="too few pods, absolute => should not allow an eviction"),
        pytest.param(2, 3, False, id="enough pods, absolute => should allow an eviction"),
    ],
)
def test_evictions(cluster: Cluster, ns: str, min_available: int | None, pod_count: int, should_deny: bool) -> None:
    """The rows of `evictionCases` without a ReplicaSet (those with one need its scale: docs/kubernetes-e2e.md)."""
    create_pods(cluster, ns, pod_count)
    if min_available is not None:
        create_pdb_min_available(cluster, ns, DEFAULT_NAME, min_available, DEFAULT_LABELS)
    pod = locate_running_pod(cluster, ns)
    if should_deny:
        assert_eviction_denied_by_budget(cluster, ns, pod.metadata.name)
        return
    wait_for_pods(cluster, ns, pod_count)

    # disruptionsAllowed starts at 0: an eviction allowed at some point means the controller works
    def evicted() -> bool:
        try:
            evict(cluster, ns, pod.metadata.name)
        except ApiException:
            return False
        return True

    until(evicted, "eviction allowed")


def test_should_block_an_eviction_until_the_pdb_is_updated_to_allow_it(cluster: Cluster, ns: str) -> None:
    create_pdb_min_available(cluster, ns, DEFAULT_NAME, 3, DEFAULT_LABELS)
    # upstream: a ReplicaSet of 3 pause pods. Here a Job keeps 3 such pods running and replaces an evicted one (its
    # podFailurePolicy ignores the eviction, so it is not counted as a failure)
    job = {
        "metadata": {"name": "rs"},
        "spec": {
            "parallelism": 3,
            "completions": None,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
            },
            "template": {
                "metadata": {"labels": DEFAULT_LABELS},
                "spec": {
                    "restartPolicy": "Never",
                    # not the pause command: a pod that exits 0 on SIGTERM would complete the Job; it takes SIGTERM
                    # (a trap) and ends 143, since PID 1 with no handler would run out its 30 s grace period
                    "containers": [
                        {
                            "name": "donothing",
                            "image": "pause",
                            "command": ["sh", "-c", "trap 'exit 143' TERM; sleep 1000000 & wait"],
                        }
                    ],
                },
            },
        },
    }
    cluster.batch.create_namespaced_job(ns, job)

    wait_for_pods(cluster, ns, 3)
    pod = locate_running_pod(cluster, ns)
    assert_eviction_denied_by_budget(cluster, ns, pod.metadata.name)

    def two(pdb: k8s.V1PodDisruptionBudget) -> None:
        pdb.spec.min_available = 2

    update_pdb(cluster, ns, DEFAULT_NAME, two, cluster.policy.replace_namespaced_pod_disruption_budget)

    wait_for_pods(cluster, ns, 3)
    wait_for_pdb_to_observe_healthy_pods(cluster, ns, 3, 2)
    evict(cluster, ns, pod.metadata.name)  # the eviction is now allowed

    def max_unavailable_zero(old: dict[str, Any]) -> Any:
        new = json.loads(json.dumps(old))
        new["spec"].pop("minAvailable", None)
        new["spec"]["maxUnavailable"] = 0
        return create_merge_patch(old, new)

    # Upstream's ReplicaSet has a scale (3), so the budget is processed (observedGeneration) with 0 disruptions
    # allowed. A Job has no scale subresource, in Kubernetes as here: the controller fails safe (SyncFailed, 0
    # allowed), and failSafe (disruption.go) leaves observedGeneration behind, so wait for that condition instead
    patch_pdb(cluster, ns, DEFAULT_NAME, max_unavailable_zero, processed=wait_for_pdb_sync_failed)

    wait_for_pods(cluster, ns, 3)
    pod = locate_running_pod(cluster, ns)  # a new running pod
    assert_eviction_denied_by_budget(cluster, ns, pod.metadata.name)

    delete_pdb(cluster, ns, DEFAULT_NAME)
    wait_for_pods(cluster, ns, 3)
    evict(cluster, ns, pod.metadata.name)  # the eviction is now allowed


@pytest.mark.parametrize(
    ("policy", "ready_first", "expected_evictions"),
    [
        pytest.param(None, True, 1, id="should evict ready pods with Default UnhealthyPodEvictionPolicy"),
        pytest.param("IfHealthyBudget", True, 1, id="should evict ready pods with IfHealthyBudget ..."),
        pytest.param("AlwaysAllow", True, 1, id="should evict ready pods with AlwaysAllow ..."),
        pytest.param(None, False, 0, id="should not evict unready pods with Default UnhealthyPodEvictionPolicy"),
        pytest.param("IfHealthyBudget", False, 0, id="should not evict unready pods with IfHealthyBudget ..."),
        pytest.param("AlwaysAllow", False, 3, id="should evict unready pods with AlwaysAllow ..."),
    ],
)
def test_unhealthy_pod_eviction_policy(
    cluster: Cluster, ns: str, policy: str | None, ready_first: bool, expected_evictions: int
) -> None:
    """`unhealthyPodEvictionPolicyCases`. Upstream's budget is maxUnavailable 1 over a ReplicaSet of 3 (so 2 pods
    must stay healthy); over 3 bare pods, which have no controller scale, the same budget is minAvailable 2."""
    spec: dict[str, Any] = {"selector": {"matchLabels": DEFAULT_LABELS}, "minAvailable": 2}
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    cluster.policy.create_namespaced_pod_disruption_budget(ns, {"metadata": {"name": DEFAULT_NAME}, "spec": spec})
    wait_for_pdb_to_be_processed(cluster, ns, DEFAULT_NAME)

    gates = {} if ready_first else {"readinessGates": [{"conditionType": NOT_READY_GATE}]}
    create_pods(cluster, ns, 3, **gates)
    if ready_first:
        wait_for_pods(cluster, ns, 3)
        wait_for_pdb_to_observe_healthy_pods(cluster, ns, 3, 2)
    else:
        # e2epod.VerifyPodsRunning(..., wantName=false): the three pods Running (not Ready)
        until(
            lambda: sum(p.status.phase == "Running" for p in cluster.core.list_namespaced_pod(ns).items) == 3,
            "3 running pods",
        )
        wait_for_pdb_to_observe_healthy_pods(cluster, ns, 0, 2)

    evicted: set[str] = set()
    for pod in cluster.core.list_namespaced_pod(ns).items:
        try:
            evict(cluster, ns, pod.metadata.name)
        except ApiException:
            continue
        evicted.add(pod.metadata.name)
    assert len(evicted) == expected_evictions

    def none_left() -> bool:
        pods = cluster.core.list_namespaced_pod(ns).items
        return not any(p.metadata.name in evicted and p.metadata.deletion_timestamp is None for p in pods)

    until(none_left, "evicted pods should be deleted")
