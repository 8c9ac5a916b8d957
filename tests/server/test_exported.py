"""Pins the server's public API: what `kjobs up`, `kjobs run`, LocalClient and the node agent build on."""

from __future__ import annotations

import inspect

from kjobs.server import app, logs, runner, service


def test_app_factory_and_runner() -> None:
    assert list(inspect.signature(app.create_app).parameters) == [
        "store",
        "clock",
        "logs",
        "exec_source",
        "portforward_source",
        "usage",
        "authenticator",
        "bookmark_interval",
        "metrics",
        "admission",
        "watch_buffer",
        "features",
        "min_request_timeout",
        "resource_version_wait",
        "upkeep_intervals",
        "event_ttl",
    ]
    for name in ("serve", "start_in_loop", "run_forever", "bind"):
        assert callable(getattr(runner, name))


def test_api_service_verbs() -> None:
    for name in (
        "get",
        "list",
        "create",
        "update",
        "patch",
        "delete",
        "evict",
        "bind",
        "create_token",
        "open_log",
        "finalize_pod_deletion",
        "ensure_namespaces",
        "check_namespace",
    ):
        assert callable(getattr(service.ApiService, name)), name
    assert list(inspect.signature(service.ApiService.__init__).parameters) == [
        "self",
        "store",
        "clock",
        "logs",
        "new_uid",
        "admission",
        "features",
        "field_managers",
        "record_events",
        "token_volumes",
    ]


def test_log_seam() -> None:
    assert {
        "container",
        "follow",
        "tail_lines",
        "timestamps",
        "since_seconds",
        "since_time",
        "limit_bytes",
        "previous",
    } == set(inspect.signature(logs.LogOptions).parameters)
    assert callable(logs.waiting_error) and hasattr(logs.LogSource, "open")
