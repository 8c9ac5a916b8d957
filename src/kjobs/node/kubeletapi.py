"""The kubelet's read-only HTTP endpoints of a node agent, as `nodes/{name}/proxy/...` reaches them.

Sources (kubernetes/kubernetes v1.32): pkg/kubelet/server/server.go (`InstallDefaultHandlers`: `/healthz` with the
`ping`, `log` and `syncloop` checks, `/pods`, `/stats/summary`, `/metrics/resource`; `InstallDebuggingHandlers`:
`/configz`), pkg/kubelet/server/stats/handler.go and staging/src/k8s.io/kubelet/pkg/apis/stats/v1alpha1/types.go
(the Summary), pkg/kubelet/metrics/collectors/resource_metrics.go (the resource metrics' names, help and labels),
and pkg/kubelet/apis/config/v1beta1 (the KubeletConfiguration field names `/configz` shows).

Served, from what the agent really has: `/healthz[/ping|/log|/syncloop]` `ok`; `/pods` the PodList of the pods
bound to the node as the agent's informer holds them; `/configz` the settings the agent runs with, under
`kubeletconfig`; `/stats/summary` the node's and its running pods' CPU (rate and cumulative core-nanoseconds) and
memory (working set: resident bytes) read from /proc (`kjobs.node.procstats`, the figures `kubectl top` shows);
`/metrics/resource` the same figures as Prometheus text; `/containerLogs/{ns}/{pod}/{container}` is the log of
`pods/log`. Everything else the kubelet serves (`/metrics`, `/metrics/cadvisor`, `/metrics/probes`, `/logs/`,
`/runningpods/`, `/debug/...`, `/checkpoint`, `/exec`...) answers Go's `404 page not found`, as a kubelet does for
what it does not serve; kjobs has no cAdvisor, no system logs directory of its own and no pprof. v1.32's kubelet
serves no `/spec` any more (removed in 1.18), so it is 404 too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, fields, is_dataclass
from typing import Any, Protocol

import orjson

from kjobs.api.timeutil import format_time
from kjobs.api.types import Obj
from kjobs.node import procstats
from kjobs.node.runtime import ContainerRuntime
from kjobs.server.resourcemetrics import Sample

TEXT = b"text/plain; charset=utf-8"
JSON = b"application/json"
NOT_FOUND = (404, TEXT, b"404 page not found\n")
HEALTH_CHECKS = ("ping", "log", "syncloop")
METRICS_CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"

Answer = tuple[int, bytes, bytes]
"""(status, content type, body)."""


class Agent(Protocol):
    name: str
    runtime: ContainerRuntime


class Usage(Protocol):
    def pod_usage(self, pods: Sequence[Obj]) -> dict[str, Sample]: ...

    def node_usage(self, names: Sequence[str]) -> dict[str, Sample]: ...


def _pods(agent: Agent) -> list[Obj]:
    informer = getattr(agent, "pods", None)
    listed = informer.list() if informer is not None and callable(getattr(informer, "list", None)) else []
    return sorted(listed, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"].get("name", "")))


def answer(agent: Agent, usage: Usage, method: str, path: str, *, now: float | None = None) -> Answer | None:
    """The kubelet's answer to `method path` (None: a path the caller serves itself, `/containerLogs/...`)."""
    when = time.time() if now is None else now
    if path == "/healthz" or path in {f"/healthz/{c}" for c in HEALTH_CHECKS}:
        return 200, TEXT, b"ok"
    if path.startswith("/containerLogs/"):
        return None
    handlers = {
        "/pods": lambda: _pod_list(agent),
        "/pods/": lambda: _pod_list(agent),
        "/configz": lambda: _configz(agent),
        "/stats/summary": lambda: _summary(agent, usage, when),
        "/stats/summary/": lambda: _summary(agent, usage, when),
        "/metrics/resource": lambda: _resource_metrics(agent, usage, when),
    }
    handler = handlers.get(path)
    if handler is None:
        return NOT_FOUND
    if method not in ("GET", "HEAD"):
        return 405, TEXT, b"405: Method Not Allowed"
    return handler()


def _pod_list(agent: Agent) -> Answer:
    body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": _pods(agent)}
    return 200, JSON, orjson.dumps(body)


def _duration(seconds: float) -> str:
    from kjobs.node.podstatus import go_duration

    return go_duration(seconds)


