"""Cluster DNS names of headless Services and their pods, written into the pods' hosts files and kept current.

Design note: in a cluster, CoreDNS's kubernetes plugin (coredns/coredns plugin/kubernetes/kubernetes.go
`Records`, `findServices`, `endpointHostname`) answers, for a headless Service (`clusterIP: None`) with a
selector, `<svc>.<ns>.svc.<zone>` with the addresses of its ready endpoints, and `<hostname>.<svc>.<ns>.svc.<zone>`
for each ready endpoint that carries a hostname — which the endpoints controllers set when the pod's
`spec.hostname` is set and its `spec.subdomain` names the Service (staging/src/k8s.io/endpointslice/util
`ShouldSetHostname`). A pod's resolv.conf search path (`<ns>.svc.<zone> svc.<zone> <zone>`,
pkg/kubelet/network/dns/dns.go `generateSearchesForDNSClusterFirst`) lets `example-job-0.headless-svc` resolve.

kjobs has no DNS server, and every pod's IP is this machine's loopback: so the node agent writes these names into
the hosts file of each pod that has one (`kjobs.node.hostsfile`), with every short form the search path would
complete, and rewrites the files in place as pods and Services come and go. The records are computed from a watch of
the namespace's Services, started when the first pod with a hosts file runs on the node in that namespace and
stopped with the last, and — only while the namespace has a headless Service — a watch of its pods (on every
node), kept as `ShouldPodBeInEndpoints` keeps them: not terminal, with an IP, not terminating unless
`publishNotReadyAddresses`; ready, or the Service publishes not-ready addresses. Pods, not Endpoints: the endpoints
controllers run only in `kjobs up`. Pods without a hosts file pay nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import Informer
from kjobs.client.resources import PODS, SERVICES
from kjobs.clock import Clock
from kjobs.job.pods import is_ready
from kjobs.node.hostsfile import CLUSTER_DOMAIN, write_in_place

log = logging.getLogger(__name__)

LINGER_SECONDS = 30.0
"""How long a name stays after its pod left the Service's endpoints or ended: the TTL of an answer in CoreDNS's
cache (`cache 30` in kubeadm's Corefile). Without it a Job like the docs' races: its last pod pings every name
(its own from its own hosts file) within milliseconds and ends before the others' next try — or before its Ready
was ever published — and they would never resolve it."""
BATCH_SECONDS = 0.05
MAX_BATCH_SECONDS = 1.0
FILES_PER_BATCH_STEP = 50


def batch_seconds(files: int) -> float:
    """How long changes are gathered before `files` hosts files are rewritten: 50 ms, one more 50 ms per 50 files,
    at most 1 s — a 1,000-pod Job that names its pods rewrites each file about once a second while its pods come
    and go, not once per pod."""
    return min(MAX_BATCH_SECONDS, BATCH_SECONDS * (1 + files // FILES_PER_BATCH_STEP))


RECORDS_HEADER = "\n# Cluster DNS names of headless Services (kjobs: no DNS server, so they are written here).\n"


def _selects(selector: object, labels: dict[str, str]) -> bool:
    if not isinstance(selector, dict) or not selector:
        return False  # a Service without a selector has no endpoints from pods
    return all(labels.get(k) == v for k, v in selector.items())


def ended_at(pod: Obj) -> float | None:
    """When a pod in its final phase ended (its last container's `finishedAt`); None for one that has not."""
    status = pod.get("status") or {}
    if status.get("phase") not in ("Succeeded", "Failed"):
        return None
    finished = [
        str(s["state"]["terminated"]["finishedAt"])
        for s in status.get("containerStatuses") or ()
        if ((s.get("state") or {}).get("terminated") or {}).get("finishedAt")
    ]
    return max(parse_time(f) for f in finished) if finished else None


def _in_endpoints(pod: Obj, publish_not_ready: bool, now: float | None) -> bool:
    """`ShouldPodBeInEndpoints` and the ready-address rule together: an address CoreDNS would serve — and, given
    `now`, a pod that ended less than `LINGER_SECONDS` ago (its Ready may never have been published: a container
    that ends within the status round trip is reported once, already ended)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        ended = ended_at(pod) if now is not None else None
        return ended is not None and now is not None and now - ended < LINGER_SECONDS and bool(status.get("podIP"))
    if not status.get("podIP"):
        return False
    if (pod.get("metadata") or {}).get("deletionTimestamp") and not publish_not_ready:
        return False
    return publish_not_ready or is_ready(pod)


def _names(*labels: str, zone: str) -> list[str]:
    """A name as a client in the namespace may ask it: fully qualified and each search-path short form."""
    full = ".".join(labels)
    return [f"{full}.svc.{zone}", f"{full}.svc", full, ".".join(labels[:-1])]


def render(lines: list[str]) -> str:
    """The part of a hosts file below the kubelet's: nothing when there are no records."""
    return RECORDS_HEADER + "\n".join(lines) + "\n" if lines else ""


def records(
    namespace: str, services: list[Obj], pods: list[Obj], zone: str = CLUSTER_DOMAIN, *, now: float | None = None
) -> list[str]:
    """The hosts-file lines for the headless Services of `namespace` (none when it has none); given `now`, a pod
    that ended less than `LINGER_SECONDS` before it keeps its names."""
    lines: list[str] = []
    headless = [s for s in services if (s.get("spec") or {}).get("clusterIP") == "None"]
    for service in sorted(headless, key=lambda s: str(s["metadata"].get("name"))):
        name = str(service["metadata"].get("name"))
        spec = service.get("spec") or {}
        publish = spec.get("publishNotReadyAddresses") is True
        ips: list[str] = []
        hosts: list[tuple[str, str]] = []
        for pod in pods:
            meta = pod.get("metadata") or {}
            if meta.get("namespace") != namespace or not _selects(spec.get("selector"), meta.get("labels") or {}):
                continue
            if not _in_endpoints(pod, publish, now):
                continue
            ip = str(pod["status"]["podIP"])
            if ip not in ips:
                ips.append(ip)
            pod_spec = pod.get("spec") or {}
            if pod_spec.get("hostname") and pod_spec.get("subdomain") == name:
                hosts.append((str(pod_spec["hostname"]), ip))
        for ip in ips:
            lines.append("\t".join([ip, *_names(name, namespace, zone=zone)]))
        for hostname, ip in sorted(set(hosts)):
            lines.append("\t".join([ip, *_names(hostname, name, namespace, zone=zone)]))
    return lines


@dataclass(eq=False, repr=False)
class _HostsFile:
    namespace: str
    path: str
    base: str
    written: str = ""


class ClusterRecords:
    """The hosts files of a node's pods and the watches that keep their DNS lines current."""

    def __init__(self, client: Client, *, clock: Clock) -> None:
        self._client = client
        self._clock = clock
        self._files: dict[str, _HostsFile] = {}
        self._services: dict[str, Informer] = {}
        self._pods: dict[str, Informer] = {}
        """Per namespace that has a headless Service: its pods (on every node), the records' endpoints."""
        self._users: dict[str, int] = {}
        self._due: set[str] = set()
        self._lingering: dict[str, dict[str, float]] = {}
        """Per namespace, lines no longer in the records and until when they stay (`LINGER_SECONDS`)."""
        self._shown: dict[str, list[str]] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.TimerHandle] = set()

    def register(self, uid: str, namespace: str, path: str, base: str) -> None:
        """Write pod `uid`'s hosts file (the kubelet's part `base`, then the namespace's records) and keep it
        current from now on. Again for a pod already registered: its file is rewritten."""
        known = self._files.get(uid)
        if known is None:
            known = self._files[uid] = _HostsFile(namespace, path, base)
            self._watch(namespace)
        known.base = base
        known.written = ""
        self._write(known, self.records(namespace))

    def release(self, uid: str) -> None:
        """Pod `uid` runs here no more: its file is left as it is; the namespace's watches stop with its last pod."""
        known = self._files.pop(uid, None)
        if known is None:
            return
        users = self._users.get(known.namespace, 0) - 1
        if users > 0:
            self._users[known.namespace] = users
            return
        self._users.pop(known.namespace, None)
        self._stop(self._services.pop(known.namespace, None))
        self._stop(self._pods.pop(known.namespace, None))
        self._lingering.pop(known.namespace, None)
        self._shown.pop(known.namespace, None)

    def records(self, namespace: str) -> str:
        """The DNS lines of `namespace`'s headless Services as last watched, and those that left them less than
        `LINGER_SECONDS` ago."""
        informer = self._services.get(namespace)
        pods = self._pods.get(namespace)
        now = self._clock.now()
        members = pods.list(namespace) if informer and pods else []
        current = records(namespace, informer.list(namespace), members, now=now) if informer and pods else []
        ends = [e + LINGER_SECONDS - now for e in (ended_at(p) for p in members) if e is not None]
        if any(0 < left <= LINGER_SECONDS for left in ends):
            self._refresh_later(namespace, min(left for left in ends if left > 0))
        lingering = self._lingering.setdefault(namespace, {})
        for line in self._shown.get(namespace, ()):
            if line not in current and line not in lingering:
                lingering[line] = now + LINGER_SECONDS
                self._refresh_later(namespace, LINGER_SECONDS)
        for line, until in list(lingering.items()):
            if until <= now or line in current:
                del lingering[line]
        shown = current + [line for line in lingering if line not in current]
        self._shown[namespace] = shown
        return render(shown)

    def watched(self) -> dict[str, list[str]]:
        """What is watched per namespace (`services`, `pods`), for tests."""
        return {ns: ["services", *(["pods"] if ns in self._pods else [])] for ns in sorted(self._services)}

    async def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()
        for uid in list(self._files):
            self.release(uid)
        for task in list(self._stopping):
            with contextlib.suppress(Exception):
                await task

    def _watch(self, namespace: str) -> None:
        self._users[namespace] = self._users.get(namespace, 0) + 1
        if namespace in self._services:
            return
        informer = Informer(self._client, SERVICES, namespace=namespace, clock=self._clock)
        informer.add_handler(lambda old, new: self._services_changed(namespace))
        self._services[namespace] = informer
        informer.start()

    def _services_changed(self, namespace: str) -> None:
        """A namespace's pods are watched only while it has a headless Service: most have none."""
        services = self._services.get(namespace)
        if services is None:
            return
        headless = any((s.get("spec") or {}).get("clusterIP") == "None" for s in services.list(namespace))
        if headless and namespace not in self._pods:
            pods = Informer(self._client, PODS, namespace=namespace, clock=self._clock)
            pods.add_handler(lambda old, new: self._refresh_soon(namespace))
            self._pods[namespace] = pods
            pods.start()
        elif not headless:
            self._stop(self._pods.pop(namespace, None))
        self._refresh_soon(namespace)

    def _stop(self, informer: Informer | None) -> None:
        if informer is None:
            return
        task = asyncio.ensure_future(informer.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def _refresh_soon(self, namespace: str) -> None:
        """Recompute once per burst of changes (a Job's pods start together): every file of the namespace is
        rewritten at each, so the more files, the longer a burst is gathered (`batch_seconds`)."""
        if namespace in self._due:
            return
        self._due.add(namespace)
        files = sum(1 for known in self._files.values() if known.namespace == namespace)
        asyncio.get_running_loop().call_later(batch_seconds(files), self._refresh, namespace)

    def _refresh_later(self, namespace: str, delay: float) -> None:
        loop = asyncio.get_running_loop()
        handle = loop.call_later(delay + 0.01, self._refresh_soon, namespace)
        self._timers.add(handle)
        loop.call_later(delay + 0.02, self._timers.discard, handle)

    def _refresh(self, namespace: str) -> None:
        self._due.discard(namespace)
        extra = self.records(namespace)
        for known in list(self._files.values()):
            if known.namespace == namespace:
                self._write(known, extra)

    def _write(self, known: _HostsFile, extra: str) -> None:
        content = known.base + extra
        if content == known.written:
            return
        try:
            write_in_place(known.path, content)
            known.written = content
        except OSError as exc:  # the pod's directory is gone (it was forgotten meanwhile)
            log.debug("hosts file %s not written: %s", known.path, exc)
