"""`/healthz`, `/livez`, `/readyz` (kjobs.server.health): kube-apiserver's texts for passing, excluded and failing
checks (staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go)."""

from __future__ import annotations

from kjobs.server import health, routing


def _passing() -> str | None:
    return None


def _failing() -> str | None:
    return "database is locked"


def test_a_failing_check_fails_the_endpoint_verbose_or_not_and_withholds_why() -> None:
    checks = {"etcd": _failing, "shutdown": _passing}
    for query in (b"", b"verbose"):
        code, body = health.answer("readyz", "", query, checks) or (0, b"")
        assert code == 500
        lines = body.decode().splitlines()
        assert "[-]etcd failed: reason withheld" in lines and "[+]shutdown ok" in lines
        assert lines[-1] == "readyz check failed"
    assert health.answer("readyz", "etcd", b"", checks) == (500, b"internal server error: database is locked\n")
    assert health.answer("livez", "", b"exclude=etcd", checks) == (200, b"ok")


def test_a_stopping_server_is_live_but_not_ready() -> None:
    checks = {"shutdown": lambda: "process is shutting down"}
    assert health.answer("livez", "", b"", checks) == (200, b"ok")
    assert (health.answer("readyz", "", b"", checks) or (0, b""))[0] == 500
    assert health.answer("livez", "shutdown", b"", checks) is None  # no such check of /livez: 404


def test_routes() -> None:
    assert routing.parse("/readyz") == routing.Route("health", name="readyz")
    assert routing.parse("/livez/ping") == routing.Route("health", name="livez", subresource="ping")
    assert routing.parse("/readyz/a/b").kind == "notfound"
