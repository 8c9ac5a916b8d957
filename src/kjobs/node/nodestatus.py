"""The Node object a node agent registers and keeps current: the kubelet's `nodestatus` setters, pure.

Design note: what a Node says about its machine (capacity, nodeInfo, addresses) is probed once into a
`MachineInfo`; everything else is a function of (machine, the agent's state, now, the previous status):
conditions with the kubelet's reasons and messages (`pkg/kubelet/nodestatus/setters.go`), transition times
carried over while a status stays the same, heartbeat times refreshed on every report. The agent only
decides *when* to write; what it writes is decided here, so tests pin every string without an API.
"""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kjobs import __version__
from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj

KUBELET_VERSION = "v1.32.0+kjobs"
"""What `kubectl get nodes` shows under VERSION (the API server reports v1.32.0+kjobs too)."""
MAX_PODS = 110
"""The kubelet's default `maxPods` (`--max-pods`): the Node's capacity and allocatable `pods`."""
HOSTNAME_LABEL = "kubernetes.io/hostname"
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"

READY = "Ready"
MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"

# (type, status) -> (reason, message), as the kubelet's setters write them.
CONDITION_TEXT: dict[tuple[str, str], tuple[str, str]] = {
    (MEMORY_PRESSURE, "False"): ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    (MEMORY_PRESSURE, "True"): ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    (DISK_PRESSURE, "False"): ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    (DISK_PRESSURE, "True"): ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    (PID_PRESSURE, "False"): ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    (PID_PRESSURE, "True"): ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
    (READY, "True"): ("KubeletReady", "kubelet is posting ready status"),
}
STATUS_EVENTS: dict[tuple[str, str], str] = {
    (MEMORY_PRESSURE, "False"): "NodeHasSufficientMemory",
    (MEMORY_PRESSURE, "True"): "NodeHasInsufficientMemory",
    (DISK_PRESSURE, "False"): "NodeHasNoDiskPressure",
    (DISK_PRESSURE, "True"): "NodeHasDiskPressure",
    (PID_PRESSURE, "False"): "NodeHasSufficientPID",
    (PID_PRESSURE, "True"): "NodeHasInsufficientPID",
    (READY, "True"): "NodeReady",
    (READY, "False"): "NodeNotReady",
}
"""(type, new status) -> the event the kubelet's setters record when a condition takes that status
(pkg/kubelet/nodestatus/setters.go), all `Normal`, worded by `status_event_message`."""
NOT_READY_REASON = "KubeletNotReady"
SHUTTING_DOWN_MESSAGE = "node is shutting down"
"""The Ready=False message during graceful node shutdown (`nodeshutdown` manager's ShutdownStatus)."""

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm"}


def micro_time(seconds: float) -> str:
    """A `MicroTime` (Lease renewTime, Event eventTime): RFC 3339 with microseconds, UTC."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _os_image() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return f"{platform.system()} {platform.release()}".strip()


@dataclass(frozen=True)
class MachineInfo:
    """What the Node reports about the machine: capacity and the nodeInfo fields every client requires."""

    cpu_cores: int = 1
    memory_bytes: int = 1 << 30
    ephemeral_storage_bytes: int = 10 << 30
    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    kernel_version: str = ""
    os_image: str = ""
    operating_system: str = "linux"
    architecture: str = "amd64"
    extra_labels: dict[str, str] = field(default_factory=dict)
    max_pods: int = MAX_PODS
    """The kubelet's `maxPods`: not a machine fact, but reported beside them as capacity and allocatable `pods`."""

    @classmethod
    def probe(cls, *, storage_path: str = "/") -> MachineInfo:
        """Read this machine's facts (procfs, /etc, statvfs); missing sources give empty strings, never errors."""
        memory = 0
        for line in _read("/proc/meminfo").splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
                break
        try:
            storage = shutil.disk_usage(storage_path).total
        except OSError:
            storage = 0
        machine_id = _read("/etc/machine-id") or _read("/var/lib/dbus/machine-id")
        return cls(
            cpu_cores=os.cpu_count() or 1,
            memory_bytes=memory or (1 << 30),
            ephemeral_storage_bytes=storage or (10 << 30),
            machine_id=machine_id,
            system_uuid=_read("/sys/class/dmi/id/product_uuid") or machine_id,
            boot_id=_read("/proc/sys/kernel/random/boot_id"),
            kernel_version=platform.release(),
            os_image=_os_image(),
            operating_system=platform.system().lower() or "linux",
            architecture=_ARCH.get(platform.machine().lower(), platform.machine().lower() or "amd64"),
        )


def _kibibytes(value: int) -> str:
    """Bytes as the kubelet prints cadvisor's memory (whole KiB, BinarySI: `16303412Ki`)."""
    return f"{value // 1024}Ki"


def capacity(machine: MachineInfo) -> Obj:
    """`status.capacity`: cpu cores, memory, pods, ephemeral-storage (machine totals)."""
    return {
        "cpu": str(machine.cpu_cores),
        "ephemeral-storage": _kibibytes(machine.ephemeral_storage_bytes),
        "memory": _kibibytes(machine.memory_bytes),
        "pods": str(machine.max_pods),
    }


