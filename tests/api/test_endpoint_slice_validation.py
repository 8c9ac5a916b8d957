"""EndpointSlice validation: the rows of TestValidateEndpointSlice, TestValidateEndpointSliceCreate and
TestValidateEndpointSliceUpdate (pkg/apis/discovery/validation/validation_test.go), as error counts like
upstream's; the one row kjobs answers differently (`special-ipv4`: 127.0.0.1 is every kjobs pod's address, so
the loopback range is allowed) says so."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.endpoints import (
    ADDRESS_TYPES,
    DEPRECATED_ADDRESS_TYPES,
    _validate_slice,
    validate_endpoint_slice,
    validate_endpoint_slice_update,
)
from kjobs.api.types import Obj

META = {"name": "hello", "namespace": "world"}
HTTP = [{"name": "http", "protocol": "TCP"}]


def _ips(n: int) -> list[str]:
    return [f"10.1.2.{i % 255}" for i in range(n)]


def _ports(n: int) -> list[Obj]:
    return [{"name": f"http-{i}", "protocol": "TCP"} for i in range(n)]


def _endpoints(n: int) -> list[Obj]:
    return [{"addresses": [f"10.1.2.{i % 255}"]} for i in range(n)]


def _topology(n: int) -> dict[str, str]:
    return {f"topology-{i}": "example" for i in range(n)}


def _slice(address_type: str, ports: Any = None, endpoints: Any = None, meta: Obj = META) -> Obj:
    body: Obj = {"metadata": dict(meta), "addressType": address_type}
    if ports is not None:
        body["ports"] = ports
    if endpoints is not None:
        body["endpoints"] = endpoints
    return body


ONE = [{"addresses": _ips(1), "hostname": "valid-123"}]

# TestValidateEndpointSlice: name -> (errors, slice)
SLICE_ROWS: dict[str, tuple[int, Obj]] = {
    "good-slice": (0, _slice("IPv4", HTTP, ONE)),
    "good-ipv6": (0, _slice("IPv6", HTTP, [{"addresses": ["a00:100::4"], "hostname": "valid-123"}])),
    "good-fqdns": (
        0,
        _slice(
            "FQDN",
            HTTP,
            [{"addresses": ["foo.example.com", "example.com", "example.com.", "hyphens-are-good.example.com"]}],
        ),
    ),
    "all-protocols": (
        0,
        _slice(
            "IPv4", [{"name": n, "protocol": p} for n, p in (("tcp", "TCP"), ("udp", "UDP"), ("sctp", "SCTP"))], ONE
        ),
    ),
    "app-protocols": (
        0,
        _slice(
            "IP",
            [
                {"name": n, "protocol": "TCP", "appProtocol": a}
                for n, a in (
                    ("one", "HTTP"),
                    ("two", "https"),
                    ("three", "my-protocol"),
                    ("four", "example.com/custom-protocol"),
                )
            ],
            ONE,
        ),
    ),
    "empty-port-name": (0, _slice("IPv4", [{"name": "", "protocol": "TCP"}, *HTTP], [{"addresses": _ips(1)}])),
    "long-port-name": (0, _slice("IPv4", [{"name": "a" * 63, "protocol": "TCP"}], [{"addresses": _ips(1)}])),
    "empty-ports-and-endpoints": (0, _slice("IPv4", [], [])),
    "max-endpoints": (0, _slice("IPv4", _ports(1), _endpoints(1000))),
    "max-ports": (0, _slice("IPv4", _ports(100))),
    "max-addresses": (0, _slice("IPv4", HTTP, [{"addresses": _ips(100)}])),
    "max-topology-keys": (0, _slice("IPv4", HTTP, [{"addresses": _ips(1), "deprecatedTopology": _topology(16)}])),
    "duplicate-port-name": (1, _slice("IPv4", [{"name": "", "protocol": "TCP"}] * 2, [])),
    "bad-port-name-caps": (1, _slice("IPv4", [{"name": "aCapital", "protocol": "TCP"}], [])),
    "bad-port-name-chars": (1, _slice("IPv4", [{"name": "almost_valid", "protocol": "TCP"}], [])),
    "bad-port-name-length": (1, _slice("IPv4", [{"name": "a" * 64, "protocol": "TCP"}], [])),
    "invalid-port-protocol": (1, _slice("IPv4", [{"name": "http", "protocol": "foo"}])),
    "too-many-ports": (1, _slice("IPv4", _ports(101))),
    "too-many-endpoints": (1, _slice("IPv4", _ports(1), _endpoints(1001))),
    "no-endpoint-addresses": (1, _slice("IPv4", HTTP, [{"addresses": []}])),
    "too-many-addresses": (1, _slice("IPv4", HTTP, [{"addresses": _ips(101)}])),
    "bad-topology-key": (
        1,
        _slice("IPv4", HTTP, [{"addresses": _ips(1), "deprecatedTopology": {"--INVALID": "example"}}]),
    ),
    "too-many-topology-keys": (1, _slice("IPv4", HTTP, [{"addresses": _ips(1), "deprecatedTopology": _topology(17)}])),
    "bad-hostname": (1, _slice("IPv4", HTTP, [{"addresses": _ips(1), "hostname": "--INVALID"}])),
    "bad-meta": (1, _slice("IPv4", HTTP, ONE, meta={"name": "*&^", "namespace": "foo"})),
    "bad-ip": (1, _slice("IP", HTTP, [{"addresses": ["123.456.789.012"], "hostname": "valid-123"}])),
    "bad-ipv4": (3, _slice("IPv4", HTTP, [{"addresses": ["123.456.789.012", "2001:4860:4860::8888"]}])),
    "bad-ipv6": (4, _slice("IPv6", HTTP, [{"addresses": ["123.456.789.012", "2001:4860:4860:defg"]}])),
    "bad-fqdns": (
        4,
        _slice(
            "FQDN",
            HTTP,
            [{"addresses": ["foo.*", "FOO.example.com", "underscores_are_bad.example.com", "*.example.com"]}],
        ),
    ),
    "bad-app-protocol": (1, _slice("IP", [{"name": "http", "protocol": "TCP", "appProtocol": "--"}], ONE)),
    "empty-everything": (3, {"metadata": {}}),
    "special-ipv6": (1, _slice("IPv6", HTTP, [{"addresses": ["fe80::9656:d028:8652:66b6"]}])),
}


@pytest.mark.parametrize("name", SLICE_ROWS)
def test_validate_endpoint_slice(name: str) -> None:
    want, eps = SLICE_ROWS[name]
    errs = _validate_slice(eps, ADDRESS_TYPES + DEPRECATED_ADDRESS_TYPES)
    assert len(errs) == want, errs


def test_special_ipv4_loopback_is_allowed_in_kjobs() -> None:
    """Upstream's `special-ipv4` row expects 1 error for 127.0.0.1; kjobs allows the loopback range."""
    assert _validate_slice(_slice("IPv4", HTTP, [{"addresses": ["127.0.0.1"]}]), ADDRESS_TYPES) == []
    errs = _validate_slice(_slice("IPv4", HTTP, [{"addresses": ["169.254.1.1"]}]), ADDRESS_TYPES)
    assert [(e.field, e.detail) for e in errs] == [
        ("endpoints[0].addresses[0]", "may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    ]


CREATE_ROWS: dict[str, tuple[int, Obj]] = {
    "good-slice": (0, _slice("IPv4", HTTP, ONE)),
    "deprecated-address-type": (1, _slice("IP", HTTP, [{"addresses": _ips(1)}])),
    "bad-address-type": (1, _slice("other", HTTP, [{"addresses": _ips(1)}])),
}


@pytest.mark.parametrize("name", CREATE_ROWS)
def test_validate_endpoint_slice_create(name: str) -> None:
    want, eps = CREATE_ROWS[name]
    assert len(validate_endpoint_slice(eps)) == want


UPDATE_META = {"name": "es1", "namespace": "test", "resourceVersion": "1"}
UPDATE_ROWS: dict[str, tuple[int, Obj, Obj]] = {
    "valid and identical slices": (0, _slice("IPv6", meta=UPDATE_META), _slice("IPv6", meta=UPDATE_META)),
    "deprecated address type": (0, _slice("IP", meta=UPDATE_META), _slice("IP", meta=UPDATE_META)),
    "valid and identical slices with different address types": (
        1,
        _slice("IP", meta=UPDATE_META),
        _slice("other", meta=UPDATE_META),
    ),
    "invalid slices with valid address types": (
        1,
        _slice("IP", [{"name": "", "protocol": "invalid"}], meta=UPDATE_META),
        _slice("IP", meta=UPDATE_META),
    ),
}


@pytest.mark.parametrize("name", UPDATE_ROWS)
def test_validate_endpoint_slice_update(name: str) -> None:
    want, new, old = UPDATE_ROWS[name]
    assert len(validate_endpoint_slice_update(new, old)) == want
