"""The taint-eviction controller (`pkg/controller/tainteviction`): pods off `NoExecute`-tainted nodes.

For every pod bound to a node with NoExecute taints it decides, from the pod's tolerations
(`kjobs.api.taints`), when the pod must go: at once when some taint is not tolerated, after the
smallest `tolerationSeconds` of the tolerations used (counted from when the eviction was first scheduled),
or never. A timer per pod fires the eviction: an Event `TaintManagerEviction` "Marking for deletion Pod
NS/NAME", the `DisruptionTarget` condition (`DeletionByTaintManager`) patched into the pod's status, then a
normal graceful delete (the pair retried up to 5 times). Taints removed, tolerations changed or the pod gone
cancel a pending eviction ("Cancelling deletion of Pod NS/NAME"). A pod evicted once is not scheduled again
until its eviction is cancelled, as in Kubernetes' TimedWorkerQueue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from kjobs.api.conditions import DELETION_BY_TAINT_MANAGER, disruption_target, update_pod_condition
from kjobs.api.errors import ApiError
from kjobs.api.taints import FOREVER, matching_tolerations, min_toleration_seconds, no_execute_taints, taints_of
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.events import EventRecorder
from kjobs.client.informer import InformerFactory, Key, key_of
from kjobs.client.resources import NODES, PODS
from kjobs.clock import Clock
from kjobs.controllers.disruption_metrics import TaintEvictionMetrics

log = logging.getLogger(__name__)

RETRIES = 5
RETRY_PAUSE = 0.01


@dataclass(frozen=True)
class TaintEvictionSettings:
    """Knobs: how many times to try the condition + delete pair, and the pause between tries."""

    retries: int = RETRIES
    retry_pause: float = RETRY_PAUSE


@dataclass(eq=False, repr=False)
class _Work:
    created_at: float
    fire_at: float
    task: asyncio.Task[None] | None


def _pod_ref(namespace: str, name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}}


def _tolerations(pod: Obj | None) -> list[Obj]:
    return [t for t in ((pod or {}).get("spec") or {}).get("tolerations") or [] if isinstance(t, dict)]


def _same_tolerations(old: Obj, new: Obj) -> bool:
    """`_tolerations(old) == _tolerations(new)`, without building either list when the two spec lists are equal
    (always, but for an update of the tolerations: a status write keeps the pod's spec as it was)."""
    before, after = (old.get("spec") or {}).get("tolerations"), (new.get("spec") or {}).get("tolerations")
    return before == after or _tolerations(old) == _tolerations(new)


def _node_name(pod: Obj | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")


@dataclass(eq=False, repr=False)
class TaintEvictionController:
    """Evicts pods that do not tolerate their node's NoExecute taints."""

    client: Client
    clock: Clock
    settings: TaintEvictionSettings = field(default_factory=TaintEvictionSettings)
    metrics: TaintEvictionMetrics = field(default_factory=TaintEvictionMetrics)
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.nodes = factory.informer(NODES)
        self.pods = factory.informer(PODS)
        self.events = EventRecorder(self.client, component="taint-eviction-controller", clock=self.clock)
        self.tainted: dict[str, list[Obj]] = {}
        self.work: dict[Key, _Work | None] = {}
        self._pods_by_node: dict[str, set[Key]] = {}
        self._started = False

    async def start(self) -> None:
        """Start informers; evictions are decided from their events from then on."""
        self.nodes.add_handler(self._on_node)
        self.pods.add_handler(self._on_pod, unless_same="spec")  # `_on_pod` reads an update's spec alone
        self.nodes.start()
        self.pods.start()
        await asyncio.gather(self.nodes.synced.wait(), self.pods.synced.wait())
        self._started = True
        for name in list(self.tainted):
            self._handle_node(name)

    async def stop(self) -> None:
        """Cancel pending evictions and stop informers."""
        for work in self.work.values():
            if work is not None and work.task is not None:
                work.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await work.task
        await self.nodes.stop()
        await self.pods.stop()
        await self.events.flush()

    def scheduled(self, namespace: str, name: str) -> float | None:
        """When the pod's pending eviction fires (None if none is pending)."""
        work = self.work.get((namespace, name))
        return work.fire_at if work is not None and work.task is not None else None

    # ------------------------------------------------------------------------------------------ handlers

    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        if (
            old is not None
            and new is not None
            and no_execute_taints(taints_of(old)) == no_execute_taints(taints_of(new))
        ):
            return
        name = key_of(new or old or {})[1]
        if new is None:
            self.tainted.pop(name, None)
            return
        taints = no_execute_taints(taints_of(new))
        if taints:
            self.tainted[name] = taints
        else:
            self.tainted.pop(name, None)
        if self._started:
            self._handle_node(name, cleared=not taints)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None:
            old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
            if old_spec is new_spec or (
                old_spec.get("nodeName") == new_spec.get("nodeName")
                and old_spec.get("tolerations") == new_spec.get("tolerations")
            ):
                return  # most updates (status, metadata) change nothing this controller indexes or acts on
        old_node, new_node = _node_name(old), _node_name(new)
        if old is not None and new is not None and old_node == new_node and _same_tolerations(old, new):
            return
        if new is not None and not new_node and not old_node:
            return  # on no node before or after (a new pod, not yet bound): nothing to index or evict
        key = key_of(new or old or {})
        if old_node and old_node != new_node:
            self._pods_by_node.get(old_node, set()).discard(key)
        if new_node:
            self._pods_by_node.setdefault(new_node, set()).add(key)
        if not self._started:
            return
        if new is None:
            self._cancel(key)
            return
        if not new_node:
            return
        taints = self.tainted.get(new_node)
        if taints is None:
            return
        self._process_pod(key, _tolerations(new), taints, self.clock.now())

    def _handle_node(self, name: str, *, cleared: bool = False) -> None:
        keys = sorted(self._pods_by_node.get(name, ()))
        if cleared:
            for key in keys:
                self._cancel(key)
            return
        taints = self.tainted.get(name, [])
        now = self.clock.now()
        for key in keys:
            pod = self.pods.get(*key)
            if pod is not None and _node_name(pod) == name:
                self._process_pod(key, _tolerations(pod), taints, now)

    # ------------------------------------------------------------------------------------------ decisions

    def _process_pod(self, key: Key, tolerations: list[Obj], taints: list[Obj], now: float) -> None:
        """`processPodOnNode`: schedule, keep or cancel the pod's eviction."""
        if not taints:
            self._cancel(key)
        all_tolerated, used = matching_tolerations(taints, tolerations)
        if not all_tolerated:
            self._cancel(key)
            self._add(key, now, now)
            return
        wait = min_toleration_seconds(used)
        if wait == FOREVER:
            self._cancel(key)
            return
        start = now
        trigger = now + wait
        current = self.work.get(key)
        if current is not None:
            start = current.created_at
            if start + wait < trigger:
                return
            self._cancel(key)
        self._add(key, start, start + wait)

    def _add(self, key: Key, created_at: float, fire_at: float) -> None:
        if key in self.work:
            return
        task = asyncio.get_running_loop().create_task(self._fire(key, fire_at), name=f"taint-evict-{key[1]}")
        self.work[key] = _Work(created_at, fire_at, task)

    def _cancel(self, key: Key) -> None:
        if key not in self.work:
            return
        work = self.work.pop(key)
        if work is not None and work.task is not None:
            work.task.cancel()
            self.events.event(
                _pod_ref(*key), "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {key[0]}/{key[1]}"
            )

    # -------------------------------------------------------------------------------------------- action

    async def _fire(self, key: Key, fire_at: float) -> None:
        delay = fire_at - self.clock.now()
        if delay > 0:
            await self.clock.sleep(delay)
        namespace, name = key
        self.events.event(
            _pod_ref(namespace, name), "Normal", "TaintManagerEviction", f"Marking for deletion Pod {namespace}/{name}"
        )
        error: Exception | None = None
        for attempt in range(self.settings.retries):
            try:
                await self._add_condition_and_delete(namespace, name)
                self.metrics.deletions.inc()
                self.metrics.deletion_latency.observe(max(0.0, self.clock.now() - fire_at))
                error = None
                break
            except ApiError as exc:
                error = exc
                if attempt + 1 < self.settings.retries:
                    await self.clock.sleep(self.settings.retry_pause)
        if error is None:
            current = self.work.get(key)
            if current is not None and current.fire_at == fire_at:
                self.work[key] = None  # keep the key: the pod is not scheduled for eviction again
        else:
            log.info("evicting pod %s/%s: %s", namespace, name, error)
            self.work.pop(key, None)

    async def _add_condition_and_delete(self, namespace: str, name: str) -> None:
        """`addConditionAndDeletePod`: DisruptionTarget patched into the status (if new), then delete."""
        pod = await self.client.get(PODS, namespace, name)
        status: Obj = dict(pod.get("status") or {})
        if update_pod_condition(status, disruption_target(DELETION_BY_TAINT_MANAGER), self.clock.now()):
            condition = next(c for c in status["conditions"] if c.get("type") == "DisruptionTarget")
            patch: Obj = {"metadata": {"uid": pod["metadata"].get("uid")}, "status": {"conditions": [condition]}}
            await self.client.patch(PODS, namespace, name, patch, subresource="status")
        await self.client.delete(PODS, namespace, name)
