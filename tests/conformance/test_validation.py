"""Conformance: every case of the shared `validation` corpus through defaulting and validation.

`create` cases are defaulted (batch/v1 + pod template defaults) and validated as the API server would; when a
case also records the raw upstream expectation (`expectWithoutDefaulting`), the undefaulted manifest is checked
against it too. `update` cases are validated as an update of `oldJob`, without defaulting. Error lists are
compared as multisets of (field, type, detail).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kjobs.api.defaults import default_job
from kjobs.api.errors import FieldError
from kjobs.api.validation import validate_job, validate_job_update
from tests.conformance.corpus import params
from tests.conformance.gates import FEATURES

# Upstream `JobValidationOptions` an update case may pin; absent ones take the registry's GA behaviour.
# `requirePrefixedLabels` is read only by `ValidateJob` (create), never by `ValidateJobUpdate`; `schema.py` rejects
# any other option key.
_UPDATE_OPTIONS = {
    "allowMutableSchedulingDirectives": "allow_mutable_scheduling_directives",
    "allowElasticIndexedJobs": "allow_elastic_indexed_jobs",
}


def _got(errors: list[FieldError]) -> Counter[tuple[str, str, str]]:
    return Counter((e.field, e.type.value, e.detail) for e in errors)


def _want(expect: dict[str, Any]) -> Counter[tuple[str, str, str]]:
    return Counter((e["field"], e["type"], e["detail"]) for e in expect["errors"])


def _check(errors: list[FieldError], expect: dict[str, Any]) -> None:
    assert _got(errors) == _want(expect), [str(e) for e in errors]
    assert (not errors) == expect["valid"]


@pytest.mark.parametrize("case", params("validation"))
def test_validation_case(case: dict[str, Any]) -> None:
    options = case.get("validationOptions") or {}
    if case["operation"] == "update":
        update_options = {_UPDATE_OPTIONS[k]: bool(v) for k, v in options.items() if k in _UPDATE_OPTIONS}
        errors = validate_job_update(case["job"], case["oldJob"], **update_options, features=FEATURES)
        _check(errors, case["expect"])
        return
    prefixed = bool(options.get("requirePrefixedLabels", False))
    defaulted = default_job(case["job"])
    _check(validate_job(defaulted, require_prefixed_labels=prefixed, features=FEATURES), case["expect"])
    if "expectWithoutDefaulting" in case:
        errors = validate_job(case["job"], require_prefixed_labels=prefixed, features=FEATURES)
        _check(errors, case["expectWithoutDefaulting"])
