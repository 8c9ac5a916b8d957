"""A small "operator" as a user would write it: it runs a report as a Kubernetes Job and acts on the outcome.

The Job's podFailurePolicy says what a failure means:
- exit code 42 is the report's "bad input": fail the Job at once (`FailJob`), no retry will help;
- a pod disrupted by the cluster (eviction, preemption, node loss: `DisruptionTarget`) is replaced without
  counting against `backoffLimit` (`Ignore`);
- any other failure counts; after `backoffLimit` retries the Job fails (`BackoffLimitExceeded`).

`run_report` waits (with a watch) for the Job's terminal condition and turns it into a decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes import client, config, watch

BAD_INPUT_EXIT_CODE = 42


@dataclass(frozen=True)
class Outcome:
    """What the operator decided about one report run."""

    action: str
    """`publish` (it succeeded), `reject` (bad input: tell the user), `page` (it kept failing)."""
    reason: str
    """The reason of the Job's terminal condition."""
    failed_pods: int


def report_job(name: str, command: str, *, backoff_limit: int = 2, deadline: int | None = None) -> dict[str, Any]:
    """The Job manifest of one report run."""
    spec: dict[str, Any] = {
        "backoffLimit": backoff_limit,
        "podFailurePolicy": {
            "rules": [
                {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [BAD_INPUT_EXIT_CODE]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            ]
        },
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "report",
                        "image": "docker.io/library/busybox:1.36",
                        "command": ["sh", "-c", command],
                        "resources": {"requests": {"cpu": "100m"}},
                    }
                ],
            }
        },
    }
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def start_report(name: str, command: str, *, namespace: str = "default", api: Any = None, **options: Any) -> None:
    """Create the report's Job (through `api`, an `ApiClient`; default: the current kubeconfig)."""
    if api is None:
        config.load_kube_config()
    client.BatchV1Api(api).create_namespaced_job(namespace, report_job(name, command, **options))


def wait_for_report(name: str, *, namespace: str = "default", api: Any = None, timeout: int = 60) -> Outcome:
    """Watch the Job until it has a terminal condition and decide what to do."""
    if api is None:
        config.load_kube_config()
    batch = client.BatchV1Api(api)
    stream = watch.Watch().stream(
        batch.list_namespaced_job, namespace, field_selector=f"metadata.name={name}", timeout_seconds=timeout
    )
    for event in stream:
        job = event["object"]
        for condition in job.status.conditions or []:
            if condition.status != "True" or condition.type not in ("Complete", "Failed"):
                continue
            failed = job.status.failed or 0
            if condition.type == "Complete":
                return Outcome("publish", condition.reason or "", failed)
            if condition.reason == "PodFailurePolicy":
                return Outcome("reject", condition.reason, failed)
            return Outcome("page", condition.reason or "", failed)
    raise TimeoutError(f"report {name} did not finish within {timeout}s")


def run_report(name: str, command: str, *, namespace: str = "default", api: Any = None, **options: Any) -> Outcome:
    """Start the report and wait for its outcome."""
    start_report(name, command, namespace=namespace, api=api, **options)
    return wait_for_report(name, namespace=namespace, api=api)
