"""Stop 51: a pod status write's validation with fewer calls, giving the errors it gave.

`validate_pod_status_update` reads its six parts inline rather than through `_obj`; `_validate_conditions`
passes condition types found valid (and the kubelet's own) by a set lookup, not the remembered check's call; and
`_validate_ips` checks a one-entry list (a pod's or node's one IP) without building the list of IPs; the
containers' users are looked for by a loop rather than `any` of a generator; the init and ephemeral containers'
state transitions are checked only when the stored status lists them. The old
forms are kept here as they were, each built from the module's own helpers; Hypothesis makes status writes with
conditions of valid, invalid and repeated types, one or more IPs (valid, invalid, of either family, repeated,
malformed entries) and malformed parts, and both forms must give the same errors in the same order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_pod_status as S
from kjobs.api.errors import FieldError
from kjobs.api.validation_meta import validate_object_meta_update
from kjobs.api.validation_pod_update import validate_pod_specific_annotation_updates
from tests.hypothesis_budget import examples

Obj = dict[str, Any]


def old_validate_conditions(conditions: Any, errs: list[FieldError]) -> None:
    if type(conditions) is not list:
        return
    for i, condition in enumerate(conditions):
        kind = condition.get("type") if type(condition) is dict else None
        if type(kind) is not str or kind in S.SYSTEM_CONDITIONS:
            continue
        problems = S._qualified_name_problems(kind or "")
        if problems:
            errs.extend(FieldError(f"metadata.conditions[{i}].Type", S.Invalid, m, kind) for m in problems)


def old_validate_ips(entries: Any, path: str, errs: list[FieldError]) -> None:
    if not isinstance(entries, list):
        return
    ips = [S._ip_of(entry) for entry in entries]
    for i, ip in enumerate(ips):
        if not S._valid_ip(ip):
            errs.append(FieldError(f"{path}[{i}]", S.Invalid, S.IP_MSG, ip))
    if len(ips) < 2:
        return
    v4 = sum(1 for ip in ips if S._is_ipv4(ip))
    if v4 == 0 or v4 == len(ips) or len(ips) > 2:
        errs.append(FieldError(path, S.Invalid, S.ONE_PER_FAMILY, entries))
    seen: set[str] = set()
    for i, ip in enumerate(ips):
        if ip in seen:
            errs.append(FieldError(f"{path}[{i}]", S.Duplicate, "", entries[i]))
        seen.add(ip)


def old_validate_pod_status_update(pod: Obj, old: Obj) -> list[FieldError]:
    """The stop-50 function, its helpers the old forms above."""
    _obj = S._obj
    meta, old_meta = _obj(pod.get("metadata")), _obj(old.get("metadata"))
    spec, old_spec = _obj(pod.get("spec")), _obj(old.get("spec"))
    status, old_status = _obj(pod.get("status")), _obj(old.get("status"))
    errs = validate_object_meta_update(meta, old_meta)
    if not (spec is old_spec and meta.get("annotations") is old_meta.get("annotations")):
        errs.extend(validate_pod_specific_annotation_updates(meta, old_meta, spec))
    old_validate_conditions(status.get("conditions"), errs)
    if spec.get("nodeName") != old_spec.get("nodeName") and (spec.get("nodeName") or old_spec.get("nodeName")):
        errs.append(FieldError("status.nodeName", S.Forbidden, "may not be changed directly"))
    nominated = status.get("nominatedNodeName")
    if nominated and type(nominated) is str and nominated != old_status.get("nominatedNodeName"):
        errs.extend(
            FieldError("status.nominatedNodeName", S.Invalid, m, nominated) for m in S.is_dns1123_subdomain(nominated)
        )
    qos = status.get("qosClass") or ""
    if qos != (old_status.get("qosClass") or ""):
        errs.append(FieldError("status.qosClass", S.Invalid, "field is immutable", qos))
    restart = old_spec.get("restartPolicy") or ""
    if restart != "Always":
        S._state_transitions(status, old_status, "containerStatuses", restart, set(), errs)
        S._state_transitions(status, old_status, "initContainerStatuses", restart, S._sidecars(old_spec), errs)
    S._state_transitions(status, old_status, "ephemeralContainerStatuses", "Never", set(), errs)
    if "resourceClaimStatuses" in status:
        S._validate_claim_statuses(status["resourceClaimStatuses"], spec.get("resourceClaims"), errs)
    old_validate_ips(status.get("podIPs"), "status.podIPs", errs)
    host_ips = status.get("hostIPs")
    if type(host_ips) is list and host_ips:
        first = S._ip_of(host_ips[0])
        if (status.get("hostIP") or "") != first:
            errs.append(FieldError("status.hostIPs[0].ip", S.Invalid, "must be equal to `hostIP`", first))
        old_validate_ips(host_ips, "status.hostIPs", errs)
    windows = None
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        statuses = status.get(key)
        if type(statuses) is list and any(type(s) is dict and s.get("user") for s in statuses):
            windows = _obj(spec.get("os")).get("name") == "windows" if windows is None else windows
            S._validate_users(statuses, f"status.{key}", windows, errs)
    return errs


TYPES = st.sampled_from(
    ["Ready", "PodScheduled", "ContainersReady", "PodReadyToStartContainers", "DisruptionTarget", "example.com/x",
     "bad type!", "", "-x", "a/b/c"]
)  # fmt: skip
CONDITION = st.one_of(
    st.fixed_dictionaries({"type": TYPES, "status": st.just("True")}),
    st.fixed_dictionaries({"type": st.one_of(st.none(), st.integers(0, 1))}),
    st.none(),
    st.just("Ready"),
)
IPS = st.sampled_from(["10.0.0.1", "10.0.0.2", "::1", "fd00::2", "::ffff:10.0.0.1", "not-an-ip", "", "010.0.0.1"])
IP_ENTRY = st.one_of(st.fixed_dictionaries({"ip": IPS}), st.fixed_dictionaries({"ip": st.integers(0, 1)}), st.just({}),
                     st.none(), st.just("10.0.0.1"))  # fmt: skip
IP_LIST = st.one_of(st.lists(IP_ENTRY, max_size=3), st.none(), st.just("10.0.0.1"), st.just({}))
USER = st.one_of(
    st.none(),
    st.just({}),
    st.fixed_dictionaries({"linux": st.fixed_dictionaries({"uid": st.sampled_from([0, -1, 7])})}),
)
STATE = st.sampled_from([{}, {"running": {}}, {"terminated": {"exitCode": 0}}, {"terminated": {"exitCode": 1}}])
CONTAINER_STATUS = st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])}, optional={"user": USER, "state": STATE}),
    st.none(),
    st.just("a"),
)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "conditions": st.one_of(st.lists(CONDITION, max_size=4), st.none(), st.just({})),
        "podIPs": IP_LIST,
        "hostIPs": IP_LIST,
        "hostIP": IPS,
        "qosClass": st.sampled_from(["BestEffort", "Burstable"]),
        "nominatedNodeName": st.sampled_from(["n1", "Bad_Name"]),
        "containerStatuses": st.one_of(st.lists(CONTAINER_STATUS, max_size=3), st.none()),
        "ephemeralContainerStatuses": st.lists(CONTAINER_STATUS, max_size=2),
        "initContainerStatuses": st.one_of(st.lists(CONTAINER_STATUS, max_size=2), st.just({})),
    },
)
META = st.fixed_dictionaries({"name": st.just("p"), "namespace": st.just("default"), "resourceVersion": st.just("1")})
SPEC = st.fixed_dictionaries(
    {}, optional={"nodeName": st.sampled_from(["n1", "n2"]), "restartPolicy": st.just("Never")}
)
PART = st.sampled_from(["dict", "none", "list"])
META_PART = st.sampled_from(["dict", "none"])


@st.composite
def writes(draw: st.DrawFn) -> tuple[Obj, Obj]:
    old: Obj = {"metadata": draw(META), "spec": draw(SPEC), "status": draw(STATUS)}
    new: Obj = {"metadata": dict(old["metadata"]), "spec": old["spec"], "status": draw(STATUS)}
    for obj in (old, new):  # a malformed part reads as empty
        for key in ("metadata", "spec", "status"):
            ways = META_PART if key == "metadata" else PART  # a list metadata: the decoder refuses it
            how = draw(ways) if draw(st.booleans()) else "dict"
            if how == "none":
                obj[key] = None
            elif how == "list":
                obj[key] = []
    return new, old


@settings(max_examples=examples(600), deadline=None)
@given(writes())
def test_status_write_errors_as_before(write: tuple[Obj, Obj]) -> None:
    new, old = write
    assert S.validate_pod_status_update(new, old) == old_validate_pod_status_update(new, old)


@settings(max_examples=examples(400), deadline=None)
@given(st.one_of(st.lists(CONDITION, max_size=5), st.none(), st.just("Ready")))
def test_conditions_as_before_and_again(conditions: Any) -> None:
    for _ in range(2):  # the second pass finds the valid types remembered
        errs: list[FieldError] = []
        expected: list[FieldError] = []
        S._validate_conditions(conditions, errs)
        old_validate_conditions(conditions, expected)
        assert errs == expected


@settings(max_examples=examples(400), deadline=None)
@given(IP_LIST)
def test_ips_as_before(entries: Any) -> None:
    errs: list[FieldError] = []
    expected: list[FieldError] = []
    S._validate_ips(entries, "status.podIPs", errs)
    old_validate_ips(entries, "status.podIPs", expected)
    assert errs == expected


def test_users_checked_once_a_list() -> None:
    """Two containers reporting an out-of-range user: the list's users are checked once, as `any` had it."""
    bad = {"linux": {"uid": -1}}
    new = {
        "metadata": {"name": "p", "namespace": "default", "resourceVersion": "1"},
        "spec": {},
        "status": {"containerStatuses": [{"name": "a", "user": bad}, {"name": "b", "user": bad}]},
    }
    old = {"metadata": dict(new["metadata"]), "spec": new["spec"], "status": {}}
    errors = S.validate_pod_status_update(new, old)
    assert errors == old_validate_pod_status_update(new, old)
    assert len(errors) == 2
