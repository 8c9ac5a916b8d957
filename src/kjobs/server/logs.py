"""The `pods/{name}/log` seam: where container logs come from.

The node agent owns the log files; the server only streams what a `LogSource` yields. The default source
knows no running containers and answers the way a kubelet does before a container has started (400
`container "main" in pod "p" is waiting to start: ContainerCreating`), which is also what kubectl users see
for a Pending pod on a real cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from kjobs.api.errors import ErrorType, FieldError, bad_request, invalid
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.server.params import parse_int64


@dataclass(frozen=True)
class LogOptions:
    """The `PodLogOptions` query parameters the server passes through."""

    container: str
    follow: bool = False
    tail_lines: int | None = None
    timestamps: bool = False
    since_seconds: int | None = None
    since_time: float | None = None
    """`sinceTime` as epoch seconds."""
    limit_bytes: int | None = None
    previous: bool = False


def log_options(query: Mapping[str, str], name: str) -> LogOptions:
    """The `PodLogOptions` of a `pods/{name}/log` query, checked as the API server's `ValidatePodLogOptions`
    (pkg/apis/core/validation): 422 for a negative `tailLines`, a `limitBytes` or `sinceSeconds` under 1, or
    both `sinceSeconds` and `sinceTime`; 400 for a value that is not a number or an RFC 3339 time."""

    def number(key: str) -> int | None:
        text = query.get(key)
        return parse_int64(text) if text else None

    def flag(key: str) -> bool:
        return query.get(key, "").lower() in ("true", "1")

    since_time = None
    if query.get("sinceTime"):
        try:
            since_time = parse_time(query["sinceTime"])
        except ValueError:
            raise bad_request(f"sinceTime: Invalid value: {query['sinceTime']!r}: must be an RFC 3339 time") from None
    options = LogOptions(
        container=query.get("container", ""),
        follow=flag("follow"),
        tail_lines=number("tailLines"),
        timestamps=flag("timestamps"),
        since_seconds=number("sinceSeconds"),
        since_time=since_time,
        limit_bytes=number("limitBytes"),
        previous=flag("previous"),
    )
    errors: list[FieldError] = []
    if options.tail_lines is not None and options.tail_lines < 0:
        detail = "must be greater than or equal to 0"
        errors.append(FieldError("tailLines", ErrorType.FieldValueInvalid, detail, options.tail_lines))
    positive = "must be greater than 0"
    if options.limit_bytes is not None and options.limit_bytes < 1:
        errors.append(FieldError("limitBytes", ErrorType.FieldValueInvalid, positive, options.limit_bytes))
    if options.since_seconds is not None and options.since_time is not None:
        detail = "at most one of `sinceTime` or `sinceSeconds` may be specified"
        errors.append(FieldError("", ErrorType.FieldValueForbidden, detail))
    elif options.since_seconds is not None and options.since_seconds < 1:
        errors.append(FieldError("sinceSeconds", ErrorType.FieldValueInvalid, positive, options.since_seconds))
    if errors:
        raise invalid("PodLogOptions", name, errors)
    return options


def validate_container(pod: Obj, container: str) -> str:
    """The container a `pods/{name}/log`, `exec` or `attach` request means, or the API server's 400.

    As `validateContainer` in pkg/registry/core/pod/strategy.go: with no name, a pod's only container (else the
    names to choose from, init containers first, as `podutil.VisitContainers` walks them); a name may be any
    container of the pod, init and ephemeral ones included (`kubectl logs --all-containers` asks for each).
    """
    name = str((pod.get("metadata") or {}).get("name") or "")
    spec = pod.get("spec") or {}
    containers = [str(c.get("name")) for c in spec.get("containers") or []]
    every = [
        str(c.get("name"))
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(key) or []
    ]
    if not container:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]")
    if container not in every:
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


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
