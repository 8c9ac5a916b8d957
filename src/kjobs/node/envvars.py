"""A container's environment, command and arguments as the kubelet builds them.

Design note: pure. `container_env` follows the kubelet's `makeEnvironmentVariables`
(pkg/kubelet/kubelet_pods.go): `envFrom` first (each ConfigMap's `data` or Secret's decoded `data`, keys
prefixed with `prefix`, names that are not valid environment variable names skipped), then `env` in order
(`value`, `valueFrom.fieldRef` — the downward API fields the kubelet supports —, `resourceFieldRef`,
`configMapKeyRef`, `secretKeyRef`), a later definition replacing an earlier one, each `value` expanding `$(VAR)`
against the variables defined before it; `container_command` expands `command` + `args` against the final
environment. Expansion follows Kubernetes' `third_party/forked/golang/expansion`: `$(VAR)` becomes the value
when VAR is defined and stays literally otherwise, `$$` is an escaped `$`. The ConfigMaps and Secrets come
from `sources`, which the node agent fetched (`env_references` names them); a missing object or key that is not
`optional` raises `ConfigError` with the kubelet's message, which the runtime reports as the container's
`CreateContainerConfigError` waiting state, like the kubelet; so does anything else the local runtime cannot
provide.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_relaxed_env_var_name

CONFIG_MAP = "configmap"
SECRET = "secret"

EnvSources = Mapping[tuple[str, str], Obj | None]
"""The objects a pod's containers read, by (`CONFIG_MAP` or `SECRET`, name) in the pod's namespace, as the node
agent fetched them: None for one that does not exist."""


class ConfigError(Exception):
    """The container cannot be configured; the message is shown in its waiting state."""


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """Expand `$(VAR)` references in `text`; unknown references and incomplete ones stay as written."""
    out: list[str] = []
    i, n = 0, len(text)
    checkpoint = 0
    while i < n:
        if text[i] == "$" and i + 1 < n:
            out.append(text[checkpoint:i])
            nxt = text[i + 1]
            advance = 1
            if nxt == "$":
                out.append("$")
            elif nxt == "(":
                close = text.find(")", i + 2)
                if close == -1:
                    out.append("$(")
                else:
                    name = text[i + 2 : close]
                    value = lookup(name)
                    out.append(value if value is not None else f"$({name})")
                    advance = close - i
            else:
                out.append("$" + nxt)
            i += advance
            checkpoint = i + 1
        i += 1
    out.append(text[checkpoint:])
    return "".join(out)


_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\[['\"](.+)['\"]\]$")


_META_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace", "metadata.uid": "uid"}
_SPEC_FIELDS = {"spec.nodeName": "nodeName", "spec.serviceAccountName": "serviceAccountName"}


def field_ref_value(pod: Obj, path: str, *, host_ip: str, pod_ip: str) -> str:
    """The downward-API value of `fieldRef.fieldPath` for `pod` (kubelet podFieldSelectorRuntimeValue)."""
    meta = pod.get("metadata", {})
    if path in _META_FIELDS:
        return str(meta.get(_META_FIELDS[path], ""))
    if path in _SPEC_FIELDS:
        return str(pod.get("spec", {}).get(_SPEC_FIELDS[path], ""))
    if path in ("status.hostIP", "status.hostIPs"):
        return host_ip
    if path in ("status.podIP", "status.podIPs"):
        return pod_ip
    if path in ("metadata.labels", "metadata.annotations"):
        return _format_map(meta.get(path[len("metadata.") :]) or {})
    subscript = _subscript(path)
    if subscript is not None:
        kind, key = subscript
        return str((meta.get(kind) or {}).get(key, ""))
    raise ConfigError(f'unsupported fieldPath: "{path}"')


@lru_cache(maxsize=1024)
def _subscript(path: str) -> tuple[str, str] | None:
    """`("labels", KEY)` for `metadata.labels['KEY']` (or annotations); parsed once per path, since every
    Indexed Job pod reads its index this way."""
    match = _SUBSCRIPT.match(path)
    return (match.group(1), match.group(2)) if match else None


def _format_map(values: Mapping[str, str]) -> str:
    return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))


def env_references(pod: Obj) -> frozenset[tuple[str, str]]:
    """The ConfigMaps and Secrets the pod's containers read in `env` and `envFrom` (an empty set for most pods,
    found without allocating)."""
    found: set[tuple[str, str]] | None = None
    spec = pod.get("spec") or {}
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            for source in container.get("envFrom") or ():
                ref = _env_from_ref(source)
                if ref is not None:
                    found = found or set()
                    found.add((ref[0], str(ref[1].get("name") or "")))
            for item in container.get("env") or ():
                value_from = item.get("valueFrom")
                if value_from:
                    ref = _key_ref(value_from)
                    if ref is not None:
                        found = found or set()
                        found.add((ref[0], str(ref[1].get("name") or "")))
    return frozenset(found) if found else _NONE


_NONE: frozenset[tuple[str, str]] = frozenset()


def _env_from_ref(source: Obj) -> tuple[str, Obj] | None:
    if source.get("configMapRef") is not None:
        return CONFIG_MAP, source["configMapRef"]
    if source.get("secretRef") is not None:
        return SECRET, source["secretRef"]
    return None


def _key_ref(value_from: Obj) -> tuple[str, Obj] | None:
    if value_from.get("configMapKeyRef") is not None:
        return CONFIG_MAP, value_from["configMapKeyRef"]
    if value_from.get("secretKeyRef") is not None:
        return SECRET, value_from["secretKeyRef"]
    return None


def _source(sources: EnvSources | None, kind: str, name: str, optional: bool) -> Obj | None:
    """The referenced object; None for a missing optional one; `ConfigError` (the API's NotFound, as the
    kubelet's object cache words it) for a missing one that is required."""
    obj = (sources or {}).get((kind, name))
    if obj is None and not optional:
        raise ConfigError(f'{kind} "{name}" not found')
    return obj


def source_values(kind: str, obj: Obj) -> dict[str, str]:
    """A ConfigMap's `data`, or a Secret's `data` decoded from base64 (bytes that are not UTF-8 kept, as
    `os.environ` keeps them, by surrogate escapes)."""
    data = obj.get("data") or {}
    if kind == CONFIG_MAP:
        return {str(k): str(v) for k, v in data.items()}
    values: dict[str, str] = {}
    for key, value in data.items():
        try:
            values[str(key)] = base64.b64decode(str(value)).decode("utf-8", "surrogateescape")
        except (binascii.Error, ValueError):
            values[str(key)] = ""
    return values


def container_env(
    pod: Obj,
    container: Obj,
    *,
    host_ip: str = "127.0.0.1",
    pod_ip: str = "127.0.0.1",
    sources: EnvSources | None = None,
    services: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables the pod spec defines for `container`: `envFrom`, then `env` in definition order, expanded
    against those defined before and then `services` (the Services' variables: the kubelet's
    `expansion.MappingFuncFor(tmpEnv, serviceEnv)`), which are not in the result."""
    env: dict[str, str] = {}
    lookup: Callable[[str], str | None] = env.get
    if services:
        lookup = lambda name: env.get(name, services.get(name))  # noqa: E731
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    for source in container.get("envFrom") or ():
        ref = _env_from_ref(source)
        if ref is None:
            continue
        kind, target = ref
        obj = _source(sources, kind, str(target.get("name") or ""), bool(target.get("optional")))
        if obj is None:
            continue
        prefix = str(source.get("prefix") or "")
        for key, value in source_values(kind, obj).items():
            key = prefix + key
            if not is_relaxed_env_var_name(key):  # the kubelet skips invalid names (with a warning event)
                env[key] = value
    for item in container.get("env") or ():
        name = item.get("name", "")
        source = item.get("valueFrom")
        if source is None or item.get("value"):
            env[name] = expand(str(item.get("value", "")), lookup)
            continue
        if "fieldRef" in source:
            env[name] = field_ref_value(pod, source["fieldRef"].get("fieldPath", ""), host_ip=host_ip, pod_ip=pod_ip)
        elif "resourceFieldRef" in source:
            env[name] = _resource_field(container, source["resourceFieldRef"])
        elif (key_ref := _key_ref(source)) is not None:
            kind, target = key_ref
            ref_name, key, optional = (
                str(target.get("name") or ""),
                str(target.get("key") or ""),
                bool(target.get("optional")),
            )
            obj = _source(sources, kind, ref_name, optional)
            if obj is None:
                continue
            values = source_values(kind, obj)
            if key not in values:
                if optional:
                    continue
                what = "ConfigMap" if kind == CONFIG_MAP else "Secret"
                raise ConfigError(f"couldn't find key {key} in {what} {namespace}/{ref_name}")
            env[name] = values[key]
        else:
            raise ConfigError(f"env var {name!r}: unsupported valueFrom")
    return env


def _resource_field(container: Obj, ref: Obj) -> str:
    """`resourceFieldRef`: the container's request or limit divided by `divisor`, rounded up."""
    resource = str(ref.get("resource", ""))
    section, _, name = resource.partition(".")
    value = (container.get("resources") or {}).get(section, {}).get(name)
    if value is None:
        raise ConfigError(f"resource {resource!r} is not set on container {container.get('name', '')!r}")
    try:
        quantity = parse_quantity(value).value
        divisor = parse_quantity(ref.get("divisor") or "1").value
    except QuantityError as exc:
        raise ConfigError(f"invalid quantity for {resource}: {exc}") from exc
    if divisor <= 0:
        raise ConfigError(f"invalid divisor for {resource}")
    return str(math.ceil(quantity / divisor))


def container_command(container: Obj, env: Mapping[str, str]) -> list[str]:
    """`command` + `args` with `$(VAR)` expanded against the container's environment."""
    lookup = env.get
    return [expand(str(part), lookup) for part in (container.get("command") or [])] + [
        expand(str(part), lookup) for part in (container.get("args") or [])
    ]


def kubernetes_service_env(pod_api: str) -> dict[str, str]:
    """The variables pkg/kubelet/envvars/envvars.go `FromServices` gives every container for the `kubernetes`
    Service (its port named `https`), pointed at `pod_api` (`HOST:PORT`, where the API server listens: a pod here
    is a host process and no Service IP is routed; docs/service-account-tokens.md). The container's own `env`
    overrides them, as the kubelet adds a Service's variables only where the container defines none."""
    host, _, port = pod_api.rpartition(":")
    host = host.strip("[]")
    shown = f"[{host}]" if ":" in host else host
    url = f"tcp://{shown}:{port}"
    prefix = f"KUBERNETES_PORT_{port}_TCP"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "KUBERNETES_SERVICE_PORT_HTTPS": port,
        "KUBERNETES_PORT": url,
        prefix: url,
        f"{prefix}_PROTO": "tcp",
        f"{prefix}_PORT": port,
        f"{prefix}_ADDR": host,
    }


def service_ip_set(service: Obj) -> bool:
    """`IsServiceIPSet`: the Service has a cluster IP (not headless `None`, not an ExternalName's empty one)."""
    cluster_ip = (service.get("spec") or {}).get("clusterIP")
    return bool(cluster_ip) and cluster_ip != "None"


def _env_name(name: str) -> str:
    """pkg/kubelet/envvars `makeEnvVariableName`: upper case, `-` as `_`."""
    return name.replace("-", "_").upper()


def service_link_env(services: Iterable[Obj]) -> dict[str, str]:
    """pkg/kubelet/envvars/envvars.go `FromServices` for `services`: per Service with a cluster IP,
    `{NAME}_SERVICE_HOST`, `{NAME}_SERVICE_PORT` (its first port), `{NAME}_SERVICE_PORT_{PORTNAME}` per named port,
    and the Docker-link variables `{NAME}_PORT` (the first port's URL) and `{NAME}_PORT_{N}_{PROTO}` with its
    `_PROTO`, `_PORT` and `_ADDR`."""
    env: dict[str, str] = {}
    for service in services:
        spec = service.get("spec") or {}
        ports = spec.get("ports") or []
        if not service_ip_set(service) or not ports:
            continue
        cluster_ip = str(spec["clusterIP"])
        prefix = _env_name(str((service.get("metadata") or {}).get("name") or ""))
        env[f"{prefix}_SERVICE_HOST"] = cluster_ip
        env[f"{prefix}_SERVICE_PORT"] = str(ports[0].get("port"))
        for port in ports:
            if port.get("name"):
                env[f"{prefix}_SERVICE_PORT_{_env_name(str(port['name']))}"] = str(port.get("port"))
        host = f"[{cluster_ip}]" if ":" in cluster_ip else cluster_ip  # net.JoinHostPort
        for index, port in enumerate(ports):
            protocol = str(port.get("protocol") or "TCP")
            number = str(port.get("port"))
            url = f"{protocol.lower()}://{host}:{number}"
            if index == 0:
                env[f"{prefix}_PORT"] = url
            link = f"{prefix}_PORT_{number}_{protocol.upper()}"
            env[link] = url
            env[f"{link}_PROTO"] = protocol.lower()
            env[f"{link}_PORT"] = number
            env[f"{link}_ADDR"] = cluster_ip
    return env
