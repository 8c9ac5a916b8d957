"""Recursive read-only mounts (`kjobs.node.recursive_read_only`): the `volumeMounts` of container statuses, the
Node's `runtimeHandlers`, the kubelet's refusal of an `Enabled` mount a runtime cannot make, and (where a mount
namespace and `mount_setattr` are had) a mount below a recursively read-only volume refusing writes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.client.resources import NODES
from kjobs.clock import FakeClock
from kjobs.node import nodestatus
from kjobs.node.podstatus import compute_pod_status
from kjobs.node.process_runtime import ProcessRuntime, mounting_enabled, probe_recursive_read_only
from kjobs.node.recursive_read_only import resolve, runtime_handlers
from kjobs.node.sim_runtime import SimulatedRuntime
from tests.node.helpers import T0, make_pod, process_node, record

NOT_SUPPORTED = (
    'failed to resolve recursive read-only mode: volume "data" requested recursive read-only mode, but it is not '
    "supported by the runtime"
)
INCOMPATIBLE = "it is not compatible with propagation"


def mounts() -> list[Obj]:
    """The mounts of the kubelet's node e2e (test/e2e_node/mount_rro_linux_test.go), and the token's."""
    return [
        {"name": "data", "mountPath": "/mnt-rro", "readOnly": True, "recursiveReadOnly": "Enabled"},
        {"name": "data", "mountPath": "/mnt-rro-if-possible", "readOnly": True, "recursiveReadOnly": "IfPossible"},
        {"name": "data", "mountPath": "/mnt-rro-disabled", "readOnly": True, "recursiveReadOnly": "Disabled"},
        {"name": "data", "mountPath": "/mnt-ro", "readOnly": True},
        {"name": "data", "mountPath": "/mnt-rw"},
        {"name": "kube-api-access-x1", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True},
    ]


def expected(supported: bool) -> list[Obj]:
    """The statuses of `mounts()`: `Enabled` and `IfPossible` are Enabled where the runtime handler supports them,
    else Disabled (an `Enabled` one then fails its container's creation, and is logged as Disabled)."""
    ro, rro = {"readOnly": True}, "Enabled" if supported else "Disabled"
    return [
        {"name": "data", "mountPath": "/mnt-rro", **ro, "recursiveReadOnly": rro},
        {"name": "data", "mountPath": "/mnt-rro-if-possible", **ro, "recursiveReadOnly": rro},
        {"name": "data", "mountPath": "/mnt-rro-disabled", **ro, "recursiveReadOnly": "Disabled"},
        {"name": "data", "mountPath": "/mnt-ro", **ro, "recursiveReadOnly": "Disabled"},
        {"name": "data", "mountPath": "/mnt-rw"},
        {"name": "kube-api-access-x1", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", **ro,
         "recursiveReadOnly": "Disabled"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("mount", "supported", "result"),
    [
        ({"readOnly": True}, False, (False, "")),
        ({"readOnly": True, "recursiveReadOnly": "Disabled"}, True, (False, "")),
        ({"readOnly": True, "recursiveReadOnly": "IfPossible"}, True, (True, "")),
        ({"readOnly": True, "recursiveReadOnly": "IfPossible"}, False, (False, "")),
        ({"readOnly": True, "recursiveReadOnly": "Enabled"}, True, (True, "")),
        ({"readOnly": True, "recursiveReadOnly": "Enabled", "mountPropagation": "None"}, True, (True, "")),
        (
            {"readOnly": True, "recursiveReadOnly": "Enabled"},
            False,
            (False, 'volume "v" requested recursive read-only mode, but it is not supported by the runtime'),
        ),
        (
            {"recursiveReadOnly": "IfPossible"},
            True,
            (False, 'volume "v" requested recursive read-only mode, but it is not read-only'),
        ),
        (
            {"readOnly": True, "recursiveReadOnly": "Enabled", "mountPropagation": "HostToContainer"},
            True,
            (False, f'volume "v" requested recursive read-only mode, but {INCOMPATIBLE} "HostToContainer"'),
        ),
    ],
)
def test_resolve_is_the_kubelets_resolve_recursive_read_only(
    mount: Obj, supported: bool, result: tuple[bool, str]
) -> None:
    assert resolve({"name": "v", "mountPath": "/v", **mount}, supported) == result


def test_every_container_status_lists_the_spec_mounts_in_every_state() -> None:
    """Init, regular (waiting, as before its first start) and ephemeral containers alike; readOnly as the spec has it;
    `Enabled` and `IfPossible` resolved with what the runtime handler supports."""
    pod = make_pod(
        [{"name": "main", "image": "busybox", "volumeMounts": mounts()}, {"name": "bare", "image": "busybox"}],
        init=[{"name": "setup", "image": "busybox", "volumeMounts": mounts()}],
        ephemeralContainers=[{"name": "debug", "image": "busybox", "volumeMounts": mounts()}],
    )
    for supported in (True, False):
        status = compute_pod_status(record(pod), T0, recursive_read_only=supported)
        groups = ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
        listed = {cs["name"]: cs.get("volumeMounts") for group in groups for cs in status[group]}
        want = expected(supported)
        assert listed == {"setup": want, "main": want, "bare": None, "debug": want}


def test_the_node_reports_its_default_runtime_handler_and_what_it_supports() -> None:
    machine = nodestatus.MachineInfo()
    state = nodestatus.NodeState()
    for supported in (True, False):
        handlers = [{"name": "", "features": {"recursiveReadOnlyMounts": supported, "userNamespaces": False}}]
        status = nodestatus.node_status(machine, state, T0, name="n", runtime_handlers=runtime_handlers(supported))
        assert status["runtimeHandlers"] == handlers
        assert list(status)[-2:] == ["nodeInfo", "runtimeHandlers"]  # NodeStatus's field order
    assert "runtimeHandlers" not in nodestatus.node_status(machine, state, T0, name="n")


def test_a_simulated_node_supports_recursive_read_only_mounts() -> None:
    runtime = SimulatedRuntime(clock=FakeClock(T0))
    assert runtime.supports_recursive_read_only()
    assert runtime.recursive_read_only_mounts(make_pod([{"name": "c", "volumeMounts": mounts()}]))


def sh(script: str, volume_mounts: list[Obj]) -> Obj:
    return {"name": "main", "image": "busybox", "command": ["sh", "-c", script], "volumeMounts": volume_mounts}


def host_path_pod(path: Path, volume_mounts: list[Obj], script: str = "true", uid: str = "uid-1") -> Obj:
    return make_pod(
        [sh(script, volume_mounts)], uid=uid, name=uid, volumes=[{"name": "data", "hostPath": {"path": str(path)}}]
    )


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 5
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@pytest.mark.e2e
def test_an_enabled_mount_a_runtime_cannot_make_fails_the_container_as_the_kubelet_does(tmp_path: Path) -> None:
    """A runtime that mounts no volumes (`KJOBS_MOUNT_VOLUMES=0`, or no mount namespace here) has no support: the
    `Enabled` mount's container waits with CreateContainerConfigError and the kubelet's message; `IfPossible`
    falls back to a (non-recursive) read-only mount and runs."""

    async def body() -> None:
        runtime = ProcessRuntime(root_dir=tmp_path / "root", mount_volumes=False)
        try:
            assert not runtime.supports_recursive_read_only()
            refused = await runtime.run_pod(host_path_pod(tmp_path, mounts()[:1] + mounts()[4:5]))

            def waiting() -> Obj:
                return (refused.status.get("containerStatuses") or [{}])[0].get("state", {}).get("waiting") or {}

            await _until(lambda: waiting().get("reason") == "CreateContainerConfigError", "the config error")
            assert waiting() == {"reason": "CreateContainerConfigError", "message": NOT_SUPPORTED}
            assert refused.status["containerStatuses"][0]["volumeMounts"] == [expected(False)[0], expected(False)[4]]
            fallback = await runtime.run_pod(host_path_pod(tmp_path, mounts()[1:2], uid="uid-2"))
            status = await asyncio.wait_for(fallback.wait(), 5)
            assert status["phase"] == "Succeeded"
            assert status["containerStatuses"][0]["volumeMounts"] == [expected(False)[1]]
        finally:
            await runtime.shutdown()

    asyncio.run(body())


_SUBMOUNT_RUN = """
import asyncio, json, sys
from pathlib import Path
from kjobs.node import mountns
from kjobs.node.logs import render
from kjobs.node.process_runtime import ProcessRuntime
from tests.node.helpers import make_pod

host, root = Path(sys.argv[1]), Path(sys.argv[2])
mountns.enter()  # a throwaway mount namespace: the tmpfs below is seen by the pod, never by this machine
mountns._mount("tmpfs", str(host / "sub"), "tmpfs", 0, "mode=0777")
script = "for d in rro rro-if-possible rro-disabled ro rw; do touch /mnt-$d/sub/$d 2>/dev/null && echo $d; done"
pod = make_pod([{"name": "main", "image": "busybox", "command": ["sh", "-c", script],
                 "volumeMounts": json.loads(sys.argv[3])}], volumes=[{"name": "data", "hostPath": {"path": str(host)}}])

async def main():
    runtime = ProcessRuntime(root_dir=root)
    try:
        if not runtime.supports_recursive_read_only():  # in this namespace (nested, for a user that is not root)
            print(json.dumps({"skip": "no recursive read-only mounts in a nested mount namespace here"}))
            return
        handle = await runtime.run_pod(pod)
        status = await asyncio.wait_for(handle.wait(), 10)
        log = render((runtime.log_dir / "uid-1_main_0.log").read_bytes())
        print(json.dumps({"status": status, "log": log.decode(errors="replace")}))
    finally:
        await runtime.shutdown()

asyncio.run(main())
"""


@pytest.mark.e2e
@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_a_mount_below_a_recursively_read_only_host_path_refuses_writes(tmp_path: Path) -> None:
    """The node e2e's check (mount_rro_linux_test.go): a tmpfs mounted below the hostPath is read-only through the
    `Enabled` and (supported) `IfPossible` mounts, writable through the others, as runc's `rro` and `ro` make them."""
    staging = tmp_path / "probe"
    staging.mkdir()
    if not probe_recursive_read_only(str(staging)):
        pytest.skip("mount_setattr(2) is not available here (Linux < 5.12)")
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(repo)])}
    argv = [sys.executable, "-c", _SUBMOUNT_RUN, str(host), str(tmp_path / "root"), json.dumps(mounts()[:5])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    if "skip" in result:
        pytest.skip(result["skip"])
    container = result["status"]["containerStatuses"][0]
    assert container["state"]["terminated"]["exitCode"] == 0, result["log"]
    assert result["log"].split() == ["rro-disabled", "ro", "rw"]
    assert container["volumeMounts"] == expected(True)[:5]
    assert sorted(os.listdir(host / "sub")) == []  # the tmpfs was the namespace's: this machine's directory is empty


@pytest.mark.e2e
def test_a_node_agent_reports_its_runtimes_support_on_its_node(tmp_path: Path) -> None:
    """What `kubectl get node -o yaml` shows: the agent's Node carries the runtime's handlers, with the support its
    runtime probed (`kjobs.node.mountns --probe`, off the event loop: posted once known)."""

    async def body() -> None:
        async with process_node(tmp_path) as node:
            supported = node.agent.runtime.supports_recursive_read_only()  # type: ignore[attr-defined]
            found: list[Obj] = []

            async def posted() -> bool:
                found[:] = [await node.client.get(NODES, None, "local")]
                return "runtimeHandlers" in found[0]["status"]

            deadline = time.monotonic() + 5
            while not await posted() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert found[0]["status"].get("runtimeHandlers") == runtime_handlers(supported)
            elsewhere = tmp_path / "probe"
            elsewhere.mkdir()
            assert supported == (mounting_enabled() and probe_recursive_read_only(str(elsewhere)))

    asyncio.run(body())
