"""The Priority admission plugin and the system PriorityClasses, through kjobs' API service.

plugin/pkg/admission/priority/admission.go (`admitPod`, `validatePriorityClass`, `getDefaultPriorityClass`) and
pkg/registry/scheduling/rest/storage_scheduling.go (the system classes created at start); docs/kubernetes-e2e.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS, PRIORITY_CLASSES
from kjobs.clock import FakeClock
from kjobs.server.app import create_app
from kjobs.store import MemoryStore


def run(scenario: Callable[[LocalClient], Awaitable[None]]) -> None:
    """`scenario(client)` against a started API application (built-in namespaces and system classes made)."""

    async def main() -> None:
        app = create_app(MemoryStore(), clock=FakeClock().now)
        await app.startup()
        await scenario(LocalClient(app.service))

    asyncio.run(main())


def pod(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def pc(name: str, value: int, **fields: Any) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


async def refused(call: Awaitable[Any]) -> ApiError:
    with pytest.raises(ApiError) as info:
        await call
    return info.value


def test_system_priority_classes_exist_at_start() -> None:
    async def scenario(c: LocalClient) -> None:
        items, _ = await c.list(PRIORITY_CLASSES, None)
        got = {i["metadata"]["name"]: (i["value"], i.get("globalDefault"), i["preemptionPolicy"]) for i in items}
        assert got == {
            "system-cluster-critical": (2000000000, None, "PreemptLowerPriority"),
            "system-node-critical": (2000001000, None, "PreemptLowerPriority"),
        }
        node_critical = await c.get(PRIORITY_CLASSES, None, "system-node-critical")
        assert node_critical["description"] == (
            "Used for system critical pods that must not be moved from their current node."
        )

    run(scenario)


def test_pod_priority_comes_from_its_class() -> None:
    async def scenario(c: LocalClient) -> None:
        await c.create(PRIORITY_CLASSES, None, pc("polite", 50, preemptionPolicy="Never"))
        created = await c.create(PODS, "default", pod("a", priorityClassName="polite"))
        assert (created["spec"]["priority"], created["spec"]["preemptionPolicy"]) == (50, "Never")
        critical = await c.create(PODS, "default", pod("b", priorityClassName="system-cluster-critical"))
        assert critical["spec"]["priority"] == 2000000000
        plain = await c.create(PODS, "default", pod("c"))
        assert (plain["spec"]["priority"], plain["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")
        assert "priorityClassName" not in plain["spec"]

    run(scenario)


def test_unknown_class_and_contradicting_priority_are_forbidden() -> None:
    async def scenario(c: LocalClient) -> None:
        err = await refused(c.create(PODS, "default", pod("a", priorityClassName="nope")))
        assert (err.code, err.reason, err.message) == (
            403,
            "Forbidden",
            'pods "a" is forbidden: no PriorityClass with name nope was found',
        )
        generated = {**pod(""), "metadata": {"generateName": "j-"}, "spec": pod("a", priorityClassName="nope")["spec"]}
        err = await refused(c.create(PODS, "default", generated))
        # Admission runs before the name is generated: the refusal names the prefix (admission/errors.go).
        assert err.message == 'pods "j-" is forbidden: no PriorityClass with name nope was found'
        err = await refused(c.create(PODS, "default", pod("b", priority=7)))
        assert err.code == 403 and err.message == (
            'pods "b" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority '
            "admission controller computed 0 from the given PriorityClass name"
        )
        await c.create(PRIORITY_CLASSES, None, pc("high", 1000))
        err = await refused(c.create(PODS, "default", pod("c", priorityClassName="high", preemptionPolicy="Never")))
        assert err.code == 403 and err.message == (
            'pods "c" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
            "priority admission controller computed PreemptLowerPriority from the given PriorityClass name"
        )
        same = await c.create(PODS, "default", pod("d", priorityClassName="high", priority=1000))
        assert same["spec"]["priority"] == 1000
        await c.delete(PRIORITY_CLASSES, None, "high")
        err = await refused(c.create(PODS, "default", pod("e", priorityClassName="high")))
        assert err.message == 'pods "e" is forbidden: no PriorityClass with name high was found'

    run(scenario)


def test_global_default_class_names_the_pods_without_one_and_only_one_may_exist() -> None:
    async def scenario(c: LocalClient) -> None:
        await c.create(PRIORITY_CLASSES, None, pc("fallback", 7, globalDefault=True))
        created = await c.create(PODS, "default", pod("a"))
        assert (created["spec"]["priorityClassName"], created["spec"]["priority"]) == ("fallback", 7)
        err = await refused(c.create(PRIORITY_CLASSES, None, pc("other", 8, globalDefault=True)))
        assert (err.code, err.message) == (
            403,
            'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass fallback is already marked as '
            "default. Only one default can exist",
        )
        await c.create(PRIORITY_CLASSES, None, pc("other", 8))
        other = await c.get(PRIORITY_CLASSES, None, "other")
        err = await refused(c.update(PRIORITY_CLASSES, None, {**other, "globalDefault": True}))
        assert err.code == 403 and "PriorityClass fallback is already marked as default" in err.message
        fallback = await c.get(PRIORITY_CLASSES, None, "fallback")
        updated = await c.update(PRIORITY_CLASSES, None, {**fallback, "description": "still the default"})
        assert updated["description"] == "still the default"

    run(scenario)


def test_an_update_keeps_the_admitted_priority() -> None:
    """A PUT without `priority`/`preemptionPolicy` keeps the stored ones (pod validation forbids changing them)."""

    async def scenario(c: LocalClient) -> None:
        await c.create(PRIORITY_CLASSES, None, pc("polite", 50, preemptionPolicy="Never"))
        created = await c.create(PODS, "default", pod("a", priorityClassName="polite"))
        body = {**created, "metadata": {**created["metadata"], "labels": {"x": "1"}}}
        body["spec"] = {k: v for k, v in created["spec"].items() if k not in ("priority", "preemptionPolicy")}
        updated = await c.update(PODS, "default", body)
        assert (updated["spec"]["priority"], updated["spec"]["preemptionPolicy"]) == (50, "Never")

    run(scenario)


def test_a_system_priority_class_cannot_be_deleted() -> None:
    async def scenario(c: LocalClient) -> None:
        err = await refused(c.delete(PRIORITY_CLASSES, None, "system-node-critical"))
        assert (err.code, err.message) == (
            403,
            'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class '
            "and cannot be deleted",
        )
        assert (await c.get(PRIORITY_CLASSES, None, "system-node-critical"))["value"] == 2000001000

    run(scenario)
