"""Upstream's CronJob validation tables (pkg/apis/batch/validation/validation_test.go), ported row by row: what
kube-apiserver refuses in a CronJob on create and on update, with the exact field path, error type and detail.
Test ids are the upstream rows' names (docs/upstream-cronjob.md).

Upstream hands internal-API objects straight to `ValidateCronJobCreate` / `ValidateCronJobUpdate`, without
defaulting; the rows here do the same with `validate_cronjob` / `validate_cronjob_update`, the functions the API's
create and update run after defaulting. A few rows also go end to end through the in-process API, which answers
with the same errors as a 422 `Status`.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.errors import ApiError, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation_cronjob import validate_cronjob, validate_cronjob_update
from kjobs.client.resources import CRONJOBS
from kjobs.clock import FakeClock
from tests.support import local_api

NEGATIVE = "must be greater than or equal to 0"
OMIT: Any = object()
"""A field the row leaves unset (Go's zero value: an empty string or a nil pointer)."""


def container(name: str) -> Obj:
    """`podtest.MakeContainer`: the fields defaulting would fill, filled."""
    return {
        "name": name,
        "image": "image",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
        "terminationMessagePath": "/dev/termination-log",
    }


def pod_spec(restart_policy: str, *, init: bool = False) -> Obj:
    """`podtest.MakePod(...).Spec` with the row's restart policy, container `abc` and, for the generated-selector
    template, init container `def`."""
    spec: Obj = {
        "containers": [container("abc")],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": restart_policy,
        "terminationGracePeriodSeconds": 30,
    }
    if init:
        spec["initContainers"] = [container("def")]
    return spec


VALID_TEMPLATE: Obj = {"metadata": {"labels": {}}, "spec": pod_spec("OnFailure", init=True)}
"""`getValidPodTemplateSpecForGenerated` with its labels emptied, as the CronJob tests use it."""

HOSTNET_TEMPLATE: Obj = copy.deepcopy(VALID_TEMPLATE)
HOSTNET_TEMPLATE["spec"]["hostNetwork"] = True
HOSTNET_TEMPLATE["spec"]["containers"][0]["ports"] = [{"containerPort": 12345, "protocol": "TCP"}]
# the labels of getValidPodTemplateSpecForGenerated are kept here: upstream does not empty them for this template
HOSTNET_TEMPLATE["metadata"]["labels"] = {
    "batch.kubernetes.io/controller-uid": "1a2b3c",
    "controller-uid": "1a2b3c",
    "batch.kubernetes.io/job-name": "myjob",
    "job-name": "myjob",
}

MANUAL_SELECTOR: Obj = {"matchLabels": {"a": "b"}}
LONG_NAME = "10000000002000000000300000000040000000005000000000123"


def cronjob(
    *,
    name: str = "mycronjob",
    schedule: str = "* * * * ?",
    concurrency_policy: Any = "Allow",
    template: Obj | None = None,
    job: Obj | None = None,
    **spec: Any,
) -> Obj:
    """A CronJob as upstream's rows build it: `default` namespace, uid `1a2b3c`; `job` adds Job-spec fields."""
    job_spec: Obj = {"template": copy.deepcopy(template if template is not None else VALID_TEMPLATE)}
    job_spec.update(job or {})
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default", "uid": "1a2b3c"},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": job_spec}},
    }
    if concurrency_policy is not OMIT:
        body["spec"]["concurrencyPolicy"] = concurrency_policy
    body["spec"].update(spec)
    return body


