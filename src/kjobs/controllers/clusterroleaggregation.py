"""The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go).

kube-controller-manager's `clusterrole-aggregation-controller`: a ClusterRole with an `aggregationRule` has as
its rules those of every other ClusterRole one of its selectors matches, taken selector by selector, roles by
name, each rule once (`ruleExists` is semantic equality). Any ClusterRole change queues every aggregating role
(`enqueue`), so chains converge: `view` is aggregated into `edit`, and `edit` into `admin`. The new rules are
written only when they differ from the stored ones; upstream server-side-applies `rules` with its own field
manager, forced, and falls back to an update: kjobs sends a merge patch of `rules`, which has the same result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kjobs.api.errors import ApiError
from kjobs.api.selectors import label_selector_from_object
from kjobs.api.types import Obj
from kjobs.api.validation_meta import semantic_equal
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import CLUSTER_ROLES
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

NAME = "clusterrole-aggregation-controller"
"""kube-controller-manager's name for it (cmd/kube-controller-manager/names: `ClusterRoleAggregationController`)."""


def aggregated_rules(role: Obj, roles: list[Obj]) -> list[Obj] | None:
    """The rules `role`'s aggregation rule gives it from `roles` (None: the role does not aggregate, or a selector
    is invalid, which the sync reports as an error)."""
    rule = role.get("aggregationRule")
    if type(rule) is not dict:
        return None
    name = (role.get("metadata") or {}).get("name")
    by_name = sorted(roles, key=lambda r: str((r.get("metadata") or {}).get("name") or ""))
    rules: list[Obj] = []
    for selector in rule.get("clusterRoleSelectors") or []:
        try:
            matches = label_selector_from_object(selector if type(selector) is dict else {})
        except ApiError:
            return None
        for other in by_name:
            if (other.get("metadata") or {}).get("name") == name or not matches.matches(other):
                continue
            for policy in other.get("rules") or []:
                if not any(semantic_equal(policy, kept) for kept in rules):
                    rules.append(policy)
    return rules


@dataclass(eq=False, repr=False)
class ClusterRoleAggregationController:
    """Keeps the rules of aggregating ClusterRoles the union of the roles they select."""

    client: Client
    clock: Clock
    shared: InformerFactory | None = None
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.cluster_roles = factory.informer(CLUSTER_ROLES)
        self.queue = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name="clusterrole-aggregation", workers=self.workers)

    async def start(self) -> None:
        """Start the informer, then the workers once its cache has synced."""
        self.cluster_roles.add_handler(self._on_cluster_role)
        self.cluster_roles.start()
        await self.cluster_roles.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        """Stop the workers and the informer."""
        await self._workers.stop()
        await self.cluster_roles.stop()

    def _on_cluster_role(self, old: Obj | None, new: Obj | None) -> None:
        """`enqueue`: every change of any ClusterRole queues each role that aggregates."""
        for role in self.cluster_roles.list():
            if role.get("aggregationRule") is not None:
                self.queue.add(str((role.get("metadata") or {}).get("name") or ""))

    async def sync(self, name: str) -> None:
        """`syncClusterRole`: write the aggregated rules when they differ from the role's."""
        role = self.cluster_roles.get("", name)
        if role is None:
            return
        rules = aggregated_rules(role, self.cluster_roles.list())
        if rules is None or semantic_equal(rules, role.get("rules") or []):
            return
        try:
            await self.client.patch(CLUSTER_ROLES, None, name, {"rules": rules}, patch_type="merge", discard=True)
        except ApiError as exc:
            if exc.code != 404:
                raise
