"""A pod's `kube-api-access-*` volume on the node: filled with a token the agent requests bound to the pod where
pods reach an API server (the kubelet's token manager and projected volume plugin), left out silently where none
is reachable (no mount namespace for a pod that mounts nothing else, no warning), and the `kubernetes` Service's
variables (pkg/kubelet/envvars/envvars.go) pointed at the API server."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.token_requests import MOUNT_PATH, token_volume_source
from kjobs.api.types import Obj
from kjobs.client.resources import CONFIG_MAPS, EVENTS, PODS, SERVICE_ACCOUNTS
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.envvars import CONFIG_MAP, kubernetes_service_env
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.resync import TOKEN_MAX_TTL, requires_refresh, token_jitter, token_refresh_at
from kjobs.node.sim_runtime import Outcome
from kjobs.node.volumes import unmounted
from kjobs.node.volumesetup import TOKEN, container_mounts, mounting_containers, set_up, unsupported
from tests.node.helpers import make_pod
from tests.node.test_agent import MACHINE, NODE
from tests.node.test_agent_remount import Fixed
from tests.node.test_agent_volumes import MountingRuntime
from tests.support import local_api, settle

VOLUME = "kube-api-access-abcde"
ROOT_CA: Obj = {"kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": "PEM"}}


def _pod() -> Obj:
    container = {
        "name": "main",
        "image": "busybox",
        "volumeMounts": [{"name": VOLUME, "readOnly": True, "mountPath": MOUNT_PATH}],
    }
    pod = make_pod([container], volumes=[{"name": VOLUME, "projected": token_volume_source()}])
    pod["metadata"]["namespace"] = "team"
    return pod


def test_without_an_api_the_token_volume_is_neither_mounted_nor_named() -> None:
    pod = _pod()
    assert mounting_containers(pod) is False
    assert mounting_containers(pod, api_access=True) is True
    assert unmounted(pod) == []
    assert unsupported(pod) == []


def test_a_users_token_projection_is_named_only_where_no_token_is_made() -> None:
    container = {"name": "main", "image": "busybox", "volumeMounts": [{"name": "mine", "mountPath": "/t"}]}
    volume = {"name": "mine", "projected": {"sources": [{"serviceAccountToken": {"path": "t", "audience": "vault"}}]}}
    pod = make_pod([container], volumes=[volume])
    assert unsupported(pod) == ['serviceAccountToken projection of volume "mine" at /t (container main)']
    assert unsupported(pod, api_access=True) == []


def test_the_volume_is_skipped_without_a_token_and_written_with_one(tmp_path: Path) -> None:
    pod = _pod()
    sources: dict[tuple[str, str], Obj | None] = {(CONFIG_MAP, "kube-root-ca.crt"): ROOT_CA}
    assert set_up(pod, tmp_path, sources, host_ip="10.0.0.1", pod_ip="10.0.0.2") == []
    assert not (tmp_path / "volumes").exists()
    assert container_mounts(pod, pod["spec"]["containers"][0], tmp_path, {}, sources) == []
    sources[(TOKEN, f"{VOLUME}/token")] = {"token": "abc.def.ghi"}
    assert set_up(pod, tmp_path, sources, host_ip="10.0.0.1", pod_ip="10.0.0.2") == []
    target = tmp_path / "volumes" / "kubernetes.io~projected" / VOLUME
    assert sorted(os.listdir(target))[-3:] == ["ca.crt", "namespace", "token"]
    assert (target / "token").read_text() == "abc.def.ghi"
    assert (target / "namespace").read_text() == "team"
    assert (target / "ca.crt").read_text() == "PEM"
    assert oct(os.stat(target / "token").st_mode & 0o777) == "0o644"
    [bind] = container_mounts(pod, pod["spec"]["containers"][0], tmp_path, {}, sources)
    assert (bind.source, bind.target, bind.read_only) == (str(target), MOUNT_PATH, True)
    sources[(TOKEN, f"{VOLUME}/token")] = {"error": 'serviceaccounts "default" not found'}
    assert set_up(pod, tmp_path, sources, host_ip="10.0.0.1", pod_ip="10.0.0.2") == [
        f'MountVolume.SetUp failed for volume "{VOLUME}" : failed to fetch token: serviceaccounts "default" not found'
    ]


def test_the_kubernetes_service_variables_point_at_the_api_server() -> None:
    assert kubernetes_service_env("127.0.0.1:6443") == {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": "6443",
        "KUBERNETES_SERVICE_PORT_HTTPS": "6443",
        "KUBERNETES_PORT": "tcp://127.0.0.1:6443",
        "KUBERNETES_PORT_6443_TCP": "tcp://127.0.0.1:6443",
        "KUBERNETES_PORT_6443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_6443_TCP_PORT": "6443",
        "KUBERNETES_PORT_6443_TCP_ADDR": "127.0.0.1",
    }
    assert kubernetes_service_env("[::1]:443")["KUBERNETES_PORT"] == "tcp://[::1]:443"
    assert kubernetes_service_env("[::1]:443")["KUBERNETES_SERVICE_HOST"] == "::1"


def test_the_agent_requests_a_token_bound_to_the_pod_and_writes_it() -> None:
    _token_scenario(runs_for=0.0)


def test_a_running_pods_token_is_refreshed_at_the_first_resync_past_80_percent_of_its_lifetime() -> None:
    """The token manager's `requiresRefresh`: past 3607 - 3607 * 20 / 100 = 2886 s after it was issued, less its
    jitter (whole seconds below 10: 9 for a draw of 0.95), so past 2877 s. It is asked at a sync of the pod (its
    projected volume's remount), not by a timer: the resyncs come every 60 × (1 + 0.5 × 0.95) = 88.5 s, and the
    33rd, at 2920.5 s, is the first past 2877 s; the token file changes then."""
    _token_scenario(runs_for=4000.0, draw=0.95, refresh_after=33 * 88.5)


def test_a_refresh_drawing_zero_jitter_comes_at_the_first_resync_past_exactly_80_percent() -> None:
    """Past 2886 s (`now.After`, strict); resyncs every 60 s: the 49th, at 2940 s (2880 s is not past)."""
    _token_scenario(runs_for=4000.0, draw=0.0, refresh_after=49 * 60.0)


def test_a_failed_refresh_keeps_the_old_token_and_is_tried_again_at_the_next_resync() -> None:
    """token_manager.go: a refresh that fails logs "Couldn't update token" and keeps the cached token; the pod's
    next sync (the kubelet's 1-minute resync, jittered by up to half: 60 × 1.25 s for a draw of 0.5) asks again.
    The first ask is at the first resync past 2886 - 5 s: the 39th, at 2925 s."""
    _token_scenario(runs_for=4000.0, fail_refreshes=2, draw=0.5, refresh_after=39 * 75.0, retry_after=75.0)


@pytest.mark.parametrize(
    ("draw", "jitter"), [(0.0, 0), (0.099, 0), (0.1, 1), (0.5, 5), (0.95, 9), (0.9999, 9)], ids=str
)
def test_the_token_jitter_is_whole_seconds_below_ten(draw: float, jitter: int) -> None:
    """token_manager.go: `time.Duration(rand.Float64()*maxJitter.Seconds()) * time.Second` truncates."""
    assert token_jitter(Fixed(draw)) == jitter


@pytest.mark.parametrize(
    ("expiration_seconds", "jitter", "after_issue"),
    [
        (3607, 0, 2886),  # 3607 * 20 / 100 = 721 in integers: 80 % rounded up to the second
        (3607, 9, 2877),
        (600, 3, 477),
        (7 * 24 * 3600, 0, TOKEN_MAX_TTL),  # a week-long token is refreshed after a day (`maxTTL`)
        (7 * 24 * 3600, 9, TOKEN_MAX_TTL - 9),
    ],
)
def test_the_refresh_time_follows_requires_refresh(expiration_seconds: int, jitter: int, after_issue: float) -> None:
    issued = 1_700_000_000.0
    assert token_refresh_at(issued + expiration_seconds, expiration_seconds, jitter) - issued == after_issue


@pytest.mark.parametrize(
    ("after_issue", "jitter", "due"),
    [
        (2885.0, 0, False),
        (2886.0, 0, False),  # `now.After`: strictly past
        (2886.5, 0, True),
        (2877.0, 9, False),
        (2877.5, 9, True),
        (0.0, 0, False),  # issued now
        (-1.0, 0, True),  # issued after now: the clock stepped back (requiresRefresh's third rule)
    ],
)
def test_requires_refresh(after_issue: float, jitter: int, due: bool) -> None:
    issued = 1_700_000_000.0
    assert requires_refresh(issued + after_issue, issued + 3607, 3607, jitter) is due


def test_a_sync_of_the_pod_past_the_refresh_point_refreshes_its_token() -> None:
    """The token manager is asked at every sync that remounts the projected volume, not only the periodic one: a
    change of the pod's labels at 2890 s (past 2886 - 5 s; the resyncs are at 2850 and 2925 s) refreshes the token
    then. Before it nothing was asked, though the refresh point had passed."""

    async def body() -> None:
        clock = FakeClock()
        runtime = MountingRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=4000.0))
        runtime.root, runtime.set_ups = Path(tempfile.mkdtemp()), []
        client = await local_api(clock)
        service = client.service
        times: list[float] = []

        async def tokens(namespace: str, account: str, request: Obj) -> Obj:
            times.append(clock.now())
            return (await service.create_token(namespace, account, request)).obj

        agent = _token_agent(client, clock, runtime, tokens, Fixed(0.5))
        await agent.start()
        try:
            await client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "default"}})
            await client.create(CONFIG_MAPS, "default", {**ROOT_CA, "metadata": {"name": "kube-root-ca.crt"}})
            spec = {"restartPolicy": "Never", "nodeName": NODE, "containers": [{"name": "main", "image": "b"}]}
            pod = await client.create(PODS, "default", {"metadata": {"name": "reader"}, "spec": spec})
            [volume] = [v["name"] for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]

            def phase() -> str:
                return str(((agent.pods.get("default", "reader") or {}).get("status") or {}).get("phase") or "")

            await settle(clock, lambda: phase() == "Running")
            [issued] = times
            files = runtime.root / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~projected" / volume
            first = (files / "token").read_text()
            alarm = asyncio.ensure_future(clock.sleep(issued + 2890 - clock.now()))
            await settle(clock, alarm.done)
            assert times == [issued] and (files / "token").read_text() == first
            await client.patch(PODS, "default", "reader", {"metadata": {"labels": {"tier": "gold"}}})
            await settle(clock, lambda: len(times) == 2, max_virtual=1)
            assert times[1] - issued == 2890
            await settle(clock, lambda: (files / "token").read_text() != first, max_virtual=1)
        finally:
            await agent.stop()
            shutil.rmtree(runtime.root, ignore_errors=True)

    asyncio.run(body())


def _token_agent(
    client: Any, clock: FakeClock, runtime: MountingRuntime, tokens: Any, rng: random.Random | None = None
) -> NodeAgent:
    """A node agent that reaches the API at 127.0.0.1:6443 and asks `tokens` for its pods' ServiceAccount tokens,
    its jitter drawn from `rng` (a fixed draw of 0.5 when not given)."""
    return NodeAgent(
        client,
        name=NODE,
        clock=clock,
        runtime=runtime,
        settings=NodeAgentSettings(machine=MACHINE, pod_api="127.0.0.1:6443"),
        memory_monitor=FakeMemoryMonitor(available_bytes=4 << 30, capacity_bytes=8 << 30),
        tokens=tokens,
        rng=rng or Fixed(0.5),
    )


def _token_scenario(
    *,
    runs_for: float,
    fail_refreshes: int = 0,
    draw: float = 0.5,
    refresh_after: float = 0.0,
    retry_after: float = 0.0,
) -> None:
    async def body() -> None:
        clock = FakeClock()
        runtime = MountingRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=runs_for))
        runtime.root, runtime.set_ups = Path(tempfile.mkdtemp()), []
        client = await local_api(clock)
        service = client.service
        requests: list[tuple[str, str, Obj]] = []

        times: list[float] = []
        files: list[Path] = []
        seen: list[str] = []  # the token file as each request finds it

        async def tokens(namespace: str, account: str, request: Obj) -> Obj:
            requests.append((namespace, account, request))
            times.append(clock.now())
            seen.extend(path.read_text() for path in files)
            if 1 < len(requests) <= 1 + fail_refreshes:
                raise ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
            return (await service.create_token(namespace, account, request)).obj

        agent = _token_agent(client, clock, runtime, tokens, Fixed(draw))
        await agent.start()
        try:
            await client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "default"}})
            await client.create(
                CONFIG_MAPS, "default", {"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": "PEM"}}
            )
            body: Obj = {
                "metadata": {"name": "reader", "namespace": "default"},
                "spec": {"restartPolicy": "Never", "nodeName": NODE, "containers": [{"name": "main", "image": "b"}]},
            }
            pod = await client.create(PODS, "default", body)
            [volume] = [v["name"] for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]

            def phase() -> str:
                found = agent.pods.get("default", "reader") or {}
                return str((found.get("status") or {}).get("phase") or "")

            if runs_for:
                await settle(clock, lambda: phase() == "Running")
                issued = times[0]
                first = runtime.root / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~projected" / volume
                before = (first / "token").read_text()
                files.append(first / "token")
                await settle(clock, lambda: len(requests) == 2)
                assert times[1] - issued == refresh_after
                for attempt in range(fail_refreshes):
                    await settle(clock, lambda wanted=3 + attempt: len(requests) == wanted)  # type: ignore[misc]
                    assert times[-1] - times[-2] == retry_after  # the next resync, not the next 80 %
                assert seen == [before] * (1 + fail_refreshes)  # the old token stays in place meanwhile
                await settle(clock, lambda: (first / "token").read_text() != before)
                assert len(requests) == 2 + fail_refreshes
                assert all(request == requests[0] for request in requests)
                return
            await settle(clock, lambda: phase() == "Succeeded")
            [(namespace, account, request)] = requests
            assert (namespace, account) == ("default", "default")
            assert request["spec"] == {
                "audiences": [],
                "expirationSeconds": 3607,
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "reader", "uid": pod["metadata"]["uid"]},
            }
            written = runtime.root / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~projected" / volume
            token = (written / "token").read_text()
            payload = token.split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            assert claims["kubernetes.io"]["pod"] == {"name": "reader", "uid": pod["metadata"]["uid"]}
            assert claims["kubernetes.io"]["node"]["name"] == NODE
            assert claims["exp"] - claims["iat"] == 365 * 24 * 3600  # extended; warned about after 3607 s
            assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
            assert (written / "ca.crt").read_text() == "PEM"
        finally:
            await agent.stop()
            shutil.rmtree(runtime.root, ignore_errors=True)

    asyncio.run(body())


def test_a_token_that_expires_while_refreshes_fail_fails_the_volume_until_one_succeeds() -> None:
    """token_manager.go `GetServiceAccountToken`: once the cached token is past its `expirationTimestamp` (the
    requested 3607 s, not the extended year) a failed refresh is an error, not the old token, and the token
    manager's cleanup has dropped it: the projected volume's remount fails, `MountVolume.SetUp failed for volume
    "kube-api-access-..." : failed to fetch token: ...` on the running pod, whose files stay as they were; the
    next refresh that succeeds writes the new token."""

    async def body() -> None:
        clock = FakeClock()
        runtime = MountingRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=8000.0))
        runtime.root, runtime.set_ups = Path(tempfile.mkdtemp()), []
        client = await local_api(clock)
        service = client.service
        down = {"until": 0.0}
        requests: list[float] = []

        async def tokens(namespace: str, account: str, request: Obj) -> Obj:
            requests.append(clock.now())
            if clock.now() < down["until"]:
                raise ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
            return (await service.create_token(namespace, account, request)).obj

        agent = _token_agent(client, clock, runtime, tokens)
        await agent.start()
        try:
            await client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "default"}})
            await client.create(CONFIG_MAPS, "default", {**ROOT_CA, "metadata": {"name": "kube-root-ca.crt"}})
            spec = {"restartPolicy": "Never", "nodeName": NODE, "containers": [{"name": "main", "image": "b"}]}
            pod = await client.create(PODS, "default", {"metadata": {"name": "reader"}, "spec": spec})
            [volume] = [v["name"] for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]

            def phase() -> str:
                return str(((agent.pods.get("default", "reader") or {}).get("status") or {}).get("phase") or "")

            async def failed_mounts() -> list[str]:
                await agent.events.flush()
                items, _ = await client.list(EVENTS, "default")
                return [e["message"] for e in items if e["reason"] == "FailedMount"]

            await settle(clock, lambda: phase() == "Running")
            issued = clock.now()
            down["until"] = issued + 3607 + 200  # refreshes fail from 80 % of its life until 200 s past its expiry
            files = runtime.root / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~projected" / volume
            first = (files / "token").read_text()
            await settle(clock, lambda: clock.now() >= issued + 3607 - 1, max_virtual=4000)
            assert len(requests) > 2  # the 80 % refresh and its retries failed, quietly: the old token is valid
            assert await failed_mounts() == []
            await settle(clock, lambda: clock.now() >= issued + 3607 + 75 + 1)  # its next resync (60 × 1.25 s)
            message = (
                f'MountVolume.SetUp failed for volume "{volume}" : failed to fetch token: '
                "the server is currently unable to handle the request"
            )
            assert await failed_mounts() == [message]
            assert (files / "token").read_text() == first  # the failed set-up leaves the files as they were
            assert phase() == "Running"
            await settle(clock, lambda: (files / "token").read_text() != first, max_virtual=300)
            assert clock.now() >= down["until"]
            assert (files / "ca.crt").read_text() == "PEM"
        finally:
            await agent.stop()
            shutil.rmtree(runtime.root, ignore_errors=True)

    asyncio.run(body())


class _AdoptingRuntime(MountingRuntime):
    """Adopts every pod it is asked about, running, as `ProcessRuntime` adopts what a killed agent's shim kept
    running (its end comes later)."""

    def adopt(self, pod: Obj) -> Any:
        return self.admit(pod)


def test_an_adopted_pod_whose_token_request_fails_is_followed_to_its_end() -> None:
    """chaos seed 135 (docs/chaos.md): a restarted agent adopted a running pod, then its token request failed (the
    API server was being killed) before the pod was tracked. The retried sync found the runtime's handle and took
    the pod as admitted, but nothing tracked it: its container's end reached no sync, and the pod stayed Running."""

    async def body() -> None:
        clock = FakeClock()
        runtime = _AdoptingRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=10.0))
        runtime.root, runtime.set_ups = Path(tempfile.mkdtemp()), []
        client = await local_api(clock)
        service = client.service
        asked: list[float] = []

        async def tokens(namespace: str, account: str, request: Obj) -> Obj:
            asked.append(clock.now())
            if len(asked) == 1:
                raise RuntimeError("the API server went away")
            return (await service.create_token(namespace, account, request)).obj

        agent = _token_agent(client, clock, runtime, tokens)
        await agent.start()
        try:
            await client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "default"}})
            await client.create(CONFIG_MAPS, "default", {**ROOT_CA, "metadata": {"name": "kube-root-ca.crt"}})
            spec = {"restartPolicy": "Never", "nodeName": NODE, "containers": [{"name": "main", "image": "b"}]}
            await client.create(PODS, "default", {"metadata": {"name": "adopted"}, "spec": spec})

            def phase() -> str:
                return str(((agent.pods.get("default", "adopted") or {}).get("status") or {}).get("phase") or "")

            await settle(clock, lambda: phase() == "Succeeded", max_virtual=60)
            assert asked, "the token was asked for"
        finally:
            await agent.stop()
            shutil.rmtree(runtime.root, ignore_errors=True)

    asyncio.run(body())
