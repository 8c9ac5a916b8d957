"""A policy/v1 budget's selector as kube-apiserver stores it: the v1 → internal conversion
(pkg/apis/policy/v1/conversion.go) keeps the two v1beta1 stand-in selectors and strips the stand-ins' key from
every other selector (`StripPDBV1beta1Label`, pkg/apis/policy/helpers.go)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import PDBS
from kjobs.clock import FakeClock
from tests.support import local_api

LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
STAND_IN = {"key": LABEL, "operator": "Exists"}
USER = {"key": "app", "operator": "In", "values": ["web"]}


@pytest.mark.parametrize(
    ("selector", "stored"),
    [
        pytest.param({"matchExpressions": [STAND_IN]}, {"matchExpressions": [STAND_IN]}, id="match-none stand-in kept"),
        pytest.param({}, {}, id="empty selector kept"),
        pytest.param(
            {"matchLabels": {"app": "web"}, "matchExpressions": [STAND_IN]},
            {"matchLabels": {"app": "web"}},
            id="stand-in key stripped beside matchLabels",
        ),
        pytest.param(
            {"matchExpressions": [USER, STAND_IN]},
            {"matchExpressions": [USER]},
            id="stand-in key stripped beside terms",
        ),
        pytest.param(
            {"matchExpressions": [{"key": LABEL, "operator": "DoesNotExist"}]},
            {},
            id="another operator on the key stripped",
        ),
        pytest.param({"matchExpressions": [USER]}, {"matchExpressions": [USER]}, id="user terms untouched"),
    ],
)
def test_v1_budget_selector_as_stored(selector: Obj, stored: Obj) -> None:
    async def scenario() -> None:
        client: Any = await local_api(FakeClock())
        body = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"minAvailable": 1, "selector": selector},
        }
        created = await client.create(PDBS, "default", body)
        assert created["spec"]["selector"] == stored

    asyncio.run(scenario())


def test_an_update_is_converted_too() -> None:
    """A selector updated to the stand-in's key beside a label keeps only the label (spec.selector is mutable in
    policy/v1)."""

    async def scenario() -> None:
        client: Any = await local_api(FakeClock())
        body = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }
        pdb = await client.create(PDBS, "default", body)
        pdb["spec"]["selector"] = {"matchLabels": {"app": "db"}, "matchExpressions": [STAND_IN]}
        updated = await client.update(PDBS, "default", pdb)
        assert updated["spec"]["selector"] == {"matchLabels": {"app": "db"}}

    asyncio.run(scenario())
