"""Stop 51: a store whose writes complete inline (`MemoryStore`) applies an async write without the `_asubmit`
coroutine, and `_apply` checks preconditions only for a write that carries one. Against the path kept here (every
write through `_asubmit`, `_check` always called): the same results, errors and watch events, and no suspension."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.store import MemoryStore
from kjobs.store.base import Op, Store
from kjobs.store.events import Record
from tests.hypothesis_budget import examples


class ThroughSubmit(MemoryStore):
    """Every async write through `_asubmit`, and `_check` made of every update and delete (the forms before)."""

    writes_inline = False

    def _apply(self, ops: list[Op]) -> None:
        # The check `_apply` made of every update and delete of a stored object (each batch here is one write),
        # before anything else of it; what passes goes on as before.
        for op in ops:
            current = self._lookup(op.key)
            if op.kind != "create" and current is not None:
                try:
                    self._check(op, current)
                except ApiError as err:
                    op.error = err
        super()._apply([op for op in ops if op.error is None])


class Counting(MemoryStore):
    checked = 0

    def _check(self, op: Op, current: Record) -> None:
        self.checked += 1
        super()._check(op, current)


WRITE = st.tuples(
    st.sampled_from(["create", "update", "delete"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from([None, "current", "stale", "empty"]),  # resourceVersion precondition
    st.sampled_from([None, "right", "wrong"]),  # uid precondition
    st.integers(0, 2),
)


async def _run(store: Store, writes: list[tuple[Any, ...]]) -> list[Any]:
    watch = store.watch("things", since=None)
    out: list[Any] = []
    for kind, name, rv, uid, n in writes:
        current = store._lookup(("things", "ns", name))
        expected_rv = {
            None: None,
            "current": None if current is None else str(current.revision),
            "stale": "1",
            "empty": "",
        }[rv]
        expected_uid = {None: None, "right": f"u-{name}", "wrong": "nope"}[uid]
        obj: Obj = {"metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}"}, "spec": {"n": n}}
        try:
            if kind == "create":
                result = await store.acreate("things", "ns", name, obj, adopt=True)
            elif kind == "update":
                result = await store.aupdate(
                    "things", "ns", name, obj, expected_rv=expected_rv, expected_uid=expected_uid, adopt=True
                )
            else:
                result = await store.adelete("things", "ns", name, expected_rv=expected_rv, expected_uid=expected_uid)
            out.append(("ok", result))
        except ApiError as err:
            out.append(("error", err.code, str(err)))
    out.append([(e.type, e.raw, e.revision) for e in watch.drain()])
    watch.close()
    return out


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(WRITE, max_size=12))
def test_inline_writes_answer_as_through_asubmit(writes: list[tuple[Any, ...]]) -> None:
    through, inline = ThroughSubmit(), Counting()
    assert asyncio.run(_run(inline, writes)) == asyncio.run(_run(through, writes))
    carrying = sum(1 for _, _, rv, uid, _ in writes if rv not in (None, "empty") or uid is not None)
    assert inline.checked <= carrying  # only a write that carries a precondition is checked


def test_an_inline_write_does_not_suspend() -> None:
    async def scenario() -> list[str]:
        store, log = MemoryStore(), []

        async def other() -> None:
            log.append("other")

        task = asyncio.get_running_loop().create_task(other())
        await store.acreate("things", "ns", "a", {"metadata": {"name": "a", "namespace": "ns"}}, adopt=True)
        await store.aupdate("things", "ns", "a", {"metadata": {"name": "a", "namespace": "ns"}, "spec": {}}, adopt=True)
        await store.adelete("things", "ns", "a")
        log.append("writes")
        await task
        return log

    assert asyncio.run(scenario()) == ["writes", "other"]
