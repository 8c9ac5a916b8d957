"""Writing the kubeconfig that points kubectl and the Python client at a kjobs server (context `kjobs`).

An existing file is merged, not clobbered: the `kjobs` cluster, user and context entries are replaced and
`current-context` is set, everything else in the file is kept. The file is written atomically, mode 0600
(it may carry a bearer token).

A plain-http server gets `insecure-skip-tls-verify: true`: there is no TLS to verify, kubectl and the Python
client ignore the flag for http, and the JavaScript client (`@kubernetes/client-node`, `KubeConfig.createAgent`
in its src/config.ts) refuses an http server without it ("HTTP protocol is not allowed when skipTLSVerify is
not set or false").
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

CONTEXT = "kjobs"


def _upsert(entries: list[dict[str, Any]], item: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("name") != item["name"]] + [item]


def build(
    server: str, *, ca_pem: bytes | None = None, token: str | None = None, existing: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The kubeconfig document with the `kjobs` context (merged into `existing` if given)."""
    doc: dict[str, Any] = dict(existing or {})
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Config")
    doc.setdefault("preferences", {})
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    elif server.startswith("http://"):
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {"token": token} if token else {}
    doc["clusters"] = _upsert(list(doc.get("clusters") or []), {"name": CONTEXT, "cluster": cluster})
    doc["users"] = _upsert(list(doc.get("users") or []), {"name": CONTEXT, "user": user})
    doc["contexts"] = _upsert(
        list(doc.get("contexts") or []), {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT}}
    )
    doc["current-context"] = CONTEXT
    return doc


def write(path: Path, server: str, *, ca_pem: bytes | None = None, token: str | None = None) -> None:
    """Write (or update) the kubeconfig at `path`."""
    existing: dict[str, Any] | None = None
    if path.exists():
        try:
            loaded = yaml.safe_load(path.read_text())
            existing = loaded if isinstance(loaded, dict) else None
        except yaml.YAMLError:
            existing = None
    doc = build(server, ca_pem=ca_pem, token=token, existing=existing)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kubeconfig-")
    try:
        with os.fdopen(fd, "w") as out:
            yaml.safe_dump(doc, out, sort_keys=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
