"""Leader election: one running instance of each controller per API server (client-go's rules, on virtual time)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import LEASES
from kjobs.clock import FakeClock
from kjobs.controllers import leaderelection as le
from kjobs.controllers.leaderelection import LeaderElector, lead, lease_name, next_spec
from kjobs.node.nodestatus import micro_time
from tests.support import local_api, settle

NOW = 1_767_225_600.0


# -- the decision, pure --------------------------------------------------------------------------------------


def test_a_lease_without_holder_is_taken_and_the_transition_counted() -> None:
    spec = next_spec({"leaseTransitions": 3, "leaseDurationSeconds": 1}, "me", NOW, NOW, 15)
    assert spec == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": micro_time(NOW),
        "renewTime": micro_time(NOW),
        "leaseTransitions": 4,
    }


def test_another_holders_lease_is_valid_for_its_duration_from_when_it_was_observed() -> None:
    held = {"holderIdentity": "other", "leaseDurationSeconds": 15, "renewTime": micro_time(NOW - 3600)}
    # Its renewTime is an hour old (another clock), but this candidate saw the record change 14 s ago: valid.
    assert next_spec(held, "me", NOW, NOW - 14, 15) is None
    taken = next_spec(held, "me", NOW, NOW - 15, 15)
    assert taken is not None and taken["holderIdentity"] == "me" and taken["leaseTransitions"] == 1


def test_the_holder_renews_keeping_its_acquire_time_and_transitions() -> None:
    mine = {"holderIdentity": "me", "leaseDurationSeconds": 15, "acquireTime": "then", "leaseTransitions": 2}
    renewed = next_spec(mine, "me", NOW, NOW, 15)
    assert renewed is not None
    assert (renewed["acquireTime"], renewed["leaseTransitions"], renewed["renewTime"]) == ("then", 2, micro_time(NOW))


def test_lease_names_are_per_controller_and_per_managed_by_value() -> None:
    assert lease_name("job") == "kjobs-job" and lease_name("podgc", "x") == "kjobs-podgc"
    assert lease_name("job", "kjobs.io/job-controller") == "kjobs-job-kjobs.io-job-controller"
    assert lease_name("job", "Example.COM/My_Controller") == "kjobs-job-example.com-my-controller"


def test_a_holder_process_is_gone_only_when_it_ran_here_and_has_exited() -> None:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = le.this_process().rpartition("/")[0] + f"/{child.stdout.strip()}-1"
    assert le.holder_gone(dead)
    assert not le.holder_gone(le.this_process())
    assert not le.holder_gone("another-machine.1/" + dead.rpartition("/")[2])
    assert not le.holder_gone(None) and not le.holder_gone("")


# -- candidates over an API, on virtual time -----------------------------------------------------------------


def _elector(client: LocalClient, clock: FakeClock, identity: str, process: str = "") -> LeaderElector:
    return LeaderElector(client, clock, "kjobs-job", identity=identity, process=process)


def _recording(events: list[str]) -> tuple[Callable[[], Awaitable[None]], Callable[[], Awaitable[None]]]:
    """`start` and `stop` callbacks for `lead` that note their calls in `events`."""

    async def start() -> None:
        events.append("start")

    async def stop() -> None:
        events.append("stop")

    return start, stop


async def _lease(client: LocalClient) -> Obj:
    return await client.get(LEASES, "kube-system", "kjobs-job")


def test_one_candidate_leads_the_other_waits_out_a_crashed_leaders_lease() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        a, b = _elector(client, clock, "a"), _elector(client, clock, "b")
        assert await a.try_acquire_or_renew()
        assert (await _lease(client))["spec"]["leaseTransitions"] == 0
        waiting = asyncio.get_running_loop().create_task(b.acquire())
        start = clock.now()
        await settle(clock, lambda: clock.now() - start >= 14)
        assert not waiting.done() and b.holder == "a"
        # `a` crashed (renews no more): `b` takes over once the record has stood still for 15 s.
        await settle(clock, waiting.done)
        assert 15 <= clock.now() - start <= 15 + b.timing.retry_period
        spec = (await _lease(client))["spec"]
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)

    asyncio.run(scenario())


def test_a_clean_stop_releases_the_lease_and_a_successor_takes_it_at_once() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        a, b = _elector(client, clock, "a"), _elector(client, clock, "b")
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
        await a.release()
        spec = (await _lease(client))["spec"]
        assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 1
        assert await b.try_acquire_or_renew()

    asyncio.run(scenario())


def test_the_lease_of_a_holder_whose_process_is_gone_is_taken_at_once() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        machine = le.this_process().rpartition("/")[0]
        dead = _elector(client, clock, "dead", process=f"{machine}/{child.stdout.strip()}-1")
        assert await dead.try_acquire_or_renew()
        successor = _elector(client, clock, "successor", process=le.this_process())
        assert await successor.try_acquire_or_renew()  # at once, not 15 s later
        # The successor's process runs: its lease is waited out as client-go waits.
        assert not await _elector(client, clock, "third").try_acquire_or_renew()
        assert (await _lease(client))["spec"]["holderIdentity"] == "successor"

    asyncio.run(scenario())


def test_a_leader_whose_lease_is_taken_stops_what_it_leads() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        events: list[str] = []
        start, stop = _recording(events)

        leader = _elector(client, clock, "a")
        task = asyncio.get_running_loop().create_task(lead(leader, start, stop, on_lost=lambda: events.append("lost")))
        await settle(clock, lambda: events == ["start"])
        lease = await _lease(client)  # somebody (kubectl edit) hands it to another holder
        await client.update(LEASES, "kube-system", {**lease, "spec": {**lease["spec"], "holderIdentity": "b"}})
        await settle(clock, task.done)
        assert events == ["start", "stop", "lost"]
        assert (await _lease(client))["spec"]["holderIdentity"] == "b"  # a loser does not release

    asyncio.run(scenario())


def test_a_leader_cancelled_stops_what_it_leads_and_releases() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        events: list[str] = []
        start, stop = _recording(events)

        task = asyncio.get_running_loop().create_task(lead(_elector(client, clock, "a"), start, stop))
        await settle(clock, lambda: events == ["start"])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert events == ["start", "stop"]
        assert "holderIdentity" not in (await _lease(client))["spec"]

    asyncio.run(scenario())


def test_a_clusters_controller_waits_for_a_live_holder_then_takes_over_and_releases_at_its_stop() -> None:
    """`kjobs up`'s controllers elect: a Job controller whose Lease another live process holds creates no pod
    until that Lease has stood still for its duration; the cluster's stop releases it."""
    from kjobs.client.resources import JOBS, PODS
    from kjobs.cluster import ClusterSettings, LocalCluster
    from tests.controllers.test_ttl import job_manifest

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        other = LeaderElector(client, clock, "kjobs-job", identity="other", process=le.this_process())
        assert await other.try_acquire_or_renew()
        settings = ClusterSettings(nodes=0, controllers=("job",), leader_election=True)
        cluster = LocalCluster(client.service, settings=settings, clock=clock)
        await cluster.start()
        try:
            await client.create(JOBS, "default", job_manifest(None))
            start = clock.now()
            await settle(clock, lambda: clock.now() - start >= 12)
            assert (await client.list(PODS, "default"))[0] == []
            pods: list[Obj] = []

            async def created() -> None:
                while not pods:
                    pods.extend((await client.list(PODS, "default"))[0])
                    await clock.sleep(0.5)

            waiter = asyncio.get_running_loop().create_task(created())
            await settle(clock, waiter.done)
            assert 15 <= clock.now() - start <= 20
            assert (await _lease(client))["spec"]["holderIdentity"] != "other"
        finally:
            await cluster.stop()
        assert "holderIdentity" not in (await _lease(client))["spec"]

    asyncio.run(scenario())


