"""Warnings for accepted-but-questionable Jobs (Kubernetes' `Warning:` response headers)."""

from __future__ import annotations

import copy

from kjobs.api.validation import validate_job
from kjobs.api.validation_warnings import warnings_for_job
from tests.api.job_fixtures import api_job, template_spec


def test_plain_job_has_no_warnings() -> None:
    assert warnings_for_job(api_job()) == []


def test_dotted_name_is_accepted_with_a_warning() -> None:
    job = api_job(name="my.job")
    assert validate_job(job) == []
    assert warnings_for_job(job) == [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS "
        "label is recommended: [must not contain dots]"
    ]


def test_negative_grace_period_is_accepted_with_a_warning() -> None:
    job = api_job()
    template_spec(job)["terminationGracePeriodSeconds"] = -5
    assert validate_job(job) == []
    assert warnings_for_job(job) == [
        "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be "
        "treated as 1"
    ]


def test_huge_indexed_job_warns_and_update_warns_only_on_spec_change() -> None:
    job = api_job(completionMode="Indexed", completions=200_000, parallelism=20_000, backoffLimitPerIndex=1,
                  maxFailedIndexes=10)  # fmt: skip
    assert warnings_for_job(job)[0].startswith("spec: In Indexed Jobs with a number of completions higher than 10^5")
    assert warnings_for_job(job, copy.deepcopy(job)) == []
    changed = copy.deepcopy(job)
    changed["spec"]["parallelism"] = 20_001
    assert len(warnings_for_job(changed, job)) == 1
