"""spec.managedBy: a Job controller reconciles exactly the Jobs it owns (unset managedBy = the built-in one)."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.names import JOB_CONTROLLER_NAME
from kjobs.job.config import SyncConfig
from kjobs.job.sync import plan_sync

NOW = 1_767_225_600.0


def job(managed_by: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": 1,
        "completions": 1,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
    }
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"metadata": {"name": "j", "namespace": "default", "uid": "u"}, "spec": spec}


@pytest.mark.parametrize(
    ("controller", "managed_by", "reconciled"),
    [
        (JOB_CONTROLLER_NAME, None, True),
        (JOB_CONTROLLER_NAME, JOB_CONTROLLER_NAME, True),
        (JOB_CONTROLLER_NAME, "kjobs.io/job-controller", False),
        ("kjobs.io/job-controller", None, False),
        ("kjobs.io/job-controller", "kjobs.io/job-controller", True),
    ],
)
def test_reconciles_only_its_own_jobs(controller: str, managed_by: str | None, reconciled: bool) -> None:
    plan = plan_sync(job(managed_by), [], now=NOW, config=SyncConfig(controller_name=controller))
    assert (plan.skip is None) == reconciled
    assert len(plan.creations) == (1 if reconciled else 0)
