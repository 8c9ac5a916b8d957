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
(`Supervisor._start`) and at every remount of its volumes: no copy to refresh, no read of the API on the start
path. Pods that reference nothing never reach it.

Immutable objects (`immutable: true`): as the manager's `objectCache.Get` does, a read that finds the object
immutable stops its watch and keeps the copy read; every later read, for this pod or another registered while it
is kept, answers that copy, even once the object is deleted (and perhaps made again) in the API, so its volume's
files and its containers' variables stay what they were. The copy goes with the last pod that reads it
(`DeleteReference`); a pod registered after that watches the object afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Mapping

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


def is_immutable(obj: Obj) -> bool:
    """pkg/kubelet/configmap and pkg/kubelet/secret `isConfigMapImmutable` / `isSecretImmutable`:
    `immutable` set and true."""
    return obj.get("immutable") is True


class _CurrentSources(Mapping[tuple[str, str], Obj | None]):
    """A pod's `EnvSources` read through the watches at each lookup: the object as last seen (or as kept, once
    found immutable), None if absent."""

    def __init__(
        self, namespace: str, refs: tuple[tuple[str, str], ...], read: Callable[[_ObjectKey], Obj | None]
    ) -> None:
        self.namespace = namespace
        self.refs = refs
        self._read = read

    def __getitem__(self, key: tuple[str, str]) -> Obj | None:
        if key not in self.refs:
            raise KeyError(key)
        return self._read((key[0], self.namespace, key[1]))

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.refs)

    def __len__(self) -> int:
        return len(self.refs)


class ConfigSources:
    """Watches of the ConfigMaps and Secrets the registered pods read; see the module note."""

    def __init__(self, client: Client, *, clock: Clock) -> None:
        self._client = client
        self._clock = clock
        self._informers: dict[_ObjectKey, Informer] = {}
        self._kept: dict[_ObjectKey, Obj] = {}
        """Objects found immutable: their watch is stopped and this copy answers every read."""
        self._users: dict[_ObjectKey, int] = {}
        self._pods: dict[str, _CurrentSources] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    def register(self, uid: str, namespace: str, refs: frozenset[tuple[str, str]]) -> EnvSources:
        """Watch what pod `uid` reads (`envvars.env_references`) from now on; its live view (the same one when
        the pod is registered already)."""
        known = self._pods.get(uid)
        if known is not None:
            return known
        for kind, name in sorted(refs):
            key = (kind, namespace, name)
            informer = self._informers.get(key)
            if informer is None and key not in self._kept:
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
        view = self._pods[uid] = _CurrentSources(namespace, tuple(sorted(refs)), self._read)
        return view

    def _read(self, key: _ObjectKey) -> Obj | None:
        """The object as its watch has it; one found immutable is kept and its watch stopped (`objectCache.Get`:
        "Stopped watching for changes - object is immutable")."""
        kept = self._kept.get(key)
        if kept is not None:
            return kept
        informer = self._informers.get(key)
        found = informer.get(key[1], key[2]) if informer is not None else None
        if found is not None and is_immutable(found) and informer is not None:
            self._kept[key] = found
            del self._informers[key]
            self._stop(informer)
        return found

    def _stop(self, informer: Informer) -> None:
        task = asyncio.ensure_future(informer.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def synced(self, uid: str, timeout: float = SYNC_TIMEOUT) -> None:
        """Wait until every watch of pod `uid` has listed its object; `CacheSyncTimeout` after `timeout`."""
        view = self._pods.get(uid)
        watches = [self._informers.get((kind, view.namespace, name)) for kind, name in view.refs] if view else []
        pending = [i for i in watches if i is not None and not i.synced.is_set()]
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
        for kind, name in view.refs:
            key = (kind, namespace, name)
            users = self._users.get(key, 0) - 1
            if users > 0:
                self._users[key] = users
                continue
            self._users.pop(key, None)
            self._kept.pop(key, None)
            informer = self._informers.pop(key, None)
            if informer is not None:
                self._stop(informer)

    def watched(self) -> list[tuple[str, str, str]]:
        """(kind, namespace, name) of every object watched now (for tests and tools); not those kept because
        they are immutable."""
        return sorted(self._informers)

    def kept(self) -> list[tuple[str, str, str]]:
        """(kind, namespace, name) of every immutable object whose copy is kept, unwatched."""
        return sorted(self._kept)

    async def stop(self) -> None:
        """Stop every watch (the agent is stopping)."""
        for uid in list(self._pods):
            self.release(uid)
        for task in list(self._stopping):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
