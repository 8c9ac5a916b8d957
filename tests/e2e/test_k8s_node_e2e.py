"""Kubernetes' node e2e tests of container behaviour, run against a kjobs cluster through the official client.

Each test is one `It` of kubernetes/kubernetes test/e2e/common/node/runtime.go, test/e2e/common/node/
init_container.go or test/e2e_node/container_lifecycle_test.go, named after it, with its steps and assertions
(docs/upstream-node-e2e.md lists every `It`, ported or left out, and why). They run against one in-process cluster
for the module (`kjobs.testing.KjobsCluster`: `kjobs run --serve`'s assembly, local-process pods, its API over
TLS with a kubeconfig), through the official `kubernetes` client, each test (or each `Ordered` group) in a
namespace of its own. Not `kjobs up`: its node agent restarts a crashed container after the kubelet's 10 s
back-off, doubling, and half of these tests wait for three restarts; the test cluster's back-off starts at 0.1 s
(and its node agent reads a start after 0.2 s, as `START_REPORT_DELAY` says why).

The images' commands become local `sh -c` commands:

- container_lifecycle_test.go's `ExecCommand` (test/e2e_node/container_lifecycle_pod_construction.go) logs
  `<time> <container> Starting|Started|Delaying|Exiting` to the container's output and to a file kept across
  restarts; here the file is in the pod's working directory (a local pod's directory is shared by its containers
  and kept across their restarts, as the `/persistent` emptyDir is) and the time is `date +%s.%N`. `parseOutput`
  reads every container's log through the API, as upstream;
- its delays are shortened (a table in `DELAY`), keeping their order, which is what the assertions depend on;
  "runs until killed" (100 s and more) stays long;
- the pause image (no command of its own for a local process) is `trap 'exit 0' TERM; sleep … & wait`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from kjobs.testing import ClusterOptions, KjobsCluster, embedded

pytestmark = pytest.mark.e2e

T = TypeVar("T")
POLL = 0.05
TIMEOUT = 45.0
"""Seconds any one wait may take (upstream's are minutes; every wait here takes seconds)."""
PAUSE = "trap 'exit 0' TERM; sleep 1000000 & wait"
"""The pause image: runs until signalled, then exits 0."""
DELAY = {0: 0.0, 1: 0.1, 5: 1.5, 10: 1.8, 20: 2.1, 30: 2.4, 60: 4.5}
"""ExecCommand's Delay/StartDelay seconds → the seconds slept here (order kept); 100 s and more: until killed.
A 5 s sidecar must still run when the node agent starts the next init container, which took 1.1 s once on CI's
loaded machine (at 1 s the sidecar had exited). A 60 s regular container outlasts a 5 s sidecar's restarts
upstream (a 10 s back-off); 3× the sidecar's delay here leaves a restart room on a loaded machine (at 2×, one
was missed)."""


@dataclass
class Cluster:
    api: k8s.ApiClient
    core: k8s.CoreV1Api


START_REPORT_DELAY = 0.2
"""Seconds before the node agent reads a started container Running (kjobs' default: 0.02). A sidecar counts as
started, and the next container starts, only then; the kubelet sees a start on its next PLEG relist (every
second). container_lifecycle_test.go's ordering assertions (a sidecar logs `Started` before the next container
logs `Starting`) rely on that latency; at 0.02 s the shell commands of the two race. It must stay well under a
5 s sidecar's 1 s here: at 0.4 s, an init container after a failing sidecar started only after it had exited."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One in-process cluster (one node, container restart back-off from 0.1 s, `START_REPORT_DELAY`) for every
    test of the module. Its node checks memory for node-pressure eviction every 10 s, the kubelet's housekeeping
    period, not every 0.2 s: no test here evicts, and each check reads every process's /proc stat (an eighth of
    the module's CPU)."""
    settings = dataclasses.replace(
        embedded.fast_settings(tmp_path_factory.mktemp("nodee2e") / "nodes", eviction_monitoring_interval=10.0),
        containers_die_with_agent=True,
        container_start_report_delay=START_REPORT_DELAY,
    )
    with KjobsCluster.start(ClusterOptions(settings=settings)) as kc:
        api = k8s_config.new_client_from_config(str(kc.kubeconfig))
        yield Cluster(api, k8s.CoreV1Api(api))
        api.close()


def _namespace(c: Cluster) -> str:
    name = f"node-{secrets.token_hex(4)}"
    c.core.create_namespace({"metadata": {"name": name}})
    return name


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (the e2e framework's f.Namespace)."""
    name = _namespace(cluster)
    yield name
    cluster.core.delete_namespace(name)


# --- waits (test/e2e/framework/pod) ---------------------------------------------------------------------------


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    """wait.PollUntilContextTimeout: poll `probe` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def get_pod(c: Cluster, ns: str, name: str) -> k8s.V1Pod:
    pod: k8s.V1Pod = c.core.read_namespaced_pod(name, ns)
    return pod


def pod_events(c: Cluster, ns: str, pod: k8s.V1Pod, deadline: float, what: str) -> Iterator[dict[str, Any]]:
    """The events of a field-selected watch of `pod` from its resourceVersion, until `deadline` (monotonic), as
    client-go's watchtools.UntilWithSync: every change is delivered once, none is missed, and the cluster (in this
    process) is not asked for the pod 20 times a second as a poll does. A watch the server ends early is resumed
    from the last event's resourceVersion."""
    resource_version = pod.metadata.resource_version
    while (left := deadline - time.monotonic()) > 0:
        w = k8s_watch.Watch()
        stream = w.stream(
            c.core.list_namespaced_pod,
            ns,
            field_selector=f"metadata.name={pod.metadata.name}",
            resource_version=resource_version,
            timeout_seconds=max(1, int(left)),
        )
        try:
            for event in stream:
                resource_version = event["object"].metadata.resource_version
                yield event
        finally:
            w.stop()
    raise AssertionError(f"timed out waiting for {what}")


def wait_for_pod(c: Cluster, ns: str, name: str, what: str, check: Callable[[k8s.V1Pod], bool]) -> k8s.V1Pod:
    """e2epod.WaitForPodCondition: `check` may raise AssertionError to stop the wait (upstream returns an error).
    The pod as read, then each state its watch delivers (`pod_events`); a pod deleted before `check` holds ends the
    wait with an error, as a poll's 404 did."""
    deadline = time.monotonic() + TIMEOUT
    pod = get_pod(c, ns, name)
    if check(pod):
        return pod
    for event in pod_events(c, ns, pod, deadline, what):
        if event["type"] == "DELETED":
            raise AssertionError(f"pod {name} deleted while waiting for {what}")
        if check(event["object"]):
            return event["object"]  # type: ignore[no-any-return]
    raise AssertionError(f"timed out waiting for {what}")


def wait_for_pod_running(c: Cluster, ns: str, name: str) -> k8s.V1Pod:
    """WaitForPodRunningInNamespace: Running (a terminal phase ends the wait with an error)."""

    def running(pod: k8s.V1Pod) -> bool:
        assert pod.status.phase not in ("Succeeded", "Failed"), f"pod ended {pod.status.phase} instead of running"
        return bool(pod.status.phase == "Running")

    return wait_for_pod(c, ns, name, "pod running", running)


def wait_for_pod_no_longer_running(c: Cluster, ns: str, name: str) -> k8s.V1Pod:
    """WaitTimeoutForPodNoLongerRunningInNamespace: Succeeded or Failed."""
    return wait_for_pod(c, ns, name, "pod no longer running", lambda p: p.status.phase in ("Succeeded", "Failed"))


def wait_for_pod_success(c: Cluster, ns: str, name: str) -> k8s.V1Pod:
    """WaitForPodSuccessInNamespace: Succeeded; Failed ends the wait with an error."""

    def succeeded(pod: k8s.V1Pod) -> bool:
        assert pod.status.phase != "Failed", "pod failed"
        return bool(pod.status.phase == "Succeeded")

    return wait_for_pod(c, ns, name, "pod success", succeeded)


def wait_for_pod_failed_reason(c: Cluster, ns: str, name: str, reason: str) -> k8s.V1Pod:
    """WaitForPodFailedReason / WaitForPodTerminatedInNamespace: Failed with status.reason `reason`."""

    def failed(pod: k8s.V1Pod) -> bool:
        if pod.status.phase != "Failed":
            return False
        assert (pod.status.reason or "") == reason, f"pod failed with reason {pod.status.reason!r}, not {reason!r}"
        return True

    return wait_for_pod(c, ns, name, f"pod failed ({reason!r})", failed)


def wait_for_pod_not_found(c: Cluster, ns: str, name: str, timeout: float = TIMEOUT) -> None:
    """e2epod.WaitForPodNotFoundInNamespace: the pod read (404: gone), then its watch (`pod_events`) until the
    DELETED event."""
    try:
        pod = get_pod(c, ns, name)
    except ApiException as exc:
        if exc.status == 404:
            return
        raise
    for event in pod_events(c, ns, pod, time.monotonic() + timeout, "pod gone"):
        if event["type"] == "DELETED":
            return


def wait_for_container_restart_count(
    c: Cluster, ns: str, name: str, index: int, count: int, *, init: bool = False
) -> None:
    """WaitForPodContainerRestartCount / WaitForPodInitContainerRestartCount (test/e2e_node/util.go): the
    restartCount of the index-th (init) container status reaches `count`."""

    def reached(pod: k8s.V1Pod) -> bool:
        statuses = (pod.status.init_container_statuses if init else pod.status.container_statuses) or []
        return index < len(statuses) and statuses[index].restart_count >= count

    wait_for_pod(c, ns, name, f"container {index} restarted {count} times", reached)


def condition(pod: k8s.V1Pod, kind: str) -> k8s.V1PodCondition | None:
    return next((cond for cond in pod.status.conditions or [] if cond.type == kind), None)


def is_ready(pod: k8s.V1Pod) -> bool:
    """podutil.IsPodReady."""
    ready = condition(pod, "Ready")
    return ready is not None and ready.status == "True"


def state_name(state: k8s.V1ContainerState) -> str:
    """GetContainerState (test/e2e/common/node/runtimeclass... container.go)."""
    if state.waiting is not None:
        return "Waiting"
    if state.running is not None:
        return "Running"
    if state.terminated is not None:
        return "Terminated"
    return "Unknown"


# --- container_lifecycle_pod_construction.go ----------------------------------------------------------------


def _seconds(upstream: float) -> float:
    return float(upstream) if upstream >= 100 else DELAY[int(upstream)]


def exec_command(
    name: str,
    *,
    exit_code: int = 0,
    start_delay: float = 0,
    delay: float = 0,
    termination_seconds: float = 0,
) -> list[str]:
    """ExecCommand: log Starting, sleep StartDelay, Started, Delaying, sleep Delay, Exiting, exit ExitCode; on
    SIGTERM sleep TerminationSeconds, log Exiting and exit ExitCode. The log file (NAME.log in the pod's
    directory) keeps every attempt's lines, and each attempt prints it first, so the current log has them all.
    Delays are upstream's seconds (mapped through `DELAY`); termination seconds are taken as given; an exit code
    of -1 is busybox sh's 255. Standard error is dropped (it was kept clear of "Terminated" when kjobs signalled
    the whole process group; SIGTERM now reaches the trapping shell only, as a container's PID 1)."""
    log = f"{name}.log"
    now = "$(date +%s.%N)"
    code = exit_code & 0xFF
    out = f"exec 2>/dev/null; touch {log}; cat {log}; echo {now} '{name} Starting {start_delay}' | tee -a {log}; "
    out += f"_term() {{ sleep {termination_seconds}; echo {now} '{name} Exiting' | tee -a {log}; exit {code}; }}; "
    out += "trap _term TERM; "
    if start_delay:
        out += f"sleep {_seconds(start_delay)} & wait $!; "
    out += f"touch started; echo {now} '{name} Started' | tee -a {log}; "
    out += f"echo {now} '{name} Delaying {delay}' | tee -a {log}; "
    if delay:
        out += f"sleep {_seconds(delay)} & wait $!; "
    out += f"echo {now} '{name} Exiting' | tee -a {log}; exit {code}"
    return ["sh", "-c", out]


def container(name: str, command: list[str], **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "command": command, **fields}


def sidecar(name: str, command: list[str], **fields: Any) -> dict[str, Any]:
    """An init container with `restartPolicy: Always` (containerRestartPolicyAlways)."""
    return container(name, command, restartPolicy="Always", **fields)


def prepare_pod(
    name: str, restart_policy: str, init: list[dict[str, Any]], regular: list[dict[str, Any]], **spec: Any
) -> dict[str, Any]:
    """preparePod: every container mounts the `persistent` emptyDir and requests 15Mi (limit 35Mi) of memory."""
    resources = {"requests": {"memory": "15Mi"}, "limits": {"memory": "35Mi"}}
    for c in [*init, *regular]:
        c["resources"] = resources
        c["volumeMounts"] = [{"name": "persistent", "mountPath": "/persistent"}]
    pod_spec: dict[str, Any] = {
        "restartPolicy": restart_policy,
        "containers": regular,
        "volumes": [{"name": "persistent", "emptyDir": {}}],
        **spec,
    }
    if init:
        pod_spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod_spec}


