"""Services (core/v1): defaulting, the registry strategy's rewrites, and validation, as kube-apiserver v1.32 has them.

kjobs stores, lists and validates Services; it runs no kube-proxy and no cluster DNS (pods are host processes), so
a Service routes nothing. Sources: `SetDefaults_Service` (pkg/apis/core/v1/defaults.go), the strategy
(pkg/registry/core/service/strategy.go: `PrepareForCreate`/`PrepareForUpdate`, `dropTypeDependentFields`,
`SelectableFields`), the REST storage's `beginCreate`/`beginUpdate` (pkg/registry/core/service/storage/storage.go:
`patchAllocatedValues`, `NormalizeClusterIPs`) and `initIPFamilyFields` (storage/alloc.go) for this single-stack
IPv4 cluster, and `ValidateService`, `ValidateServiceCreate`, `ValidateServiceUpdate`,
`ValidateServiceStatusUpdate`, `ValidateServiceClusterIPsRelatedFields` (pkg/apis/core/validation/validation.go).
Allocation of cluster IPs and node ports needs the other stored Services: `kjobs.server.serviceips`.

Design note: pure, on JSON dicts, like the rest of `kjobs.api`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, not_supported
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_formats import (
    _mask_trailing_dash,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_sloppy_ip,
    is_valid_port_name,
    is_valid_port_num,
)
from kjobs.api.validation_meta import validate_labels, validate_object_meta, validate_object_meta_update

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate

CLUSTER_IP = "ClusterIP"
NODE_PORT = "NodePort"
LOAD_BALANCER = "LoadBalancer"
EXTERNAL_NAME = "ExternalName"
NONE = "None"
"""`core.ClusterIPNone`: a headless Service."""
SINGLE_STACK = "SingleStack"
REQUIRE_DUAL_STACK = "RequireDualStack"
IPV4, IPV6 = "IPv4", "IPv6"

SERVICE_TYPES = (CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT)
SESSION_AFFINITIES = ("ClientIP", "None")
PROTOCOLS = ("SCTP", "TCP", "UDP")
TRAFFIC_POLICIES = ("Cluster", "Local")
IP_FAMILIES = (IPV4, IPV6)
IP_FAMILY_POLICIES = ("PreferDualStack", REQUIRE_DUAL_STACK, SINGLE_STACK)
TRAFFIC_DISTRIBUTIONS = ("PreferClose",)
DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800
"""`v1.DefaultClientIPServiceAffinitySeconds`."""
MAX_CLIENT_IP_AFFINITY_SECONDS = 86400
"""`core.MaxClientIPServiceAffinitySeconds`."""
TOPOLOGY_HINTS_ANNOTATION = "service.kubernetes.io/topology-aware-hints"
TOPOLOGY_MODE_ANNOTATION = "service.kubernetes.io/topology-mode"
LB_SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
AFFINITY_REQUIRED = "when session affinity type is ClientIP"
ONLY_LB = "may only be used when `type` is 'LoadBalancer'"


def _spec(svc: Obj) -> Obj:
    """`svc`'s spec, copied (with its ports) for this write to change: the one read may be shared with the
    stored object (a copy-on-write patch)."""
    spec = svc.get("spec")
    spec = svc["spec"] = dict(spec) if type(spec) is dict else {}
    if type(spec.get("ports")) is list:
        spec["ports"] = [dict(p) if type(p) is dict else p for p in spec["ports"]]
    return spec


def _d(value: Any) -> Obj:
    return value if type(value) is dict else {}


def _l(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _ports(spec: Obj) -> list[Obj]:
    return [p if type(p) is dict else {} for p in _l(spec.get("ports"))]


def externally_accessible(spec: Obj) -> bool:
    """pkg/api/service/util.go `ExternallyAccessible`."""
    kind = spec.get("type")
    return kind in (LOAD_BALANCER, NODE_PORT) or (kind == CLUSTER_IP and bool(spec.get("externalIPs")))


def needs_health_check(spec: Obj) -> bool:
    """`NeedsHealthCheck`: a LoadBalancer whose external traffic policy is Local."""
    return spec.get("type") == LOAD_BALANCER and spec.get("externalTrafficPolicy") == "Local"


def is_headless(spec: Obj) -> bool:
    """`isHeadlessService`: clusterIPs is exactly `[None]`."""
    ips = _l(spec.get("clusterIPs"))
    return len(ips) == 1 and ips[0] == NONE


# --------------------------------------------------------------------------------------------- defaults


def default_service_in_place(svc: Obj) -> Obj:
    """`SetDefaults_Service`, as decoding a v1 Service runs it."""
    spec = _spec(svc)
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = _d(_d(spec.get("sessionAffinityConfig")).get("clientIP"))
        if client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_AFFINITY_SECONDS}}
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    for port in _l(spec.get("ports")):
        if type(port) is dict:
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port") or 0
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER:
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        _default_ip_mode(svc)
    return svc


def _default_ip_mode(svc: Obj) -> None:
    """LoadBalancerIPMode (GA in 1.32): an ingress with an `ip` and no `ipMode` gets `VIP`."""
    status = _d(svc.get("status"))
    balancer = _d(status.get("loadBalancer"))
    ingress = _l(balancer.get("ingress"))
    if any(type(e) is dict and e.get("ip") and e.get("ipMode") is None for e in ingress):
        ingress = [
            {**e, "ipMode": "VIP"} if type(e) is dict and e.get("ip") and e.get("ipMode") is None else e
            for e in ingress
        ]
        svc["status"] = {**status, "loadBalancer": {**balancer, "ingress": ingress}}


def default_service_status_in_place(svc: Obj) -> Obj:
    """A status write is decoded (and defaulted) as a whole Service too."""
    if _d(svc.get("spec")).get("type") == LOAD_BALANCER:
        _default_ip_mode(svc)
    return svc


# ------------------------------------------------------------------------------------------ strategy


def normalize_cluster_ips(new: Obj, old: Obj | None) -> None:
    """pkg/registry/core/service/strategy.go `NormalizeClusterIPs`: keep `clusterIP` and `clusterIPs` in step for
    a client that sets only one of them."""
    spec, old_spec = _spec(new), _d((old or {}).get("spec"))
    ip, ips = spec.get("clusterIP") or "", _l(spec.get("clusterIPs"))
    if old is None:
        if ip and not ips:
            spec["clusterIPs"] = [ip]
        return
    old_ip, old_ips = old_spec.get("clusterIP") or "", _l(old_spec.get("clusterIPs"))
    if old_ips and not ips and old_ip == ip:
        spec["clusterIPs"] = ips = list(old_ips)
    if old_ip != ip:
        same_plural = ips == old_ips
        if old_ip and not ip:
            if same_plural:
                spec.pop("clusterIPs", None)
        elif same_plural:
            spec["clusterIPs"] = [ip]


def patch_allocated_values(new: Obj, old: Obj) -> None:
    """storage.go `patchAllocatedValues`: an update that leaves out what the server allocated (a re-applied
    manifest without `clusterIP` or `nodePort`) keeps the allocated values."""
    spec, old_spec = _spec(new), _d(old.get("spec"))
    if old_spec.get("type") != EXTERNAL_NAME and spec.get("type") != EXTERNAL_NAME:
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if _needs_node_port(old_spec) and _needs_node_port(spec):
        used = _node_ports(old_spec) & _node_ports(spec)
        by_name = {str(p.get("name") or ""): p.get("nodePort") or 0 for p in _ports(old_spec)}
        for port in _ports(spec):
            if not port.get("nodePort"):
                value = by_name.get(str(port.get("name") or ""), 0)
                if value and value not in used:
                    port["nodePort"] = value
    if needs_health_check(old_spec) and needs_health_check(spec) and not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = old_spec.get("healthCheckNodePort") or 0


def _needs_node_port(spec: Obj) -> bool:
    return spec.get("type") in (NODE_PORT, LOAD_BALANCER)


def _node_ports(spec: Obj) -> set[int]:
    return {p["nodePort"] for p in _ports(spec) if type(p.get("nodePort")) is int and p["nodePort"]}


def drop_type_dependent_fields(new: Obj, old: Obj) -> None:
    """strategy.go `dropTypeDependentFields`: a change of `type` drops what the old type had allocated or
    defaulted, unless the update also changed it (validation then has its say)."""
    spec, old_spec = _spec(new), _d(old.get("spec"))
    if old_spec.get("type") != EXTERNAL_NAME and spec.get("type") == EXTERNAL_NAME:
        if spec.get("clusterIP", "") == old_spec.get("clusterIP", "") and _l(spec.get("clusterIPs")) == _l(
            old_spec.get("clusterIPs")
        ):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if spec.get("ipFamilies") == old_spec.get("ipFamilies"):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and _node_ports(spec) <= _node_ports(old_spec):
        for port in _ports(spec):
            port.pop("nodePort", None)
    same_health = spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")
    if needs_health_check(old_spec) and not needs_health_check(spec) and same_health:
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == LOAD_BALANCER and spec.get("type") != LOAD_BALANCER:
        allocate, old_allocate = (
            spec.get("allocateLoadBalancerNodePorts"),
            old_spec.get("allocateLoadBalancerNodePorts"),
        )
        if allocate is not None and allocate == old_allocate:
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    same_policy = spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy")
    if externally_accessible(old_spec) and not externally_accessible(spec) and same_policy:
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != LOAD_BALANCER:
        status = new.get("status")
        if type(status) is dict:
            new["status"] = {**status, "loadBalancer": {}}


def init_ip_family_fields(svc: Obj, old: Obj | None) -> list[FieldError]:
    """alloc.go `initIPFamilyFields` on a single-stack IPv4 cluster: `ipFamilyPolicy` (the old one on an update;
    RequireDualStack for a headless Service without selector, else SingleStack) and `ipFamilies`; the errors
    kube-apiserver answers before any validation (422)."""
    spec = _spec(svc)
    if spec.get("type") == EXTERNAL_NAME:
        return []
    if spec.get("ipFamilyPolicy") is None:
        old_policy = _d((old or {}).get("spec")).get("ipFamilyPolicy")
        if old_policy is not None:
            spec["ipFamilyPolicy"] = old_policy
        elif spec.get("clusterIP") == NONE and not spec.get("selector"):
            spec["ipFamilyPolicy"] = REQUIRE_DUAL_STACK
        else:
            spec["ipFamilyPolicy"] = SINGLE_STACK
    errs = validate_cluster_ips_related_fields(svc)
    if errs:
        return errs
    policy = spec["ipFamilyPolicy"]
    ips, families = _l(spec.get("clusterIPs")), _l(spec.get("ipFamilies"))
    if policy == SINGLE_STACK:
        if len(ips) == 2:
            errs.append(
                FieldError(
                    "spec.ipFamilyPolicy",
                    Invalid,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
                    policy,
                )
            )
        if len(families) == 2:
            errs.append(
                FieldError(
                    "spec.ipFamilyPolicy",
                    Invalid,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
                    policy,
                )
            )
    for i, ip in enumerate(ips):
        if ip == NONE:
            break
        family = IPV6 if ":" in str(ip) else IPV4
        if i >= len(families):
            if family != IPV4:
                errs.append(
                    FieldError(f"spec.clusterIPs[{i}]", Invalid, f"{family} is not configured on this cluster", ips)
                )
            else:
                families = spec["ipFamilies"] = [*families, family]
    if errs:
        return errs
    if spec.get("clusterIP") == NONE and not spec.get("selector"):
        if not families:
            families = spec["ipFamilies"] = [IPV4]
        if len(families) < 2 and policy != SINGLE_STACK:
            spec["ipFamilies"] = [*families, IPV6 if families[0] == IPV4 else IPV4]
        return []
    if policy == REQUIRE_DUAL_STACK:
        errs.append(
            FieldError("spec.ipFamilyPolicy", Invalid, "this cluster is not configured for dual-stack services", policy)
        )
    for i, family in enumerate(families):
        if family != IPV4:
            errs.append(FieldError(f"spec.ipFamilies[{i}]", Invalid, "not configured on this cluster", family))
    if errs:
        return errs
    if not families:
        spec["ipFamilies"] = [IPV4]
    return []


# ------------------------------------------------------------------------------------------- validation


def _name_is_dns1035_label(name: str, prefix: bool) -> tuple[str, ...]:
    """`ValidateServiceName` (apimachinery `NameIsDNS1035Label`)."""
    return tuple(is_dns1035_label(_mask_trailing_dash(name) if prefix else name))


def _ip_of(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not is_sloppy_ip(value):
        return None
    if ":" not in value:
        return ipaddress.IPv4Address(".".join(str(int(p)) for p in value.split(".")))
    try:
        address = ipaddress.IPv6Address(value)
    except ValueError:
        return None
    return address.ipv4_mapped or address


def _is_v6(value: Any) -> bool:
    """k8s.io/utils/net `IsIPv6String` (an IPv4-mapped IPv6 address counts as IPv4)."""
    parsed = _ip_of(str(value))
    return parsed is not None and parsed.version == 6


def is_valid_ip(value: Any) -> bool:
    """`IsValidIP` (v1.32: `ParseIPSloppy`)."""
    return type(value) is str and is_sloppy_ip(value)


def _is_valid_cidr(value: str) -> bool:
    """`IsValidCIDR` (`ParseCIDRSloppy`): an address (leading zeros allowed) and a prefix length."""
    address, slash, bits = value.partition("/")
    if not slash or not is_sloppy_ip(address) or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        return False
    return int(bits) <= (128 if ":" in address else 32)


def _non_special_ip(value: str, path: str, errs: list[FieldError]) -> None:
    """`ValidateNonSpecialIP`: an external IP may not be unspecified, loopback or link-local."""
    ip = _ip_of(value)
    if ip is None:
        errs.append(FieldError(path, Invalid, "must be a valid IP address", value))
        return
    if ip.is_unspecified:
        errs.append(FieldError(path, Invalid, f"may not be unspecified ({value})", value))
    if ip.is_loopback:
        errs.append(FieldError(path, Invalid, "may not be in the loopback range (127.0.0.0/8, ::1/128)", value))
    if ip.is_link_local:
        errs.append(FieldError(path, Invalid, "may not be in the link-local range (169.254.0.0/16, fe80::/10)", value))
    link_local_multicast = ipaddress.ip_network("224.0.0.0/24" if ip.version == 4 else "ff02::/16")
    if ip in link_local_multicast:
        errs.append(
            FieldError(path, Invalid, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)", value)
        )


def _validate_port(port: Obj, require_name: bool, names: set[str], path: str, errs: list[FieldError]) -> None:
    """`validateServicePort`."""
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(FieldError(f"{path}.name", Required))
    elif name:
        for msg in is_dns1123_label(name):
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))
        if name in names:
            errs.append(FieldError(f"{path}.name", Duplicate, "", name))
        else:
            names.add(name)
    number = port.get("port") or 0
    for msg in is_valid_port_num(number if type(number) is int else 0):
        errs.append(FieldError(f"{path}.port", Invalid, msg, number))
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(FieldError(f"{path}.protocol", Required))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    target = port.get("targetPort")
    if type(target) is str:
        for msg in is_valid_port_name(target):
            errs.append(FieldError(f"{path}.targetPort", Invalid, msg, target))
    else:
        target = target if type(target) is int else 0
        for msg in is_valid_port_num(target):
            errs.append(FieldError(f"{path}.targetPort", Invalid, msg, target))
    app_protocol = port.get("appProtocol")
    if type(app_protocol) is str:
        for msg in is_qualified_name(app_protocol):
            errs.append(FieldError(f"{path}.appProtocol", Invalid, msg, app_protocol))


def _validate_client_ip_affinity(config: Any, path: str, errs: list[FieldError]) -> None:
    """`validateClientIPAffinityConfig`."""
    if type(config) is not dict:
        errs.append(FieldError(path, Required, AFFINITY_REQUIRED))
        return
    client_ip = config.get("clientIP")
    if type(client_ip) is not dict:
        errs.append(FieldError(f"{path}.clientIP", Required, AFFINITY_REQUIRED))
        return
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        errs.append(FieldError(f"{path}.clientIP.timeoutSeconds", Required, AFFINITY_REQUIRED))
    elif type(timeout) is int and not 0 < timeout <= MAX_CLIENT_IP_AFFINITY_SECONDS:
        errs.append(
            FieldError(
                f"{path}.clientIP.timeoutSeconds",
                Invalid,
                f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}",
                timeout,
            )
        )


def validate_cluster_ips_related_fields(svc: Obj) -> list[FieldError]:
    """`ValidateServiceClusterIPsRelatedFields`: `clusterIP`/`clusterIPs` in step, valid families, policy and
    IPs, at most one IP per family."""
    spec = _d(svc.get("spec"))
    if spec.get("type") == EXTERNAL_NAME:
        return []
    errs: list[FieldError] = []
    ip, ips = spec.get("clusterIP") or "", _l(spec.get("clusterIPs"))
    if ip:
        if not ips:
            errs.append(FieldError("spec.clusterIPs", Required))
        elif ips[0] != ip:
            errs.append(FieldError("spec.clusterIPs", Invalid, "first value must match `clusterIP`", ips))
    elif ips:
        errs.append(FieldError("spec.clusterIPs", Invalid, "must be empty when `clusterIP` is not specified", ips))
    seen: set[Any] = set()
    families = _l(spec.get("ipFamilies"))
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            errs.append(not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if family in seen:
            errs.append(FieldError(f"spec.ipFamilies[{i}]", Duplicate, "", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad_ips = False
    for i, value in enumerate(ips):
        if i == 0 and value == NONE:
            if len(ips) > 1:
                bad_ips = True
                errs.append(FieldError("spec.clusterIPs", Invalid, "'None' must be the first and only value", ips))
            continue
        if not is_valid_ip(value):
            bad_ips = True
            errs.append(FieldError(f"spec.clusterIPs[{i}]", Invalid, IP_MSG, value))
    if len(ips) > 2:
        errs.append(FieldError("spec.clusterIPs", Invalid, "may only hold up to 2 values", ips))
    if bad_ips:
        return errs
    if len(ips) > 1:
        v6 = [_is_v6(v) for v in ips]
        if all(v6) or not any(v6):  # k8s.io/utils/net `IsDualStackIPStrings`: one of each family, any count
            errs.append(
                FieldError("spec.clusterIPs", Invalid, "may specify no more than one IP for each IP family", ips)
            )
    if not is_headless(spec) and ips and families:
        for i, value in enumerate(ips[: len(families)]):
            is_v6 = _is_v6(value)
            if families[i] == IPV4 and is_v6:
                msg = f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"
                errs.append(FieldError(f"spec.clusterIPs[{i}]", Invalid, msg, value))
            if families[i] == IPV6 and not is_v6:
                msg = f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"
                errs.append(FieldError(f"spec.clusterIPs[{i}]", Invalid, msg, value))
    return errs


def validate_service(svc: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateService` (and `ValidateServiceCreate`, which is only this), in upstream's order."""
    meta = _d(svc.get("metadata"))
    errs = validate_object_meta(meta, namespaced=True, name_fn=_name_is_dns1035_label)
    annotations = _d(meta.get("annotations"))
    both = TOPOLOGY_MODE_ANNOTATION in annotations and TOPOLOGY_HINTS_ANNOTATION in annotations
    if both and annotations[TOPOLOGY_MODE_ANNOTATION] != annotations[TOPOLOGY_HINTS_ANNOTATION]:
        errs.append(
            FieldError(
                f"metadata.annotations[{TOPOLOGY_MODE_ANNOTATION}]",
                Invalid,
                f"must match annotations[{TOPOLOGY_HINTS_ANNOTATION}] when both are specified",
                annotations[TOPOLOGY_MODE_ANNOTATION],
            )
        )
    spec = _d(svc.get("spec"))
    kind = spec.get("type") or ""
    headless = is_headless(spec)
    ports = _ports(spec)
    if not ports and not headless and kind != EXTERNAL_NAME:
        errs.append(FieldError("spec.ports", Required))
    ips = _l(spec.get("clusterIPs"))
    if kind in (LOAD_BALANCER, NODE_PORT) and headless:
        errs.append(FieldError("spec.clusterIPs[0]", Invalid, f"may not be set to 'None' for {kind} services", ips[0]))
    elif kind == EXTERNAL_NAME:
        if ips:
            errs.append(FieldError("spec.clusterIPs", Forbidden, "may not be set for ExternalName services"))
        if spec.get("ipFamilies"):
            errs.append(FieldError("spec.ipFamilies", Forbidden, "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(FieldError("spec.ipFamilyPolicy", Forbidden, "may not be set for ExternalName services"))
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            for msg in is_dns1123_subdomain(cname):
                errs.append(FieldError("spec.externalName", Invalid, msg, cname))
        else:
            errs.append(FieldError("spec.externalName", Required))
    names: set[str] = set()
    for i, port in enumerate(ports):
        _validate_port(port, len(ports) > 1, names, f"spec.ports[{i}]", errs)
    selector = spec.get("selector")
    if type(selector) is dict:
        validate_labels(selector, "spec.selector", errs)
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(FieldError("spec.sessionAffinity", Required))
    elif affinity not in SESSION_AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES))
    if affinity == "ClientIP":
        _validate_client_ip_affinity(spec.get("sessionAffinityConfig"), "spec.sessionAffinityConfig", errs)
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(
            FieldError("spec.sessionAffinityConfig", Forbidden, "must not be set when session affinity is None")
        )
    errs += validate_cluster_ips_related_fields(svc)
    for i, external in enumerate(_l(spec.get("externalIPs"))):
        path = f"spec.externalIPs[{i}]"
        if not is_valid_ip(external):
            errs.append(FieldError(path, Invalid, IP_MSG, external))
        else:
            _non_special_ip(external, path, errs)
    if not kind:
        errs.append(FieldError("spec.type", Required))
    elif kind not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, SERVICE_TYPES))
    if kind == CLUSTER_IP:
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                errs.append(
                    FieldError(f"spec.ports[{i}].nodePort", Forbidden, "may not be used when `type` is 'ClusterIP'")
                )
    node_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if not port.get("nodePort"):
            continue
        key = (port.get("protocol"), port.get("nodePort"))
        if key in node_ports:
            errs.append(FieldError(f"spec.ports[{i}].nodePort", Duplicate, "", port.get("nodePort")))
        node_ports.add(key)
    seen_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen_ports:
            errs.append(FieldError(f"spec.ports[{i}]", Duplicate, "", {"protocol": key[0], "port": key[1]}))
        seen_ports.add(key)
    _validate_source_ranges(spec, annotations, kind, errs)
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != LOAD_BALANCER:
        errs.append(FieldError("spec.allocateLoadBalancerNodePorts", Forbidden, ONLY_LB))
    if kind == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        errs.append(FieldError("allocateLoadBalancerNodePorts", Required))  # upstream's path, without spec.
    errs += _validate_load_balancer_class(None, spec)
    _validate_external_traffic_policy(spec, errs)
    internal = spec.get("internalTrafficPolicy")
    if internal is None and kind in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
        errs.append(FieldError("spec.internalTrafficPolicy", Required))
    if internal is not None and internal not in TRAFFIC_POLICIES:
        errs.append(not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution not in TRAFFIC_DISTRIBUTIONS:
        errs.append(not_supported("spec.trafficDistribution", distribution, TRAFFIC_DISTRIBUTIONS))
    return errs


def _validate_source_ranges(spec: Obj, annotations: Obj, kind: str, errs: list[FieldError]) -> None:
    ranges = _l(spec.get("loadBalancerSourceRanges"))
    if ranges:
        path = "spec.LoadBalancerSourceRanges"  # sic: upstream's path
        if kind != LOAD_BALANCER:
            errs.append(FieldError(path, Forbidden, ONLY_LB))
        for i, value in enumerate(ranges):
            value = str(value).strip()
            if not _is_valid_cidr(value):
                errs.append(FieldError(f"{path}[{i}]", Invalid, CIDR_MSG, value))
    elif LB_SOURCE_RANGES_ANNOTATION in annotations:
        path = f"metadata.annotations[{LB_SOURCE_RANGES_ANNOTATION}]"
        if kind != LOAD_BALANCER:
            errs.append(FieldError(path, Forbidden, ONLY_LB))
        text = str(annotations[LB_SOURCE_RANGES_ANNOTATION]).strip()
        if text:
            for value in text.split(","):
                value = value.strip()
                if not _is_valid_cidr(value):
                    errs.append(FieldError(path, Invalid, CIDR_MSG, value))


def _validate_load_balancer_class(old_spec: Obj | None, spec: Obj) -> list[FieldError]:
    """`validateLoadBalancerClassField`."""
    errs: list[FieldError] = []
    lb_class = spec.get("loadBalancerClass")
    both_lb = old_spec is not None and old_spec.get("type") == LOAD_BALANCER and spec.get("type") == LOAD_BALANCER
    if both_lb and (old_spec or {}).get("loadBalancerClass") != lb_class:
        errs.append(FieldError("spec.loadBalancerClass", Invalid, "may not change once set", lb_class))
    if spec.get("type") == LOAD_BALANCER:
        if type(lb_class) is str:
            for msg in is_qualified_name(lb_class):
                errs.append(FieldError("spec.loadBalancerClass", Invalid, msg, lb_class))
    elif lb_class is not None:
        errs.append(FieldError("spec.loadBalancerClass", Forbidden, ONLY_LB))
    return errs


def _validate_external_traffic_policy(spec: Obj, errs: list[FieldError]) -> None:
    """`validateServiceExternalTrafficPolicy`."""
    policy = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(spec):
        if policy:
            msg = "may only be set for externally-accessible services"
            errs.append(FieldError("spec.externalTrafficPolicy", Invalid, msg, policy))
    elif not policy:
        errs.append(FieldError("spec.externalTrafficPolicy", Required))
    elif policy not in TRAFFIC_POLICIES:
        errs.append(not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    health = spec.get("healthCheckNodePort") or 0
    if not needs_health_check(spec):
        if health:
            msg = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
            errs.append(FieldError("spec.healthCheckNodePort", Invalid, msg, health))
    elif not health:
        errs.append(FieldError("spec.healthCheckNodePort", Required))
    else:
        for msg in is_valid_port_num(health if type(health) is int else 0):
            errs.append(FieldError("spec.healthCheckNodePort", Invalid, msg, health))


def _upgrade_downgrade_cluster_ips(old_spec: Obj, spec: Obj) -> list[FieldError]:
    """`validateUpgradeDowngradeClusterIPs`."""
    errs: list[FieldError] = []
    if EXTERNAL_NAME in (spec.get("type"), old_spec.get("type")):
        return errs
    if is_headless(old_spec) and is_headless(spec):
        return errs
    old_ips, ips = _l(old_spec.get("clusterIPs")), _l(spec.get("clusterIPs"))
    changed = "may not change once set"
    if len(old_ips) == len(ips):
        for i, ip in enumerate(old_ips):
            if ip != ips[i]:
                errs.append(FieldError(f"spec.clusterIPs[{i}]", Invalid, changed, ips))
    elif len(old_ips) > len(ips):
        if not ips:
            errs.append(FieldError("spec.clusterIPs[0]", Invalid, "primary clusterIP can not be unset", ips))
        if old_ips and ips and ips[0] != old_ips[0]:
            errs.append(FieldError("spec.clusterIPs[0]", Invalid, changed, ips))
        if len(ips) == 1 and spec.get("ipFamilyPolicy") != SINGLE_STACK:
            msg = "must be set to 'SingleStack' when releasing the secondary clusterIP"
            errs.append(FieldError("spec.ipFamilyPolicy", Invalid, msg, spec.get("ipFamilyPolicy")))
    elif old_ips and ips[0] != old_ips[0]:
        errs.append(FieldError("spec.clusterIPs[0]", Invalid, changed, ips))
    return errs


def _upgrade_downgrade_ip_families(old_spec: Obj, spec: Obj) -> list[FieldError]:
    """`validateUpgradeDowngradeIPFamilies`."""
    errs: list[FieldError] = []
    if EXTERNAL_NAME in (spec.get("type"), old_spec.get("type")):
        return errs
    if is_headless(old_spec) or is_headless(spec):
        return errs
    old_families, families = _l(old_spec.get("ipFamilies")), _l(spec.get("ipFamilies"))
    changed = "may not change once set"
    if len(old_families) == len(families):
        for i, family in enumerate(old_families):
            if family != families[i]:
                errs.append(FieldError("spec.ipFamilies[0]", Invalid, changed, families))
    elif len(old_families) > len(families):
        if not _l(spec.get("clusterIPs")):
            errs.append(FieldError("spec.ipFamilies[0]", Invalid, "primary ipFamily can not be unset", families))
        if families and families[0] != old_families[0]:
            errs.append(FieldError("spec.ipFamilies[0]", Invalid, changed, spec.get("clusterIPs")))
        if len(families) == 1 and spec.get("ipFamilyPolicy") != SINGLE_STACK:
            msg = "must be set to 'SingleStack' when releasing the secondary ipFamily"
            errs.append(FieldError("spec.ipFamilyPolicy", Invalid, msg, spec.get("ipFamilyPolicy")))
    elif old_families and families and families[0] != old_families[0]:
        errs.append(FieldError("spec.ipFamilies[0]", Invalid, changed, spec.get("clusterIPs")))
    return errs


def validate_service_update(svc: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateServiceUpdate`: metadata update rules, cluster IPs and families that may not change, the
    load balancer class, an immutable health check node port, then `ValidateService`."""
    errs = validate_object_meta_update(_d(svc.get("metadata")), _d(old.get("metadata")))
    spec, old_spec = _d(svc.get("spec")), _d(old.get("spec"))
    errs += _upgrade_downgrade_cluster_ips(old_spec, spec)
    errs += _upgrade_downgrade_ip_families(old_spec, spec)
    errs += _validate_load_balancer_class(old_spec, spec)
    changed = spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort")
    if needs_health_check(old_spec) and needs_health_check(spec) and changed:
        errs.append(FieldError("spec.healthCheckNodePort", Forbidden, "field is immutable"))
    return errs + validate_service(svc, features=features)


def validate_service_status_update(svc: Obj, old: Obj) -> list[FieldError]:
    """`ValidateServiceStatusUpdate`: metadata update rules and `ValidateLoadBalancerStatus` (with
    AllowServiceLBStatusOnNonLB off and LoadBalancerIPMode on, as in 1.32)."""
    errs = validate_object_meta_update(_d(svc.get("metadata")), _d(old.get("metadata")))
    spec = _d(svc.get("spec"))
    ingress = _l(_d(_d(svc.get("status")).get("loadBalancer")).get("ingress"))
    path = "status.loadBalancer.ingress"
    if spec.get("type") != LOAD_BALANCER and ingress:
        errs.append(FieldError(path, Forbidden, "may only be used when `spec.type` is 'LoadBalancer'"))
        return errs
    for i, entry in enumerate(ingress):
        entry = _d(entry)
        at = f"{path}[{i}]"
        ip, mode, hostname = entry.get("ip") or "", entry.get("ipMode"), entry.get("hostname") or ""
        if ip and not is_valid_ip(ip):
            errs.append(FieldError(f"{at}.ip", Invalid, IP_MSG, ip))
        if mode is None:
            if ip:
                errs.append(FieldError(f"{at}.ipMode", Required, "must be specified when `ip` is set"))
        elif not ip:
            errs.append(FieldError(f"{at}.ipMode", Forbidden, "may not be specified when `ip` is not set"))
        elif mode not in ("Proxy", "VIP"):
            errs.append(not_supported(f"{at}.ipMode", mode, ("Proxy", "VIP")))
        if hostname:
            for msg in is_dns1123_subdomain(hostname):
                errs.append(FieldError(f"{at}.hostname", Invalid, msg, hostname))
            if is_sloppy_ip(hostname):
                errs.append(FieldError(f"{at}.hostname", Invalid, "must be a DNS name, not an IP address", hostname))
    return errs
