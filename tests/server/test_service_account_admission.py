"""The ServiceAccount admission plugin's checks (plugin/pkg/admission/serviceaccount/admission_test.go, the rows
that apply without tokens), through the API on virtual time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import NAMESPACES, PODS, SERVICE_ACCOUNTS
from kjobs.clock import FakeClock
from kjobs.server.admission import AdmissionSettings
from kjobs.virtualtime import run
from tests.support import local_api

NS = "myns"
MIRROR = {"kubernetes.io/config.mirror": "true"}


def _pod(name: str = "myname", **spec: Any) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def _mirror(**spec: Any) -> Obj:
    pod = _pod(nodeName="node-1", **spec)
    pod["metadata"]["annotations"] = dict(MIRROR)
    return pod


def _scenario(body: Callable[[LocalClient, FakeClock], Awaitable[None]], *, lookup: bool = True) -> None:
    async def main() -> None:
        client = await local_api(clock, admission=AdmissionSettings(service_account_lookup=lookup))
        await client.create(NAMESPACES, None, {"metadata": {"name": NS}})
        await body(client, clock)

    clock = FakeClock()
    run(main(), clock)


async def _refused(client: LocalClient, pod: Obj) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await client.create(PODS, NS, pod)
    return caught.value


def test_denies_invalid_service_account() -> None:
    """TestDeniesInvalidServiceAccount: no account anywhere; `default` is looked up ten times, 100-200 ms apart."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        start = clock.now()
        error = await _refused(client, _pod())
        assert (error.code, error.reason) == (403, "Forbidden")
        assert error.message == (
            'pods "myname" is forbidden: error looking up service account myns/default: '
            'serviceaccount "default" not found'
        )
        assert 0.9 <= clock.now() - start <= 1.8  # nine waits between the ten lookups

    _scenario(body)


def test_missing_named_account_is_refused_at_once_naming_generate_name() -> None:
    """TestMissingServiceAccount: a named account is looked up once; admission runs before a name is generated."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        pod = _pod(serviceAccountName="builder")
        del pod["metadata"]["name"]
        pod["metadata"]["generateName"] = "work-"
        start = clock.now()
        error = await _refused(client, pod)
        assert error.message == (
            'pods "work-" is forbidden: error looking up service account myns/builder: '
            'serviceaccount "builder" not found'
        )
        assert clock.now() == start
        # the deprecated field names it too
        error = await _refused(client, _pod(serviceAccount="builder"))
        assert 'serviceaccount "builder" not found' in error.message

    _scenario(body)


def test_fetches_uncached_service_account() -> None:
    """TestFetchesUncachedServiceAccount: an account that exists is found, and the pod runs as it."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        await client.create(SERVICE_ACCOUNTS, NS, {"metadata": {"name": "default"}})
        await client.create(SERVICE_ACCOUNTS, NS, {"metadata": {"name": "builder"}})
        created = await client.create(PODS, NS, _pod())
        assert created["spec"]["serviceAccountName"] == "default"
        named = await client.create(PODS, NS, _pod("other", serviceAccountName="builder"))
        assert (named["spec"]["serviceAccountName"], named["spec"]["serviceAccount"]) == ("builder", "builder")

    _scenario(body)


def test_default_made_while_admission_waits_is_found() -> None:
    """`getServiceAccount` retries `default` because the controller is making it: made meanwhile, it is found."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        import asyncio

        async def controller() -> None:
            await asyncio.sleep(0.5)
            await client.create(SERVICE_ACCOUNTS, NS, {"metadata": {"name": "default"}})

        making = asyncio.get_running_loop().create_task(controller())
        created = await client.create(PODS, NS, _pod())
        await making
        assert created["spec"]["serviceAccountName"] == "default"

    _scenario(body)


def test_ignores_non_create() -> None:
    """TestIgnoresNonCreate: an update of a pod whose account has gone since is not checked."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        await client.create(SERVICE_ACCOUNTS, NS, {"metadata": {"name": "default"}})
        await client.create(PODS, NS, _pod())
        await client.delete(SERVICE_ACCOUNTS, NS, "default")
        patched = await client.patch(PODS, NS, "myname", {"metadata": {"labels": {"a": "b"}}})
        assert patched["metadata"]["labels"] == {"a": "b"}

    _scenario(body)


def test_ignores_mirror_pod() -> None:
    """TestIgnoresMirrorPod: a mirror pod names no account (none is given to it) and needs none."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        created = await client.create(PODS, NS, _mirror(volumes=[{"name": "v", "emptyDir": {}}]))
        assert "serviceAccountName" not in created["spec"]

    _scenario(body)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"serviceAccountName": "default"}, "a mirror pod may not reference service accounts"),
        ({"volumes": [{"name": "v", "secret": {"secretName": "s"}}]}, "a mirror pod may not reference secrets"),
        (
            {"volumes": [{"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]},
            "a mirror pod may not use ServiceAccountToken volume projections",
        ),
        ({"imagePullSecrets": [{"name": "pull"}]}, "a mirror pod may not reference secrets"),
    ],
    ids=["service-account", "secret-volume", "token-projection", "pull-secret"],
)
def test_rejects_mirror_pod(spec: Obj, why: str) -> None:
    """TestRejectsMirrorPodWithServiceAccount, ...WithSecretVolumes, ...WithServiceAccountTokenVolumeProjections."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        await client.create(SERVICE_ACCOUNTS, NS, {"metadata": {"name": "default"}})
        error = await _refused(client, _mirror(**spec))
        assert (error.code, error.message) == (403, f'pods "myname" is forbidden: {why}')

    _scenario(body)


def test_a_missing_namespace_is_not_found_first() -> None:
    """NamespaceLifecycle runs before ServiceAccount: a pod in a namespace that does not exist is 404."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        with pytest.raises(ApiError) as caught:
            await client.create(PODS, "nowhere", _pod())
        assert (caught.value.code, caught.value.message) == (404, 'namespaces "nowhere" not found')

    _scenario(body)


def test_a_bare_api_service_does_not_look_accounts_up() -> None:
    """Without `service_account_lookup` (a bare `ApiService`, no controller-manager) pods are admitted as before."""

    async def body(client: LocalClient, clock: FakeClock) -> None:
        created = await client.create(PODS, NS, _pod(serviceAccountName="builder"))
        assert created["spec"]["serviceAccountName"] == "builder"

    _scenario(body, lookup=False)
