"""Reading a kubeconfig the way kubectl does (current context, cluster, user) into connection settings."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(Exception):
    """The kubeconfig is missing, unreadable or incomplete; the message says what to fix."""


@dataclass(frozen=True)
class Connection:
    """Where the API server is and how to authenticate."""

    server: str
    ssl_context: ssl.SSLContext | None = None
    token: str | None = None
    namespace: str = "default"
    ca_pem: bytes | None = None
    """The cluster's CA (`certificate-authority[-data]`, PEM), None when the kubeconfig names none: what a node
    agent verifies the API server's client certificate with on its log endpoint (`kjobs.node.logserver`)."""
    impersonate: tuple[tuple[str, str], ...] = ()
    """`Impersonate-*` headers from the user's `as`, `as-uid`, `as-groups` and `as-user-extra`, which client-go
    sends on every request (staging/src/k8s.io/client-go/transport/round_trippers.go, `NewImpersonatingRoundTripper`):
    the credentials then act as that user, with that user's permissions."""


def default_path() -> Path:
    """$KUBECONFIG (first entry), else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return Path(env.split(os.pathsep)[0])
    return Path.home() / ".kube" / "config"


def load(path: str | Path | None = None, *, context: str | None = None) -> Connection:
    """Connection settings for `context` (default: current-context) of the kubeconfig at `path`."""
    file = Path(path) if path else default_path()
    try:
        config = yaml.safe_load(file.read_text()) or {}
    except FileNotFoundError:
        raise KubeconfigError(f"kubeconfig {file} does not exist") from None
    except (OSError, yaml.YAMLError) as exc:
        raise KubeconfigError(f"cannot read kubeconfig {file}: {exc}") from None
    name = context or config.get("current-context")
    ctx = _named(config, "contexts", name, "context")
    cluster = _named(config, "clusters", ctx.get("cluster"), "cluster")
    user = _named(config, "users", ctx.get("user"), "user") if ctx.get("user") else {}
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeconfigError(f"kubeconfig {file}: cluster {ctx.get('cluster')!r} has no server")
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    ssl_context, ca_pem = _ssl_context(cluster, user, file.parent) if server.startswith("https") else (None, None)
    return Connection(
        server=server.rstrip("/"),
        ssl_context=ssl_context,
        token=token,
        namespace=str(ctx.get("namespace") or "default"),
        ca_pem=ca_pem,
        impersonate=_impersonation(user),
    )


def _impersonation(user: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The `Impersonate-*` header pairs of a kubeconfig user (`as`, `as-uid`, `as-groups`, `as-user-extra`)."""
    headers: list[tuple[str, str]] = []
    if user.get("as"):
        headers.append(("Impersonate-User", str(user["as"])))
    if user.get("as-uid"):
        headers.append(("Impersonate-Uid", str(user["as-uid"])))
    headers.extend(("Impersonate-Group", str(group)) for group in user.get("as-groups") or ())
    for key, values in (user.get("as-user-extra") or {}).items():
        headers.extend((f"Impersonate-Extra-{key}", str(value)) for value in values or ())
    return tuple(headers)


def _named(config: dict[str, Any], section: str, name: Any, key: str) -> dict[str, Any]:
    for entry in config.get(section) or ():
        if entry.get("name") == name:
            value: dict[str, Any] = entry.get(key) or {}
            return value
    raise KubeconfigError(f"kubeconfig has no {key} named {name!r}")


def _material(spec: dict[str, Any], key: str, base: Path, scratch: Path) -> str | None:
    """Path to a PEM file given inline (`key-data`, base64: written into `scratch`) or by path (`key`)."""
    data = spec.get(f"{key}-data")
    if data:
        target = scratch / key
        target.touch(0o600)
        target.write_bytes(base64.b64decode(data))
        return str(target)
    value = spec.get(key)
    if value:
        candidate = Path(value)
        return str(candidate if candidate.is_absolute() else base / candidate)
    return None


def _ssl_context(cluster: dict[str, Any], user: dict[str, Any], base: Path) -> tuple[ssl.SSLContext, bytes | None]:
    """The TLS settings of a cluster and user entry, and the cluster's CA (PEM); inline certificates and keys are
    read from a private scratch directory removed once they are loaded, so no key is left behind in the temporary
    directory."""
    with tempfile.TemporaryDirectory(prefix="kjobs-kubeconfig-") as tmp:
        scratch = Path(tmp)
        cafile = _material(cluster, "certificate-authority", base, scratch)
        try:
            ca_pem = Path(cafile).read_bytes() if cafile else None
        except OSError as exc:
            raise KubeconfigError(f"cannot read certificate-authority {cafile}: {exc}") from None
        ctx = ssl.create_default_context(cafile=cafile)
        if cluster.get("insecure-skip-tls-verify"):
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        cert = _material(user, "client-certificate", base, scratch)
        if cert:
            ctx.load_cert_chain(cert, _material(user, "client-key", base, scratch))
        return ctx, ca_pem
