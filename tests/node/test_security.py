"""securityContext: containers run as the user, groups and capabilities their pod asks for, or not at all."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import PODS
from kjobs.clock import FakeClock
from kjobs.node import security
from kjobs.node.envvars import ConfigError
from kjobs.node.logs import render
from kjobs.node.process_runtime import ProcessRuntime
from kjobs.server.logs import LogOptions
from kjobs.store import DB_FILE, open_store
from tests.node.helpers import make_pod, process_node
from tests.node.test_agent import Node, start_node
from tests.node.test_agent_e2e import eventually, pod_manifest
from tests.node.test_process_runtime import finish, sh, state, with_runtime
from tests.support import settle

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="changing a container's user needs root")
POD = "job-0-abcde_ns(uid-1)"


def secured(script: str, context: Obj, **pod_spec: Any) -> Obj:
    return make_pod([sh(script, securityContext=context)], **pod_spec)


def run(tmp_path: Path, pod: Obj) -> tuple[Obj, str]:
    """Run `pod` to its end; its status and its main container's log."""
    result: dict[str, Any] = {}

    async def body(runtime: ProcessRuntime) -> None:
        result["status"] = await finish(runtime, pod)
        log = runtime.log_dir / "uid-1_main_0.log"
        result["log"] = render(log.read_bytes()).decode() if log.exists() else ""

    with_runtime(tmp_path / "node", body)
    return result["status"], result["log"]


def proc_status(log: str, field: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in log.splitlines() if line.startswith(f"{field}:"))


# -- on a real node (root) -----------------------------------------------------------------------------------------
@root_only
def test_run_as_user_runs_the_container_as_that_user(tmp_path: Path) -> None:
    status, log = run(tmp_path, secured("id -u; id -g; id -G; echo made > here && cat here", {"runAsUser": 65534}))
    assert status["phase"] == "Succeeded", log
    # No runAsGroup: the user's primary group (as containerd takes it from the passwd file); its scratch dir is its own.
    assert log.split() == ["65534", "65534", "65534", "made"]


@root_only
def test_pod_level_user_groups_and_the_containers_own_override(tmp_path: Path) -> None:
    pod = make_pod(
        [sh("id -u; id -g; id -G", securityContext={"runAsGroup": 3000})],
        securityContext={"runAsUser": 1000, "runAsGroup": 2000, "supplementalGroups": [4000], "fsGroup": 5000},
    )
    status, log = run(tmp_path, pod)
    assert status["phase"] == "Succeeded", log
    assert log.splitlines() == ["1000", "3000", "3000 4000 5000"]


@root_only
def test_drop_all_capabilities_leaves_root_without_any(tmp_path: Path) -> None:
    _, log = run(tmp_path, secured("id -u; cat /proc/self/status", {"capabilities": {"drop": ["ALL"]}}))
    assert log.split()[0] == "0"
    assert int(proc_status(log, "CapEff"), 16) == 0 and int(proc_status(log, "CapBnd"), 16) == 0


@root_only
def test_drop_all_then_add_keeps_only_the_added_capability(tmp_path: Path) -> None:
    context = {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}
    _, log = run(tmp_path, secured("cat /proc/self/status", context))
    assert int(proc_status(log, "CapEff"), 16) == 1 << 10  # CAP_NET_BIND_SERVICE


@root_only
def test_allow_privilege_escalation_false_sets_no_new_privs(tmp_path: Path) -> None:
    _, log = run(tmp_path, secured("cat /proc/self/status", {"allowPrivilegeEscalation": False}))
    assert proc_status(log, "NoNewPrivs") == "1"
    _, plain = run(tmp_path / "plain", make_pod([sh("cat /proc/self/status")]))
    assert proc_status(plain, "NoNewPrivs") == "0"


@root_only
def test_run_as_non_root_with_root_fails_to_start_as_the_kubelet_fails_it(tmp_path: Path) -> None:
    async def body(runtime: ProcessRuntime) -> None:
        handle = await runtime.run_pod(secured("echo ran", {"runAsNonRoot": True}))
        waiting = state(handle.status)["state"]["waiting"]
        assert waiting == {
            "reason": "CreateContainerConfigError",
            "message": f'container has runAsNonRoot and image will run as root (pod: "{POD}", container: main)',
        }
        assert not handle.terminal and not any(runtime.log_dir.iterdir())
        explicit = make_pod([sh("echo ran", securityContext={"runAsNonRoot": True, "runAsUser": 0})], uid="uid-2")
        handle = await runtime.run_pod(explicit)
        assert state(handle.status)["state"]["waiting"]["message"] == (
            'container\'s runAsUser breaks non-root policy (pod: "job-0-abcde_ns(uid-2)", container: main)'
        )

    with_runtime(tmp_path, body)


