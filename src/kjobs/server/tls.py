"""The cluster's PKI, as kind and kubeadm lay it out: a CA, a serving certificate and two client certificates.

`ensure()` creates them once per directory (`<data-dir>/pki`, mode 0700) with the system `openssl` (EC P-256,
ten years) and reuses them on every later start, so a kubeconfig written once keeps working:

- `ca.crt`/`ca.key`: the cluster CA; the kubeconfig's `certificate-authority-data`, and what client
  certificates are verified against (kube-apiserver's `--client-ca-file`).
- `apiserver.crt`/`.key`: the serving certificate (serverAuth), SANs for the listen address, `localhost`,
  127.0.0.1 and ::1 (kubeadm's `GetAPIServerAltNames` in cmd/kubeadm/app/util/pkiutil/pki_helpers.go); it is
  reissued by the same CA when the listen address is not among them.
- `admin.crt`/`.key`: the admin's client certificate (clientAuth), `CN=kjobs-admin, O=system:masters`, the
  subject kind gives its `kubernetes-admin`.
- `apiserver-kubelet-client.crt`/`.key`: the certificate the API server presents to node agents' log endpoints
  (`--kubelet-client-certificate`), `CN=kube-apiserver-kubelet-client, O=system:masters` as kubeadm issues it
  (`KubeadmCertKubeletClient` in cmd/kubeadm/app/phases/certs/certlist.go).
- `token`: a random bearer token, for clients that cannot present a certificate.

Keys and the token are mode 0600. Half a CA (one of `ca.crt`/`ca.key` lost) is refused, naming the missing file,
rather than replaced: a new CA would void every kubeconfig written before (docs/upgrade41.md).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import ssl
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ADMIN_SUBJECT = "/O=system:masters/CN=kjobs-admin"
KUBELET_CLIENT_SUBJECT = "/O=system:masters/CN=kube-apiserver-kubelet-client"
_CLIENT = ["extendedKeyUsage=clientAuth", "basicConstraints=critical,CA:FALSE"]
DAYS = "3650"
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class Pki:
    """Where the PKI's files are, and the PEM texts and token a kubeconfig carries."""

    directory: Path
    token: str

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def server_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def server_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def admin_cert(self) -> Path:
        return self.directory / "admin.crt"

    @property
    def admin_key(self) -> Path:
        return self.directory / "admin.key"

    @property
    def kubelet_client_cert(self) -> Path:
        return self.directory / "apiserver-kubelet-client.crt"

    @property
    def kubelet_client_key(self) -> Path:
        return self.directory / "apiserver-kubelet-client.key"

    @property
    def ca_pem(self) -> bytes:
        return self.ca_file.read_bytes()


def alt_names(host: str) -> str:
    """The serving certificate's subjectAltName: the listen address, localhost, 127.0.0.1 and ::1."""
    names = {"DNS:localhost", "IP:127.0.0.1", "IP:::1"}
    try:
        names.add(f"IP:{ipaddress.ip_address(host)}")
    except ValueError:
        names.add(f"DNS:{host}")
    return ",".join(sorted(names))


def _openssl(*args: str) -> None:
    try:
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        raise OSError(f"openssl {args[0]} failed: {exc.stderr.decode(errors='replace').strip()}") from None


def _issue(ca: Pki, name: str, subject: str, extensions: list[str]) -> None:
    """A key and a certificate `name.crt` signed by the CA (`openssl req -x509 -CA`, OpenSSL 3)."""
    signer = ["-CA", str(ca.ca_file), "-CAkey", str(ca.directory / "ca.key")]
    _request(ca.directory, name, subject, extensions, signer)


def self_signed(directory: Path, name: str, subject: str, extensions: list[str]) -> tuple[Path, Path]:
    """A self-signed certificate `name.crt` and its key `name.key` in `directory`: what a kubelet without
    `--tls-cert-file` serves with (cmd/kubelet/app/server.go, `InitializeTLS`). Returns (certificate, key)."""
    _request(directory, name, subject, extensions, [])
    return directory / f"{name}.crt", directory / f"{name}.key"


