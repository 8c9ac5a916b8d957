"""A seeded simulation's /metrics text is the same with the tallied metrics (`kjobs.metrictally`) as with the form
they replaced (each count made on its prometheus_client series at once; `Direct` of
tests/controllers/test_metrictally.py): the text `kjobs up` would serve of the cluster's registries, at the end of
the run, twice (a second scrape adds nothing), with failures, retries and finalizer removals counted. The
`*_duration_seconds` histograms time the controllers' work in wall time, which differs from run to run: they are
left out."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.cluster import metric_registries
from kjobs.controllers import scheduler_metrics
from kjobs.job import metrics as job_metrics
from kjobs.server.exposition import exposition
from kjobs.simulate import SimulationOptions, parse_model, session, simulate
from tests.controllers.test_metrictally import Direct

JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "tally", "namespace": "default"},
    "spec": {
        "completionMode": "Indexed",
        "completions": 30,
        "parallelism": 8,
        "backoffLimitPerIndex": 2,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
    },
}
MODEL = {"containers": {"exitCodes": [{"code": 0, "weight": 0.7}, {"code": 1, "weight": 0.3}]}}


def without_durations(text: bytes) -> bytes:
    return b"".join(line for line in text.splitlines(keepends=True) if b"_duration_seconds" not in line)


def scrape_of_run(patch: pytest.MonkeyPatch) -> list[bytes]:
    """The exposition of the run's registries, twice, taken when the run has ended."""
    follow = session._follow
    texts: list[bytes] = []

    async def following(cluster: Any, *args: Any) -> Any:
        result = await follow(cluster, *args)
        for _ in range(2):
            texts.append(without_durations(exposition(metric_registries(cluster.controllers))))
        return result

    patch.setattr(session, "_follow", following)
    simulate(JOB, SimulationOptions(model=parse_model(MODEL), seed=7))
    return texts


def test_a_runs_exposition_is_the_direct_forms() -> None:
    with pytest.MonkeyPatch.context() as patch:
        tallied = scrape_of_run(patch)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler_metrics, "Deferred", Direct)
        patch.setattr(job_metrics, "Deferred", Direct)
        direct = scrape_of_run(patch)
    text = tallied[1]
    assert b"scheduler_schedule_attempts_total" in text
    # 44 pods (30 indexes, 14 retries), each bound at its first attempt and its finalizer removed
    assert b"\nscheduler_pod_scheduling_attempts_count 44\n" in text
    assert b'\njob_controller_terminated_pods_tracking_finalizer_total{event="delete"} 44\n' in text
    assert tallied == direct
