"""Endpoints (core/v1) and EndpointSlices (discovery.k8s.io/v1): defaults, the strategies' rewrites, validation.

Sources (Kubernetes v1.32): `SetDefaults_EndpointPort` in pkg/apis/core/v1/defaults.go and
pkg/apis/discovery/v1/defaults.go; the strategies pkg/registry/core/endpoint/strategy.go and
pkg/registry/discovery/endpointslice/strategy.go (a slice's `metadata.generation` starts at 1 and grows when
its addressType, endpoints or ports change); `ValidateEndpointsCreate`/`ValidateEndpointsUpdate`
(pkg/apis/core/validation/validation.go: `validateEndpointSubsets`, `validateEndpointAddress`,
`validateEndpointPort`, `ValidateNonSpecialIP`) and `ValidateEndpointSliceCreate`/`ValidateEndpointSliceUpdate`
(pkg/apis/discovery/validation/validation.go).

One deviation, kjobs' own: every kjobs pod, and the API server, has the address 127.0.0.1 (pods are processes of
this machine), so the loopback range is allowed where `ValidateNonSpecialIP` refuses it; the unspecified,
link-local and link-local multicast ranges are refused as upstream.

Design note: pure, on JSON dicts, like the rest of `kjobs.api`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported, too_many
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.services import _ip_of
from kjobs.api.types import Obj
from kjobs.api.validation_formats import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_sloppy_ip,
    is_valid_port_num,
)
from kjobs.api.validation_meta import (
    semantic_equal,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Duplicate = ErrorType.FieldValueDuplicate

PROTOCOLS = ("SCTP", "TCP", "UDP")
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
"""`supportedAddressTypes`; the deprecated `IP` is accepted on update only."""
DEPRECATED_ADDRESS_TYPES = ("IP",)
MAX_TOPOLOGY_LABELS = 16
MAX_ADDRESSES = 100
MAX_PORTS = 100
MAX_ENDPOINTS = 1000
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


# --- defaults and strategies ---------------------------------------------------------------------------------


def default_endpoints_in_place(ep: Obj) -> Obj:
    """core/v1 `SetDefaults_EndpointPort`: a port's protocol is TCP when unset."""
    for subset in ep.get("subsets") or []:
        if isinstance(subset, dict):
            for port in subset.get("ports") or []:
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"
    return ep


def default_endpoints_update_in_place(ep: Obj, old: Obj) -> Obj:
    """The same defaults on an update."""
    return default_endpoints_in_place(ep)


def default_endpoint_slice_in_place(eps: Obj) -> Obj:
    """discovery/v1 `SetDefaults_EndpointPort` (name `""`, protocol TCP when unset) and the strategy's
    `PrepareForCreate` (`metadata.generation` 1)."""
    _default_slice_ports(eps)
    eps.setdefault("metadata", {})["generation"] = 1
    return eps


def default_endpoint_slice_update_in_place(eps: Obj, old: Obj) -> Obj:
    """The strategy's `PrepareForUpdate`: the generation grows when anything but the metadata changed."""
    _default_slice_ports(eps)
    meta = eps.setdefault("metadata", {})
    generation = (old.get("metadata") or {}).get("generation") or 0
    changed = any(not semantic_equal(eps.get(k), old.get(k)) for k in ("addressType", "endpoints", "ports"))
    meta["generation"] = generation + 1 if changed else generation
    return eps


def _default_slice_ports(eps: Obj) -> None:
    for port in eps.get("ports") or []:
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"


# --- Endpoints validation ------------------------------------------------------------------------------------


