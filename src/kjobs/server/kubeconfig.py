"""Writing the kubeconfig that points kubectl and the Python client at a kjobs server (context `kjobs`).

An existing file is merged, not clobbered: the `kjobs` cluster, user and context entries are replaced and
`current-context` is set, everything else in the file is kept. The file is written atomically, mode 0600
(it carries the admin's private key).

A TLS server's entry carries its PKI (`kjobs.server.tls`) inline, as kind writes it: the CA as
`certificate-authority-data`, the admin certificate and key as `client-certificate-data`/`client-key-data`.
With `files=True` the entries name the PKI's files instead (`certificate-authority`, `client-certificate`,
`client-key`): a client that writes inline data to temporary files for every connection it makes (kr8s keeps
three per `kr8s.api()`) then reads the files in place. The bearer token stays in the PKI directory
(`pki/token`) for clients that cannot present a certificate.
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
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from kjobs.server.tls import Pki

CONTEXT = "kjobs"


def _upsert(entries: list[dict[str, Any]], item: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("name") != item["name"]] + [item]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def build(
    server: str, *, pki: Pki | None = None, existing: dict[str, Any] | None = None, files: bool = False
) -> dict[str, Any]:
    """The kubeconfig document with the `kjobs` context (merged into `existing` if given); with `files`, naming
    the PKI's files rather than carrying their data."""
    doc: dict[str, Any] = dict(existing or {})
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Config")
    doc.setdefault("preferences", {})
    cluster: dict[str, Any] = {"server": server}
    user: dict[str, Any] = {}
    if pki is not None and files:
        cluster["certificate-authority"] = str(pki.ca_file.absolute())
        user["client-certificate"] = str(pki.admin_cert.absolute())
        user["client-key"] = str(pki.admin_key.absolute())
    elif pki is not None:
        cluster["certificate-authority-data"] = _b64(pki.ca_pem)
        user["client-certificate-data"] = _b64(pki.admin_cert.read_bytes())
        user["client-key-data"] = _b64(pki.admin_key.read_bytes())
    elif server.startswith("http://"):
        cluster["insecure-skip-tls-verify"] = True
    doc["clusters"] = _upsert(list(doc.get("clusters") or []), {"name": CONTEXT, "cluster": cluster})
    doc["users"] = _upsert(list(doc.get("users") or []), {"name": CONTEXT, "user": user})
    doc["contexts"] = _upsert(
        list(doc.get("contexts") or []), {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT}}
    )
    doc["current-context"] = CONTEXT
    return doc


def write(path: Path, server: str, *, pki: Pki | None = None, files: bool = False) -> None:
    """Write (or update) the kubeconfig at `path` (`files`: see `build`)."""
    existing: dict[str, Any] | None = None
    if path.exists():
        try:
            loaded = yaml.safe_load(path.read_text())
            existing = loaded if isinstance(loaded, dict) else None
        except yaml.YAMLError:
            existing = None
    doc = build(server, pki=pki, existing=existing, files=files)
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
