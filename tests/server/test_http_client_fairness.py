"""`HttpClient` serves requests waiting for a connection in the order they came: a request made while every
connection is busy waits behind the requests already waiting, not behind every request made after it. aiohttp's
pool alone hands a freed connection to whichever request asks first in that turn of the loop, so a caller whose
tasks each send their next request as soon as the last one ends kept one made by another task waiting as long as
they were busy: the node agent's Lease renewal waited 50 s behind its 64 status-patch workers, and the node went
NotReady in the middle of a run."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import PODS
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import pod_manifest
from tests.support import client_tls, shared_pki


@pytest.mark.e2e
def test_a_request_waits_behind_those_already_waiting_not_behind_busy_callers() -> None:
    connections, workers, bound = 2, 6, 2_000
    with serve(MemoryStore(), pki=shared_pki()) as url:

        async def scenario() -> tuple[int, int]:
            client = HttpClient(Connection(url, ssl_context=client_tls()), max_connections=connections)
            done = 0
            stop = asyncio.Event()
            started = asyncio.Event()

            async def busy() -> None:
                nonlocal done
                while not stop.is_set() and done < bound:  # each sends its next request as soon as one ends
                    await client.get(PODS, "default", "p")
                    done += 1
                    if done == 50:
                        started.set()

            try:
                await client.create(PODS, "default", pod_manifest("p"))
                tasks = [asyncio.create_task(busy()) for _ in range(workers)]
                await started.wait()
                before = done
                await client.patch(PODS, "default", "p", {"metadata": {"labels": {"renewed": "yes"}}})
                after = done
                stop.set()
                await asyncio.gather(*tasks)
                return before, after
            finally:
                await client.close()

        before, after = asyncio.run(scenario())
    # Before it ends, at most every worker's request ahead of it and those ending during its own round trip
    # (without the turns: all 2,000, once the workers stopped).
    assert after - before <= workers + connections, (before, after)