@dataclass(frozen=True)
class Line:
    at: float
    container: str
    command: str


class Output(list[Line]):
    """containerOutputList: the pod's containers' log lines in time order; each check raises AssertionError."""

    def __str__(self) -> str:
        return "\n".join(f"{i}) {line.at:.6f} {line.container} {line.command}" for i, line in enumerate(self))

    def find(self, name: str, command: str, start: int = 0) -> int:
        for i in range(start, len(self)):
            if self[i].container == name and self[i].command == command:
                return i
        return -1

    def find_index(self, name: str, command: str, start: int = 0) -> int:
        """FindIndex."""
        found = self.find(name, command, start)
        assert found != -1, f"couldn't find {name} {command}, got\n{self}"
        return found

    def run_together(self, lhs: str, rhs: str) -> None:
        """RunTogether: in either order (upstream tries lhs first, then rhs first; which logs `Started` first is
        the machine's scheduling: a sidecar counts as started once its process runs, before its shell's echo)."""
        try:
            self.run_together_lhs_first(lhs, rhs)
        except AssertionError:
            self.run_together_lhs_first(rhs, lhs)

    def run_together_lhs_first(self, lhs: str, rhs: str) -> None:
        """RunTogetherLhsFirst."""
        lhs_start = self.find(lhs, "Started")
        assert lhs_start != -1, f"couldn't find that {lhs} ever started, got\n{self}"
        rhs_start = self.find(rhs, "Started", lhs_start + 1)
        assert rhs_start != -1, f"couldn't find that {rhs} ever started, got\n{self}"
        lhs_exit = self.find(lhs, "Exiting", lhs_start + 1)
        assert lhs_exit != -1, f"couldn't find that {lhs} ever exited, got\n{self}"
        assert rhs_start < lhs_exit, f"expected {rhs} to start before exiting {lhs}, got\n{self}"
        rhs_exit = self.find(rhs, "Exiting", rhs_start + 1)
        assert rhs_exit != -1, f"couldn't find that {rhs} ever exited, got\n{self}"
        assert lhs_start < rhs_exit, f"expected {lhs} to start before exiting {rhs}, got\n{self}"

    def starts_before(self, lhs: str, rhs: str) -> None:
        lhs_start = self.find(lhs, "Started")
        assert lhs_start != -1, f"couldn't find that {lhs} ever started, got\n{self}"
        assert self.find(rhs, "Starting", lhs_start + 1) != -1, (
            f"couldn't find that {rhs} started after {lhs}, got\n{self}"
        )

    def exits_before(self, lhs: str, rhs: str) -> None:
        lhs_exit = self.find(lhs, "Exiting")
        assert lhs_exit != -1, f"couldn't find that {lhs} ever exited, got\n{self}"
        assert self.find(rhs, "Exiting", lhs_exit + 1) != -1, (
            f"couldn't find that {rhs} exited after {lhs}, got\n{self}"
        )

    def starts(self, name: str) -> None:
        assert self.find(name, "Started") != -1, f"couldn't find that {name} ever started, got\n{self}"

    def doesnt_start(self, name: str) -> None:
        assert self.find(name, "Started") == -1, f"found {name} started, but didn't expect to, got\n{self}"

    def exits(self, name: str) -> None:
        assert self.find(name, "Exiting") != -1, f"couldn't find that {name} ever exited, got\n{self}"

    def has_restarted(self, name: str) -> None:
        first = self.find(name, "Starting")
        assert first != -1, f"couldn't find that {name} ever started, got\n{self}"
        assert self.find(name, "Starting", first + 1) != -1, f"couldn't find that {name} ever restarted, got\n{self}"

    def has_not_restarted(self, name: str) -> None:
        first = self.find(name, "Starting")
        assert first != -1, f"couldn't find that {name} ever started, got\n{self}"
        assert self.find(name, "Starting", first + 1) == -1, f"found that {name} restarted, got\n{self}"


