"""`KjobsCluster`: the cluster a test holds (the `kjobs_cluster` fixture), in-process or another one.

Every helper is synchronous, for tests that use the blocking official client, and runs its work on the
cluster's `Background` loop through a kjobs `Client`: a `LocalClient` of the in-process cluster, or an
`HttpClient` of another cluster's kubeconfig (`--kjobs-kubeconfig`). Disruptions go through the real
components: the API ones are `kjobs.disrupt.Disruptor`'s (what `kjobs run --disrupt` does), the node ones
`kjobs.testing.faults` (in-process only: they need the node agent's hands).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.manifest import load_manifests, parse_manifests
from kjobs.api.types import Obj
from kjobs.client import resources as R
from kjobs.client.base import Client
from kjobs.client.resources import ResourceRef
from kjobs.testing import faults, tempdirs
from kjobs.testing.background import Background
from kjobs.testing.describe import describe, elapsed, job_finished, pod_finished
from kjobs.testing.embedded import ClusterOptions, Embedded

RESOURCES: tuple[ResourceRef, ...] = (
    R.PODS, R.NODES, R.EVENTS, R.NAMESPACES, R.JOBS, R.LEASES, R.PDBS, R.PRIORITY_CLASSES, R.CONFIG_MAPS, R.SECRETS,
    R.SERVICE_ACCOUNTS,
)  # fmt: skip
CLEANED: tuple[ResourceRef, ...] = (
    R.JOBS, R.PODS, R.PDBS, R.PRIORITY_CLASSES, R.CONFIG_MAPS, R.SECRETS, R.SERVICE_ACCOUNTS, R.NAMESPACES,
)  # fmt: skip
"""What a test's cleanup removes when the test created it (in this order)."""
REMOTE_POLL = 0.1
"""Seconds between two reads of another cluster's objects while a helper waits (in-process: watch events)."""
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"

Condition = str | Callable[[Obj], bool]


class UnsupportedFault(RuntimeError):
    """A fault that needs the in-process cluster's components, asked of another cluster."""


class WaitFailed(TimeoutError):
    """A wait that can no longer succeed: the object reached a state it never leaves (a finished Job, a pod in a
    terminal phase), so the helper says so at once instead of waiting out its timeout. A `TimeoutError`, so code
    that expected the timeout still catches it."""


def resource(kind: str) -> ResourceRef:
    """`job`, `jobs`, `Job` → the Jobs resource (the names kubectl accepts, for the resources kjobs serves)."""
    wanted = kind.lower()
    for ref in RESOURCES:
        if wanted in (ref.plural, ref.kind.lower()):
            return ref
    raise ValueError(f"unknown kind {kind!r}: choose from {', '.join(r.kind for r in RESOURCES)}")


def _resource_of(obj: Obj) -> ResourceRef:
    for ref in RESOURCES:
        if ref.api_version == obj.get("apiVersion") and ref.kind == obj.get("kind"):
            return ref
    raise ValueError(f"kjobs does not serve {obj.get('apiVersion')}/{obj.get('kind')}")


def matches(obj: Obj, condition: Condition) -> bool:
    """`condition` as `kubectl wait --for` reads it: `condition=TYPE` (or bare `TYPE`; `A|B` for either) holds
    when that condition's status is True; `phase=PHASE` matches status.phase; a callable decides itself."""
    if callable(condition):
        return bool(condition(obj))
    key, _, value = condition.partition("=")
    if not value:
        key, value = "condition", key
    wanted = set(value.split("|"))
    status = obj.get("status") or {}
    if key == "phase":
        return status.get("phase") in wanted
    if key != "condition":
        raise ValueError(f"unknown condition {condition!r}: use condition=TYPE, phase=PHASE, delete or a callable")
    return any(c.get("type") in wanted and c.get("status") == "True" for c in status.get("conditions") or ())


def _name_of(pod: Obj | str) -> str:
    return pod if isinstance(pod, str) else str(pod["metadata"]["name"])


