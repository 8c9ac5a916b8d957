"""What `kjobs run` leaves out when nobody else can read its API (no `--serve`): `managedFields` and Events.
Nothing in the run reads them, so the user sees the same decisions, the same Job status and the same pods either
way (issue #15 item 4, as tests/simulate/test_shortcuts.py shows for `kjobs simulate`)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.api.features import DEFAULT
from kjobs.api.manifest import load_manifests
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS
from kjobs.cluster import SERVER_GC_THRESHOLDS, ClusterSettings
from kjobs.node.logsource import AgentLogs
from kjobs.run import RunOptions, _api
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


def summary_of(out: str) -> list[str]:
    """A run's final summary, its lines sorted and pod names' random suffixes masked (see above)."""
    return sorted(re.sub(r"-[a-z0-9]{5} ", "-xxxxx ", out.split("\nJob default/", 1)[1]).splitlines())


@pytest.mark.e2e
def test_a_run_without_serving_collects_young_objects_sparsely_and_decides_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without `--serve` a run's young GC passes are few (`sparse_gc`): the same exit code and summary as with
    `tune_gc`'s thresholds alone, and the caller's thresholds are back afterwards."""
    import kjobs.run as run_module

    (manifest,) = load_manifests(str(EXAMPLES / "failindex-per-index.yaml"))
    seen: list[int] = []
    real = run_module.sparse_gc

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        with real():
            seen.append(gc.get_threshold()[0])
            yield

    before = gc.get_threshold()
    try:
        monkeypatch.setattr(run_module, "sparse_gc", watched)
        sparse = io.StringIO()
        sparse_code = run_module.run(manifest, RunOptions(out=sparse, backoff=0.2))
        assert seen == [1_000_000]
        assert gc.get_threshold() == SERVER_GC_THRESHOLDS  # `tune_gc`'s, as the run found them
        monkeypatch.setattr(run_module, "sparse_gc", contextlib.nullcontext)
        plain = io.StringIO()
        plain_code = run_module.run(manifest, RunOptions(out=plain, backoff=0.2))
    finally:
        gc.set_threshold(*before)
    assert sparse_code == plain_code == 1
    assert summary_of(sparse.getvalue()) == summary_of(plain.getvalue())
    assert "completedIndexes: 0-2,4  failedIndexes: 3,5" in sparse.getvalue()


def test_a_run_imports_the_http_application_only_to_serve() -> None:
    """The HTTP side's routes and tables (`kjobs.server.app`) are imported by `_api` only with `--serve`: a plain
    run starts without them."""
    script = "import sys, kjobs.run; print('kjobs.server.app' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
