"""ResourceQuota: resource lists as quota adds them, what a pod or another object uses, and the admission check.

Pure, like the rest of `kjobs.api`: the API service (`kjobs.server.quota`) brings the namespace's quotas and
writes the new usage; the quota controller (`kjobs.controllers.resourcequota`) recomputes it from the objects.

Follows Kubernetes v1.32: staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go (`Add`, `Mask`,
`LessThanOrEqual`), .../quota/v1/generic/evaluator.go (`Matches`, the object count evaluator and its
`count/<resource>.<group>` names), pkg/quota/v1/evaluator/core/pods.go (`PodUsageFunc`, `Constraints`, the pod
scopes), pkg/api/v1/resource/helpers.go (`PodRequests`, `PodLimits`), and the admission check `CheckRequest`
of staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go with its messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from kjobs.api.quantity import Format, Quantity, QuantityError, parse_quantity
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj

ResourceList = dict[str, Quantity]

PODS = "pods"
COUNT_PODS = "count/pods"
POD_RESOURCES = frozenset(
    {
        COUNT_PODS,
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        PODS,
    }
)
"""pods.go `podResources`: what the pod evaluator counts (plus `hugepages-*`, `requests.hugepages-*` and
`requests.<extended>`)."""

VALIDATION_SET = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
"""pods.go `validationSet`: quota on these makes every container say its request (or limit) for them."""

LEGACY_COUNT_ALIASES = {
    ("", "configmaps"): "configmaps",
    ("", "resourcequotas"): "resourcequotas",
    ("", "replicationcontrollers"): "replicationcontrollers",
    ("", "secrets"): "secrets",
    ("", "services"): "services",
    ("", "persistentvolumeclaims"): "persistentvolumeclaims",
}
"""The names older than `count/*` that also count objects (pkg/quota/v1/evaluator/core/registry.go
`legacyObjectCountAliases`, and the services and claims evaluators' own object counts)."""

IGNORED_RESOURCES = frozenset({("", "events"), ("events.k8s.io", "events")})
"""What quota admission never evaluates (pkg/quota/v1/install `ignoredResources`: events)."""

SCOPE_TERMINATING = "Terminating"
SCOPE_NOT_TERMINATING = "NotTerminating"
SCOPE_BEST_EFFORT = "BestEffort"
SCOPE_NOT_BEST_EFFORT = "NotBestEffort"
SCOPE_PRIORITY_CLASS = "PriorityClass"
SCOPE_CROSS_NAMESPACE_POD_AFFINITY = "CrossNamespacePodAffinity"


def _zero() -> Quantity:
    return Quantity(Fraction(0), Format.DECIMAL_SI)


def quantity(raw: Any) -> Quantity | None:
    """A stored quantity, or None when it is not one (validation has refused it on the way in)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


def resource_list(raw: Any) -> ResourceList:
    """A `ResourceList` as stored (`{"cpu": "500m"}`), parsed; entries that are not quantities are dropped."""
    if not isinstance(raw, dict):
        return {}
    out: ResourceList = {}
    for name, value in raw.items():
        q = quantity(value)
        if q is not None:
            out[str(name)] = q
    return out


def dump(values: Mapping[str, Quantity]) -> dict[str, str]:
    """A `ResourceList` as the API writes it, keys sorted as Go's JSON encoder writes a map."""
    return {name: str(values[name]) for name in sorted(values)}


def add(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    """`quota.Add`: the sum per name, in the format of `a`'s quantity where both have one."""
    out = dict(a)
    for name, q in b.items():
        have = out.get(name)
        out[name] = q if have is None else Quantity(have.value + q.value, have.format)
    return out


def mask(values: Mapping[str, Quantity], names: Iterable[str]) -> ResourceList:
    """`quota.Mask`: only the named entries."""
    keep = set(names)
    return {k: v for k, v in values.items() if k in keep}


def pretty(values: Mapping[str, Quantity]) -> str:
    """controller.go `prettyPrint`: `name=value` sorted by name, comma-separated."""
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def less_than_or_equal(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> list[str]:
    """`quota.LessThanOrEqual`'s failures: the names of `a` above their value in `b` (a name `b` lacks is fine)."""
    return [k for k, v in a.items() if k in b and v.value > b[k].value]


# ------------------------------------------------------------------------------------------------ pods


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _container_list(container: Obj, key: str) -> ResourceList:
    resources = container.get("resources")
    return resource_list(resources.get(key)) if isinstance(resources, dict) else {}


def _set_max(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    for k, v in other.items():
        if k not in into or v.value > into[k].value:
            into[k] = v


def pod_totals(spec: Obj, key: str) -> ResourceList:
    """`PodRequests` (key `requests`) or `PodLimits` (`limits`): containers and sidecars add up, each other init
    container counts with the sidecars started before it, the largest moment wins; `overhead` on top (limits:
    only for the names the pod limits)."""
    total: ResourceList = {}
    for container in _dicts(spec.get("containers")):
        total = add(total, _container_list(container, key))
    sidecars: ResourceList = {}
    peak: ResourceList = {}
    for container in _dicts(spec.get("initContainers")):
        own = _container_list(container, key)
        if container.get("restartPolicy") == "Always":
            sidecars = add(sidecars, own)
            _set_max(peak, sidecars)
        else:
            _set_max(peak, add(own, sidecars))
    total = add(total, sidecars)
    _set_max(total, peak)
    overhead = resource_list(spec.get("overhead"))
    if key == "limits":
        overhead = {k: v for k, v in overhead.items() if k in total}
    return add(total, overhead)


def _is_extended(name: str) -> bool:
    if "/" not in name or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.")


def compute_usage(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> ResourceList:
    """pods.go `podComputeUsageHelper`: `pods` 1, the cpu/memory/ephemeral-storage requests under their bare and
    `requests.` names and the limits under `limits.`; hugepages and extended resources as `requests.<name>`."""
    out: ResourceList = {PODS: Quantity(Fraction(1))}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = requests[name]
            out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            out[name] = q
            out[f"requests.{name}"] = q
        if _is_extended(name):
            out[f"requests.{name}"] = q
    return out


def pod_charged(pod: Obj, now: float | None) -> bool:
    """`QuotaV1Pod`: a terminal pod, or one deleted longer ago than its grace period, uses no compute quota."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    deleted, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if deleted and type(grace) is int and now is not None:
        try:
            if now > parse_time(str(deleted)) + grace:
                return False
        except ValueError:
            return True
    return True


def pod_usage(pod: Obj, now: float | None = None) -> ResourceList:
    """`PodUsageFunc`: `count/pods` always; the compute usage while the pod is charged (`pod_charged`)."""
    usage: ResourceList = {COUNT_PODS: Quantity(Fraction(1))}
    if not pod_charged(pod, now):
        return usage
    spec = pod.get("spec") or {}
    return add(usage, compute_usage(pod_totals(spec, "requests"), pod_totals(spec, "limits")))


def qos_best_effort(spec: Obj) -> bool:
    """No container (init ones too) requests or limits cpu or memory (`qos.GetPodQOS` is BestEffort)."""
    for container in (*_dicts(spec.get("containers")), *_dicts(spec.get("initContainers"))):
        for key in ("requests", "limits"):
            values = _container_list(container, key)
            if any(name in values and values[name].value != 0 for name in ("cpu", "memory")):
                return False
    return True


def _cross_namespace_affinity(spec: Obj) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        terms = _dicts(section.get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms += [
            w.get("podAffinityTerm") or {}
            for w in _dicts(section.get("preferredDuringSchedulingIgnoredDuringExecution"))
        ]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms):
            return True
    return False


def pod_matches_scope(selector: Obj, pod: Obj) -> bool:
    """pods.go `podMatchesScopeFunc` for one scope selector requirement."""
    spec = pod.get("spec") or {}
    scope = selector.get("scopeName")
    if scope in (SCOPE_TERMINATING, SCOPE_NOT_TERMINATING):
        deadline = spec.get("activeDeadlineSeconds")
        terminating = type(deadline) is int and deadline >= 0
        return terminating if scope == SCOPE_TERMINATING else not terminating
    if scope in (SCOPE_BEST_EFFORT, SCOPE_NOT_BEST_EFFORT):
        best_effort = qos_best_effort(spec)
        return best_effort if scope == SCOPE_BEST_EFFORT else not best_effort
    if scope == SCOPE_PRIORITY_CLASS:
        name = spec.get("priorityClassName") or ""
        op, values = selector.get("operator"), selector.get("values") or []
        if op == "Exists":
            return bool(name)
        if op == "DoesNotExist":
            return not name
        if op == "In":
            return bool(name) and name in values
        if op == "NotIn":
            return not name or name not in values
        return False
    if scope == SCOPE_CROSS_NAMESPACE_POD_AFFINITY:
        return _cross_namespace_affinity(spec)
    return False


def scope_selectors(quota: Obj) -> list[Obj]:
    """`getScopeSelectorsFromQuota`: each of `spec.scopes` as an Exists requirement, then the scope selector's."""
    spec = quota.get("spec") or {}
    out: list[Obj] = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    selector = spec.get("scopeSelector") or {}
    out += _dicts(selector.get("matchExpressions"))
    return out


# ------------------------------------------------------------------------------------------------ evaluators


def count_name(group: str, plural: str) -> str:
    """`ObjectCountQuotaResourceNameFor`: `count/pods`, `count/jobs.batch`."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def matching_resources(group: str, plural: str, names: Iterable[str]) -> list[str]:
    """The evaluator's `MatchingResources`: which of `names` objects of this resource use."""
    if (group, plural) == ("", PODS):
        return [
            n
            for n in names
            if n in POD_RESOURCES or n.startswith(("hugepages-", "requests.hugepages-")) or _is_extended_quota(n)
        ]
    own = {count_name(group, plural)}
    alias = LEGACY_COUNT_ALIASES.get((group, plural))
    if alias:
        own.add(alias)
    return [n for n in names if n in own]


def _is_extended_quota(name: str) -> bool:
    """`isExtendedResourceNameForQuota`: `requests.<extended resource>`."""
    return name.startswith("requests.") and _is_extended(name[len("requests.") :])


def object_usage(group: str, plural: str, obj: Obj, now: float | None = None) -> ResourceList:
    """What one object uses: a pod by `pod_usage`; anything else one of its count name (and legacy alias)."""
    if (group, plural) == ("", PODS):
        return pod_usage(obj, now)
    one = Quantity(Fraction(1))
    usage: ResourceList = {count_name(group, plural): one}
    alias = LEGACY_COUNT_ALIASES.get((group, plural))
    if alias:
        usage[alias] = one
    return usage


def matches_scopes(group: str, plural: str, quota: Obj, obj: Obj) -> bool:
    """Whether every scope of the quota takes the object (only pods have scopes; other objects match none)."""
    selectors = scope_selectors(quota)
    if (group, plural) != ("", PODS):
        return not selectors
    return all(pod_matches_scope(s, obj) for s in selectors)


def quota_matches(group: str, plural: str, quota: Obj, obj: Obj) -> bool:
    """generic `Matches`: the quota's `status.hard` names something this resource uses, and its scopes take it."""
    hard = resource_list((quota.get("status") or {}).get("hard"))
    return bool(matching_resources(group, plural, hard)) and matches_scopes(group, plural, quota, obj)


def pod_constraints(required: Iterable[str], pod: Obj) -> str | None:
    """pods.go `Constraints`: with quota on cpu or memory, each container (init ones too) must say its request or
    limit for it: `must specify limits.cpu for: main; requests.memory for: a,b`."""
    wanted = set(required) & VALIDATION_SET
    if not wanted:
        return None
    spec = pod.get("spec") or {}
    missing: dict[str, set[str]] = {}
    for container in (*_dicts(spec.get("containers")), *_dicts(spec.get("initContainers"))):
        have = compute_usage(_container_list(container, "requests"), _container_list(container, "limits"))
        for name in wanted - set(have):
            missing.setdefault(name, set()).add(str(container.get("name") or ""))
    if not missing:
        return None
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)


def check_request(
    group: str, plural: str, obj: Obj, quotas: list[Obj], *, now: float | None = None, dry_run: bool = False
) -> tuple[list[Obj], str | None]:
    """`CheckRequest` for a create: (the quotas whose `status.used` it changes, with the new usage; or the
    refusal, the words after `<resource> "<name>" is forbidden: `)."""
    interesting: list[Obj] = []
    for q in quotas:
        if not quota_matches(group, plural, q, obj):
            continue
        status = q.get("status") or {}
        hard = resource_list(status.get("hard"))
        restricted = matching_resources(group, plural, hard)
        name = (q.get("metadata") or {}).get("name")
        if (group, plural) == ("", PODS):
            refusal = pod_constraints(restricted, obj)
            if refusal is not None:
                return [], f"failed quota: {name}: {refusal}"
        used = resource_list(status.get("used"))
        if any(r not in used for r in restricted):
            return [], f"status unknown for quota: {name}, resources: {','.join(sorted(restricted))}"
        interesting.append(q)
    if not interesting:
        return [], None
    usage = {k: v for k, v in object_usage(group, plural, obj, now).items() if v.value != 0}
    negative = sorted(k for k, v in usage.items() if v.value < 0)
    if negative:
        return [], f"quota usage is negative for resource(s): {','.join(negative)}"
    changed: list[Obj] = []
    for q in interesting:
        status = q.get("status") or {}
        hard = resource_list(status.get("hard"))
        used = resource_list(status.get("used"))
        requested = mask(usage, hard)
        if not requested:
            continue
        new_used = add(used, requested)
        exceeded = less_than_or_equal(mask(new_used, requested), hard)
        if exceeded:
            name = (q.get("metadata") or {}).get("name")
            return [], (
                f"exceeded quota: {name}, requested: {pretty(mask(requested, exceeded))}, "
                f"used: {pretty(mask(used, exceeded))}, limited: {pretty(mask(hard, exceeded))}"
            )
        if not dry_run:
            changed.append({**q, "status": {**status, "used": dump(new_used)}})
    return changed, None


def calculate_status(quota: Obj, objects: Mapping[tuple[str, str], Iterable[Obj]], now: float | None) -> Obj:
    """The quota controller's `syncResourceQuota`: `hard` from `spec.hard`; `used` for each hard name, summed over
    the objects (by (group, plural)) its scopes take, 0 where none; names no evaluator knows keep what they had."""
    hard = resource_list((quota.get("spec") or {}).get("hard"))
    old_used = resource_list((quota.get("status") or {}).get("used"))
    used: ResourceList = dict(old_used)
    for (group, plural), items in objects.items():
        names = matching_resources(group, plural, hard)
        if not names:
            continue
        total: ResourceList = {n: _zero() for n in names}
        for obj in items:
            if matches_scopes(group, plural, quota, obj):
                total = add(total, mask(object_usage(group, plural, obj, now), names))
        used.update(total)
    return {"hard": dump(hard), "used": dump(mask(used, hard))}


def counted_resources(hard: Iterable[str]) -> set[tuple[str, str]]:
    """The (group, plural) of the resources whose objects a quota with these hard names counts (pods for the
    compute names, the resource of each `count/*` name and legacy alias)."""
    out: set[tuple[str, str]] = set()
    aliases = {v: k for k, v in LEGACY_COUNT_ALIASES.items()}
    for name in hard:
        if matching_resources("", PODS, [name]):
            out.add(("", PODS))
        if name in aliases:
            out.add(aliases[name])
        elif name.startswith("count/"):
            plural, _, group = name[len("count/") :].partition(".")
            out.add((group, plural))
    return out
