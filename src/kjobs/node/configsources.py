"""The ConfigMaps and Secrets the node's pods read, kept current by a watch of each, as the kubelet keeps them.

Design note: the kubelet builds a container's environment each time it creates the container
(pkg/kubelet/kuberuntime/kuberuntime_container.go `startContainer` → `generateContainerConfig` →
pkg/kubelet/kubelet_pods.go `makeEnvironmentVariables`), reading each ConfigMap and Secret through its
watch-based manager (pkg/kubelet/util/manager/watch_based_manager.go, used by pkg/kubelet/configmap/ and
pkg/kubelet/secret/): one reflector per referenced object (list and watch with `metadata.name=<name>` in the
pod's namespace), started when the first pod referencing the object is registered and stopped when the last one
is gone; a read first waits up to a second for that reflector's first list ("failed to sync configmap cache:
...") and a missing object is NotFound. So a restarted container reads the object's current values, and one
deleted since fails the restart with `CreateContainerConfigError`.

`ConfigSources` is that manager for a `NodeAgent`: an `Informer` per (kind, namespace, name), counted by the
pods that read it, and for each pod a live `EnvSources` view that the runtime reads at every container start
(`Supervisor._start`): no copy to refresh, no read of the API on the start path. Pods that reference nothing
never reach it. Unlike the kubelet, the watch of an immutable object is not stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping

from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import Informer
from kjobs.client.resources import CONFIG_MAPS, SECRETS
from kjobs.clock import Clock
from kjobs.node.envvars import CONFIG_MAP, EnvSources

SYNC_TIMEOUT = 1.0
"""How long a pod's first read waits for the watches' first lists (the kubelet's `objectCache.Get` polls 1 s)."""

_ObjectKey = tuple[str, str, str]
"""(kind, namespace, name)."""


class CacheSyncTimeout(OSError):
    """A watch has not listed its object in time (the API is unreachable or slow); the pod's sync is retried."""


class _CurrentSources(Mapping[tuple[str, str], Obj | None]):
    """A pod's `EnvSources` read through the watches at each lookup: the object as last seen, None if absent."""

    def __init__(self, namespace: str, informers: dict[tuple[str, str], Informer]) -> None:
        self.namespace = namespace
        self.informers = informers

    def __getitem__(self, key: tuple[str, str]) -> Obj | None:
        return self.informers[key].get(self.namespace, key[1])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.informers)

    def __len__(self) -> int:
        return len(self.informers)


class ConfigSources:
    """Watches of the ConfigMaps and Secrets the registered pods read; see the module note."""

    def __init__(self, client: Client, *, clock: Clock) -> None:
        self._client = client
        self._clock = clock
        self._informers: dict[_ObjectKey, Informer] = {}
        self._users: dict[_ObjectKey, int] = {}
        self._pods: dict[str, _CurrentSources] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    def register(self, uid: str, namespace: str, refs: frozenset[tuple[str, str]]) -> EnvSources:
        """Watch what pod `uid` reads (`envvars.env_references`) from now on; its live view (the same one when
        the pod is registered already)."""
        known = self._pods.get(uid)
        if known is not None:
            return known
        informers: dict[tuple[str, str], Informer] = {}
        for kind, name in sorted(refs):
            key = (kind, namespace, name)
            informer = self._informers.get(key)
            if informer is None:
                resource = CONFIG_MAPS if kind == CONFIG_MAP else SECRETS
                informer = Informer(
                    self._client,
                    resource,
                    namespace=namespace,
                    field_selector=f"metadata.name={name}",
                    clock=self._clock,
                )
                self._informers[key] = informer
                informer.start()
            self._users[key] = self._users.get(key, 0) + 1
            informers[(kind, name)] = informer
        view = self._pods[uid] = _CurrentSources(namespace, informers)
        return view

    async def synced(self, uid: str, timeout: float = SYNC_TIMEOUT) -> None:
        """Wait until every watch of pod `uid` has listed its object; `CacheSyncTimeout` after `timeout`."""
        view = self._pods.get(uid)
        pending = [i for i in view.informers.values() if not i.synced.is_set()] if view is not None else []
        if not pending:
            return
        listed = asyncio.ensure_future(asyncio.gather(*(i.synced.wait() for i in pending)))
        timer = asyncio.ensure_future(self._clock.sleep(timeout))
        try:
            await asyncio.wait((listed, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            listed.cancel()
            timer.cancel()
        if not all(i.synced.is_set() for i in pending):
            kinds = sorted({"configmaps" if i.resource is CONFIG_MAPS else "secrets" for i in pending})
            raise CacheSyncTimeout(f"failed to sync {', '.join(kinds)} cache: timed out waiting for the condition")

    def release(self, uid: str) -> None:
        """Pod `uid` reads nothing more here: stop each watch no other pod needs."""
        view = self._pods.pop(uid, None)
        if view is None:
            return
        namespace = view.namespace
        for kind, name in view.informers:
            key = (kind, namespace, name)
            users = self._users.get(key, 0) - 1
            if users > 0:
                self._users[key] = users
                continue
            self._users.pop(key, None)
            informer = self._informers.pop(key, None)
            if informer is not None:
                task = asyncio.ensure_future(informer.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)

    def watched(self) -> list[tuple[str, str, str]]:
        """(kind, namespace, name) of every object watched now (for tests and tools)."""
        return sorted(self._informers)

    async def stop(self) -> None:
        """Stop every watch (the agent is stopping)."""
        for uid in list(self._pods):
            self.release(uid)
        for task in list(self._stopping):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
