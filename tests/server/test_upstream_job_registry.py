"""Upstream rows of pkg/registry/batch/job/strategy_test.go, run through kjobs' API service.

Upstream calls the Job strategy's hooks (PrepareForCreate, PrepareForUpdate, Validate, WarningsOnCreate,
WarningsOnUpdate, the status strategy's PrepareForUpdate and ValidateUpdate) on internal objects. Here each row
is a request to kjobs' in-process `ApiService` — a create, an update or a status update — and the row's want is
checked on what a user gets back: the stored object, the warnings, or the 422's causes compared as upstream
compares errors (type and field, `ignoreErrValueDetail`). A row's *old* Job is created through the API and its
status put into the store as the row has it (rows start from statuses the status strategy itself would refuse,
e.g. Failed=True without FailureTarget). Rows left out and why: docs/upstream-registry.md.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService
from kjobs.simulate import SimulationOptions
from kjobs.simulate.session import simulate
from tests.support import run_on_service

JOBS: Resource = lookup("batch", "v1", "jobs")  # type: ignore[assignment]
NOW = "2025-01-01T00:00:00Z"
NOW_PLUS_MINUTE = "2025-01-01T00:01:00Z"
INVALID, REQUIRED = "FieldValueInvalid", "FieldValueRequired"
VALID_SELECTOR = {"matchLabels": {"a": "b"}}
SUCCESS_POLICY = {"rules": [{"succeededIndexes": "0-2"}]}
PFP = {"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "abc", "operator": "In", "values": [1]}}]}
PFP_UPDATED = {
    "rules": [{"action": "Ignore", "onExitCodes": {"containerName": "abc", "operator": "In", "values": [2]}}]
}


run = run_on_service


def job_body(name: str = "myjob", *, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    """`getValidPodTemplateSpecForSelector`: restartPolicy OnFailure, one container abc/image."""
    template: Obj = {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "abc", "image": "image"}]}}
    if labels is not None:
        template["metadata"] = {"labels": dict(labels)}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": template, **spec}}


def manual(**spec: Any) -> Obj:
    """A Job with the rows' manual selector a=b (`validSelector`, `ManualSelector: true`)."""
    return job_body(labels={"a": "b"}, selector=VALID_SELECTOR, manualSelector=True, **spec)


async def stored(service: ApiService, body: Obj, status: Obj | None = None) -> Obj:
    """Create `body`; then, when given, put `status` into the store as the row's old Job has it."""
    job = (await service.create(JOBS, "default", copy.deepcopy(body))).obj
    if status is None:
        return job
    job = copy.deepcopy(job)
    job["status"] = status
    return await service.store.update(JOBS.store_key, job, expected_rv=job["metadata"]["resourceVersion"])


def causes(exc: ApiError) -> list[tuple[str, str]]:
    """The 422's causes as upstream compares errors: (type, field)."""
    return [(c["reason"], c["field"]) for c in (exc.details or {}).get("causes") or []]


def cond(kind: str, status: str = "True") -> Obj:
    return {"type": kind, "status": status}


# ----------------------------------------------------------------------------------------- PrepareForCreate


def test_prepare_for_create_generate_selectors() -> None:
    """ "generate selectors": the template gets the four batch labels beside its own and the selector is
    controller-uid (the row's ManualSelector false is stored as sent). The row also sends selector a=b, which
    PrepareForCreate keeps and ValidateGeneratedSelector then refuses (`selector` not auto-generated), so through
    the API the row sends none."""

    async def body(service: ApiService) -> Obj:
        return await stored(service, job_body(labels={"a": "b"}, manualSelector=False))

    job = run(body)
    uid = job["metadata"]["uid"]
    assert job["spec"]["template"]["metadata"]["labels"] == {
        "a": "b",
        "job-name": "myjob",
        "batch.kubernetes.io/job-name": "myjob",
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
    }
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["manualSelector"] is False
    assert job["metadata"]["generation"] == 1