def parse_output(c: Cluster, pod: k8s.V1Pod) -> Output:
    """parseOutput: every (init and regular) container's log, through the API (`--previous` when the current
    one cannot be read), parsed and sorted by time. One addition: a restarted container whose current log is
    empty is read from its previous run too. A sidecar restarted just before the pod finished can be stopped
    before it writes a line (under a loaded machine the window grows: CI saw it), and then upstream's read of
    the current log alone finds none of its starts (docs/upstream-node-e2e.md)."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    statuses = [*(pod.status.init_container_statuses or []), *(pod.status.container_statuses or [])]
    text = ""
    for status in statuses:
        try:
            current = c.core.read_namespaced_pod_log(name, ns, container=status.name)
        except ApiException:
            with contextlib.suppress(ApiException):  # upstream logs the error and goes on
                text += c.core.read_namespaced_pod_log(name, ns, container=status.name, previous=True)
            continue
        if not current.strip() and (status.restart_count or 0) > 0:
            with contextlib.suppress(ApiException):
                current = c.core.read_namespaced_pod_log(name, ns, container=status.name, previous=True)
        text += current
    lines = []
    for raw in text.splitlines():
        fields = raw.split()
        assert len(fields) >= 3, f"{fields} should have at least length 3"
        lines.append(Line(float(fields[0]), fields[1], fields[2]))
    return Output(sorted(lines, key=lambda line: line.at))


def create(c: Cluster, ns: str, pod: dict[str, Any]) -> k8s.V1Pod:
    created: k8s.V1Pod = c.core.create_namespaced_pod(ns, pod)
    return created


# --- test/e2e/common/node/runtime.go: Container Runtime blackbox test --------------------------------------------

RESTART_COUNT_SCRIPT = """
f=./restartCount
count=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'})
if [ $count -eq 1 ]; then
\texit 1
fi
if [ $count -eq 2 ]; then
\texit 0
fi
while true; do sleep 1; done
"""
"""It failed at the 1st run, then succeeded at 2nd run, then run forever (the count file is in the pod's
directory: upstream's memory emptyDir at /restart-count)."""


def conformance_pod(
    name: str, ctr: dict[str, Any], restart_policy: str, volumes: list[Any] | None = None
) -> dict[str, Any]:
    """ConformanceContainer.Create: a pod named after the container, with it alone; its grace period 1 s, not the
    default 30 s: its shell, PID 1 with no SIGTERM handler, runs it out when the test deletes the pod."""
    spec: dict[str, Any] = {"restartPolicy": restart_policy, "containers": [ctr], "terminationGracePeriodSeconds": 1}
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-{secrets.token_hex(4)}"}, "spec": spec}


def test_should_run_with_the_expected_status(cluster: Cluster, ns: str) -> None:
    """[Conformance] Container Runtime, Restart Policy, Pod Phases."""
    volumes = [{"name": "restart-count", "emptyDir": {"medium": "Memory"}}]
    cases = [
        ("terminate-cmd-rpa", "Always", "Running", "Running", 2, True),
        ("terminate-cmd-rpof", "OnFailure", "Succeeded", "Terminated", 1, False),
        ("terminate-cmd-rpn", "Never", "Failed", "Terminated", 0, False),
    ]
    for name, policy, phase, state, restart_count, ready in cases:
        ctr = container(
            name,
            ["sh", "-c", RESTART_COUNT_SCRIPT],
            volumeMounts=[{"mountPath": "/restart-count", "name": "restart-count"}],
        )
        pod = create(cluster, ns, conformance_pod(name, ctr, policy, volumes))
        pod_name = pod.metadata.name

        def status(pod_name: str = pod_name) -> k8s.V1ContainerStatus:
            statuses = get_pod(cluster, ns, pod_name).status.container_statuses or []
            return statuses[0] if statuses else None

        def restarted(pod: k8s.V1Pod, rc: int = restart_count) -> bool:
            statuses = pod.status.container_statuses or []
            return bool(statuses) and statuses[0].restart_count == rc

        # should get the expected 'RestartCount'
        wait_for_pod(cluster, ns, pod_name, f"{name} restartCount", restarted)
        # should get the expected 'Phase'
        wait_for_pod(cluster, ns, pod_name, f"{name} phase {phase}", lambda p, phase=phase: p.status.phase == phase)
        # should get the expected 'Ready' condition
        assert is_ready(get_pod(cluster, ns, pod_name)) == ready
        # should get the expected 'State'
        assert state_name(status().state) == state
        # should be possible to delete
        cluster.core.delete_namespaced_pod(pod_name, ns)
        wait_for_pod_not_found(cluster, ns, pod_name)


def match_termination_message(c: Cluster, ns: str, ctr: dict[str, Any], expected_phase: str, expected: str) -> None:
    """matchTerminationMessage: a RestartNever pod reaches the phase; its container is terminated with the message."""
    ctr = {**ctr, "name": "termination-message-container"}
    pod = create(c, ns, conformance_pod(ctr["name"], ctr, "Never"))
    name = pod.metadata.name
    wait_for_pod(c, ns, name, f"phase {expected_phase}", lambda p: p.status.phase == expected_phase)
    status = get_pod(c, ns, name).status.container_statuses[0]
    assert state_name(status.state) == "Terminated"
    assert (status.state.terminated.message or "") == expected
    c.core.delete_namespaced_pod(name, ns)


def test_should_report_termination_message_from_log_output_if_policy_fallback_to_logs_on_error_is_set(
    cluster: Cluster, ns: str
) -> None:
    """[Conformance] Container Runtime, TerminationMessage, from container's log output of failing container."""
    ctr = container(
        "c",
        ["/bin/sh", "-c"],
        args=["/bin/echo -n DONE; /bin/false"],
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="FallbackToLogsOnError",
    )
    match_termination_message(cluster, ns, ctr, "Failed", "DONE")


def test_should_report_termination_message_as_empty_when_pod_succeeds_and_policy_fallback_to_logs_on_error_is_set(
    cluster: Cluster, ns: str
) -> None:
    """[Conformance] Container Runtime, TerminationMessage, from log output of succeeding container."""
    ctr = container(
        "c",
        ["/bin/sh", "-c"],
        args=["/bin/echo -n DONE; /bin/true"],
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="FallbackToLogsOnError",
    )
    match_termination_message(cluster, ns, ctr, "Succeeded", "")


# --- test/e2e/common/node/init_container.go: InitContainer [NodeConformance] ------------------------------------

Condition = Callable[[k8s.V1Pod], bool]


def watch_until(c: Cluster, ns: str, pod: k8s.V1Pod, *conditions: Condition) -> tuple[k8s.V1Pod, list[k8s.V1Pod]]:
    """watchtools.Until from the created pod's resourceVersion, on a field-selected watch: each event goes to the
    current condition, and a condition met hands the same event to the next; returns the last pod and every pod
    seen (upstream's recordEvents). A condition raising AssertionError ends the watch with that error."""
    seen: list[k8s.V1Pod] = []
    remaining = list(conditions)
    w = k8s_watch.Watch()
    stream = w.stream(
        c.core.list_namespaced_pod,
        ns,
        field_selector=f"metadata.name={pod.metadata.name}",
        resource_version=pod.metadata.resource_version,
        timeout_seconds=int(TIMEOUT),
    )
    try:
        for event in stream:
            obj: k8s.V1Pod = event["object"]
            seen.append(obj)
            while remaining and remaining[0](obj):
                remaining.pop(0)
            if not remaining:
                return obj, seen
    finally:
        w.stop()
    raise AssertionError("timed out waiting for the pod's conditions")


def initialized(pod: k8s.V1Pod) -> tuple[bool, bool]:
    """initialized: (all init containers done, one failed); AssertionError for a status out of order."""
    all_init, init_failed = True, False
    for s in pod.status.init_container_statuses or []:
        if init_failed and s.state.waiting is None:
            raise AssertionError(f"container {s.name} is after a failed container but isn't waiting")
        if all_init and s.state.waiting is None and s.state.terminated is None:
            pass
        if s.state.terminated is None:
            all_init = False
        elif s.state.terminated.exit_code != 0:
            all_init, init_failed = False, True
        elif not s.ready:
            raise AssertionError(f"container {s.name} initialized but isn't marked as ready")
    return all_init, init_failed


def init_containers_invariants(pod: k8s.V1Pod) -> None:
    """initContainersInvariants: regular containers wait (PodInitializing, never restarted) until initialization
    completes; the Initialized condition is there, never Unknown, with a transition time, True iff initialized."""
    all_init, init_failed = initialized(pod)
    if not all_init or init_failed:
        for s in pod.status.container_statuses or []:
            assert s.state.waiting is not None and s.restart_count == 0, (
                f"container {s.name} is not waiting but initialization not complete"
            )
            assert s.state.waiting.reason == "PodInitializing", (
                f"container {s.name} should have reason PodInitializing: {s.state.waiting.reason}"
            )
    cond = condition(pod, "Initialized")
    assert cond is not None, "pod does not have initialized condition"
    assert cond.last_transition_time is not None, "PodInitialized condition should always have a transition time"
    assert cond.status != "Unknown", "PodInitialized condition should never be Unknown"
    if cond.status == "True":
        assert not init_failed and all_init, "PodInitialized condition was True but all not all containers initialized"
    if cond.status == "False":
        assert init_failed or not all_init, "PodInitialized condition was False but all containers initialized"


def check_invariants(events: list[k8s.V1Pod]) -> None:
    """checkInvariants(events, containerInitInvariant): each pair of successive versions keeps the init container
    list and the uid, each satisfies the invariants, and an initialized pod never regresses. Upstream records its
    events into a copy of the slice, so its check sees none; here every version the kubelet has written a status
    to (`startTime` set) is checked: before it, a pod has no Initialized condition on any cluster."""
    events = [pod for pod in events if pod.status is not None and pod.status.start_time is not None]
    for older, newer in itertools.pairwise(events):
        if not older.spec.init_containers:
            continue
        assert len(older.spec.init_containers) == len(newer.spec.init_containers), "init container list changed"
        assert older.metadata.uid == newer.metadata.uid, "two different pods exist in the condition"
        init_containers_invariants(older)
        init_containers_invariants(newer)
        if initialized(older)[0] and not initialized(newer)[0]:
            raise AssertionError("pod cannot be initialized and then regress to not being initialized")


def init_pod(restart_policy: str | None, init_commands: list[str], run1: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "initContainers": [container(f"init{i + 1}", [cmd]) for i, cmd in enumerate(init_commands)],
        "containers": [run1],
    }
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    name = f"pod-init-{secrets.token_hex(4)}"
    labels = {"name": "foo", "time": str(time.time_ns() % 1_000_000_000)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def pod_completed(pod: k8s.V1Pod) -> bool:
    """conditions.PodCompleted."""
    return pod.status.phase in ("Succeeded", "Failed")


def assert_initialized_statuses(pod: k8s.V1Pod) -> None:
    init = condition(pod, "Initialized")
    assert init is not None and init.status == "True"
    assert len(pod.status.init_container_statuses) == 2
    for status in pod.status.init_container_statuses:
        assert status.ready, f"init container {status.name} should be in Ready status"
        assert status.state.terminated is not None
        assert status.state.terminated.exit_code == 0


def test_should_invoke_init_containers_on_a_restart_never_pod(cluster: Cluster, ns: str) -> None:
    """[Conformance] init-container-starts-app-restartnever-pod."""
    started = create(cluster, ns, init_pod("Never", ["/bin/true", "/bin/true"], container("run1", ["/bin/true"])))
    end, events = watch_until(cluster, ns, started, pod_completed)
    check_invariants(events)
    assert end.status.phase == "Succeeded"
    assert_initialized_statuses(end)


def test_should_invoke_init_containers_on_a_restart_always_pod(cluster: Cluster, ns: str) -> None:
    """[Conformance] init-container-starts-app-restartalways-pod (run1: the pause image, 100m CPU limit)."""
    run1 = container("run1", ["sh", "-c", PAUSE], resources={"limits": {"cpu": "100m"}})
    started = create(cluster, ns, init_pod(None, ["/bin/true", "/bin/true"], run1))
    end, events = watch_until(cluster, ns, started, lambda p: p.status.phase == "Running")
    check_invariants(events)
    assert end.status.phase == "Running"
    assert_initialized_statuses(end)


def _regular_containers_wait_initializing(pod: k8s.V1Pod) -> None:
    for status in pod.status.container_statuses or []:
        assert status.state.waiting is not None, f"container {status.name!r} should not be out of waiting: {status}"
        assert status.state.waiting.reason == "PodInitializing", (
            f"container {status.name!r} should have reason PodInitializing: {status}"
        )


def test_should_not_start_app_containers_if_init_containers_fail_on_a_restart_always_pod(
    cluster: Cluster, ns: str
) -> None:
    """[Conformance] init-container-fails-stops-app-restartalways-pod."""
    run1 = container("run1", ["sh", "-c", PAUSE], resources={"limits": {"cpu": "100m"}})
    started = create(cluster, ns, init_pod(None, ["/bin/false", "/bin/true"], run1))

    def first_fails_once(pod: k8s.V1Pod) -> bool:
        _regular_containers_wait_initializing(pod)
        statuses = pod.status.init_container_statuses or []
        if len(statuses) != 2:
            return False
        second = statuses[1]
        assert second.state.waiting is not None, f"second init container should not be out of waiting: {second}"
        assert second.state.waiting.reason == "PodInitializing", (
            f"second init container should have reason PodInitializing: {second}"
        )
        first = statuses[0]
        assert not (first.state.terminated is not None and first.state.terminated.exit_code == 0), (
            f"first init container should have exitCode != 0: {first}"
        )
        return first.last_state is not None and first.last_state.terminated is not None  # an attempt to restart

    def restarted_three_times(pod: k8s.V1Pod) -> bool:
        return bool(pod.status.init_container_statuses[0].restart_count >= 3)

    end, events = watch_until(cluster, ns, started, first_fails_once, restarted_three_times)
    check_invariants(events)
    assert end.status.phase == "Pending"
    init = condition(end, "Initialized")
    assert init is not None
    assert init.status == "False"
    assert init.reason == "ContainersNotInitialized"
    assert init.message == "containers with incomplete status: [init1 init2]"
    assert len(end.status.init_container_statuses) == 2


def test_should_not_start_app_containers_and_fail_the_pod_if_init_containers_fail_on_a_restart_never_pod(
    cluster: Cluster, ns: str
) -> None:
    """[Conformance] init-container-fails-stops-app-restartnever-pod."""
    run1 = container("run1", ["/bin/true"], resources={"limits": {"cpu": "100m"}})
    started = create(cluster, ns, init_pod("Never", ["/bin/true", "/bin/false"], run1))

    def second_fails(pod: k8s.V1Pod) -> bool:
        _regular_containers_wait_initializing(pod)
        statuses = pod.status.init_container_statuses or []
        if len(statuses) != 2:
            return False
        first = statuses[0]
        if first.state.terminated is None:
            if first.state.waiting is not None:
                assert first.state.waiting.reason == "PodInitializing", (
                    f"second init container should have reason PodInitializing: {first}"
                )
            return False
        assert first.state.terminated.exit_code == 0, f"first init container should have exitCode != 0: {first}"
        second = statuses[1]
        if second.state.terminated is None:
            return False
        assert second.state.terminated.exit_code != 0, f"second init container should have failed: {second}"
        return True

    end, events = watch_until(cluster, ns, started, second_fails, pod_completed)
    check_invariants(events)
    assert end.status.phase == "Failed"
    init = condition(end, "Initialized")
    assert init is not None
    assert init.status == "False"
    assert init.reason == "ContainersNotInitialized"
    assert init.message == "containers with incomplete status: [init2]"
    assert len(end.status.init_container_statuses) == 2
    assert end.status.container_statuses[0].state.waiting is not None


# --- test/e2e_node/container_lifecycle_test.go: Containers Lifecycle -------------------------------------------

INIT1, INIT2, INIT3, REGULAR1 = "init-1", "init-2", "init-3", "regular-1"
RESTARTABLE1, RESTARTABLE2, RESTARTABLE3 = "restartable-init-1", "restartable-init-2", "restartable-init-3"
TEST_FINALIZER = "test/finalizer"


def ec(name: str, **fields: Any) -> dict[str, Any]:
    """A container running ExecCommand(name, fields)."""
    return container(name, exec_command(name, **fields))


def sc(name: str, **fields: Any) -> dict[str, Any]:
    """A restartable init container running ExecCommand(name, fields)."""
    return sidecar(name, exec_command(name, **fields))


def run_pod(c: Cluster, ns: str, pod: dict[str, Any]) -> str:
    return str(create(c, ns, pod).metadata.name)


def results_of(c: Cluster, ns: str, name: str) -> Output:
    return parse_output(c, get_pod(c, ns, name))


def results_once_restarted(c: Cluster, ns: str, name: str, container: str) -> Output:
    """`results_of` once `container`'s log shows a second start (polled; at the timeout, the last results, for the
    assertion to show). kjobs reports a restarted container running as its process starts, before its shell has
    written its first line (a kubelet's PLEG relist reports it later), and upstream reads the logs right after
    waiting for that status: on a loaded machine the new attempt's log was still empty (CI saw it)."""

    def restarted() -> Output | None:
        results = results_of(c, ns, name)
        return results if results.find(container, "Starting", results.find(container, "Starting") + 1) != -1 else None

    try:
        return until(restarted, f"{container} to write its restart's first line")
    except AssertionError:
        return results_of(c, ns, name)


def expect_termination_statuses(statuses: list[k8s.V1ContainerStatus], expected: dict[str, tuple[int, str]]) -> None:
    """expectPodTerminationContainerStatuses: every status terminated with the expected exit code and reason."""
    assert len(statuses) == len(expected), f"mismatched lengths in pod termination container statuses: {statuses}"
    for status in statuses:
        assert status.name in expected, f"container {status.name!r} not found in expected statuses"
        assert status.state.terminated is not None, f"{status.name} is not terminated: {status.state}"
        got = (status.state.terminated.exit_code, status.state.terminated.reason)
        assert got == expected[status.name], f"{status.name}: {got} != {expected[status.name]}"


# When "Running a pod with init containers and regular containers, restartPolicy=Never"


def test_should_launch_init_container_serially_before_a_regular_container(cluster: Cluster, ns: str) -> None:
    """The regular container keeps upstream's startup probe (`test -f started`), which kjobs runs (since stop 41;
    a regular container's startup probe holds nothing back)."""
    regular = ec(REGULAR1, start_delay=5, delay=1)
    regular["startupProbe"] = {"exec": {"command": ["test", "-f", "started"]}}
    inits = [ec(INIT1, delay=1), ec(INIT2, delay=1), ec(INIT3, delay=1)]
    name = run_pod(cluster, ns, prepare_pod("initcontainer-test-pod", "Never", inits, [regular]))
    wait_for_pod_no_longer_running(cluster, ns, name)
    results = results_of(cluster, ns, name)
    results.starts_before(INIT1, INIT2)
    results.exits_before(INIT1, INIT2)
    results.starts_before(INIT2, INIT3)
    results.exits_before(INIT2, INIT3)
    results.starts_before(INIT3, REGULAR1)
    results.exits_before(INIT3, REGULAR1)


def test_should_not_launch_regular_containers_if_an_init_container_fails(cluster: Cluster, ns: str) -> None:
    pod = prepare_pod(
        "initcontainer-test-pod-failure", "Never", [ec(INIT1, delay=1, exit_code=1)], [ec(REGULAR1, delay=1)]
    )
    name = run_pod(cluster, ns, pod)
    wait_for_pod_failed_reason(cluster, ns, name, "")
    results = results_of(cluster, ns, name)
    results.starts(INIT1)
    results.exits(INIT1)
    results.doesnt_start(REGULAR1)


def test_should_restart_failing_container_when_pod_restart_policy_is_always(cluster: Cluster, ns: str) -> None:
    name = run_pod(
        cluster, ns, prepare_pod("container-must-be-restarted", "Always", [], [ec(REGULAR1, delay=1, exit_code=1)])
    )
    wait_for_container_restart_count(cluster, ns, name, 0, 3)
    results = results_of(cluster, ns, name)
    results.starts(REGULAR1)
    results.starts_before(REGULAR1, REGULAR1)
    results.exits_before(REGULAR1, REGULAR1)


def test_shouldnt_restart_init_containers_upon_regular_container_restart(cluster: Cluster, ns: str) -> None:
    inits = [ec(INIT1, delay=1), ec(INIT2, delay=1), ec(INIT3, delay=1)]
    pod = prepare_pod("initcontainer-test-pod", "Always", inits, [ec(REGULAR1, delay=10, exit_code=-1)])
    name = run_pod(cluster, ns, pod)
    wait_for_container_restart_count(cluster, ns, name, 0, 3)
    results = results_of(cluster, ns, name)
    results.starts_before(INIT1, INIT2)
    results.exits_before(INIT1, INIT2)
    results.starts_before(INIT2, INIT3)
    results.exits_before(INIT2, INIT3)
    results.starts_before(INIT3, REGULAR1)
    results.exits_before(INIT3, REGULAR1)
    for init in (INIT1, INIT2, INIT3):  # the init containers never restarted
        results.has_not_restarted(init)
    results.has_restarted(REGULAR1)  # while the regular container did


def test_should_respect_termination_grace_period_seconds(cluster: Cluster, ns: str) -> None:
    """[NodeConformance] A pod deleted gracefully is gone within its grace period and a buffer. Its `sleep`, PID 1
    with no SIGTERM handler, runs out the grace period (30 s upstream, 2 s here) and is SIGKILLed."""
    grace, buffer = 2, 30
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod-termination-grace-period"},
        "spec": {"containers": [container("regular1", ["sleep", "10000"])], "terminationGracePeriodSeconds": grace},
    }
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    cluster.core.delete_namespaced_pod(name, ns)
    wait_for_pod_not_found(cluster, ns, name, grace + buffer)


Run = tuple[k8s.V1Pod, Output]


class Ordered:
    """An `Ordered` group: `pod()` is the pod its first `It` creates, `finish()` that `It`'s wait and log reading;
    the other `It`s read the result (the class-scoped `run`). Every group's pod is created at once, each in a
    namespace of its own, when the first group's tests start (`ordered_pods`): the groups' pods run side by
    side, as the e2e framework runs `It`s in parallel, and the module takes half the time."""

    groups: ClassVar[list[type[Ordered]]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__name__.startswith("Test"):
            Ordered.groups.append(cls)

    @classmethod
    def pod(cls) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def run(cls, cluster: Cluster, ordered_pods: dict[type[Ordered], tuple[str, str]]) -> Run:
        ns, name = ordered_pods[cls]
        return cls.finish(cluster, ns, name)


@pytest.fixture(scope="module")
def ordered_pods(cluster: Cluster) -> Iterator[dict[type[Ordered], tuple[str, str]]]:
    """Every `Ordered` group's namespace and pod name, all created now."""
    started = {}
    for group in Ordered.groups:
        ns = _namespace(cluster)
        started[group] = (ns, run_pod(cluster, ns, group.pod()))
    yield started
    for ns, _ in started.values():
        cluster.core.delete_namespace(ns)


# When "using a Pod with restartPolicy=Never, three init container and two restartable init containers" (Ordered)


class TestThreeInitContainersAndTwoRestartableInitContainers(Ordered):
    @classmethod
    def pod(cls) -> dict[str, Any]:
        """The group's first `It`: the pod runs to its end and its log is read."""
        inits = [
            ec(INIT1, delay=1),
            sc(RESTARTABLE1, delay=600),
            ec(INIT2, delay=1),
            sc(RESTARTABLE2, delay=600),
            ec(INIT3, delay=1),
        ]
        pod = prepare_pod("restartable-init-containers-start-serially", "Never", inits, [ec(REGULAR1, delay=1)])
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = wait_for_pod_no_longer_running(cluster, group_ns, name)
        return end, results_of(cluster, group_ns, name)

    def test_should_finish_and_produce_log(self, run: tuple[k8s.V1Pod, Output]) -> None:
        assert run[0].status.phase == "Succeeded"  # pod should exit successfully

    def test_should_run_the_first_init_container_to_completion_before_starting_first_restartable_init_container(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].starts_before(INIT1, RESTARTABLE1)
        run[1].exits_before(INIT1, RESTARTABLE1)

    def test_should_run_first_init_container_and_first_restartable_init_container_together(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].run_together(RESTARTABLE1, INIT2)

    def test_should_run_second_init_container_to_completion_before_starting_second_restartable_init_container(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].starts_before(INIT2, RESTARTABLE2)
        run[1].exits_before(INIT2, RESTARTABLE2)

    def test_should_start_second_restartable_init_container_before_third_init_container(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].starts_before(RESTARTABLE2, INIT3)

    def test_should_run_both_restartable_init_containers_and_third_init_container_together(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].run_together(RESTARTABLE1, RESTARTABLE2)
        run[1].run_together(RESTARTABLE1, INIT3)
        run[1].run_together(RESTARTABLE2, INIT3)

    def test_should_run_third_init_container_to_completion_before_starting_regular_container(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].starts_before(INIT3, REGULAR1)
        run[1].exits_before(INIT3, REGULAR1)

    def test_should_run_both_restartable_init_containers_and_a_regular_container_together(
        self, run: tuple[k8s.V1Pod, Output]
    ) -> None:
        run[1].run_together(RESTARTABLE1, REGULAR1)
        run[1].run_together(RESTARTABLE2, REGULAR1)


# When "using a restartable init container in a Pod with restartPolicy=Never|OnFailure|Always", each an Ordered
# group whose first `It` runs the pod; the classes below are those groups, one subclass per restart policy.


class _RunsContinuously(Ordered):
    """When "a restartable init container runs continuously" (Never, OnFailure): the pod completes."""

    POLICY = ""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        pod = prepare_pod(
            "restartable-init-container-run-continuously",
            cls.POLICY,
            [sc(RESTARTABLE1, delay=600)],
            [ec(REGULAR1, delay=1)],
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = wait_for_pod_no_longer_running(cluster, group_ns, name)
        return end, results_of(cluster, group_ns, name)

    def test_should_complete_a_pod_successfully_and_produce_log(self, run: Run) -> None:
        assert run[0].status.phase == "Succeeded"

    def test_should_not_restart_a_restartable_init_container(self, run: Run) -> None:
        run[1].has_not_restarted(RESTARTABLE1)

    def test_should_run_a_regular_container_to_completion(self, run: Run) -> None:
        run[1].exits(REGULAR1)


class TestRestartableInitRunsContinuouslyNever(_RunsContinuously):
    POLICY = "Never"


class TestRestartableInitRunsContinuouslyOnFailure(_RunsContinuously):
    POLICY = "OnFailure"


class TestRestartableInitRunsContinuouslyAlways(Ordered):
    """restartPolicy=Always: the regular container exits and restarts; the sidecar keeps running."""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        pod = prepare_pod(
            "restartable-init-container-run-continuously",
            "Always",
            [sc(RESTARTABLE1, delay=600)],
            [ec(REGULAR1, delay=1)],
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        wait_for_container_restart_count(cluster, group_ns, name, 0, 2)
        pod_now = get_pod(cluster, group_ns, name)
        return pod_now, parse_output(cluster, pod_now)

    def test_should_keep_running_a_pod_continuously_and_produce_log(self, run: Run) -> None:
        assert run[0].status.container_statuses[0].restart_count >= 2

    def test_should_not_restart_a_restartable_init_container(self, run: Run) -> None:
        run[1].has_not_restarted(RESTARTABLE1)

    def test_should_start_a_regular_container(self, run: Run) -> None:
        run[1].has_restarted(REGULAR1)


class _ExitsContinuously(Ordered):
    """When "a restartable init container starts and exits with exit code N continuously"."""

    POLICY = ""
    EXIT_CODE = 0

    @classmethod
    def pod(cls) -> dict[str, Any]:
        inits = [sc(RESTARTABLE1, delay=5, exit_code=cls.EXIT_CODE), ec(INIT1, delay=5)]
        pod = prepare_pod(
            f"restartable-init-container-exit-{cls.EXIT_CODE}-continuously",
            cls.POLICY,
            inits,
            [ec(REGULAR1, delay=60)],
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        if cls.POLICY == "Always":
            wait_for_container_restart_count(cluster, group_ns, name, 0, 1)
            end = get_pod(cluster, group_ns, name)
        else:
            end = wait_for_pod_no_longer_running(cluster, group_ns, name)
        return end, parse_output(cluster, end)

    def test_should_restart_a_restartable_init_container_before_the_regular_container_started(self, run: Run) -> None:
        run[1].starts_before(RESTARTABLE1, REGULAR1)

    def test_should_restart_a_restartable_init_container_after_the_regular_container_started(self, run: Run) -> None:
        run[1].starts_before(REGULAR1, RESTARTABLE1)


class _ExitsContinuouslyCompletes(_ExitsContinuously):
    def test_should_complete_a_pod_successfully_and_produce_log(self, run: Run) -> None:
        assert run[0].status.phase == "Succeeded"

    def test_should_run_a_regular_container_to_completion(self, run: Run) -> None:
        run[1].exits(REGULAR1)


class _ExitsContinuouslyKeepsRunning(_ExitsContinuously):
    POLICY = "Always"

    def test_should_keep_running_a_pod_continuously_and_produce_log(self, run: Run) -> None:
        assert run[0].status.container_statuses[0].restart_count >= 1

    def test_should_start_a_regular_container(self, run: Run) -> None:
        run[1].starts(REGULAR1)


class TestRestartableInitExitsWithExitCode0ContinuouslyNever(_ExitsContinuouslyCompletes):
    POLICY, EXIT_CODE = "Never", 0


class TestRestartableInitExitsWithExitCode1ContinuouslyNever(_ExitsContinuouslyCompletes):
    POLICY, EXIT_CODE = "Never", 1


class TestRestartableInitExitsWithExitCode0ContinuouslyOnFailure(_ExitsContinuouslyCompletes):
    POLICY, EXIT_CODE = "OnFailure", 0


class TestRestartableInitExitsWithExitCode1ContinuouslyOnFailure(_ExitsContinuouslyCompletes):
    POLICY, EXIT_CODE = "OnFailure", 1


class TestRestartableInitExitsWithExitCode0ContinuouslyAlways(_ExitsContinuouslyKeepsRunning):
    EXIT_CODE = 0


class TestRestartableInitExitsWithExitCode1ContinuouslyAlways(_ExitsContinuouslyKeepsRunning):
    EXIT_CODE = 1


def _pending_and_restarting(cluster: Cluster, ns: str, name: str) -> k8s.V1Pod:
    """ "pending and restarting 3 times": the first init container's restartCount reaches 3 while the pod stays
    Pending (any other phase ends the wait with an error)."""

    def check(pod: k8s.V1Pod) -> bool:
        assert pod.status.phase == "Pending", "pod should be in pending phase"
        statuses = pod.status.init_container_statuses or []
        return bool(statuses) and statuses[0].restart_count >= 3

    return wait_for_pod(cluster, ns, name, "pending and restarting 3 times", check)


class TestInitContainerBeforeRestartableInitContainerFailsNever(Ordered):
    """When "an Init container before restartable init container fails" (restartPolicy=Never)."""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        inits = [ec(INIT1, delay=1, exit_code=1), sc(RESTARTABLE1, delay=600)]
        pod = prepare_pod(
            "init-container-fails-before-restartable-init-starts", "Never", inits, [ec(REGULAR1, delay=600)]
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = wait_for_pod_failed_reason(cluster, group_ns, name, "")
        return end, parse_output(cluster, get_pod(cluster, group_ns, name))

    def test_should_mark_a_pod_as_failed_and_produce_log(self, run: Run) -> None:
        assert run[0].status.phase == "Failed"

    def test_should_mark_an_init_container_as_failed(self, run: Run) -> None:
        run[1].exits(INIT1)

    def test_should_not_start_restartable_init_container(self, run: Run) -> None:
        run[1].doesnt_start(RESTARTABLE1)


class _InitBeforeRestartableContinuouslyFails(Ordered):
    """When "an Init container before restartable init container continuously fails" (OnFailure, Always)."""

    POLICY = ""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        inits = [ec(INIT1, delay=1, exit_code=1), sc(RESTARTABLE1, delay=600)]
        pod = prepare_pod(
            "init-container-fails-before-restartable-init-starts", cls.POLICY, inits, [ec(REGULAR1, delay=600)]
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = _pending_and_restarting(cluster, group_ns, name)
        return end, parse_output(cluster, get_pod(cluster, group_ns, name))

    def test_should_continuously_run_pod_keeping_it_pending(self, run: Run) -> None:
        assert run[0].status.phase == "Pending"

    def test_should_have_init_container_restart_count_greater_than_0(self, run: Run) -> None:
        run[1].has_restarted(INIT1)

    def test_should_not_start_restartable_init_container(self, run: Run) -> None:
        run[1].doesnt_start(RESTARTABLE1)


class TestInitContainerBeforeRestartableInitContainerContinuouslyFailsOnFailure(
    _InitBeforeRestartableContinuouslyFails
):
    POLICY = "OnFailure"


class TestInitContainerBeforeRestartableInitContainerContinuouslyFailsAlways(_InitBeforeRestartableContinuouslyFails):
    POLICY = "Always"


class TestInitContainerAfterRestartableInitContainerFailsNever(Ordered):
    """When "an Init container after restartable init container fails" (restartPolicy=Never)."""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        inits = [sc(RESTARTABLE1, delay=5, exit_code=1), ec(INIT1, delay=1, exit_code=1)]
        pod = prepare_pod(
            "restartable-init-container-fails-before-init-container", "Never", inits, [ec(REGULAR1, delay=600)]
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = wait_for_pod_failed_reason(cluster, group_ns, name, "")
        return end, parse_output(cluster, get_pod(cluster, group_ns, name))

    def test_should_mark_a_pod_as_failed_and_produce_log(self, run: Run) -> None:
        assert run[0].status.phase == "Failed"

    def test_should_mark_an_init_container_as_failed(self, run: Run) -> None:
        run[1].exits(INIT1)

    def test_should_be_running_restartable_init_container_and_a_failed_init_container_in_parallel(
        self, run: Run
    ) -> None:
        run[1].run_together(RESTARTABLE1, INIT1)


class _InitAfterRestartableFails(Ordered):
    """When "an Init container after restartable init container fails" (OnFailure, Always): the pod stays
    Pending while the sidecar restarts."""

    POLICY = ""

    @classmethod
    def pod(cls) -> dict[str, Any]:
        inits = [sc(RESTARTABLE1, delay=5, exit_code=1), ec(INIT1, delay=1, exit_code=1)]
        pod = prepare_pod(
            "restartable-init-container-fails-before-init-container", cls.POLICY, inits, [ec(REGULAR1, delay=600)]
        )
        return pod

    @classmethod
    def finish(cls, cluster: Cluster, group_ns: str, name: str) -> Run:
        end = _pending_and_restarting(cluster, group_ns, name)
        return end, parse_output(cluster, get_pod(cluster, group_ns, name))

    def test_should_continuously_run_pod_keeping_it_pending(self, run: Run) -> None:
        assert run[0].status.phase == "Pending"

    def test_should_have_init_container_restart_count_greater_than_0(self, run: Run) -> None:
        run[1].has_restarted(INIT1)

    def test_should_be_running_restartable_init_container_and_a_failed_init_container_in_parallel(
        self, run: Run
    ) -> None:
        run[1].run_together(RESTARTABLE1, INIT1)


class TestInitContainerAfterRestartableInitContainerFailsOnFailure(_InitAfterRestartableFails):
    POLICY = "OnFailure"


class TestInitContainerAfterRestartableInitContainerFailsAlways(_InitAfterRestartableFails):
    POLICY = "Always"


# When "A pod with restartable init containers is terminating"


def test_should_terminate_sidecars_in_reverse_order_after_all_main_containers_have_exited(
    cluster: Cluster, ns: str
) -> None:
    """The sidecars' 5 s of termination are 0.2 s here (only their order is asserted); their 60 s of running,
    which upstream outlast the pod (5 s, then 3 × 5 s of termination), stay long: 60 s would be 3 s here."""
    inits = [sc(name, delay=600, termination_seconds=0.2) for name in (RESTARTABLE1, RESTARTABLE2, RESTARTABLE3)]
    name = run_pod(cluster, ns, prepare_pod("serialize-termination", "Never", inits, [ec(REGULAR1, delay=5)]))
    pod = wait_for_pod_no_longer_running(cluster, ns, name)
    expect_termination_statuses(
        pod.status.init_container_statuses,
        {RESTARTABLE1: (0, "Completed"), RESTARTABLE2: (0, "Completed"), RESTARTABLE3: (0, "Completed")},
    )
    results = parse_output(cluster, pod)
    results.starts_before(RESTARTABLE1, RESTARTABLE2)
    results.starts_before(RESTARTABLE1, RESTARTABLE3)
    results.starts_before(RESTARTABLE2, RESTARTABLE3)
    results.starts_before(RESTARTABLE1, REGULAR1)
    results.starts_before(RESTARTABLE2, REGULAR1)
    results.starts_before(RESTARTABLE3, REGULAR1)
    # main containers exit first
    results.exits_before(REGULAR1, RESTARTABLE1)
    results.exits_before(REGULAR1, RESTARTABLE2)
    results.exits_before(REGULAR1, RESTARTABLE3)
    # followed by sidecars in reverse order
    results.exits_before(RESTARTABLE3, RESTARTABLE2)
    results.exits_before(RESTARTABLE2, RESTARTABLE1)


def test_should_not_hang_in_termination_if_terminated_during_initialization(cluster: Cluster, ns: str) -> None:
    """The sidecars keep upstream's preStop hooks: they never start, so the hooks never run."""
    prestop = {"preStop": {"exec": {"command": ["sh", "-c", "exit 0"]}}}
    inits = [ec("start-init", delay=300)]
    inits += [
        {**sc(n, delay=60, termination_seconds=5), "lifecycle": prestop}
        for n in (RESTARTABLE1, RESTARTABLE2, RESTARTABLE3)
    ]
    name = run_pod(cluster, ns, prepare_pod("dont-hang-if-terminated-in-init", "Never", inits, [ec(REGULAR1, delay=5)]))

    def init_running(pod: k8s.V1Pod) -> bool:
        assert pod.status.phase == "Pending", "pod should be in pending phase"
        statuses = pod.status.init_container_statuses or []
        return bool(statuses) and bool(statuses[0].started) and statuses[0].state.running is not None

    wait_for_pod(cluster, ns, name, "pod pending and init running", init_running)
    start, grace = time.monotonic(), 3
    cluster.core.delete_namespaced_pod(name, ns, grace_period_seconds=grace)
    wait_for_pod_not_found(cluster, ns, name, 120)
    took = time.monotonic() - start
    assert took < grace + 3, f"should delete in < {grace + 3} seconds, took {took}"


def wait_for_traps(cluster: Cluster, ns: str, name: str, containers: list[str]) -> None:
    """Wait until each container's shell has set its `trap _term TERM` (it logs `Started` after): Running is the
    processes spawned, and a SIGTERM before the trap is dropped (a container's PID 1 without a handler ignores it),
    so the container would run out its grace period instead of its termination seconds."""

    def trapped(container: str) -> bool:
        return f"{container} Started" in cluster.core.read_namespaced_pod_log(name, ns, container=container)

    until(lambda: all(trapped(c) for c in containers), "every container's TERM trap set")


def _delete_with_finalizer_and_wait(
    cluster: Cluster, ns: str, pod: dict[str, Any], grace: int, *, succeed: bool
) -> k8s.V1Pod:
    """Create the pod with a finalizer, wait for it to run, delete it with `grace`, wait for Succeeded (or Failed
    with no reason) and return its final version; the finalizer is removed after."""
    pod["metadata"]["finalizers"] = [TEST_FINALIZER]
    name = run_pod(cluster, ns, pod)
    containers = [c["name"] for c in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]]
    try:
        wait_for_pod_running(cluster, ns, name)
        wait_for_traps(cluster, ns, name, containers)
        cluster.core.delete_namespaced_pod(name, ns, grace_period_seconds=grace)
        if succeed:
            wait_for_pod_success(cluster, ns, name)
        else:
            wait_for_pod_failed_reason(cluster, ns, name, "")
        return get_pod(cluster, ns, name)
    finally:
        cluster.core.patch_namespaced_pod(name, ns, {"metadata": {"finalizers": None}})


@pytest.mark.slow
def test_should_mark_pod_as_succeeded_if_any_of_the_restartable_init_containers_have_terminated_with_non_zero_exit_code(
    cluster: Cluster, ns: str
) -> None:
    inits = [
        sc(RESTARTABLE1, delay=600, termination_seconds=1),
        sc(RESTARTABLE2, delay=600, termination_seconds=1, exit_code=1),
        sc(RESTARTABLE3, delay=600, termination_seconds=1),
    ]
    regular = [ec(REGULAR1, delay=600, termination_seconds=1)]
    pod = prepare_pod(
        "restartable-init-terminated-with-non-zero-exit-code", "Never", inits, regular, terminationGracePeriodSeconds=30
    )
    end = _delete_with_finalizer_and_wait(cluster, ns, pod, 30, succeed=True)
    # regular container is gracefully terminated
    expect_termination_statuses(end.status.container_statuses, {REGULAR1: (0, "Completed")})
    # restartable-init-2 that terminated with non-zero exit code is marked as error
    expect_termination_statuses(
        end.status.init_container_statuses,
        {RESTARTABLE1: (0, "Completed"), RESTARTABLE2: (1, "Error"), RESTARTABLE3: (0, "Completed")},
    )


@pytest.mark.slow
def test_should_mark_pod_as_failed_if_regular_container_has_exceeded_its_termination_grace_period_seconds(
    cluster: Cluster, ns: str
) -> None:
    inits = [
        sc(RESTARTABLE1, delay=600, termination_seconds=20),
        sc(RESTARTABLE2, delay=600, termination_seconds=1),  # SIGKILL comes only 2 s after its SIGTERM
        sc(RESTARTABLE3, delay=600, termination_seconds=20),
    ]
    regular = [ec(REGULAR1, delay=600, termination_seconds=20)]
    pod = prepare_pod(
        "regular-exceeded-termination-grace-period", "Never", inits, regular, terminationGracePeriodSeconds=5
    )
    end = _delete_with_finalizer_and_wait(cluster, ns, pod, 5, succeed=False)
    # regular container that exceeds its termination grace period seconds is sigkilled with exit code 137
    expect_termination_statuses(end.status.container_statuses, {REGULAR1: (137, "Error")})
    # restartable-init-2 is gracefully terminated within 2 seconds after receiving SIGTERM; the others are SIGKILLed
    expect_termination_statuses(
        end.status.init_container_statuses,
        {RESTARTABLE1: (137, "Error"), RESTARTABLE2: (0, "Completed"), RESTARTABLE3: (137, "Error")},
    )


@pytest.mark.slow
def test_should_mark_pod_as_succeeded_if_any_of_the_restartable_init_containers_have_exceeded_its_grace_period_seconds(
    cluster: Cluster, ns: str
) -> None:
    inits = [
        sc(RESTARTABLE1, delay=600, termination_seconds=1),
        sc(RESTARTABLE2, delay=600, termination_seconds=20),
        sc(RESTARTABLE3, delay=600, termination_seconds=1),
    ]
    regular = [ec(REGULAR1, delay=600, termination_seconds=1)]
    pod = prepare_pod(
        "restartable-init-exceeded-termination-grace-period", "Never", inits, regular, terminationGracePeriodSeconds=5
    )
    end = _delete_with_finalizer_and_wait(cluster, ns, pod, 5, succeed=True)
    # regular container is gracefully terminated
    expect_termination_statuses(end.status.container_statuses, {REGULAR1: (0, "Completed")})
    # restartable-init-2 that exceeds its termination grace period seconds is sigkilled with exit code 137
    expect_termination_statuses(
        end.status.init_container_statuses,
        {RESTARTABLE1: (0, "Completed"), RESTARTABLE2: (137, "Error"), RESTARTABLE3: (0, "Completed")},
    )


# When "A restartable init container with startup probe fails initially"


def test_should_continue_probing_and_allow_regular_container_to_start_after_the_restartable_init_container_recovers(
    cluster: Cluster, ns: str
) -> None:
    """The probes (`/bin/true`, run since stop 41) stay in the spec; the marker file is in the pod's
    directory (upstream's /persistent)."""
    script = (
        "if [ ! -f ./first_run_done ]; then\n"
        "  echo 'First run: creating marker and exiting with 1'\n"
        "  touch ./first_run_done\n"
        "  exit 1\n"
        "else\n"
        "  echo 'Second run: marker found, running as sidecar'\n"
        "  sleep 120\n"
        "fi"
    )
    probe = {"exec": {"command": ["/bin/true"]}}
    init = sidecar(
        "buggy-restartable-init",
        ["sh", "-c", script],
        startupProbe={**probe, "initialDelaySeconds": 3, "periodSeconds": 2, "failureThreshold": 10},
    )
    regular = container(
        "regular-container", ["sh", "-c", PAUSE], startupProbe={**probe, "initialDelaySeconds": 5, "periodSeconds": 5}
    )
    name = run_pod(cluster, ns, prepare_pod("restartable-init-startup-probe-fix", "Never", [init], [regular]))

    def status_of(pod: k8s.V1Pod, group: str, name: str) -> k8s.V1ContainerStatus | None:
        return next((s for s in getattr(pod.status, group) or [] if s.name == name), None)

    wait_for_pod(
        cluster,
        ns,
        name,
        "restartable init restarted",
        lambda p: (
            (s := status_of(p, "init_container_statuses", "buggy-restartable-init")) is not None and s.restart_count > 0
        ),
    )
    wait_for_pod(
        cluster,
        ns,
        name,
        "restartable init running",
        lambda p: (
            (s := status_of(p, "init_container_statuses", "buggy-restartable-init")) is not None
            and s.state.running is not None
        ),
    )
    wait_for_pod(
        cluster,
        ns,
        name,
        "regular container running",
        lambda p: (
            (s := status_of(p, "container_statuses", "regular-container")) is not None and s.state.running is not None
        ),
    )


# --- image updates (container_lifecycle_test.go): a running container whose image changes is restarted --------

AGNHOST, BUSYBOX = "registry.k8s.io/e2e-test-images/agnhost:2.53", "registry.k8s.io/e2e-test-images/busybox:1.37.0-1"
"""defaultImage / agnhostImage and busyboxImage (alternateImage: the other one). A local process runs no image:
only the name in the spec and in the status changes."""


def update_pod(c: Cluster, ns: str, name: str, change: Callable[[k8s.V1Pod], None]) -> None:
    """PodClient.Update: get, change, update, again on a conflict."""
    for _ in range(10):
        pod = get_pod(c, ns, name)
        change(pod)
        try:
            c.core.replace_namespaced_pod(name, ns, pod)
            return
        except ApiException as exc:
            if exc.status != 409:
                raise
    raise AssertionError("the pod kept changing under the update")


def _set_image(group: str, index: int, image: str) -> Callable[[k8s.V1Pod], None]:
    def change(pod: k8s.V1Pod) -> None:
        getattr(pod.spec, group)[index].image = image

    return change


def consistently(check: Callable[[], bool], seconds: float, what: str) -> None:
    """gomega.Consistently: `check` holds at every poll for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert check(), what
        time.sleep(POLL)


def with_image(ctr: dict[str, Any], image: str) -> dict[str, Any]:
    return {**ctr, "image": image}


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_should_successfully_restart_when_the_image_is_updated(cluster: Cluster, ns: str, policy: str) -> None:
    """When "the regular container has its image updated" (restartPolicy=Always, ...=OnFailure, ...=Never; no
    `preparePod`'s volume upstream either, nor here). The containers' 60 s outlast the test: long here too."""
    regular = [
        with_image(ec(REGULAR1, delay=600), AGNHOST),
        with_image(container("regular-2", exec_command(REGULAR1, delay=600)), AGNHOST),  # upstream's: regular1's
    ]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"container-image-update-{policy.lower()}"}}
    pod["spec"] = {"restartPolicy": policy, "containers": regular}
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    update_pod(cluster, ns, name, _set_image("containers", 0, BUSYBOX))

    def restarted_with_new_image(p: k8s.V1Pod) -> bool:
        s = p.status.container_statuses[0]
        return s.state.running is not None and s.image == BUSYBOX and s.restart_count > 0

    wait_for_pod(cluster, ns, name, "wait for container to restart with new image", restarted_with_new_image)

    def other_running(p: k8s.V1Pod) -> bool:
        s = p.status.container_statuses[1]
        return s.state.running is not None and s.restart_count < 1

    wait_for_pod(cluster, ns, name, "the container is running", other_running)


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_should_not_update_the_image_during_termination(cluster: Cluster, ns: str, policy: str) -> None:
    """When "The regular container has its image updated during termination" (should not update the image when
    restartPolicy=...): 60 s of termination are 1 s here, the 50 s of "consistently" 0.6 s."""
    termination = 1.0
    regular = with_image(ec(REGULAR1, delay=10, termination_seconds=termination, exit_code=1), AGNHOST)
    pod = prepare_pod(f"regular-container-termination-imgupdate-{policy.lower()}", policy, [], [regular])
    grace = 120
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    wait_for_traps(cluster, ns, name, [REGULAR1])
    cluster.core.delete_namespaced_pod(name, ns, grace_period_seconds=grace)
    update_pod(cluster, ns, name, _set_image("containers", 0, BUSYBOX))

    def not_restarted() -> bool:
        status = get_pod(cluster, ns, name).status.container_statuses[0]
        if status.state.terminated is None or status.state.terminated.exit_code != 0:
            return True
        return bool(status.restart_count == 0)

    consistently(not_restarted, termination - 0.4, "container should not be restarted")
    wait_for_pod_not_found(cluster, ns, name, 60)


def test_should_not_restart_init_container_when_updated_with_a_new_image_after_finishing(
    cluster: Cluster, ns: str
) -> None:
    pod = prepare_pod("initcontainer-update-img", "Always", [ec(INIT1, delay=1)], [ec(REGULAR1, delay=20)])
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    update_pod(cluster, ns, name, _set_image("init_containers", 0, AGNHOST))

    def terminated_regularly(p: k8s.V1Pod) -> bool:
        s = p.status.init_container_statuses[0]
        done = s.state.terminated is not None and s.state.terminated.exit_code == 0
        return done and s.image != AGNHOST and s.restart_count < 1

    end = wait_for_pod(cluster, ns, name, "the init container terminated regularly", terminated_regularly)
    parse_output(cluster, end).has_not_restarted(INIT1)


def test_should_not_restart_the_init_container_if_the_image_is_updated_during_initialization(
    cluster: Cluster, ns: str
) -> None:
    invalid = "invalid.registry.k8s.io/invalid/alpine:3.1"
    pod = prepare_pod(
        "initcontainer-update-img-initialization",
        "Always",
        [ec(INIT1, delay=20)],
        [ec(REGULAR1, delay=20, exit_code=-1)],
    )
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    update_pod(cluster, ns, name, _set_image("init_containers", 0, invalid))

    def terminated_regularly(p: k8s.V1Pod) -> bool:
        s = p.status.init_container_statuses[0]
        done = s.state.terminated is not None and s.state.terminated.exit_code == 0
        return done and s.image != invalid and s.restart_count < 1

    end = wait_for_pod(cluster, ns, name, "the init container terminated regularly", terminated_regularly)
    parse_output(cluster, end).has_not_restarted(INIT1)


def test_should_not_restart_the_init_container_if_the_image_is_updated_during_termination(
    cluster: Cluster, ns: str
) -> None:
    """The regular container's 20 s of termination are 1.5 s here, the 15 s of "consistently" 1 s."""
    regular = ec(REGULAR1, delay=20, termination_seconds=1.5, exit_code=1)
    name = run_pod(
        cluster, ns, prepare_pod("initcontainer-update-img-termination", "Never", [ec(INIT1, delay=1)], [regular])
    )
    wait_for_pod_running(cluster, ns, name)
    wait_for_traps(cluster, ns, name, [REGULAR1])
    cluster.core.delete_namespaced_pod(name, ns)
    update_pod(cluster, ns, name, _set_image("init_containers", 0, AGNHOST))

    def no_completed_init_restarted() -> bool:
        for status in get_pod(cluster, ns, name).status.init_container_statuses:
            if status.state.terminated is None or status.state.terminated.exit_code != 0:
                continue
            if status.restart_count > 0 or status.image == AGNHOST:
                return False
        return True

    consistently(no_completed_init_restarted, 1.0, "no completed init container should be restarted")


@pytest.mark.parametrize(("policy", "regular_delay"), [("Never", 60), ("OnFailure", 30), ("Always", 10)])
def test_should_restart_when_updated_with_a_new_image(
    cluster: Cluster, ns: str, policy: str, regular_delay: int
) -> None:
    """When "a restartable init container runs continuously", restartPolicy=Never / OnFailure / Always."""
    inits = [sc(RESTARTABLE1, delay=600), sc(RESTARTABLE2, delay=600)]
    pod = prepare_pod(
        f"restartable-init-container-imgupdate-{policy.lower()}", policy, inits, [ec(REGULAR1, delay=regular_delay)]
    )
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    update_pod(cluster, ns, name, _set_image("init_containers", 0, AGNHOST))
    if policy == "Always":
        wait_for_container_restart_count(cluster, ns, name, 0, 2)

    def image_updated(p: k8s.V1Pod) -> bool:
        s = p.status.init_container_statuses[0]
        return s.state.running is not None and s.image == AGNHOST

    wait_for_pod(cluster, ns, name, "wait for container to update image", image_updated)
    if policy == "OnFailure":
        wait_for_pod_success(cluster, ns, name)
    results = results_once_restarted(cluster, ns, name, RESTARTABLE1)
    if policy != "Always":
        results.has_not_restarted(REGULAR1)
    results.has_restarted(RESTARTABLE1)
    results.has_not_restarted(RESTARTABLE2)


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_should_terminate_gracefully(cluster: Cluster, ns: str, policy: str) -> None:
    """When "A restartable init container has its image updated during pod termination" (should terminate
    gracefully when restartPolicy=...): 10 s of termination are 0.5 s here, the 20 s of "consistently" 1 s, counted
    from the deletion (the regular container and the two sidecars stop one after another, 1.5 s: a window counted
    from after the image update could outlast the pod on a loaded machine)."""
    termination, grace = 0.5, 180
    inits = [
        ec(INIT1, delay=1, termination_seconds=5),
        sc(RESTARTABLE2, delay=600, termination_seconds=termination),
        sc(RESTARTABLE3, delay=600, termination_seconds=termination),
    ]
    regular = [ec(REGULAR1, delay=600, termination_seconds=termination)]
    pod = prepare_pod("terminate-restartable-init-gracefully-with-img-update", policy, inits, regular)
    pod["spec"]["terminationGracePeriodSeconds"] = grace
    name = run_pod(cluster, ns, pod)
    wait_for_pod_running(cluster, ns, name)
    wait_for_traps(cluster, ns, name, [RESTARTABLE2, RESTARTABLE3, REGULAR1])
    deleted = time.monotonic()
    cluster.core.delete_namespaced_pod(name, ns, grace_period_seconds=grace)
    update_pod(cluster, ns, name, _set_image("init_containers", 1, AGNHOST))

    def no_init_restarted() -> bool:
        for status in get_pod(cluster, ns, name).status.init_container_statuses:
            if status.state.terminated is None or status.state.terminated.exit_code != 0:
                continue
            if status.restart_count > 0:
                return False
        return True

    window = max(deleted + 2 * termination - time.monotonic(), POLL)  # at least one check
    consistently(no_init_restarted, window, "no init container should be restarted")
    wait_for_pod_not_found(cluster, ns, name, termination + 60)


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_should_not_start_a_regular_container(cluster: Cluster, ns: str, policy: str) -> None:
    """When "the regular container has its image updated during initialization" (Should not start a regular
    container, restartPolicy=...): the 50 s of "consistently" are DELAY[60] - DELAY[10] here."""
    init = with_image(ec(INIT1, delay=60), AGNHOST)
    regular = [
        with_image(ec(REGULAR1, delay=10, termination_seconds=1), AGNHOST),
        with_image(ec("regular-2", delay=10, termination_seconds=1), AGNHOST),
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"update-regular-img-during-initialize-{policy.lower()}"},
    }
    pod["spec"] = {"restartPolicy": policy, "initContainers": [init], "containers": regular}
    name = run_pod(cluster, ns, pod)

    def first_init_running(p: k8s.V1Pod) -> bool:
        assert p.status.phase == "Pending", "pod should be in pending phase"
        statuses = p.status.init_container_statuses or []
        return bool(statuses) and statuses[0].state.running is not None and bool(statuses[0].started)

    wait_for_pod(cluster, ns, name, "the first init container is running but not started", first_init_running)
    update_pod(cluster, ns, name, _set_image("containers", 0, BUSYBOX))

    def no_regular_started() -> bool:
        p = get_pod(cluster, ns, name)
        if p.status.phase != "Pending":
            return False
        return all(s.restart_count == 0 and s.state.running is None for s in p.status.container_statuses or [])

    consistently(no_regular_started, DELAY[60] - DELAY[10], "no regular container should start")

    def ran_once_with_updated_image(p: k8s.V1Pod) -> bool:
        if p.status.phase != "Running":
            return False
        if any(s.restart_count > 0 or s.state.running is None for s in p.status.container_statuses):
            return False
        return bool(p.status.container_statuses[0].image == BUSYBOX)

    wait_for_pod(cluster, ns, name, "regular container ran once with updated image", ran_once_with_updated_image)


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_should_begin_initializing_the_pod(cluster: Cluster, ns: str, policy: str) -> None:
    """When "initializing an init container after a restartable init container" (Should begin initializing
    the pod, restartPolicy=...): the restartable init container's 5 s of termination are 0.1 s here."""
    inits = [
        ec(INIT1, delay=1),
        sc(RESTARTABLE1, delay=600, termination_seconds=0.1),
        ec(INIT2, delay=600),
        sc(RESTARTABLE2, delay=1, termination_seconds=1),
    ]
    if policy == "Never":
        inits[2] = ec(INIT2, delay=30, exit_code=1)
    regular = [ec(REGULAR1, delay=1, termination_seconds=1)]
    name = run_pod(cluster, ns, prepare_pod("update-restartable-init-img-during-initialize", policy, inits, regular))

    def second_init_running(p: k8s.V1Pod) -> bool:
        assert p.status.phase == "Pending", "pod should be in pending phase"
        statuses = p.status.init_container_statuses or []
        return len(statuses) >= 3 and statuses[2].state.running is not None and bool(statuses[2].started)

    wait_for_pod(cluster, ns, name, "the second init container is running but not started", second_init_running)
    update_pod(cluster, ns, name, _set_image("init_containers", 1, AGNHOST))

    def image_changed(p: k8s.V1Pod) -> bool:
        s = p.status.init_container_statuses[1]
        return s.state.running is not None and s.restart_count > 0 and s.image == AGNHOST

    wait_for_pod(cluster, ns, name, "the restartable init container image changed", image_changed)
    if policy == "Never":  # init containers don't restart when restartPolicy=Never
        wait_for_pod_failed_reason(cluster, ns, name, "")
    results = results_once_restarted(cluster, ns, name, RESTARTABLE1)
    # started the containers in order
    results.starts_before(INIT1, RESTARTABLE1)
    results.starts_before(RESTARTABLE1, INIT2)
    results.starts(INIT1)
    results.starts(RESTARTABLE1)
    results.starts(INIT2)
    results.doesnt_start(RESTARTABLE2)
    results.doesnt_start(REGULAR1)
    # not restarted any regular init container
    results.has_not_restarted(INIT1)
    results.has_not_restarted(INIT2)
    # restarted the restartable init container whose image changed
    results.has_restarted(RESTARTABLE1)
    if policy == "Never":  # terminated init containers in reverse order
        results.exits(INIT2)
        results.exits(RESTARTABLE1)
        results.exits(INIT1)
        results.exits_before(INIT2, RESTARTABLE1)
