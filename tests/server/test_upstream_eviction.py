"""Upstream rows of pkg/registry/core/pod/storage/eviction_test.go, run against kjobs' Eviction API.

Upstream posts an Eviction to the registry's EvictionREST with a fake PDB client; here the pod and its budget
live in kjobs' in-process API and the Eviction goes through `pods/eviction`. Errors are compared as
upstream's `errToString` renders them: message, reason, then each cause the message does not already end with.
Rows whose pod upstream leaves without a phase run with `Running` (kjobs' API defaults a new pod to `Pending`,
which the eviction lets through without a budget check). Rows, and those left out: docs/upstream-components.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import PDBS, PODS
from kjobs.clock import FakeClock
from kjobs.server.storage import Storage
from tests.controllers.disruption_support import condition, get_or_none
from tests.support import local_api

NIL, IF_HEALTHY, ALWAYS = None, "IfHealthyBudget", "AlwaysAllow"
ALL_POLICIES = (NIL, IF_HEALTHY, ALWAYS)
BUDGET_429 = "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: "


def err_to_string(exc: ApiError | None) -> str:
    """`errToString`."""
    if exc is None:
        return ""
    result = f"{exc.message}: {exc.reason}"
    for cause in (exc.details or {}).get("causes") or []:
        if not exc.message.endswith(cause.get("message", "")):
            result += f": {cause.get('message')}"
    return result


@dataclass(frozen=True)
class Budget:
    allowed: int
    selector: Obj | None = None
    current: int = 0
    desired: int = 0


async def make(
    clock: FakeClock,
    pod_name: str,
    *,
    phase: str = "Running",
    ready: bool | None = None,
    budget: Budget | None = None,
    policy: str | None = None,
    terminating: bool = False,
) -> Any:
    """`validNewPod` labelled a=true on node foo, in `phase`, and a PDB foo (status as given) in default."""
    client = await local_api(clock)
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name, "namespace": "default", "labels": {"a": "true"}},
        "spec": {"nodeName": "foo", "restartPolicy": "Always", "containers": [{"name": "foo", "image": "test"}]},
    }
    await client.create(PODS, "default", body)
    pod = await client.get(PODS, "default", pod_name)
    pod["status"]["phase"] = phase
    if ready is not None:
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    await client.update(PODS, "default", pod, subresource="status")
    if terminating:
        await client.delete(PODS, "default", pod_name)  # no kubelet: it stays, being deleted
    if budget is not None:
        selector = {"matchLabels": {"a": "true"}} if budget.selector is None else budget.selector
        spec: Obj = {"selector": selector}
        if policy is not None:
            spec["unhealthyPodEvictionPolicy"] = policy
        pdb = await client.create(
            PDBS,
            "default",
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "foo"}, "spec": spec},
        )
        pdb["status"] = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "disruptionsAllowed": budget.allowed,
            "currentHealthy": budget.current,
            "desiredHealthy": budget.desired,
            "expectedPods": 0,
        }
        await client.update(PDBS, "default", pdb, subresource="status")
    return client


def eviction(name: str, delete_options: Obj | None = None) -> Obj:
    body: Obj = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
    if delete_options is not None:
        body["deleteOptions"] = delete_options
    return body


async def evict(client: Any, url_name: str, body: Obj) -> ApiError | None:
    try:
        await client.post_subresource(PODS, "default", url_name, "eviction", body)
    except ApiError as exc:
        return exc
    return None


GRACE_0 = {"gracePeriodSeconds": 0}

# --------------------------------------------------------------------------------------------------- TestEviction


@dataclass(frozen=True)
class EvictionRow:
    pod: str
    budget: Budget
    error: str = ""
    deleted: bool = False
    phase: str = "Running"
    bad_name: bool = False
    policies: tuple[str | None, ...] = ALL_POLICIES


EVICTION_ROWS = [
    (
        "matching pdbs with no disruptions allowed, pod running",
        EvictionRow(
            "t1",
            Budget(0),
            BUDGET_429 + "The disruption budget foo needs 0 healthy pods and has 0 currently",
            policies=(NIL, IF_HEALTHY),
        ),
    ),
    (
        "matching pdbs with no disruptions allowed, pod pending",
        EvictionRow("t2", Budget(0), deleted=True, phase="Pending"),
    ),
    (
        "matching pdbs with no disruptions allowed, pod succeeded",
        EvictionRow("t3", Budget(0), deleted=True, phase="Succeeded"),
    ),
    (
        "matching pdbs with no disruptions allowed, pod failed",
        EvictionRow("t4", Budget(0), deleted=True, phase="Failed"),
    ),
    ("matching pdbs with disruptions allowed", EvictionRow("t5", Budget(1), deleted=True)),
    ("non-matching pdbs", EvictionRow("t6", Budget(0, {"matchLabels": {"b": "true"}}), deleted=True)),
    (
        "matching pdbs with disruptions allowed but bad name in Url",
        EvictionRow("t7", Budget(1), "name in URL does not match name in Eviction object: BadRequest", bad_name=True),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, empty selector",
        EvictionRow(
            "t8",
            Budget(0, {}),
            BUDGET_429 + "The disruption budget foo needs 0 healthy pods and has 0 currently",
            policies=(NIL, IF_HEALTHY),
        ),
    ),
]


@pytest.mark.parametrize(
    ("row", "policy"),
    [
        pytest.param(row, policy, id=f"{name} with {policy or 'nil'} policy")
        for policy in ALL_POLICIES
        for name, row in EVICTION_ROWS
        if policy in row.policies
    ],
)
def test_eviction(row: EvictionRow, policy: str | None) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, row.pod, phase=row.phase, budget=row.budget, policy=policy)
        url = row.pod + "bad-name" if row.bad_name else row.pod
        got = await evict(client, url, eviction(row.pod, GRACE_0))
        assert err_to_string(got) == row.error
        if row.bad_name:
            assert got is not None and got.message == "name in URL does not match name in Eviction object"
        if row.error:
            pod = await client.get(PODS, "default", row.pod)
            assert not pod["metadata"].get("deletionTimestamp")  # refused: the pod is untouched
            assert condition(pod, "DisruptionTarget") is None
            return
        assert (await get_or_none(client, PODS, "default", row.pod) is None) == row.deleted

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param({"namespace": "default"}, id="no name"),
        pytest.param({"name": "", "namespace": "default"}, id="empty name"),
        pytest.param({"name": "t1", "namespace": "default"}, id="the URL's name"),
    ],
)
def test_an_eviction_names_the_pod_of_its_url(meta: Obj) -> None:
    """From eviction.go's `EvictionREST.Create` (no upstream row): `name != eviction.Name` is refused before
    anything else, so an Eviction whose metadata names no pod gets 400 BadRequest, like one naming another pod,
    and the pod is left alone (kjobs evicted the URL's pod)."""

    async def scenario() -> None:
        client = await make(FakeClock(), "t1", budget=Budget(1))
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta, "deleteOptions": GRACE_0}
        got = await evict(client, "t1", body)
        if meta.get("name") == "t1":
            assert got is None and await get_or_none(client, PODS, "default", "t1") is None
            return
        assert err_to_string(got) == "name in URL does not match name in Eviction object: BadRequest"
        assert got is not None and got.code == 400
        pod = await client.get(PODS, "default", "t1")
        assert not pod["metadata"].get("deletionTimestamp") and condition(pod, "DisruptionTarget") is None

    asyncio.run(scenario())


