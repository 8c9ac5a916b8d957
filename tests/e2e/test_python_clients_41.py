"""Job tooling written with third-party clients against `kjobs up`, as their READMEs show it (docs/clients41.md):
a batch submitter on the official client (`utils.create_from_yaml` of a multi-document file, a watch until every
Job ends, each one's `Failed` reason, the failed pods' logs, Background and Foreground cleanup), and lightkube's
`Pod.Eviction` through `create(..., name=)` on a Job that ignores disruptions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.e2e.test_python_clients import kubeconfig as kubeconfig  # the fixture: one `kjobs up` for this module

pytestmark = pytest.mark.e2e

BATCH = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: batch-settings}
data: {mode: test}
---
apiVersion: batch/v1
kind: Job
metadata: {name: ok, labels: {suite: b41}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, echo fine]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: policy, labels: {suite: b41}}
spec:
  backoffLimit: 6
  podFailurePolicy:
    rules: [{action: FailJob, onExitCodes: {containerName: main, operator: In, values: [42]}}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "echo policy-fail; exit 42"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: backoff, labels: {suite: b41}}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "echo backoff-fail; exit 1"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: indexes, labels: {suite: b41}}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimitPerIndex: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: [sh, -c, "echo idx $JOB_COMPLETION_INDEX; exit $JOB_COMPLETION_INDEX"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: deadline, labels: {suite: b41}}
spec:
  activeDeadlineSeconds: 1
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1  # `sleep`, PID 1 with no SIGTERM handler, runs out its grace period
      containers: [{name: main, image: busybox, command: [sh, -c, "sleep 60"]}]
"""


def test_official_client_batch_submitter(kubeconfig: Path, tmp_path: Path) -> None:
    """Each Job's outcome and reason as the watch delivers it, the failed pods' logs, both cleanups with every
    pod gone; the Job controller's managedFields entry keeps `f:uncountedTerminatedPods` once the failed pods
    are counted (SMD keeps the map the manager owned; kjobs used to drop it with its last key)."""
    from kubernetes import client, config, utils, watch

    manifest = tmp_path / "batch.yaml"
    manifest.write_text(BATCH)
    ns = "submit41"
    with config.new_client_from_config(str(kubeconfig)) as api:
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        core.create_namespace({"metadata": {"name": ns}})
        created = utils.create_from_yaml(api, str(manifest), namespace=ns)
        assert [type(objs[0]).__name__ for objs in created] == ["V1ConfigMap"] + ["V1Job"] * 5

        jobs = batch.list_namespaced_job(ns, label_selector="suite=b41")
        pending = {j.metadata.name for j in jobs.items}
        outcome: dict[str, tuple[str, str]] = {}
        events = watch.Watch()
        stream = events.stream(
            batch.list_namespaced_job,
            ns,
            label_selector="suite=b41",
            resource_version=jobs.metadata.resource_version,
            timeout_seconds=60,
        )
        for event in stream:
            job = event["object"]
            for c in job.status.conditions or []:
                if c.type in ("Complete", "Failed") and c.status == "True":
                    outcome[job.metadata.name] = (c.type, c.reason)
                    pending.discard(job.metadata.name)
            if not pending:
                events.stop()
        assert outcome == {
            "ok": ("Complete", "CompletionsReached"),
            "policy": ("Failed", "PodFailurePolicy"),
            "backoff": ("Failed", "BackoffLimitExceeded"),
            "indexes": ("Failed", "FailedIndexes"),
            "deadline": ("Failed", "DeadlineExceeded"),
        }

        logs: dict[str, list[str]] = {}
        for name, (kind, _) in outcome.items():
            if kind == "Failed":
                for pod in core.list_namespaced_pod(ns, label_selector=f"job-name={name}").items:
                    if pod.status.phase == "Failed" and name != "deadline":
                        logs.setdefault(name, []).append(core.read_namespaced_pod_log(pod.metadata.name, ns))
        assert logs == {"policy": ["policy-fail\n"], "backoff": ["backoff-fail\n"] * 2, "indexes": ["idx 1\n"]}

        entries = batch.read_namespaced_job("backoff", ns).metadata.managed_fields
        [controller] = [m for m in entries if m.manager == "kube-controller-manager"]
        assert controller.fields_v1["f:status"]["f:uncountedTerminatedPods"] == {}

        pods = core.list_namespaced_pod(ns)
        left = {p.metadata.name for p in pods.items}
        for i, name in enumerate(sorted(outcome)):
            batch.delete_namespaced_job(name, ns, propagation_policy="Foreground" if i % 2 else "Background")
        core.delete_namespaced_config_map("batch-settings", ns)
        events = watch.Watch()
        stream = events.stream(
            core.list_namespaced_pod, ns, resource_version=pods.metadata.resource_version, timeout_seconds=60
        )
        for event in stream:
            if event["type"] == "DELETED":
                left.discard(event["object"].metadata.name)
            if not left:
                events.stop()
        assert not left
        assert batch.list_namespaced_job(ns).items == []


def test_lightkube_eviction_marks_the_pod_and_the_job_ignores_it(kubeconfig: Path) -> None:
    """`client.create(Pod.Eviction(...), name=...)` answers the Status kube-apiserver does (read back as the
    Eviction model); the pod gets `DisruptionTarget` (`EvictionByEvictionAPI`), and a Job whose podFailurePolicy
    ignores it replaces the pod without counting a failure; `client.wait` sees it complete."""
    from lightkube import Client, KubeConfig, codecs
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.batch_v1 import Job
    from lightkube.resources.core_v1 import Pod

    ns = "default"
    lk = Client(KubeConfig.from_file(kubeconfig), namespace=ns, field_manager="lk41")
    manifest = textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: lk41-evict}
        spec:
          backoffLimit: 0
          podFailurePolicy:
            rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
          template:
            spec:
              restartPolicy: Never
              containers: [{name: main, image: busybox, command: [sh, -c, "sleep 1"]}]
        """)
    [job] = codecs.load_all_yaml(manifest)
    lk.apply(job, force=True)
    for _op, pod in lk.watch(Pod, labels={"job-name": "lk41-evict"}):
        if pod.status and pod.status.phase == "Running":
            break
    name, since = pod.metadata.name, pod.metadata.resourceVersion
    answer = lk.create(Pod.Eviction(metadata=ObjectMeta(name=name, namespace=ns)), name=name)
    assert answer.apiVersion == "policy/v1"
    for _op, seen in lk.watch(Pod, labels={"job-name": "lk41-evict"}, resource_version=since):
        conditions = {c.type: c for c in seen.status.conditions or []}
        if seen.metadata.name == name and "DisruptionTarget" in conditions:
            assert conditions["DisruptionTarget"].reason == "EvictionByEvictionAPI"
            break
    done = lk.wait(Job, "lk41-evict", for_conditions=["Complete", "Failed"])
    assert [c.type for c in done.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    assert not done.status.failed
    assert done.status.succeeded == 1
