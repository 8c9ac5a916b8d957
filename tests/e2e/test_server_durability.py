"""Durability of `kjobs up`: every object it acknowledged survives a kill -9, and revisions only grow."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS, PODS
from tests.support import free_port

pytestmark = pytest.mark.e2e


def _start(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kjobs",
            "up",
            "--nodes",
            "0",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "data"),
            "--kubeconfig",
            str(tmp_path / "kubeconfig"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("export KUBECONFIG="):
            return proc
    raise AssertionError("kjobs up did not become ready")


def _pod(i: int) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "labels": {"batch": "durability"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    }


def test_kill_9_loses_nothing_acknowledged(tmp_path: Path) -> None:
    port = free_port()
    server = _start(tmp_path, port)
    acknowledged: dict[str, str] = {}

    async def write_until_killed() -> None:
        client = HttpClient(load(tmp_path / "kubeconfig"))
        try:
            for i in range(400):
                created = await client.create(PODS, "default", _pod(i))
                acknowledged[created["metadata"]["name"]] = created["metadata"]["uid"]
                if i == 150:
                    server.send_signal(signal.SIGKILL)
        except Exception:
            pass  # the server died under us: only what was acknowledged counts
        finally:
            await client.close()

    asyncio.run(write_until_killed())
    server.wait(10)
    assert len(acknowledged) > 150
    last_rv = 0

    server = _start(tmp_path, port)
    try:

        async def check() -> None:
            nonlocal last_rv
            client = HttpClient(load(tmp_path / "kubeconfig"))
            try:
                pods, list_rv = await client.list(PODS, "default", label_selector="batch=durability")
                stored = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}
                missing = {name for name in acknowledged if stored.get(name) != acknowledged[name]}
                assert not missing, f"{len(missing)} acknowledged pods lost, e.g. {sorted(missing)[:5]}"
                last_rv = max(int(p["metadata"]["resourceVersion"]) for p in pods)
                assert int(list_rv) >= last_rv
                job = await client.create(
                    JOBS,
                    "default",
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "metadata": {"name": "after-restart"},
                        "spec": {
                            "template": {
                                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                            }
                        },
                    },
                )
                assert int(job["metadata"]["resourceVersion"]) > int(list_rv)
            finally:
                await client.close()

        asyncio.run(check())
    finally:
        server.terminate()
        server.wait(30)
