"""A Job's refused pod creates (pkg/controller/controller_utils.go `CreatePods`, job_controller.go `manageJob`):
a quota's 403 is a `FailedCreate` Warning with the server's words and the sync's error (retried with back-off);
a namespace being deleted (cause `NamespaceTerminating`) records nothing and is no error."""

from __future__ import annotations

import asyncio

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.job.bookkeeping import BookkeepingStore
from kjobs.job.config import SyncConfig
from kjobs.job.execute import SyncOutcome, sync_job
from kjobs.job.metrics import JobMetrics
from tests.controllers.test_upstream_job_controller import NOW, FakePodControl, _StatusWrites, new_job


class _Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, str, str]] = []

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.items.append((type_, reason, message))


def _sync(err: ApiError) -> tuple[SyncOutcome, list[tuple[str, str, str]], FakePodControl]:
    control, events = FakePodControl(err), _Events()

    async def run() -> SyncOutcome:
        return await sync_job(
            new_job("work", parallelism=4, completions=4),
            [],
            now=NOW,
            book=BookkeepingStore(),
            config=SyncConfig(),
            pod_control=control,
            status_writer=_StatusWrites(),
            events=events,
            metrics=JobMetrics(),
        )

    return asyncio.run(run()), events.items, control


def test_a_quota_refusal_is_a_failed_create_event_and_an_error() -> None:
    why = "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
    refusal = ApiError(403, "Forbidden", f'pods "work-abcde" is forbidden: {why}')
    outcome, events, control = _sync(refusal)
    assert outcome.error is refusal
    assert len(control.templates) == 1  # slow start: the first batch of one failed, nothing more was tried
    assert events == [("Warning", "FailedCreate", f'Error creating: pods "work-abcde" is forbidden: {why}')]


def test_a_namespace_being_deleted_is_neither_an_event_nor_an_error() -> None:
    details = {"causes": [{"reason": "NamespaceTerminating", "message": "namespace default is being terminated"}]}
    refusal = ApiError(403, "Forbidden", "unable to create new content", details=details)
    outcome, events, control = _sync(refusal)
    assert outcome.error is None
    assert len(control.templates) == 1
    assert [e for e in events if e[1] == "FailedCreate"] == []
