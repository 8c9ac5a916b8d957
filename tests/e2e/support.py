"""End-to-end helpers: a `LocalCluster` with real process pods and every controller period made short.

Design note: the scenarios in `test_disruptions.py` run the same assembly `kjobs run`/`kjobs up` use
(`kjobs.cluster.LocalCluster`: API service, every controller, node agents running pods as local processes), on
real time. Only the periods and grace times are shortened (through `ClusterSettings`), so a node that stops
heartbeating is Unknown after 2 s (its pods tolerate that for 1 s), pod GC runs every 0.2 s, and so on.
`PodHistory` watches every pod and keeps each version it saw, so a test can assert the final status of a pod
that was deleted meanwhile. Pods that must run until a disruption wait on a gate file (`Gates`) instead of
sleeping for a guessed time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from kjobs.api.errors import ApiError
from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.client.informer import Informer
from kjobs.client.resources import JOBS, NODES, PODS
from kjobs.cluster import ClusterSettings, LocalCluster
from kjobs.node.agent import NodeAgent
from kjobs.server import kubeconfig
from kjobs.server.app import create_app
from kjobs.server.runner import Served, bind, start_in_loop
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from kjobs.testing import embedded
from tests.support import shared_pki

T = TypeVar("T")
DEADLINE = 20.0
"""Seconds any one awaited outcome may take (each scenario expects a few at most)."""
SCENARIO_TIMEOUT = 60.0


def fast_settings(root: Path, *, nodes: int = 2, **node_options: Any) -> ClusterSettings:
    """Cluster settings with every period and grace shortened to (sub)seconds (the pytest plugin's, with pods'
    files kept after a node stops and a 50 ms Job batch)."""
    options: dict[str, Any] = {"forget_pods_on_stop": False, **node_options}
    return embedded.fast_settings(root / "nodes", nodes, job_batch_period=0.05, **options)


def run(scenario: Callable[[], Coroutine[Any, Any, T]], *, timeout: float = SCENARIO_TIMEOUT) -> T:
    """Run one async scenario with an overall bound."""

    async def bounded() -> T:
        return await asyncio.wait_for(scenario(), timeout)

    return asyncio.run(bounded())


async def eventually(check: Callable[[], Any], *, timeout: float = DEADLINE, what: str = "condition") -> Any:
    """Poll a sync or async check until it returns something truthy (returned), within a bounded deadline."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if isinstance(result, Awaitable):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout:g}s")
        await asyncio.sleep(0.05)


class PodHistory:
    """Every version of every pod seen by a watch, by uid (deleted pods included)."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.versions: dict[str, list[Obj]] = {}
        self.deleted: set[str] = set()
        self.informer = Informer(cluster.client, PODS)
        self.informer.add_handler(self._on_pod)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new if new is not None else old
        if pod is None:
            return
        uid = str(pod["metadata"]["uid"])
        self.versions.setdefault(uid, []).append(pod)
        if new is None:
            self.deleted.add(uid)

    async def start(self) -> None:
        self.informer.start()
        await self.informer.synced.wait()

    async def stop(self) -> None:
        await self.informer.stop()

    def of_job(self, job: Obj) -> list[Obj]:
        """The latest version of each pod of `job`, in creation order (the order the watch first saw them)."""
        uid = job["metadata"]["uid"]
        latest = [versions[-1] for versions in self.versions.values()]
        return [p for p in latest if (p["metadata"].get("labels") or {}).get(CONTROLLER_UID_LABEL) == uid]

    def latest(self, uid: str) -> Obj:
        return self.versions[uid][-1]

    def ever(self, uid: str, check: Callable[[Obj], bool]) -> bool:
        """Some version of pod `uid` satisfied `check`."""
        return any(check(p) for p in self.versions.get(uid, []))


class Gates:
    """Files a pod's shell command waits for: the test opens a gate to let a pod finish."""

    def __init__(self, root: Path) -> None:
        self.root = root / "gates"
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path:
        return self.root / name

    def wait(self, name: str) -> str:
        """Shell text that blocks until gate `name` is opened."""
        return f"while [ ! -e {self.path(name)} ]; do sleep 0.05; done"

    def open(self, name: str) -> None:
        self.path(name).touch()

    def first_run(self, name: str) -> str:
        """Shell test true only in the first pod that runs it (it marks the gate on the way)."""
        marker = self.path(f"{name}.ran")
        return f"[ ! -e {marker} ] && touch {marker}"