def test_a_refused_lease_is_logged_once_until_it_fails_otherwise(caplog: pytest.LogCaptureFixture) -> None:
    """On a cluster that does not let this user read Leases in kube-system, each 2 s attempt gets 403: the
    terminal says so once (and `--leader-elect-resource-namespace` names a namespace that works)."""
    from kjobs.api.errors import ApiError

    class Refusing:
        calls = 0

        async def get(self, *_: object) -> Obj:
            Refusing.calls += 1
            raise ApiError(403, "Forbidden", 'leases.coordination.k8s.io "kjobs-job" is forbidden')

    async def scenario() -> None:
        clock = FakeClock()
        elector = LeaderElector(Refusing(), clock, "kjobs-job", identity="a")  # type: ignore[arg-type]
        for _ in range(3):
            assert not await elector.try_acquire_or_renew()

    with caplog.at_level("WARNING", logger="kjobs.controllers.leaderelection"):
        asyncio.run(scenario())
    assert Refusing.calls == 3
    assert [r.getMessage() for r in caplog.records] == [
        'error retrieving resource lock kube-system/kjobs-job: leases.coordination.k8s.io "kjobs-job" is forbidden'
    ]


def test_a_clusters_controller_stopped_by_a_store_that_refused_its_renewals_campaigns_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`kjobs up` with a full disk: every write is refused ("storage write failed"), Lease renewals too, and
    after the renew deadline each controller stops (client-go's rule, so that no two instances act at once).
    Once the disk has room again the controller must run again, as a kube-controller-manager restarted by its
    supervisor does; before, it stayed stopped ("restart to run it here again") and no Job got a pod."""
    from kjobs.client.resources import JOBS, PODS
    from kjobs.cluster import ClusterSettings, LocalCluster
    from tests.controllers.test_ttl import job_manifest

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        store = client.service.store.store
        settings = ClusterSettings(nodes=0, controllers=("job",), leader_election=True)
        cluster = LocalCluster(client.service, settings=settings, clock=clock)
        await cluster.start()
        try:
            first = cluster.job_controller

            def full(*_: object) -> None:
                raise OSError(28, "database or disk is full")

            store._persist = full  # type: ignore[method-assign]
            start = clock.now()
            await settle(clock, lambda: clock.now() - start >= 14)
            del store._persist  # the disk has room again
            await client.create(JOBS, "default", job_manifest(None))
            pods: list[Obj] = []

            async def created() -> None:
                while not pods:
                    pods.extend((await client.list(PODS, "default"))[0])
                    await clock.sleep(0.5)

            waiter = asyncio.get_running_loop().create_task(created())
            await settle(clock, waiter.done, max_virtual=60)
            assert cluster.job_controller is not first
        finally:
            await cluster.stop()
        assert "holderIdentity" not in (await _lease(client))["spec"]

    with caplog.at_level("INFO"):
        asyncio.run(scenario())
    lost = [r.getMessage() for r in caplog.records if "controller job stopped" in r.getMessage()]
    assert lost and "could not be renewed for 10s" in lost[0] and "disk is full" in lost[0], lost
    assert lost[0].endswith("it campaigns again")
