"""Leader election: one running instance of each controller per API server, through Lease objects.

kube-controller-manager and kube-scheduler run several replicas and let only the holder of a Lease work
(client-go's `tools/leaderelection`, with kube-controller-manager's defaults: a 15 s lease, renewed every 2 s,
given up when not renewed for 10 s). kjobs elects per controller — Lease `kube-system/kjobs-<controller>`
(the Job controller with `--managed-by NAME` has a Lease of its own per NAME) — so that `kjobs up --controllers
'*,-job'` and `kjobs controller --controllers job` split the work, while a second Job controller pointed at the
same API server waits instead of creating every pod twice and counting every failure twice.

The rules are client-go's: a Lease is free when it has no holder, or when its record has not changed for its
`leaseDurationSeconds` as this candidate observed it (its own clock, never the holder's `renewTime`, so clock
skew does not matter); taking it from another holder counts a `leaseTransitions`; a holder that stops cleanly
releases it (no holder, a 1 s duration). One addition: a holder records which process it is (annotation
`kjobs.io/holder-process`), and a candidate on the same machine does not wait out the lease of a holder whose
process is gone — a killed `kjobs controller` or `kjobs up` restarted at once takes over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.resources import LEASES
from kjobs.clock import Clock
from kjobs.node import leftovers
from kjobs.node.nodestatus import micro_time

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
HOLDER_PROCESS = "kjobs.io/holder-process"
"""Annotation: `<machine>/<pid>-<start time>` of the holder's process (machine: boot id and pid namespace)."""


@dataclass(frozen=True, slots=True)
class ElectionTiming:
    """kube-controller-manager's `--leader-elect-lease-duration`, `-renew-deadline` and `-retry-period`."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def lease_name(controller: str, managed_by: str | None = None) -> str:
    """The Lease a controller is elected on: `kjobs-<controller>`; for a Job controller of `spec.managedBy`
    NAME, one per NAME (made a DNS subdomain: lower case, other characters as `-`)."""
    if managed_by is None or controller != "job":
        return f"kjobs-{controller}"
    tail = re.sub(r"[^a-z0-9.-]+", "-", managed_by.lower()).strip("-.") or "x"
    return f"kjobs-job-{tail}"[:253].rstrip("-.")


def new_identity() -> str:
    """kube-controller-manager's form: the host name, `_`, a fresh UUID (two candidates never share one)."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def this_process() -> str:
    """What `HOLDER_PROCESS` says of this process."""
    pid = os.getpid()
    return f"{_machine()}/{pid}-{leftovers.start_time(pid) or 0}"


