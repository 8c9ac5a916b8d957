"""`AgentUsage`: the figures of `metrics.k8s.io` (`kjobs.server.resourcemetrics`) from the agents of this process.

A kubelet serves its pods' and its node's usage (`/stats/summary`, `/metrics/resource`) and metrics-server scrapes
it; here the API server asks the agents running in its own process directly, when a request comes. A runtime that
knows its containers' processes (`ProcessRuntime.container_pids`) gives figures read from /proc
(`kjobs.node.procstats`); the simulated runtime has no processes, so its pods and nodes have none and are left out
of the answer, as metrics-server leaves out what it could not scrape. Agents joined from another process
(`kjobs node join`) are left out the same way: their endpoint (`kjobs.node.logserver`) serves logs only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from kjobs.api.types import Obj
from kjobs.node import procstats
from kjobs.node.runtime import ContainerRuntime
from kjobs.server.resourcemetrics import ContainerUsage, Sample

_MACHINE = ("machine",)


class _Agent(Protocol):
    name: str
    runtime: ContainerRuntime


def _pids_of(runtime: ContainerRuntime) -> dict[str, dict[str, int]] | None:
    pids = getattr(runtime, "container_pids", None)
    return pids() if callable(pids) else None


class AgentUsage:
    """Reads the usage of the pods and nodes of `agents` (a live mapping: agents added later are seen)."""

    def __init__(self, agents: Mapping[str, _Agent], *, clock: Callable[[], float] = time.time) -> None:
        self._agents = agents
        self._clock = clock
        self._rates = procstats.CpuRates()
        self._primed = False

    def prime(self) -> None:
        """Take a first reading of the machine (when a process agent is added), so the first `kubectl top node`
        reports the rate since then rather than since boot."""
        if not self._primed:
            self._primed = True
            self._rates.rate(_MACHINE, self._clock(), procstats.machine_usage())

    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]:
        """Figures of the pods whose agent here runs their containers as processes, by uid."""
        all_pids: dict[str, dict[str, int]] = {}
        for agent in list(self._agents.values()):
            all_pids.update(_pids_of(agent.runtime) or {})
        wanted: list[tuple[Obj, dict[str, int]]] = []
        for pod in pods:
            uid = str(pod["metadata"].get("uid") or "")
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            if node in self._agents and uid in all_pids:
                wanted.append((pod, all_pids[uid]))
        if not wanted:
            return {}
        now = self._clock()
        trees = procstats.tree_usage(pid for _, pids in wanted for pid in pids.values())
        result: dict[str, Sample] = {}
        timestamp, window = now, 0.0
        for pod, pids in wanted:
            uid = str(pod["metadata"]["uid"])
            containers = []
            for container in (pod.get("spec") or {}).get("containers") or []:
                name = str(container.get("name") or "")
                pid = pids.get(name)
                usage = trees.get(pid) if pid is not None else None
                if usage is None:
                    continue
                rate = self._rates.rate((uid, name, pid), now, usage)
                window = max(window, rate.window)
                containers.append(ContainerUsage(name, rate.cores, usage.memory_bytes))
            if containers:
                result[uid] = Sample(timestamp, window, tuple(containers))
        self._rates.keep(
            [_MACHINE] + [(uid, name, pid) for uid, pids in all_pids.items() for name, pid in pids.items()]
        )
        return result

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]:
        """The machine's figures for each named node whose agent here runs processes (see `kjobs.node.procstats`)."""
        local = [n for n in names if n in self._agents and _pids_of(self._agents[n].runtime) is not None]
        if not local:
            return {}
        now = self._clock()
        usage = procstats.machine_usage()
        rate = self._rates.rate(_MACHINE, now, usage)
        sample = Sample(rate.timestamp, rate.window, (ContainerUsage("", rate.cores, usage.memory_bytes),))
        return dict.fromkeys(local, sample)