def test_prepare_for_create_job_does_not_allow_setting_status_on_create() -> None:
    """ "job does not allow setting status on create"."""

    async def body(service: ApiService) -> Obj:
        return (await service.create(JOBS, "default", {**manual(), "status": {"active": 1}})).obj

    assert run(body)["status"] == {}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param(
            "successPolicy",
            {"rules": [{"succeededIndexes": "1,3-7", "succeededCount": 4}]},
            id="JobSuccessPolicy enabled",
        ),
        pytest.param("podReplacementPolicy", "Failed", id="JobPodReplacementPolicy enabled"),
        pytest.param("managedBy", "example.com/custom", id="managedBy field is set when the feature gate is enabled"),
        pytest.param("podFailurePolicy", PFP, id="create job with a new field"),
        pytest.param("backoffLimitPerIndex", 1, id="create job with a new fields; JobBackoffLimitPerIndex enabled"),
    ],
)
def test_prepare_for_create_job_with_a_new_field(field: str, value: Any) -> None:
    """ "create job with a new field; <gate> enabled" rows: the field is stored as sent. (The row's managedBy
    "custom-controller-name" is no domain-prefixed path, which validation refuses; the rows' template restarts
    OnFailure, which a podFailurePolicy refuses: Never here.)"""
    spec: Obj = {field: value}
    if field in ("successPolicy", "backoffLimitPerIndex"):
        spec.update(completionMode="Indexed", completions=10)

    async def body(service: ApiService) -> Obj:
        job = manual(**spec)
        job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
        return await stored(service, job)

    assert run(body)["spec"][field] == value


# ----------------------------------------------------------------------------------------- PrepareForUpdate


def _update(old_spec: Obj, change: Callable[[Obj], None], *, status: Obj | None = None) -> tuple[Obj, Obj, list[str]]:
    async def body(service: ApiService) -> tuple[Obj, Obj, list[str]]:
        old = await stored(service, manual(**old_spec), status=status)
        new = copy.deepcopy(old)
        change(new)
        result = await service.update(JOBS, "default", "myjob", new)
        return old, result.obj, result.warnings

    return run(body)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("old_spec", "field", "value"),
    [
        pytest.param(
            {},
            "podReplacementPolicy",
            "Failed",
            id="update job with a new field; updated when JobPodReplacementPolicy enabled",
        ),
        pytest.param({"suspend": False}, "suspend", True, id="test updating suspend false->true"),
        pytest.param({}, "suspend", True, id="test updating suspend nil -> true"),
    ],
)
def test_prepare_for_update_spec_change_bumps_generation(old_spec: Obj, field: str, value: Any) -> None:
    """Rows whose update changes the spec: generation goes up by one and the change is stored."""

    def change(job: Obj) -> None:
        job["metadata"].setdefault("annotations", {})["hello"] = "world"
        if value is None:
            job["spec"].pop(field)
        else:
            job["spec"][field] = value

    old, new, _ = _update(old_spec, change)
    assert new["metadata"]["generation"] == old["metadata"]["generation"] + 1
    assert new["spec"].get(field) == value


def test_prepare_for_update_attempt_status_update_and_verify_it_doesnt_change() -> None:
    """ "attempt status update and verify it doesn't change" and "ensure generation doesn't change over non spec
    updates": a PUT of the Job keeps the stored status, and an annotation change keeps the generation."""

    def change(job: Obj) -> None:
        job["metadata"]["annotations"] = {"hello": "world"}
        job["status"] = {"active": 2}

    old, new, _ = _update({}, change, status={"active": 1})
    assert new["status"] == {"active": 1}
    assert new["metadata"]["generation"] == old["metadata"]["generation"]
    assert new["metadata"]["annotations"] == {"hello": "world"}


# ------------------------------------------------------------------------------- status strategy PrepareForUpdate


