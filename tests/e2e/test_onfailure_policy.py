"""podFailurePolicy with `restartPolicy: OnFailure` and `maxRestartTimes`, end to end with real processes.

The container restarts in place (same pod, `restartCount`, `lastState`); the FailJob rule on exit 42 fails
the Job at the first termination with 42, while exit 1 was simply restarted (docs/onfailure-pod-failure-policy.md).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kjobs.api.features import FeatureGates
from kjobs.client.resources import EVENTS
from tests.e2e.support import Scenario, fast_settings, job_manifest, run, terminal_condition

pytestmark = pytest.mark.e2e

EXIT_1_THEN_42 = 'n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; [ "$n" -eq 1 ] && exit 1; exit 42'


def test_failjob_on_42_at_the_second_run_of_a_restarting_pod(tmp_path: Path) -> None:
    settings = dataclasses.replace(fast_settings(tmp_path, nodes=1), features=FeatureGates.parse("AllAlpha=true"))
    job = job_manifest(
        "onfailure-42",
        EXIT_1_THEN_42,
        template={"restartPolicy": "OnFailure", "maxRestartTimes": 3},
        backoffLimit=0,
        podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
    )

    async def scenario() -> None:
        async with Scenario(tmp_path, settings) as s:
            created = await s.create_job(job)
            finished = await s.finished(created)
            assert terminal_condition(finished)["type"] == "Failed"
            assert terminal_condition(finished)["reason"] == "PodFailurePolicy"
            assert (
                "failed with exit code 42 matching FailJob rule at index 0" in terminal_condition(finished)["message"]
            )
            assert finished["status"].get("failed") == 1
            pods = s.history.of_job(created)
            assert len(pods) == 1, "exit 1 was restarted in place, not by a new pod"
            uid = pods[0]["metadata"]["uid"]
            restarted = s.history.ever(
                uid,
                lambda p: any(
                    c.get("restartCount") == 1
                    and ((c.get("lastState") or {}).get("terminated") or {}).get("exitCode") == 1
                    for c in (p.get("status") or {}).get("containerStatuses") or ()
                ),
            )
            assert restarted
            events, _ = await s.client.list(EVENTS, "default")
            decisions = [e["message"] for e in events if e.get("reason") == "PodFailurePolicyFailJob"]
            assert decisions == [
                f"Pod {pods[0]['metadata']['name']} failed (exit main=42): rule 0 (FailJob): Job failed"
            ]

    run(scenario)
