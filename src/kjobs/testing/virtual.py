"""Virtual time for a test cluster: the simulated runtime's outcomes from a container's command, and the rule
for when the cluster's virtual clock may move.

The cluster runs on a `kjobs.virtualtime.VirtualTimeLoop` (the loop `kjobs simulate` uses) in a background
thread, because the test calls the blocking official client from its own thread. Were time to jump whenever that
loop is idle, it would also jump while the test computes between two calls, and a test would see a different
cluster each run. So the rule (`TimeGate.may_advance`, asked by the loop only when nothing can run):

virtual time moves only when every component is idle at the current instant (no ready callback, no socket with
data) AND the test waits for the cluster: inside one of `KjobsCluster`'s helpers (`wait_for`, `pod_of`, `apply`,
... each runs on the loop while the test thread blocks on it), while a watch or a followed log stream is open on
the API (the test blocks reading it; it counts until the server sees it closed), or inside `advance(seconds)`.
An ordinary API request never needs time to pass: it is answered at the instant it arrives. With
`virtual_time="manual"` only `advance` moves time. A test that polls with `time.sleep` between plain reads
therefore sees time stand still: wait with `wait_for`, a watch, or `advance`.
"""

from __future__ import annotations

import asyncio
import math
import re
import shlex
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome

T = TypeVar("T")
VirtualTime = Literal["auto", "manual"]

_SLEEP = re.compile(r"\bsleep\s+(inf(?:inity)?\b|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)([smhd]?)(?![\w.])")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
"""`sleep`'s suffixes (coreutils and busybox): seconds, minutes, hours, days."""
_EXIT = re.compile(r"\bexit\s+(\d+)")
_ECHO = re.compile(r"\becho\s+([^;&|]*)")
_TRAP = re.compile(r"""\btrap\s+(?:'([^']*)'|"([^"]*)"|([^\s;&|'"]+))((?:\s+[\w-]+)+)""")
"""`trap ACTION SIGNAL...`: its action, quoted or a word, and the signals it is set for."""
_CONTROL_FLOW = re.compile(r"\b(?:if|case|while|until|for)\b|&&|\|\||\$\(|`")
"""Shell the reader does not run: its `exit` and `sleep` are read as if each ran once, in order."""


class SimulatedCommandWarning(UserWarning):
    """A container's command has shell control flow, which the simulated runtime reads but does not run."""


def command_outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """What a shell container would do, read from its command (no shell runs): the `sleep`s add up to how long
    it runs (`sleep 90`, `sleep 2m`, `sleep infinity`: never ends, as on a node), the first `exit N` is its
    exit code, `echo TEXT` prints TEXT; anything else exits 0 at once. SIGTERM ends it only with a `trap` for
    it (`_sigterm_trap`): else, as a container's first process, it runs on until SIGKILL. A command with control
    flow (`if`, `while`, `&&`...) is read the same way, with a `SimulatedCommandWarning`:
    the outcome then may not be what a
    shell would do (a test that needs other fates passes `outcome=`, a `kjobs.node.sim_runtime.OutcomeFn`)."""
    text = " ".join(str(part) for part in [*(container.get("command") or ()), *(container.get("args") or ())])
    text, term_exit_code = _sigterm_trap(text)
    sleep = sum(_seconds(number, unit) for number, unit in _SLEEP.findall(text))
    code = _EXIT.search(text)
    output = b"".join(_echo(m).encode() + b"\n" for m in _ECHO.findall(text))
    outcome = Outcome(
        duration=sleep, exit_code=int(code.group(1)) if code else 0, output=output, term_exit_code=term_exit_code
    )
    if _CONTROL_FLOW.search(text):
        runs = "for ever" if math.isinf(sleep) else f"{sleep:g} s"
        warnings.warn(
            SimulatedCommandWarning(
                f"the simulated runtime does not run shell: container {container.get('name')!r} of pod "
                f"{(pod.get('metadata') or {}).get('name')!r} ({text!r}) is read as running {runs}, then exiting "
                f"{outcome.exit_code}; pass @pytest.mark.kjobs(outcome=...) to decide each attempt"
            ),
            stacklevel=2,
        )
    return outcome


def _sigterm_trap(text: str) -> tuple[str, int | None]:
    """The command without its `trap` builtins, and what SIGTERM makes it exit with: a container's first process
    ignores a signal it has no handler for (docs/sigterm42.md), so None unless a `trap 'exit N' TERM` (or `SIGTERM`,
    `15`) gives one, then N (the trap's first `exit`; 143 without one). The handler is taken to run at once, as it
    does for a shell waiting in `wait` (`sleep 30 & wait`); a shell runs it only once a command in the foreground
    has ended."""
    code: int | None = None
    for match in _TRAP.finditer(text):
        action = next((g for g in match.groups()[:3] if g is not None), "")
        if {"TERM", "SIGTERM", "15"} & set(match.group(4).split()) and action not in ("", "-"):
            found = _EXIT.search(action)
            code = int(found.group(1)) if found else 143
    return _TRAP.sub(" ", text), code


def _seconds(number: str, unit: str) -> float:
    if number.startswith("inf"):
        return math.inf
    return float(number) * _UNITS[unit]


def _echo(words: str) -> str:
    try:
        return " ".join(shlex.split(words))
    except ValueError:
        return words.strip()


class TimeGate:
    """The gate of a test cluster's `VirtualTimeLoop` (the module note's rule). Its counters change only on the
    loop's thread (inside the coroutines and requests they count), so the gate closes the instant the work it
    waited for is done, before the test thread even wakes."""

    def __init__(self, mode: VirtualTime = "auto") -> None:
        self.mode = mode
        self.waiting = 0
        """Helpers of the test running on the loop now."""
        self.streams = 0
        """Watches and followed log streams open on the API now."""
        self.advancing = 0
        """`advance` calls in progress."""

    def may_advance(self) -> bool:
        """Whether the idle loop may move the clock now."""
        if self.advancing:
            return True
        return self.mode == "auto" and (self.waiting > 0 or self.streams > 0)

    async def waiting_for(self, work: Awaitable[T]) -> T:
        """Await `work` as the test waiting for the cluster."""
        self.waiting += 1
        try:
            return await work
        finally:
            self.waiting -= 1

    async def advance(self, seconds: float) -> None:
        """Move the clock forward by `seconds`, deadline by deadline, each instant's work done before the next
        (a sleep on the loop: it returns at exactly now + `seconds`)."""
        self.advancing += 1
        try:
            await asyncio.sleep(seconds)
        finally:
            self.advancing -= 1

    def count_streams(self, app: Any) -> Callable[..., Awaitable[None]]:
        """`app` (ASGI) with its watch and `follow` requests counted in `streams` while they are served."""

        async def counted(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope.get("type") != "http" or not _streaming(scope.get("query_string") or b""):
                await app(scope, receive, send)
                return
            self.streams += 1
            try:
                await app(scope, receive, send)
            finally:
                self.streams -= 1

        return counted


_STREAM_QUERY = re.compile(rb"(?:^|&)(?:watch|follow)=(?:true|1)(?:&|$)")


def _streaming(query: bytes) -> bool:
    return _STREAM_QUERY.search(query) is not None
