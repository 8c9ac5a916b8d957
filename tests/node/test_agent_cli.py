"""`kjobs node join|shutdown`: bad input and unreachable servers are one-line errors, never tracebacks."""

from __future__ import annotations

import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
import yaml
from click.testing import CliRunner

from kjobs.api.errors import ApiError
from kjobs.cli import main
from kjobs.cli.node import transient
from kjobs.server import kubeconfig
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import free_port, shared_pki


@pytest.fixture
def unreachable(tmp_path: Path) -> Path:
    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, "http://127.0.0.1:1")
    return config


def test_join_without_a_kubeconfig_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["node", "join", "--kubeconfig", str(tmp_path / "none"), "--name", "n"])
    assert result.exit_code == 1
    assert "does not exist" in result.output
    assert "Traceback" not in result.output


def test_join_rejects_a_bad_threshold(unreachable: Path) -> None:
    args = ["node", "join", "--kubeconfig", str(unreachable), "--name", "n", "--eviction-hard", "memory.free<1Gi"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "unsupported eviction signal memory.free" in result.output


def test_join_rejects_a_soft_threshold_without_its_grace_period(unreachable: Path) -> None:
    args = ["node", "join", "--kubeconfig", str(unreachable), "--name", "n", "--eviction-soft", "memory.available<1Gi"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "grace period must be specified for the soft eviction threshold memory.available" in result.output


def _start_join(config: Path, root: Path) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "kjobs", "node", "join", "--kubeconfig", str(config), "--name", "n"]
    argv += ["--runtime", "sim", "--root-dir", str(root)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _read_until(agent: subprocess.Popen[str], text: str, seen: list[str]) -> None:
    """Read the agent's stderr line by line until one holds `text` (a line at least every 7 s while it retries)."""
    assert agent.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = agent.stderr.readline()
        assert line, f"the agent exited ({agent.wait()}): {seen}"
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"no {text!r} in {seen}")


@pytest.mark.e2e
def test_join_before_the_server_is_up_retries_until_it_serves(tmp_path: Path) -> None:
    """The kubelet's registerWithAPIServer: an agent started before the API server (or while it restarts) keeps
    trying with a back-off doubling from 100 ms, and joins once the server answers."""
    port = free_port()
    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, f"http://127.0.0.1:{port}")
    agent = _start_join(config, tmp_path / "r")
    seen: list[str] = []
    store = MemoryStore()
    try:
        _read_until(agent, "retrying in 0.1s", seen)
        _read_until(agent, "retrying in 0.2s", seen)
        assert f"node n: cannot register with http://127.0.0.1:{port}:" in seen[0]
        with serve(store, port=port):
            _read_until(agent, f"node n joined http://127.0.0.1:{port}", seen)
            assert [node["metadata"]["name"] for node in store.list("nodes")[0]] == ["n"]
            agent.send_signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        store.close()
    assert "Traceback" not in "".join(seen) + (agent.stderr.read() if agent.stderr else "")


@pytest.mark.e2e
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_join_stopped_while_it_retries_exits_cleanly(unreachable: Path, tmp_path: Path, signum: signal.Signals) -> None:
    """SIGHUP (its terminal closed) stops it as SIGTERM does (docs/orphans.md); it killed the agent before."""
    agent = _start_join(unreachable, tmp_path / "r")
    seen: list[str] = []
    try:
        _read_until(agent, "cannot register with http://127.0.0.1:1", seen)
        agent.send_signal(signum)
        assert agent.wait(timeout=30) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    rest = agent.stderr.read() if agent.stderr else ""
    assert "node n: stopped before it registered" in rest
    assert "Traceback" not in "".join(seen) + rest


def test_shutdown_against_an_unreachable_server_fails_cleanly(unreachable: Path) -> None:
    result = CliRunner().invoke(main, ["node", "shutdown", "n", "--kubeconfig", str(unreachable)])
    assert result.exit_code == 1
    assert "cannot reach http://127.0.0.1:1" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.e2e
def test_shutdown_of_an_unknown_node_is_not_found(tmp_path: Path) -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())
        result = CliRunner().invoke(main, ["node", "shutdown", "ghost", "--kubeconfig", str(config)])
    store.close()
    assert result.exit_code == 1
    assert 'nodes "ghost" not found' in result.output


@pytest.mark.e2e
def test_join_with_an_invalid_node_name_shows_the_api_error(tmp_path: Path) -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())
        args = ["node", "join", "--kubeconfig", str(config), "--name", "Bad_Name", "--root-dir", str(tmp_path / "r")]
        result = CliRunner().invoke(main, args)
    store.close()
    assert result.exit_code == 1
    assert "cannot register node Bad_Name" in result.output
    assert 'metadata.name: Invalid value: "Bad_Name"' in result.output


@pytest.mark.e2e
def test_join_without_credentials_is_unauthorized(tmp_path: Path) -> None:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        config = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(config, url, pki=shared_pki())
        doc = yaml.safe_load(config.read_text())
        doc["users"][0]["user"] = {}  # the CA, but neither certificate nor token
        config.write_text(yaml.safe_dump(doc))
        args = ["node", "join", "--kubeconfig", str(config), "--name", "n", "--root-dir", str(tmp_path / "r")]
        result = CliRunner().invoke(main, args)
        assert store.list("nodes")[0] == []
    store.close()
    assert result.exit_code == 1
    assert f"cannot register node n with {url}: Unauthorized" in result.output


def test_join_over_https_without_a_ca_refuses_to_serve_logs_it_could_not_protect(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, "https://127.0.0.1:1", pki=shared_pki())
    doc = yaml.safe_load(config.read_text())
    doc["clusters"][0]["cluster"] = {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}
    config.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(main, ["node", "join", "--kubeconfig", str(config), "--name", "n"])
    assert result.exit_code == 1
    assert "no certificate-authority to verify log readers with" in result.output


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (ConnectionRefusedError(111, "Connect call failed"), True),  # not up yet
        (aiohttp.ServerDisconnectedError(), True),  # killed while it answered (a crash-safety test saw it)
        (aiohttp.ClientPayloadError("Response payload is not completed"), True),
        (ApiError(503, "ServiceUnavailable", "starting"), True),
        (ApiError(429, "TooManyRequests", "slow down"), True),
        (ApiError(403, "Forbidden", "nodes is forbidden"), False),
        (ApiError(422, "Invalid", "bad name"), False),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), False),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, bool) else str(value),
)
def test_registration_retries_what_the_kubelet_outlasts(error: Exception, retried: bool) -> None:
    assert transient(error) is retried
