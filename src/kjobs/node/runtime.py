"""The container runtime seam of the node agent: start pods, watch their status, kill them, read logs.

Design note: the node agent (registering the Node, watching pods bound to it, patching their status,
eviction, shutdown) talks to a `ContainerRuntime` and nothing else. Two implementations exist:
`ProcessRuntime` runs containers as local processes; `SimulatedRuntime` runs none and takes each
container's outcome from a function, in the virtual time of an injected clock (`kjobs simulate`, tests).
Both report every change of a pod's Kubernetes `PodStatus` through the `on_status` callback given at
construction, and expose the latest status on the pod's `PodHandle`. Time comes from a `kjobs.clock.Clock`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from kjobs.api.types import Obj
from kjobs.node.envvars import EnvSources
from kjobs.node.observations import KillReason

StatusCallback = Callable[[str, Obj], None]
"""Called with (pod uid, new status) on every change of a pod's status."""


class PodHandle:
    """A pod admitted by a runtime: its latest status and whether it reached its final phase."""

    def __init__(self, pod: Obj) -> None:
        meta = pod.get("metadata", {})
        self.uid: str = str(meta.get("uid", ""))
        self.namespace: str = str(meta.get("namespace", ""))
        self.name: str = str(meta.get("name", ""))
        self.status: Obj = {}
        self.terminal = False
        self.on_terminal: Callable[[str], None] | None = None
        """Called with the pod's uid once it reaches its final phase (the node agent's admission bookkeeping)."""
        self._waiters: list[asyncio.Future[Obj]] = []

    @property
    def phase(self) -> str:
        return str(self.status.get("phase", ""))

    def publish(self, status: Obj, *, terminal: bool) -> None:
        """Record a new status (runtimes only)."""
        self.status = status
        if terminal and not self.terminal:
            self.terminal = True
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(status)
            self._waiters.clear()
            if self.on_terminal is not None:
                self.on_terminal(self.uid)

    async def wait(self) -> Obj:
        """Wait until the pod is in its final phase and nothing of it runs; returns that status."""
        if self.terminal:
            return self.status
        waiter: asyncio.Future[Obj] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return await waiter


class ContainerRuntime(Protocol):
    """What the node agent needs from a container runtime."""

    async def run_pod(self, pod: Obj) -> PodHandle:
        """Admit the pod (bound to this node) and start its containers; idempotent per pod uid."""
        ...

    def get(self, uid: str) -> PodHandle | None:
        """The handle of an admitted pod."""
        ...

    def adopt(self, pod: Obj) -> PodHandle | None:
        """Admit a pod whose containers ran on this node before the agent restarted, as they are or ended
        (`kjobs.node.adoption`); None when the runtime knows nothing of it."""
        ...

    def release_unclaimed(self, uids: set[str]) -> None:
        """Stop the containers a previous agent left for pods not among `uids` (no longer bound here)."""
        ...

    def stop_recovered(self, uid: str, grace_seconds: float) -> None:
        """Stop what a previous agent left running for a pod this agent will not run (terminal in the API, or
        gone): SIGTERM, then SIGKILL after `grace_seconds` (at once for 0)."""
        ...

    def update_pod(self, pod: Obj) -> None:
        """Take a newer version of an admitted pod (its metadata and others' conditions) and re-publish."""
        ...

    def starting(self, uid: str) -> bool:
        """Whether a container start of the pod awaits the runtime's answer (a status follows it)."""
        ...

    async def kill_pod(self, uid: str, *, grace_seconds: float, reason: KillReason | None = None) -> None:
        """Stop the pod: SIGTERM, then SIGKILL after the grace period; `reason` for node-initiated kills."""
        ...

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
        """The container's output; raises ApiError(400) at once when there is none to show (kubelet messages).
        `timestamps` puts each line's time first; `since_seconds` (before the runtime's now) or `since_time`
        (epoch seconds) leaves out older lines."""
        ...

    def provide_env_sources(self, uid: str, sources: EnvSources | None) -> None:
        """The ConfigMaps and Secrets the pod's containers read (`kjobs.node.envvars.env_references`), given
        before the pod is run and again while a container waits for one: containers that could not be
        configured are tried again; None forgets them (the pod will not run)."""
        ...

    def forget(self, uid: str) -> None:
        """Drop a terminal pod's records and files (the pod object was removed from the API)."""
        ...

    async def shutdown(self, *, forget: bool = False) -> None:
        """Kill everything at once and release the runtime's resources; with `forget`, also forget every pod
        (`forget`: records and files)."""
        ...
