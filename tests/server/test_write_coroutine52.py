"""Stop 52: `ApiService._write` is no coroutine: it defaults and admits the update and hands back
`_write_checked`'s coroutine (a Service's wrapped in `_released`, which releases what it holds), one coroutine
fewer a write. Stop 51's `_write` is kept here; the same writes are run through a fresh service with each (pods
created, status-patched, updated, refused, in conflict; Services created, retyped to NodePort, refused by
validation after their ports were allocated, then those ports taken by another): the same answers and errors, the
same stored objects, and no IP or port left held."""

from __future__ import annotations

import asyncio
import copy
import re
import warnings
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.server import service as S
from kjobs.server.registry import lookup
from kjobs.server.storage import Storage
from kjobs.store.memory import MemoryStore

PODS, SERVICES = lookup("", "v1", "pods"), lookup("", "v1", "services")
SMP = "application/strategic-merge-patch+json"


async def old_write(
    self: Any,
    r: Any,
    old: Any,
    new: Any,
    *,
    subresource: str,
    expected_rv: str | None,
    manager: str | None,
    operation: str,
    dry_run: bool,
    warnings: Any = None,
) -> Any:
    """Stop 51's `_write`."""
    if subresource == "finalize":
        if (finalize_hook := r.hook("default_finalize")) is not None:
            new = finalize_hook(new)
    elif subresource != "status":
        new = self._admit(r, self._default(r, new, old), subresource, create=False, old=old)
    elif (status_hook := r.hook("default_status")) is not None:
        new = status_hook(new)
    held = None
    if r.kind == "Service" and not subresource:
        held = self._begin_service_write(new, old)
    try:
        return await self._write_checked(
            r, old, new, subresource=subresource, expected_rv=expected_rv, manager=manager,
            operation=operation, dry_run=dry_run, warnings=warnings,
        )  # fmt: skip
    finally:
        if held is not None:
            held.release()


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "finalizers": ["batch.kubernetes.io/job-tracking"]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    }


def service(name: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}}
    body["spec"] = {"ports": [{"port": 80, "protocol": "TCP"}], "selector": {"app": "a"}, **spec}
    return body


async def script() -> list[Any]:
    svc = S.ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
    await svc.ensure_namespaces()
    out: list[Any] = []

    async def step(call: Any) -> None:
        try:
            result = await call
            out.append(("ok", copy.deepcopy(result.obj), result.code))
        except ApiError as err:
            out.append(("error", err.code, err.reason, str(err)))

    await step(svc.create(PODS, "default", pod("p")))
    await step(svc.patch(PODS, "default", "p", SMP, {"status": {"phase": "Running"}}, subresource="status"))
    await step(svc.patch(PODS, "default", "p", SMP, {"metadata": {"$deleteFromPrimitiveList/finalizers": []}}))
    body = copy.deepcopy(svc.store.get("pods", "default", "p"))
    body["metadata"]["finalizers"] = []
    stale = copy.deepcopy(body)
    await step(svc.update(PODS, "default", "p", body))
    stale["metadata"]["labels"] = {"x": "y"}
    await step(svc.update(PODS, "default", "p", stale))  # a stale resourceVersion: Conflict
    await step(svc.patch(PODS, "default", "p", SMP, {"spec": {"containers": [{"name": "main", "image": "b2"}]}}))
    await step(svc.patch(PODS, "default", "p", SMP, {"metadata": {"labels": {"bad key!": "v"}}}))  # invalid
    await step(svc.create(SERVICES, "default", service("s", type="NodePort")))
    await step(svc.patch(SERVICES, "default", "s", SMP, {"spec": {"type": "ClusterIP"}}))
    await step(svc.patch(SERVICES, "default", "s", SMP, {"spec": {"type": "NodePort", "sessionAffinity": "Bad"}}))
    await step(svc.create(SERVICES, "default", service("t", type="NodePort")))
    await step(svc.patch(SERVICES, "default", "t", SMP, {"spec": {"type": "ClusterIP"}}))
    await step(svc.patch(SERVICES, "default", "s", SMP, {"spec": {"type": "NodePort"}}))
    items = [copy.deepcopy(svc.store.list(k, None)[0]) for k in ("pods", "services")]
    held = svc.service_allocator.held_ips, svc.service_allocator.held_ports
    out.append(("stored", items, "held", sorted(held[0]), sorted(held[1])))
    return out


RANDOM = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "UID"),
    (re.compile(r"kube-api-access-[a-z0-9]{5}"), "kube-api-access-XXXXX"),
    (re.compile(r"\b\d+\.\d+\.\d+\.\d+\b"), "IP"),
    (re.compile(r"'nodePort': \d+"), "'nodePort': PORT"),
]
"""What is drawn at random on each run: uids, the token volume's name, cluster IPs, node ports."""


def drawn(steps: list[Any]) -> str:
    text = repr(steps)
    for pattern, fixed in RANDOM:
        text = pattern.sub(fixed, text)
    return text


def test_writes_answer_as_with_stop_51s_write() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a coroutine never awaited fails the test
        new = asyncio.run(script())
        with pytest.MonkeyPatch.context() as m:
            m.setattr(S.ApiService, "_write", old_write)
            old = asyncio.run(script())
    assert drawn(new) == drawn(old)
    assert any(step[0] == "error" for step in new) and any(step[0] == "ok" for step in new)
    assert new[-1][-2:] == ([], [])  # nothing left held
