"""The LimitRanger admission plugin's rules for pods (plugin/pkg/admission/limitranger/admission.go, v1.32).

Mutating (`PodMutateLimitFunc`): each Container item's `default` (limits) and `defaultRequest` (requests) fill
what a container (then each init container) lacks, and the pod is annotated `kubernetes.io/limit-ranger:
LimitRanger plugin set: cpu, memory request for container main; cpu limit for container main`. Validating
(`PodValidateLimitFunc`): a Container item's `min`, `max` and `maxLimitRequestRatio` per container and init
container, a Pod item's against the pod's total (`podRequests`/`podLimits`: containers and sidecars add up, the
largest init container moment wins; no overhead), with `minConstraint`, `maxConstraint` and
`limitRequestRatioConstraint`'s words, aggregated as `utilerrors.NewAggregate` prints them. Pods are handled
on create only (v1.32's `SupportsAttributes`); a PersistentVolumeClaim item's `min`/`max` bound a claim's
storage request (`PersistentVolumeClaimValidateLimitFunc`, on create here).
"""

from __future__ import annotations

import copy

from kjobs.api.quantity import Quantity
from kjobs.api.quota import ResourceList, pod_totals, resource_list
from kjobs.api.types import Obj

ANNOTATION = "kubernetes.io/limit-ranger"
_MAX_MILLI = 9223372036854775807 // 1000
"""`resource.MaxMilliValue`: above it, comparisons use whole units."""


def _items(limit_range: Obj) -> list[Obj]:
    limits = (limit_range.get("spec") or {}).get("limits")
    return [i for i in limits if isinstance(i, dict)] if isinstance(limits, list) else []


def _defaults(limit_range: Obj) -> tuple[dict[str, object], dict[str, object]]:
    """`defaultContainerResourceRequirements`: (requests, limits) from the Container items."""
    requests: dict[str, object] = {}
    limits: dict[str, object] = {}
    for item in _items(limit_range):
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    return requests, limits


def _merge(container: Obj, requests: dict[str, object], limits: dict[str, object], kind: str) -> list[str]:
    """`mergeContainerResources`: fill the container's missing entries; the annotation parts it earns."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = container["resources"] = {}
    set_limits = _fill(resources, "limits", limits)
    set_requests = _fill(resources, "requests", requests)
    name = container.get("name") or ""
    parts = []
    if set_requests:
        parts.append(f"{', '.join(sorted(set_requests))} request for {kind} {name}")
    if set_limits:
        parts.append(f"{', '.join(sorted(set_limits))} limit for {kind} {name}")
    return parts


def _fill(resources: Obj, key: str, defaults: dict[str, object]) -> list[str]:
    if not defaults:
        return []
    have = resources.get(key)
    if not isinstance(have, dict):
        have = {}
    missing = [k for k in defaults if k not in have]
    if missing:
        resources[key] = {**have, **{k: defaults[k] for k in missing}}
    return missing


def mutate_pod(pod: Obj, limit_ranges: list[Obj]) -> Obj:
    """The pod after each LimitRange's defaults (a copy when anything is set; `pod` itself otherwise)."""
    out = pod
    for limit_range in limit_ranges:
        requests, limits = _defaults(limit_range)
        if not requests and not limits:
            continue
        spec = out.get("spec")
        if not isinstance(spec, dict):
            return out
        candidate = copy.deepcopy(out)
        cspec = candidate["spec"]
        parts: list[str] = []
        for key, kind in (("containers", "container"), ("initContainers", "init container")):
            for container in cspec.get(key) or []:
                if isinstance(container, dict):
                    parts += _merge(container, requests, limits, kind)
        if parts:
            meta = candidate.setdefault("metadata", {})
            meta["annotations"] = {
                **(meta.get("annotations") or {}),
                ANNOTATION: "LimitRanger plugin set: " + "; ".join(parts),
            }
            out = candidate
    return out


def _values(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """`requestLimitEnforcedValues`: thousandths when all three fit, else whole units (absent: 0)."""
    qs = [request, limit, enforced]
    whole = [q.int_value() if q is not None else 0 for q in qs]
    if all(v <= _MAX_MILLI for v in whole):
        return tuple(q.milli_value() if q is not None else 0 for q in qs)  # type: ignore[return-value]
    return whole[0], whole[1], whole[2]


def _min(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    req_v, lim_v, enf_v = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if req_v < enf_v:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and lim_v < enf_v:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    req_v, lim_v, enf_v = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if lim_v > enf_v:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and req_v > enf_v:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    req_v, lim_v, _ = _values(req, lim, enforced)
    if req is None or req_v == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
        )
    if lim is None or lim_v == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
    observed = lim_v / req_v
    shown = observed
    bound = float(enforced.int_value())
    if enforced.int_value() <= _MAX_MILLI:
        observed *= 1000
        bound = float(enforced.milli_value())
    if observed > bound:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {shown:f}"
    return None


def _check(item: Obj, kind: str, requests: ResourceList, limits: ResourceList, errs: list[str]) -> None:
    for section, rule in (("min", _min), ("max", _max), ("maxLimitRequestRatio", _ratio)):
        enforced = resource_list(item.get(section))
        for name in sorted(enforced):
            message = rule(kind, name, enforced[name], requests, limits)
            if message is not None:
                errs.append(message)


def validate_pod(pod: Obj, limit_range: Obj) -> str | None:
    """`PodValidateLimitFunc` for one LimitRange: the refusal's words, or None."""
    spec = pod.get("spec") or {}
    errs: list[str] = []
    for item in _items(limit_range):
        if item.get("type") == "Container":
            for key in ("containers", "initContainers"):
                for container in spec.get(key) or []:
                    if isinstance(container, dict):
                        resources = container.get("resources") or {}
                        requests = resource_list(resources.get("requests"))
                        limits = resource_list(resources.get("limits"))
                        _check(item, "Container", requests, limits, errs)
        elif item.get("type") == "Pod":
            bare = {k: v for k, v in spec.items() if k != "overhead"}
            _check(item, "Pod", pod_totals(bare, "requests"), pod_totals(bare, "limits"), errs)
    return aggregate(errs)


def _max_request(kind: str, name: str, enforced: Quantity, requests: ResourceList) -> str | None:
    """`maxRequestConstraint`: for a claim, whose limits are not the user's."""
    req = requests.get(name)
    req_v, _, enf_v = _values(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if req_v > enf_v:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def validate_claim(claim: Obj, limit_range: Obj) -> str | None:
    """`PersistentVolumeClaimValidateLimitFunc`: a PersistentVolumeClaim item's `min` and `max` against the claim's
    `spec.resources.requests` (claims are not defaulted)."""
    requests = resource_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    errs: list[str] = []
    for item in _items(limit_range):
        if item.get("type") != "PersistentVolumeClaim":
            continue
        low = resource_list(item.get("min"))
        for name in sorted(low):
            message = _min("PersistentVolumeClaim", name, low[name], requests, {})
            if message is not None:
                errs.append(message)
        high = resource_list(item.get("max"))
        for name in sorted(high):
            message = _max_request("PersistentVolumeClaim", name, high[name], requests)
            if message is not None:
                errs.append(message)
    return aggregate(errs)


def aggregate(messages: list[str]) -> str | None:
    """`utilerrors.NewAggregate(errs).Error()`: one message as it is; several deduplicated in `[a, b]`."""
    if not messages:
        return None
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