def test_status_strategy_prepare_for_update() -> None:
    """ "job must allow status updates" and "parallelism changes not allowed": a status write stores the status
    and keeps the spec (and generation) as stored."""

    async def body(service: ApiService) -> Obj:
        old = await stored(service, manual(parallelism=4), status={"active": 11})
        new = copy.deepcopy(old)
        new["spec"]["parallelism"] = 3
        new["status"] = {"active": 12}
        return (await service.update(JOBS, "default", "myjob", new, subresource="status")).obj

    job = run(body)
    assert job["status"] == {"active": 12}
    assert job["spec"]["parallelism"] == 4
    assert job["metadata"]["generation"] == 1


# ------------------------------------------------------------------------------------ status strategy ValidateUpdate

# (row, old spec, old status, new status, want (type, field) list). The upstream rows' job has no spec beyond the
# fields they name; here those fields are added to a valid manual-selector Job.
STATUS_ROWS: list[Any] = [
    (
        "invalid addition of both Failed=True and Complete=True",
        {},
        {},
        {"startTime": NOW, "completionTime": NOW, "conditions": [cond("Complete"), cond("Failed")]},
        [(INVALID, "status.conditions")] * 3,
    ),
    (
        "invalid addition of Complete=True without SuccessCriteriaMet=True",
        {},
        {},
        {"startTime": NOW, "completionTime": NOW, "conditions": [cond("Complete")]},
        [(INVALID, "status.conditions")],
    ),
    (
        "invalid addition of Failed=True without FailureTarget=True",
        {},
        {},
        {"startTime": NOW, "conditions": [cond("Failed")]},
        [(INVALID, "status.conditions")],
    ),
    (
        "completionTime can be removed to fix still running job",
        {},
        {"startTime": NOW, "completionTime": NOW},
        {"startTime": NOW},
        [],
    ),
    (
        "invalid attempt to transition to Failed=True without startTime",
        {},
        {"conditions": [cond("FailureTarget")]},
        {"conditions": [cond("FailureTarget"), cond("Failed")]},
        [(REQUIRED, "status.startTime")],
    ),
    (
        "invalid attempt to transition to Complete=True without startTime",
        {},
        {"conditions": [cond("SuccessCriteriaMet")]},
        {"completionTime": NOW, "conditions": [cond("SuccessCriteriaMet"), cond("Complete")]},
        [(REQUIRED, "status.startTime")],
    ),
    (
        "invalid attempt to transition to Complete=True with active > 0",
        {},
        {"startTime": NOW, "active": 1, "conditions": [cond("SuccessCriteriaMet")]},
        {
            "startTime": NOW,
            "completionTime": NOW,
            "active": 1,
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
        },
        [(INVALID, "status.active")],
    ),
    (
        "invalid attempt to transition to Failed=True with terminating > 0",
        {},
        {"startTime": NOW, "conditions": [cond("FailureTarget")], "terminating": 1},
        {"startTime": NOW, "conditions": [cond("FailureTarget"), cond("Failed")], "terminating": 1},
        [(INVALID, "status.terminating")],
    ),
    (
        "invalid attempt to transition to Failed=True with active > 0",
        {},
        {"startTime": NOW, "conditions": [cond("FailureTarget")], "active": 1},
        {"startTime": NOW, "conditions": [cond("FailureTarget"), cond("Failed")], "active": 1},
        [(INVALID, "status.active")],
    ),
    (
        "invalid attempt to transition to Failed=True with uncountedTerminatedPods.Failed>0",
        {},
        {"startTime": NOW, "uncountedTerminatedPods": {"failed": ["a"]}, "conditions": [cond("FailureTarget")]},
        {
            "startTime": NOW,
            "uncountedTerminatedPods": {"failed": ["a"]},
            "conditions": [cond("FailureTarget"), cond("Failed")],
        },
        [(INVALID, "status.uncountedTerminatedPods")],
    ),
    (
        "invalid attempt to update uncountedTerminatedPods.Succeeded for Complete job",
        {},
        {
            "startTime": NOW,
            "completionTime": NOW,
            "uncountedTerminatedPods": {"failed": ["a"]},
            "conditions": [cond("Complete")],
        },
        {
            "startTime": NOW,
            "completionTime": NOW,
            "uncountedTerminatedPods": {"failed": ["b"]},
            "conditions": [cond("Complete")],
        },
        [(INVALID, "status.uncountedTerminatedPods")],
    ),
    (
        "non-empty uncountedTerminatedPods for complete job, unrelated update",
        {},
        {
            "startTime": NOW,
            "completionTime": NOW,
            "uncountedTerminatedPods": {"failed": ["a"]},
            "conditions": [cond("Complete")],
        },
        {
            "startTime": NOW,
            "completionTime": NOW,
            "uncountedTerminatedPods": {"failed": ["a"]},
            "conditions": [cond("Complete"), cond("CustomJobCondition")],
        },
        [],
    ),
    (
        "invalid attempt to transition to Complete=True with uncountedTerminatedPods.Succeeded>0",
        {},
        {"startTime": NOW, "uncountedTerminatedPods": {"succeeded": ["a"]}, "conditions": [cond("SuccessCriteriaMet")]},
        {
            "startTime": NOW,
            "completionTime": NOW,
            "uncountedTerminatedPods": {"succeeded": ["a"]},
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
        },
        [(INVALID, "status.uncountedTerminatedPods")],
    ),
    (
        "invalid addition Complete=True without setting CompletionTime",
        {},
        {"startTime": NOW, "conditions": [cond("SuccessCriteriaMet")]},
        {"startTime": NOW, "conditions": [cond("SuccessCriteriaMet"), cond("Complete")]},
        [(REQUIRED, "status.completionTime")],
    ),
    (
        "invalid attempt to remove completionTime",
        {},
        {"completionTime": NOW, "conditions": [cond("Complete")]},
        {"startTime": NOW, "conditions": [cond("Complete")]},
        [(REQUIRED, "status.completionTime")],
    ),
    ("verify startTime can be cleared for suspended job", {"suspend": True}, {"startTime": NOW}, {}, []),
    # 1.35's type (the stored strategy_test.go is newer and wants Invalid): see docs/upstream-registry.md.
    (
        "verify startTime cannot be removed for unsuspended job",
        {},
        {"startTime": NOW},
        {},
        [(REQUIRED, "status.startTime")],
    ),
    (
        "verify startTime cannot be updated for unsuspended job",
        {},
        {"startTime": NOW},
        {"startTime": NOW_PLUS_MINUTE},
        [(REQUIRED, "status.startTime")],
    ),
    (
        "verify startTime can be updated when resuming job (JobSuspended: True -> False)",
        {},
        {"startTime": NOW, "conditions": [cond("Suspended")]},
        {"startTime": NOW_PLUS_MINUTE, "conditions": [cond("Suspended", "False")]},
        [],
    ),
    (
        "invalid attempt to set completionTime before startTime",
        {},
        {"startTime": NOW_PLUS_MINUTE, "conditions": [cond("SuccessCriteriaMet")]},
        {
            "startTime": NOW_PLUS_MINUTE,
            "completionTime": NOW,
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
        },
        [(INVALID, "status.completionTime")],
    ),
    (
        "invalid attempt to modify completionTime",
        {},
        {"completionTime": NOW, "conditions": [cond("Complete")]},
        {"completionTime": NOW_PLUS_MINUTE, "startTime": NOW, "conditions": [cond("Complete")]},
        [(INVALID, "status.completionTime")],
    ),
    (
        "invalid removal of terminal condition Failed=True",
        {},
        {"conditions": [cond("Failed")]},
        {},
        [(INVALID, "status.conditions")],
    ),
    (
        "invalid removal of terminal condition Complete=True",
        {},
        {"conditions": [cond("Complete")]},
        {},
        [(INVALID, "status.conditions")],
    ),
    (
        "invalid removal of terminal condition FailureTarget=True",
        {},
        {"conditions": [cond("FailureTarget")]},
        {},
        [(INVALID, "status.conditions")],
    ),
    (
        "invalid addition of FailureTarget=True when Complete=True",
        {},
        {"startTime": NOW, "completionTime": NOW, "conditions": [cond("Complete")]},
        {"startTime": NOW, "completionTime": NOW, "conditions": [cond("Complete"), cond("FailureTarget")]},
        [(INVALID, "status.conditions")],
    ),
    (
        "invalid attempt setting of CompletionTime when there is no Complete condition",
        {},
        {},
        {"completionTime": NOW},
        [(INVALID, "status.completionTime")],
    ),
    (
        "invalid CompletionTime when there is no Complete condition, but allowed",
        {},
        {"completionTime": NOW},
        {"completionTime": NOW, "active": 1},
        [],
    ),
    (
        "invalid attempt setting CompletedIndexes when non-indexed completion mode is used",
        {"completions": 5, "completionMode": "NonIndexed"},
        {},
        {"startTime": NOW, "completedIndexes": "0"},
        [(INVALID, "status.completedIndexes")],
    ),
    (
        "invalid because CompletedIndexes set when non-indexed completion mode is used; but allowed",
        {"completions": 5, "completionMode": "NonIndexed"},
        {"completedIndexes": "0"},
        {"completedIndexes": "0", "active": 1},
        [],
    ),
    (
        "invalid attempt setting FailedIndexes when not backoffLimitPerIndex",
        {"completions": 5, "completionMode": "Indexed"},
        {},
        {"failedIndexes": "0"},
        [(INVALID, "status.failedIndexes")],
    ),
    (
        "invalid attempt to decrease the failed counter",
        {"completions": 5},
        {"failed": 3},
        {"failed": 1},
        [(INVALID, "status.failed")],
    ),
    (
        "invalid attempt to decrease the succeeded counter",
        {"completions": 5},
        {"succeeded": 3},
        {"succeeded": 1},
        [(INVALID, "status.succeeded")],
    ),
    (
        "invalid attempt to set bad format for CompletedIndexes",
        {"completions": 5, "completionMode": "Indexed"},
        {},
        {"completedIndexes": "invalid format"},
        [(INVALID, "status.completedIndexes")],
    ),
    (
        "invalid format for CompletedIndexes, but allowed",
        {"completions": 5, "completionMode": "Indexed"},
        {"completedIndexes": "invalid format"},
        {"completedIndexes": "invalid format", "active": 1},
        [],
    ),
    (
        "invalid attempt to set bad format for FailedIndexes",
        {"completions": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1},
        {},
        {"failedIndexes": "invalid format"},
        [(INVALID, "status.failedIndexes")],
    ),
    (
        "invalid format for FailedIndexes, but allowed",
        {"completions": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1},
        {"failedIndexes": "invalid format"},
        {"failedIndexes": "invalid format", "active": 1},
        [],
    ),
    (
        "more ready pods than active, but allowed",
        {"completions": 5},
        {"active": 1, "ready": 2},
        {"active": 1, "ready": 2, "succeeded": 1},
        [],
    ),
    (
        "invalid addition of both FailureTarget=True and Complete=True",
        {},
        {},
        {"startTime": NOW, "completionTime": NOW, "conditions": [cond("Complete"), cond("FailureTarget")]},
        [(INVALID, "status.conditions")] * 2,
    ),
    (
        "invalid failedIndexes, which overlap with completedIndexes",
        {"completions": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1},
        {"failedIndexes": "0,2", "completedIndexes": "3-4"},
        {"failedIndexes": "0,2", "completedIndexes": "2-4"},
        [(INVALID, "status.failedIndexes")],
    ),
    (
        "failedIndexes overlap with completedIndexes, unrelated field change",
        {"completions": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1},
        {"failedIndexes": "0,2", "completedIndexes": "2-4"},
        {"failedIndexes": "0,2", "completedIndexes": "2-4", "active": 1},
        [],
    ),
    (
        "valid addition of SuccessCriteriaMet when JobManagedBy is enabled",
        {},
        {},
        {"conditions": [cond("SuccessCriteriaMet")]},
        [],
    ),
    (
        "invalid attempt to set more ready pods than active",
        {"completions": 5},
        {},
        {"active": 1, "ready": 2},
        [(INVALID, "status.ready")],
    ),
    (
        "valid transition to Complete for suspended Job with completions=0; without startTime",
        {"completions": 0, "suspend": True},
        {},
        {"completionTime": NOW, "conditions": [cond("SuccessCriteriaMet"), cond("Complete")]},
        [],
    ),
]


