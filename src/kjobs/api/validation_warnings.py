"""Warnings Kubernetes returns (HTTP `Warning: 299` headers) for Jobs that are accepted but questionable.

Kubernetes accepts some values it does not like and says so instead of rejecting the request: a Job name that
is not a DNS label (it becomes part of pod names and hostnames), huge Indexed Jobs whose failed indexes may not
be trackable, a negative `terminationGracePeriodSeconds` (treated as 1), and `imagePullSecrets` with an empty
or repeated name. From the Job and CronJob strategies' `WarningsOnCreate`/`WarningsOnUpdate`
(pkg/registry/batch/job/strategy.go, pkg/registry/batch/cronjob/strategy.go) and `pkg/api/job/warnings.go`,
`pkg/api/pod/warnings.go`.
"""

from __future__ import annotations

import re
from typing import Any

from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_dns1123_label

_COMPLETIONS_SOFT_LIMIT = 100_000
_PARALLELISM_SOFT_LIMIT = 10_000


def _dict(value: Any) -> Obj:
    return value if type(value) is dict else {}


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _name_warning(meta: Obj, used_in: str) -> list[str]:
    """The strategies' warning for a name that is no DNS label (pkg/api/job/warnings.go, pkg/api/pod/warnings.go):
    the name ends up in `used_in`."""
    name = meta.get("name")
    if type(name) is str and (msgs := is_dns1123_label(name)):
        return [
            f"metadata.name: this is used in {used_in}, which can result in surprising behavior; "
            f"a DNS label is recommended: [{' '.join(msgs)}]"
        ]
    return []


def warnings_for_job_spec(spec: Obj, *, path: str = "spec") -> list[str]:
    """`WarningsForJobSpec`: the Indexed-size warning and the pod template warnings kjobs knows."""
    warnings = []
    if spec.get("completionMode") == "Indexed":
        completions = _int(spec.get("completions"))
        parallelism = _int(spec.get("parallelism"))
        if completions > _COMPLETIONS_SOFT_LIMIT and parallelism > _PARALLELISM_SOFT_LIMIT:
            warnings.append(
                f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher "
                "than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
            )
    template = _dict(spec.get("template"))
    warnings.extend(warnings_for_pod_template(_dict(template.get("metadata")), _dict(template.get("spec")), path))
    return warnings


# pkg/api/pod/warnings.go `deprecatedAnnotations`.
_DEPRECATED_ANNOTATIONS = (
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        'non-functional in v1.16+; use the "priorityClassName" field instead',
    ),
    ("security.alpha.kubernetes.io/sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
    ("security.alpha.kubernetes.io/unsafe-sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
)
# pkg/api/pod/warnings.go: deprecated and removed volume plugins, in the order the warnings are made (an
# ephemeral volume's claim template is looked at between glusterfs and cephfs).
_DEPRECATED_VOLUMES = (
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("ephemeral", ""),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)
# pkg/api/node/util.go `deprecatedNodeLabels`.
_DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
}
_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
_NULL_SELECTOR = "a null labelSelector results in matching no pod"


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _containers(pod_spec: Obj, path: str) -> list[tuple[Obj, str]]:
    """`pods.VisitContainersWithPath`: init containers, containers, ephemeral containers, each with its path."""
    return [
        (_dict(c), f"{path}.{key}[{i}]")
        for key in ("initContainers", "containers", "ephemeralContainers")
        for i, c in enumerate(_list(pod_spec.get(key)))
    ]


def _go_port(port: Obj) -> str:
    """A `core.ContainerPort` as Go's `%+v` prints it."""
    return (
        f"{{Name:{port.get('name') or ''} HostPort:{_int(port.get('hostPort'))} "
        f"ContainerPort:{_int(port.get('containerPort'))} Protocol:{port.get('protocol') or ''} "
        f"HostIP:{port.get('hostIP') or ''}}}"
    )


_WHOLE_BYTES = re.compile(r"[0-9]+(?:Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?")
"""Amounts that are whole bytes by their notation: digits with no fraction and no sub-unit suffix."""


