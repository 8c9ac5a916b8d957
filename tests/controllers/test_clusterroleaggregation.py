"""The ClusterRole aggregation controller: TestSyncClusterRole's rows (pkg/controller/clusterroleaggregation/
clusterroleaggregation_controller_test.go), then the controller running against an API on virtual time, where
the bootstrap `view` is aggregated into `edit` and `edit` into `admin`."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import CLUSTER_ROLES, ResourceRef
from kjobs.clock import FakeClock
from kjobs.controllers.clusterroleaggregation import ClusterRoleAggregationController, aggregated_rules
from kjobs.server.rbacpolicy import CLUSTER_ROLES as BOOTSTRAP_ROLES
from tests.support import local_api, settle

HAMMER = [{"verbs": ["hammer"], "resources": ["nails"]}, {"verbs": ["hammer"], "resources": ["wedges"]}]
CHISEL = [{"verbs": ["chisel"], "resources": ["mortises"]}]
SAW = [{"verbs": ["saw"], "resources": ["boards"]}]


def _role(name: str, labels: dict[str, str], rules: list[Obj]) -> Obj:
    return {"metadata": {"name": name, "labels": labels}, "rules": rules}


def _combined(selectors: list[dict[str, str]], *rules: list[Obj]) -> Obj:
    return {
        "metadata": {"name": "combined"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": s} for s in selectors]},
        "rules": [r for group in rules for r in group],
    }


BAR, NOT_BAR = {"foo": "bar"}, {"foo": "not-bar"}

# name: (starting roles, the rules `combined` gets, or None when nothing is written)
ROWS: dict[str, tuple[list[Obj], list[Obj] | None]] = {
    "remove dead rules": ([_role("hammer", BAR, HAMMER), _combined([BAR], SAW)], HAMMER),
    "strip rules": ([_role("hammer", NOT_BAR, HAMMER), _combined([BAR], HAMMER)], []),
    "select properly and put in order": (
        [_role("hammer", BAR, HAMMER), _role("chisel", BAR, CHISEL), _role("saw", NOT_BAR, SAW), _combined([BAR])],
        CHISEL + HAMMER,
    ),
    "select properly with multiple selectors": (
        [
            _role("hammer", BAR, HAMMER),
            _role("chisel", BAR, CHISEL),
            _role("saw", NOT_BAR, SAW),
            _combined([BAR, NOT_BAR]),
        ],
        CHISEL + HAMMER + SAW,
    ),
    "select properly remove duplicates": (
        [
            _role("hammer", BAR, HAMMER),
            _role("chisel", BAR, CHISEL),
            _role("saw", BAR, SAW),
            _role("other-saw", NOT_BAR, SAW),
            _combined([BAR, NOT_BAR]),
        ],
        CHISEL + HAMMER + SAW,
    ),
    "no diff skip": ([_role("hammer", BAR, HAMMER), _combined([BAR], HAMMER)], None),
}


class Recording(LocalClient):
    """A client that records the patches sent through it (and writes nothing)."""

    def __init__(self, base: LocalClient) -> None:
        super().__init__(base.service)
        self.patches: list[tuple[str, Any]] = []

    async def patch(self, resource: ResourceRef, namespace: str | None, name: str, patch: Any, **kw: Any) -> Obj:
        self.patches.append((name, patch))
        return {}


class Cache:
    """The informer's two reads over a fixed list of roles."""

    def __init__(self, roles: list[Obj]) -> None:
        self.roles = roles

    def get(self, namespace: str, name: str) -> Obj | None:
        return next((r for r in self.roles if r["metadata"]["name"] == name), None)

    def list(self, namespace: str | None = None) -> list[Obj]:
        return list(self.roles)


@pytest.mark.parametrize(("roles", "want"), ROWS.values(), ids=ROWS)
def test_sync_cluster_role(roles: list[Obj], want: list[Obj] | None) -> None:
    async def main() -> list[tuple[str, Any]]:
        client = Recording(await local_api(FakeClock()))
        controller = ClusterRoleAggregationController(client, FakeClock())
        controller.cluster_roles = Cache(roles)  # type: ignore[assignment]
        await controller.sync("combined")
        return client.patches

    patches = asyncio.run(main())
    assert patches == ([] if want is None else [("combined", {"rules": want})])


def test_a_role_without_an_aggregation_rule_aggregates_nothing() -> None:
    assert aggregated_rules(_role("hammer", BAR, HAMMER), [_role("chisel", BAR, CHISEL)]) is None


def test_the_bootstrap_roles_chain_view_into_edit_into_admin_and_follow_a_new_labelled_role() -> None:
    async def main() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        for role in BOOTSTRAP_ROLES:
            await client.create(CLUSTER_ROLES, None, copy.deepcopy(role))
        controller = ClusterRoleAggregationController(client, clock)
        await controller.start()

        def rules(name: str) -> list[Obj]:
            role = controller.cluster_roles.get("", name)
            return (role or {}).get("rules") or []

        def has(name: str, verbs: list[str], resource: str) -> bool:
            return any(r.get("verbs") == verbs and resource in (r.get("resources") or []) for r in rules(name))

        await settle(clock, lambda: has("admin", ["get", "list", "watch"], "pods/log"), max_virtual=60)
        assert has("view", ["get", "list", "watch"], "jobs")
        assert not has("view", ["create", "delete", "deletecollection", "patch", "update"], "jobs")
        assert has("edit", ["create", "delete", "deletecollection", "patch", "update"], "jobs")
        assert has(
            "admin", ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"], "roles"
        )
        labels = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
        crd_rule = {"verbs": ["get"], "apiGroups": ["example.com"], "resources": ["widgets"]}
        widgets = {"metadata": {"name": "widgets-view", "labels": labels}, "rules": [crd_rule]}
        await client.create(CLUSTER_ROLES, None, widgets)
        await settle(clock, lambda: has("admin", ["get"], "widgets"), max_virtual=60)
        assert has("view", ["get"], "widgets") and has("edit", ["get"], "widgets")
        await controller.stop()

    asyncio.run(main())
