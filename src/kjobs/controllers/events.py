"""Recording Kubernetes Events (core/v1) about objects, as client-go's EventRecorder does, fire-and-forget."""

from __future__ import annotations

import asyncio
import logging
import secrets

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.resources import EVENTS
from kjobs.clock import Clock

log = logging.getLogger(__name__)


class EventRecorder:
    """Writes Events with `source.component` = the controller's name (what `kubectl describe` shows as From)."""

    def __init__(self, client: Client, *, component: str, clock: Clock, host: str = "") -> None:
        self._client = client
        self._component = component
        self._clock = clock
        self._host = host
        self._pending: set[asyncio.Task[None]] = set()

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """Record an Event about `obj` in the background (failures are logged, never raised)."""
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        stamp = format_time(self._clock.now())
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta.get('name')}.{secrets.token_hex(8)}", "namespace": namespace},
            "involvedObject": {
                "apiVersion": obj.get("apiVersion") or "",
                "kind": obj.get("kind") or "",
                "name": meta.get("name") or "",
                "namespace": namespace,
                "uid": meta.get("uid") or "",
                "resourceVersion": meta.get("resourceVersion") or "",
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self._component, **({"host": self._host} if self._host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": self._component,
            "reportingInstance": self._host,
        }
        task = asyncio.get_running_loop().create_task(self._send(namespace, body))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _send(self, namespace: str, body: Obj) -> None:
        try:
            await self._client.create(EVENTS, namespace, body)
        except Exception as exc:
            log.debug("event %s not recorded: %s", body["reason"], exc)

    async def flush(self) -> None:
        """Wait for events in flight (tests, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
