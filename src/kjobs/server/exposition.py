"""Prometheus text exposition as a Kubernetes component writes it, so a scrape of kjobs reads as one of
kube-controller-manager or kube-apiserver.

Kubernetes serves its registry through client_golang's `promhttp` (component-base `legacyregistry.Handler`), in the
text format 0.0.4 (`expfmt`, OpenMetrics not enabled). That output differs from prometheus_client's
`generate_latest` in ways a user sees: families are sorted by name and one without series is left out
(`registry.Gather`, `internal.NormalizeMetricFamilies`); label pairs are sorted by name, with a histogram's `le`
last; series are sorted by their label values; a histogram gives `_sum` before `_count`; numbers are Go's shortest
`%g` (`9`, not `9.0`; `1.234567e+06`; bucket bounds `le="1"`); and there are no `_created` series.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from prometheus_client.metrics_core import Metric

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("", "_sum", "_count")}


class Collecting(Protocol):
    """What a registry offers here: its metric families."""

    def collect(self) -> Iterable[Metric]: ...


def go_float(value: float) -> str:
    """A float as client_golang's `writeFloat` writes it: `strconv.FormatFloat(f, 'g', -1, 64)`, shortest digits,
    exponent form when the decimal exponent is below -4 or 6 and above (expfmt/text_create.go)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, digit_tuple, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # the value is 0.<digits> x 10^point
    prefix = "-" if sign else ""
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    return "{" + ",".join(f'{name}="{_escape_value(value)}"' for name, value in pairs) + "}"


def _exposed(family: Metric) -> tuple[str, str, set[str]]:
    """The family's name and type as written, and the names of the samples written (prometheus_client names a
    counter family without its `_total`, and adds `_created` series that client_golang does not write)."""
    kind, name = family.type, family.name
    if kind == "counter":
        return f"{name}_total", kind, {f"{name}_total"}
    if kind in _SUFFIXES:
        return name, kind, {name + suffix for suffix in _SUFFIXES[kind]}
    if kind == "info":
        return f"{name}_info", "gauge", {f"{name}_info"}
    return name, {"stateset": "gauge", "unknown": "untyped"}.get(kind, kind), {name}


def _family_lines(family: Metric) -> Iterator[str]:
    """One family's lines, or none when it has no series."""
    exposed, kind, allowed = _exposed(family)
    # series: sorted label pairs (without le) -> [(sample name, le, value)]
    series: dict[tuple[tuple[str, str], ...], list[tuple[str, str | None, float]]] = {}
    for sample in family.samples:
        if sample.name not in allowed:
            continue
        labels = dict(sample.labels)
        le = labels.pop("le", None) if sample.name.endswith("_bucket") else None
        series.setdefault(tuple(sorted(labels.items())), []).append((sample.name, le, float(sample.value)))
    if not series:
        return
    yield f"# HELP {exposed} {_escape_help(family.documentation)}"
    yield f"# TYPE {exposed} {kind}"
    order = {suffix: i for i, suffix in enumerate(_SUFFIXES.get(kind, ("",)))}
    for pairs in sorted(series, key=lambda p: [value for _, value in p]):
        rows = series[pairs]
        rows.sort(key=lambda r: (order.get(r[0][len(exposed) :], 0), float(r[1]) if r[1] is not None else 0.0))
        for sample_name, le, value in rows:
            text = _labels([*pairs, ("le", go_float(float(le)))] if le is not None else list(pairs))
            yield f"{sample_name}{text} {go_float(value)}"


def exposition(registries: Iterable[Collecting]) -> bytes:
    """Every family of the registries, sorted by name, in Kubernetes' text format; a family name given twice is
    written once (its first registry's)."""
    families: dict[str, Metric] = {}
    for registry in registries:
        for family in registry.collect():
            families.setdefault(_exposed(family)[0], family)
    lines = [line for _, family in sorted(families.items()) for line in _family_lines(family)]
    return ("\n".join(lines) + "\n").encode() if lines else b""


def serve(port: int, registries: Iterable[Collecting], host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Serve `GET /metrics` on `host:port` from a daemon thread (`kjobs controller --metrics-port`), in the format
    of `exposition`; returns the server (its `server_address` has the port when 0 was asked)."""
    sources = list(registries)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404)
                return
            body = exposition(sources)
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return server
