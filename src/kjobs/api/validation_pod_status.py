"""Pod status writes (`ValidatePodStatusUpdate`, pkg/apis/core/validation/validation.go), as the pod status
strategy runs them on `PUT`/`PATCH .../pods/NAME/status` (pkg/registry/core/pod/strategy.go).

A status write may not: change the metadata's identity (`ValidateObjectMetaUpdate`) nor the mirror-pod and
AppArmor annotations; carry a custom condition type that is no qualified name (reported at
`metadata.conditions[i].Type`, Kubernetes' own path: the field path there still points at metadata); set an
invalid `nominatedNodeName`; change `qosClass`; take a terminated container back to running when the pod's
restart policy does not restart it (init containers: unless a sidecar; ephemeral containers: never); name a
resource claim status after no `spec.resourceClaims` entry, twice, or with an invalid claim name; list invalid
or more than one per family `podIPs`/`hostIPs`, or a `hostIPs[0]` other than `hostIP`; report a Linux user
outside the id ranges. Left out: `allocatedResourcesStatus` (ResourceHealthStatus, alpha).
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation_formats import inclusive_range_error, is_dns1123_subdomain, is_qualified_name, is_sloppy_ip
from kjobs.api.validation_meta import validate_object_meta_update
from kjobs.api.validation_pod_update import validate_pod_specific_annotation_updates

Invalid = ErrorType.FieldValueInvalid
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

MAX_INT32 = 2**31 - 1
SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
ONE_PER_FAMILY = "may specify no more than one IP for each IP family"
NOT_TERMINATED = "may not be transitioned to non-terminated state"


def validate_pod_status_update(pod: Obj, old: Obj) -> list[FieldError]:
    """The errors kube-apiserver returns for a status write taking `old` to `pod` (module note)."""
    # `_obj` of each, inline: a call apiece cost about 1,000 instructions of a status write's
    meta, old_meta, spec = pod.get("metadata"), old.get("metadata"), pod.get("spec")
    old_spec, status, old_status = old.get("spec"), pod.get("status"), old.get("status")
    meta = meta if isinstance(meta, dict) else {}
    old_meta = old_meta if isinstance(old_meta, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    old_spec = old_spec if isinstance(old_spec, dict) else {}
    status = status if isinstance(status, dict) else {}
    old_status = old_status if isinstance(old_status, dict) else {}
    errs = validate_object_meta_update(meta, old_meta)
    if not (spec is old_spec and meta.get("annotations") is old_meta.get("annotations")):
        # Else both are the stored pod's own (a status write keeps the stored spec, and the annotations of most):
        # no annotation changed, and the annotations' rules, which read only them and the spec, passed when it
        # was stored (as `validate_object_meta` skips a shared collection).
        errs.extend(validate_pod_specific_annotation_updates(meta, old_meta, spec))
    _validate_conditions(status.get("conditions"), errs)
    if spec.get("nodeName") != old_spec.get("nodeName") and (spec.get("nodeName") or old_spec.get("nodeName")):
        errs.append(FieldError("status.nodeName", Forbidden, "may not be changed directly"))
    nominated = status.get("nominatedNodeName")
    if nominated and type(nominated) is str and nominated != old_status.get("nominatedNodeName"):
        errs.extend(
            FieldError("status.nominatedNodeName", Invalid, m, nominated) for m in is_dns1123_subdomain(nominated)
        )
    qos = status.get("qosClass") or ""
    if qos != (old_status.get("qosClass") or ""):
        errs.append(FieldError("status.qosClass", Invalid, "field is immutable", qos))
    restart = old_spec.get("restartPolicy") or ""
    # Each list checked only when the stored status has one (`_state_transitions` reads nothing else then, and
    # the sidecars are not looked for): most pods have no init or ephemeral containers.
    if restart != "Always":  # the pod restarts every container: any state may follow any other
        _state_transitions(status, old_status, "containerStatuses", restart, set(), errs)
        if type(old_status.get("initContainerStatuses")) is list:
            _state_transitions(status, old_status, "initContainerStatuses", restart, _sidecars(old_spec), errs)
    if type(old_status.get("ephemeralContainerStatuses")) is list:
        _state_transitions(status, old_status, "ephemeralContainerStatuses", "Never", set(), errs)
    if "resourceClaimStatuses" in status:
        _validate_claim_statuses(status["resourceClaimStatuses"], spec.get("resourceClaims"), errs)
    _validate_ips(status.get("podIPs"), "status.podIPs", errs)
    host_ips = status.get("hostIPs")
    if type(host_ips) is list and host_ips:
        first = _ip_of(host_ips[0])
        if (status.get("hostIP") or "") != first:
            errs.append(FieldError("status.hostIPs[0].ip", Invalid, "must be equal to `hostIP`", first))
        _validate_ips(host_ips, "status.hostIPs", errs)
    windows = None
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        statuses = status.get(key)
        if type(statuses) is not list:
            continue
        for entry in statuses:  # a loop, not `any` of a generator: one container's status costs less
            if type(entry) is dict and entry.get("user"):
                windows = _obj(spec.get("os")).get("name") == "windows" if windows is None else windows
                _validate_users(statuses, f"status.{key}", windows, errs)
                break
    return errs


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _validate_conditions(conditions: Any, errs: list[FieldError]) -> None:
    """`validatePodConditions`: the kubelet's own types pass, any other must be a qualified name."""
    if type(conditions) is not list:
        return
    known = _VALID_CONDITION_TYPES
    for i, condition in enumerate(conditions):
        kind = condition.get("type") if type(condition) is dict else None
        if type(kind) is not str or kind in known:
            continue
        problems = _qualified_name_problems(kind or "")
        if problems:
            errs.extend(FieldError(f"metadata.conditions[{i}].Type", Invalid, m, kind) for m in problems)
        elif len(known) < _KNOWN_CONDITION_TYPES_MAX:
            known.add(kind)


