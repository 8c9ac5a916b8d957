"""Stop 40's two informer shortcuts must change nothing a handler sees or does.

- `add_handler(..., unless_same="spec")` does not call a handler for an update that keeps the very `spec` object:
  the taint eviction and node lifecycle controllers, given such an update, return having changed nothing. Fed
  random event sequences, each controller ends in the same state registered with the skip as without it, and a
  skip on the wrong member is seen to differ.
- An informer over a `LocalClient` reads the store's stream itself rather than `LocalClient.watch`'s generator:
  its handlers see the same calls, with the same objects, as one reading through the generator (a subclass that
  replaces `watch` keeps being read through it), and stopping it closes the store's watch.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.base import WatchEvent
from kjobs.client.informer import Handler, Informer
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.controllers.nodelifecycle import NodeLifecycleController
from kjobs.controllers.tainteviction import TaintEvictionController
from tests.hypothesis_budget import examples
from tests.support import local_api, settle


@dataclass
class _Event:
    type: str
    object: Obj


async def _stream(events: list[_Event]) -> AsyncIterator[_Event]:
    for event in events:
        yield event


_ABSENT = object()
SPECS: list[Any] = [None] + [
    {k: v for k, v in (("nodeName", node), ("tolerations", tolerations)) if v is not _ABSENT}
    for node in (_ABSENT, None, "", "n1", "n2")
    for tolerations in (_ABSENT, None, [], [{"key": "k", "operator": "Exists"}], [{"key": "t"}])
]
"""Spec shapes the two handlers tell apart: none, and each node (n1 tainted and not ready) with each toleration list."""

# One step of a pod's life: ("add"|"replace", name, spec index) puts a version with that spec (a new object);
# ("keep", name, phase) puts a version that keeps the cached spec object and changes the status; ("delete", name).
STEP = st.one_of(
    st.tuples(st.sampled_from(["add", "replace"]), st.sampled_from(["a", "b"]), st.integers(0, len(SPECS) - 1)),
    st.tuples(st.just("keep"), st.sampled_from(["a", "b"]), st.sampled_from(["Pending", "Running", "Failed"])),
    st.tuples(st.just("delete"), st.sampled_from(["a", "b"])),
)


def _events(steps: list[tuple[Any, ...]]) -> list[_Event]:
    """The watch events of `steps`, as a store sends them: ADDED, MODIFIED, DELETED; a `keep` shares the spec."""
    cached: dict[str, Obj] = {}
    events: list[_Event] = []
    for rv, step in enumerate(steps, start=1):
        kind, name = step[0], step[1]
        meta = {"name": name, "namespace": "default", "resourceVersion": str(rv)}
        if kind == "delete":
            if name in cached:
                events.append(_Event("DELETED", {**cached.pop(name), "metadata": meta}))
            continue
        if kind == "keep":
            if name not in cached:
                continue
            pod = {**cached[name], "metadata": meta, "status": {"phase": step[2]}}
        else:
            spec = SPECS[step[2]]
            pod = {"metadata": meta, **({} if spec is None else {"spec": dict(spec)})}
        events.append(_Event("MODIFIED" if name in cached else "ADDED", pod))
        cached[name] = pod
    return events


def _taint_controller(calls: list[Any]) -> TaintEvictionController:
    controller = TaintEvictionController(client=None, clock=FakeClock())  # type: ignore[arg-type]
    controller._started = True
    controller.tainted = {"n1": [{"key": "t", "effect": "NoExecute"}]}
    controller._cancel = lambda key: calls.append(("cancel", key))  # type: ignore[method-assign]
    controller._process_pod = lambda *args: calls.append(("process", args))  # type: ignore[method-assign]
    return controller


def _taint_state(calls: list[Any]) -> tuple[Handler, Any]:
    controller = _taint_controller(calls)
    return controller._on_pod, lambda: (controller._pods_by_node, calls)


def _lifecycle_state(calls: list[Any]) -> tuple[Handler, Any]:
    controller = NodeLifecycleController(client=None, clock=FakeClock())  # type: ignore[arg-type]
    controller._not_ready = lambda name: name == "n1"  # type: ignore[method-assign]

    async def process(key: Any, node: str) -> None:
        calls.append(("process", key, node))

    controller._process_pod = process  # type: ignore[method-assign]
    return controller._on_pod, lambda: (controller._pods_by_node, calls)


async def _feed(events: list[_Event], make: Any, unless_same: str | None) -> Any:
    calls: list[Any] = []
    handler, state = make(calls)
    informer = Informer(None, PODS, clock=FakeClock())  # type: ignore[arg-type]
    informer.add_handler(handler, unless_same=unless_same)
    await informer._consume(_stream(events))
    await asyncio.sleep(0)  # the node lifecycle controller's tasks run
    return state()


def _final(events: list[_Event], make: Any, unless_same: str | None) -> Any:
    return asyncio.run(_feed(events, make, unless_same))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(STEP, max_size=12))
def test_a_handler_skipped_for_an_update_that_keeps_the_spec_ends_as_if_called(steps: list[tuple[Any, ...]]) -> None:
    events = _events(steps)
    for make in (_taint_state, _lifecycle_state):
        assert _final(events, make, "spec") == _final(events, make, None)


def test_the_comparison_sees_a_skip_on_the_wrong_member() -> None:
    """A skip keyed on `status` drops a move to another node that kept the status: the index differs."""
    pod = {"metadata": {"name": "a", "namespace": "default"}, "status": {"phase": "Pending"}}
    status = pod["status"]
    events = [
        _Event("ADDED", {**pod, "spec": {"nodeName": "n2"}}),
        _Event("MODIFIED", {**pod, "spec": {"nodeName": "n1"}, "status": status}),
    ]
    for make in (_taint_state, _lifecycle_state):
        assert _final(events, make, "status") != _final(events, make, None)
        assert _final(events, make, "spec") == _final(events, make, None)


def test_the_skip_passes_adds_deletes_and_changed_members() -> None:
    seen: list[tuple[str | None, str | None]] = []
    plain: list[tuple[str | None, str | None]] = []

    def rv(obj: Obj | None) -> str | None:
        return None if obj is None else obj["metadata"]["resourceVersion"]

    informer = Informer(None, PODS, clock=FakeClock())  # type: ignore[arg-type]
    informer.add_handler(lambda old, new: seen.append((rv(old), rv(new))), unless_same="spec")
    informer.add_handler(lambda old, new: plain.append((rv(old), rv(new))))
    spec = {"nodeName": "n1"}
    meta = {"name": "a", "namespace": "default"}
    events = [
        _Event("ADDED", {"metadata": {**meta, "resourceVersion": "1"}, "spec": spec}),
        _Event("MODIFIED", {"metadata": {**meta, "resourceVersion": "2"}, "spec": spec, "status": {}}),
        _Event("MODIFIED", {"metadata": {**meta, "resourceVersion": "3"}, "spec": dict(spec)}),  # equal, not same
        _Event("MODIFIED", {"metadata": {**meta, "resourceVersion": "4"}}),  # no spec: None is not the spec
        _Event("MODIFIED", {"metadata": {**meta, "resourceVersion": "5"}}),  # None and None: the same
        _Event("DELETED", {"metadata": {**meta, "resourceVersion": "6"}}),
    ]
    asyncio.run(informer._consume(_stream(events)))
    assert plain == [(None, "1"), ("1", "2"), ("2", "3"), ("3", "4"), ("4", "5"), ("5", None)]
    assert seen == [(None, "1"), ("2", "3"), ("3", "4"), ("5", None)]
    informer.remove_handler(informer.handlers[0][0])
    assert len(informer.handlers) == 1


class _Generator(LocalClient):
    """A client whose `watch` is its own (here: `LocalClient`'s, through a subclass): read through it."""

    watched = 0

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        async for event in super().watch(*args, **kwargs):
            assert type(event) is WatchEvent
            self.watched += 1
            yield event


class _Forwarding:
    """A wrapper that forwards every attribute to a client (as the upstream tests' recording client does): its
    class defines no `watch`, so it is read through the wrapped client's `watch`."""

    def __init__(self, client: LocalClient) -> None:
        self.client = client
        self.watched = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        async for event in self.client.watch(*args, **kwargs):
            self.watched += 1
            yield event


class _BareForwarding:
    """Forwards everything, `watch` included, by `__getattr__` alone."""

    def __init__(self, client: LocalClient) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def _pod(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def test_an_informer_over_a_local_client_sees_what_the_clients_watch_gives() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        direct = await local_api(clock)
        through = _Generator(direct.service)
        forwarding = _Forwarding(direct)
        calls: dict[str, list[Any]] = {"direct": [], "instance": [], "through": [], "forwarding": [], "bare": []}
        replaced = LocalClient(direct.service)
        replaced_calls: list[str] = []
        plain_watch = replaced.watch

        def watch_on_the_instance(*args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent]:
            replaced_calls.append("watch")
            return plain_watch(*args, **kwargs)

        replaced.watch = watch_on_the_instance  # type: ignore[method-assign]
        informers = {
            "direct": Informer(direct, PODS, clock=clock),
            "instance": Informer(replaced, PODS, clock=clock),
            "through": Informer(through, PODS, clock=clock),
            "forwarding": Informer(forwarding, PODS, clock=clock),  # type: ignore[arg-type]
            "bare": Informer(_BareForwarding(direct), PODS, clock=clock),  # type: ignore[arg-type]
        }
        for label, informer in informers.items():
            informer.add_handler(lambda old, new, label=label: calls[label].append((old, new)))
            informer.start()
        for informer in informers.values():
            await informer.synced.wait()
        await direct.create(PODS, "default", _pod("before"))  # the list is empty: this one comes by watch
        await direct.create(PODS, "default", _pod("p"))
        await direct.patch(PODS, "default", "p", {"metadata": {"labels": {"app": "y"}}})
        await direct.patch(PODS, "default", "p", {"status": {"phase": "Running"}}, subresource="status")
        await direct.delete(PODS, "default", "p", grace_period_seconds=0)
        await settle(clock, lambda: all(len(seen) >= 5 for seen in calls.values()))
        store = direct.service.store.store
        assert len(store._watchers["pods"]) == 5
        for informer in informers.values():
            await informer.stop()
        assert len(store._watchers["pods"]) == 0  # the direct stream closed when its informer stopped
        assert through.watched == forwarding.watched == 5
        assert replaced_calls == ["watch"]  # a `watch` set on the instance is the one read
        assert len(calls["direct"]) == 5
        # The same calls: equal objects, and the very objects the store shares with its in-process watchers.
        for other in ("instance", "through", "forwarding", "bare"):
            assert calls["direct"] == calls[other]
            for (old_a, new_a), (old_b, new_b) in zip(calls["direct"], calls[other], strict=True):
                assert old_a is old_b and new_a is new_b
        kinds = [(old is None, new is None) for old, new in calls["direct"]]
        assert kinds == [(True, False), (True, False), (False, False), (False, False), (False, True)]

    asyncio.run(scenario())
