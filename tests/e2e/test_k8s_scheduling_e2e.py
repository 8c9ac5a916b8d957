"""Kubernetes' scheduler end-to-end tests (test/e2e/scheduling/preemption.go and predicates.go) against `kjobs up`.

Each test is one `It`, named after it, with its steps and assertions, against one `kjobs up` with two nodes
started for the module and a namespace of its own per test, through the official `kubernetes` Python client
(client-go's calls one for one). docs/kubernetes-e2e.md lists what was ported, changed and left out.

The pause image becomes a local process that runs until signalled and then exits 0 (`initPausePod`'s grace
period of 1 s is kept). The test extended resources (`scheduling.k8s.io/foo`, `example.com/fakecpu`) are put on
the nodes as upstream does: a strategic merge patch of `status.capacity` and `status.allocatable`, taken off
again after the test. The tests share the nodes (as upstream's `[Serial]` tests do), so each leaves labels,
taints and resources as it found them.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

T = TypeVar("T")
POLL = 0.05
TIMEOUT = 45.0
"""Seconds any one wait may take (upstream's PodStartShort is 2 minutes; every wait here takes seconds)."""
PAUSE = "trap 'exit 0' TERM; sleep 1000000 & wait"
"""The pause image: runs until SIGTERM, then exits 0."""
TEST_EXTENDED_RESOURCE = "scheduling.k8s.io/foo"
FAKE_CPU = "example.com/fakecpu"
BASE_NAME = "sched-preemption"
LOW, MEDIUM, HIGH = f"{BASE_NAME}-low-priority", f"{BASE_NAME}-medium-priority", f"{BASE_NAME}-high-priority"
PRIORITY_PAIRS = ((LOW, 1), (MEDIUM, 100), (HIGH, 1000))
SMP = "application/strategic-merge-patch+json"
"""What client-go's callers here send (`types.StrategicMergePatchType`); the Python client would pick JSON Patch."""
JSON_PATCH = "application/json-patch+json"


@dataclass
class Cluster:
    api: k8s.ApiClient
    core: k8s.CoreV1Api
    scheduling: k8s.SchedulingV1Api


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` with two nodes for every test of the module."""
    tmp = tmp_path_factory.mktemp("k8ssched")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args, "--nodes", "2", "--backoff", "0.2", "--job-batch-period", "0.1") as (proc, line, _):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        c = Cluster(api, k8s.CoreV1Api(api), k8s.SchedulingV1Api(api))
        until(lambda: len(ready_schedulable_nodes(c)) == 2, "two Ready nodes")
        yield c
        api.close()


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (the e2e framework's f.Namespace)."""
    name = f"sched-{secrets.token_hex(4)}"
    cluster.core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.core.delete_namespace(name)


# --- framework helpers -------------------------------------------------------------------------------------------


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    """wait.PollUntilContextTimeout: poll `probe` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def retry_on_conflict(update: Callable[[], T]) -> T:
    """retry.RetryOnConflict: the node agents write their Nodes' status every few seconds."""
    for attempt in range(10):
        try:
            return update()
        except ApiException as exc:
            if exc.status != 409 or attempt == 9:
                raise
    raise AssertionError("unreachable")


def ready_schedulable_nodes(c: Cluster) -> list[k8s.V1Node]:
    """e2enode.GetReadySchedulableNodes: Ready, not cordoned, without a NoSchedule/NoExecute taint."""
    nodes: list[k8s.V1Node] = []
    for node in c.core.list_node().items:
        ready = any(x.type == "Ready" and x.status == "True" for x in node.status.conditions or [])
        tainted = any(t.effect in ("NoSchedule", "NoExecute") for t in node.spec.taints or [])
        if ready and not node.spec.unschedulable and not tainted:
            nodes.append(node)
    return sorted(nodes, key=lambda n: n.metadata.name)


def patch_node_resource(c: Cluster, node: str, resource: str, amount: str | None) -> None:
    """patchNode: a strategic merge patch of the Node's status capacity and allocatable (None: remove it)."""
    body = {"status": {"capacity": {resource: amount}, "allocatable": {resource: amount}}}
    c.core.patch_node_status(node, body, _content_type=SMP)


def add_label(c: Cluster, node: str, key: str, value: str | None) -> None:
    """e2enode.AddOrUpdateLabelOnNode / RemoveLabelOffNode (None), then ExpectNodeHasLabel."""
    c.core.patch_node(node, {"metadata": {"labels": {key: value}}}, _content_type=SMP)
    assert (c.core.read_node(node).metadata.labels or {}).get(key) == value


def set_taint(c: Cluster, node: str, taint: dict[str, str], present: bool) -> None:
    """e2enode.AddOrUpdateTaintOnNode / RemoveTaintOffNode: read, change `spec.taints`, update."""

    def update() -> None:
        current = c.core.read_node(node)
        taints = [t for t in current.spec.taints or [] if t.key != taint["key"]]
        if present:
            taints.append(k8s.V1Taint(**taint))
        current.spec.taints = taints
        c.core.replace_node(node, current)

    retry_on_conflict(update)


def init_pause_pod(name: str, **conf: Any) -> dict[str, Any]:
    """initPausePod: one container named after the pod running the pause image, grace period 1 s."""
    container: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10", "command": ["sh", "-c", PAUSE]}
    if "resources" in conf:
        container["resources"] = conf.pop("resources")
    if "ports" in conf:
        container["ports"] = conf.pop("ports")
    meta: dict[str, Any] = {"name": name}
    for key in ("labels", "finalizers"):
        if key in conf:
            meta[key] = conf.pop(key)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [container], "terminationGracePeriodSeconds": 1, **conf},
    }


def create_pause_pod(c: Cluster, ns: str, name: str, **conf: Any) -> k8s.V1Pod:
    pod: k8s.V1Pod = c.core.create_namespaced_pod(ns, init_pause_pod(name, **conf))
    return pod


def wait_for_pod_running(c: Cluster, ns: str, name: str) -> k8s.V1Pod:
    """e2epod.WaitForPodRunningInNamespace."""

    def running() -> k8s.V1Pod | None:
        pod = c.core.read_namespaced_pod(name, ns)
        return pod if pod.status.phase == "Running" else None

    return until(running, f"pod {ns}/{name} running")


def run_pause_pod(c: Cluster, ns: str, name: str, **conf: Any) -> k8s.V1Pod:
    create_pause_pod(c, ns, name, **conf)
    return wait_for_pod_running(c, ns, name)


def wait_for_pod_not_pending(c: Cluster, ns: str, name: str) -> None:
    until(lambda: c.core.read_namespaced_pod(name, ns).status.phase != "Pending", f"pod {ns}/{name} not pending")


def run_pod_and_get_node_name(c: Cluster, ns: str, name: str, **conf: Any) -> str:
    """runPodAndGetNodeName: run a pod, delete it at once (grace 0), return where it ran."""
    pod = run_pause_pod(c, ns, name, **conf)
    c.core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
    return str(pod.spec.node_name)


def node_affinity_on(node: str) -> dict[str, Any]:
    """Required node affinity to one node by `metadata.name` (matchFields)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def resources(**amounts: str) -> dict[str, Any]:
    """Requests and limits both set to `amounts` (a resource name that is no Python name: `**{name: amount}`)."""
    return {"requests": dict(amounts), "limits": dict(amounts)}


def extended(resource: str, amount: str) -> dict[str, Any]:
    """Requests and limits of one (extended) resource."""
    return {"requests": {resource: amount}, "limits": {resource: amount}}


def schedule_failure_event(pod: str) -> Callable[[k8s.CoreV1Event], bool]:
    return lambda e: e.metadata.name.startswith(pod) and e.type == "Warning" and e.reason == "FailedScheduling"


def schedule_success_event(ns: str, pod: str) -> Callable[[k8s.CoreV1Event], bool]:
    return lambda e: (
        e.type == "Normal"
        and e.reason == "Scheduled"
        and e.metadata.name.startswith(pod)
        and f"Successfully assigned {ns}/{pod} to " in (e.message or "")
    )


def wait_for_scheduler_after_action(c: Cluster, ns: str, action: Callable[[], Any], predicate: Any) -> None:
    """WaitForSchedulerAfterAction: do `action`, then see a matching event in the namespace."""
    action()
    until(lambda: any(predicate(e) for e in c.core.list_namespaced_event(ns).items), "the scheduler's event")


def verify_result(c: Cluster, ns: str, scheduled: int, not_scheduled: int, workers: set[str]) -> None:
    """verifyResult with GetPodsScheduled: bound to a worker (PodScheduled True) / not bound at all."""
    got_scheduled, got_not = [], []
    for pod in c.core.list_namespaced_pod(ns).items:
        if pod.spec.node_name and pod.spec.node_name in workers:
            condition = next((x for x in pod.status.conditions or [] if x.type == "PodScheduled"), None)
            assert condition is not None and condition.status == "True", pod.metadata.name
            got_scheduled.append(pod.metadata.name)
        elif not pod.spec.node_name:
            got_not.append(pod.metadata.name)
    assert len(got_not) == not_scheduled, got_not
    assert len(got_scheduled) == scheduled, got_scheduled


def wait_for_stable_cluster(c: Cluster) -> None:
    """WaitForStableCluster: every pod outside kube-system is bound."""
    until(
        lambda: all(
            p.spec.node_name
            for p in c.core.list_pod_for_all_namespaces().items
            if p.metadata.namespace != "kube-system"
        ),
        "a stable cluster",
    )


def is_gone_or_terminating(c: Cluster, ns: str, name: str) -> bool:
    """The preempted pod's check: NotFound, or found with a deletionTimestamp."""
    try:
        return c.core.read_namespaced_pod(name, ns).metadata.deletion_timestamp is not None
    except ApiException as exc:
        return exc.status == 404


# --- test/e2e/scheduling/preemption.go ---------------------------------------------------------------------------


@pytest.fixture
def preemption(cluster: Cluster) -> Iterator[list[str]]:
    """SchedulerPreemption's BeforeEach/AfterEach: the three priority classes; the ready nodes, whose test
    extended resource is taken off afterwards."""
    for name, value in PRIORITY_PAIRS:
        try:
            cluster.scheduling.create_priority_class({"metadata": {"name": name}, "value": value})
        except ApiException as exc:
            assert exc.status == 409, exc.body
    nodes = [n.metadata.name for n in ready_schedulable_nodes(cluster)]
    yield nodes
    for name, _ in PRIORITY_PAIRS:
        cluster.scheduling.delete_priority_class(name, grace_period_seconds=0)
    for node in nodes:
        patch_node_resource(cluster, node, TEST_EXTENDED_RESOURCE, None)


def _victims_per_node(c: Cluster, ns: str, nodes: list[str]) -> list[str]:
    """Two pods per node asking for 2 of its 5 `scheduling.k8s.io/foo` (the first low priority, the rest medium),
    each pinned to its node; returns their names once all run."""
    pods: list[str] = []
    for i, node in enumerate(nodes):
        patch_node_resource(c, node, TEST_EXTENDED_RESOURCE, "5")
        for j in range(2):
            priority = LOW if not pods else MEDIUM
            name = f"pod{i}-{j}-{priority}"
            create_pause_pod(
                c,
                ns,
                name,
                priorityClassName=priority,
                resources=extended(TEST_EXTENDED_RESOURCE, "2"),
                affinity=node_affinity_on(node),
            )
            pods.append(name)
    assert len(pods) >= 2
    for name in pods:
        wait_for_pod_running(c, ns, name)
    return pods


def test_validates_basic_preemption_works(cluster: Cluster, ns: str, preemption: list[str]) -> None:
    """[Conformance] Scheduler, Basic Preemption."""
    c = cluster
    pods = _victims_per_node(c, ns, preemption)
    run_pause_pod(c, ns, "preemptor-pod", priorityClassName=HIGH, resources=extended(TEST_EXTENDED_RESOURCE, "2"))
    assert is_gone_or_terminating(c, ns, pods[0]), "expected pod to be preempted"
    for name in pods[1:]:
        assert c.core.read_namespaced_pod(name, ns).metadata.deletion_timestamp is None


def test_validates_lower_priority_pod_preemption_by_critical_pod(
    cluster: Cluster, ns: str, preemption: list[str]
) -> None:
    """[Conformance] Scheduler, Preemption for critical pod: `system-cluster-critical` in kube-system."""
    c = cluster
    pods = _victims_per_node(c, ns, preemption)
    try:
        run_pause_pod(
            c,
            "kube-system",
            "critical-pod",
            priorityClassName="system-cluster-critical",
            resources=extended(TEST_EXTENDED_RESOURCE, "2"),
        )
        preempted = is_gone_or_terminating(c, ns, pods[0])
        for name in pods[1:]:
            assert c.core.read_namespaced_pod(name, ns).metadata.deletion_timestamp is None
        assert preempted, "expected pod to be preempted"
    finally:
        try:
            c.core.delete_namespaced_pod("critical-pod", "kube-system", grace_period_seconds=0)
        except ApiException as exc:
            assert exc.status == 404


def test_validates_pod_disruption_condition_is_added_to_the_preempted_pod(
    cluster: Cluster, ns: str, preemption: list[str]
) -> None:
    """[Conformance] the victim of a preemption carries the DisruptionTarget condition."""
    c = cluster
    node = preemption[0]
    patch_node_resource(c, node, TEST_EXTENDED_RESOURCE, "1")
    finalizer = "example.com/test-finalizer"
    create_pause_pod(
        c,
        ns,
        "victim-pod",
        priorityClassName=LOW,
        resources=extended(TEST_EXTENDED_RESOURCE, "1"),
        finalizers=[finalizer],
        affinity=node_affinity_on(node),
    )
    wait_for_pod_running(c, ns, "victim-pod")
    try:
        create_pause_pod(
            c,
            ns,
            "preemptor-pod",
            priorityClassName=HIGH,
            resources=extended(TEST_EXTENDED_RESOURCE, "1"),
            affinity=node_affinity_on(node),
        )
        victim = until(
            lambda: (p := c.core.read_namespaced_pod("victim-pod", ns)).metadata.deletion_timestamp and p,
            "the victim terminating",
        )
        condition = next((x for x in victim.status.conditions or [] if x.type == "DisruptionTarget"), None)
        assert condition is not None, victim.status.conditions
        # What kube-scheduler writes (pkg/scheduler/framework/preemption/preemption.go).
        assert (condition.status, condition.reason) == ("True", "PreemptionByScheduler")
    finally:
        # PodClient.RemoveFinalizer: a JSON Patch removing it.
        remove = [{"op": "remove", "path": "/metadata/finalizers"}]
        c.core.patch_namespaced_pod("victim-pod", ns, remove, _content_type=JSON_PATCH)


def test_runs_replica_sets_to_verify_preemption_running_path(cluster: Cluster, ns: str) -> None:
    """[Conformance] PreemptionExecutionPath, with Jobs of parallelism 1 where upstream has ReplicaSets of one
    replica: both replace a preempted pod, which is what the test counts (pods created per owner, seen by a
    watch started first, as upstream's informer). A Job replaces only a failed pod, so these pods exit 1 on
    SIGTERM (the pause image exits 0, and a ReplicaSet replaces it either way)."""
    c = cluster
    node = ready_schedulable_nodes(c)[0]
    hostname = node.metadata.labels["kubernetes.io/hostname"]
    patch_node_resource(c, node.metadata.name, FAKE_CPU, "1000")
    classes = [(f"p{i}", i) for i in range(1, 5)]
    for name, value in classes:
        try:
            c.scheduling.create_priority_class({"metadata": {"name": name}, "value": value})
        except ApiException as exc:
            assert exc.status == 409, exc.body
    batch = k8s.BatchV1Api(c.api)
    seen: dict[str, set[str]] = {"rs-pod1": set(), "rs-pod2": set(), "rs-pod3": set()}
    watcher = k8s_watch.Watch()
    failures: list[BaseException] = []
    stopped = threading.Event()

    def observe() -> None:
        try:
            for event in watcher.stream(c.core.list_namespaced_pod, ns, timeout_seconds=int(TIMEOUT) * 2):
                name = event["object"].metadata.name
                for prefix, names in seen.items():
                    if event["type"] == "ADDED" and name.startswith(prefix):
                        names.add(name)
        except Exception as exc:  # the stream ends with an error when stopped mid-read
            if not stopped.is_set():
                failures.append(exc)

    observer = threading.Thread(target=observe, daemon=True)
    observer.start()
    try:
        for i, amount in ((1, "200"), (2, "300"), (3, "450")):
            pod = init_pause_pod(
                f"pod{i}",
                labels={"name": f"pod{i}"},
                priorityClassName=f"p{i}",
                nodeSelector={"kubernetes.io/hostname": hostname},
                resources=extended(FAKE_CPU, amount),
                restartPolicy="Never",
            )
            pod["spec"]["containers"][0]["command"] = ["sh", "-c", "trap 'exit 1' TERM; sleep 1000000 & wait"]
            job = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": f"rs-pod{i}"},
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "backoffLimit": 6,
                    "template": {"metadata": pod["metadata"], "spec": pod["spec"]},
                },
            }
            batch.create_namespaced_job(ns, job)
            until(lambda i=i: batch.read_namespaced_job(f"rs-pod{i}", ns).status.ready == 1, f"rs-pod{i} ready")
        preemptor = init_pause_pod(
            "pod4",
            labels={"name": "pod4"},
            priorityClassName="p4",
            nodeSelector={"kubernetes.io/hostname": hostname},
            resources=extended(FAKE_CPU, "500"),
        )
        c.core.create_namespaced_pod(ns, preemptor)
        until(lambda: c.core.read_namespaced_pod("pod4", ns).spec.node_name, "pod4 to preempt")
        expected = {"rs-pod1": 2, "rs-pod2": 2, "rs-pod3": 1}

        def counted() -> bool:
            assert not failures, failures
            for prefix, want in expected.items():
                assert len(seen[prefix]) <= want, f"{prefix} had more than {want} pods created: {seen[prefix]}"
            return all(len(seen[p]) == want for p, want in expected.items())

        until(counted, "the pods of rs-pod{1,2,3} created")
        # Upstream then checks for 5 s that no more pods are made (over-preemption); 1 s here.
        stable_until = time.monotonic() + 1.0
        while time.monotonic() < stable_until:
            counted()
            time.sleep(0.1)
    finally:
        stopped.set()
        watcher.stop()
        for name, _ in classes:
            c.scheduling.delete_priority_class(name, grace_period_seconds=0)
        patch_node_resource(c, node.metadata.name, FAKE_CPU, None)


def test_verify_priority_class_endpoints_can_be_operated_with_different_http_methods(cluster: Cluster) -> None:
    """[Conformance] PriorityClass endpoints: value is immutable (patch and update fail), description is not."""
    c = cluster
    test_uuid = str(uuid.uuid4())
    pcs = [
        c.scheduling.create_priority_class({"metadata": {"name": f"p{i}", "labels": {"e2e": test_uuid}}, "value": i})
        for i in (1, 2)
    ]
    try:
        with pytest.raises(ApiException) as info:  # 1. patch/update on immutable fields fail
            c.scheduling.patch_priority_class(pcs[0].metadata.name, {"value": pcs[0].value * 10}, _content_type=SMP)
        assert info.value.status == 422
        copy = c.scheduling.read_priority_class(pcs[1].metadata.name)
        copy.value = pcs[1].value * 10
        with pytest.raises(ApiException) as info:
            c.scheduling.replace_priority_class(copy.metadata.name, copy)
        assert info.value.status == 422
        new_desc = "updated description"  # 2. patch/update on mutable fields succeed
        c.scheduling.patch_priority_class(pcs[0].metadata.name, {"description": new_desc}, _content_type=SMP)
        copy = pcs[1]
        copy.description = new_desc
        c.scheduling.replace_priority_class(copy.metadata.name, copy)
        c.scheduling.list_priority_class()  # 3. list
        for pc in pcs:  # 4. the updated classes
            live = c.scheduling.read_priority_class(pc.metadata.name)
            assert live.value == pc.value
            assert live.description == new_desc
    finally:
        c.scheduling.delete_collection_priority_class(label_selector=f"e2e={test_uuid}")


# --- test/e2e/scheduling/predicates.go ---------------------------------------------------------------------------


@pytest.fixture
def workers(cluster: Cluster) -> set[str]:
    """SchedulerPredicates' BeforeEach: the ready schedulable nodes (`workerNodes`)."""
    return {n.metadata.name for n in ready_schedulable_nodes(cluster)}


def test_validates_resource_limits_of_pods_that_are_allowed_to_run(
    cluster: Cluster, ns: str, workers: set[str]
) -> None:
    """[Conformance] Scheduler, resource limits: a pod asking for half a node's CPU when 70 % of every node is
    taken is not scheduled."""
    c = cluster
    wait_for_stable_cluster(c)
    allocatable: dict[str, int] = {}
    for node in ready_schedulable_nodes(c):
        add_label(c, node.metadata.name, "node", node.metadata.name)
        allocatable[node.metadata.name] = milli(node.status.allocatable["cpu"])
    try:
        biggest = max(allocatable.values())
        for pod in c.core.list_pod_for_all_namespaces().items:
            if pod.spec.node_name in allocatable and pod.status.phase not in ("Succeeded", "Failed"):
                allocatable[pod.spec.node_name] -= sum(
                    milli(((x.resources and x.resources.requests) or {}).get("cpu", "0")) for x in pod.spec.containers
                )
        fillers = []
        for node, cpu in allocatable.items():
            requested = f"{cpu * 7 // 10}m"
            name = f"filler-pod-{uuid.uuid4()}"
            term = {"matchExpressions": [{"key": "node", "operator": "In", "values": [node]}]}
            affinity = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            }
            create_pause_pod(c, ns, name, resources=resources(cpu=requested), affinity=affinity)
            fillers.append(name)
        for name in fillers:
            wait_for_pod_running(c, ns, name)
        conf = {"labels": {"name": "additional"}, "resources": resources(cpu=f"{biggest * 5 // 10}m")}
        wait_for_scheduler_after_action(
            c,
            ns,
            lambda: create_pause_pod(c, ns, "additional-pod", **conf),
            schedule_failure_event("additional-pod"),
        )
        verify_result(c, ns, len(fillers), 1, workers)
    finally:
        for node in allocatable:
            add_label(c, node, "node", None)


def test_validates_local_ephemeral_storage_resource_limits_of_pods_that_are_allowed_to_run(
    cluster: Cluster, ns: str, workers: set[str]
) -> None:
    """[Feature:LocalStorageCapacityIsolation] (GA): pods each asking for a tenth of the largest node's
    ephemeral storage fill every node; one more is not scheduled."""
    c = cluster
    allocatable = {
        n.metadata.name: quantity(n.status.allocatable["ephemeral-storage"]) for n in ready_schedulable_nodes(c)
    }
    biggest = max(allocatable.values())
    wait_for_stable_cluster(c)
    for pod in c.core.list_pod_for_all_namespaces().items:
        if pod.spec.node_name in allocatable and pod.status.phase not in ("Succeeded", "Failed"):
            allocatable[pod.spec.node_name] -= sum(
                quantity(((x.resources and x.resources.requests) or {}).get("ephemeral-storage", "0"))
                for x in pod.spec.containers
            )
    per_pod = biggest // 10
    needed = sum(left // per_pod for left in allocatable.values())
    names = [f"overcommit-{i}" for i in range(needed)]
    for name in names:  # testutils.StartPods
        create_pause_pod(c, ns, name, labels={"name": ""}, resources=resources(**{"ephemeral-storage": str(per_pod)}))
    for name in names:
        wait_for_pod_running(c, ns, name)
    conf = {"labels": {"name": "additional"}, "resources": resources(**{"ephemeral-storage": str(per_pod)})}
    wait_for_scheduler_after_action(
        c, ns, lambda: create_pause_pod(c, ns, "additional-pod", **conf), schedule_failure_event("additional-pod")
    )
    verify_result(c, ns, needed, 1, workers)


def quantity(text: str) -> int:
    """A byte quantity (`resource.Quantity.Value` for the plain and binary-suffixed forms nodes report)."""
    for suffix, factor in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40)):
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


def milli(quantity: str) -> int:
    """A cpu quantity in millicores (`resource.Quantity.MilliValue` for the forms nodes and pods use here)."""
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


def test_validates_that_node_selector_is_respected_if_not_matching(
    cluster: Cluster, ns: str, workers: set[str]
) -> None:
    """[Conformance] Scheduler, node selector not matching."""
    c = cluster
    wait_for_stable_cluster(c)
    wait_for_scheduler_after_action(
        c,
        ns,
        lambda: create_pause_pod(
            c, ns, "restricted-pod", labels={"name": "restricted"}, nodeSelector={"label": "nonempty"}
        ),
        schedule_failure_event("restricted-pod"),
    )
    verify_result(c, ns, 0, 1, workers)


def test_validates_that_node_selector_is_respected_if_matching(cluster: Cluster, ns: str) -> None:
    """[Conformance] Scheduler, node selector matching."""
    c = cluster
    node = run_pod_and_get_node_name(c, ns, "without-label")
    key, value = f"kubernetes.io/e2e-{uuid.uuid4()}", "42"
    add_label(c, node, key, value)
    try:
        create_pause_pod(c, ns, "with-labels", nodeSelector={key: value})
        wait_for_pod_not_pending(c, ns, "with-labels")
        assert c.core.read_namespaced_pod("with-labels", ns).spec.node_name == node
    finally:
        add_label(c, node, key, None)


def test_validates_that_node_affinity_is_respected_if_not_matching(
    cluster: Cluster, ns: str, workers: set[str]
) -> None:
    c = cluster
    wait_for_stable_cluster(c)
    terms = [
        {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar", "value2"]}]},
        {"matchExpressions": [{"key": "diffkey", "operator": "In", "values": ["wrong", "value2"]}]},
    ]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    wait_for_scheduler_after_action(
        c,
        ns,
        lambda: create_pause_pod(c, ns, "restricted-pod", affinity=affinity, labels={"name": "restricted"}),
        schedule_failure_event("restricted-pod"),
    )
    verify_result(c, ns, 0, 1, workers)


def test_validates_that_required_node_affinity_setting_is_respected_if_matching(cluster: Cluster, ns: str) -> None:
    c = cluster
    node = run_pod_and_get_node_name(c, ns, "without-label")
    key, value = f"kubernetes.io/e2e-{uuid.uuid4()}", "42"
    add_label(c, node, key, value)
    try:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
        create_pause_pod(c, ns, "with-labels", affinity=affinity)
        wait_for_pod_not_pending(c, ns, "with-labels")
        assert c.core.read_namespaced_pod("with-labels", ns).spec.node_name == node
    finally:
        add_label(c, node, key, None)


def _tainted_and_labelled(c: Cluster, ns: str) -> tuple[str, dict[str, str], str, str]:
    """getNodeThatCanRunPodWithoutToleration, then a random NoSchedule taint and a random label on that node."""
    node = run_pod_and_get_node_name(c, ns, "without-toleration")
    taint = {
        "key": f"kubernetes.io/e2e-taint-key-{uuid.uuid4()}",
        "value": "testing-taint-value",
        "effect": "NoSchedule",
    }
    set_taint(c, node, taint, True)
    assert any(t.key == taint["key"] and t.effect == "NoSchedule" for t in c.core.read_node(node).spec.taints or [])
    label_key, label_value = f"kubernetes.io/e2e-label-key-{uuid.uuid4()}", "testing-label-value"
    add_label(c, node, label_key, label_value)
    return node, taint, label_key, label_value


def test_validates_that_taints_tolerations_is_respected_if_matching(cluster: Cluster, ns: str) -> None:
    c = cluster
    node, taint, label_key, label_value = _tainted_and_labelled(c, ns)
    try:
        create_pause_pod(c, ns, "with-tolerations", tolerations=[taint], nodeSelector={label_key: label_value})
        wait_for_pod_not_pending(c, ns, "with-tolerations")
        assert c.core.read_namespaced_pod("with-tolerations", ns).spec.node_name == node
    finally:
        add_label(c, node, label_key, None)
        set_taint(c, node, taint, False)


def test_validates_that_taints_tolerations_is_respected_if_not_matching(
    cluster: Cluster, ns: str, workers: set[str]
) -> None:
    c = cluster
    node, taint, label_key, label_value = _tainted_and_labelled(c, ns)
    try:
        name = "still-no-tolerations"
        wait_for_scheduler_after_action(
            c,
            ns,
            lambda: create_pause_pod(c, ns, name, nodeSelector={label_key: label_value}),
            schedule_failure_event(name),
        )
        verify_result(c, ns, 0, 1, workers)
        wait_for_scheduler_after_action(
            c, ns, lambda: set_taint(c, node, taint, False), schedule_success_event(ns, name)
        )
        verify_result(c, ns, 1, 0, workers)
    finally:
        add_label(c, node, label_key, None)
        set_taint(c, node, taint, False)


def test_validates_that_there_exists_conflict_between_pods_with_same_host_port_and_protocol_but_one_using_0000(
    cluster: Cluster, ns: str
) -> None:
    """[Conformance] HostPort and Protocol match, one pod on the default host IP (0.0.0.0): the second pod is
    not scheduled to that node."""
    c = cluster
    node = run_pod_and_get_node_name(c, ns, "without-label")
    addresses = c.core.read_node(node).status.addresses or []
    host_ip = next(a.address for a in addresses if a.type == "InternalIP")
    key, value = f"kubernetes.io/e2e-{uuid.uuid4()}", "95"
    add_label(c, node, key, value)
    try:
        port = 54322

        def host_port_pod(name: str, ip: str) -> None:
            """createHostPortPodOnNode (agnhost netexec becomes the pause process; its readiness probe is left out)."""
            ports = [{"hostPort": port, "containerPort": 8080, "protocol": "TCP", "hostIP": ip}]
            create_pause_pod(c, ns, name, ports=ports, nodeSelector={key: value})

        host_port_pod("pod4", "")
        wait_for_pod_not_pending(c, ns, "pod4")
        # Upstream waits for pod5 to leave Pending and ignores the outcome; the `It` says it must not be
        # scheduled: the scheduler reports it cannot be.
        wait_for_scheduler_after_action(c, ns, lambda: host_port_pod("pod5", host_ip), schedule_failure_event("pod5"))
        assert not c.core.read_namespaced_pod("pod5", ns).spec.node_name
    finally:
        add_label(c, node, key, None)


def test_validates_pods_with_non_empty_scheduling_gates_are_blocked_on_scheduling(cluster: Cluster, ns: str) -> None:
    """Three bare pods where upstream has a ReplicaSet of three: the assertions are about the pods only."""
    c = cluster
    label = "e2e-scheduling-gates"
    names = [f"{label}-{i}" for i in range(3)]
    for name in names:
        create_pause_pod(c, ns, name, labels={label: ""}, schedulingGates=[{"name": "foo"}, {"name": "bar"}])

    def gated(want: list[str]) -> bool:
        """WaitForPodsSchedulingGated (and WaitForPodsWithSchedulingGates when `want`)."""
        pods = c.core.list_namespaced_pod(ns).items
        for pod in pods:
            condition = next((x for x in pod.status.conditions or [] if x.type == "PodScheduled"), None)
            if condition is None or (condition.status, condition.reason) != ("False", "SchedulingGated"):
                return False
            if [g.name for g in pod.spec.scheduling_gates or []] != want:
                return False
        return len(pods) == 3

    until(lambda: gated(["foo", "bar"]), "three gated pods")
    # patchPod: the two-way strategic merge patch from the pod to its clone (gates are merged by name).
    for name in names:
        drop_foo = {"spec": {"schedulingGates": [{"$patch": "delete", "name": "foo"}]}}
        c.core.patch_namespaced_pod(name, ns, drop_foo, _content_type=SMP)
    until(lambda: gated(["bar"]), "three pods gated by bar")
    for name in names:
        c.core.patch_namespaced_pod(name, ns, {"spec": {"schedulingGates": None}}, _content_type=SMP)
    for name in names:
        wait_for_pod_running(c, ns, name)
