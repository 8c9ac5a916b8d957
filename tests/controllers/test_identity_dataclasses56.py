"""Controllers and working state that are dataclasses for their `__init__` only: no run compares or prints one.

`eq=False, repr=False` spares each class the `exec` that compiles a generated `__eq__` and `__repr__` when its
module is imported (docs/startup56.md). A controller holds its client, informers and queues,
an informer its cache and handlers, the others one view's or one stream's mutable state: a value comparison of two
would never mean anything. These tests make sure a run never asks for one, so that identity equality and
`object.__repr__` decide nothing. (The Job controller's `SyncContext` and `BookkeepingStore` keep theirs: the
Job controller's oracle tests compare them.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.informer import Informer
from kjobs.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kjobs.controllers.cronjob import CronJobController
from kjobs.controllers.disruption import DisruptionController
from kjobs.controllers.endpoints import (
    EndpointsController,
    EndpointSliceController,
    TriggerTimeTracker,
    _ServiceController,
)
from kjobs.controllers.garbagecollector import GarbageCollector
from kjobs.controllers.nodelifecycle import NodeLifecycleController, _ZoneEvictor
from kjobs.controllers.podgc import PodGCController, _Sorted
from kjobs.controllers.ratelimitedqueue import RateLimitedTimedQueue
from kjobs.controllers.resourcequota import ResourceQuotaController
from kjobs.controllers.rootcacertpublisher import RootCACertPublisher
from kjobs.controllers.serviceaccounts import ServiceAccountsController
from kjobs.controllers.tainteviction import TaintEvictionController, _Work
from kjobs.controllers.ttl import TTLAfterFinishedController
from kjobs.controllers.volumes import PersistentVolumeController, PVCProtectionController, PVProtectionController
from kjobs.node.poddns import _HostsFile
from kjobs.progress import RunView
from kjobs.run import _Serving
from kjobs.server.portforward import _Pair
from kjobs.simulate import SimulationOptions, parse_model
from kjobs.simulate.runs import simulate_runs

IDENTITY_ONLY: tuple[type, ...] = (
    ClusterRoleAggregationController,
    CronJobController,
    DisruptionController,
    _ServiceController,
    EndpointsController,
    EndpointSliceController,
    GarbageCollector,
    NodeLifecycleController,
    _ZoneEvictor,
    PodGCController,
    RateLimitedTimedQueue,
    ResourceQuotaController,
    RootCACertPublisher,
    ServiceAccountsController,
    TaintEvictionController,
    TTLAfterFinishedController,
    PersistentVolumeController,
    PVCProtectionController,
    PVProtectionController,
    Informer,
    RunView,
    TriggerTimeTracker,
    _Work,
    _Sorted,
    _Serving,
    _HostsFile,
    _Pair,
)


@pytest.mark.parametrize("cls", IDENTITY_ONLY, ids=lambda c: c.__name__)
def test_no_value_methods_are_generated(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(cls) and params.init
    assert not params.eq and not params.repr
    assert cls.__eq__ is object.__eq__ and cls.__repr__ is object.__repr__


def _job() -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "flaky", "namespace": "default"},
        "spec": {
            "completions": 4,
            "parallelism": 2,
            "backoffLimit": 4,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}],
            },
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def test_a_run_never_compares_or_prints_a_controller(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def eq(self: Any, other: Any) -> bool:
        asked.append(f"{type(self).__name__}.__eq__")
        return self is other

    def rep(self: Any) -> str:
        asked.append(f"{type(self).__name__}.__repr__")
        return object.__repr__(self)

    for cls in IDENTITY_ONLY:
        monkeypatch.setattr(cls, "__eq__", eq)
        monkeypatch.setattr(cls, "__repr__", rep)
    model = parse_model(
        {
            "containers": {
                "runTime": {"constant": "5s"},
                "exitCodes": [{"code": 0, "weight": 0.6}, {"code": 1, "weight": 0.4}],
            },
            "disruptions": [{"kind": "drain", "at": "12s"}],
        }
    )
    (result,) = simulate_runs(_job(), SimulationOptions(model=model, seed=3), 1, workers=1)
    assert result.view.pods  # the run made pods, failed and disrupted some
    assert asked == []