@root_only
def test_run_as_non_root_with_a_non_root_user_runs(tmp_path: Path) -> None:
    status, log = run(tmp_path, secured("id -u", {"runAsNonRoot": True, "runAsUser": 65534}))
    assert status["phase"] == "Succeeded" and log.strip() == "65534"


@root_only
def test_a_pod_running_as_another_user_cannot_read_the_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = open_store(str(data))
    try:
        store_file = data / DB_FILE
        assert stat.S_IMODE(data.stat().st_mode) == 0o700 and stat.S_IMODE(store_file.stat().st_mode) == 0o600
        script = f"cat {store_file} >/dev/null && echo READ; ls {data} >/dev/null && echo LISTED; exit 0"
        status, log = run(data / "nodes", secured(script, {"runAsUser": 65534}))
    finally:
        store.close()
    assert status["phase"] == "Succeeded"
    assert "READ" not in log and "LISTED" not in log and "Permission denied" in log


def test_a_node_root_is_private(tmp_path: Path) -> None:
    status, _ = run(tmp_path, make_pod([sh("exit 0")]))
    assert status["phase"] == "Succeeded"
    assert stat.S_IMODE((tmp_path / "node").stat().st_mode) == 0o700


def test_an_existing_store_made_readable_by_all_is_made_private(tmp_path: Path) -> None:
    open_store(str(tmp_path)).close()
    tmp_path.chmod(0o755)
    (tmp_path / DB_FILE).chmod(0o644)
    open_store(str(tmp_path)).close()
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / DB_FILE).stat().st_mode) == 0o600


# -- the rules, as pure functions --------------------------------------------------------------------------------
def test_no_security_context_starts_the_container_as_kjobs_runs() -> None:
    assert security.run_as(make_pod([sh("true")], securityContext={}), sh("true")) is None


def test_the_containers_fields_override_the_pods_field_by_field() -> None:
    pod = make_pod(securityContext={"runAsUser": 1, "runAsGroup": 2, "runAsNonRoot": True, "fsGroup": 3})
    merged = security.effective(pod, {"name": "c", "securityContext": {"runAsUser": 9}})
    assert merged == {"runAsUser": 9, "runAsGroup": 2, "runAsNonRoot": True}


@pytest.mark.parametrize(
    ("capabilities", "bounding"),
    [
        ({"drop": ["ALL"]}, "-all"),
        ({"drop": ["all"], "add": ["NET_ADMIN", "CAP_KILL"]}, "-all,+net_admin,+kill"),
        ({"drop": ["NET_RAW", "SYS_ADMIN"]}, "+all,-net_raw,-sys_admin"),
        ({"add": ["ALL"], "drop": ["ALL"]}, "+all"),
        ({}, None),
    ],
)
def test_capabilities_become_a_bounding_set(capabilities: Obj, bounding: str | None) -> None:
    assert security._bounding_set(capabilities) == bounding


def test_an_unknown_capability_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match='unknown capability "CAP_FLY" to add'):
        security._bounding_set({"add": ["CAP_FLY"]})


@root_only
def test_setpriv_arguments() -> None:
    pod = make_pod(securityContext={"runAsUser": 65534, "supplementalGroups": [7]})
    container = {"name": "c", "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
    run_as = security.run_as(pod, container)
    assert run_as is not None and run_as.owner == (65534, 65534)
    assert run_as.argv("/usr/bin/setpriv") == [
        "/usr/bin/setpriv",
        "--regid=65534",
        "--reuid=65534",
        "--groups=65534,7",
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--no-new-privs",
        "--",
    ]


def test_without_root_another_user_fails_instead_of_running_as_kjobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "getegid", lambda: 1000)
    pod = make_pod(securityContext={"runAsUser": 65534})
    with pytest.raises(ConfigError, match=r"container's runAsUser 65534 cannot be honoured: kjobs runs as uid 1000"):
        security.run_as(pod, {"name": "c"})
    # Its own user is fine, and runAsNonRoot holds (the "image" runs as kjobs' non-root user).
    assert security.run_as(make_pod(securityContext={"runAsUser": 1000, "runAsNonRoot": True}), {"name": "c"}) is None
    no_new_privs = security.run_as(
        pod, {"name": "c", "securityContext": {"runAsUser": 1000, "allowPrivilegeEscalation": False}}
    )
    assert no_new_privs == security.RunAs(no_new_privs=True)


