"""Stop 52: a pod create's admission does the same with less.

- `admit_pod_priority(owned=True)` sets the fields in the pod and spec it is given (the copies the ServiceAccount and
  DefaultTolerationSeconds plugins made): its copy-on-write form (`owned=False`, what every create did before) is
  the oracle, and hypothesis makes specs and PriorityClass sets; the result (key order included) or the refusal
  is the same.
- `QuotaAdmission.applies` is asked before the ResourceQuota check's coroutine is made: it holds exactly where
  `check` has work (a counted resource, a namespace with a quota).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS, RESOURCE_QUOTAS
from kjobs.clock import FakeClock
from kjobs.server import admission
from kjobs.server.admission import admit_pod_priority
from kjobs.server.app import create_app
from kjobs.store import MemoryStore
from tests.hypothesis_budget import examples

CLASS = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({"name": st.sampled_from(["high", "low", "system-node-critical"])}),
        "value": st.integers(-5, 2000),
    },
    optional={
        "globalDefault": st.booleans(),
        "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority", None]),
    },
)
SPEC = st.fixed_dictionaries(
    {"containers": st.just([{"name": "c", "image": "busybox"}])},
    optional={
        "priorityClassName": st.sampled_from(["high", "low", "missing", "", None]),
        "priority": st.one_of(st.none(), st.integers(-5, 2000)),
        "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority", None]),
        "serviceAccountName": st.just("default"),
        "nodeName": st.just("n"),
    },
)


def outcome(pod: Obj, classes: list[Obj], owned: bool) -> Any:
    try:
        got = admit_pod_priority(pod, None, classes, generated=True, owned=owned)
    except ApiError as err:
        return ("refused", err.code, str(err))
    return (got, list(got), list(got["spec"]))


@settings(max_examples=examples(400), deadline=None)
@given(spec=SPEC, classes=st.lists(CLASS, max_size=3))
def test_a_create_owned_gets_what_the_copy_got(spec: Obj, classes: list[Obj]) -> None:
    pod = {"metadata": {"generateName": "p-", "name": "p-abcde"}, "spec": spec}
    given_pod = copy.deepcopy(pod)
    plain = outcome(copy.deepcopy(pod), classes, owned=False)
    owned_pod = copy.deepcopy(pod)
    owned_spec = owned_pod["spec"]
    got = outcome(owned_pod, classes, owned=True)
    assert got == plain
    if plain[0] != "refused":
        assert got[0] is owned_pod and got[0]["spec"] is owned_spec  # set in place, not copied
    not_owned = copy.deepcopy(pod)
    outcome(not_owned, classes, owned=False)
    assert not_owned == given_pod  # copy on write: the pod given is as it was


def test_the_service_admits_in_place_only_the_plugins_copy(monkeypatch: Any) -> None:
    """The service passes `owned` only for a create whose pod the plugins before Priority copied."""
    seen: list[tuple[bool, bool]] = []
    real = admission.admit_pod_priority

    def spy(pod: Obj, old: Obj | None, classes: Iterable[Obj], *, generated: bool = False, owned: bool = False) -> Obj:
        seen.append((old is None, owned))
        return real(pod, old, classes, generated=generated, owned=owned)

    import kjobs.server.service as service_module

    monkeypatch.setattr(service_module, "admit_pod_priority", spy)

    async def main() -> None:
        app = create_app(MemoryStore(), clock=FakeClock().now)
        await app.startup()
        client = LocalClient(app.service)
        body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        created = await client.create(PODS, "default", body)
        assert created["spec"]["priority"] == 0
        assert created["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
        created["metadata"]["labels"] = {"a": "b"}
        await client.update(PODS, "default", created)

    asyncio.run(main())
    assert seen == [(True, True), (False, False)]  # the create's pod got a ServiceAccount: a copy


def test_quota_applies_where_check_has_work() -> None:
    async def main() -> None:
        app = create_app(MemoryStore(), clock=FakeClock().now)
        await app.startup()
        quota = app.service.quota
        assert not quota.applies("", "pods", "default")  # no ResourceQuota yet
        client = LocalClient(app.service)
        await client.create(RESOURCE_QUOTAS, "default", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
        assert quota.applies("", "pods", "default")
        assert not quota.applies("", "pods", "kube-system")
        assert not quota.applies("", "events", "default")  # never evaluated
        assert not quota.applies("", "pods", "")

    asyncio.run(main())