_CONFIG_NAMES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "node_status_update_frequency": ("nodeStatusUpdateFrequency", _duration),
    "node_lease_duration_seconds": ("nodeLeaseDurationSeconds", int),
    "eviction_pressure_transition_period": ("evictionPressureTransitionPeriod", _duration),
    "shutdown_grace_period": ("shutdownGracePeriod", _duration),
    "shutdown_grace_period_critical_pods": ("shutdownGracePeriodCriticalPods", _duration),
    "event_record_qps": ("eventRecordQPS", lambda v: int(v) if float(v).is_integer() else v),
    "event_burst": ("eventBurst", int),
    "eviction_max_pod_grace_period": ("evictionMaxPodGracePeriod", int),
}


def _threshold_map(text: str) -> dict[str, str]:
    """`memory.available<100Mi,nodefs.available<10%` -> the configuration's map form."""
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("<")
        if sep and key:
            out[key] = value
    return out


def _configz(agent: Agent) -> Answer:
    """`{"kubeletconfig": {...}}`: the KubeletConfiguration fields kjobs' agent honours, with the values it runs
    with (what a kubelet shows is its whole configuration; fields kjobs has no counterpart for are left out)."""
    settings = getattr(agent, "settings", None)
    config: dict[str, Any] = {}
    if settings is not None and is_dataclass(settings) and not isinstance(settings, type):
        values = asdict(settings)
        names = {f.name for f in fields(settings)}
        config["address"] = values.get("address")
        served = getattr(getattr(agent, "log_server", None), "port", 0)  # the bound port, when 0 asked for any
        if served or values.get("log_port"):
            config["port"] = served or values["log_port"]
        for name, (key, convert) in _CONFIG_NAMES.items():
            if name in names and values.get(name) is not None:
                config[key] = convert(values[name])
        if values.get("eviction_hard"):
            config["evictionHard"] = _threshold_map(str(values["eviction_hard"]))
        if values.get("eviction_soft"):
            config["evictionSoft"] = _threshold_map(str(values["eviction_soft"]))
    machine = getattr(agent, "machine", None)
    max_pods = getattr(machine, "max_pods", None)
    if max_pods is not None:
        config["maxPods"] = max_pods
    config["kind"] = "KubeletConfiguration"
    config["apiVersion"] = "kubelet.config.k8s.io/v1beta1"
    return 200, JSON, orjson.dumps({"kubeletconfig": config})


def _readings(agent: Agent) -> tuple[dict[str, dict[str, int]], dict[int, procstats.Usage]]:
    pids_of = getattr(agent.runtime, "container_pids", None)
    pids: dict[str, dict[str, int]] = pids_of() if callable(pids_of) else {}
    trees = procstats.tree_usage(pid for by_name in pids.values() for pid in by_name.values()) if pids else {}
    return pids, trees


def _cpu(time_: str, cores: float | None, seconds: float) -> Obj:
    cpu: Obj = {"time": time_}
    if cores is not None:
        cpu["usageNanoCores"] = round(cores * 1e9)
    cpu["usageCoreNanoSeconds"] = round(seconds * 1e9)
    return cpu


def _memory(time_: str, working_set: int) -> Obj:
    return {"time": time_, "workingSetBytes": working_set, "rssBytes": working_set}


def _running_pods(agent: Agent, pids: Mapping[str, Mapping[str, int]]) -> list[Obj]:
    return [
        p
        for p in _pods(agent)
        if (p.get("status") or {}).get("phase") == "Running" and p["metadata"].get("uid") in pids
    ]