class KjobsCluster:
    """A test's Job cluster: its kubeconfig, an official client, helpers to apply, wait, read logs, disrupt."""

    def __init__(self, background: Background, client: Client, kubeconfig: Path, embedded: Embedded | None) -> None:
        self._background = background
        self._client = client
        self.kubeconfig = kubeconfig
        """The kubeconfig file (context `kjobs` for an in-process cluster)."""
        self._kubeconfig_files: Path | None = None
        self.embedded = embedded
        """The in-process cluster's components (None for another cluster)."""
        self.disruption_log: list[str] = []
        """What the disruptions did, in `kjobs run --disrupt`'s words."""
        self.disturbed = False
        """A node was drained, tainted, shut down, killed or deleted: a session cluster is remade after the test."""
        self._api_client: Any = None
        self._preemptions = 0
        self._killed: set[str] = set()
        self._before: set[tuple[str, str]] = set()

    # -- making and ending -----------------------------------------------------------------------------------
    @classmethod
    def start(cls, options: ClusterOptions | None = None) -> KjobsCluster:
        """Start an in-process cluster (its own loop thread and temporary directory)."""
        from kjobs.client.local import LocalClient

        workdir = tempdirs.make(tempdirs.CLUSTER_PREFIX)
        embedded = Embedded(options or ClusterOptions(), workdir)
        background = Background(embedded.new_loop())
        try:
            background.run(embedded.start())
        except BaseException:
            background.run(embedded.stop())
            background.close()
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        client = LocalClient(embedded.service, manager="kjobs-pytest", typed=False)
        return cls(background, client, embedded.kubeconfig, embedded)

    @property
    def kubeconfig_files(self) -> Path:
        """A kubeconfig of the same cluster naming the session PKI's files (`client-certificate:`, `client-key:`,
        `certificate-authority:`) rather than carrying them inline: kr8s writes a kubeconfig's inline data to
        three temporary files for every `kr8s.api(...)` and never removes them. Written on first use; another
        cluster's (`--kjobs-kubeconfig`) is its own kubeconfig, as given."""
        if self.embedded is None:
            return self.kubeconfig
        if self._kubeconfig_files is None:
            from kjobs.server import kubeconfig
            from kjobs.testing.embedded import session_pki

            path = self.embedded.workdir / "kubeconfig-files"
            kubeconfig.write(path, self.embedded.url, pki=session_pki(), files=True)
            self._kubeconfig_files = path
        return self._kubeconfig_files

    @classmethod
    def connect(cls, kubeconfig: str | Path) -> KjobsCluster:
        """Use the cluster of another kubeconfig (`kjobs up`, kind, a real cluster)."""
        from kjobs.client import kubeconfig as config
        from kjobs.client.http import HttpClient

        connection = config.load(kubeconfig)
        background = Background()

        async def make() -> Client:
            return HttpClient(connection, user_agent="kjobs-pytest")

        return cls(background, background.run(make()), Path(kubeconfig), None)

    def stop(self) -> None:
        """Close the official client, stop the cluster (in-process) and its loop thread."""
        if self._api_client is not None:
            self._api_client.close()
            self._api_client = None
        try:
            if self.embedded is not None:
                self._background.run(self.embedded.stop())
            else:
                self._background.run(self._client.close())
        finally:
            self._background.close()
            if self.embedded is not None:
                shutil.rmtree(self.embedded.workdir, ignore_errors=True)

    def __enter__(self) -> KjobsCluster:
        """`with KjobsCluster.start(...) as cluster:`, for a fixture of the user's own scope (module, class)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self, coro: Any, timeout: float | None = 60.0) -> Any:
        """Run a helper's work on the cluster's loop, the test thread blocked on it (so, on virtual time, the
        test waits for the cluster: `kjobs.testing.virtual`'s rule); `timeout` is wall time."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        if self.embedded is not None:
            coro = self.embedded.wait(coro)
        started = self._virtual_now()
        try:
            return self._background.run(coro, timeout)
        except (ApiError, faults.FaultError, WaitFailed) as exc:
            # the answer the test gets, not the cluster thread's frames it was raised in
            raise exc.with_traceback(None) from None
        except TimeoutError as exc:
            if exc.args:
                raise
            ran = self._virtual_now()
            virtual = "" if ran is None or started is None else f" (virtual time ran {elapsed(ran - started)})"
            raise TimeoutError(f"the cluster did not finish the helper's work in {timeout}s{virtual}") from None

    async def _next_change(self, ref: ResourceRef, ns: str | None, rv: str, **selectors: Any) -> None:
        """Wait for the next change to `ref` objects after list version `rv`: a watch event in-process (no timer,
        so virtual time jumps straight to what changes them), a poll of another cluster."""
        if self.embedded is None:
            await asyncio.sleep(REMOTE_POLL)
            return
        stream = self._client.watch(ref, ns, resource_version=rv, **selectors)
        try:
            await anext(stream)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    def _until(
        self,
        ref: ResourceRef,
        ns: str | None,
        check: Callable[[list[Obj]], Obj | None],
        timeout: float,
        failure: Callable[[list[Obj], str], str],
        hopeless: Callable[[list[Obj]], Awaitable[str | None]] | None = None,
        **selectors: Any,
    ) -> Obj:
        """List until `check` returns an object, re-listing after each change; `WaitFailed` as soon as `hopeless`
        says why it never will; TimeoutError (with `failure`'s account of the last list, and how far virtual time
        ran) after `timeout` seconds of wall time."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        seen: list[list[Obj]] = [[]]
        started = self._virtual_now()

        async def wait() -> Obj:
            while True:
                items, rv = await self._client.list(ref, ns, **selectors)
                seen[0] = items
                found = check(items)
                if found is not None:
                    return found
                why = None if hopeless is None else await hopeless(items)
                if why is not None:
                    raise WaitFailed(why)
                await self._next_change(ref, ns, rv, **selectors)

        try:
            result: Obj = self._run(wait(), timeout)
        except WaitFailed:
            raise
        except TimeoutError:
            ran = self._virtual_now()
            virtual = "" if ran is None or started is None else f" (virtual time ran {elapsed(ran - started)})"
            raise TimeoutError(failure(seen[0], virtual)) from None
        return result

    def _virtual_now(self) -> float | None:
        """The virtual clock of a simulated cluster (None on wall time)."""
        if self.embedded is None or self.embedded.time_gate is None:
            return None
        return float(self.embedded.clock.now())

    async def _job_pods(self, job: str, ns: str | None) -> list[Obj]:
        items, _ = await self._client.list(R.PODS, ns, label_selector=f"{JOB_NAME_LABEL}={job}")
        return list(items)

    def _describe_now(self, kind: str, name: str, ns: str | None) -> str:
        """The object's state for a failure message, read as a plain request (virtual time stands still)."""

        async def read() -> str:
            ref = resource(kind)
            items, _ = await self._client.list(ref, ns, field_selector=f"metadata.name={name}")
            obj = items[0] if items else None
            pods = await self._job_pods(name, ns) if ref is R.JOBS and obj is not None else []
            return describe(ref.kind, obj, pods)

        try:
            text: str = self._background.run(read(), 10.0)
        except (ApiError, TimeoutError) as exc:
            return f"(could not read it: {exc})"
        return text

    # -- clients -----------------------------------------------------------------------------------------------
    @property
    def api_client(self) -> Any:
        """The official `kubernetes` client's `ApiClient` for this cluster (made on first use)."""
        if self._api_client is None:
            from kubernetes import config

            self._api_client = config.new_client_from_config(config_file=str(self.kubeconfig))  # type: ignore[no-untyped-call]
        return self._api_client

    @property
    def clock(self) -> Any:
        """The clock of an in-process cluster (a `FakeClock` on the simulated runtime)."""
        if self.embedded is None:
            raise UnsupportedFault("another cluster's clock is its own")
        return self.embedded.clock

    def advance(self, seconds: float, timeout: float = 60.0) -> None:
        """Move a simulated cluster's virtual time forward by `seconds` (with `virtual_time="manual"`). Every
        periodic component runs on the way (node heartbeats, controllers' resyncs: about 10^4 virtual seconds a
        wall second), so a long jump costs wall time; TimeoutError, saying how far it got, after `timeout`."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        if self.embedded is None:
            raise UnsupportedFault("virtual time needs the in-process cluster")
        self._run(self.embedded.advance(seconds), timeout)

    # -- objects -------------------------------------------------------------------------------------------
    def apply(self, manifest: Obj | list[Obj] | str | Path, namespace: str = "default") -> Any:
        """Create each object of `manifest` (a dict, a list, YAML/JSON text or a file path), or merge it onto
        the object of that name when it exists (a JSON merge patch); returns the object (a list for several)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        if isinstance(manifest, Path) or (
            isinstance(manifest, str) and "\n" not in manifest and Path(manifest).is_file()
        ):
            objs = load_manifests(manifest)
        elif isinstance(manifest, str):
            objs = parse_manifests(manifest)
        elif isinstance(manifest, dict):
            objs = [manifest]
        else:
            objs = list(manifest)

        async def apply_all() -> list[Obj]:
            result = []
            for obj in objs:
                ref = _resource_of(obj)
                ns = str((obj.get("metadata") or {}).get("namespace") or namespace) if ref.namespaced else None
                name = str((obj.get("metadata") or {}).get("name") or "")
                exists = bool(name)  # as kubectl apply: read first, then create or patch (generateName: create)
                if exists:
                    try:
                        await self._client.get(ref, ns, name)
                    except ApiError as exc:
                        if exc.code != 404:
                            raise
                        exists = False
                if exists:
                    result.append(await self._client.patch(ref, ns, name, obj, patch_type="merge"))
                else:  # outside the `except`: a refusal is not shown "during handling" of the 404
                    result.append(await self._client.create(ref, ns, obj))
            return result

        applied = self._run(apply_all())
        return applied[0] if len(applied) == 1 else applied

    def get(self, kind: str, name: str, namespace: str = "default") -> Obj:
        """The object as the API has it now (ApiError 404 when there is none)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        ref = resource(kind)
        result: Obj = self._run(self._client.get(ref, namespace if ref.namespaced else None, name))
        return result

    def objects(self, kind: str, namespace: str | None = "default", label_selector: str | None = None) -> list[Obj]:
        """The objects of `kind` (in `namespace`; None: all namespaces)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        ref = resource(kind)
        items, _ = self._run(
            self._client.list(ref, namespace if ref.namespaced else None, label_selector=label_selector)
        )
        return list(items)

    def wait_for(
        self, kind: str, name: str, condition: Condition, timeout: float = 30.0, namespace: str = "default"
    ) -> Obj:
        """Wait until the object matches `condition` (see `matches`; `delete`: until it is gone) and return it
        (for `delete`, the last version seen, `{}` when it was gone at the first look); `WaitFailed` at once when
        a finished Job or a terminal pod cannot match any more; TimeoutError after `timeout` seconds of wall time.
        Both say what the object is (a Job: its conditions, counts and pods)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        ref = resource(kind)
        ns = namespace if ref.namespaced else None
        last: list[Obj] = [{}]

        def check(items: list[Obj]) -> Obj | None:
            if not items:
                return last[0] if condition == "delete" else None
            last[0] = items[0]
            return items[0] if condition != "delete" and matches(items[0], condition) else None

        async def hopeless(items: list[Obj]) -> str | None:
            if not items or callable(condition) or condition == "delete":
                return None
            obj = items[0]
            if ref is R.JOBS:
                done = job_finished(obj)
                if done is None:
                    return None
                pods = await self._job_pods(name, ns)
                return f"Job {name} is {done['type']} and never changes again, so it will not reach {condition!r}: " + (
                    describe("Job", obj, pods)
                )
            if ref is R.PODS and condition.startswith("phase=") and pod_finished(obj):
                return f"pod {name} ended and will not reach {condition!r}: {describe('Pod', obj)}"
            return None

        def failure(items: list[Obj], virtual: str) -> str:
            now = self._describe_now(kind, name, ns) if items else "there is no such object"
            return f"{ref.kind} {name} did not reach {condition!r} in {timeout}s{virtual}: {now}"

        return self._until(ref, ns, check, timeout, failure, hopeless, field_selector=f"metadata.name={name}")

    def pod_of(
        self, job: str, condition: Condition = "phase=Running", timeout: float = 30.0, namespace: str = "default"
    ) -> Obj:
        """Wait until a pod of Job `job` matches `condition` (default: it runs) and return it (the first by name);
        `WaitFailed` at once when the Job has finished and all its pods ended without one matching."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's

        def check(pods: list[Obj]) -> Obj | None:
            found = sorted((p for p in pods if matches(p, condition)), key=lambda p: str(p["metadata"]["name"]))
            return found[0] if found else None

        async def hopeless(pods: list[Obj]) -> str | None:
            if not all(pod_finished(p) for p in pods):
                return None
            items, _ = await self._client.list(R.JOBS, namespace, field_selector=f"metadata.name={job}")
            done = job_finished(items[0]) if items else None
            if done is None:
                return None
            return f"no pod of job {job} is {condition!r}, and the Job is {done['type']}: " + (
                describe("Job", items[0], pods)
            )

        def failure(_: list[Obj], virtual: str) -> str:
            now = self._describe_now("job", job, namespace)
            return f"no pod of job {job} reached {condition!r} in {timeout}s{virtual}: Job {job}: {now}"

        return self._until(
            R.PODS,
            namespace,
            check,
            timeout,
            failure,
            hopeless,
            label_selector=f"{JOB_NAME_LABEL}={job}",
        )

    def logs(self, pod: Obj | str, container: str | None = None, namespace: str = "default") -> str:
        """The container's log (default: the only or first container), as `kubectl logs` prints it."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        from kubernetes import client

        text: str | None = client.CoreV1Api(self.api_client).read_namespaced_pod_log(
            _name_of(pod), namespace, container=container
        )
        return text or ""  # a pod no node runs yet has no log: 204, which the client reads as None

    # -- disruptions through the API (kjobs.disrupt) ----------------------------------------------------------
    def _disruptor(self) -> Any:
        from kjobs.disrupt import Disruptor

        # The cluster's own clock: a simulated cluster's bounded waits (a drain's for its pods to go) run on
        # virtual time, as `kjobs simulate`'s disruptions do, not a wall minute.
        clock = self.embedded.clock if self.embedded is not None else None
        return Disruptor(self._client, list, self.disruption_log.append, clock)

    def _pod(self, pod: Obj | str, namespace: str) -> Obj:
        __tracebackhide__ = True
        return self.get("pod", _name_of(pod), namespace if isinstance(pod, str) else pod["metadata"]["namespace"])

    def drain(self, node: str) -> None:
        """`kubectl drain NODE` (cordon, evict each pod), then `kubectl uncordon` once they are gone."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        self.disturbed = True
        self._run(self._disruptor().drain(node), 120)

    def evict(self, pod: Obj | str, namespace: str = "default") -> None:
        """POST the pod's Eviction (`DisruptionTarget`/`EvictionByEvictionAPI`); ApiError when refused (429)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        current = self._pod(pod, namespace)
        from kjobs.client.resources import PODS

        meta = current["metadata"]
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        }
        self._run(self._client.post_subresource(PODS, meta["namespace"], meta["name"], "eviction", body))

    def taint(
        self, node: str, key: str = "kjobs.io/disruption", value: str = "taint", effect: str = "NoExecute"
    ) -> None:
        """`kubectl taint node NODE KEY=VALUE:EFFECT` (NoExecute → the taint eviction controller,
        `DeletionByTaintManager`); it stays until `untaint`."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        self.disturbed = True
        self._set_taints(
            node,
            lambda taints: [
                *[t for t in taints if t.get("key") != key],
                {"key": key, "value": value, "effect": effect},
            ],
        )

    def untaint(self, node: str, key: str = "kjobs.io/disruption") -> None:
        """`kubectl taint node NODE KEY-`."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        self._set_taints(node, lambda taints: [t for t in taints if t.get("key") != key])

    def _set_taints(self, node: str, change: Callable[[list[Obj]], list[Obj]]) -> None:
        async def patch() -> None:
            current = await self._client.get(R.NODES, None, node)
            taints = change(list((current.get("spec") or {}).get("taints") or ()))
            await self._client.patch(R.NODES, None, node, {"spec": {"taints": taints or None}})

        self._run(patch())

    def preempt(self, pod: Obj | str, namespace: str = "default") -> None:
        """A pod of a higher PriorityClass asks for all CPU of the pod's node: the scheduler preempts it
        (`PreemptionByScheduler`). The pod must request some CPU, or the preemptor fits beside it."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        node = self._pod(pod, namespace)["spec"]["nodeName"]
        disruptor = self._disruptor()
        self._preemptions += 1
        disruptor.number = self._preemptions
        self._run(disruptor.preempt(node))

    def node_shutdown(self, node: str) -> None:
        """Graceful node shutdown (`kjobs node shutdown`): pods end Failed, `TerminationByKubelet`."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        from kjobs.node.shutdown import request_shutdown

        self.disturbed = True
        self._run(request_shutdown(self._client, node))

    # -- node faults (in-process) ------------------------------------------------------------------------------
    def _agent(self, node: str) -> Any:
        __tracebackhide__ = True
        if self.embedded is None:
            raise UnsupportedFault("this fault needs the in-process cluster's node agents, not --kjobs-kubeconfig")
        agent = self.embedded.agents.get(node)
        if agent is None:
            raise faults.FaultError(f"no node {node!r}: the nodes are {', '.join(self.embedded.agents)}")
        return agent

    def kill_node_agent(self, node: str) -> None:
        """The node's agent dies with its pods' processes; the API hears nothing (→ unreachable, taint
        eviction, `DeletionByTaintManager`)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        agent = self._agent(node)
        self.disturbed = True
        if node not in self._killed:
            self._killed.add(node)
            self._run(faults.kill_node_agent(agent))

    def delete_node(self, node: str) -> None:
        """The machine goes, then its Node object (→ pod GC, `DeletionByPodGC`)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        self.disturbed = True
        agent = None
        if self.embedded is not None:
            agent = None if node in self._killed else self._agent(node)
            self._killed.add(node)
        self._run(faults.delete_node(self._client, agent, node))

    def fail_container(
        self, pod: Obj | str, exit_code: int, container: str | None = None, namespace: str = "default"
    ) -> None:
        """Make the pod's running container exit with `exit_code` (waiting, bounded, until it runs); FaultError
        when the pod has ended."""
        __tracebackhide__ = True  # pytest shows the test's line, not the helper's
        started = _container_running(container)
        current = self.wait_for(
            "pod", _name_of(pod), lambda p: started(p) or matches(p, "phase=Succeeded|Failed"), namespace=namespace
        )
        agent = self._agent(current["spec"]["nodeName"])

        async def fail() -> None:
            faults.fail_container(agent, current, container, exit_code)

        self._run(fail())

    # -- between tests of a session cluster -----------------------------------------------------------------
    def _inventory(self) -> set[tuple[str, str]]:
        async def collect() -> set[tuple[str, str]]:
            found: set[tuple[str, str]] = set()
            for ref in CLEANED:
                items, _ = await self._client.list(ref, None)
                found.update((ref.plural, str(i["metadata"].get("uid"))) for i in items)
            return found

        result: set[tuple[str, str]] = self._run(collect())
        return result

    def mark(self) -> None:
        """Remember what exists now; `clean` removes what was created after."""
        self._before = self._inventory()

    def clean(self, timeout: float = 30.0) -> None:
        """Delete the Jobs, bare pods, PodDisruptionBudgets, PriorityClasses, ConfigMaps, Secrets, ServiceAccounts
        and namespaces created since `mark` (nothing owned by another object, nothing in a `kube-` namespace, no
        `default` account: the ServiceAccounts controller's), drop the finalizers
        of the test's pods, and wait (bounded) until they are gone. Its pods, a Job's too, are deleted with a grace
        period of 0: the end of a test is the cluster's stop (as `kjobs run`'s Ctrl-C), and a container without a
        SIGTERM handler would otherwise run on for its grace period (docs/sigterm42.md)."""

        async def delete_new() -> list[Obj]:
            pods: list[Obj] = []
            for ref in CLEANED:
                items, _ = await self._client.list(ref, None)
                for item in items:
                    meta = item["metadata"]
                    if (ref.plural, str(meta.get("uid"))) in self._before or _system(ref, meta):
                        continue
                    if ref is R.PODS:
                        pods.append(item)
                    elif meta.get("ownerReferences"):
                        continue  # its owner's deletion removes it (the garbage collector)
                    ns = meta.get("namespace") if ref.namespaced else None
                    policy = "Background" if ref is R.JOBS else None
                    grace = 0 if ref is R.PODS else None
                    call = self._client.delete(
                        ref, ns, meta["name"], grace_period_seconds=grace, propagation_policy=policy
                    )
                    await _ignore_gone(call)
            for pod in pods:  # a test's own finalizers would keep its pods for ever
                meta = pod["metadata"]
                patch = {"metadata": {"finalizers": None}}
                await _ignore_gone(
                    self._client.patch(R.PODS, meta["namespace"], meta["name"], patch, patch_type="merge")
                )
            return pods

        pods: list[Obj] = self._run(delete_new(), timeout + 30)
        for pod in pods:
            self._wait_gone(pod, timeout)

    def _wait_gone(self, pod: Obj, timeout: float) -> None:
        """Wait until `pod` (this very one: its uid) is gone."""
        meta = pod["metadata"]

        def gone(items: list[Obj]) -> Obj | None:
            return None if any(i["metadata"].get("uid") == meta.get("uid") for i in items) else {}

        self._until(
            R.PODS,
            meta["namespace"],
            gone,
            timeout,
            lambda _, virtual: f"pod {meta['name']} of the test was not gone in {timeout}s{virtual}",
            field_selector=f"metadata.name={meta['name']}",
        )


def _system(ref: ResourceRef, meta: Obj) -> bool:
    """What a cluster's own components made (kube-* namespaces, system-* PriorityClasses, `default` accounts)."""
    name = str(meta.get("name") or "")
    if ref is R.NAMESPACES:
        return name.startswith("kube-")
    if ref is R.PRIORITY_CLASSES:
        return name.startswith("system-")
    if ref is R.SERVICE_ACCOUNTS and name == "default":
        return True
    return str(meta.get("namespace") or "").startswith("kube-")


async def _ignore_gone(call: Any) -> None:
    """Await a delete or patch; an object already gone (404) or being deleted (409) is fine."""
    try:
        await call
    except ApiError as exc:
        if exc.code not in (404, 409):
            raise


def _container_running(container: str | None) -> Callable[[Obj], bool]:
    def running(pod: Obj) -> bool:
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        chosen = [s for s in statuses if container is None or s.get("name") == container][:1]
        return bool(chosen and "running" in (chosen[0].get("state") or {}))

    return running
