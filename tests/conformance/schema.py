"""The corpus format (`tests/conformance/corpus/README.md`) as closed key sets: a case, step, selector or option
the harness does not know fails the run loudly instead of being skipped or half-read.

A kept-back case may use any op, key or kind the README defines, including ones no shared case uses yet; these
tables list every one of them, and `check_case` is called before a case runs.
"""

from __future__ import annotations

from typing import Any

FILE_KEYS = {"set", "part", "formatVersion", "seed", "count", "cases"}
COMMON_KEYS = {"name", "source", "notes", "derived", "extensions", "set"}
CASE_KEYS = {
    "policy": COMMON_KEYS | {"job", "pod", "expect", "jobIsApiValid"},
    "validation": COMMON_KEYS
    | {
        "operation",
        "oldJob",
        "job",
        "validationOptions",
        "expect",
        "expectWithoutDefaulting",
        "nameIsNotTheRenderedError",
    },
    "scenarios": COMMON_KEYS | {"kind", "env", "applyDefaults", "job", "steps"},
}
SOURCE_KEYS = {"repo", "path", "commit", "test", "entry"}
POLICY_EXPECT_KEYS = {"action", "countFailed", "message"}
VALIDATION_EXPECT_KEYS = {"valid", "errors"}
ERROR_KEYS = {"field", "type", "detail", "badValue"}
# The README's six plus the rest of apimachinery's field.ErrorType (a held-back row may pin e.g. TooLong).
ERROR_TYPES = {
    "FieldValueTooLong",
    "FieldValueNotFound",
    "FieldValueTypeInvalid",
    "InternalError",
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueNotSupported",
    "FieldValueDuplicate",
    "FieldValueTooMany",
    "FieldValueForbidden",
}
# `requirePrefixedLabels` is the README's option; the update options are upstream `JobValidationOptions` fields an
# update row may pin (`ValidateJobUpdate` does not read `RequirePrefixedLabels`: only `ValidateJob` does).
VALIDATION_OPTIONS = {
    "create": {"requirePrefixedLabels"},
    "update": {"requirePrefixedLabels", "allowMutableSchedulingDirectives", "allowElasticIndexedJobs"},
}
KINDS = {"controller-sync", "tracking", "integration"}
ENV_KEYS = {"now", "podFailureBackoff", "maxPodFailureBackoff", "maxUncountedPods", "maxPodCreateDeletePerSync"}
SELECTOR_KEYS = {"nonTerminal", "terminating", "index", "all", "count", "ordinal", "alias"}

_EXPECT_JOB = {"status", "exact", "startTimeSet", "hasConditions", "conditionStatus"}
UNIT_STEPS: dict[str, set[str]] = {
    "seedPods": {"pods"},
    "seedBackoffRecord": {"failuresAfterLastSuccess", "lastFailureTime"},
    "seedExpectations": {"creations", "deletions"},
    "sync": set(),
    "trackStatusAndRemoveFinalizers": {"finishedCondition", "expectedRmFinalizers", "needsFlush", "inject"},
    "expectActions": {"creations", "deletions", "finalizerRemovals", "createdIndexes"},
    "expectJob": _EXPECT_JOB,
    "expectStatusUpdates": {"updates"},
    "expectMetric": {"name", "values"},
    "expectEvent": {"reason", "reportingController"},
}
INTEGRATION_STEPS: dict[str, set[str]] = {
    "controller": {"action"},
    "setPodStatus": {"select", "status", "phase", "phaseOnly", "retryUntilSuccess"},
    "deletePods": {"select", "gracePeriodSeconds"},
    "updateJob": {"spec"},
    "waitPodFinalizerRemoved": {"select"},
    "expectJob": _EXPECT_JOB,
    "expectIndexedPods": {"activeIndexes", "completedIndexes", "failedIndexes"},
    "expectPods": {"select", "annotations", "count"},
    "expectNoTrackingFinalizers": set(),
    "expectBackoffDelays": {"select", "windows"},
    "expectMetric": {"name", "values"},
    "expectEvent": {"reason", "reportingController"},
    "waitActive": {"count"},
}
INJECT_KEYS = {"statusUpdateError", "podPatchError", "expectError"}
CONTROLLER_ACTIONS = {"stop", "start", "restart"}


class CorpusFormatError(AssertionError):
    """A case uses something the harness does not implement."""


def _only(where: str, got: Any, allowed: set[str]) -> None:
    if not isinstance(got, dict):
        raise CorpusFormatError(f"{where}: expected an object, got {got!r}")
    unknown = set(got) - allowed
    if unknown:
        raise CorpusFormatError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(allowed)})")


