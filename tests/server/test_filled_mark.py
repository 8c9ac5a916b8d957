"""An update skips `zerotimes.fill` when it keeps the members the walk reads of a stored object an update marked
filled (`ApiService._filled`, `Store.filled`, docs/perf47.md): it stores what the walk would have given."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.server import zerotimes
from kjobs.server.registry import Resource
from kjobs.server.service import ApiService
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.store import MemoryStore
from tests.support import local_api

FLAKY = {
    "containers": {
        "runTime": {"constant": "30s"},
        "oomKillProbability": 0.05,
        "exitCodes": [{"code": 0, "weight": 0.8}, {"code": 1, "weight": 0.15}, {"code": 42, "weight": 0.05}],
    },
    "disruptions": [{"kind": "drain", "ratePerPodHour": 6}, {"kind": "preempt", "ratePerPodHour": 6}],
}


def job(completions: int, parallelism: int) -> Obj:
    container = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}}
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "filled", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": parallelism,
            "backoffLimitPerIndex": 2,
            "template": template,
        },
    }


@pytest.mark.parametrize("model", [None, FLAKY], ids=["instant", "flaky"])
def test_every_update_of_a_simulation_stores_what_the_walk_gives(
    monkeypatch: pytest.MonkeyPatch, model: Obj | None
) -> None:
    """Each update's `_filled` is compared with `zerotimes.fill` of the same object: the same object when the walk
    adds nothing, the same bytes when it does. With instant containers every finalizer's removal follows its
    pod's last status write and skips the walk; with graceful deletions (drains, preemptions, the Job's own) a
    removal follows the deletion's mark, a copy, and walks."""
    original = ApiService._filled
    seen = {"skipped": 0, "walked": 0}

    def checked(self: ApiService, r: Resource, new: Obj, old: Obj, subresource: str) -> Obj:
        out = original(self, r, new, old, subresource)
        expected = zerotimes.fill(new, r.group, r.kind)
        assert (out is new) == (expected is new)
        assert orjson.dumps(out) == orjson.dumps(expected)
        kept = subresource != "status" and zerotimes.kept(new, old, r.group, r.kind)
        skipped = kept and self.store.filled(r.store_key, old)
        seen["skipped" if skipped else "walked"] += 1
        return out

    monkeypatch.setattr(ApiService, "_filled", checked)
    options = SimulationOptions(seed=5) if model is None else SimulationOptions(model=parse_model(model), seed=5)
    result = simulate(job(120, 30), options)
    assert result.outcome in ("Complete", "Failed")
    assert seen["skipped"] >= (result.pods_created if model is None else 20)
    assert seen["walked"] >= 100


def _pod(name: str, status: Obj | None = None) -> Obj:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {}, "status": status or {}}


def test_the_store_says_filled_only_of_its_current_shared_object_an_update_said_was_filled() -> None:
    async def scenario() -> None:
        store = MemoryStore()
        await store.acreate("pods", "default", "a", _pod("a"), adopt=True)
        shared = store.get_shared("pods", "default", "a")
        assert not store.filled("pods", "default", "a", shared)  # a create says nothing
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Pending"}), adopt=True)
        assert not store.filled("pods", "default", "a", store.get_shared("pods", "default", "a"))  # nor did it
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Running"}), adopt=True, filled=True)
        shared = store.get_shared("pods", "default", "a")
        assert store.filled("pods", "default", "a", shared)
        assert not store.filled("pods", "default", "a", store.get("pods", "default", "a"))  # a decode
        assert not store.filled("pods", "default", "b", shared)  # another key
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Failed"}), adopt=True)  # the next write
        assert not store.filled("pods", "default", "a", shared)
        assert not store.filled("pods", "default", "a", store.get_shared("pods", "default", "a"))
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Running"}), adopt=True, filled=True)
        shared = store.get_shared("pods", "default", "a")
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Failed"}), filled=True)  # not handed over
        assert not store.filled("pods", "default", "a", shared)
        assert not store.filled("pods", "default", "a", store.get_shared("pods", "default", "a"))
        await store.aupdate("pods", "default", "a", _pod("a", {"phase": "Running"}), adopt=True, filled=True)
        shared = store.get_shared("pods", "default", "a")
        await store.adelete("pods", "default", "a")
        assert not store.filled("pods", "default", "a", shared)

    asyncio.run(scenario())


TIME = "2026-01-01T00:00:00Z"
CONDITIONS = [
    [{"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": TIME}],
    [{"type": "Ready", "status": "True", "lastTransitionTime": TIME}],  # lacks lastProbeTime
    [],
]
ABSENT = object()


def _members(kind: str) -> list[Any]:
    if kind == "Lease":
        return [ABSENT, None, {}, {"holderIdentity": "n1"}]
    return [
        ABSENT,
        None,
        {},
        *({"phase": "Running", "conditions": c} for c in CONDITIONS),
        {"containers": [{"name": "c"}]},
        {"volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]},  # lacks creationTimestamp
    ]


@st.composite
def pair(draw: st.DrawFn) -> tuple[str, str, Obj, Obj]:
    group, kind = draw(st.sampled_from([("", "Pod"), ("coordination.k8s.io", "Lease"), ("batch", "Job")]))
    pool = _members(kind)
    fields = ["spec", "status", "metadata"]
    old: Obj = {"apiVersion": "v1", "kind": kind}
    new: Obj = {"apiVersion": "v1", "kind": kind}
    for field in fields:
        value = draw(st.sampled_from(range(len(pool))))
        if pool[value] is not ABSENT:
            old[field] = pool[value]
        choice = draw(st.sampled_from(["same", "copy", "other"]))
        if choice == "same":
            if field in old:
                new[field] = old[field]
        elif choice == "copy":
            if field in old:
                new[field] = orjson.loads(orjson.dumps(old[field]))
        else:
            other = pool[draw(st.sampled_from(range(len(pool))))]
            if other is not ABSENT:
                new[field] = other
    return group, kind, new, old


@settings(max_examples=500, deadline=None)
@given(pair())
def test_an_object_keeping_what_the_walk_reads_is_filled_as_the_one_it_kept_them_from(
    case: tuple[str, str, Obj, Obj],
) -> None:
    group, kind, new, old = case
    if zerotimes.kept(new, old, group, kind):
        assert (zerotimes.fill(new, group, kind) is new) == (zerotimes.fill(old, group, kind) is old)


def test_a_finalizer_removal_after_a_write_that_did_not_fill_walks() -> None:
    """The binding writes the pod straight to the store (no walk): a condition lacking `lastProbeTime` written so
    gets its null at the next update through the API, though that update keeps the spec and status."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "finalizers": ["example.com/keep"]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        await client.create(PODS, "default", body)
        service = client.service
        stored = service.store.get("pods", "default", "p", shared=True)
        assert stored is not None
        status = {**stored["status"], "conditions": [{"type": "Ready", "status": "False"}]}  # no times
        unfilled = await service.store.update(
            "pods",
            {**stored, "metadata": dict(stored["metadata"]), "status": status},
            expected_rv=stored["metadata"]["resourceVersion"],
        )
        assert "lastProbeTime" not in unfilled["status"]["conditions"][0]
        patched = await client.patch(PODS, "default", "p", {"metadata": {"finalizers": None}})
        assert patched["status"]["conditions"][0]["lastProbeTime"] is None
        assert patched["spec"] == unfilled["spec"]

    asyncio.run(scenario())
