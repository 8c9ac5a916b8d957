"""Pin the scheduler's public surface: what `kjobs.cluster`, `kjobs up` and other controllers build on."""

from __future__ import annotations

import dataclasses
import inspect

from kjobs.controllers import preemption, scheduling
from kjobs.controllers.scheduler import Scheduler, SchedulerSettings
from kjobs.controllers.scheduler_metrics import SchedulerMetrics


def test_scheduler_constructor_and_lifecycle() -> None:
    params = inspect.signature(Scheduler).parameters
    assert list(params) == ["client", "clock", "settings", "metrics", "shared"]
    keyword_only = ("clock", "settings", "metrics", "shared")
    assert all(params[name].kind is inspect.Parameter.KEYWORD_ONLY for name in keyword_only)
    for name in ("start", "stop", "schedule_one"):
        assert inspect.iscoroutinefunction(getattr(Scheduler, name)), name
    assert callable(Scheduler.pending) and callable(Scheduler.node_info)


def test_settings_defaults_are_kubernetes_defaults() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(SchedulerSettings)}
    assert defaults == {
        "scheduler_name": "default-scheduler",
        "initial_backoff": 1.0,
        "max_backoff": 10.0,
        "max_unschedulable_wait": 300.0,
        "unschedulable_flush_period": 30.0,
        "bind_concurrency": 32,
        "event_qps": 50.0,  # clientConnection.qps / burst of kube-scheduler's event client
        "event_burst": 100,
        "bind_timeout": 600.0,  # VolumeBinding's bindTimeoutSeconds
    }


def test_pure_entry_points() -> None:
    for name in ("pod_info", "pod_requests", "filter_node", "select_host", "node_scores", "fit_error", "node_taints"):
        assert callable(getattr(scheduling, name)), name
    for name in ("resolve_priority", "priority_classes", "budgets", "select_victims", "pick_candidate", "preempt"):
        assert callable(getattr(preemption, name)), name
    assert "registry" in inspect.signature(SchedulerMetrics).parameters