def check_file(data: dict[str, Any], part: str) -> None:
    """A corpus file's header: the known keys, format version 1, its part, and `count` = number of cases."""
    _only(f"{part}.json", data, FILE_KEYS)
    if data.get("formatVersion") != 1:
        raise CorpusFormatError(f"{part}.json: formatVersion {data.get('formatVersion')!r}, the harness reads 1")
    if "count" in data and data["count"] != len(data["cases"]):
        raise CorpusFormatError(f"{part}.json: count {data['count']} but {len(data['cases'])} cases")
    for case in data["cases"]:
        check_case(part, case)


def check_selector(where: str, sel: Any) -> None:
    _only(where, sel, SELECTOR_KEYS)
    count = sel.get("count")
    if count is not None and count != "all" and not (isinstance(count, int) and count >= 0):
        raise CorpusFormatError(f"{where}.count: {count!r}")


def check_step(kind: str, step: Any, where: str) -> None:
    """One step: an op of the case's kind with only that op's keys."""
    table = INTEGRATION_STEPS if kind == "integration" else UNIT_STEPS
    if not isinstance(step, dict) or "op" not in step:
        raise CorpusFormatError(f"{where}: a step needs an op: {step!r}")
    op = step["op"]
    if op not in table:
        other = "unit" if kind == "integration" else "integration"
        known_elsewhere = op in (UNIT_STEPS if kind == "integration" else INTEGRATION_STEPS)
        hint = f" (an {other}-kind op)" if known_elsewhere else ""
        raise CorpusFormatError(f"{where}: unknown step op {op!r} for kind {kind!r}{hint}")
    _only(f"{where} ({op})", step, table[op] | {"op"})
    for key in ("select",):
        if key in step:
            check_selector(f"{where}.select", step[key])
    if op == "setPodStatus":
        given = [k for k in ("status", "phase", "phaseOnly") if k in step]
        if len(given) != 1:
            raise CorpusFormatError(f"{where}: setPodStatus needs exactly one of status/phase/phaseOnly, got {given}")
    if op == "controller" and step.get("action") not in CONTROLLER_ACTIONS:
        raise CorpusFormatError(f"{where}: controller action {step.get('action')!r}")
    if op == "trackStatusAndRemoveFinalizers" and "inject" in step:
        _only(f"{where}.inject", step["inject"], INJECT_KEYS)
    if op == "expectEvent" and step.get("reportingController", "job-controller") != "job-controller":
        raise CorpusFormatError(f"{where}: events are reported by job-controller, not {step['reportingController']!r}")
    if op == "expectJob":
        if "conditionStatus" in step:
            _only(f"{where}.conditionStatus", step["conditionStatus"], {"type", "status"})
        for cond in step.get("hasConditions") or ():
            _only(f"{where}.hasConditions[]", cond, {"type", "status"})
        for cond in (step.get("status") or {}).get("conditions") or ():
            _only(f"{where}.status.conditions[]", cond, {"type", "status", "reason", "message"})


def check_case(part: str, case: Any) -> None:
    """Raise `CorpusFormatError` when `case` uses a key, op, kind or option the harness does not implement."""
    name = case.get("name") if isinstance(case, dict) else None
    where = f"{part} case {name!r}"
    _only(where, case, CASE_KEYS[part])
    if "source" in case:
        _only(f"{where}.source", case["source"], SOURCE_KEYS)
    if part == "policy":
        _only(f"{where}.expect", case["expect"], POLICY_EXPECT_KEYS)
    elif part == "validation":
        op = case.get("operation")
        if op not in VALIDATION_OPTIONS:
            raise CorpusFormatError(f"{where}: operation {op!r}")
        if op == "update" and "oldJob" not in case:
            raise CorpusFormatError(f"{where}: an update needs oldJob")
        _only(f"{where}.validationOptions", case.get("validationOptions") or {}, VALIDATION_OPTIONS[op])
        if op == "update" and "expectWithoutDefaulting" in case:
            raise CorpusFormatError(
                f"{where}: an update is validated without defaulting; expectWithoutDefaulting is only read for create"
            )
        for key in ("expect", "expectWithoutDefaulting"):
            if key in case:
                _only(f"{where}.{key}", case[key], VALIDATION_EXPECT_KEYS)
                for err in case[key]["errors"]:
                    _only(f"{where}.{key}.errors[]", err, ERROR_KEYS)
                    if err["type"] not in ERROR_TYPES:
                        raise CorpusFormatError(f"{where}: error type {err['type']!r}")
    else:
        kind = case.get("kind")
        if kind not in KINDS:
            raise CorpusFormatError(f"{where}: unknown kind {kind!r} (known: {sorted(KINDS)})")
        _only(f"{where}.env", case.get("env") or {}, ENV_KEYS)
        if kind == "integration" and case.get("applyDefaults") is False:
            raise CorpusFormatError(f"{where}: an integration Job is created through the API, which always defaults")
        for i, step in enumerate(case["steps"]):
            check_step(kind, step, f"{where} step {i}")
