"""Stop 51: `status_patch` picks the keys that differ in one pass over the status and reads the conditions once;
the form it replaced is kept here and both are run on hypothesis-made statuses (the API's, the one wanted, the
one last written: conditions of repeated, missing and foreign types, keys with stale values, nulls, the agent's
`reason`/`message`). The bodies must be equal key for key in the same order (the order is the merged object's,
and so every stored byte's), or fail alike."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.node.agent import _OWNED_STATUS_KEYS, status_patch
from tests.hypothesis_budget import examples

Obj = dict[str, Any]


def old_status_patch(api_status: Obj, status: Obj, last_written: Obj) -> Obj:
    """`status_patch` as stop 50 left it."""
    body: Obj = dict(status)
    for key in _OWNED_STATUS_KEYS:
        if key not in status and key in last_written:
            body[key] = None
    before: dict[str, set[str]] = {}
    for source in (api_status, last_written):
        for condition in source.get("conditions") or []:
            before.setdefault(str(condition.get("type")), set()).update(condition)
    in_api = {str(c.get("type")): c for c in api_status.get("conditions") or [] if isinstance(c, dict)}
    conditions = []
    for condition in status.get("conditions") or []:
        stale = before.get(str(condition.get("type")), set()) - set(condition)
        if stale:
            conditions.append({**condition, **dict.fromkeys(sorted(stale))})
        elif in_api.get(str(condition.get("type"))) != condition:
            conditions.append(condition)
    if conditions:
        body["conditions"] = conditions
        wanted = [c.get("type") for c in status.get("conditions") or []]
        kept = set(wanted)
        merged = [*in_api, *(t for t in wanted if t not in in_api)]
        if [t for t in merged if t in kept] != wanted:
            body["$setElementOrder/conditions"] = [{"type": t} for t in wanted]
    else:
        body.pop("conditions", None)
    for key in [k for k, v in body.items() if k != "conditions" and v is not None and api_status.get(k) == v]:
        del body[key]
    return body


def outcome(api_status: Obj, status: Obj, last_written: Obj, form: Any) -> Any:
    try:
        return "ok", list(form(api_status, status, last_written).items())
    except Exception as exc:  # both forms must fail alike
        return type(exc).__name__


TYPES = st.sampled_from(["PodScheduled", "Initialized", "Ready", "ContainersReady", "DisruptionTarget", 7, None])
VALUE = st.sampled_from(["True", "False", "x", None, 0])
CONDITION = st.fixed_dictionaries(
    {},
    optional={
        "type": TYPES,
        "status": VALUE,
        "reason": VALUE,
        "message": VALUE,
        "lastProbeTime": VALUE,
        "lastTransitionTime": st.sampled_from(["T0", "T1"]),
    },
)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Pending", "Running", "Succeeded", None]),
        "reason": VALUE,
        "message": VALUE,
        "hostIP": st.sampled_from(["127.0.0.1", "10.0.0.1"]),
        "podIPs": st.lists(st.fixed_dictionaries({"ip": st.sampled_from(["a", "b"])}), max_size=2),
        "conditions": st.one_of(st.none(), st.lists(CONDITION, max_size=6)),
        "containerStatuses": st.lists(st.fixed_dictionaries({"name": st.just("main"), "ready": st.booleans()})),
        "nominatedNodeName": VALUE,
    },
)


@settings(max_examples=examples(1500), deadline=None)
@given(api_status=STATUS, status=STATUS, last_written=st.one_of(st.just({}), STATUS), order=st.permutations(range(8)))
def test_the_body_is_the_one_the_old_form_made(api_status: Obj, status: Obj, last_written: Obj, order: Any) -> None:
    keys = list(status)
    status = {keys[i]: status[keys[i]] for i in order if i < len(keys)}  # any key order
    assert outcome(api_status, status, last_written, status_patch) == outcome(
        api_status, status, last_written, old_status_patch
    )


def test_the_simulated_pods_first_and_only_patch() -> None:
    """The one a simulated pod sends: Pending and scheduled in the API, Succeeded wanted, nothing written yet."""
    t0 = "2026-01-01T00:00:00Z"
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": t0}
    api_status = {"phase": "Pending", "qosClass": "BestEffort", "conditions": [scheduled]}
    done = [
        {"type": t, "status": "False", "lastProbeTime": None, "reason": "PodCompleted", "lastTransitionTime": t0}
        for t in ("Initialized", "Ready", "ContainersReady")
    ]
    status = {
        "phase": "Succeeded",
        "conditions": [*done, dict(scheduled)],
        "hostIP": "127.0.0.1",
        "qosClass": "BestEffort",
        "containerStatuses": [{"name": "main"}],
    }
    body = status_patch(api_status, status, {})
    assert list(body.items()) == list(old_status_patch(api_status, status, {}).items())
    assert list(body) == ["phase", "conditions", "hostIP", "containerStatuses", "$setElementOrder/conditions"]
