"""The root CA certificate publisher (`pkg/controller/certificates/rootcacertpublisher/publisher.go`).

Every namespace gets a ConfigMap `kube-root-ca.crt` whose `ca.crt` is the cluster's CA bundle, annotated
`kubernetes.io/description`, so that a pod (or anything in the namespace) can verify the API server. A namespace
is synced when it is added or updated while `Active`, and when its ConfigMap is changed or deleted: a missing
ConfigMap is created (not retried in a namespace that is gone or terminating), one whose data differs or that lost
the annotation is put back, anything else it carries (labels, other annotations) is kept.

The bundle is what kube-controller-manager has: `kjobs up`'s CA (`kjobs.server.tls`), or for `kjobs controller`
the CA of its kubeconfig (kube-controller-manager's fallback without `--root-ca-file`); empty when there is none
(plain http), as kube-controller-manager publishes it then.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import CONFIG_MAPS, NAMESPACES
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

log = logging.getLogger(__name__)

CONFIG_MAP_NAME = "kube-root-ca.crt"
DATA_KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the "
    "internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes "
    "clusters."
)


def desired(namespace: str, root_ca: str) -> Obj:
    """The ConfigMap the publisher creates in `namespace`."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIG_MAP_NAME,
            "namespace": namespace,
            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
        },
        "data": {DATA_KEY: root_ca},
    }


def repaired(config_map: Obj, root_ca: str) -> Obj | None:
    """The update that puts an existing ConfigMap right, or None when its data and annotation already are."""
    meta = config_map.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    data = {DATA_KEY: root_ca}
    if config_map.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
        return None
    return {
        **config_map,
        "metadata": {**meta, "annotations": {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}},
        "data": data,
    }


@dataclass(eq=False, repr=False)
class RootCACertPublisher:
    """Keeps `kube-root-ca.crt` in every namespace."""

    client: Client
    clock: Clock
    root_ca: str = ""
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.namespaces = factory.informer(NAMESPACES)
        self.config_maps = factory.informer(CONFIG_MAPS, field_selector=f"metadata.name={CONFIG_MAP_NAME}")
        self.queue = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name="root-ca-cert-publisher", workers=self.workers)

    async def start(self) -> None:
        """Start the informers, then the workers once the ConfigMaps are cached."""
        self.namespaces.add_handler(self._on_namespace)
        self.config_maps.add_handler(self._on_config_map)
        self.namespaces.start()
        self.config_maps.start()
        await self.config_maps.synced.wait()
        await self.namespaces.synced.wait()
        self._workers.start()

    async def stop(self) -> None:
        """Stop the workers and the informers."""
        await self._workers.stop()
        await self.config_maps.stop()
        await self.namespaces.stop()

    def _on_namespace(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        if old is not None and (new.get("status") or {}).get("phase") != "Active":
            return
        self.queue.add(str((new.get("metadata") or {}).get("name") or ""))

    def _on_config_map(self, old: Obj | None, new: Obj | None) -> None:
        if old is None:  # an add: the publisher does not watch them (it made it, or a sync will see it)
            return
        meta = (new if new is not None else old).get("metadata") or {}
        if meta.get("name") == CONFIG_MAP_NAME and meta.get("namespace"):
            self.queue.add(str(meta["namespace"]))

    async def sync(self, namespace: str) -> None:
        """`syncNamespace`: create the ConfigMap, or put its data and annotation back."""
        current = self.config_maps.get(namespace, CONFIG_MAP_NAME)
        if current is None:
            try:
                await self.client.create(CONFIG_MAPS, namespace, desired(namespace, self.root_ca), handover=True)
            except ApiError as exc:
                if exc.code == 404 or exc.has_cause("NamespaceTerminating"):  # the namespace is gone, or going
                    return  # no retry
                raise  # retried with back-off (AlreadyExists too: by then the cache has it, and it is checked)
            return
        update = repaired(current, self.root_ca)
        if update is not None:
            log.info("root CA publisher: putting %s/%s right", namespace, CONFIG_MAP_NAME)
            await self.client.update(CONFIG_MAPS, namespace, update, handover=True)