def allocatable(machine: MachineInfo, *, memory_reserved_bytes: int = 0) -> Obj:
    """`status.allocatable`: capacity minus the hard eviction threshold for memory (nothing else reserved)."""
    result = capacity(machine)
    result["memory"] = _kibibytes(max(machine.memory_bytes - memory_reserved_bytes, 0))
    return result


def node_info(machine: MachineInfo) -> Obj:
    """`status.nodeInfo` with every field the Python client requires."""
    return {
        "machineID": machine.machine_id,
        "systemUUID": machine.system_uuid,
        "bootID": machine.boot_id,
        "kernelVersion": machine.kernel_version,
        "osImage": machine.os_image,
        "containerRuntimeVersion": f"kjobs://{__version__}",
        "kubeletVersion": KUBELET_VERSION,
        "kubeProxyVersion": "",
        "operatingSystem": machine.operating_system,
        "architecture": machine.architecture,
    }


def node_labels(name: str, machine: MachineInfo) -> dict[str, str]:
    """The labels the kubelet sets on its Node."""
    return {
        "beta.kubernetes.io/arch": machine.architecture,
        "beta.kubernetes.io/os": machine.operating_system,
        ARCH_LABEL: machine.architecture,
        HOSTNAME_LABEL: name,
        OS_LABEL: machine.operating_system,
        **machine.extra_labels,
    }


@dataclass(frozen=True)
class NodeState:
    """What the agent currently knows that shows in its Node's conditions."""

    memory_pressure: bool = False
    shutting_down: bool = False


def _condition(ctype: str, status: str, reason: str, message: str, now: float, previous: list[Obj]) -> Obj:
    stamp = format_time(now)
    transition = stamp
    for old in previous:
        if old.get("type") == ctype and old.get("status") == status and old.get("lastTransitionTime"):
            transition = str(old["lastTransitionTime"])
    return {
        "type": ctype,
        "status": status,
        "lastHeartbeatTime": stamp,
        "lastTransitionTime": transition,
        "reason": reason,
        "message": message,
    }


def conditions(state: NodeState, now: float, previous: list[Obj] | None = None) -> list[Obj]:
    """MemoryPressure, DiskPressure, PIDPressure and Ready, in the kubelet's order, heartbeat = `now`."""
    before = previous or []
    result = []
    for ctype, on in ((MEMORY_PRESSURE, state.memory_pressure), (DISK_PRESSURE, False), (PID_PRESSURE, False)):
        status = "True" if on else "False"
        reason, message = CONDITION_TEXT[(ctype, status)]
        result.append(_condition(ctype, status, reason, message, now, before))
    if state.shutting_down:
        result.append(_condition(READY, "False", NOT_READY_REASON, SHUTTING_DOWN_MESSAGE, now, before))
    else:
        reason, message = CONDITION_TEXT[(READY, "True")]
        result.append(_condition(READY, "True", reason, message, now, before))
    return result


def status_events(before: list[Obj], after: list[Obj]) -> list[str]:
    """The events of the conditions in `after` whose status differs from `before`'s (a condition `before` lacks
    counts as Unknown, as the setters start a new one), in `after`'s order: a new node gets one per condition."""
    old = {c.get("type"): c.get("status") for c in before}
    found = []
    for condition in after:
        ctype, status = condition.get("type"), condition.get("status")
        event = STATUS_EVENTS.get((str(ctype), str(status)))
        if event is not None and old.get(ctype) != status:
            found.append(event)
    return found


def status_event_message(node: str, event: str) -> str:
    """The message of a node status event (the kubelet's `recordNodeStatusEvent`)."""
    return f"Node {node} status is now: {event}"


def node_status(
    machine: MachineInfo,
    state: NodeState,
    now: float,
    *,
    name: str,
    previous: Obj | None = None,
    memory_reserved_bytes: int = 0,
    address: str = "127.0.0.1",
    kubelet_port: int = 0,
    runtime_handlers: list[Obj] | None = None,
) -> Obj:
    """The whole `status` of the agent's Node; `kubelet_port` is where its logs are served (0: nowhere);
    `runtime_handlers` what the runtime reported of its handlers (`kjobs.node.recursive_read_only`; None: nothing
    yet, then the field is left out as the kubelet's `RuntimeHandlers` setter leaves it before the runtime is up)."""
    before = previous or {}
    status: Obj = {
        "capacity": capacity(machine),
        "allocatable": allocatable(machine, memory_reserved_bytes=memory_reserved_bytes),
        "conditions": conditions(state, now, before.get("conditions") or []),
        "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
        "nodeInfo": node_info(machine),
    }
    if runtime_handlers is not None:
        status["runtimeHandlers"] = runtime_handlers
    return status


def new_node(
    name: str,
    machine: MachineInfo,
    state: NodeState,
    now: float,
    *,
    memory_reserved_bytes: int = 0,
    runtime_handlers: list[Obj] | None = None,
) -> Obj:
    """The Node the agent registers when none exists."""
    status = node_status(
        machine, state, now, name=name, memory_reserved_bytes=memory_reserved_bytes, runtime_handlers=runtime_handlers
    )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels(name, machine)},
        "spec": {},
        "status": status,
    }
