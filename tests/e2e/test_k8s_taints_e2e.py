"""Kubernetes' NoExecuteTaintManager e2e tests (test/e2e/node/taints.go), run against `kjobs up`.

Each test is one `It` of kubernetes/kubernetes test/e2e/node/taints.go ("NoExecuteTaintManager Single Pod" and
"Multiple Pods"), named after it, with its steps and assertions, against one `kjobs up` (one node) started for the
module and a namespace of its own per test, through the official `kubernetes` Python client: pods created and
awaited Running (`RunPodAndGetNodeName`), the node's taints changed as `e2enode.AddOrUpdateTaintOnNode` changes
them (a strategic merge patch carrying the node's resourceVersion, retried on conflict), deletions observed by a
watch on the pods' `group` label (the test's informer, `createTestController`).

Time is scaled, as docs/kubernetes-e2e.md says: the tolerationSeconds are seconds, not tens of seconds, and each
window in which upstream waits to see that a pod is *not* deleted (65 or 75 s: the kubelet's deletion delay and a
margin) is a window past the pod's toleration here. The pause image becomes a local `sh -c` that runs until
signalled.
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from tests.e2e.k8s_up import Cluster, core_cluster
from tests.e2e.test_k8s_job_e2e import retry_on_conflict, until

pytestmark = pytest.mark.e2e

PAUSE = "trap 'exit 0' TERM; sleep 1000000 & wait"
"""The pause image: runs until SIGTERM, then exits 0."""
TAINT_KEY = "kubernetes.io/e2e-evict-taint-key"
TAINT_VALUE = "evictTaintVal"
TEST_FINALIZER = "example.com/test-finalizer"
NOT_EVICTED_WINDOW = 1.0
"""Seconds a pod that must stay is watched after the taint (upstream: kubeletPodDeletionDelaySeconds +
additionalWaitPerDeleteSeconds, 65 s, of which the taint manager needs none for a pod it evicts at once)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` with one node for every test of the module ([Serial] upstream: they taint the nodes)."""
    with core_cluster(tmp_path_factory.mktemp("k8staints")) as up:
        yield up


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """f.Namespace ("taint-single-pod" / "taint-multiple-pods"), deleted after the test."""
    name = f"taint-{secrets.token_hex(4)}"
    cluster.core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.core.delete_namespace(name)


# --- taints.go's helpers ------------------------------------------------------------------------------------------


def get_test_taint() -> dict[str, Any]:
    """getTestTaint: the NoExecute taint, timeAdded now."""
    now = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoExecute", "timeAdded": now}


def create_pod_for_taints_test(
    has_toleration: bool, toleration_seconds: int, pod_name: str, pod_label: str, ns: str
) -> dict[str, Any]:
    """createPodForTaintsTest: a pause pod labelled group=LABEL, tolerating the taint forever, for
    `toleration_seconds`, or not at all (its metadata.deletionGracePeriodSeconds, 1, as upstream sends it)."""
    spec: dict[str, Any] = {"containers": [{"name": "pause", "image": "pause", "command": ["sh", "-c", PAUSE]}]}
    if has_toleration:
        toleration: dict[str, Any] = {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoExecute"}
        if toleration_seconds > 0:
            toleration["tolerationSeconds"] = toleration_seconds
        spec["tolerations"] = [toleration]
    meta = {"name": pod_name, "namespace": ns, "labels": {"group": pod_label}, "deletionGracePeriodSeconds": 1}
    return {"metadata": meta, "spec": spec}


class Deletions:
    """createTestController: names of the group's pods as their deletions are observed (a list, then a watch from
    its resourceVersion, as an informer's DeleteFunc sees them)."""

    def __init__(self, c: Cluster, pod_label: str, ns: str) -> None:
        self.names: queue.Queue[str] = queue.Queue()
        self._watch = k8s_watch.Watch()
        listed = c.core.list_namespaced_pod(ns, label_selector=f"group={pod_label}")
        stream = self._watch.stream(
            c.core.list_namespaced_pod,
            ns,
            label_selector=f"group={pod_label}",
            resource_version=listed.metadata.resource_version,
            timeout_seconds=120,
        )
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream: Iterator[dict[str, Any]]) -> None:
        try:
            for event in stream:
                if event["type"] == "DELETED":
                    self.names.put(event["object"].metadata.name)
        except Exception:  # the server went first (the module's end): nothing more to observe
            return

    def next(self, timeout: float) -> str | None:
        """The next deletion observed within `timeout` seconds (None when there was none)."""
        try:
            return self.names.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def stop(self) -> None:
        self._watch.stop()


@pytest.fixture
def watches() -> Iterator[list[Deletions]]:
    """The test's deletion watches, stopped after it (the informer's context ends with the `It`)."""
    started: list[Deletions] = []
    yield started
    for w in started:
        w.stop()


def run_pod_and_get_node_name(c: Cluster, ns: str, pod: dict[str, Any]) -> str:
    """testutils.RunPodAndGetNodeName: create the pod, wait for it to run, its node."""
    c.core.create_namespaced_pod(ns, pod)
    name = pod["metadata"]["name"]
    running: k8s.V1Pod = until(
        lambda: (p := c.core.read_namespaced_pod(name, ns)).status.phase == "Running" and p, f"pod {name} running"
    )
    node: str = running.spec.node_name
    return node


def _patch_node_taints(c: Cluster, node_name: str, change: Any) -> None:
    """controller.PatchNodeTaints: a strategic merge patch of spec.taints with the node's resourceVersion (taints
    have no merge key, so the list is replaced whole), retried on conflict."""

    def attempt() -> None:
        node = c.core.read_node(node_name)
        taints = [c.api.sanitize_for_serialization(t) for t in node.spec.taints or []]
        body = {"metadata": {"resourceVersion": node.metadata.resource_version}, "spec": {"taints": change(taints)}}
        c.core.patch_node(node_name, body, _content_type="application/strategic-merge-patch+json")

    retry_on_conflict(attempt)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("key"), a.get("value"), a.get("effect")) == (b.get("key"), b.get("value"), b.get("effect"))


def add_or_update_taint_on_node(c: Cluster, node_name: str, taint: dict[str, Any]) -> None:
    """e2enode.AddOrUpdateTaintOnNode, then ExpectNodeHasTaint."""
    _patch_node_taints(c, node_name, lambda taints: [t for t in taints if t["key"] != taint["key"]] + [taint])
    assert node_has_taint(c, node_name, taint), f"node {node_name} lacks the taint"


def remove_taint_off_node(c: Cluster, node_name: str, taint: dict[str, Any]) -> None:
    """e2enode.RemoveTaintOffNode, then ExpectNodeDoesNotHaveTaint."""
    _patch_node_taints(c, node_name, lambda taints: [t for t in taints if not _same(t, taint)])
    assert not node_has_taint(c, node_name, taint), f"node {node_name} still has the taint"


def node_has_taint(c: Cluster, node_name: str, taint: dict[str, Any]) -> bool:
    taints = [c.api.sanitize_for_serialization(t) for t in c.core.read_node(node_name).spec.taints or []]
    return any(_same(t, taint) for t in taints)


@pytest.fixture
def tainted(cluster: Cluster) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """ginkgo.DeferCleanup(e2enode.RemoveTaintOffNode, ...): the taints a test put on, removed after it."""
    added: list[tuple[str, dict[str, Any]]] = []
    yield added
    for node_name, taint in added:
        if node_has_taint(cluster, node_name, taint):
            remove_taint_off_node(cluster, node_name, taint)


def taint_node(c: Cluster, node_name: str, tainted: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    taint = get_test_taint()
    add_or_update_taint_on_node(c, node_name, taint)
    tainted.append((node_name, taint))
    return taint


def no_deletion_until(deletions: Deletions, deadline: float) -> str | None:
    """The name of a pod deleted before the monotonic `deadline` (None when none was)."""
    return deletions.next(deadline - time.monotonic())


# --- NoExecuteTaintManager Single Pod -----------------------------------------------------------------------------


def test_single_pod_evicts_pods_from_tainted_nodes(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    name = "taint-eviction-1"
    pod = create_pod_for_taints_test(False, 0, name, name, ns)
    deletions = Deletions(cluster, name, ns)
    watches.append(deletions)
    node_name = run_pod_and_get_node_name(cluster, ns, pod)
    taint_node(cluster, node_name, tainted)
    assert deletions.next(timeout=45) is not None, "Failed to evict Pod"


def test_single_pod_doesnt_evict_pod_with_tolerations_from_tainted_nodes(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    name = "taint-eviction-2"
    pod = create_pod_for_taints_test(True, 0, name, name, ns)
    deletions = Deletions(cluster, name, ns)
    watches.append(deletions)
    node_name = run_pod_and_get_node_name(cluster, ns, pod)
    taint_node(cluster, node_name, tainted)
    assert deletions.next(timeout=NOT_EVICTED_WINDOW) is None, "Pod was evicted despite toleration"


def test_single_pod_eventually_evict_pod_with_finite_tolerations_from_tainted_nodes(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    """Upstream tolerates 70 s and watches 65 s without a deletion, then up to 65 s more for it; here 2 s, 1 s."""
    name = "taint-eviction-3"
    pod = create_pod_for_taints_test(True, 2, name, name, ns)
    deletions = Deletions(cluster, name, ns)
    watches.append(deletions)
    node_name = run_pod_and_get_node_name(cluster, ns, pod)
    taint_node(cluster, node_name, tainted)
    assert deletions.next(timeout=1.0) is None, "Pod was evicted despite toleration"
    assert deletions.next(timeout=45) is not None, "Pod wasn't evicted"


def test_single_pod_removing_taint_cancels_eviction(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    """Upstream tolerates 10 s, waits a moment (its `time.NewTimer(additionalWaitPerDeleteSeconds)` is 5 ns: a
    Duration without a unit), removes the taint and watches 75 s; here 3 s (the removal must land well within
    it on a loaded machine), 0.5 s, and until 1 s past the toleration. The controller's Event on cancelling
    (tainteviction.go `cancelWorkWithEvent`) marks the removal processed."""
    name = "taint-eviction-4"
    pod = create_pod_for_taints_test(True, 3, name, name, ns)
    deletions = Deletions(cluster, name, ns)
    watches.append(deletions)
    node_name = run_pod_and_get_node_name(cluster, ns, pod)
    taint = taint_node(cluster, node_name, tainted)
    tainted_at = time.monotonic()
    assert deletions.next(timeout=0.5) is None, "Pod was evicted despite toleration"

    remove_taint_off_node(cluster, node_name, taint)

    def cancelled() -> bool:
        events = cluster.core.list_namespaced_event(ns, field_selector=f"involvedObject.name={name}").items
        return any(e.reason == "TaintManagerEviction" and e.message.startswith("Cancelling deletion") for e in events)

    until(cancelled, "the eviction cancelled")
    assert no_deletion_until(deletions, tainted_at + 3 + 1) is None, "Pod was evicted despite toleration"


def test_single_pod_pods_evicted_from_tainted_nodes_have_pod_disruption_condition(
    cluster: Cluster, ns: str, tainted: list[Any]
) -> None:
    name = "taint-eviction-pod-disruption"
    pod = create_pod_for_taints_test(False, 0, name, name, ns)
    pod["metadata"]["finalizers"] = [TEST_FINALIZER]
    node_name = run_pod_and_get_node_name(cluster, ns, pod)
    try:
        taint_node(cluster, node_name, tainted)
        # e2epod.WaitForPodTerminatingInNamespaceTimeout
        terminating: k8s.V1Pod = until(
            lambda: (p := cluster.core.read_namespaced_pod(name, ns)).metadata.deletion_timestamp is not None and p,
            "pod terminating",
        )
        # e2epod.VerifyPodHasConditionWithType
        assert any(c.type == "DisruptionTarget" for c in terminating.status.conditions or [])
    finally:
        # e2epod.NewPodClient(f).RemoveFinalizer

        def remove_finalizer() -> None:
            current = cluster.core.read_namespaced_pod(name, ns)
            current.metadata.finalizers = [f for f in current.metadata.finalizers or [] if f != TEST_FINALIZER]
            cluster.core.replace_namespaced_pod(name, ns, current)

        try:
            retry_on_conflict(remove_finalizer)
        except ApiException as exc:
            if exc.status != 404:
                raise


# --- NoExecuteTaintManager Multiple Pods --------------------------------------------------------------------------


def test_multiple_pods_only_evicts_pods_without_tolerations_from_tainted_nodes(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    group = "taint-eviction-a"
    deletions = Deletions(cluster, group, ns)
    watches.append(deletions)
    pod1 = create_pod_for_taints_test(False, 0, group + "1", group, ns)
    pod2 = create_pod_for_taints_test(True, 0, group + "2", group, ns)
    node1 = run_pod_and_get_node_name(cluster, ns, pod1)
    node2 = run_pod_and_get_node_name(cluster, ns, pod2)
    taint_node(cluster, node1, tainted)
    if node2 != node1:
        taint_node(cluster, node2, tainted)
    window_end = time.monotonic() + NOT_EVICTED_WINDOW
    evicted: list[str] = []
    while (name := deletions.next(timeout=max(window_end - time.monotonic(), 0) if evicted else 45)) is not None:
        evicted.append(name)
        assert name != group + "2", f"Unexpected Pod {name!r} gets evicted."
    assert evicted == [group + "1"], "Failed to evict Pod1."


def test_multiple_pods_evicts_pods_with_min_toleration_seconds(
    cluster: Cluster, ns: str, watches: list[Deletions], tainted: list[Any]
) -> None:
    """Upstream tolerates 5 s and 25 s; here 1 s and 2 s."""
    group = "taint-eviction-b"
    deletions = Deletions(cluster, group, ns)
    watches.append(deletions)
    pod1 = create_pod_for_taints_test(True, 1, group + "1", group, ns)
    pod2 = create_pod_for_taints_test(True, 2, group + "2", group, ns)
    node_name = run_pod_and_get_node_name(cluster, ns, pod1)
    hostname = cluster.core.read_node(node_name).metadata.labels.get("kubernetes.io/hostname")
    assert hostname, f"error getting kubernetes.io/hostname label on node {node_name}"
    pod2["spec"]["nodeSelector"] = {"kubernetes.io/hostname": hostname}  # pod2 on pod1's node
    run_pod_and_get_node_name(cluster, ns, pod2)
    taint_node(cluster, node_name, tainted)
    deadline = time.monotonic() + 45
    evicted = [deletions.next(timeout=deadline - time.monotonic()) for _ in range(2)]
    assert None not in evicted, f"Failed to evict all Pods. {evicted.count(None)} pod(s) is not evicted."