@pytest.mark.parametrize(
    ("old_spec", "old_status", "new_status", "want"), [pytest.param(*r[1:], id=r[0]) for r in STATUS_ROWS]
)
def test_status_strategy_validate_update(old_spec: Any, old_status: Obj, new_status: Obj, want: list[Any]) -> None:
    if old_spec == "indexed+policy":
        old_spec = {"completionMode": "Indexed", "completions": 10, "successPolicy": SUCCESS_POLICY}

    async def body(service: ApiService) -> list[tuple[str, str]]:
        old = await stored(service, manual(**old_spec), status=old_status)
        new = copy.deepcopy(old)
        new["status"] = new_status
        try:
            await service.update(JOBS, "default", "myjob", new, subresource="status")
        except ApiError as exc:
            assert exc.code == 422, exc.message
            return causes(exc)
        return []

    assert run(body) == want


def test_a_suspended_job_with_zero_completions_completes() -> None:
    """What the row "valid transition to Complete for suspended Job with completions=0; without startTime" means
    for a user (kubernetes#132144): the Job controller's Complete write is accepted, so the Job finishes instead
    of retrying that write for ever."""
    job = job_body("zero", suspend=True, completions=0)
    job["metadata"]["namespace"] = "default"
    result = simulate(job, SimulationOptions(time_limit=60))
    assert (result.outcome, result.reason) == ("Complete", "CompletionsReached")


