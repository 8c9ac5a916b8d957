"""A `kjobs up` node removes the working directories and logs of pods it no longer has, when it starts: a pod
deleted while no agent ran (or between its deletion and its `forget`, when `kjobs up` was killed) otherwise left
its files in the data directory for ever (the kubelet's `cleanupOrphanedPodDirs`; docs/soak41.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import prometheus_client
import pytest

from kjobs.cli.up import _assemble
from kjobs.cluster import ClusterSettings
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.store import MemoryStore
from tests.node.helpers import make_pod
from tests.node.test_process_runtime import eventually, sh, with_runtime


def lay_out(root: Path, uid: str) -> None:
    """A pod's files as a runtime leaves them: its directory (token volume, a container's) and its logs (the
    current attempt, a rotated file, a stdin file)."""
    (root / "pods" / uid / "volumes" / "kubernetes.io~projected" / "kube-api-access-x").mkdir(parents=True)
    (root / "pods" / uid / "volumes" / "kubernetes.io~projected" / "kube-api-access-x" / "token").write_text("t")
    (root / "pods" / uid / "etc-hosts").write_text("127.0.0.1 localhost\n")
    (root / "logs").mkdir(exist_ok=True)
    for name in (f"{uid}_main_0.log", f"{uid}_main_1.log", f"{uid}_main_1.log.20261205-212400", f"{uid}_c_0.stdin"):
        (root / "logs" / name).write_text("hello\n")


def files_of(root: Path, uid: str) -> list[str]:
    pods = [p.name for p in (root / "pods").iterdir() if p.name == uid]
    logs = [p.name for p in (root / "logs").iterdir() if p.name.startswith(f"{uid}_")]
    return sorted(pods + logs)


def test_a_node_that_owns_its_root_removes_the_files_of_pods_no_longer_bound_to_it(tmp_path: Path) -> None:
    for uid in ("gone-1", "gone-2", "bound"):
        lay_out(tmp_path, uid)

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path, owns_root=True)
        try:
            runtime.release_unclaimed({"bound"})
        finally:
            await runtime.shutdown()

    asyncio.run(body())
    assert files_of(tmp_path, "gone-1") == files_of(tmp_path, "gone-2") == []
    assert len(files_of(tmp_path, "bound")) == 5


def test_a_shared_root_keeps_the_files_it_does_not_know(tmp_path: Path) -> None:
    """`kjobs run` sessions share the default root: one session's start must not remove another's pods."""
    lay_out(tmp_path, "another-session")

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path)
        try:
            runtime.release_unclaimed(set())
        finally:
            await runtime.shutdown()

    asyncio.run(body())
    assert len(files_of(tmp_path, "another-session")) == 5


def test_a_pod_the_runtime_runs_keeps_its_files_though_the_list_does_not_name_it(tmp_path: Path) -> None:
    """A pod started after the agent's list (bound meanwhile) is the runtime's own: its files stay."""
    marker = tmp_path / "started"

    async def body(runtime: ProcessRuntime) -> None:
        await runtime.run_pod(make_pod([sh(f"echo out; touch {marker}; exec sleep 30")], uid="running"))
        await eventually(marker.exists, "the container to start")
        removed = runtime.remove_orphaned_files(set())
        assert removed == []
        assert files_of(tmp_path, "running") == ["running", "running_main_0.log"]
        await runtime.kill_pod("running", grace_seconds=0)

    with_runtime(tmp_path, body, owns_root=True)


def test_kjobs_ups_nodes_own_their_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kjobs up` holds its data directory alone, so its nodes clean their roots; `kjobs run`'s do not."""
    monkeypatch.setattr(prometheus_client, "REGISTRY", prometheus_client.CollectorRegistry())  # metrics: once each
    cluster, _ = _assemble(MemoryStore(), authenticator=None, nodes=1, data=tmp_path)
    [name] = cluster.node_names()
    assert cluster._make_agent(name).runtime.owns_root is True
    assert ClusterSettings().owns_root_dir is False
