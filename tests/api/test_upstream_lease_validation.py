"""Upstream's Lease validation tables, through kjobs' API.

pkg/apis/coordination/validation/validation_test.go (`TestValidateLease`, `TestValidateLeaseSpec`,
`TestValidateLeaseSpecUpdate`; the LeaseCandidate and strategy tables are left out: docs/upstream-core-validation.md).
Upstream counts errors; these ports send the row's lease to kjobs' in-process API and check the 422's causes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import LEASES
from tests.api.upstream_validation_support import Cause, causes, run

DURATION = ("spec.leaseDurationSeconds", "FieldValueInvalid", "Invalid value: 0: must be greater than 0")
TRANSITIONS = ("spec.leaseTransitions", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0")


def lease(name: str, namespace: str = "default", **spec: Any) -> Obj:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_validate_lease() -> None:
    """TestValidateLease: a bad name and a bad namespace, two errors."""

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as info:
            await client.create(LEASES, "==invalid_Namespace==", lease("invalidName++", "==invalid_Namespace=="))
        assert [(field, reason) for field, reason, _ in causes(info.value)] == [
            ("metadata.name", "FieldValueInvalid"),
            ("metadata.namespace", "FieldValueInvalid"),
        ]

    run(scenario)


SPEC = [
    pytest.param({"holderIdentity": "holder", "leaseDurationSeconds": 10, "leaseTransitions": 1}, [], id="valid"),
    # the strategy fields are dropped (CoordinatedLeaderElection is alpha, off in v1.32) before validation
    pytest.param(
        {
            "holderIdentity": "holder",
            "leaseDurationSeconds": 10,
            "leaseTransitions": 1,
            "strategy": "OldestEmulationVersion",
            "preferredHolder": "someotherholder",
        },
        [],
        id="valid with PreferredHolder",
    ),
    pytest.param(
        {"holderIdentity": "holder", "leaseDurationSeconds": 0, "leaseTransitions": -1},
        [DURATION, TRANSITIONS],
        id="testcases[2]",
    ),
    pytest.param(
        {"holderIdentity": "holder", "leaseDurationSeconds": 0, "leaseTransitions": -1, "preferredHolder": "holder2"},
        [DURATION, TRANSITIONS],
        id="testcases[3]",
    ),
]


@pytest.mark.parametrize(("spec", "want"), SPEC)
def test_validate_lease_spec(spec: Obj, want: list[Cause]) -> None:
    """TestValidateLeaseSpec (rows 2 and 3 are unnamed upstream). A stored lease holds no strategy fields."""

    async def scenario(client: Any) -> None:
        try:
            created = await client.create(LEASES, "default", lease("holder", **spec))
        except ApiError as exc:
            assert causes(exc) == want
            return
        assert want == []
        assert created["spec"] == {k: v for k, v in spec.items() if k not in ("strategy", "preferredHolder")}

    run(scenario)


def test_validate_lease_spec_update() -> None:
    """TestValidateLeaseSpecUpdate: an update to duration 0 and transitions -1 is refused (upstream's third
    error, the missing resourceVersion, cannot occur through the API's update); duration 10 and 20 are kept."""

    async def scenario(client: Any) -> None:
        stored = await client.create(
            LEASES,
            "default",
            lease("holder", holderIdentity="oldHolder", leaseDurationSeconds=3, leaseTransitions=3),
        )
        bad = dict(stored, spec={"holderIdentity": "holder", "leaseDurationSeconds": 0, "leaseTransitions": -1})
        with pytest.raises(ApiError) as info:
            await client.update(LEASES, "default", bad)
        assert causes(info.value) == [DURATION, TRANSITIONS]
        good = dict(stored, spec={"holderIdentity": "holder", "leaseDurationSeconds": 10, "leaseTransitions": 20})
        written = await client.update(LEASES, "default", good)
        assert written["spec"] == good["spec"]
        with pytest.raises(ApiError) as info:
            await client.patch(LEASES, "default", "holder", {"spec": {"leaseDurationSeconds": -5}}, patch_type="merge")
        assert causes(info.value) == [
            ("spec.leaseDurationSeconds", "FieldValueInvalid", "Invalid value: -5: must be greater than 0")
        ]

    run(scenario)
