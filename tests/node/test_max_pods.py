"""`--max-pods` (the kubelet's `maxPods`) and `kjobs node join --runtime sim --model`: the Node's capacity and
allocatable `pods` follow it, the agent admits no more, the scheduler places no more, and a joined simulated
agent draws its containers' exits from a `kjobs simulate` model file."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from kjobs import virtualtime
from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.cli import main
from kjobs.client.local import LocalClient
from kjobs.client.resources import NODES, PODS
from kjobs.clock import FakeClock
from kjobs.cluster import ClusterSettings
from kjobs.node.nodestatus import MAX_PODS, MachineInfo, allocatable, capacity
from kjobs.node.sim_runtime import Outcome
from kjobs.server import kubeconfig
from kjobs.server.runner import serve
from kjobs.simulate.session import virtual_cluster
from kjobs.store import MemoryStore
from tests.node.test_agent import NODE, start_node
from tests.support import client_tls, settle, shared_pki


def test_capacity_and_allocatable_pods_follow_max_pods() -> None:
    machine = MachineInfo(max_pods=5000)
    assert capacity(machine)["pods"] == allocatable(machine)["pods"] == "5000"
    assert capacity(MachineInfo())["pods"] == str(MAX_PODS) == "110"


def test_the_agent_reports_and_admits_max_pods() -> None:
    async def scenario() -> None:
        node = await start_node(max_pods=2)
        try:
            status = (await node.client.get(NODES, None, NODE))["status"]
            assert (status["capacity"]["pods"], status["allocatable"]["pods"]) == ("2", "2")
            node.runtime.outcome = lambda pod, container, attempt: Outcome(duration=3600)
            for name in ("a", "b", "c"):
                await node.create_pod(name)
                await settle(node.clock, lambda n=name: node.phase(n) in ("Running", "Failed"))  # type: ignore[misc]
            assert (node.phase("a"), node.phase("b"), node.phase("c")) == ("Running", "Running", "Failed")
            rejected = node.pod("c")
            assert rejected is not None
            assert rejected["status"]["reason"] == "OutOfpods"
            assert rejected["status"]["message"] == (
                "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"
            )
        finally:
            await node.agent.stop()

    asyncio.run(scenario())


def test_the_scheduler_places_no_more_than_max_pods() -> None:
    """Three long pods on a node of `max_pods` 2 (virtual time): two run, the third stays Pending with
    kube-scheduler's `Too many pods`."""
    long_running = lambda pod, container, attempt: Outcome(duration=3600)  # noqa: E731

    async def scenario() -> list[Obj]:
        settings = ClusterSettings(runtime="sim", sim_outcome=long_running, node_options={"max_pods": 2})
        async with virtual_cluster(settings) as cluster:
            client = LocalClient(cluster.service)
            for name in ("a", "b", "c"):
                spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                await client.create(PODS, "default", {"metadata": {"name": name, "namespace": "default"}, "spec": spec})
            await asyncio.sleep(60)
            pods, _ = await client.list(PODS, "default")
            return sorted(pods, key=lambda p: str(p["metadata"]["name"]))

    pods = virtualtime.run(scenario(), FakeClock(start=1_000_000_000.0))
    assert sorted(p["status"].get("phase") for p in pods) == ["Pending", "Running", "Running"]
    pending = next(p for p in pods if p["status"].get("phase") == "Pending")
    assert not pending["spec"].get("nodeName")
    scheduled = next(c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["reason"] == "Unschedulable"
    assert "Too many pods" in scheduled["message"]


# ------------------------------------------------------------------------------------------------ the CLI


def _join(config: Path, *extra: str) -> list[str]:
    return ["node", "join", "--kubeconfig", str(config), "--name", "n", *extra]


@pytest.fixture
def unreachable(tmp_path: Path) -> Path:
    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, "http://127.0.0.1:1")
    return config


def test_a_model_needs_the_sim_runtime(unreachable: Path, tmp_path: Path) -> None:
    model = tmp_path / "model.yaml"
    model.write_text("containers: {exitCodes: [{code: 1, weight: 1}]}\n")
    result = CliRunner().invoke(main, _join(unreachable, "--model", str(model)))
    assert result.exit_code == 2
    assert "a failure model needs --runtime sim" in result.output


