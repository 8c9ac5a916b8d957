"""Stop 53: the pod write path reads `AdmissionSettings.disabled_plugins` inline instead of calling `enabled`.

`admit_pod` itself is held by tests/server/test_default_tolerations_rewrite.py (its plain form asks `enabled`).
Here the service: a pod created, then patched (metadata only, as the Job controller's finalizer removal), by an
`ApiService` with every subset of the plugins the path reads disabled, gets what each plugin's `enabled` answer
says, and nothing a disabled one would have done."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import LIMIT_RANGES, NAMESPACES, PODS, SERVICE_ACCOUNTS
from kjobs.clock import FakeClock
from kjobs.server import admission as A
from kjobs.server.admission import AdmissionSettings
from kjobs.server.podsecurity import PLUGIN as POD_SECURITY
from kjobs.virtualtime import run
from tests.support import local_api

PLUGINS = (A.SERVICE_ACCOUNT, A.DEFAULT_TOLERATION_SECONDS_PLUGIN, A.PRIORITY, A.LIMIT_RANGER, POD_SECURITY)
SUBSETS = [frozenset(c) for n in range(len(PLUGINS) + 1) for c in itertools.combinations(PLUGINS, n)]


def _written(settings: AdmissionSettings) -> tuple[Obj, Obj, Any]:
    """The created pod, the patched pod, and the refusal (or None) of a pod a restricted namespace forbids."""

    async def main() -> tuple[Obj, Obj, Any]:
        client = await local_api(clock, admission=settings)
        labels = {"pod-security.kubernetes.io/enforce": "restricted"}
        await client.create(NAMESPACES, None, {"metadata": {"name": "ns", "labels": labels}})
        await client.create(SERVICE_ACCOUNTS, "ns", {"metadata": {"name": "default"}})
        await client.create(
            LIMIT_RANGES,
            "ns",
            {
                "metadata": {"name": "limits"},
                "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]},
            },
        )
        ctx = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        pod = {
            "metadata": {"name": "p", "finalizers": ["example.com/f"]},
            "spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": ctx}]},
        }
        created = await client.create(PODS, "ns", pod)
        patched = await client.patch(
            PODS, "ns", "p", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/f"]}}
        )
        refusal = None
        try:
            await client.create(
                PODS, "ns", {"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
            )
        except ApiError as exc:
            refusal = exc.reason
        return created, patched, refusal

    clock = FakeClock()
    return run(main(), clock)


@pytest.mark.parametrize("disabled", SUBSETS, ids=lambda s: ",".join(sorted(s)) or "none")
def test_each_plugin_acts_as_enabled_says(disabled: frozenset[str]) -> None:
    settings = AdmissionSettings(disabled_plugins=disabled, service_account_lookup=True)
    created, patched, refusal = _written(settings)
    spec = created["spec"]
    assert (spec.get("serviceAccountName") == "default") is settings.enabled(A.SERVICE_ACCOUNT)
    tolerations = spec.get("tolerations") or []
    assert (len(tolerations) == 2) is settings.enabled(A.DEFAULT_TOLERATION_SECONDS_PLUGIN)
    assert ("priority" in spec) is settings.enabled(A.PRIORITY)
    requests = spec["containers"][0].get("resources", {}).get("requests")
    assert (requests == {"cpu": "100m"}) is settings.enabled(A.LIMIT_RANGER)
    assert (refusal is not None) is settings.enabled(POD_SECURITY)
    assert patched["metadata"].get("finalizers") is None
    assert patched["spec"] == spec  # the update's admission adds nothing an admitted pod lacks
