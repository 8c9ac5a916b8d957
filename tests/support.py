"""Test support: an in-process cluster API on virtual time, a way to let controllers settle, an API service to
run a registry table against (`run_on_service`), and the TLS credentials tests use to reach a served API
(`shared_pki`, `client_tls`)."""

from __future__ import annotations

import asyncio
import atexit
import functools
import random
import shutil
import socket
import ssl
import tempfile
from collections.abc import Awaitable, Callable
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


def run_on_service(body: Callable[[ApiService], Awaitable[Any]]) -> Any:
    """Run `body` against a fresh API service on a memory store, its namespaces made, at a fixed time (the
    registry ports' `ApiService`, as upstream's strategy tests run against a fresh registry)."""

    async def main() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
        await service.ensure_namespaces()
        return await body(service)

    return asyncio.run(main())


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


QUIET_PORTS_FROM = 20000
"""The lowest port `free_port` picks; it picks below the kernel's ephemeral range."""


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default range is 32768-60999


def free_port() -> int:
    """A loopback port free at the time of asking, that stays free until the test binds it seconds or minutes later.

    Not the kernel's choice (a bind to port 0): that comes from the ephemeral range, which the kernel also hands
    to every outgoing connection and every other port-0 bind of the run (four xdist workers' clients, servers and
    kubectl), so a port chosen there can be held by someone else when `kjobs up --port` or a pod's server binds
    it (EADDRINUSE). Below that range only an explicit bind takes a port; the pick is random (from the system's
    generator, so xdist workers never share a sequence) among ports that bind now.
    """
    top = _ephemeral_low()
    pick = random.SystemRandom()
    for _ in range(100 if top - QUIET_PORTS_FROM >= 1000 else 0):
        port = pick.randrange(QUIET_PORTS_FROM, top)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:  # no quiet range on this machine: the kernel's choice
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