_KNOWN_CONDITION_TYPES_MAX = 1024
_VALID_CONDITION_TYPES: set[str] = set(SYSTEM_CONDITIONS)
"""The kubelet's own condition types and those found qualified names (up to `_KNOWN_CONDITION_TYPES_MAX`): a set
lookup passes them, where a call of the remembered check cost about 1,500 instructions a condition (the
kubelet's `ContainersReady` and `PodReadyToStartContainers` are in every pod's status writes)."""


@functools.lru_cache(maxsize=1024)
def _qualified_name_problems(value: str) -> tuple[str, ...]:
    """`is_qualified_name`, remembered: every status write of every pod repeats the same few condition types."""
    return tuple(is_qualified_name(value))


def _sidecars(spec: Obj) -> set[str]:
    """Init containers with `restartPolicy: Always`, which may leave the terminated state."""
    init = spec.get("initContainers")
    return {c.get("name") for c in (init if isinstance(init, list) else ()) if _obj(c).get("restartPolicy") == "Always"}


def _state_transitions(
    status: Obj, old_status: Obj, key: str, restart: str, restartable: set[str], errs: list[FieldError]
) -> None:
    """`ValidateContainerStateTransition`/`ValidateInitContainerStateTransition`: a container terminated
    (successfully, or at all under `Never`) stays terminated unless the pod restarts it."""
    old_list, new_list = old_status.get(key), status.get(key)
    if type(old_list) is not list or type(new_list) is not list:
        return
    for i, old in enumerate(old_list):
        terminated = _obj(_obj(old).get("state")).get("terminated")
        if not isinstance(terminated, dict):
            continue
        if (terminated.get("exitCode") or 0) != 0 and restart == "OnFailure":
            continue
        name = old.get("name")
        if name in restartable:
            continue
        for new in new_list:
            if _obj(new).get("name") == name and not isinstance(_obj(new.get("state")).get("terminated"), dict):
                errs.append(FieldError(f"status.{key}[{i}].state", Forbidden, NOT_TERMINATED))