# ------------------------------------------------------------------------------------ WarningsOnCreate / OnUpdate

HIGH = (
    "spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, "
    "Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
)


async def _create_warnings(service: ApiService, body: Obj) -> list[str]:
    return (await service.create(JOBS, "default", body)).warnings


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param(job_body("myjob2", completionMode="NonIndexed"), [], id="happy path job"),
        # "my job2" is no DNS subdomain either, which validation refuses; a dotted name is one, and no label.
        pytest.param(
            job_body("my.job2", completionMode="NonIndexed"),
            [
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
                "a DNS label is recommended: [must not contain dots]"
            ],
            id="dns invalid name",
        ),
        # The row's parallelism 100001 is over the Indexed limit validation keeps; 10001 is enough to warn.
        pytest.param(
            job_body("myjob2", completionMode="Indexed", parallelism=10_001, completions=100_001),
            [HIGH],
            id="high completions and parallelism",
        ),
    ],
)
def test_warnings_on_create(body: Obj, want: list[str]) -> None:
    assert run(lambda service: _create_warnings(service, body)) == want


def test_warnings_on_create_force_validation_failure_in_pod_template() -> None:
    """WarningsOnUpdate "force validation failure in pod template": an imagePullSecret without a name is warned
    about (pkg/api/pod/warnings.go). The row updates the template of a running Job, which validation refuses; the
    warning is the same on create."""
    body = manual()
    body["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": ""}]
    assert run(lambda service: _create_warnings(service, body)) == [
        'spec.template.spec.imagePullSecrets[0].name: invalid empty name ""'
    ]


