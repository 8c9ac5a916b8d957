"""Upstream's CronJob defaulting table (pkg/apis/batch/v1/defaults_test.go, TestSetDefaultCronJob), ported row by
row: the batch/v1 defaults kube-apiserver gives a CronJob when it decodes one. Test ids are the upstream rows'
names (docs/upstream-cronjob.md).

Upstream round-trips the object through the API scheme (encode, decode with defaulting, convert);
`default_cronjob_in_place` is what kjobs' API runs on a decoded CronJob before validation, and the rows also go
through an API create, whose answer shows the defaults.
"""

from __future__ import annotations

import asyncio
import copy

import pytest

from kjobs.api.defaults import default_cronjob_in_place
from kjobs.api.types import Obj
from kjobs.client.resources import CRONJOBS
from kjobs.clock import FakeClock
from tests.support import local_api

DEFAULTED = ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit", "failedJobsHistoryLimit")

ROWS = [
    pytest.param(
        {},
        {"concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1},
        id="empty batchv1.CronJob should default batchv1.ConcurrencyPolicy and Suspend",
    ),
    pytest.param(
        {"concurrencyPolicy": "Forbid", "suspend": True, "successfulJobsHistoryLimit": 5, "failedJobsHistoryLimit": 5},
        {"concurrencyPolicy": "Forbid", "suspend": True, "successfulJobsHistoryLimit": 5, "failedJobsHistoryLimit": 5},
        id="set fields should not be defaulted",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), ROWS)
def test_set_default_cronjob(spec: Obj, expected: Obj) -> None:
    """TestSetDefaultCronJob: `concurrencyPolicy: Allow`, `suspend: false` and history limits of 3 successful and
    1 failed Job (SetDefaults_CronJob, pkg/apis/batch/v1/defaults.go), each only where the CronJob has none."""
    cronjob: Obj = {"apiVersion": "batch/v1", "kind": "CronJob", "spec": copy.deepcopy(spec)} if spec else {}
    actual = default_cronjob_in_place(cronjob)
    assert {key: actual["spec"].get(key) for key in DEFAULTED} == expected


@pytest.mark.parametrize(("spec", "expected"), ROWS)
def test_set_default_cronjob_through_the_api(spec: Obj, expected: Obj) -> None:
    """The same rows as an API create answers them (with the schedule and Job template a create needs)."""
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "mycronjob"},
        "spec": {
            "schedule": "* * * * ?",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "abc", "image": "image"}]}
                    }
                }
            },
            **copy.deepcopy(spec),
        },
    }

    async def main() -> Obj:
        client = await local_api(FakeClock())
        return await client.create(CRONJOBS, "default", body)

    created = asyncio.run(main())
    assert {key: created["spec"].get(key) for key in DEFAULTED} == expected


def test_a_zero_value_is_defaulted_as_an_absent_one() -> None:
    """Go's defaulting tests the decoded field for its zero value, so `concurrencyPolicy: ""` and `null`s in a
    request are defaulted like absent fields (upstream's empty CronJob stands for all three: `omitempty`)."""
    cronjob: Obj = {
        "spec": {
            "concurrencyPolicy": "",
            "suspend": None,
            "successfulJobsHistoryLimit": None,
            "failedJobsHistoryLimit": None,
        }
    }
    actual = default_cronjob_in_place(cronjob)
    assert {key: actual["spec"][key] for key in DEFAULTED} == {
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }
