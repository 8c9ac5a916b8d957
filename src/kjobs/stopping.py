"""The signals that ask kjobs' long-running commands (`kjobs up`, `kjobs node join`, `kjobs controller`) to stop,
whenever they come.

Design note: each of these commands stops gracefully on SIGINT (Ctrl-C), SIGTERM (`kill`, a supervisor) and
SIGHUP (its terminal closed) and then exits 0, as kube-apiserver, kube-controller-manager and the kubelet do on
SIGTERM (`shutdownSignals`, staging/src/k8s.io/apiserver/pkg/server/signal_posix.go, holds SIGINT and SIGTERM;
SIGHUP is taken here too because closing its terminal is a user's way to end a foreground command, and dying of
it would leave `kjobs up`'s pods running). That graceful stop is set up only once the command's event loop runs;
before then (opening the store, making the PKI, imports) `held` records a stop signal instead of letting it kill
the process half-way (a SIGTERM there used to end `kjobs up` with status 143 and a half-made start), and the
loop's handlers, once installed (`on_loop`, or `kjobs.server.runner`'s uvicorn server), act on it at once. A
signal that comes before the command has parsed its arguments still ends the process as by default (nothing has
started then). `kjobs run` is different on purpose: its exit status tells the Job's outcome, so a signal that
stops it exits 128 + the signal's number (`kjobs.run.STOP_SIGNALS`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that stop a long-running command gracefully."""

_pending = 0
_holding = False


def pending() -> int:
    """The stop signal received while `held` (0: none)."""
    return _pending


def _record(signum: int, _frame: Any) -> None:
    global _pending
    _pending = _pending or signum


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Until the block ends, a stop signal is recorded (`pending`) rather than acted on; the handlers before it are
    restored at the end (tests invoke commands in their own process). Nothing outside the main thread, where
    signals cannot be handled."""
    global _pending, _holding
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    _pending, _holding = 0, True
    for signum in STOP_SIGNALS:
        signal.signal(signum, _record)
    try:
        yield
    finally:
        _holding = False
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def on_loop(loop: Any, stop: Callable[[], None]) -> Callable[[], None]:
    """Call `stop` on the event loop for a stop signal, and soon if one came while `held`; returns what gives the
    signals back (to `held`'s recording, or their defaults)."""
    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, stop)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            break
        installed.append(signum)
    if _pending:
        loop.call_soon(stop)

    def release() -> None:
        for signum in installed:
            loop.remove_signal_handler(signum)
            if _holding:
                signal.signal(signum, _record)

    return release