@pytest.mark.parametrize(
    ("old_spec", "change", "want"),
    [
        pytest.param({"parallelism": 1}, {}, [], id="generation 0 for both"),
        pytest.param(
            {"parallelism": 1},
            {"parallelism": 2},
            [],
            id="generation 1 for new; force WarningsOnUpdate to check PodTemplate for updates",
        ),
        pytest.param(
            {"completionMode": "Indexed", "completions": 100_001, "parallelism": 10_000},
            {"parallelism": 10_001},
            [HIGH],
            id="Invalid transition to high parallelism",
        ),
    ],
)
def test_warnings_on_update(old_spec: Obj, change: Obj, want: list[str]) -> None:
    def update(job: Obj) -> None:
        job["spec"].update(change)

    assert _update(old_spec, update)[2] == want


# ------------------------------------------------------------------------- Validate / ValidateUpdate (create and PUT)


def test_validate_manual_selector_do_not_generate_labels() -> None:
    """TestJobStrategy_Validate "manual selector; do not generate labels"."""
    job = run(lambda service: stored(service, manual(completions=2)))
    assert job["spec"]["template"]["metadata"]["labels"] == {"a": "b"}
    assert job["spec"]["selector"] == VALID_SELECTOR


def test_validate_a_volume_without_a_source_is_defaulted() -> None:
    """TestJobStrategy_Validate "fail validation due to invalid volume spec" ("must specify a volume type"): the
    internal object the row validates cannot come through batch/v1, whose defaulting makes a volume without a
    source an emptyDir (SetDefaults_Volume)."""
    body = manual()
    body["spec"]["template"]["spec"]["volumes"] = [{"name": "volume-name"}]
    job = run(lambda service: stored(service, body))
    assert job["spec"]["template"]["spec"]["volumes"] == [{"name": "volume-name", "emptyDir": {}}]


