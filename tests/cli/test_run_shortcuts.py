"""What `kjobs run` leaves out when nobody else can read its API (no `--serve`): `managedFields` and Events.
Nothing in the run reads them, so the user sees the same decisions, the same Job status and the same pods either
way (issue #15 item 4, as tests/simulate/test_shortcuts.py shows for `kjobs simulate`)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs.api.features import DEFAULT
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS
from kjobs.cluster import ClusterSettings
from kjobs.node.logsource import AgentLogs
from kjobs.run import _api
from kjobs.store import MemoryStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def job() -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}},
    }


@pytest.mark.parametrize("serving", [True, False])
def test_the_api_records_field_managers_and_events_only_when_served(serving: bool) -> None:
    asyncio.run(records_field_managers_and_events(serving))


async def records_field_managers_and_events(serving: bool) -> None:
    settings = ClusterSettings(field_managers=serving, events=serving, features=DEFAULT)
    store = MemoryStore()
    try:
        app, service = _api(store, AgentLogs(), settings)
        assert (app is not None) is serving
        await service.ensure_namespaces()
        created = await LocalClient(service, manager="kjobs-run", typed=False).create(JOBS, "default", job())
        assert bool(created["metadata"].get("managedFields")) is serving
        assert LocalClient(service, manager="job-controller").records_events is serving
    finally:
        store.close()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kjobs", "run", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.e2e
def test_a_run_decides_the_same_with_and_without_serving_its_api(tmp_path: Path) -> None:
    manifest = str(EXAMPLES / "failindex-per-index.yaml")
    plain = run(manifest, "--plain", "--backoff", "0.2")
    served = run(manifest, "--plain", "--backoff", "0.2", "--serve", "0", "--kubeconfig", str(tmp_path / "kc"))
    assert plain.returncode == served.returncode == 1, (plain.stderr, served.stderr)
    # The final summary (status, counts, indexes, every failure and its decision) is the same, word for word.
    # Pod names end in a random suffix, and pods of different indexes that fail at about the same time are listed
    # in the order their ends were seen (real processes): the only differences between two runs.
    summary = [re.sub(r"-[a-z0-9]{5} ", "-xxxxx ", r.stdout.split("\nJob default/", 1)[1]) for r in (plain, served)]
    assert sorted(summary[0].splitlines()) == sorted(summary[1].splitlines())
    assert "completedIndexes: 0-2,4  failedIndexes: 3,5" in summary[0]
    assert "(index 3) failed: container main exited with code 42 → FailIndex by rule 0" in summary[0]
