"""Stop 49: `security.unenforced` asks the kernel whether kjobs runs as root only for a pod with a
securityContext, not for every pod the node agent admits (one `geteuid` system call a pod before).

The form it replaced is kept here as it was; hypothesis makes pods with and without pod and container
securityContexts (empty, or holding the fields whose answer depends on root and those that do not) and both
answers must be the same, as root and not.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.node import security
from tests.hypothesis_budget import examples


def plain_unenforced(pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    root = security.os.geteuid() == 0
    found: list[str] = []
    pod_context = spec.get("securityContext") or {}
    if pod_context:
        found += [f"spec.securityContext.{key}" for key in security._pod_unenforced(pod_context, root)]
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(kind) or []):
            context = container.get("securityContext") or {}
            if context:
                found += [
                    f"spec.{kind}[{i}].securityContext.{key}" for key in security._container_unenforced(context, root)
                ]
    return found


CONTAINER_CONTEXT = st.fixed_dictionaries(
    {},
    optional={
        "privileged": st.booleans(),
        "readOnlyRootFilesystem": st.booleans(),
        "procMount": st.sampled_from(["Default", "Unmasked"]),
        "capabilities": st.sampled_from([{}, {"add": ["NET_ADMIN"]}, {"drop": ["ALL"]}]),
        "seccompProfile": st.sampled_from([{"type": "RuntimeDefault"}, {"type": "Unconfined"}]),
        "runAsUser": st.integers(0, 2000),
    },
)
POD_CONTEXT = st.fixed_dictionaries(
    {},
    optional={
        "fsGroup": st.integers(0, 10),
        "supplementalGroups": st.lists(st.integers(0, 10), max_size=2),
        "sysctls": st.lists(st.just({"name": "a", "value": "1"}), max_size=1),
        "seLinuxOptions": st.sampled_from([{}, {"level": "s0"}]),
    },
)
CONTAINER = st.fixed_dictionaries({"name": st.just("c")}, optional={"securityContext": CONTAINER_CONTEXT})
SPEC = st.fixed_dictionaries(
    {"containers": st.lists(CONTAINER, max_size=3)},
    optional={"securityContext": POD_CONTEXT, "initContainers": st.lists(CONTAINER, max_size=2)},
)


@settings(max_examples=examples(300), deadline=None)
@given(spec=SPEC, euid=st.sampled_from([0, 1000]))
def test_unenforced_as_before(spec: dict[str, Any], euid: int) -> None:
    pod = {"metadata": {"name": "p"}, "spec": spec}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(security.os, "geteuid", lambda: euid)
        assert security.unenforced(pod) == plain_unenforced(pod)


def test_a_pod_without_a_security_context_asks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(security.os, "geteuid", lambda: calls.append(1) or 1000)
    pod = {"spec": {"containers": [{"name": "c"}, {"name": "d", "securityContext": {}}], "securityContext": {}}}
    assert security.unenforced(pod) == []
    assert calls == []
    pod["spec"]["containers"][1]["securityContext"] = {"privileged": True}
    assert security.unenforced(pod) == ["spec.containers[1].securityContext.privileged"]
    assert calls == [1]
