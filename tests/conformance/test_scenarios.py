"""Conformance: Job controller scenarios (`scenarios.json`), unit kinds through the public sync functions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance import harness as H
from tests.conformance.corpus import params
from tests.conformance.schema import check_step


def _run_unit(case: dict[str, Any]) -> None:
    for i, step in enumerate(case["steps"]):
        check_step(case.get("kind", "controller-sync"), step, f"step {i}")
    sc = H.UnitScenario(case)
    for step in case["steps"]:
        op = step["op"]
        if op == "seedPods":
            sc.seed_pods(step["pods"])
        elif op == "seedBackoffRecord":
            H.seed_backoff(sc, step)
        elif op == "seedExpectations":
            sc.book.expect(sc.key, adds=int(step.get("creations", 0)), dels=int(step.get("deletions", 0)), now=sc.now)
        elif op == "sync":
            sc.sync()
        elif op == "trackStatusAndRemoveFinalizers":
            sc.track(step)
        elif op == "expectActions":
            pc = sc.pod_control
            if "creations" in step:
                assert len(pc.created) == step["creations"], "creations"
            if "deletions" in step:
                assert len(pc.deleted) == step["deletions"], "deletions"
            if "finalizerRemovals" in step:
                assert pc.finalizer_patches == step["finalizerRemovals"], "finalizerRemovals"
            if "createdIndexes" in step:
                H.check_created_indexes(sc, step["createdIndexes"])
        elif op == "expectJob":
            H.expect_job(sc, step)
        elif op == "expectStatusUpdates":
            H.expect_status_updates(sc, step["updates"])
        elif op == "expectMetric":
            H.expect_metric(sc, step)
        elif op == "expectEvent":
            H.expect_event(sc.events, step)
        else:
            raise AssertionError(f"unknown step op {op!r}")


@pytest.mark.parametrize("case", params("scenarios", kinds=("controller-sync", "tracking")))
def test_unit_scenario(case: dict[str, Any]) -> None:
    _run_unit(case)
