"""Test support: an in-process cluster API on virtual time, a way to let controllers settle, and the TLS
credentials tests use to reach a served API (`shared_pki`, `client_tls`)."""

from __future__ import annotations

import asyncio
import atexit
import functools
import shutil
import socket
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kjobs.client.local import LocalClient
from kjobs.clock import FakeClock
from kjobs.server import tls
from kjobs.server.admission import PRIORITY, AdmissionSettings
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.server.tls import Pki
from kjobs.store import MemoryStore

INTEGRATION_ADMISSION = AdmissionSettings(disabled_plugins=frozenset({PRIORITY}))
"""Admission as Kubernetes' scheduler integration tests run kube-apiserver: without the Priority plugin
(test/integration/util/util.go `InitTestAPIServer` disables it), so their pods carry a bare `spec.priority`."""


async def local_api(clock: FakeClock, *, admission: AdmissionSettings | None = None) -> LocalClient:
    """A LocalClient over a fresh in-memory API service with the standard namespaces."""
    service = ApiService(Storage(MemoryStore()), clock=clock.now, admission=admission)
    await service.ensure_namespaces()
    return LocalClient(service)


async def settle(clock: FakeClock, until: Callable[[], bool], *, max_virtual: float = 3600.0) -> None:
    """Run the event loop until `until()` holds, advancing virtual time only when nothing else can happen.

    Raises AssertionError when virtual time runs past `max_virtual` seconds without the condition holding.
    """
    start = clock.now()
    while True:
        for _ in range(200):
            if until():
                return
            await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is None or deadline - start > max_virtual:
            raise AssertionError(f"condition not reached within {max_virtual}s of virtual time")
        clock.set(deadline)


@functools.cache
def shared_pki() -> Pki:
    """One PKI (CA, serving and admin certificates, token) for the whole test session, made like `kjobs up`'s."""
    directory = Path(tempfile.mkdtemp(prefix="kjobs-test-pki-"))
    atexit.register(shutil.rmtree, directory, True)
    return tls.ensure(directory / "pki", "127.0.0.1")


def client_tls(pki: Pki | None = None) -> ssl.SSLContext:
    """A client TLS context that trusts the test CA and presents the admin certificate (for httpx/aiohttp)."""
    pki = pki or shared_pki()
    context = ssl.create_default_context(cafile=str(pki.ca_file))
    context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))
    return context


def python_client_config(url: str, pki: Pki | None = None) -> Any:
    """The official Python client's `Configuration` for `url`, trusting the test CA with the admin certificate."""
    from kubernetes import client

    pki = pki or shared_pki()
    config = client.Configuration(host=url)
    config.ssl_ca_cert = str(pki.ca_file)
    config.cert_file = str(pki.admin_cert)
    config.key_file = str(pki.admin_key)
    return config


def free_port() -> int:
    """A loopback port free at the time of asking."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
