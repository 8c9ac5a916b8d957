"""Stop 53: `podstatus._kubelet_conditions` writes its usual conditions as dict literals (not through `_condition`),
tests whether a regular container started in a loop (not `any` over a generator), and looks for sidecars only in a
pod with init containers and for readiness gates' conditions only in a pod with gates (docs/node53.md).

Stop 52's form is kept here; hypothesis makes init and regular container statuses (ready or not, waiting, running,
terminated), pods with and without init containers (sidecars or not) and readiness gates, every phase, and
conditions others own: the same conditions, key order included."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.node.podstatus import FAILED, SUCCEEDED, _condition, _kubelet_conditions, _names
from kjobs.node.restart import is_sidecar
from tests.hypothesis_budget import examples


# fmt: off
def old_kubelet_conditions(
    pod: Obj, init_statuses: list[Obj], statuses: list[Obj], phase: str, sandbox_ready: bool, others: list[Obj]
) -> list[Obj]:
    conditions = [_condition("PodReadyToStartContainers", sandbox_ready)]
    # Initialized
    incomplete = [s["name"] for s in init_statuses if not s["ready"]]
    regular_started = any("running" in s["state"] or "terminated" in s["state"] for s in statuses)
    if phase == SUCCEEDED:
        conditions.append(_condition("Initialized", True, "PodCompleted"))
    elif regular_started or not incomplete:
        conditions.append(_condition("Initialized", True))
    else:
        conditions.append(
            _condition(
                "Initialized",
                False,
                "ContainersNotInitialized",
                f"containers with incomplete status: {_names(incomplete)}",
            )
        )
    sidecars = {c.get("name") for c in pod.get("spec", {}).get("initContainers") or () if is_sidecar(c)}
    unready = [s["name"] for s in init_statuses if s["name"] in sidecars and not s["ready"]] if sidecars else []
    unready += [s["name"] for s in statuses if not s["ready"]]
    if phase == SUCCEEDED:
        containers_ready = _condition("ContainersReady", False, "PodCompleted")
    elif phase == FAILED:
        containers_ready = _condition("ContainersReady", False, "PodFailed")
    elif unready:
        containers_ready = _condition(
            "ContainersReady", False, "ContainersNotReady", f"containers with unready status: {_names(unready)}"
        )
    else:
        containers_ready = _condition("ContainersReady", True)
    if containers_ready["status"] != "True":
        ready = dict(containers_ready, type="Ready")
    else:
        gate_messages = []
        by_type = {c.get("type"): c for c in others}
        for gate in pod.get("spec", {}).get("readinessGates") or []:
            ctype = gate.get("conditionType", "")
            found = by_type.get(ctype)
            if found is None:
                gate_messages.append(f'corresponding condition of pod readiness gate "{ctype}" does not exist.')
            elif found.get("status") != "True":
                gate_messages.append(
                    f'the status of pod readiness gate "{ctype}" is not "True", but {found.get("status")}'
                )
        ready = (
            _condition("Ready", False, "ReadinessGatesNotReady", ", ".join(gate_messages))
            if gate_messages
            else _condition("Ready", True)
        )
    conditions += [ready, containers_ready, _condition("PodScheduled", True)]
    return conditions
# fmt: on


_states = st.sampled_from(
    [{}, {"waiting": {"reason": "PodInitializing"}}, {"running": {}}, {"terminated": {"exitCode": 0}}]
)


def _statuses(names: list[str]) -> Any:
    return st.lists(
        st.builds(
            lambda name, ready, state: {"name": name, "ready": ready, "state": state},
            st.sampled_from(names),
            st.booleans(),
            _states,
        ),
        max_size=3,
    )


_init_specs = st.one_of(
    st.none(),
    st.just([]),
    st.lists(
        st.builds(
            lambda name, policy: {"name": name, **({} if policy is None else {"restartPolicy": policy})},
            st.sampled_from(["i1", "i2"]),
            st.sampled_from([None, "Always", "Never"]),
        ),
        max_size=2,
    ),
)
_gates = st.one_of(
    st.none(),
    st.just([]),
    st.lists(st.builds(lambda t: {"conditionType": t}, st.sampled_from(["g1", "g2"])), max_size=2),
)
_others = st.lists(
    st.builds(
        lambda t, s: {"type": t, "status": s},
        st.sampled_from(["g1", "g2", "DisruptionTarget"]),
        st.sampled_from(["True", "False"]),
    ),
    max_size=3,
)


@settings(max_examples=examples(1500), deadline=None)
@given(
    init_specs=_init_specs,
    gates=_gates,
    init_statuses=_statuses(["i1", "i2"]),
    statuses=_statuses(["a", "b"]),
    phase=st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
    sandbox_ready=st.booleans(),
    others=_others,
)
def test_kubelet_conditions_are_stop_52s(
    init_specs: list[Obj] | None,
    gates: list[Obj] | None,
    init_statuses: list[Obj],
    statuses: list[Obj],
    phase: str,
    sandbox_ready: bool,
    others: list[Obj],
) -> None:
    spec: Obj = {"containers": [{"name": "a"}, {"name": "b"}]}
    if init_specs is not None:
        spec["initContainers"] = init_specs
    if gates is not None:
        spec["readinessGates"] = gates
    pod = {"spec": spec}
    new = _kubelet_conditions(pod, init_statuses, statuses, phase, sandbox_ready, others)
    old = old_kubelet_conditions(pod, init_statuses, statuses, phase, sandbox_ready, others)
    assert [list(c.items()) for c in new] == [list(c.items()) for c in old]