def test_fields_kjobs_cannot_honour_are_listed() -> None:
    pod = make_pod(
        [
            {
                "name": "c",
                "securityContext": {
                    "readOnlyRootFilesystem": True,
                    "seccompProfile": {"type": "RuntimeDefault"},
                    "procMount": "Default",
                    "runAsUser": 5,
                },
            }
        ],
        securityContext={"fsGroup": 1, "seLinuxOptions": {"level": "s0"}, "appArmorProfile": {"type": "Unconfined"}},
    )
    assert security.unenforced(pod) == [
        "spec.securityContext.seLinuxOptions",
        "spec.securityContext.fsGroup",
        "spec.containers[0].securityContext.seccompProfile",
        "spec.containers[0].securityContext.readOnlyRootFilesystem",
    ]
    assert security.unenforced(make_pod(securityContext={})) == []


# -- what a user sees through the API -------------------------------------------------------------------------------
def test_unenforced_fields_are_a_warning_event_and_config_errors_a_failed_event() -> None:
    async def scenario(node: Node) -> None:
        await node.create_pod(
            "ro", containers=[{"name": "main", "image": "busybox", "securityContext": {"readOnlyRootFilesystem": True}}]
        )
        await node.create_pod(
            "cm",
            containers=[
                {
                    "name": "main",
                    "image": "busybox",
                    "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}}],
                }
            ],
        )

        def waiting() -> bool:
            statuses = ((node.pod("cm") or {}).get("status") or {}).get("containerStatuses") or []
            return bool(statuses) and "waiting" in statuses[0]["state"]

        await settle(node.clock, waiting)
        [warning] = await node.events(security.NOT_ENFORCED)
        assert (warning["type"], warning["involvedObject"]["name"]) == ("Warning", "ro")
        assert "spec.containers[0].securityContext.readOnlyRootFilesystem" in warning["message"]
        [failed] = [e for e in await node.events("Failed") if e["involvedObject"]["name"] == "cm"]
        message = node.pod("cm")["status"]["containerStatuses"][0]["state"]["waiting"]["message"]  # type: ignore[index]
        assert (failed["type"], failed["message"]) == ("Warning", f"Error: {message}")

    async def main() -> None:
        node = await start_node(clock=FakeClock())
        try:
            await scenario(node)
        finally:
            await node.agent.stop()

    asyncio.run(main())


@root_only
def test_through_the_api_a_pod_runs_as_its_user_and_a_root_one_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with process_node(tmp_path) as node:
            service, client = node.service, node.client
            nobody = pod_manifest("nobody", "local", ["sh", "-c", "id -u"], securityContext={"runAsUser": 65534})
            refused = pod_manifest("refused", "local", ["sh", "-c", "id -u"], securityContext={"runAsNonRoot": True})
            await client.create(PODS, "default", nobody)
            created = await client.create(PODS, "default", refused)

            async def waiting() -> Obj:
                pod = await client.get(PODS, "default", "refused")
                statuses = pod.get("status", {}).get("containerStatuses") or [{}]
                return dict(statuses[0].get("state", {}).get("waiting") or {})

            async def succeeded() -> bool:
                return await phase(client, "nobody") == "Succeeded"

            assert await eventually(succeeded)
            _, chunks = service.open_log("default", "nobody", LogOptions(container="main"))
            assert b"".join([c async for c in chunks]) == b"65534\n"
            where = f'(pod: "refused_default({created["metadata"]["uid"]})", container: main)'
            assert await eventually(waiting) == {
                "reason": "CreateContainerConfigError",
                "message": f"container has runAsNonRoot and image will run as root {where}",
            }
            assert await phase(client, "refused") == "Pending"

    asyncio.run(scenario())


async def phase(client: LocalClient, name: str) -> str:
    pod = await client.get(PODS, "default", name)
    return str(pod.get("status", {}).get("phase", ""))
