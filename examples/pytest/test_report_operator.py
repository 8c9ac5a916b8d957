"""Tests of `report_operator`, written as its author would: the kjobs pytest plugin gives each test a real Job
cluster (pip install kjobs; nothing to configure). Run them with `pytest examples/pytest`, or against any
other cluster with `pytest examples/pytest --kjobs-kubeconfig PATH` (the virtual-time test is then skipped)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_operator import Outcome, run_report, start_report, wait_for_report

from kjobs.testing import KjobsCluster


def test_a_report_that_succeeds_is_published(kjobs_kubeconfig: str) -> None:
    # the operator reads $KUBECONFIG itself, which the fixture points at the test's cluster
    assert run_report("daily", "echo report ready") == Outcome("publish", "CompletionsReached", 0)


def test_bad_input_fails_the_job_at_once_and_is_rejected(kjobs_api_client: object) -> None:
    outcome = run_report("bad-input", "echo 'no such customer' >&2; exit 42", api=kjobs_api_client)
    assert outcome == Outcome("reject", "PodFailurePolicy", 1)  # one pod, no retry


def test_an_evicted_report_is_rerun_without_counting_a_failure(
    kjobs_cluster: KjobsCluster, kjobs_api_client: object, tmp_path: Path
) -> None:
    # the first pod runs until evicted, its replacement finishes (kjobs' pods share this machine's files)
    ran = tmp_path / "ran"
    start_report("evicted", f"[ -e {ran} ] && exit 0; touch {ran}; sleep 30", api=kjobs_api_client)
    kjobs_cluster.evict(kjobs_cluster.pod_of("evicted"))
    outcome = wait_for_report("evicted", api=kjobs_api_client)
    assert outcome == Outcome("publish", "CompletionsReached", 0)  # the disruption was ignored


@pytest.mark.kjobs(runtime="simulated")
def test_a_flaky_report_pages_after_its_retries_in_virtual_time(kjobs_api_client: object) -> None:
    # 10 s, 20 s of pod back-off between three attempts: no time at all in virtual time
    outcome = run_report("flaky", "exit 1", api=kjobs_api_client)
    assert outcome == Outcome("page", "BackoffLimitExceeded", 3)


@pytest.mark.kjobs(runtime="simulated")
def test_a_stuck_report_hits_its_deadline_in_virtual_time(kjobs_api_client: object) -> None:
    outcome = run_report("stuck", "sleep 3600", api=kjobs_api_client, deadline=600)
    assert outcome == Outcome("page", "DeadlineExceeded", 1)
