"""Upstream rows of pkg/apis/batch/v1/defaults_test.go (TestSetDefaultJob), run against kjobs' defaulting.

Upstream round-trips a batch/v1 Job through the legacy codec, which applies `SetObjectDefaults_Job`; kjobs'
equivalent is `default_job` (what the API server runs on a decoded Job before `PrepareForCreate`). Each row
checks what upstream checks: suspend, completions, parallelism, backoffLimit, podFailurePolicy, whether the Job's
labels equal its template's, completionMode, podReplacementPolicy and manualSelector. Source, version and what
differs from upstream's gates: docs/upstream-job-validation.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.defaults import default_job
from kjobs.api.types import Obj
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore

DEFAULT_LABELS = {"default": "default"}
TEMPLATE: Obj = {"metadata": {"labels": DEFAULT_LABELS}}
MAX_INT32 = 2147483647

_ON_CONDITIONS_UNSPECIFIED: Obj = {
    "rules": [
        {
            "action": "FailJob",
            "onPodConditions": [
                {"type": "DisruptionTarget", "status": "True"},
                {"type": "MemoryLimitExceeded", "status": "False"},
                {"type": "DiskLimitExceeded"},
            ],
        },
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}},
        {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]},
    ]
}
_ON_CONDITIONS_DEFAULTED: Obj = {
    "rules": [
        {
            "action": "FailJob",
            "onPodConditions": [
                {"type": "DisruptionTarget", "status": "True"},
                {"type": "MemoryLimitExceeded", "status": "False"},
                {"type": "DiskLimitExceeded", "status": "True"},
            ],
        },
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}},
        {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
    ]
}
_EXIT_CODE_POLICY: Obj = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]}


def _job(spec: Obj, labels: dict[str, str] | None = None) -> Obj:
    job: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {}, "spec": {"template": TEMPLATE, **spec}}
    if labels is not None:
        job["metadata"]["labels"] = labels
    return job


# (name, original spec, Job labels, expected spec fields, expectLabels). An expected field left out is expected
# absent; podFailurePolicy is expected as given unless the row names it.
ROWS: list[tuple[str, Obj, dict[str, str] | None, Obj, bool]] = [
    (
        "Pod failure policy with some field values unspecified -> set default values",
        {"podFailurePolicy": _ON_CONDITIONS_UNSPECIFIED},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "manualSelector": False,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": _ON_CONDITIONS_DEFAULTED,
        },
        True,
    ),
    (
        "Pod failure policy and defaulting for pod replacement policy",
        {"podFailurePolicy": _EXIT_CODE_POLICY},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "Failed",
            "manualSelector": False,
            "podFailurePolicy": _EXIT_CODE_POLICY,
        },
        True,
    ),
    (
        "All unspecified and podReplacementPolicyEnabled -> sets all to default values",
        {},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "All unspecified -> sets all to default values",
        {},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "All unspecified, suspend job enabled -> sets all to default values",
        {},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "suspend set, everything else is defaulted",
        {"suspend": True},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": True,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "All unspecified -> all pointers are defaulted and no default labels",
        {},
        {"mylabel": "myvalue"},
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        False,
    ),
    (
        "WQ: Parallelism explicitly 0 and completions unset -> BackoffLimit is defaulted",
        {"parallelism": 0},
        None,
        {
            "parallelism": 0,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "WQ: Parallelism explicitly 2 and completions unset -> BackoffLimit is defaulted",
        {"parallelism": 2},
        None,
        {
            "parallelism": 2,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "Completions explicitly 2 and others unset -> parallelism and BackoffLimit are defaulted",
        {"completions": 2},
        None,
        {
            "completions": 2,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "BackoffLimit explicitly 5 and others unset -> parallelism and completions are defaulted",
        {"backoffLimit": 5},
        None,
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 5,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "All set -> no change",
        {
            "completions": 8,
            "parallelism": 9,
            "backoffLimit": 10,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        None,
        {
            "completions": 8,
            "parallelism": 9,
            "backoffLimit": 10,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "All set, flipped -> no change",
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimit": 9,
            "completionMode": "Indexed",
            "suspend": True,
            "podReplacementPolicy": "Failed",
            "manualSelector": True,
        },
        None,
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimit": 9,
            "completionMode": "Indexed",
            "suspend": True,
            "podReplacementPolicy": "Failed",
            "manualSelector": True,
        },
        True,
    ),
    (
        "BackoffLimitPerIndex specified, but no BackoffLimit -> default BackoffLimit to max int32",
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimitPerIndex": 1,
            "completionMode": "Indexed",
            "suspend": True,
            "manualSelector": False,
        },
        None,
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimit": MAX_INT32,
            "completionMode": "Indexed",
            "suspend": True,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
        True,
    ),
    (
        "BackoffLimitPerIndex and BackoffLimit specified -> no change",
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimit": 3,
            "backoffLimitPerIndex": 1,
            "completionMode": "Indexed",
            "suspend": True,
            "manualSelector": True,
        },
        None,
        {
            "completions": 11,
            "parallelism": 10,
            "backoffLimit": 3,
            "completionMode": "Indexed",
            "suspend": True,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": True,
        },
        True,
    ),
]

_CHECKED = (
    "suspend",
    "completions",
    "parallelism",
    "backoffLimit",
    "podFailurePolicy",
    "completionMode",
    "podReplacementPolicy",
    "manualSelector",
)


@pytest.mark.parametrize(
    ("original", "labels", "expected", "expect_labels"), [pytest.param(*r[1:], id=r[0]) for r in ROWS]
)
def test_set_default_job(original: Obj, labels: dict[str, str] | None, expected: Obj, expect_labels: bool) -> None:
    """TestSetDefaultJob: the fields upstream compares, after batch/v1 defaulting."""
    actual = default_job(_job(original, labels))
    spec = actual["spec"]
    want = {key: expected.get(key, original.get(key)) for key in _CHECKED}
    assert {key: spec.get(key) for key in _CHECKED} == want
    assert (actual["metadata"].get("labels") == spec["template"]["metadata"]["labels"]) is expect_labels


def test_set_default_job_through_the_api() -> None:
    """The row "All unspecified -> sets all to default values" as a user sees it: a Job created without these
    fields is stored with them, `manualSelector: false` included (`SetDefaults_Job`)."""
    jobs: Resource = lookup("batch", "v1", "jobs")  # type: ignore[assignment]
    body = _job({})
    body["metadata"] = {"name": "myjob"}
    body["spec"]["template"] = {
        "metadata": {"labels": DEFAULT_LABELS},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "abc", "image": "image"}]},
    }

    async def main() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
        await service.ensure_namespaces()
        return (await service.create(jobs, "default", body)).obj

    spec = asyncio.run(main())["spec"]
    assert {key: spec.get(key) for key in _CHECKED} == {
        "suspend": False,
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "podFailurePolicy": None,
        "completionMode": "NonIndexed",
        "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False,
    }
