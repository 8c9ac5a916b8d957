"""CronJob defaulting and validation: what the API server answers for a CronJob manifest (Kubernetes' messages)."""

from __future__ import annotations

import copy

import pytest

from kjobs.api.defaults import default_cronjob_in_place
from kjobs.api.errors import FieldError
from kjobs.api.types import Obj
from kjobs.api.validation_cronjob import validate_cronjob, validate_cronjob_update

NEGATIVE = "must be greater than or equal to 0"


def cronjob(**spec: object) -> Obj:
    base: Obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default", "resourceVersion": "1"},
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}
                    }
                }
            },
        },
    }
    base["spec"].update(spec)
    return default_cronjob_in_place(base)


def rendered(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


def test_defaults_and_a_valid_cronjob() -> None:
    cj = cronjob()
    assert {k: cj["spec"][k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
    }
    assert cj["spec"]["failedJobsHistoryLimit"] == 1
    pod_spec = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert "backoffLimit" not in cj["spec"]["jobTemplate"]["spec"]  # the Jobs get the Job defaults
    assert validate_cronjob(cj) == []


def test_a_pod_template_without_restart_policy_is_refused_as_kubernetes_refuses_it() -> None:
    cj = cronjob()
    del cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"]
    cj = default_cronjob_in_place(cj)  # Always, as for any pod spec
    assert rendered(validate_cronjob(cj)) == [
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"schedule": ""}, ["spec.schedule: Required value"]),
        (
            {"schedule": "0 25 * * *"},
            ['spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25'],
        ),
        (
            {"schedule": "TZ=UTC 0 2 * * *"},
            [
                'spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": cannot use TZ or CRON_TZ in schedule, use '
                "timeZone field instead"
            ],
        ),
        ({"timeZone": ""}, ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']),
        (
            {"timeZone": "Mars/Olympus"},
            ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'],
        ),
        ({"timeZone": "../etc"}, ['spec.timeZone: Invalid value: "../etc": unknown time zone ../etc']),
        (
            {"timeZone": "Local"},
            [
                'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in '
                "https://www.iana.org/time-zones"
            ],
        ),
        ({"timeZone": "Europe/Paris"}, []),
        ({"startingDeadlineSeconds": -1}, [f"spec.startingDeadlineSeconds: Invalid value: -1: {NEGATIVE}"]),
        (
            {"concurrencyPolicy": "Sometimes"},
            ['spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'],
        ),
        ({"successfulJobsHistoryLimit": -1}, [f"spec.successfulJobsHistoryLimit: Invalid value: -1: {NEGATIVE}"]),
        ({"failedJobsHistoryLimit": 0}, []),
    ],
)
def test_spec_errors(spec: Obj, expected: list[str]) -> None:
    assert rendered(validate_cronjob(cronjob(**spec))) == expected


def test_the_job_template_is_a_job_spec_whose_selector_is_generated() -> None:
    cj = cronjob()
    job_spec = cj["spec"]["jobTemplate"]["spec"]
    job_spec.update(selector={"matchLabels": {"a": "b"}}, manualSelector=True, backoffLimit=-1)
    assert rendered(validate_cronjob(cj)) == [
        "spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
        'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"',
    ]


def test_a_name_longer_than_52_characters_is_refused_on_create_only() -> None:
    cj = cronjob()
    cj["metadata"]["name"] = "n" * 53
    assert rendered(validate_cronjob(cj)) == [
        f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters'
    ]
    assert validate_cronjob_update(cj, copy.deepcopy(cj)) == []


def test_an_update_keeps_an_old_tz_schedule_and_checks_the_zone_only_when_it_changes() -> None:
    old = cronjob(schedule="TZ=UTC 0 2 * * *")
    new = copy.deepcopy(old)
    assert validate_cronjob_update(new, old) == []
    new["spec"]["timeZone"] = "UTC"
    assert rendered(validate_cronjob_update(new, old)) == [
        'spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule'
    ]


def test_the_name_limit_counts_bytes_as_kube_apiserver_does() -> None:
    """`ValidateCronJobCreate` compares Go's `len(name)`, bytes: 27 `é` are 54 bytes, over the 52 a Job name's
    `-<minutes>` suffix leaves, so the create gets that error besides the DNS-subdomain one."""
    cj = cronjob()
    cj["metadata"]["name"] = "é" * 27
    assert [e.field for e in validate_cronjob(cj)] == ["metadata.name", "metadata.name"]
    assert (
        str(validate_cronjob(cj)[1])
        == f'metadata.name: Invalid value: "{"é" * 27}": must be no more than 52 characters'
    )
