"""The Endpoints and EndpointSlice tables as kubectl prints them (pkg/printers/internalversion/printers.go
`printEndpoints` with `formatEndpoints`, `printEndpointSlice` with `formatDiscoveryPorts`,
`formatDiscoveryEndpoints` and `listWithMoreString`): three items, then `+ N more...`."""

from __future__ import annotations

import pytest

from kjobs.api.types import Obj
from kjobs.server.tables import endpoint_slice_cells, endpoints_cells, format_endpoints


def _ep(*subsets: Obj) -> Obj:
    return {"metadata": {"name": "svc"}, "subsets": list(subsets)}


CASES: dict[str, tuple[Obj, str]] = {
    "no subsets": (_ep(), "<none>"),
    "headless without ports: the IPs": (
        _ep({"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}),
        "10.0.0.1,10.0.0.2",
    ),
    "one port": (_ep({"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}), "10.0.0.1:80"),
    "ipv6 in brackets": (_ep({"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}), "[fd00::1]:80"),
    "three shown, the rest counted": (
        _ep({"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 6)], "ports": [{"port": 80}, {"port": 81}]}),
        "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 7 more...",
    ),
    "not-ready addresses are not shown": (
        _ep({"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}),
        "",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_format_endpoints(name: str) -> None:
    ep, want = CASES[name]
    assert endpoints_cells(ep, 0.0)[1] == want


def test_format_endpoints_by_port_name_as_describe_uses_it() -> None:
    ep = _ep({"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]})
    assert format_endpoints(ep, {"b"}) == "10.0.0.1:81"


def test_endpoint_slice_row() -> None:
    eps: Obj = {
        "metadata": {"name": "svc-abcde"},
        "addressType": "IPv4",
        "ports": [{"port": 80}, {"name": "named"}, {}, {"port": 83}],
        "endpoints": [{"addresses": [f"10.0.0.{i}"]} for i in range(1, 5)],
    }
    assert endpoint_slice_cells(eps, 0.0)[:4] == [
        "svc-abcde",
        "IPv4",
        "80,named,* + 1 more...",
        "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
    ]
    empty = {"metadata": {"name": "e"}, "addressType": "IPv4", "ports": None, "endpoints": []}
    assert endpoint_slice_cells(empty, 0.0)[2:4] == ["<unset>", "<unset>"]
