"""The conformance harness applies the corpus README's rules (`tests/conformance/corpus/README.md` §3.1) as written.

Small hand-made scenarios in the corpus' own format, each pinning one rule: a failed status write of a tracking
step is captured, `expectActions`/`expectStatusUpdates`/a tracking `expectMetric` are about the step just run,
`exact` exempts only startTime/completionTime/ready, and an integration `expectJob` compares listed conditions as
`{type, status, reason[, message]}` with times ignored.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from kjobs.api.names import JOB_TRACKING_FINALIZER
from tests.conformance import harness as H
from tests.conformance.integration import local_client, run_integration
from tests.conformance.test_scenarios import _run_unit

_ENV = {"now": "2025-01-01T00:00:00Z"}
_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main-container", "image": "i"}]}}


def _job(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "job", "namespace": "default", "uid": "job-uid"},
        "spec": {"selector": {"matchLabels": {"job": "j"}}, "template": _TEMPLATE, **spec},
    }


def _pod(name: str, phase: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "finalizers": [JOB_TRACKING_FINALIZER]}, "status": {"phase": phase}}


def test_a_failed_status_write_of_a_tracking_step_is_captured() -> None:
    track = {
        "op": "trackStatusAndRemoveFinalizers",
        "finishedCondition": None,
        "expectedRmFinalizers": [],
        "needsFlush": False,
        "inject": {"statusUpdateError": True, "expectError": True},
    }
    written = {"uncountedTerminatedPods": {"succeeded": ["a"]}}
    case = {
        "env": _ENV,
        "job": _job(completions=2, parallelism=2),
        "steps": [
            {"op": "seedPods", "pods": [_pod("a", "Succeeded")]},
            track,
            {"op": "expectActions", "finalizerRemovals": 0},
            {"op": "expectStatusUpdates", "updates": [written]},
        ],
    }
    _run_unit(case)


def test_expect_actions_and_status_updates_count_only_the_step_just_run() -> None:
    track = {"op": "trackStatusAndRemoveFinalizers", "finishedCondition": None, "expectedRmFinalizers": []}
    case = {
        "env": _ENV,
        "job": _job(completions=2, parallelism=2),
        "steps": [
            {"op": "seedPods", "pods": [_pod("a", "Succeeded")]},
            {**track, "needsFlush": False},
            {"op": "expectActions", "finalizerRemovals": 1},
            {**track, "needsFlush": False},  # the stored Job and the recording fake's pod are as before
            {"op": "expectActions", "finalizerRemovals": 1},
            {
                "op": "expectStatusUpdates",
                "updates": [{"uncountedTerminatedPods": {"succeeded": ["a"]}}, {"succeeded": 1}],
            },
            {
                "op": "expectMetric",
                "name": "job_controller_job_pods_finished_total",
                "values": [{"labels": {"completion_mode": "NonIndexed", "result": "succeeded"}, "value": 1}],
            },
        ],
    }
    _run_unit(case)


def test_exact_leaves_only_start_time_completion_time_and_ready_unlisted() -> None:
    running = {
        "metadata": {"name": "a", "finalizers": [JOB_TRACKING_FINALIZER], "deletionTimestamp": "@now"},
        "status": {"phase": "Running"},
    }
    case = {
        "env": _ENV,
        "job": _job(completions=1, parallelism=1),
        "steps": [
            {"op": "seedPods", "pods": [running]},
            {"op": "sync"},
            {"op": "expectJob", "exact": True, "status": {"active": 0, "failed": 1}},
        ],
    }
    with pytest.raises(AssertionError, match=re.escape("unexpected status fields {'terminating'}")):
        _run_unit(case)  # the pod is terminating: `terminating: 1` is unlisted and not zero
    case["steps"][-1]["status"]["terminating"] = 1
    _run_unit(case)


@pytest.mark.e2e
def test_an_integration_expect_job_compares_conditions_without_times() -> None:
    case = {
        "env": {"podFailureBackoff": "100ms"},
        "applyDefaults": True,
        "job": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"generateName": "conditions-", "namespace": "default"},
            "spec": {"completions": 1, "parallelism": 1, "template": _TEMPLATE},
        },
        "steps": [
            {"op": "waitActive", "count": 1},
            {"op": "setPodStatus", "select": {"nonTerminal": True}, "phase": "Succeeded"},
            {
                "op": "expectJob",
                "status": {
                    "succeeded": 1,
                    "conditions": [
                        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
                        {
                            "type": "Complete",
                            "status": "True",
                            "reason": "CompletionsReached",
                            "message": "Reached expected number of succeeded pods",
                        },
                    ],
                },
            },
        ],
    }
    asyncio.run(run_integration(case, local_client))


def test_metric_samples_are_keyed_by_name_and_sorted_labels() -> None:
    sc = H.UnitScenario({"env": _ENV, "job": _job()})
    sc.metrics.pods_finished.labels(completion_mode="Indexed", result="failed").inc(2)
    samples = H.metric_samples(sc.metrics)
    assert (
        samples[("job_controller_job_pods_finished_total", (("completion_mode", "Indexed"), ("result", "failed")))] == 2
    )