def _fractional_bytes(amounts: Any, name: str, path: str) -> list[str]:
    """The "fractional byte value" warning for `amounts[name]` (memory, ephemeral-storage, storage) when it is not
    whole bytes (`MilliValue() % 1000 != 0`, the value rounded up to thousandths)."""
    raw = _dict(amounts).get(name)
    if type(raw) is int or (type(raw) is str and _WHOLE_BYTES.fullmatch(raw)):
        return []  # the usual amounts, e.g. `64Mi`, without parsing
    if type(raw) not in (str, float):
        return []
    try:
        q = parse_quantity(raw)
    except QuantityError:
        return []  # refused by validation
    if q.milli_value() % 1000 == 0:
        return []
    return [f'{path}[{name}]: fractional byte value "{q}" is invalid, must be an integer']


def _node_term_warnings(term: Any, path: str) -> list[str]:
    """`GetWarningsForNodeSelectorTerm` (pkg/api/node/util.go): deprecated node labels as expression keys."""
    warnings = []
    for i, expression in enumerate(_list(_dict(term).get("matchExpressions"))):
        key = _dict(expression).get("key")
        message = _DEPRECATED_NODE_LABELS.get(key) if type(key) is str else None
        if message is not None:
            warnings.append(f"{path}.matchExpressions[{i}].key: {key} is {message}")
    return warnings


def _node_label_warnings(pod_spec: Obj, spath: str) -> list[str]:
    """Deprecated node labels in `nodeSelector` and in node affinity terms (pkg/api/pod/warnings.go, first)."""
    warnings = []
    for key in _dict(pod_spec.get("nodeSelector")):
        if key in _DEPRECATED_NODE_LABELS:
            warnings.append(f"{spath}.nodeSelector[{key}]: {_DEPRECATED_NODE_LABELS[key]}")
    node_affinity = _dict(_dict(pod_spec.get("affinity")).get("nodeAffinity"))
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms_path = f"{spath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(_list(_dict(required).get("nodeSelectorTerms"))):
            warnings.extend(_node_term_warnings(term, f"{terms_path}[{i}]"))
    preferred_path = f"{spath}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_list(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        warnings.extend(_node_term_warnings(_dict(term).get("preference"), f"{preferred_path}[{i}].preference"))
    return warnings


def _item_paths(items: Any) -> list[str]:
    return [str(_dict(item).get("path") or "") for item in _list(items)]


def _overlaps(paths: list[str], message: str) -> list[str]:
    """`checkVolumeMappingForOverlap`: each path (trailing "/" trimmed) that equals, or is a directory of, or
    lies in, one before it."""
    warnings = []
    seen: list[str] = []
    for raw in paths:
        path = raw.rstrip("/")
        collision = ""
        for item in seen:
            if not item or not path:
                break
            if item == path or (item + "/").startswith(path) or (path + "/").startswith(item):
                collision = item
                break
        if collision:
            warnings.append(f'{message}: "{path}" with "{collision}"')
        if path not in seen:
            seen.append(path)
    return warnings


def _projected_source(volume: str, source: Obj) -> tuple[list[str], str] | None:
    """The paths one projected source writes and the words of its overlap warning (`warningsForOverlapping\
    VirtualPaths`' switch, in its order); None for a source the switch has no case for."""
    config_map, secret = _dict(source.get("configMap")), _dict(source.get("secret"))
    downward, token = _dict(source.get("downwardAPI")), source.get("serviceAccountToken")
    bundle_field = source.get("clusterTrustBundle")
    if source.get("configMap") is not None and config_map.get("items") is not None:
        paths, what = _item_paths(config_map["items"]), f'Projected ConfigMap "{config_map.get("name") or ""}"'
    elif source.get("secret") is not None and secret.get("items") is not None:
        paths, what = _item_paths(secret["items"]), f'Projected Secret "{secret.get("name") or ""}"'
    elif source.get("downwardAPI") is not None and downward.get("items") is not None:
        paths, what = _item_paths(downward["items"]), "Projected DownwardAPI"
    elif token is not None:
        paths, what = [str(_dict(token).get("path") or "")], "Projected ServiceAccountToken"
    elif bundle_field is not None:
        bundle = _dict(bundle_field)
        named = bundle.get("name") if bundle.get("name") is not None else bundle.get("signerName")
        paths, what = [str(bundle.get("path") or "")], f'Projected ClusterTrustBundle "{named or ""}"'
    else:
        return None
    return paths, f'volume "{volume}" ({what}): overlapping paths'


