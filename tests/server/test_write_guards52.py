"""Stop 52: `_write_checked`, the create and the delete call `_validate_admission`, `_written` and `_managed` only
when they would do something (a call a pod write each, for nothing): the first two for the kinds they name
(`_ADMISSION_VALIDATED`, `_WRITE_NOTED`), `_managed` with a manager and field managers on. For every served
resource outside the sets, the functions touch nothing of the service (an object that refuses every attribute),
for every subresource and both a create and an update; inside, they do (so the check can see it)."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.server import service as S
from kjobs.server.registry import RESOURCES


class Untouchable:
    """A service whose every attribute read fails: a method that returns having read none did nothing."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"read {name}")


SUBRESOURCES = ("", "status", "finalize", "ephemeralcontainers")


@pytest.mark.parametrize("r", RESOURCES, ids=lambda r: f"{r.group}/{r.plural}")
def test_a_kind_outside_the_sets_needs_no_call(r: Any) -> None:
    svc: Any = Untouchable()
    obj = {"metadata": {"name": "x", "labels": {"pod-security.kubernetes.io/enforce": "x"}}, "value": 1}
    if r.kind not in S._ADMISSION_VALIDATED:
        for sub in SUBRESOURCES:
            for create in (True, False):
                S.ApiService._validate_admission(svc, r, obj, sub, create=create)
    if r.kind not in S._WRITE_NOTED:
        S.ApiService._written(svc, r)
    for manager, field_managers in ((None, True), ("m", False), ("", True)):
        off: Any = type("Service", (Untouchable,), {"field_managers": field_managers})()
        S.ApiService._managed(off, r, obj, None, manager, "Update", "")


@pytest.mark.parametrize("kind", sorted(S._ADMISSION_VALIDATED | S._WRITE_NOTED))
def test_a_kind_inside_the_sets_is_acted_on(kind: str) -> None:
    r = next(r for r in RESOURCES if r.kind == kind)
    obj = {"metadata": {"name": "x"}}
    with pytest.raises(AssertionError, match="read"):
        if kind in S._ADMISSION_VALIDATED:
            S.ApiService._validate_admission(Untouchable(), r, obj, "", create=True)
        else:
            S.ApiService._written(Untouchable(), r)
