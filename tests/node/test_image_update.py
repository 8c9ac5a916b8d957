"""A running container whose image the pod's spec changes is restarted with the new one (the kubelet's
`computePodActions`: "Container spec hash changed"), and `status.image` is the image of the container that ran.

Before, kjobs left the container running and showed the new image in its status at once, as if it ran it.
"""

from __future__ import annotations

import asyncio
import copy

from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from tests.node.helpers import T0, make_pod


def _runtime(clock: FakeClock) -> SimulatedRuntime:
    return SimulatedRuntime(
        clock=clock, outcome=lambda pod, c, n: Outcome(duration=10_000, term_delay=1), minimum_grace_seconds=2
    )


def _with_image(pod: Obj, group: str, index: int, image: str) -> Obj:
    updated = copy.deepcopy(pod)
    updated["spec"][group][index]["image"] = image
    updated["metadata"]["resourceVersion"] = "2"
    return updated


def _status(handle: object, group: str, name: str) -> Obj:
    statuses: list[Obj] = handle.status.get(group, [])  # type: ignore[attr-defined]
    return next(s for s in statuses if s["name"] == name)


def test_a_running_container_is_restarted_with_its_new_image_whatever_the_restart_policy() -> None:
    clock = FakeClock(T0)
    runtime = _runtime(clock)
    pod = make_pod(policy="Never", terminationGracePeriodSeconds=30)
    handle = asyncio.run(runtime.run_pod(pod))
    clock.advance(1)
    runtime.run_due()
    runtime.update_pod(_with_image(pod, "containers", 0, "alpine"))
    assert _status(handle, "containerStatuses", "main")["image"] == "busybox"  # still the old container
    runtime.run_until_idle(clock, limit=T0 + 5)
    main = _status(handle, "containerStatuses", "main")
    assert (main["image"], main["restartCount"]) == ("alpine", 1)
    assert "running" in main["state"]
    assert main["lastState"]["terminated"]["exitCode"] == 143  # SIGTERMed, then started again at once
    assert handle.phase == "Running"


def test_a_completed_init_container_keeps_its_image_and_is_not_restarted() -> None:
    clock = FakeClock(T0)
    runtime = SimulatedRuntime(
        clock=clock,
        outcome=lambda pod, c, n: Outcome(duration=1) if c["name"] == "setup" else Outcome(duration=10_000),
    )
    pod = make_pod(init=[{"name": "setup", "image": "busybox"}], policy="Always")
    handle = asyncio.run(runtime.run_pod(pod))
    runtime.run_until_idle(clock, limit=T0 + 2)
    runtime.update_pod(_with_image(pod, "initContainers", 0, "alpine"))
    runtime.run_until_idle(clock, limit=T0 + 5)
    setup = _status(handle, "initContainerStatuses", "setup")
    assert (setup["image"], setup["restartCount"], setup["state"]["terminated"]["exitCode"]) == ("busybox", 0, 0)


def test_a_pod_being_deleted_restarts_nothing_for_a_new_image() -> None:
    clock = FakeClock(T0)
    runtime = _runtime(clock)
    pod = make_pod(policy="Always")
    handle = asyncio.run(runtime.run_pod(pod))
    clock.advance(1)
    runtime.run_due()
    asyncio.run(runtime.kill_pod(handle.uid, grace_seconds=30))
    runtime.update_pod(_with_image(pod, "containers", 0, "alpine"))
    runtime.run_until_idle(clock)
    main = _status(handle, "containerStatuses", "main")
    assert (main["image"], main["restartCount"]) == ("busybox", 0)