class Scenario:
    """A started `LocalCluster` on an in-memory store, with a pod history; use as `async with`.

    With `serve`, the same API is also served over HTTPS on loopback (the test PKI: certificate or token required)
    and `kubeconfig` points at it with the admin certificate (for kubectl).
    """

    def __init__(self, root: Path, settings: ClusterSettings, *, serve: bool = False) -> None:
        self.root = root
        admission, features = settings.admission, settings.features
        self.app = create_app(MemoryStore(), clock=time.time, admission=admission, features=features) if serve else None
        self.service = (
            self.app.service
            if self.app is not None
            else ApiService(Storage(MemoryStore()), clock=time.time, admission=admission, features=features)
        )
        self.cluster = LocalCluster(self.service, settings=settings)
        self.client = self.cluster.client
        self.history = PodHistory(self.cluster)
        self.gates = Gates(root)
        self.kubeconfig = root / "kubeconfig"
        self._served: Served | None = None

    async def __aenter__(self) -> Scenario:
        if self.app is not None:
            sock = bind("127.0.0.1", 0)
            pki = shared_pki()
            self._served = await start_in_loop(self.app, sock, pki=pki)
            kubeconfig.write(self.kubeconfig, f"https://127.0.0.1:{sock.getsockname()[1]}", pki=pki)
        await self.cluster.start()
        await self.history.start()
        names = self.cluster.node_names()
        await eventually(lambda: self._nodes_ready(names), what="nodes Ready")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.history.stop()
        await self.cluster.stop()
        if self._served is not None:
            await self._served.stop()

    async def _nodes_ready(self, names: list[str]) -> bool:
        nodes, _ = await self.client.list(NODES, None)
        ready = {n["metadata"]["name"] for n in nodes if node_condition(n, "Ready").get("status") == "True"}
        return ready >= set(names)

    def agent(self, node: str) -> NodeAgent:
        agent: NodeAgent = next(a for a in self.cluster.agents if a.name == node)
        return agent

    async def create_job(self, job: Obj) -> Obj:
        created: Obj = await self.client.create(JOBS, "default", job)
        return created

    async def job(self, job: Obj) -> Obj:
        current: Obj = await self.client.get(JOBS, "default", job["metadata"]["name"])
        return current

    async def finished(self, job: Obj, *, timeout: float = DEADLINE) -> Obj:
        """Wait for the Job's Complete or Failed condition; returns the Job then."""

        async def done() -> Obj | None:
            current = await self.job(job)
            return current if terminal_condition(current) else None

        result: Obj = await eventually(done, timeout=timeout, what=f"job {job['metadata']['name']} finished")
        return result

    async def running_pod(self, job: Obj, *, timeout: float = DEADLINE) -> Obj:
        """The first pod of the Job that is Running (its container started)."""

        def running() -> Obj | None:
            for pod in self.history.of_job(job):
                if phase(pod) == "Running" and pod["metadata"]["uid"] not in self.history.deleted:
                    return pod
            return None

        result: Obj = await eventually(running, timeout=timeout, what="a running pod")
        return result

    async def final_pod(self, uid: str, *, timeout: float = DEADLINE) -> Obj:
        """Pod `uid` once it is terminal (phase Succeeded/Failed), as last seen."""

        def final() -> Obj | None:
            pod = self.history.latest(uid)
            return pod if phase(pod) in ("Succeeded", "Failed") else None

        result: Obj = await eventually(final, timeout=timeout, what=f"pod {uid} terminal")
        return result


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def condition(obj: Obj, kind: str) -> Obj:
    """The `kind` condition of an object's status ({} when absent)."""
    found: Obj = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})
    return found


node_condition = condition


def terminal_condition(job: Obj) -> Obj:
    """The Job's True Complete or Failed condition ({} while it runs)."""
    for kind in ("Complete", "Failed"):
        found = condition(job, kind)
        if found.get("status") == "True":
            return found
    return {}


def disruption(pod: Obj) -> dict[str, Any]:
    """The pod's DisruptionTarget condition reduced to what a user checks (type, status, reason, message)."""
    found = condition(pod, "DisruptionTarget")
    return {key: found.get(key) for key in ("type", "status", "reason", "message")}


def terminated(pod: Obj, container: str = "main") -> Obj:
    """The terminated state of the pod's container ({} when it has none)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            found: Obj = (status.get("state") or {}).get("terminated") or {}
            return found
    return {}


def job_manifest(name: str, command: str, *, template: Obj | None = None, **spec: Any) -> Obj:
    """A Job whose one container `main` runs `sh -c command` (restartPolicy Never)."""
    pod_spec: Obj = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 2,
        "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", command]}],
        **(template or {}),
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": pod_spec}, **spec},
    }


IGNORE_DISRUPTIONS: Obj = {
    "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
}


async def gone(client: Any, resource: Any, namespace: str | None, name: str) -> bool:
    """The object no longer exists."""
    try:
        await client.get(resource, namespace, name)
    except ApiError as exc:
        return exc.code == 404
    return False
