"""`kjobs up`, `kjobs node join` and `kjobs controller` stop gracefully and exit 0 on SIGINT, SIGTERM and SIGHUP,
whenever the signal comes (src/kjobs/stopping.py). Before, SIGHUP (the terminal closed) killed `kjobs up` at once
(status 129) with its pods left running, and a SIGTERM while it started ended it with status 143."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kjobs import stopping

DEADLINE = 60.0

main_thread_only = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals are handled on the main thread"
)


@main_thread_only
def test_a_stop_signal_while_held_is_recorded_and_the_handlers_are_given_back() -> None:
    before = {signum: signal.getsignal(signum) for signum in stopping.STOP_SIGNALS}
    with stopping.held():
        os.kill(os.getpid(), signal.SIGHUP)  # would end this process by default
        deadline = time.monotonic() + DEADLINE
        while not stopping.pending() and time.monotonic() < deadline:
            time.sleep(0.01)  # the handler runs between bytecodes of the main thread
        assert stopping.pending() == signal.SIGHUP
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        assert stopping.pending() == signal.SIGHUP  # the first one is kept
    assert {signum: signal.getsignal(signum) for signum in stopping.STOP_SIGNALS} == before


@main_thread_only
def test_the_loop_acts_on_a_signal_that_came_before_it_ran() -> None:
    async def until_stopped() -> str:
        stop = asyncio.Event()
        release = stopping.on_loop(asyncio.get_running_loop(), stop.set)
        try:
            await asyncio.wait_for(stop.wait(), DEADLINE)
            return "stopped"
        finally:
            release()

    with stopping.held():
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + DEADLINE
        while not stopping.pending() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert asyncio.run(until_stopped()) == "stopped"


@main_thread_only
def test_the_loop_stops_on_sighup() -> None:
    async def until_stopped() -> str:
        stop = asyncio.Event()
        release = stopping.on_loop(asyncio.get_running_loop(), stop.set)
        try:
            os.kill(os.getpid(), signal.SIGHUP)
            await asyncio.wait_for(stop.wait(), DEADLINE)
            return "stopped"
        finally:
            release()

    with stopping.held():
        assert asyncio.run(until_stopped()) == "stopped"


def _up(tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "kjobs", "up", "--port", "0", "--nodes", "0"),
            *("--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kubeconfig")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)),
    )


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (/proc's SigCgt mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask & (1 << (signum - 1)))


@pytest.mark.e2e
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_up_stops_gracefully_on_a_stop_signal_while_serving(tmp_path: Path, signum: signal.Signals) -> None:
    proc = _up(tmp_path)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("export KUBECONFIG="), "kjobs up did not start"
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert err.rstrip().splitlines()[-1].endswith(" stopped"), err


@pytest.mark.e2e
def test_up_sigtermed_while_it_starts_stops_gracefully(tmp_path: Path) -> None:
    """The signal comes as soon as `kjobs up` can take it (its SIGHUP handler is in place: `kjobs.stopping.held`),
    while it opens its store and makes its PKI: it stops as when serving, exit 0, not 143."""
    proc = _up(tmp_path)
    try:
        deadline = time.monotonic() + DEADLINE
        while not _catches(proc.pid, signal.SIGHUP):
            assert proc.poll() is None and time.monotonic() < deadline, "kjobs up never took SIGHUP"
            time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert err.rstrip().splitlines()[-1].endswith(" stopped"), err