FAIL_INDEX = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]}


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {"podFailurePolicy": FAIL_INDEX},
            [(INVALID, "spec.podFailurePolicy.rules[0].action")],
            id="FailIndex action; when JobBackoffLimitPerIndex is enabled, but not used - validation error",
        ),
        pytest.param(
            {"podFailurePolicy": FAIL_INDEX, "completionMode": "Indexed", "completions": 2, "backoffLimitPerIndex": 1},
            [],
            id="FailIndex action; when JobBackoffLimitPerIndex is enabled and used - no error",
        ),
        pytest.param(
            {"completions": 2, "suspend": True, "ttlSecondsAfterFinished": 0, "completionMode": "Indexed"},
            [],
            id="valid job with extended configuration",
        ),
    ],
)
def test_validate(spec: Obj, want: list[Any]) -> None:
    body = manual(**spec)
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"

    async def create(service: ApiService) -> list[tuple[str, str]]:
        try:
            await service.create(JOBS, "default", body)
        except ApiError as exc:
            return causes(exc)
        return []

    assert run(create) == want


NODE_SELECTOR = {"nodeSelector": {"foo": "bar"}}

# (row, old spec, old status, change to the template's pod spec or the spec, want)
UPDATE_ROWS: list[Any] = [
    ("update parallelism", {"parallelism": 1}, None, {"parallelism": 2}, []),
    (
        "update completions disallowed",
        {"parallelism": 1, "completions": 1},
        None,
        {"completions": 2},
        [(INVALID, "spec.completions")],
    ),
    (
        "updating node selector for unsuspended job disallowed with MutablePodResourcesForSuspendedJobs disabled",
        {"parallelism": 1},
        None,
        NODE_SELECTOR,
        [(INVALID, "spec.template")],
    ),
    (
        "updating node selector for suspended but previously started job disallowed with "
        "MutablePodResourcesForSuspendedJobs disabled",
        {"parallelism": 1, "suspend": True},
        {"startTime": NOW},
        NODE_SELECTOR,
        [(INVALID, "spec.template")],
    ),
    (
        "updating node selector for suspended and not previously started job allowed with "
        "MutablePodResourcesForSuspendedJobs disabled",
        {"parallelism": 1, "suspend": True},
        None,
        NODE_SELECTOR,
        [],
    ),
    (
        "feature gate disabled - pod resource updates rejected",
        {"parallelism": 1, "suspend": True},
        {"conditions": [cond("Suspended")]},
        {"containers": [{"name": "abc", "image": "image", "resources": {"requests": {"cpu": "200m"}}}]},
        [(INVALID, "spec.template")],
    ),
    (
        "feature gate disabled - scheduling directives update allowed for suspended job never started",
        {"parallelism": 1, "suspend": True},
        {"conditions": [cond("Suspended")]},
        {"nodeSelector": {"key": "value"}},
        [],
    ),
    (
        "feature gate disabled - scheduling directives update rejected for unsuspended Job",
        {"parallelism": 1, "suspend": True},
        {"active": 1, "startTime": NOW},
        {"nodeSelector": {"key": "value"}},
        [(INVALID, "spec.template")],
    ),
    (
        "feature gate disabled - scheduling directives update rejected for suspended Job which was running in the past",
        {"parallelism": 1, "suspend": True},
        {"startTime": NOW, "conditions": [cond("Suspended")]},
        {"nodeSelector": {"key": "value"}},
        [(INVALID, "spec.template")],
    ),
]