def _overlapping_path_warnings(volumes: list[Any]) -> list[str]:
    """`warningsForOverlappingVirtualPaths`: keys of one configMap, secret, downwardAPI or projected volume
    mapped to the same path, or one inside another's, overwrite each other or fail to mount."""
    warnings = []
    for volume in volumes:
        volume = _dict(volume)
        name = volume.get("name") or ""
        config_map, secret, downward = (_dict(volume.get(k)) for k in ("configMap", "secret", "downwardAPI"))
        if volume.get("configMap") is not None and config_map.get("items") is not None:
            what = f'volume "{name}" (ConfigMap "{config_map.get("name") or ""}"): overlapping paths'
            warnings.extend(_overlaps(_item_paths(config_map["items"]), what))
        if volume.get("secret") is not None and secret.get("items") is not None:
            what = f'volume "{name}" (Secret "{secret.get("secretName") or ""}"): overlapping paths'
            warnings.extend(_overlaps(_item_paths(secret["items"]), what))
        if volume.get("downwardAPI") is not None and downward.get("items") is not None:
            what = f'volume "{name}" (DownwardAPI): overlapping paths'
            warnings.extend(_overlaps(_item_paths(downward["items"]), what))
        if volume.get("projected") is None:
            continue
        every: set[str] = set()
        paths: list[str] = []
        what = ""
        for source in _list(_dict(volume.get("projected")).get("sources")):
            source = _dict(source)
            if not any(v is not None for v in source.values()):
                warnings.append(f'volume "{name}" (Projected) has no sources provided')
                continue
            # upstream keeps the paths of the source before when the switch has no case for this one (a
            # configMap without items): they are checked again, and meet themselves among the earlier ones
            paths, what = _projected_source(name, source) or (paths, what)
            if not paths:
                continue
            warnings.extend(_overlaps(paths, what))
            unique = set(paths)
            warnings.extend(_overlaps(sorted([*unique, *every]), what))  # against the sources before it
            every |= unique
    return warnings


def warnings_for_pod_template(meta: Obj, pod_spec: Obj, path: str = "spec") -> list[str]:
    """`GetWarningsForPodTemplate` (pkg/api/pod/warnings.go) for the template at `{path}.template`."""
    return _pod_warnings(meta, pod_spec, f"{path}.template.", template=True)


def warnings_for_pod(pod: Obj, old: Obj | None = None) -> list[str]:
    """The Pod strategy's `WarningsOnCreate` (pkg/registry/core/pod/strategy.go): a name that is no DNS label,
    then `GetWarningsForPod`. Updates get none (`WarningsOnUpdate`: pods are written often, mostly by machines)."""
    if old is not None or type(pod) is not dict:
        return []
    meta = _dict(pod.get("metadata"))
    warnings = _name_warning(meta, "the Pod's hostname")
    return warnings + _pod_warnings(meta, _dict(pod.get("spec")), "", template=False)


