"""Third-party Python clients drive `kjobs up` as they would a cluster: kr8s, lightkube, kubernetes_asyncio, kopf.

Each test runs a Job through one client and reads back what that client's users look at: the Job's conditions with
their Kubernetes reasons, pods by label, logs, watches, patches of each type, server-side apply, the Eviction
subresource, errors as the client's own exception carrying the API's Status code. The official client and the
JavaScript client are covered in tests/e2e/test_js_client.py and throughout tests/server; kubectl in
tests/e2e/test_acceptance.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

T = TypeVar("T")


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One `kjobs up` (one local node, a 1 s pod-failure back-off, a 0.1 s Job batch period) for the clients."""
    tmp = tmp_path_factory.mktemp("clients")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config), "--backoff", "1")
    with _up(tmp, *args, "--job-batch-period", "0.1") as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        yield config


def _until(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """Poll a client's view until it shows `what` (the cluster runs real processes in real time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _job(name: str, command: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", command]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}, **spec},
    }


def test_kr8s_runs_an_indexed_job_that_fails_by_policy(kubeconfig: Path) -> None:
    import kr8s
    from kr8s.objects import Job, Node

    api = kr8s.api(kubeconfig=str(kubeconfig))
    assert api.version()["gitVersion"].startswith("v1.")
    rule = {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}
    body = _job(
        "kr8s-policy",
        'echo "index $JOB_COMPLETION_INDEX"; [ "$JOB_COMPLETION_INDEX" = 1 ] && exit 42; exit 0',
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        backoffLimit=6,
        podFailurePolicy={"rules": [rule]},
    )
    job = Job(body, api=api)
    job.create()
    job.wait("condition=Failed", timeout=60)
    job.refresh()
    conditions = {c["type"]: c for c in job.status["conditions"]}
    assert conditions["FailureTarget"]["reason"] == "PodFailurePolicy"
    assert conditions["Failed"]["reason"] == "PodFailurePolicy"
    assert "failed with exit code 42 matching FailJob rule at index 0" in conditions["Failed"]["message"]
    # Index 1's pod fails; indexes 0 and 2 exit 0 at once, but under load the Job may fail before they end, and the
    # pods it then terminates count as failed too (upstream counts every pod the failed Job removed): each pod once.
    assert job.status["failed"] >= 1
    assert job.status["failed"] + job.status.get("succeeded", 0) == 3

    pods = list(kr8s.get("pods", namespace="default", label_selector={"job-name": "kr8s-policy"}, api=api))
    by_index = {p.metadata.annotations["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    failed = by_index["1"]
    assert failed.status.phase == "Failed"
    assert failed.status.containerStatuses[0]["state"]["terminated"]["exitCode"] == 42
    assert list(failed.logs()) == ["index 1"]

    failed.label({"triaged": "yes"})  # a JSON merge patch
    failed.refresh()
    assert failed.labels["triaged"] == "yes"

    node = Node.get("kjobs-node", api=api)
    node.cordon()
    node.refresh()
    assert node.unschedulable
    node.uncordon()
    node.refresh()
    assert not node.unschedulable

    job.delete(propagation_policy="Foreground")
    _until(lambda: True if not job.exists() else None, "the Job to be deleted in the foreground")
    left = list(kr8s.get("pods", namespace="default", label_selector={"job-name": "kr8s-policy"}, api=api))
    assert left == []


def test_lightkube_evicts_a_pod_that_the_policy_ignores(kubeconfig: Path, tmp_path: Path) -> None:
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.codecs import from_dict
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.batch_v1 import Job
    from lightkube.resources.core_v1 import Pod

    c = Client(config=KubeConfig.from_file(str(kubeconfig)))
    flag = tmp_path / "started-once"
    ignore = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    body = _job(
        "lk-evict",
        # the trap takes the eviction's SIGTERM (PID 1 with no handler would run out its 30 s grace period)
        f"test -e {flag} && exit 0; touch {flag}; trap 'exit 143' TERM; sleep 60 & wait",
        backoffLimit=0,
        podFailurePolicy={"rules": [ignore]},
    )
    c.create(from_dict(body))

    def running() -> Any:
        pods = list(c.list(Pod, namespace="default", labels={"job-name": "lk-evict"}))
        return pods[0] if pods and pods[0].status.phase == "Running" else None

    first = _until(running, "the first pod to run")
    name, rv = first.metadata.name, first.metadata.resourceVersion
    c.create(Pod.Eviction(metadata=ObjectMeta(name=name, namespace="default")), name, namespace="default")

    # The evicted pod is gone once it is terminal and counted: its last state is read from a watch that starts
    # at the version it was running at.
    last = first
    for op, pod in c.watch(Pod, namespace="default", fields={"metadata.name": name}, resource_version=rv):
        last = pod
        if op == "DELETED":
            break
    assert last.status.phase == "Failed"
    disruption = [cond for cond in last.status.conditions if cond.type == "DisruptionTarget"]
    assert [(d.status, d.reason) for d in disruption] == [("True", "EvictionByEvictionAPI")]

    done = c.wait(Job, "lk-evict", for_conditions=["Complete", "Failed"], namespace="default")
    types = [cond.type for cond in done.status.conditions]
    assert "Complete" in types and "Failed" not in types
    assert done.status.succeeded == 1 and not done.status.failed  # the evicted pod was not counted

    # Server-side apply twice is one write; a strategic merge patch; chunked lists; the API's 404 as ApiError.
    applied = c.apply(from_dict(_job("lk-apply", "exit 0")), field_manager="probe")
    again = c.apply(from_dict(_job("lk-apply", "exit 0")), field_manager="probe")
    assert again.metadata.resourceVersion == applied.metadata.resourceVersion
    assert "probe" in [m.manager for m in applied.metadata.managedFields]
    c.patch(Job, "lk-apply", {"metadata": {"labels": {"team": "batch"}}}, namespace="default")
    assert c.get(Job, "lk-apply", namespace="default").metadata.labels["team"] == "batch"
    every = [p.metadata.name for p in c.list(Pod, namespace="default")]
    chunked = [p.metadata.name for p in c.list(Pod, namespace="default", chunk_size=1)]
    assert chunked == every and len(every) >= 2
    with pytest.raises(ApiError) as missing:
        c.get(Pod, "no-such-pod", namespace="default")
    assert missing.value.status.code == 404
    assert missing.value.status.reason == "NotFound"


def test_kubernetes_asyncio_watches_a_job_exceed_its_backoff_limit(kubeconfig: Path) -> None:
    from kubernetes_asyncio import client, config, watch

    async def scenario() -> None:
        await config.load_kube_config(config_file=str(kubeconfig))
        async with client.ApiClient() as api:
            core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
            await batch.create_namespaced_job("default", _job("ka-backoff", "echo attempt; exit 3", backoffLimit=1))
            seen: list[list[str]] = []
            stream = watch.Watch()
            async for event in stream.stream(
                batch.list_namespaced_job, "default", field_selector="metadata.name=ka-backoff", timeout_seconds=60
            ):
                seen.append([c.type for c in event["object"].status.conditions or []])
                if "Failed" in seen[-1]:
                    break
            await stream.close()
            assert ["FailureTarget"] in seen  # FailureTarget first, then Failed once the pods are terminal
            job = await batch.read_namespaced_job_status("ka-backoff", "default")
            failed = {c.type: c.reason for c in job.status.conditions}
            assert failed == {"FailureTarget": "BackoffLimitExceeded", "Failed": "BackoffLimitExceeded"}
            assert job.status.failed == 2

            pods = await core.list_namespaced_pod("default", label_selector="job-name=ka-backoff")
            assert len(pods.items) == 2
            for pod in pods.items:
                terminated = pod.status.container_statuses[0].state.terminated
                assert (pod.status.phase, terminated.exit_code, terminated.reason) == ("Failed", 3, "Error")
                assert await core.read_namespaced_pod_log(pod.metadata.name, "default") == "attempt\n"
            # The controller records its Events after the status write they describe (as client-go's recorder
            # does), so the Job can show Failed a moment before its BackoffLimitExceeded Event is stored.
            reasons: list[str] = []
            for _ in range(200):
                events = await core.list_namespaced_event("default", field_selector="involvedObject.name=ka-backoff")
                reasons = [e.reason for e in events.items]
                if "BackoffLimitExceeded" in reasons:
                    break
                await asyncio.sleep(0.05)
            assert "BackoffLimitExceeded" in reasons

            invalid = _job("ka-invalid", "true")
            del invalid["spec"]["template"]["spec"]["restartPolicy"]
            with pytest.raises(client.ApiException) as rejected:
                await batch.create_namespaced_job("default", invalid)
            assert rejected.value.status == 422
            assert "spec.template.spec.restartPolicy: Required value" in rejected.value.body

    asyncio.run(scenario())


OPERATOR = textwrap.dedent(
    """
    import kopf

    @kopf.on.create("batch", "v1", "jobs")
    def seen(body, name, patch, **_):
        patch.metadata.annotations["example.com/seen-by"] = "kopf"
        kopf.info(body, reason="SeenByOperator", message=f"job {name} seen")

    @kopf.on.field("batch", "v1", "jobs", field="status.succeeded")
    def succeeded(name, new, patch, **_):
        if new:
            patch.metadata.annotations["example.com/succeeded"] = str(new)
    """
)


@contextmanager
def _kopf(kubeconfig: Path, tmp_path: Path, source: str, *options: str) -> Iterator[None]:
    """`kopf run OPTIONS operator.py` against the cluster for the block; its output must hold no traceback."""
    operator = tmp_path / "operator.py"
    operator.write_text(source)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    command = [sys.executable, "-m", "kopf", "run", *options, str(operator)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert "Traceback" not in output, output


def test_kopf_operator_handles_jobs(kubeconfig: Path, tmp_path: Path) -> None:
    api = k8s_config.new_client_from_config(str(kubeconfig))
    with _kopf(kubeconfig, tmp_path, OPERATOR, "--standalone", "--namespace", "default"), api:
        batch, core = k8s.BatchV1Api(api), k8s.CoreV1Api(api)
        batch.create_namespaced_job("default", _job("kopf-watched", "exit 0"))

        def handled() -> dict[str, str] | None:
            annotations = batch.read_namespaced_job("kopf-watched", "default").metadata.annotations or {}
            return annotations if "example.com/succeeded" in annotations else None

        annotations = _until(handled, "the operator to annotate the Job twice", timeout=60)
        assert annotations["example.com/seen-by"] == "kopf"
        assert annotations["example.com/succeeded"] == "1"
        selector = "reason=SeenByOperator,involvedObject.name=kopf-watched"  # it also sees the earlier Jobs
        # kopf posts its Events in the background, after the patch that stored the annotations
        events = _until(
            lambda: core.list_namespaced_event("default", field_selector=selector).items or None,
            "the operator's SeenByOperator Event",
        )
        assert [(e.involved_object.name, e.message, e.source.component) for e in events] == [
            ("kopf-watched", "job kopf-watched seen", "kopf")
        ]


CHILDREN = textwrap.dedent(
    """
    import kopf
    from kubernetes import client, config

    config.load_kube_config()

    @kopf.on.create("batch", "v1", "jobs", labels={"example.com/children": "yes"})
    def make_children(body, name, namespace, **_):
        core = client.CoreV1Api()
        makers = (("configmap", core.create_namespaced_config_map), ("secret", core.create_namespaced_secret))
        for kind, create in makers:
            child = {"metadata": {"name": f"{name}-{kind}"}, "data": {}}
            kopf.adopt(child, owner=body)
            create(namespace, child)
    """
)


def test_kopf_children_go_with_their_job(kubeconfig: Path, tmp_path: Path) -> None:
    """A ConfigMap and a Secret an operator made for a Job (`kopf.adopt`: the Job as their controller owner) are
    deleted by the garbage collector after the Job, as on a cluster, instead of staying forever."""
    api = k8s_config.new_client_from_config(str(kubeconfig))
    with _kopf(kubeconfig, tmp_path, CHILDREN, "--standalone", "--all-namespaces"), api:
        batch, core = k8s.BatchV1Api(api), k8s.CoreV1Api(api)
        job = _job("kopf-parent", "exit 0")
        job["metadata"]["labels"] = {"example.com/children": "yes"}
        batch.create_namespaced_job("default", job)

        def children() -> list[str] | None:
            names = [c.metadata.name for c in core.list_namespaced_config_map("default").items]
            names += [s.metadata.name for s in core.list_namespaced_secret("default").items]
            mine = sorted(n for n in names if n.startswith("kopf-parent-"))
            return mine or None

        def both() -> list[str] | None:  # the handler makes one after the other
            made = children()
            return made if made is not None and len(made) == 2 else None

        assert _until(both, "the operator to make the Job's children") == [
            "kopf-parent-configmap",
            "kopf-parent-secret",
        ]
        owner = core.read_namespaced_config_map("kopf-parent-configmap", "default").metadata.owner_references[0]
        assert (owner.kind, owner.name, owner.controller) == ("Job", "kopf-parent", True)

        batch.delete_namespaced_job("kopf-parent", "default", propagation_policy="Background")  # as kubectl
        _until(lambda: True if children() is None else None, "the garbage collector to delete the children")


def test_clients_get_the_status_code_a_cluster_gives_for_bad_writes(kubeconfig: Path) -> None:
    """Mistakes users make through each client reach them as the Status a real apiserver sends: a patch body of
    the wrong shape for its type, an apply configuration without apiVersion/kind, options the server refuses."""
    import kr8s
    from kr8s.objects import Job as Kr8sJob
    from kubernetes_asyncio import client, config
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.codecs import from_dict
    from lightkube.resources.batch_v1 import Job
    from lightkube.types import PatchType

    c = Client(config=KubeConfig.from_file(str(kubeconfig)), field_manager="bad-writes")
    c.create(from_dict(_job("bad-writes", "exit 0", suspend=True)))

    def lightkube_error(call: Callable[[], object]) -> tuple[int, str]:
        with pytest.raises(ApiError) as caught:
            call()
        return caught.value.status.code, caught.value.status.message

    suspend = {"spec": {"suspend": False}}
    # an apply of a partial object, as one writes a merge patch
    assert lightkube_error(
        lambda: c.patch(Job, "bad-writes", suspend, namespace="default", patch_type=PatchType.APPLY)
    ) == (400, "invalid object type: /, Kind=")
    # a merge patch sent as a JSON patch
    assert lightkube_error(
        lambda: c.patch(Job, "bad-writes", suspend, namespace="default", patch_type=PatchType.JSON)
    ) == (400, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")
    # two appliers disagree: the other applier is named without a version
    c.apply(from_dict(_job("bad-apply", "exit 0", suspend=True)), field_manager="first")
    assert lightkube_error(
        lambda: c.apply(from_dict(_job("bad-apply", "exit 0", suspend=False)), field_manager="second")
    ) == (409, 'Apply failed with 1 conflict: conflict with "first": .spec.suspend')

    api = kr8s.api(kubeconfig=str(kubeconfig))
    job = Kr8sJob.get("bad-writes", namespace="default", api=api)
    with pytest.raises(kr8s.ServerError) as kr8s_error:
        job.patch({"metadata": {"labels": {"a": "b"}}}, type="json")
    assert kr8s_error.value.response is not None and kr8s_error.value.response.status_code == 400

    async def asyncio_client() -> None:
        await config.load_kube_config(config_file=str(kubeconfig))
        async with client.ApiClient() as session:
            batch = client.BatchV1Api(session)
            with pytest.raises(client.ApiException) as refused:
                await batch.create_namespaced_job("default", _job("bad-dry-run", "true"), dry_run="true")
            assert refused.value.status == 422
            message = json.loads(refused.value.body)["message"]
            assert message.endswith('dryRun: Unsupported value: ["true"]: supported values: "All"')
            assert (await batch.list_namespaced_job("default", field_selector="metadata.name=bad-dry-run")).items == []

    asyncio.run(asyncio_client())
    assert job.status.get("active") is None  # nothing above resumed it
