"""Which ports a pod's processes listen on, and connections to them (`kjobs.server.portforward`'s `PortTarget`).

Design note: kjobs pods share the host's network, where a kubelet's pod has a network namespace of its own and a
port-forward reaches only that pod's listeners. So a port is forwarded only when a listening TCP socket on it,
reachable as localhost (bound to 0.0.0.0, 127.0.0.1, :: or ::1), is held by one of the pod's processes: the
processes of its running containers' process groups (a container's main process leads its group, as do the
commands `kubectl exec` started in it) and their descendants. Listening sockets and their inodes come from
/proc/net/tcp and /proc/net/tcp6 (state 0A), a process's sockets from the `socket:[inode]` links of
/proc/PID/fd. The connection then goes to 127.0.0.1 for an IPv4 listener, else to ::1, as containerd's dialer
tries tcp4 localhost before tcp6. Anything else is refused with containerd's text for a refused connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections.abc import Callable, Iterable

from kjobs.server.portforward import ForwardRefused, refused_message

LISTEN = "0A"
_LOCAL_V4 = {"0.0.0.0", "127.0.0.1"}
_LOCAL_V6 = {"::", "::1"}


def _v4(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)[::-1]
    return ".".join(str(b) for b in raw)


def _v6(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return str(ipaddress.IPv6Address(words))


def listening_inodes(port: int, *, proc: str = "/proc") -> dict[int, str]:
    """Inodes of the TCP sockets listening on `port` where localhost reaches them -> 'v4' or 'v6'."""
    found: dict[int, str] = {}
    for name, family, decode, local in (("tcp", "v4", _v4, _LOCAL_V4), ("tcp6", "v6", _v6, _LOCAL_V6)):
        try:
            with open(f"{proc}/net/{name}") as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != LISTEN:
                continue
            address, _, hex_port = fields[1].partition(":")
            try:
                if int(hex_port, 16) != port or decode(address) not in local:
                    continue
                found[int(fields[9])] = family
            except ValueError:
                continue
    return found


def pod_processes(groups: set[int], *, proc: str = "/proc") -> set[int]:
    """The processes of the process groups `groups` and their descendants."""
    parents: dict[int, int] = {}
    members: set[int] = set()
    try:
        entries = os.listdir(proc)
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        pid = int(entry)
        parents[pid] = int(fields[1])  # stat field 4: ppid; field 5: pgrp
        if int(fields[2]) in groups:
            members.add(pid)
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    todo = list(members)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in members:
                members.add(child)
                todo.append(child)
    return members


def owned_family(pids: Iterable[int], inodes: dict[int, str], *, proc: str = "/proc") -> str | None:
    """'v4' or 'v6' when one of `pids` holds one of the listening `inodes` (v4 preferred); None otherwise."""
    held: set[str] = set()
    wanted = {f"socket:[{inode}]": family for inode, family in inodes.items()}
    for pid in pids:
        try:
            fds = os.listdir(f"{proc}/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"{proc}/{pid}/fd/{fd}")
            except OSError:
                continue
            family = wanted.get(link)
            if family is not None:
                held.add(family)
                if family == "v4":
                    return "v4"
    return "v6" if held else None


def pod_listener(groups: set[int], port: int) -> str | None:
    """Where a pod whose processes lead `groups` listens on `port`: '127.0.0.1', '::1', or None."""
    inodes = listening_inodes(port)
    if not inodes or not groups:
        return None
    family = owned_family(pod_processes(groups), inodes)
    return None if family is None else ("127.0.0.1" if family == "v4" else "::1")


class PodPorts:
    """A `PortTarget` for a pod of this process's agent."""

    def __init__(self, pod_id: str, groups: Callable[[], set[int]], running: Callable[[], bool]) -> None:
        self.pod_id = pod_id
        self._groups = groups
        self._running = running

    def running(self) -> bool:
        return self._running()

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        groups = self._groups()
        loop = asyncio.get_running_loop()
        host = await loop.run_in_executor(None, pod_listener, groups, port)
        if host is None:
            raise ForwardRefused(refused_message(port, self.pod_id))
        try:
            return await asyncio.wait_for(asyncio.open_connection(host, port), 5.0)  # containerd's dialTimeout
        except (OSError, TimeoutError):
            raise ForwardRefused(refused_message(port, self.pod_id)) from None
