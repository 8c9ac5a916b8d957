"""Virtual time for a test cluster: the simulated runtime's outcomes from a container's command, and a driver
that moves a `FakeClock` whenever the cluster has nothing left to do at the current instant.

The driver is `tests/support.py`'s `settle()` turned into a task: let every ready callback run (a few hundred
loop turns, which also serve the API requests a test sends), then jump the clock to the earliest deadline any
component sleeps for (`FakeClock.next_deadline`). Pod back-off of 10 s, `activeDeadlineSeconds: 600`, node
leases and pod GC then pass in milliseconds of wall time, in the order they would in real time.
"""

from __future__ import annotations

import asyncio
import re
import shlex

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.sim_runtime import Outcome

IDLE_TURNS = 50
"""Event-loop turns without a due deadline before virtual time moves (each turn also polls sockets)."""

_SLEEP = re.compile(r"\bsleep\s+(\d+(?:\.\d*)?)")
_EXIT = re.compile(r"\bexit\s+(\d+)")
_ECHO = re.compile(r"\becho\s+([^;&|]*)")


def command_outcome(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """What a shell container would do, read from its command: `sleep N` runs N virtual seconds, `exit N`
    ends with code N, `echo TEXT` prints TEXT; anything else exits 0 at once. (A test that needs other
    fates passes its own `kjobs.node.sim_runtime.OutcomeFn`.)"""
    text = " ".join(str(part) for part in [*(container.get("command") or ()), *(container.get("args") or ())])
    sleep = sum(float(m) for m in _SLEEP.findall(text))
    code = _EXIT.search(text)
    output = b"".join(_echo(m).encode() + b"\n" for m in _ECHO.findall(text))
    return Outcome(duration=sleep, exit_code=int(code.group(1)) if code else 0, output=output)


def _echo(words: str) -> str:
    try:
        return " ".join(shlex.split(words))
    except ValueError:
        return words.strip()


async def drive(clock: FakeClock, *, idle_turns: int = IDLE_TURNS) -> None:
    """Advance `clock` to the next deadline each time the loop has been idle for `idle_turns` turns, forever
    (cancel the task to stop). With nobody sleeping on the clock it waits a millisecond of real time."""
    while True:
        for _ in range(idle_turns):
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None:
            await asyncio.sleep(0.001)
        else:
            clock.set(deadline)


async def advance(clock: FakeClock, seconds: float, *, idle_turns: int = IDLE_TURNS) -> None:
    """Move `clock` forward by `seconds`, deadline by deadline, letting the cluster react at each instant (for a
    cluster whose time does not run by itself)."""
    target = clock.now() + seconds
    while True:
        for _ in range(idle_turns):
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None or deadline > target:
            clock.set(target)
            for _ in range(idle_turns):
                await asyncio.sleep(0)
            return
        clock.set(deadline)