def rendered(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


# ---------------------------------------------------------------------------------------------- TestValidateCronJob

VALIDATE_CRONJOB_ROWS: list[tuple[str, Obj, list[str]]] = [
    # successCases
    ("basic scheduled job", cronjob(), []),
    ("hostnet job", cronjob(template=HOSTNET_TEMPLATE), []),
    ("non-standard scheduled", cronjob(schedule="@hourly"), []),
    ("correct timeZone value", cronjob(schedule="0 * * * *", timeZone="Europe/Rome"), []),
    # errorCases
    (
        "spec.schedule: Invalid value",
        cronjob(schedule="error"),
        ['spec.schedule: Invalid value: "error": expected exactly 5 fields, found 1: [error]'],
    ),
    ("spec.schedule: Required value", cronjob(schedule=""), ["spec.schedule: Required value"]),
    (
        "spec.timeZone: timeZone must be nil or non-empty string",
        cronjob(schedule="0 * * * *", timeZone=""),
        ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'],
    ),
    (
        "spec.timeZone: timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        cronjob(schedule="0 * * * *", timeZone="LOCAL"),
        [
            'spec.timeZone: Invalid value: "LOCAL": timeZone must be an explicit time zone as defined in '
            "https://www.iana.org/time-zones",
            # then time.LoadLocation("LOCAL"): only "Local" itself names the machine's zone
            'spec.timeZone: Invalid value: "LOCAL": unknown time zone LOCAL',
        ],
    ),
    # The next four rows' names still say Continent/Zone; their zones have been Europe/Rome since upstream made the
    # test load real zones.
    (
        'spec.timeZone: Invalid value: " Continent/Zone": unknown time zone  Continent/Zone',
        cronjob(schedule="0 * * * *", timeZone=" Europe/Rome"),
        ['spec.timeZone: Invalid value: " Europe/Rome": unknown time zone  Europe/Rome'],
    ),
    (
        'spec.timeZone: Invalid value: "Continent/InvalidZone": unknown time zone  Continent/InvalidZone',
        cronjob(schedule="0 * * * *", timeZone="Europe/InvalidRome"),
        ['spec.timeZone: Invalid value: "Europe/InvalidRome": unknown time zone Europe/InvalidRome'],
    ),
    (
        'spec.timeZone: Invalid value: " ": unknown time zone  ',
        cronjob(schedule="0 * * * *", timeZone=" "),
        ['spec.timeZone: Invalid value: " ": unknown time zone  '],
    ),
    (
        'spec.timeZone: Invalid value: "Continent/Zone ": unknown time zone Continent/Zone ',
        cronjob(schedule="0 * * * *", timeZone="Europe/Rome "),
        ['spec.timeZone: Invalid value: "Europe/Rome ": unknown time zone Europe/Rome '],
    ),
    (
        "spec.startingDeadlineSeconds:must be greater than or equal to 0",
        cronjob(startingDeadlineSeconds=-1),
        [f"spec.startingDeadlineSeconds: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        "spec.successfulJobsHistoryLimit: must be greater than or equal to 0",
        cronjob(successfulJobsHistoryLimit=-1),
        [f"spec.successfulJobsHistoryLimit: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        "spec.failedJobsHistoryLimit: must be greater than or equal to 0",
        cronjob(failedJobsHistoryLimit=-1),
        [f"spec.failedJobsHistoryLimit: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        "spec.concurrencyPolicy: Required value",
        cronjob(concurrency_policy=OMIT),
        ["spec.concurrencyPolicy: Required value"],
    ),
    (
        "spec.jobTemplate.spec.parallelism:must be greater than or equal to 0",
        cronjob(job={"parallelism": -1}),
        [f"spec.jobTemplate.spec.parallelism: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        "spec.jobTemplate.spec.completions:must be greater than or equal to 0",
        cronjob(job={"completions": -1}),
        [f"spec.jobTemplate.spec.completions: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        "spec.jobTemplate.spec.activeDeadlineSeconds:must be greater than or equal to 0",
        cronjob(job={"activeDeadlineSeconds": -1}),
        [f"spec.jobTemplate.spec.activeDeadlineSeconds: Invalid value: -1: {NEGATIVE}"],
    ),
    (
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
        cronjob(job={"selector": MANUAL_SELECTOR}),
        ['spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated'],
    ),
    (
        "metadata.name: must be no more than 52 characters",
        cronjob(name=LONG_NAME),
        [f'metadata.name: Invalid value: "{LONG_NAME}": must be no more than 52 characters'],
    ),
    (
        "spec.jobTemplate.spec.manualSelector: Unsupported value",
        cronjob(job={"manualSelector": True}),
        ['spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"'],
    ),
    (
        "spec.jobTemplate.spec.template.spec.restartPolicy: Required value",
        cronjob(template={"spec": pod_spec("Always")}),
        ['spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ),
    (
        "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value",
        cronjob(template={"spec": pod_spec("Invalid")}),
        [
            # the pod template's own check (validateRestartPolicy), then the Job's (validateJobSpec)
            'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: '
            '"Always", "OnFailure", "Never"',
            'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: '
            '"OnFailure", "Never"',
        ],
    ),
    (
        "spec.jobTemplate.spec.ttlSecondsAfterFinished:must be greater than or equal to 0",
        cronjob(job={"ttlSecondsAfterFinished": -1}),
        [f"spec.jobTemplate.spec.ttlSecondsAfterFinished: Invalid value: -1: {NEGATIVE}"],
    ),
]


@pytest.mark.parametrize(
    ("cj", "expected"), [pytest.param(cj, expected, id=name) for name, cj, expected in VALIDATE_CRONJOB_ROWS]
)
def test_validate_cronjob(request: pytest.FixtureRequest, cj: Obj, expected: list[str]) -> None:
    """TestValidateCronJob: each row on create and as an update from the same CronJob without `timeZone`. A
    success row passes both (the update a no-op); an error row fails both with the same first error, except that
    an update does not check the name's length, so that a CronJob created before that check can still change."""
    row = request.node.callspec.id
    errors = validate_cronjob(cj)
    assert rendered(errors) == expected
    if expected:  # upstream's own check: the first error's field, and the text after it in the row's name
        prefix, after = row.split(":")[:2]
        assert errors[0].field == prefix
        assert after in str(errors[0])

    old = copy.deepcopy(cj)
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    if expected:
        old["spec"].pop("timeZone", None)
        new["metadata"]["resourceVersion"] = "2"
    expected_on_update = [e for e in expected if not e.startswith("metadata.name:")]
    assert rendered(validate_cronjob_update(new, old)) == expected_on_update


# ------------------------------------------------------------------------------------- TestValidateCronJobScheduleTZ

TZ_SCHEDULE = "TZ=UTC 0 * * * *"
TZ_IN_SCHEDULE = (
    f'spec.schedule: Invalid value: "{TZ_SCHEDULE}": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'
)
BOTH_ZONES = (
    f'spec.schedule: Invalid value: "{TZ_SCHEDULE}": cannot use both timeZone field and TZ or CRON_TZ in schedule'
)


@pytest.mark.parametrize(
    ("schedule", "create_errors", "change", "update_errors"),
    [
        pytest.param(TZ_SCHEDULE, [TZ_IN_SCHEDULE], {"schedule": "0 * * * *"}, [], id="update removing TZ should work"),
        pytest.param(
            TZ_SCHEDULE, [TZ_IN_SCHEDULE], {"schedule": TZ_SCHEDULE}, [], id="update not modifying TZ should work"
        ),
        pytest.param(
            TZ_SCHEDULE,
            [TZ_IN_SCHEDULE],
            {"timeZone": "UTC"},
            [BOTH_ZONES],
            id="update not modifying TZ but adding .spec.timeZone should fail",
        ),
        pytest.param("0 * * * *", [], {"schedule": TZ_SCHEDULE}, [TZ_IN_SCHEDULE], id="update adding TZ should fail"),
    ],
)
def test_validate_cronjob_schedule_tz(
    schedule: str, create_errors: list[str], change: Obj, update_errors: list[str]
) -> None:
    """TestValidateCronJobScheduleTZ: a new schedule may not carry `TZ=`/`CRON_TZ=` (use `spec.timeZone`); one an
    old CronJob already has may stay, or go, but not together with a `timeZone`."""
    cj = cronjob(schedule=schedule)
    assert rendered(validate_cronjob(cj)) == create_errors

    old = copy.deepcopy(cj)
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(cj)
    new["metadata"]["resourceVersion"] = "2"
    new["spec"].update(change)
    assert rendered(validate_cronjob_update(new, old)) == update_errors


# -------------------------------------------------------------------------------------------- TestValidateCronJobSpec


@pytest.mark.parametrize(
    ("old_zone", "new_zone", "expected"),
    [
        pytest.param(None, None, [], id="no validation because timeZone is nil for old and new"),
        pytest.param(None, "America/New_York", [], id="check validation because timeZone is different for new"),
        pytest.param(
            None,
            "broken",
            ['spec.timeZone: Invalid value: "broken": unknown time zone broken'],
            id="check validation because timeZone is different for new and invalid",
        ),
        pytest.param("America/New_York", "America/Chicago", [], id="old timeZone and new timeZone are valid"),
        pytest.param(
            "America/New_York",
            "broken",
            ['spec.timeZone: Invalid value: "broken": unknown time zone broken'],
            id="old timeZone is valid, but new timeZone is invalid",
        ),
        pytest.param("broken", "broken", [], id="old timeZone and new timeZone are invalid, but unchanged"),
        pytest.param(
            "broken",
            "still broken",
            ['spec.timeZone: Invalid value: "still broken": unknown time zone still broken'],
            id="old timeZone and new timeZone are invalid, but different",
        ),
        pytest.param("broken", "America/New_York", [], id="old timeZone is invalid, but new timeZone is valid"),
    ],
)
def test_validate_cronjob_spec(old_zone: str | None, new_zone: str | None, expected: list[str]) -> None:
    """TestValidateCronJobSpec: on an update the time zone is checked only when it changes, so a CronJob stored
    with a zone this server does not know can still be updated. Upstream calls `validateCronJobSpec(new, old)`;
    kjobs' nearest public function is `validate_cronjob_update`, given two CronJobs with those specs."""
    old = cronjob(schedule="0 * * * *")
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    for cj, zone in ((old, old_zone), (new, new_zone)):
        if zone is not None:
            cj["spec"]["timeZone"] = zone
    assert rendered(validate_cronjob_update(new, old)) == expected


# ------------------------------------------------------------------------------------------------------ TestTimeZones

GO119_TIME_ZONES = [
    line.strip()
    for line in (Path(__file__).parent / "data" / "go119_time_zones.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


def test_time_zones() -> None:
    """TestTimeZones: every zone Go 1.19 knew (595 names, backward links such as `US/Eastern` and `Factory`
    included) is a valid `spec.timeZone`. Upstream embeds Go's zone data (`time/tzdata`); kjobs reads the
    system's or the `tzdata` package's through `zoneinfo`."""
    assert len(GO119_TIME_ZONES) == 595
    refused = {
        zone: rendered(errors)
        for zone in GO119_TIME_ZONES
        if (errors := validate_cronjob(cronjob(schedule="0 * * * *", timeZone=zone)))
    }
    assert refused == {}


# ------------------------------------------------------------------------------------------------ through the API


def api_body(cj: Obj) -> Obj:
    """A row's CronJob as a client sends it (the server gives the uid)."""
    body = copy.deepcopy(cj)
    del body["metadata"]["uid"]
    return body


@pytest.mark.parametrize(
    "row",
    [
        "spec.schedule: Invalid value",
        'spec.timeZone: Invalid value: "Continent/InvalidZone": unknown time zone  Continent/InvalidZone',
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
        "metadata.name: must be no more than 52 characters",
        "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value",
    ],
)
def test_a_create_the_rows_refuse_is_a_422_with_the_same_causes(row: str) -> None:
    """End to end: kube-apiserver answers a create these rows refuse with 422 Invalid, the errors as `causes`
    (reason = the error type, message without the field path) and, in the message, each distinct error once."""
    cj, expected = next((cj, expected) for name, cj, expected in VALIDATE_CRONJOB_ROWS if name == row)

    async def main() -> ApiError:
        client = await local_api(FakeClock())
        with pytest.raises(ApiError) as caught:
            await client.create(CRONJOBS, "default", api_body(cj))
        return caught.value

    error = asyncio.run(main())
    status = error.status()
    name = cj["metadata"]["name"]
    assert (status["code"], status["reason"]) == (422, "Invalid")
    summary = expected[0] if len(expected) == 1 else "[" + ", ".join(expected) + "]"
    assert status["message"] == f'CronJob.batch "{name}" is invalid: {summary}'
    assert status["details"]["kind"] == "CronJob"
    assert status["details"]["group"] == "batch"
    causes = [(c["field"], f"{c['field']}: {c['message']}") for c in status["details"]["causes"]]
    assert causes == [(e.split(": ")[0], e) for e in expected]
    reasons = {c["reason"] for c in status["details"]["causes"]}
    assert reasons <= {"FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported"}


def test_an_update_adding_tz_to_the_schedule_is_a_422() -> None:
    """End to end, "update adding TZ should fail": a stored CronJob's schedule cannot gain `TZ=`; one without may
    still be created and changed."""

    async def main() -> None:
        client = await local_api(FakeClock())
        created = await client.create(CRONJOBS, "default", api_body(cronjob(schedule="0 * * * *")))
        created["spec"]["schedule"] = TZ_SCHEDULE
        with pytest.raises(ApiError) as caught:
            await client.update(CRONJOBS, "default", created)
        status = caught.value.status()
        assert (status["code"], status["reason"]) == (422, "Invalid")
        assert status["details"]["causes"] == [
            {
                "reason": "FieldValueInvalid",
                "message": TZ_IN_SCHEDULE.removeprefix("spec.schedule: "),
                "field": "spec.schedule",
            }
        ]

    asyncio.run(main())