def _request(directory: Path, name: str, subject: str, extensions: list[str], signer: list[str]) -> None:
    key, cert = directory / f"{name}.key", directory / f"{name}.crt"
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        new_key, new_cert = Path(tmp) / "key", Path(tmp) / "crt"
        ext = [arg for item in extensions for arg in ("-addext", item)]
        _openssl(
            "req", "-x509", *_KEY, "-keyout", str(new_key), "-out", str(new_cert), "-days", DAYS, "-subj", subject,
            *signer, *ext,
        )  # fmt: skip
        new_key.chmod(0o600)
        new_key.replace(key)
        new_cert.replace(cert)


def unverified_client_context() -> ssl.SSLContext:
    """A client's TLS settings that verify neither the server's certificate nor its name (Go's
    `InsecureSkipVerify`): `ssl.create_default_context()`'s, without the system's trusted CAs it loads.

    A context that verifies nothing never reads its trust store, and loading the system bundle (144 certificates
    here) cost about 40 ms of CPU each time, once per `kjobs up` start and once per HTTPS probe. Without a store
    a client certificate is sent alone, as it was: the kjobs CA was never in the system's store to chain it to.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    keylog = os.environ.get("SSLKEYLOGFILE")  # as `create_default_context` honours it
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog
    return context


def kubelet_client_context(pki: Pki) -> ssl.SSLContext:
    """The TLS settings the API server reads node agents' log endpoints with: it presents the kubelet client
    certificate and, as kube-apiserver does while `--kubelet-certificate-authority` is unset, does not verify the
    agent's (self-signed) serving certificate (`transportConfig` in pkg/kubelet/client/kubelet_client.go)."""
    context = unverified_client_context()
    context.load_cert_chain(str(pki.kubelet_client_cert), str(pki.kubelet_client_key))
    return context


def _write_private(path: Path, text: str) -> None:
    """Write `path` (mode 0600) whole or not at all: a temporary file renamed over it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def ensure(directory: Path, host: str) -> Pki:
    """Load or create the CA, the serving certificate for `host`, the admin and kubelet client certificates and
    the token."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    tokenfile = directory / "token"
    token = tokenfile.read_text().strip() if tokenfile.exists() else ""
    if not token:  # missing, or left empty by a start killed between creating and writing it (or a full disk)
        token = secrets.token_urlsafe(32)
        _write_private(tokenfile, token)
    pki = Pki(directory, token)
    have = [f.exists() for f in (pki.ca_file, directory / "ca.key")]
    if have[0] != have[1]:  # a new CA over the half left would void every kubeconfig and certificate it signed
        missing, kept = ("ca.key", "ca.crt") if have[0] else ("ca.crt", "ca.key")
        raise OSError(
            f"the cluster CA is incomplete: {directory / missing} is missing but {kept} is there; restore it, or"
            f" remove {directory / kept} to make a new CA (every kubeconfig and certificate it signed is then refused)"
        )
    fresh_ca = not have[0]
    if fresh_ca:
        _openssl(
            "req", "-x509", *_KEY, "-keyout", str(directory / "ca.key"), "-out", str(pki.ca_file), "-days", DAYS,
            "-subj", "/CN=kjobs-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        )  # fmt: skip
        (directory / "ca.key").chmod(0o600)
    sans, recorded = alt_names(host), directory / "apiserver.san"
    if fresh_ca or not pki.server_cert.exists() or not recorded.exists() or recorded.read_text() != sans:
        _issue(
            pki,
            "apiserver",
            "/CN=kjobs-apiserver",
            [f"subjectAltName={sans}", "extendedKeyUsage=serverAuth", "basicConstraints=critical,CA:FALSE"],
        )
        recorded.write_text(sans)
    if fresh_ca or not pki.admin_cert.exists():
        _issue(pki, "admin", ADMIN_SUBJECT, _CLIENT)
    if fresh_ca or not pki.kubelet_client_cert.exists():
        _issue(pki, "apiserver-kubelet-client", KUBELET_CLIENT_SUBJECT, _CLIENT)
    return pki
