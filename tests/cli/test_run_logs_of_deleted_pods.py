"""`kjobs run --logs` prints the log of a pod the Job controller deleted even when it gets to read it only after
the pod is gone from the API and its node has forgotten it.

The log of a finished pod is read by a task `kjobs run` starts when it sees the pod end. On a busy machine that
task ran after the Job controller had deleted the pod (a successPolicy met: the workers go) and the node agent,
seeing the pod gone, had removed its log files (as the kubelet's garbage collection does): the worker's log was
`(no log: container "main" in pod "..." is waiting to start: ContainerCreating)`. tests/cli/test_run_trial.py's
`test_logs_show_init_containers_and_pods_the_job_deleted` failed so about 1 run in 15 under load. Here the
interleaving is forced: each log is read only once its pod is deleted and forgotten by the node.
"""

from __future__ import annotations

import asyncio
import io
import re
import time
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.manifest import load_manifests
from kjobs.api.types import Obj
from kjobs.run import RunOptions

pytestmark = pytest.mark.e2e

TRIAL = Path(__file__).resolve().parent / "trial"


def test_the_logs_of_workers_read_after_they_were_deleted_and_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    import kjobs.run as run_module

    real = run_module._print_logs
    read_late: list[str] = []
    stuck: list[str] = []  # workers not deleted and forgotten in 30 s
    log_dirs: set[Path] = set()
    uids: list[str] = []

    async def print_once_gone(cluster: Any, pod: Obj, out: Any) -> None:
        meta = pod["metadata"]
        uids.append(meta["uid"])
        log_dirs.update(agent.runtime.log_dir for agent in cluster.agents)
        if pod["status"]["phase"] == "Failed":  # a worker the Job ended (the leader Succeeded: never deleted)
            node = next(agent for agent in cluster.agents if agent.name == pod["spec"]["nodeName"])
            deadline = time.monotonic() + 30
            while cluster.service.store.exists("pods", meta["namespace"], meta["name"]) or node.runtime.get(
                meta["uid"]
            ):
                if time.monotonic() > deadline:
                    stuck.append(meta["name"])
                    break
                await asyncio.sleep(0.02)
            else:
                read_late.append(meta["name"])
        await real(cluster, pod, out)

    monkeypatch.setattr(run_module, "_print_logs", print_once_gone)
    (manifest,) = load_manifests(str(TRIAL / "leader-success-policy.yaml"))
    out = io.StringIO()
    code = run_module.run(manifest, RunOptions(out=out, show_logs=True, backoff=0.2, timeout=60))
    text = out.getvalue()
    assert code == 0, text
    assert "  reason: SuccessPolicy\n" in text
    assert not stuck, stuck
    workers = read_late
    assert workers, text  # the forced interleaving happened
    assert "(no log:" not in text, text
    # A worker counts as Running once spawned: on a loaded machine one may be stopped before its `sh` echoed, so
    # the log of at least one is asserted, not of each.
    shown = [name for name in workers if re.search(rf"^\[{name}/main\] idx=\d ", text, flags=re.M)]
    assert shown, text
    # The files kept for the reader are removed once read (or as the run ends), as before.
    left = [path.name for directory in log_dirs for path in directory.iterdir() if path.name.startswith(tuple(uids))]
    assert not left, left
