"""The ServiceAccounts controller (pkg/controller/serviceaccount/serviceaccounts_controller.go).

kube-controller-manager's `serviceaccount-controller`: every `Active` namespace has the accounts of
`ServiceAccountsControllerOptions` (only `default`), so that a pod that names none, which the ServiceAccount
admission plugin gives `default`, can be created. A namespace is synced when it is added or updated, and when an
account in it is deleted; the sync creates, from the informer caches, each account the namespace lacks, ignoring
AlreadyExists and a namespace that went Terminating meanwhile (`NamespaceTerminatingCause`), and does nothing
in a namespace that is gone or not `Active`. An account it did not make is never touched.

`ensure` is kjobs' own: the same creates, done now for the namespaces a one-shot run (`kjobs run`, `kjobs
simulate`) is about to create its Job in, so its pods never wait on the race between this controller's queue
and the Job controller's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.base import Client
from kjobs.client.informer import InformerFactory
from kjobs.client.resources import NAMESPACES, SERVICE_ACCOUNTS
from kjobs.client.workqueue import WorkerPool, WorkQueue
from kjobs.clock import Clock

NAME = "serviceaccount-controller"
"""kube-controller-manager's name for it (cmd/kube-controller-manager/names: `ServiceAccountController`)."""

DEFAULT_ACCOUNTS = ("default",)
"""`DefaultServiceAccountsControllerOptions`: the accounts every namespace gets."""


@dataclass(eq=False, repr=False)
class ServiceAccountsController:
    """Keeps `default` (and any other of `accounts`) in every active namespace."""

    client: Client
    clock: Clock
    accounts: tuple[str, ...] = DEFAULT_ACCOUNTS
    shared: InformerFactory | None = None
    """Informers shared with other controllers (a private set when None)."""
    workers: int = 1
    queue: WorkQueue[str] = field(init=False)

    def __post_init__(self) -> None:
        factory = self.shared or InformerFactory(self.client, clock=self.clock)
        self.namespaces = factory.informer(NAMESPACES)
        self.service_accounts = factory.informer(SERVICE_ACCOUNTS)
        self.queue = WorkQueue(clock=self.clock)
        self._workers = WorkerPool(self.queue, self.sync, name="serviceaccount", workers=self.workers)
        self.running = False
        """Started and not stopped: `ensure` writes only then (a controller waiting for its Lease does not)."""

    async def start(self) -> None:
        """Start the informers, then the workers once both caches have synced (`WaitForNamedCacheSync`)."""
        self.namespaces.add_handler(self._on_namespace)
        self.service_accounts.add_handler(self._on_service_account)
        self.namespaces.start()
        self.service_accounts.start()
        await self.service_accounts.synced.wait()
        await self.namespaces.synced.wait()
        self._workers.start()
        self.running = True

    async def stop(self) -> None:
        """Stop the workers and the informers."""
        self.running = False
        await self._workers.stop()
        await self.service_accounts.stop()
        await self.namespaces.stop()

    def _on_namespace(self, old: Obj | None, new: Obj | None) -> None:
        """`namespaceAdded` / `namespaceUpdated` (a deletion is not handled)."""
        if new is not None:
            self.queue.add(str((new.get("metadata") or {}).get("name") or ""))

    def _on_service_account(self, old: Obj | None, new: Obj | None) -> None:
        """`serviceAccountDeleted`: only deletions are handled."""
        if new is None and old is not None:
            self.queue.add(str((old.get("metadata") or {}).get("namespace") or ""))

    async def sync(self, namespace: str) -> None:
        """`syncNamespace`: create the accounts an active namespace lacks (the caches say which)."""
        ns = self.namespaces.get("", namespace)
        if ns is None or (ns.get("status") or {}).get("phase") != "Active":
            return
        missing = [name for name in self.accounts if self.service_accounts.get(namespace, name) is None]
        await self._create(namespace, missing)

    async def ensure(self, namespaces: Iterable[str]) -> None:
        """Create now the accounts `namespaces` lack, as the sync of each would (no wait for the caches); nothing
        while the controller is not running."""
        if not self.running:
            return
        for namespace in dict.fromkeys(namespaces):
            missing = [name for name in self.accounts if self.service_accounts.get(namespace, name) is None]
            try:
                await self._create(namespace, missing)
            except ApiError as exc:
                if exc.code != 404:  # no such namespace: nothing to make
                    raise

    async def _create(self, namespace: str, names: list[str]) -> None:
        """Create each account; AlreadyExists and a terminating namespace are not failures, the others are
        raised together after every create was tried (the sync is then retried with back-off)."""
        failures: list[ApiError] = []
        for name in names:
            body: Obj = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": namespace},
            }
            try:
                await self.client.create(SERVICE_ACCOUNTS, namespace, body, handover=True)
            except ApiError as exc:
                if exc.reason != "AlreadyExists" and not exc.has_cause("NamespaceTerminating"):
                    failures.append(exc)
        if failures:
            raise failures[0]
