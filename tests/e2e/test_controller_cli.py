"""`kjobs controller --kubeconfig`: the Job controller alone, against an API server reached over HTTP."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS, PODS
from kjobs.server import kubeconfig as kubeconfig_file
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import free_port, shared_pki

pytestmark = pytest.mark.e2e


def job(name: str, managed_by: str | None = None) -> Obj:
    spec: Obj = {
        "parallelism": 2,
        "completions": 2,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
    }
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize("managed_by", [None, "kjobs.io/job-controller"])
def test_job_controller_alone_over_http(tmp_path: Path, managed_by: str | None) -> None:
    store = MemoryStore()
    port = free_port()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig"
        kubeconfig_file.write(config, url, pki=shared_pki())
        args = [sys.executable, "-m", "kjobs", "controller", "--kubeconfig", str(config), "--metrics-port", str(port)]
        if managed_by is not None:
            args += ["--managed-by", managed_by]
        proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env={**os.environ, "HOME": str(tmp_path)})
        try:
            asyncio.run(_scenario(config, managed_by))
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
                lines = response.read().decode().splitlines()
        finally:
            proc.terminate()
            proc.wait(20)
        assert proc.returncode == 0
    # addJob's count, in kube-controller-manager's text: the Job another controller manages, once
    assert (
        "# HELP job_controller_jobs_by_external_controller_total [ALPHA] The number of Jobs managed by an external "
        "controller" in lines
    )
    assert 'job_controller_jobs_by_external_controller_total{controller_name="example.com/other-controller"} 1' in lines


def test_a_controller_impersonating_a_user_without_rights_is_forbidden_and_stops_on_sigterm(tmp_path: Path) -> None:
    """A kubeconfig user's `as` is honoured as client-go honours it: the controller acts as that user, whom the API
    server forbids to list Jobs; it says so, retrying, and SIGTERM still stops it though it never started."""
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig"
        kubeconfig_file.write(config, url, pki=shared_pki())
        document = yaml.safe_load(config.read_text())
        document["users"][0]["user"]["as"] = "jane"
        config.write_text(yaml.safe_dump(document))
        args = [sys.executable, "-m", "kjobs", "controller", "--kubeconfig", str(config), "--no-leader-elect"]
        proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env={**os.environ, "HOME": str(tmp_path)})
        try:
            forbidden = (
                'watch jobs failed: jobs.batch is forbidden: User "jane" cannot list resource "jobs" in API group '
                '"batch" at the cluster scope'
            )
            reader = concurrent.futures.ThreadPoolExecutor(1).submit(_line, proc, forbidden)
            reader.result(timeout=30)  # a controller acting as the admin would never print it
            proc.terminate()
            assert proc.wait(20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(20)


async def _scenario(config: Path, managed_by: str | None) -> None:
    client = HttpClient(load(config))
    try:
        mine = await client.create(JOBS, "default", job("mine", managed_by))
        other = await client.create(JOBS, "default", job("theirs", "example.com/other-controller"))
        deadline = time.monotonic() + 30
        while True:
            pods, _ = await client.list(PODS, "default")
            owners = {ref["name"] for p in pods for ref in p["metadata"].get("ownerReferences") or ()}
            status = (await client.get(JOBS, "default", "mine")).get("status") or {}
            if status.get("active") == 2 and len(pods) == 2:
                break
            assert time.monotonic() < deadline, f"controller did not create the pods: {status} {owners}"
            await asyncio.sleep(0.05)
        assert owners == {"mine"}
        assert mine["metadata"]["uid"] != other["metadata"]["uid"]
        untouched = await client.get(JOBS, "default", "theirs")
        assert not (untouched.get("status") or {}).get("active")
        assert not (untouched.get("status") or {}).get("startTime")
    finally:
        await client.close()


def _line(proc: subprocess.Popen[str], wanted: str) -> str:
    """Read `proc`'s stderr until a line containing `wanted` (bounded by the caller's test timeout)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if wanted in line:
            return line
    raise AssertionError(f"{wanted!r} never printed (exit {proc.wait()})")


def test_a_second_job_controller_waits_for_the_first_and_takes_over_when_it_stops(tmp_path: Path) -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig"
        kubeconfig_file.write(config, url, pki=shared_pki())
        args = [sys.executable, "-m", "kjobs", "controller", "--kubeconfig", str(config)]
        args += ["--leader-elect-resource-namespace", "default"]  # any namespace the user may write Leases in
        env = {**os.environ, "HOME": str(tmp_path)}
        first = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
        second: subprocess.Popen[str] | None = None
        try:
            _line(first, "controller job: leading (lease default/kjobs-job)")
            second = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
            assert "is held by" in _line(second, "controller job: waiting")
            asyncio.run(_scenario(config, None))  # two pods: one controller created them
            first.terminate()  # a clean stop releases the lease: the second leads at its next try (2 s)
            assert first.wait(20) == 0
            started = time.monotonic()
            _line(second, "controller job: leading")
            assert time.monotonic() - started < 10
        finally:
            for proc in (first, second):
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    proc.wait(20)