def _summary(agent: Agent, usage: Usage, now: float) -> Answer:
    """The Summary API (stats/v1alpha1): node and pods, CPU and memory only (see the module note)."""
    stamp = format_time(now)
    node: Obj = {"nodeName": agent.name}
    pids, trees = _readings(agent)
    if pids_known(agent):
        machine = procstats.machine_usage()
        sample = usage.node_usage([agent.name]).get(agent.name)
        node["startTime"] = format_time(procstats.boot_time())
        node["cpu"] = _cpu(stamp, sample.containers[0].cpu if sample else None, machine.cpu_seconds)
        node["memory"] = _memory(stamp, machine.memory_bytes)
        node["memory"].pop("rssBytes")
    pods_out: list[Obj] = []
    running = _running_pods(agent, pids)
    samples = usage.pod_usage(running) if running else {}
    for pod in running:
        meta = pod["metadata"]
        uid = str(meta.get("uid"))
        rates = {c.name: c.cpu for c in (samples[uid].containers if uid in samples else ())}
        containers: list[Obj] = []
        total_cpu, total_memory = 0.0, 0
        total_rate: float | None = 0.0
        for name, pid in sorted(pids.get(uid, {}).items()):
            reading = trees.get(pid)
            if reading is None:
                continue
            rate = rates.get(name)
            total_cpu += reading.cpu_seconds
            total_memory += reading.memory_bytes
            total_rate = None if rate is None or total_rate is None else total_rate + rate
            containers.append(
                {
                    "name": name,
                    "startTime": format_time(reading.started),
                    "cpu": _cpu(stamp, rate, reading.cpu_seconds),
                    "memory": _memory(stamp, reading.memory_bytes),
                }
            )
        if not containers:
            continue
        entry: Obj = {"podRef": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": uid}}
        started = (pod.get("status") or {}).get("startTime")
        if started:
            entry["startTime"] = started
        entry["containers"] = containers
        entry["cpu"] = _cpu(stamp, total_rate, total_cpu)
        entry["memory"] = _memory(stamp, total_memory)
        pods_out.append(entry)
    return 200, JSON, orjson.dumps({"node": node, "pods": pods_out})


def pids_known(agent: Agent) -> bool:
    """Whether the agent's runtime runs processes (the simulated runtime has none, so no figures)."""
    return callable(getattr(agent.runtime, "container_pids", None))


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    inner = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' for k, v in pairs)
    return "{" + inner + "}"


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _resource_metrics(agent: Agent, usage: Usage, now: float) -> Answer:
    """resource_metrics.go's families, with the reading's time (milliseconds) on each sample."""
    del usage
    millis = str(round(now * 1000))
    pids, trees = _readings(agent)
    families: dict[str, tuple[str, str, list[str]]] = {
        "container_cpu_usage_seconds_total": (
            "Cumulative cpu time consumed by the container in core-seconds",
            "counter",
            [],
        ),
        "container_memory_working_set_bytes": ("Current working set of the container in bytes", "gauge", []),
        "container_start_time_seconds": ("Start time of the container since unix epoch in seconds", "gauge", []),
        "node_cpu_usage_seconds_total": ("Cumulative cpu time consumed by the node in core-seconds", "counter", []),
        "node_memory_working_set_bytes": ("Current working set of the node in bytes", "gauge", []),
        "pod_cpu_usage_seconds_total": ("Cumulative cpu time consumed by the pod in core-seconds", "counter", []),
        "pod_memory_working_set_bytes": ("Current working set of the pod in bytes", "gauge", []),
        "resource_scrape_error": ("1 if there was an error while getting container metrics, 0 otherwise", "gauge", []),
    }
    if pids_known(agent):
        machine = procstats.machine_usage()
        families["node_cpu_usage_seconds_total"][2].append(
            f"node_cpu_usage_seconds_total {_number(machine.cpu_seconds)} {millis}"
        )
        families["node_memory_working_set_bytes"][2].append(
            f"node_memory_working_set_bytes {machine.memory_bytes} {millis}"
        )
    for pod in _running_pods(agent, pids):
        meta = pod["metadata"]
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        cpu_total, memory_total, seen = 0.0, 0, False
        for container, pid in sorted(pids.get(str(meta.get("uid")), {}).items()):
            reading = trees.get(pid)
            if reading is None:
                continue
            seen = True
            labels = _labels([("container", container), ("namespace", namespace), ("pod", name)])
            families["container_cpu_usage_seconds_total"][2].append(
                f"container_cpu_usage_seconds_total{labels} {_number(reading.cpu_seconds)} {millis}"
            )
            families["container_memory_working_set_bytes"][2].append(
                f"container_memory_working_set_bytes{labels} {reading.memory_bytes} {millis}"
            )
            families["container_start_time_seconds"][2].append(
                f"container_start_time_seconds{labels} {_number(reading.started)} {millis}"
            )
            cpu_total += reading.cpu_seconds
            memory_total += reading.memory_bytes
        if seen:
            labels = _labels([("namespace", namespace), ("pod", name)])
            families["pod_cpu_usage_seconds_total"][2].append(
                f"pod_cpu_usage_seconds_total{labels} {_number(cpu_total)} {millis}"
            )
            families["pod_memory_working_set_bytes"][2].append(
                f"pod_memory_working_set_bytes{labels} {memory_total} {millis}"
            )
    families["resource_scrape_error"][2].append("resource_scrape_error 0")
    lines: list[str] = []
    for metric, (help_text, kind, samples) in families.items():
        if not samples:  # a family without samples is not written (client_golang)
            continue
        lines.append(f"# HELP {metric} [STABLE] {help_text}")
        lines.append(f"# TYPE {metric} {kind}")
        lines.extend(samples)
    return 200, METRICS_CONTENT_TYPE, ("\n".join(lines) + "\n").encode()
