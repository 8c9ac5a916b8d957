"""`SimulatedRuntime`: the container runtime without processes, in virtual time.

Design note: each container attempt's fate comes from an outcome function of (pod, container, attempt
number) — how long it runs, its exit code, whether it is OOM-killed, how long it takes to honour SIGTERM,
what it prints. Exits and timers are events on a heap ordered by the injected clock's time. Whoever drives
the simulation either moves the clock itself and calls `run_due()` (asking `next_wakeup()` when the next
event is due — synchronous tests), or runs `drive()` as a task: it sleeps on the clock until the next event,
so with a `kjobs.clock.FakeClock` the runtime's events appear in `clock.next_deadline()` beside every other
component's and a simulator only has to advance the one clock. Restart decisions, back-off, termination
and statuses are the shared `Supervisor`'s, so a simulated pod reports exactly what a real one would.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import signal as signals
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from kjobs.api.types import Obj
from kjobs.clock import Clock, FakeClock
from kjobs.node.logs import fallback_message, log_time, since_stamp
from kjobs.node.observations import Attempt, KillReason, PodRecord
from kjobs.node.restart import DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP
from kjobs.node.runtime import PodHandle, StatusCallback
from kjobs.node.stopsignal import INIT, scope_of
from kjobs.node.supervisor import MINIMUM_GRACE_SECONDS, Cancel, Supervisor, ignore_status


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one simulated container attempt ends."""

    duration: float = 0.0
    exit_code: int = 0
    oom: bool = False
    """Killed by its memory limit after `duration`: exit code 137, signal 9, reason OOMKilled."""
    term_delay: float = 0.0
    """Seconds the container takes to exit after SIGTERM (it then exits `term_exit_code`)."""
    term_exit_code: int | None = 143
    """What it exits with once SIGTERM reached it (143, signal 15: it dies of it; another code: a handler that
    exits so, `trap 'exit 7' TERM`); None: SIGTERM does not reach it, as a container's first process with no
    handler for it (docs/sigterm42.md): it runs on until its own end or SIGKILL at the end of the grace period."""
    output: bytes = b""


OutcomeFn = Callable[[Obj, Obj, int], Outcome]
"""(pod, container spec, attempt number) -> Outcome."""


def succeed_at_once(pod: Obj, container: Obj, attempt: int) -> Outcome:
    """Default outcome: every container exits 0 immediately."""
    return Outcome()


