"""The root CA publisher on virtual time: `kube-root-ca.crt` in every namespace, recreated and put right."""

from __future__ import annotations

import asyncio

from kjobs.api.errors import ApiError
from kjobs.client.local import LocalClient
from kjobs.client.resources import CONFIG_MAPS, NAMESPACES
from kjobs.clock import FakeClock
from kjobs.controllers.rootcacertpublisher import DESCRIPTION, RootCACertPublisher
from tests.support import local_api, settle

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


async def _published(client: LocalClient, namespace: str) -> dict[str, object] | None:
    try:
        return await client.get(CONFIG_MAPS, namespace, "kube-root-ca.crt")
    except ApiError:
        return None


def test_every_namespace_gets_the_ca_and_keeps_it() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        publisher = RootCACertPublisher(client, clock, CA)
        await publisher.start()
        every = ("default", "kube-system", "kube-public", "kube-node-lease")
        await settle(clock, lambda: all(publisher.config_maps.get(ns, "kube-root-ca.crt") for ns in every))
        for namespace in every:
            assert await _published(client, namespace) is not None
        cm = await client.get(CONFIG_MAPS, "default", "kube-root-ca.crt")
        assert cm["data"] == {"ca.crt": CA}
        assert cm["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION}

        # a new namespace gets one
        await client.create(NAMESPACES, None, {"metadata": {"name": "team-a"}})
        await settle(clock, lambda: publisher.config_maps.get("team-a", "kube-root-ca.crt") is not None)

        # deleted: recreated
        await client.delete(CONFIG_MAPS, "team-a", "kube-root-ca.crt")
        await settle(clock, lambda: publisher.config_maps.get("team-a", "kube-root-ca.crt") is None)
        await settle(clock, lambda: publisher.config_maps.get("team-a", "kube-root-ca.crt") is not None)

        # changed: put right, keeping what else it carries
        cm = await client.get(CONFIG_MAPS, "team-a", "kube-root-ca.crt")
        cm["data"] = {"ca.crt": "tampered"}
        cm["metadata"]["labels"] = {"mine": "yes"}
        await client.update(CONFIG_MAPS, "team-a", cm)

        def fixed() -> bool:
            current = publisher.config_maps.get("team-a", "kube-root-ca.crt")
            return current is not None and (current.get("data") or {}).get("ca.crt") == CA

        await settle(clock, fixed)
        current = await client.get(CONFIG_MAPS, "team-a", "kube-root-ca.crt")
        assert current["metadata"]["labels"] == {"mine": "yes"}
        assert current["metadata"]["annotations"]["kubernetes.io/description"] == DESCRIPTION
        await publisher.stop()

    asyncio.run(scenario())
