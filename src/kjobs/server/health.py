"""`/healthz`, `/livez` and `/readyz` as kube-apiserver answers them (pure; no I/O).

Each endpoint runs named checks (staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go `handleRootHealth`):
`ok` when all pass; with `?verbose`, one `[+]NAME ok` line per check and `<endpoint> check passed`; `?exclude=NAME`
skips a check (`[+]NAME excluded: ok`, and a `warn:` line for a name no check has); a failing check makes the
answer 500 with `[-]NAME failed: reason withheld` and `<endpoint> check failed`, verbose or not. `/readyz/NAME`
runs one check (`ok`, or 500 `internal server error: ...`); a name no check has is the server's 404.

kjobs has the checks whose meaning it shares with kube-apiserver: `ping`, `log`, `etcd` (its store answers a
read: the store plays etcd's part), and for readiness also `etcd-readiness` and `shutdown` (failing once the
server has begun to stop). kube-apiserver's `informer-sync` and `poststarthook/...` checks watch machinery kjobs
does not have, so they are not listed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from urllib.parse import parse_qsl

Check = Callable[[], str | None]
"""A check: None when it passes, else why it fails."""

ENDPOINTS: dict[str, tuple[str, ...]] = {
    "healthz": ("ping", "log", "etcd"),
    "livez": ("ping", "log", "etcd"),
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "shutdown"),
}
"""The checks of each endpoint, in kube-apiserver's order."""

TEXT = b"text/plain; charset=utf-8"


def answer(endpoint: str, check: str, raw_query: bytes, checks: Mapping[str, Check]) -> tuple[int, bytes] | None:
    """(HTTP status, text body) for `/<endpoint>[/<check>]`, or None when no such check is served (404)."""
    names = ENDPOINTS[endpoint]
    if check:
        if check not in names:
            return None
        why = _run(checks, check)
        return (200, b"ok") if why is None else (500, f"internal server error: {why}\n".encode())
    pairs = parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True)
    excluded = [value for key, value in pairs if key == "exclude"]
    verbose = any(key == "verbose" for key, _ in pairs)
    return _root(endpoint, names, checks, excluded, verbose)


def _run(checks: Mapping[str, Check], name: str) -> str | None:
    found = checks.get(name)
    return None if found is None else found()


def _root(
    endpoint: str, names: Sequence[str], checks: Mapping[str, Check], excluded: list[str], verbose: bool
) -> tuple[int, bytes]:
    lines: list[str] = []
    failed = False
    unmatched = list(dict.fromkeys(excluded))
    for name in names:
        if name in unmatched:
            unmatched.remove(name)
            lines.append(f"[+]{name} excluded: ok")
        elif _run(checks, name) is None:
            lines.append(f"[+]{name} ok")
        else:
            lines.append(f"[-]{name} failed: reason withheld")
            failed = True
    if unmatched:
        quoted = ",".join(f'"{name}"' for name in sorted(unmatched))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    if failed:  # always verbose on failure; http.Error adds the newline
        return 500, ("\n".join(lines) + f"\n{endpoint} check failed\n").encode()
    if not verbose:
        return 200, b"ok"
    return 200, ("\n".join(lines) + f"\n{endpoint} check passed\n").encode()