def _validate_claim_statuses(statuses: Any, claims: Any, errs: list[FieldError]) -> None:
    """`validatePodResourceClaimStatuses`; an invalid claim name is reported at `.name`, as upstream does."""
    names = {_obj(c).get("name") for c in (claims if isinstance(claims, list) else ())}
    seen: set[Any] = set()
    for i, entry in enumerate(statuses if isinstance(statuses, list) else ()):
        path = f"status.resourceClaimStatuses[{i}].name"
        name = _obj(entry).get("name") or ""
        if name not in names:
            errs.append(FieldError(path, Invalid, "must match the name of an entry in `spec.resourceClaims`", name))
        if name in seen:
            errs.append(FieldError(path, Duplicate, "", name))
        seen.add(name)
        claim_name = _obj(entry).get("resourceClaimName")
        if isinstance(claim_name, str):
            errs.extend(FieldError(path, Invalid, m, claim_name) for m in is_dns1123_subdomain(claim_name))


def _ip_of(entry: Any) -> str:
    ip = _obj(entry).get("ip")
    return ip if isinstance(ip, str) else ""


def _validate_ips(entries: Any, path: str, errs: list[FieldError]) -> None:
    """`validatePodIPs`/`validateHostIPs`: each a valid IP (`IsValidIP`); two at most, one of each family;
    no duplicates."""
    if not isinstance(entries, list):
        return
    if len(entries) == 1:  # a pod's or node's one IP (the usual case): no family or duplicate rule applies
        entry = entries[0]
        ip = entry.get("ip") if isinstance(entry, dict) else None
        ip = ip if isinstance(ip, str) else ""
        if not _valid_ip(ip):
            errs.append(FieldError(f"{path}[0]", Invalid, IP_MSG, ip))
        return
    ips = [_ip_of(entry) for entry in entries]
    for i, ip in enumerate(ips):
        if not _valid_ip(ip):
            errs.append(FieldError(f"{path}[{i}]", Invalid, IP_MSG, ip))
    if len(ips) < 2:
        return
    v4 = sum(1 for ip in ips if _is_ipv4(ip))
    if v4 == 0 or v4 == len(ips) or len(ips) > 2:
        errs.append(FieldError(path, Invalid, ONE_PER_FAMILY, entries))
    seen: set[str] = set()
    for i, ip in enumerate(ips):
        if ip in seen:
            errs.append(FieldError(f"{path}[{i}]", Duplicate, "", entries[i]))
        seen.add(ip)


@functools.lru_cache(maxsize=4096)
def _valid_ip(ip: str) -> bool:
    """`is_sloppy_ip`, remembered: a node's pods share its host IP and a pod writes its IPs in every status."""
    return is_sloppy_ip(ip)


def _is_ipv4(ip: str) -> bool:
    """Go's `ip.To4() != nil`: dotted IPv4, or IPv6 that maps one (`::ffff:a.b.c.d`)."""
    if ":" not in ip:
        return True
    try:
        return ipaddress.IPv6Address(ip).ipv4_mapped is not None
    except ValueError:
        return False


def _validate_users(statuses: Any, path: str, windows: bool, errs: list[FieldError]) -> None:
    """`validateContainerStatusUsers`: a Windows pod reports no Linux user; a Linux user's ids in range. The
    path leaves out `user` (`fldPath.Index(i).Child("linux")`, as upstream writes it)."""
    for i, entry in enumerate(statuses if isinstance(statuses, list) else ()):
        linux = _obj(_obj(entry).get("user")).get("linux")
        if not isinstance(linux, dict):
            continue
        at = f"{path}[{i}].linux"
        if windows:
            errs.append(FieldError(at, Forbidden, "cannot be set for a windows pod"))
            continue
        for key in ("uid", "gid"):
            _id_in_range(linux.get(key), f"{at}.{key}", errs)
        groups = linux.get("supplementalGroups")
        for g, gid in enumerate(groups if isinstance(groups, list) else ()):
            _id_in_range(gid, f"{at}.supplementalGroups[{g}]", errs)


def _id_in_range(value: Any, path: str, errs: list[FieldError]) -> None:
    """`IsValidUserID`/`IsValidGroupID`: 0 to MaxInt32 (an absent id is Go's zero)."""
    value = value or 0
    if isinstance(value, int) and not 0 <= value <= MAX_INT32:
        errs.append(FieldError(path, Invalid, inclusive_range_error(0, MAX_INT32), value))