def _pod_warnings(meta: Obj, pod_spec: Obj, prefix: str, *, template: bool) -> list[str]:
    """`warningsForPodSpecAndMeta` (v1.32), in its order, for a Pod (`prefix` "") or a template
    (`spec.template.`)."""
    spath = f"{prefix}spec"
    mpath = f"{prefix}metadata"
    annotations = _dict(meta.get("annotations"))
    warnings: list[str] = _node_label_warnings(pod_spec, spath)
    for i, constraint in enumerate(_list(pod_spec.get("topologySpreadConstraints"))):
        constraint = _dict(constraint)
        key = constraint.get("topologyKey")
        if type(key) is str and key in _DEPRECATED_NODE_LABELS:
            warnings.append(
                f"{spath}.topologySpreadConstraints[{i}].topologyKey: {key} is {_DEPRECATED_NODE_LABELS[key]}"
            )
        if constraint.get("labelSelector") is None:
            warnings.append(f"{spath}.topologySpreadConstraints[{i}].labelSelector: {_NULL_SELECTOR}")
    for key, message in _DEPRECATED_ANNOTATIONS:
        if key in annotations:
            warnings.append(f"{mpath}.annotations[{key}]: {message}")
    volumes = _list(pod_spec.get("volumes"))
    for i, volume in enumerate(volumes):
        for plugin, message in _DEPRECATED_VOLUMES:
            if plugin == "ephemeral":  # the claim template's spec (pkg/api/persistentvolumeclaim/util.go)
                claim = _dict(_dict(volume).get("ephemeral")).get("volumeClaimTemplate")
                if claim is not None:
                    resources = _dict(_dict(_dict(claim).get("spec")).get("resources"))
                    tpath = f"{spath}.volumes[{i}].ephemeral.volumeClaimTemplate.spec.resources"
                    warnings.extend(_fractional_bytes(resources.get("requests"), "storage", f"{tpath}.requests"))
                    warnings.extend(_fractional_bytes(resources.get("limits"), "storage", f"{tpath}.limits"))
            elif _dict(volume).get(plugin) is not None:
                warnings.append(f"{spath}.volumes[{i}].{plugin}: {message}")
    warnings.extend(_overlapping_path_warnings(volumes))
    for field, key, what in (("hostAliases", "ip", "ip"), ("imagePullSecrets", "name", "name")):
        entries = _list(pod_spec.get(field))
        if len(entries) > 1:
            seen: set[Any] = set()
            for i, entry in enumerate(entries):
                value = _dict(entry).get(key) or ""
                if value in seen:
                    warnings.append(f'{spath}.{field}[{i}].{key}: duplicate {what} "{value}"')
                seen.add(value)
    for i, secret in enumerate(_list(pod_spec.get("imagePullSecrets"))):
        if not _dict(secret).get("name"):
            warnings.append(f'{spath}.imagePullSecrets[{i}].name: invalid empty name ""')
    if pod_spec.get("overhead"):
        for name in ("memory", "ephemeral-storage"):
            warnings.extend(_fractional_bytes(pod_spec.get("overhead"), name, f"{spath}.overhead"))
    security = _dict(pod_spec.get("securityContext"))
    if security.get("seccompProfile") is None and _SECCOMP_POD in annotations:
        warnings.append(
            f'{mpath}.annotations[{_SECCOMP_POD}]: non-functional in v1.27+; use the "seccompProfile" field instead'
        )
    containers = _containers(pod_spec, spath)
    for container, cpath in containers:
        name = container.get("name") or ""
        context = _dict(container.get("securityContext"))
        key = _SECCOMP_CONTAINER + str(name)
        if context.get("seccompProfile") is None and key in annotations:
            warnings.append(
                f'{mpath}.annotations[{key}]: non-functional in v1.27+; use the "seccompProfile" field instead'
            )
        key = _APPARMOR_CONTAINER + str(name)
        has_field = security.get("appArmorProfile") is not None or context.get("appArmorProfile") is not None
        if template and not has_field and key in annotations:  # a Pod's is warned about elsewhere
            warnings.append(
                f'{mpath}.annotations[{key}]: deprecated since v1.30; use the "appArmorProfile" field instead'
            )
        resources = _dict(container.get("resources"))
        for name in ("memory", "ephemeral-storage") if resources else ():
            for part in ("limits", "requests"):
                amounts = resources.get(part)
                if type(amounts) is dict and name in amounts:
                    warnings.extend(_fractional_bytes(amounts, name, f"{cpath}.resources.{part}"))
        env = _list(container.get("env"))
        names: set[Any] = set()
        for i, var in enumerate(env if len(env) > 1 else []):
            var = _dict(var)
            var_name = var.get("name")
            if var_name in names:
                ref = f"$({var_name})"
                value = var.get("value") or ""
                if var.get("valueFrom") is not None or value == ref or ref not in value:
                    warnings.append(
                        f'{cpath}.env[{i}]: hides previous definition of "{var_name}", which may be dropped when '
                        "using apply"
                    )
            else:
                names.add(var_name)
    seen_ports: dict[str, list[tuple[str, Obj]]] = {}
    for container, cpath in containers:
        for i, port in enumerate(_list(container.get("ports"))):
            port = _dict(port)
            ppath = f"{cpath}.ports[{i}]"
            host_ip, host_port = port.get("hostIP") or "", _int(port.get("hostPort"))
            if host_ip and host_port == 0:
                warnings.append(f"{ppath}: hostIP set without hostPort: {_go_port(port)}")
            key = f"{_int(port.get('containerPort'))}/{port.get('protocol') or ''}"
            for other_path, other in seen_ports.get(key, []):
                other_ip, other_port = other.get("hostIP") or "", _int(other.get("hostPort"))
                if host_ip == other_ip and host_port == other_port:
                    warnings.append(f"{ppath}: duplicate port definition with {other_path}")
                elif host_port == 0 or other_port == 0:
                    warnings.append(f"{ppath}: overlapping port definition with {other_path}")
                elif host_port == other_port and (not host_ip) != (not other_ip):
                    warnings.append(f"{ppath}: dangerously ambiguous port definition with {other_path}")
            seen_ports.setdefault(key, []).append((ppath, port))
    grace = pod_spec.get("terminationGracePeriodSeconds")
    if type(grace) is int and grace < 0:
        warnings.append(
            f"{spath}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        )
    affinity = _dict(pod_spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = _dict(affinity.get(kind))
        if not terms:
            continue
        required = f"{spath}.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(_list(terms.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            if _dict(term).get("labelSelector") is None:
                warnings.append(f"{required}[{i}].labelSelector: {_NULL_SELECTOR}")
        preferred = f"{spath}.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(_list(terms.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            if _dict(_dict(term).get("podAffinityTerm")).get("labelSelector") is None:
                warnings.append(f"{preferred}[{i}].podAffinityTerm.labelSelector: {_NULL_SELECTOR}")
    return warnings


def warnings_for_job(job: Obj, old: Obj | None = None) -> list[str]:
    """The warnings for creating `job` (or, with `old`, for updating it: only when the spec changed)."""
    if type(job) is not dict:
        return []
    spec = _dict(job.get("spec"))
    if old is not None:
        if spec == _dict(_dict(old).get("spec")):
            return []
        return warnings_for_job_spec(spec)
    return _name_warning(_dict(job.get("metadata")), "Pod names and hostnames") + warnings_for_job_spec(spec)


_TZ_IN_SCHEDULE = (
    "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)
"""`cronJobStrategy.WarningsOnUpdate`'s words, its field path (`spec.spec.schedule`) included."""


def warnings_for_cronjob(cronjob: Obj, old: Obj | None = None) -> list[str]:
    """The CronJob strategy's warnings: on create, a name that is not a DNS label and the Job template's spec;
    on update, the template's spec when the generation moved (the spec changed) and a `TZ=` schedule (one an old
    CronJob may keep; a new one is refused)."""
    if type(cronjob) is not dict:
        return []
    spec = _dict(cronjob.get("spec"))
    template_spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
    path = "spec.jobTemplate.spec"
    if old is None:
        warnings = _name_warning(_dict(cronjob.get("metadata")), "Pod names and hostnames")
        return warnings + warnings_for_job_spec(template_spec, path=path)
    warnings = []
    if _dict(cronjob.get("metadata")).get("generation") != _dict(_dict(old).get("metadata")).get("generation"):
        warnings = warnings_for_job_spec(template_spec, path=path)
    schedule = spec.get("schedule")
    if type(schedule) is str and "TZ" in schedule:
        warnings.append(_TZ_IN_SCHEDULE)
    return warnings
