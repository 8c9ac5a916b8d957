"""The client TLS settings that verify nothing (the API server's kubelet client, HTTPS probes): those of
`ssl.create_default_context()` with verification off, made without loading the system's trusted CAs."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest

from kjobs.node.probing import run_http
from kjobs.server import tls
from tests.support import shared_pki


def _default_unverified() -> ssl.SSLContext:
    """The form replaced: the default context, then verification turned off."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _settings(context: ssl.SSLContext) -> dict[str, object]:
    """What a client context decides a handshake with (its trust store and `verify_flags` aside: both are read
    only to verify a peer, which these contexts never do)."""
    return {
        "protocol": context.protocol,
        "options": context.options,
        "verify_mode": context.verify_mode,
        "check_hostname": context.check_hostname,
        "hostname_checks_common_name": context.hostname_checks_common_name,
        "minimum_version": context.minimum_version,
        "maximum_version": context.maximum_version,
        "ciphers": context.get_ciphers(),
        "post_handshake_auth": context.post_handshake_auth,
        "keylog_filename": context.keylog_filename,
        "security_level": context.security_level,
        "sni_callback": context.sni_callback,
    }


@pytest.mark.parametrize("keylog", [None, "keys.log"])
def test_the_unverified_context_is_the_default_one_without_the_system_cas(
    keylog: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if keylog is None:
        monkeypatch.delenv("SSLKEYLOGFILE", raising=False)
    else:
        monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / keylog))
    made = tls.unverified_client_context()
    assert _settings(made) == _settings(_default_unverified())
    assert made.cert_store_stats()["x509_ca"] == 0  # the system bundle is not loaded


def test_the_kubelet_client_context_presents_the_kubelet_client_certificate_and_verifies_nothing() -> None:
    pki = shared_pki()
    made = tls.kubelet_client_context(pki)
    old = _default_unverified()
    old.load_cert_chain(str(pki.kubelet_client_cert), str(pki.kubelet_client_key))
    assert _settings(made) == _settings(old)
    assert made.get_ca_certs() == []


def test_an_https_probe_reaches_a_server_whose_certificate_no_ca_signed(tmp_path: Path) -> None:
    """The kubelet's prober does not verify (pkg/probe/http/http.go, `InsecureSkipVerify`): a self-signed
    serving certificate for another name answers the probe."""
    cert, key = tls.self_signed(tmp_path, "serving", "/CN=elsewhere.example", [])
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(str(cert), str(key))

    async def main() -> tuple[str, str]:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=serving)
        port = server.sockets[0].getsockname()[1]
        try:
            action = {"scheme": "HTTPS", "port": port, "path": "/healthz"}
            return await run_http(action, {"name": "main"}, "127.0.0.1", 5.0)
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(main()) == ("success", "")
