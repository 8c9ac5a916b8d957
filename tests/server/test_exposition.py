"""`kjobs.server.exposition` writes what client_golang's text encoder (expfmt) writes for the same registry."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kjobs.server.exposition import exposition, go_float, serve


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9.0, "9"),
        (0.0, "0"),
        (0.004, "0.004"),
        (65.536, "65.536"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),  # Go's %g: exponent form from 1e6 on
        (1796310746.5521452, "1.7963107465521452e+09"),
        (0.0001, "0.0001"),
        (0.00001234, "1.234e-05"),
        (-2.5, "-2.5"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (float("nan"), "NaN"),
    ],
)
def test_numbers_are_written_as_go_writes_them(value: float, text: str) -> None:
    assert go_float(value) == text


def test_a_registry_is_written_as_client_golang_writes_it() -> None:
    registry = CollectorRegistry()
    Counter("b_things", "[ALPHA] Things.\nSecond line", ["zone", "kind"], registry=registry).labels("z2", "x").inc(3)
    Counter("b_things_never", "[ALPHA] Never counted.", ["kind"], registry=registry)  # no series: left out
    latency = Histogram("a_latency_seconds", "[STABLE] Latency.", ["verb"], buckets=[0.5, 1, 2], registry=registry)
    latency.labels("GET").observe(0.7)
    Gauge("c_level", "[BETA] Level.", registry=registry).set(2)
    assert exposition([registry]).decode() == (
        "# HELP a_latency_seconds [STABLE] Latency.\n"
        "# TYPE a_latency_seconds histogram\n"
        'a_latency_seconds_bucket{verb="GET",le="0.5"} 0\n'
        'a_latency_seconds_bucket{verb="GET",le="1"} 1\n'
        'a_latency_seconds_bucket{verb="GET",le="2"} 1\n'
        'a_latency_seconds_bucket{verb="GET",le="+Inf"} 1\n'
        'a_latency_seconds_sum{verb="GET"} 0.7\n'
        'a_latency_seconds_count{verb="GET"} 1\n'
        "# HELP b_things_total [ALPHA] Things.\\nSecond line\n"
        "# TYPE b_things_total counter\n"
        'b_things_total{kind="x",zone="z2"} 3\n'
        "# HELP c_level [BETA] Level.\n"
        "# TYPE c_level gauge\n"
        "c_level 2\n"
    )


def test_series_are_sorted_by_their_label_values() -> None:
    registry = CollectorRegistry()
    counter = Counter("n", "h", ["event"], registry=registry)
    counter.labels("delete").inc()
    counter.labels("add").inc()
    lines = exposition([registry]).decode().splitlines()
    assert lines[2:] == ['n_total{event="add"} 1', 'n_total{event="delete"} 1']


def test_the_controller_metrics_server_serves_the_same_text() -> None:
    """`kjobs controller --metrics-port`: GET /metrics on loopback."""
    registry = CollectorRegistry()
    Counter("job_controller_job_syncs", "[STABLE] The number of job syncs", registry=registry).inc()
    server = serve(0, [registry])
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
            assert response.read() == exposition([registry])
    finally:
        server.shutdown()
        server.server_close()