def _machine() -> str:
    """This kernel boot and pid namespace: a pid read in a holder's record means this process table only here."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return "unknown"
    return f"{boot}.{namespace}"


def holder_gone(process: str | None) -> bool:
    """The recorded holder process ran on this machine and runs no more."""
    if not process:
        return False
    machine, _, owner = process.rpartition("/")
    return machine == _machine() and machine != "unknown" and not leftovers.alive(owner)


def next_spec(spec: Obj, identity: str, now: float, observed_at: float, lease_duration: float) -> Obj | None:
    """The Lease spec that acquires or renews it for `identity` at `now`, or None while another holder's lease
    is valid (its record unchanged for less than its duration since `observed_at`). Pure: client-go's
    `tryAcquireOrRenew` decision."""
    holder = spec.get("holderIdentity") or ""
    duration = spec.get("leaseDurationSeconds") or lease_duration
    if holder and holder != identity and observed_at + duration > now:
        return None
    mine = holder == identity
    stamp = micro_time(now)
    return {
        "holderIdentity": identity,
        "leaseDurationSeconds": int(lease_duration),
        "acquireTime": (spec.get("acquireTime") or stamp) if mine else stamp,
        "renewTime": stamp,
        "leaseTransitions": int(spec.get("leaseTransitions") or 0) + (0 if mine else 1),
    }


class LeaderElector:
    """Campaigns for one Lease, holds it, and releases it, for one set of components."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        name: str,
        *,
        identity: str | None = None,
        namespace: str = LEASE_NAMESPACE,
        timing: ElectionTiming | None = None,
        recorder: EventRecorder | None = None,
        process: str | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.name = name
        self.namespace = namespace
        self.identity = identity or new_identity()
        self.timing = timing or ElectionTiming()
        self.recorder = recorder
        self.process = process if process is not None else this_process()
        self.holder = ""
        """The holder last seen (this candidate's identity while it leads)."""
        self._observed: Obj | None = None  # the spec last read, and when it changed
        self._observed_at = 0.0
        self.leading = False
        self._last_error = ""

    @property
    def last_error(self) -> str:
        """The last failed attempt's error, as logged ("" once an attempt succeeded)."""
        return self._last_error

    @property
    def lock(self) -> str:
        """`namespace/name`, as client-go logs it."""
        return f"{self.namespace}/{self.name}"

    async def acquire(self, on_wait: Callable[[str], None] | None = None) -> None:
        """Return once this candidate holds the Lease; `on_wait(holder)` each time another holder is seen."""
        told = ""
        while not await self.try_acquire_or_renew():
            if on_wait is not None and self.holder and self.holder != told:
                told = self.holder
                on_wait(self.holder)
            await self.clock.sleep(self.timing.retry_period)

    async def hold(self) -> None:
        """Renew every retry period; return when no renewal succeeded for the renew deadline (leadership
        lost: the caller stops what it leads, before anyone else may take the Lease)."""
        last = self.clock.now()
        while True:
            await self.clock.sleep(self.timing.retry_period)
            if await self.try_acquire_or_renew():
                last = self.clock.now()
            elif self.clock.now() - last >= self.timing.renew_deadline or (self.holder and not self.leading):
                log.error("leaderelection lost: %s (holder now %r)", self.lock, self.holder)
                self.leading = False
                return

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this candidate holds the Lease after it."""
        now = self.clock.now()
        try:
            lease: Obj | None = await self.client.get(LEASES, self.namespace, self.name)
        except ApiError as exc:
            if exc.code != 404:
                self._warn(f"error retrieving resource lock {self.lock}: {exc}")
                return False
            lease = None
        except Exception as exc:  # the API server is unreachable: the renew deadline decides
            self._warn(f"error retrieving resource lock {self.lock}: {exc}")
            return False
        spec = dict((lease or {}).get("spec") or {})
        if spec != self._observed:
            self._observed, self._observed_at = spec, now
        self.holder = str(spec.get("holderIdentity") or "")
        annotations = ((lease or {}).get("metadata") or {}).get("annotations") or {}
        observed_at = self._observed_at
        if self.holder != self.identity and holder_gone(annotations.get(HOLDER_PROCESS)):
            observed_at = -float("inf")
        wanted = next_spec(spec, self.identity, now, observed_at, self.timing.lease_duration)
        if wanted is None:
            self.leading = False
            return False
        took_over = not self.leading
        try:
            if lease is None:
                wanted["leaseTransitions"] = 0  # a new Lease has had no transition (client-go creates it so)
                written = await self.client.create(LEASES, self.namespace, self._lease(wanted), handover=True)
            else:
                body = self._lease(wanted)
                body["metadata"] = {
                    **lease["metadata"],
                    "annotations": {**annotations, HOLDER_PROCESS: self.process},
                }
                written = await self.client.update(LEASES, self.namespace, body)
        except ApiError as exc:  # 409: another candidate wrote first; it is read again next time
            if exc.code != 409:
                self._warn(f"error writing lease {self.lock}: {exc}")
            return False
        except Exception as exc:
            self._warn(f"error writing lease {self.lock}: {exc}")
            return False
        self._last_error = ""
        self._observed, self._observed_at = dict(written.get("spec") or {}), now
        self.holder, self.leading = self.identity, True
        if took_over:
            log.info("successfully acquired lease %s", self.lock)
            if self.recorder is not None:
                self.recorder.event(written, "Normal", "LeaderElection", f"{self.identity} became leader")
        return True

    async def release(self) -> None:
        """Give the Lease up at a clean stop (no holder, a 1 s duration), so a successor need not wait."""
        if not self.leading:
            return
        self.leading = False
        with contextlib.suppress(Exception):
            lease = await self.client.get(LEASES, self.namespace, self.name)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            stamp = micro_time(self.clock.now())
            body = {
                **lease,
                "spec": {
                    "leaseDurationSeconds": 1,
                    "acquireTime": stamp,
                    "renewTime": stamp,
                    "leaseTransitions": int(spec.get("leaseTransitions") or 0),
                },
            }
            await self.client.update(LEASES, self.namespace, body)

    def _warn(self, text: str) -> None:
        """Log a failed attempt, once until it fails otherwise or succeeds (attempts repeat every 2 s; a 403 on
        a cluster that does not let this user write Leases would fill the terminal)."""
        if text != self._last_error:
            self._last_error = text
            log.warning("%s", text)

    def _lease(self, spec: Obj) -> Obj:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "annotations": {HOLDER_PROCESS: self.process},
            },
            "spec": spec,
        }


async def lead(
    elector: LeaderElector,
    start: Callable[[], Awaitable[None]],
    stop: Callable[[], Awaitable[None]],
    *,
    on_wait: Callable[[str], None] | None = None,
    on_lost: Callable[[], None] | None = None,
    started: bool = False,
) -> None:
    """Campaign, `start` once leading, hold the Lease; when it is lost, `stop`, tell `on_lost` and return.
    Cancelled (a clean stop), it stops what it started and releases the Lease. `started`: the caller already won
    the Lease (`try_acquire_or_renew`) and started what it leads."""
    try:
        if not started:
            await elector.acquire(on_wait)
            await start()
            started = True
        await elector.hold()
        started = False
        await stop()
        if on_lost is not None:
            on_lost()
    finally:
        if started:
            with contextlib.suppress(Exception):
                await asyncio.shield(stop())
            await asyncio.shield(elector.release())
