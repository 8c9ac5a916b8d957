"""A container's environment, command and arguments as the kubelet builds them.

Design note: pure. `container_env` resolves `env` in order (`value`, and `valueFrom.fieldRef` — the
downward API fields the kubelet supports), expanding `$(VAR)` against the variables defined before it;
`container_command` expands `command` + `args` against the final environment. Expansion follows
Kubernetes' `third_party/forked/golang/expansion`: `$(VAR)` becomes the value when VAR is defined and
stays literally otherwise, `$$` is an escaped `$`. Anything the local runtime cannot provide (ConfigMap
or Secret references, unsupported fields) raises `ConfigError`, which the runtime reports as the
container's `CreateContainerConfigError` waiting state, like the kubelet.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import lru_cache

from kjobs.api.quantity import QuantityError, parse_quantity
from kjobs.api.types import Obj


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


def container_env(pod: Obj, container: Obj, *, host_ip: str = "127.0.0.1", pod_ip: str = "127.0.0.1") -> dict[str, str]:
    """The variables the pod spec defines for `container`, in definition order, expanded."""
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        name = item.get("name", "")
        source = item.get("valueFrom")
        if source is None:
            env[name] = expand(str(item.get("value", "")), env.get)
            continue
        if "fieldRef" in source:
            env[name] = field_ref_value(pod, source["fieldRef"].get("fieldPath", ""), host_ip=host_ip, pod_ip=pod_ip)
        elif "resourceFieldRef" in source:
            env[name] = _resource_field(container, source["resourceFieldRef"])
        elif "configMapKeyRef" in source or "secretKeyRef" in source:
            ref = source.get("configMapKeyRef") or source.get("secretKeyRef") or {}
            kind = "configmap" if "configMapKeyRef" in source else "secret"
            if ref.get("optional"):
                continue
            raise ConfigError(f'{kind} "{ref.get("name", "")}" not found')
        else:
            raise ConfigError(f"env var {name!r}: unsupported valueFrom")
    if container.get("envFrom"):
        for source in container["envFrom"]:
            ref = source.get("configMapRef") or source.get("secretRef") or {}
            if not ref.get("optional"):
                kind = "configmap" if "configMapRef" in source else "secret"
                raise ConfigError(f'{kind} "{ref.get("name", "")}" not found')
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