@pytest.mark.parametrize(
    ("old_spec", "old_status", "change", "want"), [pytest.param(*r[1:], id=r[0]) for r in UPDATE_ROWS]
)
def test_validate_update(old_spec: Obj, old_status: Obj | None, change: Obj, want: list[Any]) -> None:
    async def body(service: ApiService) -> list[tuple[str, str]]:
        old = await stored(service, manual(**old_spec), status=old_status)
        new = copy.deepcopy(old)
        for key, value in change.items():
            if key in ("parallelism", "completions"):
                new["spec"][key] = value
            elif key == "containers":
                new["spec"]["template"]["spec"]["containers"][0]["resources"] = value[0]["resources"]
            else:
                new["spec"]["template"]["spec"][key] = value
        try:
            await service.update(JOBS, "default", "myjob", new)
        except ApiError as exc:
            return causes(exc)
        return []

    assert run(body) == want


def test_validate_update_invalid_label_selector() -> None:
    """ "invalid label selector": a stored Job whose selector value is no longer valid may still be updated (its
    annotations here): the selector is only checked when it changes (validationOptionsForJob)."""

    async def body(service: ApiService) -> Obj:
        old = await stored(service, manual())
        old = copy.deepcopy(old)
        old["spec"]["selector"]["matchExpressions"] = [{"key": "key", "operator": "NotIn", "values": ["bad value"]}]
        old = await service.store.update(JOBS.store_key, old, expected_rv=old["metadata"]["resourceVersion"])
        new = copy.deepcopy(old)
        new["metadata"]["annotations"] = {"hello": "world"}
        return (await service.update(JOBS, "default", "myjob", new)).obj

    assert run(body)["metadata"]["annotations"] == {"hello": "world"}


@pytest.mark.parametrize(
    ("template", "want"),
    [
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "abc",
                            "image": "image",
                            "env": [
                                {"name": "A", "value": "1"},
                                {"name": "A", "value": "$(A)2"},
                                {"name": "A", "value": "3"},
                            ],
                        }
                    ]
                }
            },
            [
                'spec.template.spec.containers[0].env[2]: hides previous definition of "A", which may be dropped when '
                "using apply"
            ],
            id="env hiding an earlier entry",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "abc",
                            "image": "image",
                            "ports": [{"containerPort": 80}, {"containerPort": 80, "hostPort": 8080}],
                        }
                    ]
                }
            },
            [
                "spec.template.spec.containers[0].ports[1]: overlapping port definition with "
                "spec.template.spec.containers[0].ports[0]"
            ],
            id="overlapping ports",
        ),
        pytest.param(
            {
                "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/abc": "unconfined"}},
                "spec": {"containers": [{"name": "abc", "image": "image"}]},
            },
            [
                "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/abc]: deprecated "
                'since v1.30; use the "appArmorProfile" field instead'
            ],
            id="AppArmor annotation without the field",
        ),
    ],
)
def test_warnings_for_the_pod_template(template: Obj, want: list[str]) -> None:
    """`GetWarningsForPodTemplate` (pkg/api/pod/warnings.go), which WarningsForJobSpec adds for the template."""
    body = manual()
    body["spec"]["template"]["spec"]["containers"] = template["spec"]["containers"]
    if "metadata" in template:
        body["spec"]["template"]["metadata"].update(template["metadata"])
    assert run(lambda service: _create_warnings(service, body)) == want