def test_a_model_with_disruptions_is_refused(unreachable: Path, tmp_path: Path) -> None:
    model = tmp_path / "model.yaml"
    model.write_text("disruptions: [{kind: drain, ratePerHour: 1}]\n")
    result = CliRunner().invoke(main, _join(unreachable, "--runtime", "sim", "--model", str(model)))
    assert result.exit_code == 2
    assert "a node agent cannot apply disruptions" in result.output


def test_a_bad_model_names_its_field(unreachable: Path, tmp_path: Path) -> None:
    model = tmp_path / "model.yaml"
    model.write_text("containers: {exitCodez: []}\n")
    result = CliRunner().invoke(main, _join(unreachable, "--runtime", "sim", "--model", str(model)))
    assert result.exit_code == 2
    assert "exitCodez" in result.output
    assert "Traceback" not in result.output


def test_max_pods_must_be_positive(unreachable: Path) -> None:
    result = CliRunner().invoke(main, _join(unreachable, "--max-pods", "0"))
    assert result.exit_code == 2


@pytest.mark.slow
@pytest.mark.e2e
def test_a_joined_sim_agent_reports_max_pods_and_fails_containers_by_the_model(tmp_path: Path) -> None:
    store = MemoryStore()
    model = tmp_path / "model.yaml"
    model.write_text("containers: {exitCodes: [{code: 7, weight: 1}]}\n")
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())
        argv = [
            sys.executable,
            "-m",
            "kjobs",
            *_join(config, "--runtime", "sim", "--max-pods", "3", "--model", str(model)),
        ]
        agent = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            with httpx.Client(base_url=url, timeout=10, verify=client_tls()) as http:

                def get(path: str) -> Any:
                    deadline = time.monotonic() + 20
                    while time.monotonic() < deadline:
                        response = http.get(path)
                        if response.status_code == 200:
                            return response.json()
                        time.sleep(0.05)
                    raise AssertionError(f"{path} not found")

                status = get("/api/v1/nodes/n")["status"]
                assert (status["capacity"]["pods"], status["allocatable"]["pods"]) == ("3", "3")
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    # a Job's pod: the model decides its exits (others run as their command says)
                    "metadata": {"name": "p", "namespace": "default", "labels": {CONTROLLER_UID_LABEL: "u"}},
                    "spec": {"restartPolicy": "Never", "nodeName": "n", "containers": [{"name": "main", "image": "b"}]},
                }
                assert http.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
                deadline = time.monotonic() + 20
                while get("/api/v1/namespaces/default/pods/p").get("status", {}).get("phase") != "Failed":
                    assert time.monotonic() < deadline, "the pod did not fail"
                    time.sleep(0.05)
                state = get("/api/v1/namespaces/default/pods/p")["status"]["containerStatuses"][0]["state"]
                assert state["terminated"]["exitCode"] == 7
        finally:
            agent.terminate()
            agent.wait(timeout=30)
    store.close()


@pytest.mark.parametrize(("flags", "seconds"), [((), 60.0), (("--sync-frequency", "2m"), 120.0)], ids=["1m0s", "2m"])
def test_the_sync_frequency_reaches_the_joined_agent(
    unreachable: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], seconds: float
) -> None:
    """`kjobs node join --sync-frequency`: the kubelet's flag, as on `kjobs up`."""
    import kjobs.cli.node as node_cli

    seen: list[float] = []

    async def joined(connection: object, name: str, runtime: str, root: object, settings: Any, *rest: object) -> None:
        seen.append(settings.sync_frequency)

    monkeypatch.setattr(node_cli, "_join", joined)
    monkeypatch.setattr("kjobs.gctuning.tune_gc", lambda: None)  # the test process keeps its GC settings
    result = CliRunner().invoke(main, _join(unreachable, *flags))
    assert result.exit_code == 0, result.output
    assert seen == [seconds]


def test_a_bad_sync_frequency_is_refused_by_join(unreachable: Path) -> None:
    result = CliRunner().invoke(main, _join(unreachable, "--sync-frequency", "1d"))
    assert result.exit_code == 2
    assert """Invalid value for '--sync-frequency': time: unknown unit "d" in duration "1d\"""" in result.output
