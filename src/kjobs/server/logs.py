"""The `pods/{name}/log` seam: where container logs come from.

The node agent owns the log files; the server only streams what a `LogSource` yields. The default source
knows no running containers and answers the way a kubelet does before a container has started (400
`container "main" in pod "p" is waiting to start: ContainerCreating`), which is also what kubectl users see
for a Pending pod on a real cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from kjobs.api.errors import bad_request
from kjobs.api.types import Obj


@dataclass(frozen=True)
class LogOptions:
    """The `PodLogOptions` query parameters the server passes through."""

    container: str
    follow: bool = False
    tail_lines: int | None = None
    timestamps: bool = False
    since_seconds: int | None = None
    limit_bytes: int | None = None
    previous: bool = False


class LogSource(Protocol):
    """Opens a container's log; raises `ApiError` (400/404) when there is none to read yet."""

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        """An async iterator of log chunks (ends when the log ends, or when the container exits if following)."""
        ...


def waiting_error(pod: Obj, container: str) -> Exception:
    """The kubelet's 400 for a container that has not started, with the waiting reason if the pod has one."""
    name = (pod.get("metadata") or {}).get("name", "")
    reason = "ContainerCreating"
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == container:
            reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason") or reason
    return bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')


class NoLogs:
    """The default `LogSource`: no node agent, so every container is still waiting to start."""

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        """Always raise the kubelet's waiting-to-start error."""
        raise waiting_error(pod, options.container)