def validate_endpoints(ep: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateEndpointsCreate`: the metadata (a DNS-subdomain name), then the subsets."""
    errs = validate_object_meta(ep.get("metadata") or {}, namespaced=True)
    return errs + _validate_subsets(ep.get("subsets") or [])


def validate_endpoints_update(ep: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateEndpointsUpdate`: the metadata update rules, then the subsets."""
    errs = validate_object_meta_update(ep.get("metadata") or {}, old.get("metadata") or {})
    return errs + _validate_subsets(ep.get("subsets") or [])


def _validate_subsets(subsets: list[Any]) -> list[FieldError]:
    """`validateEndpointSubsets`: each subset has an address; each port is named when there are several."""
    errs: list[FieldError] = []
    for i, subset in enumerate(subsets):
        if not isinstance(subset, dict):
            continue
        path = f"subsets[{i}]"
        addresses = subset.get("addresses") or []
        not_ready = subset.get("notReadyAddresses") or []
        if not addresses and not not_ready:
            errs.append(FieldError(path, Required, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in enumerate(addresses):
            errs += _validate_address(address, f"{path}.addresses[{j}]")
        for j, address in enumerate(not_ready):
            errs += _validate_address(address, f"{path}.notReadyAddresses[{j}]")
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += _validate_endpoint_port(port, len(ports) > 1, f"{path}.ports[{j}]")
    return errs


def _validate_address(address: Any, path: str) -> list[FieldError]:
    """`validateEndpointAddress`: a valid IP (then not special), a DNS-label hostname, a valid node name."""
    if not isinstance(address, dict):
        return []
    errs: list[FieldError] = []
    ip = address.get("ip") or ""
    if not (type(ip) is str and is_sloppy_ip(ip)):
        errs.append(FieldError(f"{path}.ip", Invalid, IP_MSG, ip))
    hostname = address.get("hostname") or ""
    if hostname:
        errs += [FieldError(f"{path}.hostname", Invalid, msg, hostname) for msg in is_dns1123_label(hostname)]
    node_name = address.get("nodeName")
    if node_name is not None:
        errs += [FieldError(f"{path}.nodeName", Invalid, msg, node_name) for msg in is_dns1123_subdomain(node_name)]
    if errs:
        return errs
    return _non_special_ip(ip, f"{path}.ip")


def _non_special_ip(value: str, path: str) -> list[FieldError]:
    """`ValidateNonSpecialIP`, less its loopback rule (see the module's note)."""
    ip = _ip_of(value)
    if ip is None:
        return [FieldError(path, Invalid, "must be a valid IP address", value)]
    errs: list[FieldError] = []
    if ip.is_unspecified:
        errs.append(FieldError(path, Invalid, f"may not be unspecified ({value})", value))
    if ip.is_link_local:
        errs.append(FieldError(path, Invalid, "may not be in the link-local range (169.254.0.0/16, fe80::/10)", value))
    if ip in ipaddress.ip_network("224.0.0.0/24" if ip.version == 4 else "ff02::/16"):
        errs.append(
            FieldError(path, Invalid, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)", value)
        )
    return errs


def _validate_endpoint_port(port: Any, require_name: bool, path: str) -> list[FieldError]:
    """`validateEndpointPort`."""
    if not isinstance(port, dict):
        return []
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(FieldError(f"{path}.name", Required, ""))
    elif name:
        errs += [FieldError(f"{path}.name", Invalid, msg, name) for msg in is_dns1123_label(name)]
    number: int = port["port"] if type(port.get("port")) is int else 0
    errs += [FieldError(f"{path}.port", Invalid, msg, number) for msg in is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(FieldError(f"{path}.protocol", Required, ""))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    app_protocol = port.get("appProtocol")
    if type(app_protocol) is str:
        errs += [
            FieldError(f"{path}.appProtocol", Invalid, msg, app_protocol) for msg in is_qualified_name(app_protocol)
        ]
    return errs


# --- EndpointSlice validation --------------------------------------------------------------------------------


def validate_endpoint_slice(eps: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateEndpointSliceCreate`."""
    return _validate_slice(eps, ADDRESS_TYPES)


def validate_endpoint_slice_update(eps: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateEndpointSliceUpdate`: the deprecated `IP` address type is kept; addressType is immutable."""
    errs = validate_object_meta_update(eps.get("metadata") or {}, old.get("metadata") or {})
    errs += _validate_slice(eps, ADDRESS_TYPES + DEPRECATED_ADDRESS_TYPES)
    if eps.get("addressType") != old.get("addressType"):
        errs.append(FieldError("addressType", Invalid, "field is immutable", eps.get("addressType")))
    return errs


def _validate_slice(eps: Obj, address_types: tuple[str, ...]) -> list[FieldError]:
    """`ValidateEndpointSlice`."""
    errs = validate_object_meta(eps.get("metadata") or {}, namespaced=True)
    address_type = eps.get("addressType") or ""
    if not address_type:
        errs.append(FieldError("addressType", Required, ""))
    elif address_type not in address_types:
        errs.append(not_supported("addressType", address_type, sorted(address_types)))
    errs += _validate_slice_endpoints(eps.get("endpoints") or [], address_type)
    errs += _validate_slice_ports(eps.get("ports") or [])
    return errs


def _validate_slice_endpoints(endpoints: list[Any], address_type: str) -> list[FieldError]:
    """`validateEndpoints` (discovery)."""
    if len(endpoints) > MAX_ENDPOINTS:
        return [too_many("endpoints", len(endpoints), MAX_ENDPOINTS)]
    errs: list[FieldError] = []
    for i, endpoint in enumerate(endpoints):
        if not isinstance(endpoint, dict):
            continue
        path = f"endpoints[{i}]"
        addresses = endpoint.get("addresses") or []
        if not addresses:
            errs.append(FieldError(f"{path}.addresses", Required, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(too_many(f"{path}.addresses", len(addresses), MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            errs += _validate_slice_address(str(address), address_type, f"{path}.addresses[{j}]")
        topology = endpoint.get("deprecatedTopology") or {}
        if len(topology) > MAX_TOPOLOGY_LABELS:
            errs.append(too_many(f"{path}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
        label_errs: list[FieldError] = []
        validate_labels(topology, f"{path}.deprecatedTopology", label_errs)
        errs += label_errs
        hostname = endpoint.get("hostname")
        if hostname is not None:
            errs += [FieldError(f"{path}.hostname", Invalid, msg, hostname) for msg in is_dns1123_label(hostname)]
    return errs


def _validate_slice_address(address: str, address_type: str, path: str) -> list[FieldError]:
    """One address, by the slice's type (an unknown type is not checked, as upstream)."""
    if address_type == "IP":
        return [] if is_sloppy_ip(address) else [FieldError(path, Invalid, IP_MSG, address)]
    if address_type in ("IPv4", "IPv6"):  # `IsValidIPv4Address`/`IsValidIPv6Address`, then `ValidateNonSpecialIP`
        ip = _ip_of(address) if is_sloppy_ip(address) else None
        v4 = ip is not None and ip.version == 4  # Go's `To4`: an IPv4-mapped IPv6 address counts as IPv4
        errs: list[FieldError] = []
        if ip is None or v4 != (address_type == "IPv4"):
            errs.append(FieldError(path, Invalid, f"must be a valid {address_type} address", address))
        return errs + _non_special_ip(address, path)
    if address_type == "FQDN":
        return _fully_qualified_domain_name(address, path)
    return []


def _fully_qualified_domain_name(name: str, path: str) -> list[FieldError]:
    """`IsFullyQualifiedDomainName`."""
    if not name:
        return [FieldError(path, Required, "")]
    name = name.removesuffix(".")
    problems = is_dns1123_subdomain(name)
    if problems:
        return [FieldError(path, Invalid, ",".join(problems), name)]
    if len(name.split(".")) < 2:
        return [FieldError(path, Invalid, "should be a domain with at least two segments separated by dots", name)]
    errs: list[FieldError] = []
    for label in name.split("."):
        problems = is_dns1123_label(label)
        if problems:
            errs.append(FieldError(path, Invalid, ",".join(problems), label))
    return errs


def _validate_slice_ports(ports: list[Any]) -> list[FieldError]:
    """`validatePorts` (discovery): DNS-label names, unique; a protocol from the three."""
    if len(ports) > MAX_PORTS:
        return [too_many("ports", len(ports), MAX_PORTS)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        path = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            errs += [FieldError(f"{path}.name", Invalid, msg, name) for msg in is_dns1123_label(name)]
        if name in names:
            errs.append(FieldError(f"{path}.name", Duplicate, "", name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            errs.append(FieldError(f"{path}.protocol", Required, ""))
        elif protocol not in PROTOCOLS:
            errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
        app_protocol = port.get("appProtocol")
        if type(app_protocol) is str:
            errs += [
                FieldError(f"{path}.appProtocol", Invalid, msg, app_protocol) for msg in is_qualified_name(app_protocol)
            ]
    return errs
