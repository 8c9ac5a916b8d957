"""Warnings Kubernetes returns (HTTP `Warning: 299` headers) for Jobs that are accepted but questionable.

Kubernetes accepts some values it does not like and says so instead of rejecting the request: a Job name that
is not a DNS label (it becomes part of pod names and hostnames), huge Indexed Jobs whose failed indexes may not
be trackable, a negative `terminationGracePeriodSeconds` (treated as 1), and `imagePullSecrets` with an empty
or repeated name. From the Job and CronJob strategies' `WarningsOnCreate`/`WarningsOnUpdate`
(pkg/registry/batch/job/strategy.go, pkg/registry/batch/cronjob/strategy.go) and `pkg/api/job/warnings.go`,
`pkg/api/pod/warnings.go`.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_dns1123_label

_COMPLETIONS_SOFT_LIMIT = 100_000
_PARALLELISM_SOFT_LIMIT = 10_000


def _dict(value: Any) -> Obj:
    return value if type(value) is dict else {}


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def warnings_for_job_spec(spec: Obj, *, path: str = "spec") -> list[str]:
    """`WarningsForJobSpec`: the Indexed-size warning and the pod template warnings kjobs knows."""
    warnings = []
    if spec.get("completionMode") == "Indexed":
        completions = _int(spec.get("completions"))
        parallelism = _int(spec.get("parallelism"))
        if completions > _COMPLETIONS_SOFT_LIMIT and parallelism > _PARALLELISM_SOFT_LIMIT:
            warnings.append(
                f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher "
                "than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
            )
    pod_spec = _dict(_dict(spec.get("template")).get("spec"))
    secrets = [_dict(item) for item in pod_spec.get("imagePullSecrets") or [] if type(item) is dict]
    seen: set[object] = set()
    for i, secret in enumerate(secrets):  # duplicates first, then empty names, as pod/warnings.go lists them
        name = secret.get("name") or ""
        if len(secrets) > 1 and name in seen:
            warnings.append(f'{path}.template.spec.imagePullSecrets[{i}].name: duplicate name "{name}"')
        seen.add(name)
    for i, secret in enumerate(secrets):
        if not secret.get("name"):
            warnings.append(f'{path}.template.spec.imagePullSecrets[{i}].name: invalid empty name ""')
    grace = pod_spec.get("terminationGracePeriodSeconds")
    if type(grace) is int and grace < 0:
        warnings.append(
            f"{path}.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and "
            "will be treated as 1"
        )
    return warnings


def warnings_for_job(job: Obj, old: Obj | None = None) -> list[str]:
    """The warnings for creating `job` (or, with `old`, for updating it: only when the spec changed)."""
    if type(job) is not dict:
        return []
    spec = _dict(job.get("spec"))
    if old is not None:
        if spec == _dict(_dict(old).get("spec")):
            return []
        return warnings_for_job_spec(spec)
    warnings = []
    name = _dict(job.get("metadata")).get("name")
    if type(name) is str:
        msgs = is_dns1123_label(name)
        if msgs:
            warnings.append(
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
                f"a DNS label is recommended: [{' '.join(msgs)}]"
            )
    return warnings + warnings_for_job_spec(spec)


_TZ_IN_SCHEDULE = (
    "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)
"""`cronJobStrategy.WarningsOnUpdate`'s words, its field path (`spec.spec.schedule`) included."""


def warnings_for_cronjob(cronjob: Obj, old: Obj | None = None) -> list[str]:
    """The CronJob strategy's warnings: on create, a name that is not a DNS label and the Job template's spec;
    on update, the template's spec when the generation moved (the spec changed) and a `TZ=` schedule (one an old
    CronJob may keep; a new one is refused)."""
    if type(cronjob) is not dict:
        return []
    spec = _dict(cronjob.get("spec"))
    template_spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
    path = "spec.jobTemplate.spec"
    if old is None:
        warnings = []
        name = _dict(cronjob.get("metadata")).get("name")
        if type(name) is str:
            msgs = is_dns1123_label(name)
            if msgs:
                warnings.append(
                    "metadata.name: this is used in Pod names and hostnames, which can result in surprising "
                    f"behavior; a DNS label is recommended: [{' '.join(msgs)}]"
                )
        return warnings + warnings_for_job_spec(template_spec, path=path)
    warnings = []
    if _dict(cronjob.get("metadata")).get("generation") != _dict(_dict(old).get("metadata")).get("generation"):
        warnings = warnings_for_job_spec(template_spec, path=path)
    schedule = spec.get("schedule")
    if type(schedule) is str and "TZ" in schedule:
        warnings.append(_TZ_IN_SCHEDULE)
    return warnings