@pytest.mark.parametrize("dry_run", [False, True], ids=["evict", "dry run"])
def test_a_pod_under_two_budgets_gets_a_failure_status(dry_run: bool) -> None:
    """From eviction.go (`len(pdbs) > 1`, no upstream row): the refusal is a `Status` object returned, not an
    error, so the create handler writes it with HTTP 201 — Failure, code 500, no reason. kjobs' clients read it
    as client-go does, as an error; neither budget is used and the pod is left alone."""

    async def scenario() -> None:
        client = await make(FakeClock(), "t1", budget=Budget(1))
        second = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "bar"}}
        await client.create(PDBS, "default", {**second, "spec": {"selector": {"matchLabels": {"a": "true"}}}})
        result = await client.service.evict("default", "t1", eviction("t1", GRACE_0), dry_run=dry_run)
        assert (result.code, result.obj) == (
            201,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": MULTIPLE,
                "code": 500,
            },
        )
        got = await evict(client, "t1", eviction("t1", GRACE_0))
        assert got is not None and (got.code, got.message) == (500, MULTIPLE)
        pod = await client.get(PODS, "default", "t1")
        assert not pod["metadata"].get("deletionTimestamp") and condition(pod, "DisruptionTarget") is None
        foo = await client.get(PDBS, "default", "foo")
        assert foo["status"]["disruptionsAllowed"] == 1 and not foo["status"].get("disruptedPods")

    asyncio.run(scenario())


