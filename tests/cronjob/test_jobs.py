"""A CronJob's Jobs: the Job made for a scheduled time, and which finished Jobs the history limits remove."""

from __future__ import annotations

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.cronjob.jobs import SCHEDULED_TIMESTAMP_ANNOTATION, job_from_template, job_name, jobs_over_history

SCHEDULED = parse_time("2024-05-01T10:00:00Z")


def cronjob(**spec: object) -> Obj:
    return {
        "metadata": {"name": "nightly", "namespace": "default", "uid": "cj-uid"},
        "spec": {
            "schedule": "0 * * * *",
            "jobTemplate": {
                "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                "spec": {"backoffLimit": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
            },
            **spec,
        },
    }


def test_the_job_for_a_scheduled_time() -> None:
    job = job_from_template(cronjob(), SCHEDULED)
    assert job_name("nightly", SCHEDULED) == "nightly-28575960"
    assert job["metadata"] == {
        "name": "nightly-28575960",
        "labels": {"team": "a"},
        "annotations": {"note": "x", SCHEDULED_TIMESTAMP_ANNOTATION: "2024-05-01T10:00:00Z"},
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": "nightly",
                "uid": "cj-uid",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert job["spec"]["backoffLimit"] == 2


def test_the_scheduled_timestamp_is_in_the_cronjobs_time_zone() -> None:
    job = job_from_template(cronjob(timeZone="Europe/Paris"), SCHEDULED)
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == "2024-05-01T12:00:00+02:00"


def finished(name: str, condition: str, start: str | None) -> Obj:
    status: Obj = {"conditions": [{"type": condition, "status": "True"}]}
    if start:
        status["startTime"] = start
    return {"metadata": {"name": name}, "status": status}


def test_history_limits_remove_the_oldest_finished_jobs() -> None:
    jobs = [
        finished("c3", "Complete", "2024-05-01T03:00:00Z"),
        finished("c1", "Complete", "2024-05-01T01:00:00Z"),
        finished("c2", "Complete", "2024-05-01T02:00:00Z"),
        finished("f1", "Failed", "2024-05-01T01:30:00Z"),
        finished("f0", "Failed", None),
        {"metadata": {"name": "running"}, "status": {}},
    ]
    doomed = jobs_over_history(cronjob(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1), jobs)
    assert [j["metadata"]["name"] for j in doomed] == ["c1", "c2", "f1"]
    assert jobs_over_history(cronjob(), jobs) == []
