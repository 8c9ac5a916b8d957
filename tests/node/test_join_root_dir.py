"""`kjobs node join --root-dir DIR`: a root of the node's own, held while it runs (`kjobs.node.rootlock`), so at
start it removes the files of pods it no longer has, as `kjobs up`'s nodes do (docs/soak41.md); the default root,
which `kjobs run` sessions and other agents share, keeps them. A second process cannot own a root in use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli import main
from kjobs.node.rootlock import RootInUse, claim
from kjobs.server import kubeconfig
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.node.test_agent_cli import _read_until
from tests.node.test_orphaned_pod_files import files_of, lay_out
from tests.support import shared_pki


@pytest.fixture
def config(tmp_path: Path) -> Iterator[Path]:
    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        path = tmp_path / "kubeconfig.yaml"
        kubeconfig.write(path, url, pki=shared_pki())
        yield path
    store.close()


def _join(config: Path, name: str, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "kjobs", "node", "join", "--kubeconfig", str(config), "--name", name, *extra]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)


def _until(check: Callable[[], bool], agent: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert agent.poll() is None, (
            f"the agent exited ({agent.returncode}): {agent.stderr.read() if agent.stderr else ''}"
        )
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _stop(agent: subprocess.Popen[str]) -> str:
    if agent.poll() is None:
        agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(timeout=30)
    except subprocess.TimeoutExpired:
        agent.kill()
        agent.wait()
    return agent.stderr.read() if agent.stderr else ""


@pytest.mark.e2e
def test_a_node_with_its_own_root_removes_orphaned_pod_files_and_holds_the_root(config: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    lay_out(root, "gone-pod")
    agent = _join(config, "n1", "--root-dir", str(root))
    try:
        _until(lambda: files_of(root, "gone-pod") == [], agent, "the orphaned files to go")
        # while it runs the root is its own: another agent cannot take it, nor share it
        second = CliRunner().invoke(
            main, ["node", "join", "--kubeconfig", str(config), "--name", "n2", "--root-dir", str(root)]
        )
        assert second.exit_code == 1
        assert f"node n2: {root} is in use by another process" in second.output
        with pytest.raises(RootInUse):
            os.close(claim(root, exclusive=False))
    finally:
        rest = _stop(agent)
    assert agent.returncode == 0, rest
    assert "Traceback" not in rest
    os.close(claim(root, exclusive=True))  # released with its process


@pytest.mark.e2e
def test_the_default_root_is_shared_and_keeps_what_it_does_not_know(config: Path, tmp_path: Path) -> None:
    runtime_dir = tmp_path / "xdg"
    runtime_dir.mkdir(mode=0o700)
    root = runtime_dir / "kjobs" / "n3"  # `default_root_dir() / NAME` under this XDG_RUNTIME_DIR
    lay_out(root, "another-session")
    agent = _join(config, "n3", env={**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir)})
    try:
        _read_until(agent, "node n3 joined", [])  # it has listed its pods: what it would remove is gone by now
        # a shared claim: another sharer may use it too, an owner may not
        os.close(claim(root, exclusive=False))
        with pytest.raises(RootInUse):
            os.close(claim(root, exclusive=True))
    finally:
        rest = _stop(agent)
    assert agent.returncode == 0, rest
    assert len(files_of(root, "another-session")) == 5


@pytest.mark.e2e
def test_a_root_dir_with_files_but_nothing_of_a_node_is_refused(config: Path, tmp_path: Path) -> None:
    """The sweep removes what is not this node's under `pods/` and `logs/`: a `--root-dir` naming a directory of
    the user's (its own `logs/`) is refused before anything is made or removed there."""
    mine = tmp_path / "project"
    (mine / "logs").mkdir(parents=True)
    (mine / "logs" / "build.log").write_text("keep me\n")
    # a name the API refuses: without the check the join would end there (exit 1), not run on
    args = ["node", "join", "--kubeconfig", str(config), "--name", "Bad_Name", "--root-dir", str(mine)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "holds files but no node's" in result.output
    assert (mine / "logs" / "build.log").read_text() == "keep me\n" and sorted(os.listdir(mine)) == ["logs"]