MULTIPLE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


# ------------------------------------------------------------------------------------------ TestEvictionIgnorePDB


@dataclass(frozen=True)
class IgnoreRow:
    pod: str
    budget: Budget
    error: str = ""
    deletes: int = 1
    ready: bool | None = None
    terminating: bool = False
    grace: int = 0
    phase: str = "Running"
    policies: tuple[str | None, ...] = ALL_POLICIES


IGNORE_PDB_ROWS = [
    (
        "matching pdbs with no disruptions allowed, pod terminating",
        IgnoreRow("t6", Budget(0), terminating=True, grace=300),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, pod healthy, unhealthy pod not ours",
        IgnoreRow(
            "t7",
            Budget(0, current=2, desired=2),
            BUDGET_429 + "The disruption budget foo needs 2 healthy pods and has 2 currently",
            deletes=0,
            ready=True,
        ),
    ),
    (
        "matching pdbs with disruptions allowed, pod running, pod healthy, healthy pod ours, deletes pod by honoring "
        "the PDB",
        IgnoreRow("t8", Budget(1, current=3, desired=3), ready=True),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours",
        IgnoreRow("t8", Budget(0, current=2, desired=2), ready=False),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours, skips the PDB "
        "check and deletes",
        IgnoreRow("t8", Budget(0), ready=False, policies=(ALWAYS,)),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, pod healthy, empty selector, pod not deleted by "
        "honoring the PDB",
        IgnoreRow(
            "t11",
            Budget(0, {}, current=3, desired=3),
            BUDGET_429 + "The disruption budget foo needs 3 healthy pods and has 3 currently",
            deletes=0,
            ready=True,
        ),
    ),
]


@pytest.mark.parametrize(
    ("row", "policy"),
    [
        pytest.param(row, policy, id=f"{name} with {policy or 'nil'} policy")
        for policy in (ALWAYS, NIL, IF_HEALTHY)
        for name, row in IGNORE_PDB_ROWS
        if policy in row.policies
    ],
)
def test_eviction_ignore_pdb(row: IgnoreRow, policy: str | None) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await make(
            clock,
            row.pod,
            phase=row.phase,
            ready=row.ready,
            budget=row.budget,
            policy=policy,
            terminating=row.terminating,
        )
        before = await client.get(PDBS, "default", "foo")
        got = await evict(client, row.pod, eviction(row.pod, {"gracePeriodSeconds": row.grace}))
        assert err_to_string(got) == row.error
        pod = await get_or_none(client, PODS, "default", row.pod)
        if row.deletes == 0:
            assert pod is not None and not pod["metadata"].get("deletionTimestamp")
        elif row.terminating:
            assert pod is not None and pod["metadata"]["deletionTimestamp"]  # deleted (again): still terminating
        else:
            assert pod is None
        after = await client.get(PDBS, "default", "foo")
        used = before["status"]["disruptionsAllowed"] - after["status"]["disruptionsAllowed"]
        honoured = not row.error and not row.terminating and row.ready is not False
        assert used == (1 if honoured else 0)  # an unready pod let through does not use up the budget

    asyncio.run(scenario())


class PodChangedMeanwhile(Storage):
    """Before each of the next `races` guarded writes of pod `name`, someone else writes it first (`change`):
    the mock store's conflicting deletes of TestEvictionIgnorePDB, made by a real concurrent write."""

    def __init__(self, storage: Storage, name: str, races: int, change: Callable[[Obj], None]) -> None:
        super().__init__(storage.store)
        self.name, self.races, self.change, self.landed = name, races, change, 0

    async def update(self, resource: str, obj: Obj, *, expected_rv: str | None) -> Obj:
        if self.races and expected_rv and resource == "pods" and obj["metadata"]["name"] == self.name:
            self.races -= 1
            theirs = self.store.get("pods", "default", self.name)
            self.change(theirs)
            self.store.update("pods", "default", self.name, theirs)
            self.landed += 1
        return await super().update(resource, obj, expected_rv=expected_rv)


def becomes_running(pod: Obj) -> None:
    pod["status"]["phase"] = "Running"  # upstream's mock: Running, not ready


def becomes_running_and_touched(pod: Obj) -> None:
    becomes_running(pod)
    touched(pod)


