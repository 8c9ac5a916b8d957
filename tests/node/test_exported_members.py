"""Pin the node runtime's public surface: what the node agent and `kjobs simulate` build on."""

from __future__ import annotations

import inspect

from kjobs.clock import FakeClock
from kjobs.node import observations, podstatus, restart
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.node.runtime import ContainerRuntime
from kjobs.node.sim_runtime import SimulatedRuntime


def test_both_runtimes_implement_the_protocol(tmp_path: object) -> None:
    from kjobs.node.cgroups import RssWatchdog

    runtimes: list[ContainerRuntime] = [
        SimulatedRuntime(clock=FakeClock()),
        ProcessRuntime(root_dir=tmp_path, memory_guard=RssWatchdog()),  # type: ignore[arg-type]
    ]
    protocol = {name for name in vars(ContainerRuntime) if not name.startswith("_")}
    assert protocol == {
        "run_pod",
        "get",
        "adopt",
        "release_unclaimed",
        "stop_recovered",
        "update_pod",
        "starting",
        "kill_pod",
        "logs",
        "forget",
        "shutdown",
        "provide_env_sources",
    }
    for runtime in runtimes:
        for name in protocol:
            assert callable(getattr(runtime, name)), name
        assert inspect.iscoroutinefunction(runtime.run_pod)
        assert inspect.iscoroutinefunction(runtime.kill_pod)
        assert inspect.iscoroutinefunction(runtime.shutdown)
        assert "reason" in inspect.signature(runtime.kill_pod).parameters


def test_pure_rule_entry_points() -> None:
    assert callable(restart.plan) and callable(restart.should_restart) and callable(restart.next_backoff)
    assert callable(podstatus.compute_pod_status) and callable(podstatus.get_phase)
    assert observations.eviction("m").reason == "Evicted"
    assert observations.NODE_SHUTDOWN.reason == "Terminated"
    assert (restart.DEFAULT_BACKOFF_BASE, restart.DEFAULT_BACKOFF_CAP) == (10.0, 300.0)
