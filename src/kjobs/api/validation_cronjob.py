"""CronJob validation, as `pkg/apis/batch/validation/validation.go` has it (`ValidateCronJobCreate`,
`ValidateCronJobUpdate`, `validateCronJobSpec`, `ValidateJobTemplateSpec`).

The schedule is checked by parsing it as the controller will (`kjobs.api.cron`, robfig/cron's `ParseStandard`,
whose message is the error's detail); the job template's spec is a Job spec (`validate_job_spec_fields`) whose
selector the controller generates, so none may be given.
"""

from __future__ import annotations

import re
from typing import Any

from kjobs.api import cron
from kjobs.api.errors import ErrorType, FieldError, Raw, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation import label_selector_json, validate_job_spec_fields
from kjobs.api.validation_access import Errors, get_int, get_obj, get_str, type_error
from kjobs.api.validation_meta import validate_nonnegative, validate_object_meta, validate_object_meta_update

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired

MAX_NAME_LENGTH = 52
"""63 (a DNS-1035 label) less the 11 characters of the `-<minutes>` suffix the controller gives each Job."""

CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")

_BOTH_ZONES = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
_TZ_IN_SCHEDULE = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
"""A time zone name's component (https://data.iana.org/time-zones/theory.html#naming, plus 0-9 and + for legacy
names), as `validTimeZoneCharacters`."""


def _validate_schedule(schedule: str, allow_tz: bool, time_zone: Any, path: str, errs: Errors) -> None:
    """`validateScheduleFormat`: parseable, and no `TZ=`/`CRON_TZ=` in a new schedule (use `timeZone`)."""
    try:
        cron.parse_standard(schedule)
    except cron.CronError as exc:
        errs.append(FieldError(path, Invalid, str(exc), schedule))
    if "TZ" in schedule:
        if allow_tz and time_zone is not None:
            errs.append(FieldError(path, Invalid, _BOTH_ZONES, schedule))
        elif not allow_tz:
            errs.append(FieldError(path, Invalid, _TZ_IN_SCHEDULE, schedule))


def _validate_time_zone(time_zone: str | None, path: str, errs: Errors) -> None:
    """`validateTimeZone`: nil, or an IANA zone name this machine knows (not `Local`)."""
    if time_zone is None:
        return
    if not time_zone:
        errs.append(FieldError(path, Invalid, "timeZone must be nil or non-empty string", time_zone))
        return
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.fullmatch(part):
            errs.append(FieldError(path, Invalid, f"unknown time zone {time_zone}", time_zone))
            return
    if time_zone.lower() == "local":
        errs.append(
            FieldError(
                path,
                Invalid,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                time_zone,
            )
        )
    try:
        cron.load_zone(time_zone)
    except cron.CronError as exc:
        errs.append(FieldError(path, Invalid, str(exc), time_zone))


def _validate_job_template(
    template: Obj | None, path: str, errs: Errors, features: FeatureGates, *, pod_spec_validated: bool = False
) -> None:
    """`ValidateJobTemplateSpec`: a Job spec without a selector (the controller generates one per Job);
    `pod_spec_validated`: an update keeps the stored pod spec (see `validate_pod_template_spec`)."""
    spec = get_obj(template, "spec", f"{path}.spec", errs) if template is not None else None
    spec = spec or {}
    validate_job_spec_fields(spec, f"{path}.spec", errs, features, template_spec_validated=pod_spec_validated)
    selector = spec.get("selector")
    if selector is not None:
        shown = Raw(label_selector_json(selector))
        errs.append(FieldError(f"{path}.spec.selector", Invalid, "`selector` will be auto-generated", shown))
    if spec.get("manualSelector") is True:
        errs.append(not_supported(f"{path}.spec.manualSelector", True, ("nil", "false")))


def _job_template_pod_spec(spec: Obj) -> Any:
    """`spec.jobTemplate.spec.template.spec`, or None where any level is missing or not an object."""
    value: Any = spec
    for key in ("jobTemplate", "spec", "template", "spec"):
        value = value.get(key) if type(value) is dict else None
    return value


def _validate_spec(spec: Obj, old_spec: Obj | None, errs: Errors, features: FeatureGates) -> None:
    """`validateCronJobSpec`, in its order; `old_spec` on an update."""
    schedule = get_str(spec, "schedule", "spec.schedule", errs)
    time_zone = get_str(spec, "timeZone", "spec.timeZone", errs)
    if not schedule:
        if schedule is not None or spec.get("schedule") is None:
            errs.append(FieldError("spec.schedule", Required))
    else:
        old_schedule = (old_spec or {}).get("schedule")
        allow_tz = isinstance(old_schedule, str) and "TZ" in old_schedule
        _validate_schedule(schedule, allow_tz, time_zone, "spec.schedule", errs)
    deadline = get_int(spec, "startingDeadlineSeconds", "spec.startingDeadlineSeconds", errs, bits=64)
    validate_nonnegative(deadline, "spec.startingDeadlineSeconds", errs)
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        _validate_time_zone(time_zone, "spec.timeZone", errs)
    policy = get_str(spec, "concurrencyPolicy", "spec.concurrencyPolicy", errs)
    if policy is not None or spec.get("concurrencyPolicy") is None:
        if not policy:
            errs.append(FieldError("spec.concurrencyPolicy", Required))
        elif policy not in CONCURRENCY_POLICIES:
            errs.append(not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    template = get_obj(spec, "jobTemplate", "spec.jobTemplate", errs)
    unchanged = old_spec is not None and _job_template_pod_spec(spec) == _job_template_pod_spec(old_spec)
    _validate_job_template(template or {}, "spec.jobTemplate", errs, features, pod_spec_validated=unchanged)
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        validate_nonnegative(get_int(spec, key, f"spec.{key}", errs), f"spec.{key}", errs)


def validate_cronjob(cronjob: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateCronJobCreate`: metadata, the spec, and a name short enough for its Jobs' names."""
    if type(cronjob) is not dict:
        return [type_error("", cronjob, "object")]
    meta = cronjob.get("metadata")
    errs: Errors = list(validate_object_meta(meta if meta is not None else {}, namespaced=True))
    spec = get_obj(cronjob, "spec", "spec", errs) or {}
    _validate_spec(spec, None, errs, features)
    name = (meta or {}).get("name") if type(meta) is dict else None
    if isinstance(name, str) and len(name.encode()) > MAX_NAME_LENGTH:  # Go's len: bytes
        errs.append(FieldError("metadata.name", Invalid, f"must be no more than {MAX_NAME_LENGTH} characters", name))
    return errs


def validate_cronjob_update(cronjob: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateCronJobUpdate`: metadata update rules and the spec against the old one (a `TZ=` schedule the
    old one had may stay; the time zone is checked only when it changes; no name-length check, so that an old
    CronJob with a longer name can still be updated)."""
    if type(cronjob) is not dict:
        return [type_error("", cronjob, "object")]
    old = old if type(old) is dict else {}
    meta = cronjob.get("metadata")
    old_meta = old.get("metadata")
    errs: Errors = list(
        validate_object_meta_update(meta if meta is not None else {}, old_meta if type(old_meta) is dict else {})
    )
    spec = get_obj(cronjob, "spec", "spec", errs) or {}
    old_spec = old.get("spec")
    _validate_spec(spec, old_spec if type(old_spec) is dict else {}, errs, features)
    return errs