def touched(pod: Obj) -> None:
    """Still pending, at a new resourceVersion (a write that changes nothing would keep the old one)."""
    annotations = pod["metadata"].setdefault("annotations", {})
    annotations["racer"] = str(int(annotations.get("racer", "0")) + 1)


@dataclass(frozen=True)
class ConflictRow:
    pod: str
    budget: Budget
    change: Callable[[Obj], None]
    races: int = 1
    error: str = ""
    deleted: bool = True
    used: int = 0
    options: Obj | None = None
    policies: tuple[str | None, ...] = ALL_POLICIES
    phase: str = "Pending"
    ready: bool | None = None


STILL_PROCESSED = BUDGET_429 + "The disruption budget foo is still being processed by the server."
CONFLICT_ROWS = [
    (
        "pdbs No disruptions allowed, pod pending, first delete conflict, pod still pending, pod deleted successfully",
        ConflictRow("t1", Budget(0), touched),
    ),
    (
        "pdbs No disruptions allowed, pod pending, first delete conflict, pod becomes running, continueToPDBs",
        ConflictRow(
            "t2",
            Budget(0),
            becomes_running,
            error=BUDGET_429 + "The disruption budget foo needs 0 healthy pods and has 0 currently",
            deleted=False,
            policies=(NIL, IF_HEALTHY),
        ),
    ),
    (
        "pdbs disruptions allowed, pod pending, first delete conflict, pod becomes running, continueToPDBs",
        ConflictRow("t3", Budget(1), becomes_running, used=1, policies=(NIL, IF_HEALTHY)),
    ),
    (
        "pdbs No disruptions allowed, pod pending, first delete conflict, pod becomes running, skip PDB check, "
        "conflict",
        ConflictRow(
            "t2",
            Budget(0),
            becomes_running_and_touched,
            races=2,
            error=STILL_PROCESSED,
            deleted=False,
            policies=(ALWAYS,),
        ),
    ),
    (
        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours, resource version "
        "conflict",
        ConflictRow(
            "t9",
            Budget(0, current=2, desired=2),
            touched,
            error=STILL_PROCESSED,
            deleted=False,
            phase="Running",
            ready=False,
        ),
    ),
    (
        "pod pending, always conflict on delete",
        ConflictRow("t4", Budget(0), touched, races=100, error="Conflict", deleted=False),
    ),
    (
        "pod pending, always conflict on delete, user provided ResourceVersion constraint",
        ConflictRow(
            "t5",
            Budget(0),
            touched,
            races=100,
            error="Conflict",
            deleted=False,
            options={"gracePeriodSeconds": 0, "preconditions": {"resourceVersion": "userProvided"}},
        ),
    ),
]


@pytest.mark.parametrize(
    ("row", "policy"),
    [
        pytest.param(row, policy, id=f"{name} with {policy or 'nil'} policy")
        for policy in (ALWAYS, NIL, IF_HEALTHY)
        for name, row in CONFLICT_ROWS
        if policy in row.policies
    ],
)
def test_eviction_ignore_pdb_pod_changed_meanwhile(row: ConflictRow, policy: str | None) -> None:
    """TestEvictionIgnorePDB's conflict rows: a pending pod is evicted only at the version judged pending; one
    that changed is read and judged again, so a pod that started running meets its budget (the row upstream
    calls critical), and one that never stops changing ends in a Conflict after `EvictionsRetry.Steps` tries
    (one try when the caller gave the resourceVersion). An unready pod let through its budget unused is deleted
    only at the version judged: changed meanwhile, it is a 429 to retry."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, row.pod, phase=row.phase, ready=row.ready, budget=row.budget, policy=policy)
        racer = PodChangedMeanwhile(client.service.store, row.pod, row.races, row.change)
        client.service.store = racer
        before = await client.get(PDBS, "default", "foo")
        got = await evict(client, row.pod, eviction(row.pod, row.options or GRACE_0))
        if row.error == "Conflict":
            assert got is not None and (got.code, got.reason) == (409, "Conflict")
            # EvictionsRetry.Steps tries; with the caller's resourceVersion one, which fails on the read already
            assert racer.landed == (0 if row.options else 20)
        else:
            assert err_to_string(got) == row.error
        assert (await get_or_none(client, PODS, "default", row.pod) is None) == row.deleted
        after = await client.get(PDBS, "default", "foo")
        assert before["status"]["disruptionsAllowed"] - after["status"]["disruptionsAllowed"] == row.used

    asyncio.run(scenario())


# --------------------------------------------------------------------------------------------- TestEvictionDryRun

DRY_RUN = [
    pytest.param(True, {}, None, id="just request-options"),
    pytest.param(False, {"dryRun": ["All"]}, None, id="just eviction-options"),
    pytest.param(True, {"dryRun": ["All"]}, None, id="both options"),
    pytest.param(True, {"dryRun": ["All"]}, Budget(1), id="with pdbs"),
]


@pytest.mark.parametrize(("request_dry_run", "options", "budget"), DRY_RUN)
def test_eviction_dry_run(request_dry_run: bool, options: Obj, budget: Budget | None) -> None:
    """A dry-run eviction succeeds and changes nothing: no condition, no deletion, no budget used."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, "foo", budget=budget)
        await client.service.evict("default", "foo", eviction("foo", options), dry_run=request_dry_run)
        pod = await client.get(PODS, "default", "foo")
        assert not pod["metadata"].get("deletionTimestamp")
        assert condition(pod, "DisruptionTarget") is None
        if budget is not None:
            status = (await client.get(PDBS, "default", "foo"))["status"]
            assert status["disruptionsAllowed"] == 1
            assert not status.get("disruptedPods")

    asyncio.run(scenario())


