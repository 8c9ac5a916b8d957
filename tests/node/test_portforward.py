"""Which listeners a pod's port-forward reaches (`kjobs.node.portforward`): a socket listening where localhost
reaches it, held by a process of the pod's process groups or a descendant; nothing else on the machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from kjobs.node.portforward import PodPorts, listening_inodes, pod_listener, pod_processes
from kjobs.server.portforward import ForwardRefused
from tests.support import free_port

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux procfs")

_SERVE = """
import socket, sys, time
family = socket.AF_INET6 if sys.argv[2] == "v6" else socket.AF_INET
s = socket.socket(family)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[3], int(sys.argv[1])))
s.listen()
print("up", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"from the pod")
    c.close()
"""


def _spawn(port: int, family: str, host: str, *, child: bool = False) -> subprocess.Popen[str]:
    """A 'container': a process leading its own group, listening itself or through a child it starts."""
    argv = [sys.executable, "-c", _SERVE, str(port), family, host]
    if child:  # the listener is the group leader's child, in a session of its own (setsid)
        argv = ["sh", "-c", f"setsid {shlex.join(argv)} & wait"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, process_group=0)
    assert proc.stdout is not None
    if not child:
        assert proc.stdout.readline().strip() == "up"
    return proc


@pytest.fixture
def containers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        for pid in pod_processes({proc.pid}):  # the group and a descendant in a session of its own
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_a_pods_own_listener_is_reached_and_others_are_not(containers: list[subprocess.Popen[str]]) -> None:
    port, v6_port, loopback_only = free_port(), free_port(), free_port()
    containers.append(_spawn(port, "v4", "0.0.0.0"))
    containers.append(_spawn(v6_port, "v6", "::1"))
    containers.append(_spawn(loopback_only, "v4", "127.0.0.2"))  # localhost does not reach 127.0.0.2
    pod = {p.pid for p in containers}
    assert pod_listener(pod, port) == "127.0.0.1"
    assert pod_listener(pod, v6_port) == "::1"
    assert pod_listener(pod, loopback_only) is None
    assert pod_listener({containers[1].pid}, port) is None  # another pod's listener
    assert pod_listener(pod, free_port()) is None
    with socket.socket() as mine:  # this test's own listener is no pod's
        mine.bind(("127.0.0.1", 0))
        mine.listen()
        assert listening_inodes(mine.getsockname()[1])
        assert pod_listener(pod, mine.getsockname()[1]) is None


def test_a_descendant_in_a_session_of_its_own_is_the_pods(containers: list[subprocess.Popen[str]]) -> None:
    port = free_port()
    leader = _spawn(port, "v4", "127.0.0.1", child=True)
    containers.append(leader)
    deadline = time.monotonic() + 10
    while pod_listener({leader.pid}, port) is None:
        assert time.monotonic() < deadline, "the child never listened"
        time.sleep(0.05)
    assert len(pod_processes({leader.pid})) >= 2


def test_pod_ports_connect_or_refuse_with_containerds_text(containers: list[subprocess.Popen[str]]) -> None:
    port, other = free_port(), free_port()
    containers.append(_spawn(port, "v4", "127.0.0.1"))
    target = PodPorts("uid-1", lambda: {containers[0].pid}, lambda: True)

    async def main() -> tuple[bytes, str]:
        reader, writer = await target.connect(port)
        data = await reader.read()
        writer.close()
        with pytest.raises(ForwardRefused) as refused:
            await target.connect(other)
        return data, str(refused.value)

    data, refused = asyncio.run(main())
    assert data == b"from the pod"
    assert refused == (
        f'failed to execute portforward in network namespace "host": failed to connect to localhost:{other} inside '
        f'namespace "uid-1", IPv4: dial tcp4 127.0.0.1:{other}: connect: connection refused IPv6 dial tcp6 '
        f"[::1]:{other}: connect: connection refused "
    )
