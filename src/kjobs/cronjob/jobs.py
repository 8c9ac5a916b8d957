"""A CronJob's Jobs: the Job it creates for a scheduled time, and which finished ones its history limits remove
(`pkg/controller/cronjob`: `getJobFromTemplate2`, `getJobName`, `cleanupFinishedJobs`, `byJobStartTime`)."""

from __future__ import annotations

from datetime import datetime

from kjobs.api import cron
from kjobs.api.defaults import copy_json
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj

SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
"""`batchv1.CronJobScheduledTimestampAnnotation`: when the Job was due, in the CronJob's time zone (RFC 3339)."""


def job_name(cronjob_name: str, scheduled: float) -> str:
    """`getJobName`: the CronJob's name and the scheduled time in minutes since the epoch, so the Job for one
    scheduled time always has one name (a second create of it is AlreadyExists)."""
    return f"{cronjob_name}-{int(scheduled) // 60}"


def _rfc3339(moment: float, zone_name: str) -> str:
    """Go's `Format(time.RFC3339)` of a time in a zone: the layout's `Z07:00` writes `Z` for any zone whose offset
    is zero at that moment (London in winter too, not only UTC), else the offset."""
    stamp = datetime.fromtimestamp(int(moment), cron.load_zone(zone_name)).isoformat()
    return stamp[: -len("+00:00")] + "Z" if stamp.endswith("+00:00") else stamp


def job_from_template(cronjob: Obj, scheduled: float) -> Obj:
    """`getJobFromTemplate2`: the Job for `scheduled` — the template's labels, annotations and spec, the
    scheduled-timestamp annotation, and the CronJob as its controller."""
    meta = cronjob.get("metadata") or {}
    spec = cronjob.get("spec") or {}
    template = spec.get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    annotations = dict(template_meta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = _rfc3339(scheduled, str(spec.get("timeZone") or ""))
    job_meta: Obj = {
        "name": job_name(str(meta.get("name", "")), scheduled),
        "annotations": annotations,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": meta.get("name"),
                "uid": meta.get("uid"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    labels = template_meta.get("labels")
    if labels:
        job_meta["labels"] = dict(labels)
    spec_copy = copy_json(template.get("spec") or {})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": spec_copy}


def finished_condition(job: Obj) -> str | None:
    """`getFinishedStatus`: "Complete" or "Failed" when that condition is True, else None."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def _start_key(job: Obj) -> tuple[int, float, str]:
    """`byJobStartTime`: started Jobs by start time, then those never started; names break ties."""
    start = (job.get("status") or {}).get("startTime")
    name = str((job.get("metadata") or {}).get("name", ""))
    return (0, parse_time(str(start)), name) if start else (1, 0.0, name)


def jobs_over_history(cronjob: Obj, jobs: list[Obj]) -> list[Obj]:
    """`cleanupFinishedJobs`: the oldest finished Jobs beyond `successfulJobsHistoryLimit` (Complete) and
    `failedJobsHistoryLimit` (Failed), successful ones first; none when neither limit is set."""
    spec = cronjob.get("spec") or {}
    doomed: list[Obj] = []
    for condition, key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
        limit = spec.get(key)
        if not isinstance(limit, int):
            continue
        finished = sorted((j for j in jobs if finished_condition(j) == condition), key=_start_key)
        doomed.extend(finished[: max(0, len(finished) - limit)])
    return doomed


def controller_uid(job: Obj, cronjob_name: str) -> str | None:
    """The uid of the CronJob named `cronjob_name` that controls `job` (`getJobsToBeReconciled` matches the
    controller reference by name), else None."""
    for ref in (job.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") is True and ref.get("name") == cronjob_name:
            return str(ref.get("uid"))
    return None
