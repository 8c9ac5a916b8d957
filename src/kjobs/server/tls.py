"""Self-signed serving certificate and bearer token for a server listening beyond loopback.

kubectl only sends credentials over TLS, so a non-loopback listener gets both: a certificate generated once
per data directory with the system `openssl` (EC P-256, SANs for the listen address, `localhost` and
127.0.0.1) and a random token. Both are reused when the server is started again on the same directory.
"""

from __future__ import annotations

import ipaddress
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Credentials:
    """Where the certificate and key live, the certificate itself (the kubeconfig's CA), and the token."""

    certfile: Path
    keyfile: Path
    cert_pem: bytes
    token: str


def _san(host: str) -> str:
    names = {"DNS:localhost", "IP:127.0.0.1"}
    try:
        ipaddress.ip_address(host)
        names.add(f"IP:{host}")
    except ValueError:
        names.add(f"DNS:{host}")
    return ",".join(sorted(names))


def ensure(directory: Path, host: str) -> Credentials:
    """Load or create the certificate, key and token in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    certfile, keyfile, tokenfile = directory / "apiserver.crt", directory / "apiserver.key", directory / "token"
    if not certfile.exists() or not keyfile.exists():
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                str(keyfile),
                "-out",
                str(certfile),
                "-days",
                "3650",
                "-subj",
                "/CN=kjobs-apiserver",
                "-addext",
                f"subjectAltName={_san(host)}",
            ],
            check=True,
            capture_output=True,
        )
        keyfile.chmod(0o600)
    if not tokenfile.exists():
        tokenfile.write_text(secrets.token_urlsafe(32))
        tokenfile.chmod(0o600)
    return Credentials(certfile, keyfile, certfile.read_bytes(), tokenfile.read_text().strip())