# ------------------------------------------------------------------------------------------- TestEvictionPDBStatus


@pytest.mark.parametrize(
    ("allowed", "expected_allowed", "expected_reason"),
    [
        pytest.param(1, 0, "InsufficientPods", id="pdb status is updated after eviction"),
        pytest.param(3, 2, "SufficientPods", id="condition reason is only updated if AllowedDisruptions becomes 0"),
    ],
)
def test_eviction_pdb_status(allowed: int, expected_allowed: int, expected_reason: str) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, "foo-1", budget=Budget(allowed))
        second = await client.get(PODS, "default", "foo-1")
        second["metadata"] = {"name": "foo-2", "namespace": "default", "labels": {"a": "true"}}
        second.pop("status")
        await client.create(PODS, "default", second)
        pdb = await client.get(PDBS, "default", "foo")
        pdb["status"]["conditions"] = [
            {
                "type": "DisruptionAllowed",
                "status": "True",
                "reason": "SufficientPods",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
        await client.update(PDBS, "default", pdb, subresource="status")
        assert await evict(client, "foo-1", eviction("foo-1", {})) is None
        status = (await client.get(PDBS, "default", "foo"))["status"]
        assert status["disruptionsAllowed"] == expected_allowed
        allowed_condition = next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")
        assert allowed_condition["reason"] == expected_reason
        assert list(status["disruptedPods"]) == ["foo-1"]

    asyncio.run(scenario())


# ---------------------------------------------------------------------------------------- TestAddConditionAndDelete

ADD_CONDITION_AND_DELETE = [
    pytest.param(True, lambda pod: {}, "", id="simple"),
    pytest.param(False, lambda pod: {}, "not found", id="missing"),
    pytest.param(True, lambda pod: {"preconditions": {"uid": pod["metadata"]["uid"]}}, "", id="valid uid"),
    pytest.param(
        True,
        lambda pod: {"preconditions": {"uid": pod["metadata"]["uid"] + "1"}},
        "The object might have been deleted and then recreated",
        id="invalid uid",
    ),
    pytest.param(
        True,
        lambda pod: {"preconditions": {"resourceVersion": pod["metadata"]["resourceVersion"]}},
        "",
        id="valid resourceVersion",
    ),
    pytest.param(
        True,
        lambda pod: {"preconditions": {"resourceVersion": pod["metadata"]["resourceVersion"] + "1"}},
        "The object might have been modified",
        id="invalid resourceVersion",
    ),
]


@pytest.mark.parametrize(("initial_pod", "options", "expect_err"), ADD_CONDITION_AND_DELETE)
def test_add_condition_and_delete(initial_pod: bool, options: Any, expect_err: str) -> None:
    """`addConditionAndDeletePod` through the eviction of a pod no budget covers."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, "foo")
        pod = await client.get(PODS, "default", "foo")
        if not initial_pod:
            await client.delete(PODS, "default", "foo", grace_period_seconds=0)
        got = await evict(client, "foo", eviction("foo", options(pod)))
        if not expect_err:
            assert got is None
            assert await get_or_none(client, PODS, "default", "foo") is None or initial_pod
            return
        assert got is not None
        assert expect_err in str(got.message)
        if initial_pod:  # a failed precondition leaves the pod as it was
            after = await client.get(PODS, "default", "foo")
            assert condition(after, "DisruptionTarget") is None
            assert not after["metadata"].get("deletionTimestamp")

    asyncio.run(scenario())


# ------------------------------------------------------- addConditionAndDeletePod's condition, from the source


def test_eviction_of_a_terminal_pod_marks_it_too() -> None:
    """eviction.go deletes a terminal pod without a budget check, but through `addConditionAndDeletePod`: the
    condition goes on it as on any other (its phase is not looked at)."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, "done", phase="Failed", budget=Budget(0))
        pod = await client.get(PODS, "default", "done")
        pod["metadata"]["finalizers"] = ["example.com/hold"]  # to read it back after the delete
        await client.update(PODS, "default", pod)
        assert await evict(client, "done", eviction("done")) is None
        after = await client.get(PODS, "default", "done")
        assert after["metadata"]["deletionTimestamp"]
        target = condition(after, "DisruptionTarget")
        assert target is not None
        assert (target["status"], target["reason"], target["message"]) == (
            "True",
            "EvictionByEvictionAPI",
            "Eviction API: evicting",
        )

    asyncio.run(scenario())


def test_eviction_keeps_the_transition_time_of_a_disruption_target_already_true() -> None:
    """`UpdatePodCondition`: a DisruptionTarget already True (another component's) takes the eviction's reason
    and message but keeps its lastTransitionTime, which the disruption controller's 2-minute timer reads."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await make(clock, "marked")
        pod = await client.get(PODS, "default", "marked")
        pod["status"]["conditions"] = [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "default-scheduler: preempting to accommodate a higher priority pod",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
        pod["metadata"]["finalizers"] = ["example.com/hold"]
        await client.update(PODS, "default", pod, subresource="status")
        pod = await client.get(PODS, "default", "marked")
        pod["metadata"]["finalizers"] = ["example.com/hold"]
        await client.update(PODS, "default", pod)
        clock.advance(90)
        assert await evict(client, "marked", eviction("marked")) is None
        target = condition(await client.get(PODS, "default", "marked"), "DisruptionTarget")
        assert target is not None
        assert (target["reason"], target["message"], target["lastTransitionTime"]) == (
            "EvictionByEvictionAPI",
            "Eviction API: evicting",
            "2026-01-01T00:00:00Z",
        )

    asyncio.run(scenario())


class WrittenAfterTheCondition(Storage):
    """Once the eviction has written `DisruptionTarget` on pod `name`, someone else (a node's status) writes the
    pod before the delete that follows."""

    def __init__(self, storage: Storage, name: str) -> None:
        super().__init__(storage.store)
        self.name, self.landed = name, False

    async def update(self, resource: str, obj: Obj, *, expected_rv: str | None) -> Obj:
        written = await super().update(resource, obj, expected_rv=expected_rv)
        marked = any(c.get("type") == "DisruptionTarget" for c in (obj.get("status") or {}).get("conditions") or [])
        if resource == "pods" and obj["metadata"]["name"] == self.name and marked and not self.landed:
            self.landed = True
            theirs = self.store.get("pods", "default", self.name)
            touched(theirs)
            self.store.update("pods", "default", self.name, theirs)
        return written


@pytest.mark.parametrize("policy", [ALWAYS, NIL, IF_HEALTHY])
def test_eviction_of_an_unready_pod_written_between_condition_and_delete_is_a_429(policy: str | None) -> None:
    """An unready pod let through its budget unused is deleted at the version the eviction wrote (its condition):
    written again before the delete, the eviction answers the 429 to retry, not the delete's 409, as eviction.go's
    `Create` turns any conflict of `addConditionAndDeletePod` into `createTooManyRequestsError`."""

    async def scenario() -> None:
        clock = FakeClock()
        budget = Budget(0, current=2, desired=2)
        client = await make(clock, "t9", ready=False, budget=budget, policy=policy)
        racer = WrittenAfterTheCondition(client.service.store, "t9")
        client.service.store = racer
        got = await evict(client, "t9", eviction("t9", GRACE_0))
        assert racer.landed
        assert err_to_string(got) == STILL_PROCESSED
        assert (got.code if got is not None else 0) == 429
        assert await get_or_none(client, PODS, "default", "t9") is not None

    asyncio.run(scenario())