class SimulatedRuntime(Supervisor):
    """Runs no processes; container outcomes come from `outcome`, time from `clock`."""

    instant_exits_at_start = True
    """A container whose outcome lasts 0 s ends as it starts: its attempt is recorded ended at once, so the pod's
    first status is already the terminal one (one status write, not Running and then the end at the same
    instant). False: the exit is an event of its own, after the start (tests/simulate/test_shortcuts.py shows the
    Job's status and every pod's final state are the same either way)."""

    def __init__(
        self,
        *,
        clock: Clock,
        outcome: OutcomeFn = succeed_at_once,
        on_status: StatusCallback = ignore_status,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        host_ip: str = "127.0.0.1",
        pod_ip: str = "127.0.0.1",
        minimum_grace_seconds: float = MINIMUM_GRACE_SECONDS,
        start_report_delay: float = 0.0,
    ) -> None:
        super().__init__(
            clock=clock,
            on_status=on_status,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            host_ip=host_ip,
            pod_ip=pod_ip,
            minimum_grace_seconds=minimum_grace_seconds,
        )
        self.outcome = outcome
        self.start_report_delay = start_report_delay
        """Seconds before a started container reads Running (0: at once), as the process runtime's
        `START_REPORT_DELAY` (the kubelet's PLEG): a container that ends sooner is reported once, ended."""
        self._heap: list[tuple[float, int, list[Callable[[], None] | None]]] = []
        self._seq = itertools.count()
        self._id_prefix = uuid.uuid4().hex[:16]
        self._ids = itertools.count()
        """Container IDs: this runtime's random half, then a count (32 hex digits, as before, without a uuid4's
        read of the system's random source per container)."""
        self._exits: dict[str, tuple[float, Cancel]] = {}
        self._outcomes: dict[str, Outcome] = {}
        self._outputs: dict[str, bytes] = {}
        self._scheduled: asyncio.Event | None = None

    # -- driving virtual time ------------------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        """When the next event is due (None when nothing is scheduled)."""
        while self._heap and self._heap[0][2][0] is None:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def run_due(self) -> int:
        """Run every event due at the clock's current time (including ones they schedule); returns how many."""
        count = 0
        while self._heap and self._heap[0][0] <= self.clock.now():
            _, _, slot = heapq.heappop(self._heap)
            callback = slot[0]
            if callback is not None:
                slot[0] = None
                callback()
                count += 1
        return count

    def run_until_idle(self, clock: FakeClock, *, limit: float = float("inf")) -> None:
        """Advance `clock` from event to event until nothing is scheduled (or `limit` is reached)."""
        while True:
            self.run_due()
            wake = self.next_wakeup()
            if wake is None or wake > limit:
                return
            clock.set(wake)

    async def drive(self) -> None:
        """Run events as the clock reaches them, forever (cancel the task to stop)."""
        self._scheduled = asyncio.Event()
        while True:
            self.run_due()
            self._scheduled.clear()
            wake = self.next_wakeup()
            if wake is None:
                await self._scheduled.wait()
                continue
            sleeper = asyncio.ensure_future(self.clock.sleep(wake - self.clock.now()))
            rescheduled = asyncio.ensure_future(self._scheduled.wait())
            try:
                await asyncio.wait((sleeper, rescheduled), return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                rescheduled.cancel()

    # -- ContainerRuntime ----------------------------------------------------------------------------------
    async def run_pod(self, pod: Obj) -> PodHandle:
        """Admit the pod; its containers start in virtual time."""
        return self.admit(pod)

    async def kill_pod(self, uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
        """Ask the pod's containers to stop (SIGTERM; SIGKILL after `grace_seconds` of virtual time)."""
        self.request_kill(uid, grace_seconds=grace_seconds, reason=reason)

    def logs(
        self,
        uid: str,
        container: str,
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
        timestamps: bool = False,
        since_seconds: int | None = None,
        since_time: float | None = None,
    ) -> AsyncIterator[bytes]:
        """The attempt's simulated output (never followed: virtual time does not pass while reading). A simulated
        container writes all its output as it starts: every line has its start time."""
        attempt = self.log_attempt(uid, container, previous=previous)
        data = self._outputs.get(attempt.container_id, b"")
        since = self.log_since(since_seconds, since_time)
        if since is not None and log_time(attempt.started_at) < since_stamp(since):
            data = b""
        lines = data.splitlines(keepends=True)
        if tail_lines is not None and tail_lines >= 0:
            lines = lines[len(lines) - tail_lines :] if tail_lines else []
        if timestamps:
            stamp = log_time(attempt.started_at) + b" "
            lines = [stamp + line for line in lines]
        data = b"".join(lines)
        if limit_bytes is not None and limit_bytes > 0:
            data = data[:limit_bytes]
        return _once(data)

    async def shutdown(self, *, forget: bool = False) -> None:
        """Kill every pod at once; with `forget`, drop their records too."""
        for uid in list(self.records):
            self.request_kill(uid, grace_seconds=0, exact=True)
        self.run_due()
        if forget:
            for uid in list(self.records):
                self.forget(uid)

    # -- Supervisor hooks ----------------------------------------------------------------------------------
    def supports_recursive_read_only(self) -> bool:
        """A simulated node stands for a Kubernetes 1.32 node on containerd 2 and Linux 5.12 or later, whose runtime
        makes recursive read-only mounts (`kjobs.node.recursive_read_only`)."""
        return True

    def _call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        slot: list[Callable[[], None] | None] = [callback]
        heapq.heappush(self._heap, (self.clock.now() + max(delay, 0.0), next(self._seq), slot))
        if self._scheduled is not None:
            self._scheduled.set()

        def cancel() -> None:
            slot[0] = None

        return cancel

    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        outcome = self.outcome(record.pod, container, number)
        attempt = Attempt(
            container=str(container["name"]),
            number=number,
            container_id=f"sim://{self._id_prefix}{next(self._ids):016x}",
            started_at=self.clock.now(),
            started=self.start_report_delay <= 0,
        )
        if outcome.output:  # most attempts print nothing: no entry for them (`logs` reads b"")
            self._outputs[attempt.container_id] = outcome.output
            failing = outcome.oom or outcome.exit_code != 0
            if failing and container.get("terminationMessagePolicy") == "FallbackToLogsOnError":
                attempt.message = fallback_message(outcome.output)
        if outcome.duration <= 0 and self.instant_exits_at_start:
            # Ended by the time its status is generated: the kubelet (PLEG) would see it exited, never running,
            # and write only the terminal status, as `kjobs run` does for a process ending within its
            # START_REPORT_DELAY. Recorded as ended now, so the supervisor's sync publishes just that.
            attempt.finished_at = attempt.started_at
            attempt.started = True
            attempt.oom = outcome.oom
            attempt.exit_code, attempt.signal = (137, signals.SIGKILL) if outcome.oom else (outcome.exit_code, None)
            return attempt
        self._outcomes[attempt.container_id] = outcome
        if outcome.oom:
            self._schedule_exit(record.uid, attempt, outcome.duration, 137, signals.SIGKILL, oom=True)
        else:
            self._schedule_exit(record.uid, attempt, outcome.duration, outcome.exit_code, None)
        if not attempt.started:
            self._call_later(self.start_report_delay, lambda: self._report_started(record.uid, attempt))
        return attempt

    def _report_started(self, uid: str, attempt: Attempt) -> None:
        """The attempt reads Running from now on, unless it ended first (then it read its end)."""
        if attempt.running and not attempt.started:
            attempt.started = True
            self.sync(uid)

    def _schedule_exit(
        self, uid: str, attempt: Attempt, delay: float, exit_code: int, signum: int | None, *, oom: bool = False
    ) -> None:
        previous = self._exits.pop(attempt.container_id, None)
        if previous is not None:
            previous[1]()
        if math.isinf(delay):  # it never exits by itself (`sleep infinity`): only a signal ends it
            self._exits[attempt.container_id] = (math.inf, _never_cancelled)
            return

        def fire() -> None:
            self._exits.pop(attempt.container_id, None)
            self._outcomes.pop(attempt.container_id, None)  # read only while the attempt runs (`_signal`)
            if attempt.running:
                attempt.started = True  # it ran (a start and an exit may be reported together)
                self.exited(uid, attempt, exit_code=exit_code, signal=signum, oom=oom)

        self._exits[attempt.container_id] = (self.clock.now() + delay, self._call_later(delay, fire))

    def _abandon(self, attempt: Attempt) -> None:
        """`fail`: the attempt's scheduled exit is dropped."""
        pending = self._exits.pop(attempt.container_id, None)
        if pending is not None:
            pending[1]()

    def _signal(self, record: PodRecord, attempt: Attempt, signum: int) -> None:
        if not attempt.running:
            return
        pending = self._exits.get(attempt.container_id)
        if signum == signals.SIGKILL:
            self._schedule_exit(record.uid, attempt, 0.0, 128 + signum, signum)
            return
        outcome = self._outcomes.get(attempt.container_id, Outcome())
        if outcome.term_exit_code is None and scope_of(record.pod.get("spec") or {}, signum) == INIT:
            return  # dropped, as the kernel drops it for a namespace's init with no handler
        code = 128 + signum if outcome.term_exit_code is None else outcome.term_exit_code
        when = self.clock.now() + outcome.term_delay
        if pending is None or when < pending[0]:
            self._schedule_exit(record.uid, attempt, outcome.term_delay, code, signum if code == 128 + signum else None)


def _never_cancelled() -> None:
    """The cancel of an exit that was never scheduled."""


async def _once(data: bytes) -> AsyncIterator[bytes]:
    if data:
        yield data
