"""Endpoints validation: the rows of TestValidateEndpointsCreate and TestValidateEndpointsUpdate
(pkg/apis/core/validation/validation_test.go), each error row by the type of its first error, as upstream checks
it; `Address is loopback` is the one row kjobs answers differently (127.0.0.1 is every kjobs pod's address)."""

from __future__ import annotations

import pytest

from kjobs.api.endpoints import validate_endpoints, validate_endpoints_update
from kjobs.api.types import Obj

META = {"name": "mysvc", "namespace": "namespace"}


def _ep(*subsets: Obj, meta: Obj = META) -> Obj:
    return {"metadata": dict(meta), "subsets": list(subsets)}


def _one(ip: str | None, *ports: Obj) -> Obj:
    return {"addresses": [{"ip": ip} if ip is not None else {}], "ports": list(ports)}


A93 = {"name": "a", "port": 93, "protocol": "TCP"}
P93 = {"name": "p", "port": 93, "protocol": "TCP"}

SUCCESS: dict[str, Obj] = {
    "simple endpoint": _ep(
        {
            "addresses": [{"ip": "10.10.1.1"}, {"ip": "10.10.2.2"}],
            "ports": [{"name": "a", "port": 8675, "protocol": "TCP"}, {"name": "b", "port": 309, "protocol": "TCP"}],
        },
        {
            "addresses": [{"ip": "10.10.3.3"}],
            "ports": [{"name": "a", "port": 93, "protocol": "TCP"}, {"name": "b", "port": 76, "protocol": "TCP"}],
        },
    ),
    "empty subsets": _ep(),
    "no name required for singleton port": _ep(_one("10.10.1.1", {"port": 8675, "protocol": "TCP"})),
    "valid appProtocol": _ep(_one("10.10.1.1", {"port": 8675, "protocol": "TCP", "appProtocol": "HTTP"})),
    "empty ports": _ep({"addresses": [{"ip": "10.10.3.3"}]}),
}


@pytest.mark.parametrize("name", SUCCESS)
def test_validate_endpoints_create_success(name: str) -> None:
    assert validate_endpoints(SUCCESS[name]) == []


ERRORS: dict[str, tuple[Obj, str]] = {
    "missing namespace": ({"metadata": {"name": "mysvc"}}, "FieldValueRequired"),
    "missing name": ({"metadata": {"namespace": "namespace"}}, "FieldValueRequired"),
    "invalid namespace": (
        {"metadata": {"name": "mysvc", "namespace": 'no@#invalid.;chars"allowed'}},
        "FieldValueInvalid",
    ),
    "invalid name": ({"metadata": {"name": "-_Invliad^&Characters", "namespace": "namespace"}}, "FieldValueInvalid"),
    "empty addresses": (_ep({"ports": [A93]}), "FieldValueRequired"),
    "invalid IP": (_ep(_one("[2001:0db8:85a3:0042:1000:8a2e:0370:7334]", A93)), "FieldValueInvalid"),
    "Multiple ports, one without name": (
        _ep(_one("10.10.1.1", {"port": 8675, "protocol": "TCP"}, {"name": "b", "port": 309, "protocol": "TCP"})),
        "FieldValueRequired",
    ),
    "Invalid port number": (
        _ep(_one("10.10.1.1", {"name": "a", "port": 66000, "protocol": "TCP"})),
        "FieldValueInvalid",
    ),
    "Invalid protocol": (
        _ep(_one("10.10.1.1", {"name": "a", "port": 93, "protocol": "Protocol"})),
        "FieldValueNotSupported",
    ),
    "Address missing IP": (_ep(_one(None, A93)), "FieldValueInvalid"),
    "Port missing number": (_ep(_one("10.10.1.1", {"name": "a", "protocol": "TCP"})), "FieldValueInvalid"),
    "Port missing protocol": (_ep(_one("10.10.1.1", {"name": "a", "port": 93})), "FieldValueRequired"),
    "Address is link-local": (_ep(_one("169.254.169.254", P93)), "FieldValueInvalid"),
    "Address is link-local multicast": (_ep(_one("224.0.0.1", P93)), "FieldValueInvalid"),
    "Invalid AppProtocol": (
        _ep(_one("10.10.1.1", {**P93, "appProtocol": "lots-of[invalid]-{chars}"})),
        "FieldValueInvalid",
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_validate_endpoints_create_errors(name: str) -> None:
    ep, kind = ERRORS[name]
    errs = validate_endpoints(ep)
    assert errs and errs[0].type == kind, errs


def test_address_is_loopback_is_allowed_in_kjobs() -> None:
    """Upstream's `Address is loopback` row expects FieldValueInvalid; kjobs' pods all have 127.0.0.1."""
    assert validate_endpoints(_ep(_one("127.0.0.1", P93))) == []


def test_link_local_message() -> None:
    (err,) = validate_endpoints(_ep(_one("169.254.169.254", P93)))
    assert (err.field, err.detail) == (
        "subsets[0].addresses[0].ip",
        "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
    )


BASE = {"name": "mysvc", "namespace": "namespace", "resourceVersion": "1234"}
UPDATE: dict[str, tuple[Obj, Obj, int]] = {
    "update to valid app protocol": (
        {"name": "a", "port": 8675, "protocol": "TCP"},
        {"name": "a", "port": 8675, "protocol": "TCP", "appProtocol": "https"},
        0,
    ),
    "update to invalid app protocol": (
        {"name": "a", "port": 8675, "protocol": "TCP"},
        {"name": "a", "port": 8675, "protocol": "TCP", "appProtocol": "~https"},
        1,
    ),
}


@pytest.mark.parametrize("name", UPDATE)
def test_validate_endpoints_update(name: str) -> None:
    old_port, new_port, want = UPDATE[name]
    old = _ep({"addresses": [{"ip": "10.1.2.3"}], "ports": [old_port]}, meta=BASE)
    new = _ep({"addresses": [{"ip": "10.1.2.3"}], "ports": [new_port]}, meta=BASE)
    assert len(validate_endpoints_update(new, old)) == want
