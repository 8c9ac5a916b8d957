"""Upstream's CronJob registry strategy tests (pkg/registry/batch/cronjob/strategy_test.go): what the API server
does to a CronJob on create and update (status reset, generation), and the warnings it answers with. The
strategy's hooks are driven through kjobs' in-process API (`local_api`); the warnings through
`warnings_for_cronjob`, the hook that puts them in `Warning` headers (docs/upstream-cronjob.md)."""

from __future__ import annotations

import asyncio
import copy

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.api.validation_warnings import warnings_for_cronjob
from kjobs.client.resources import CRONJOBS
from kjobs.clock import FakeClock
from tests.support import local_api

POD_TEMPLATE: Obj = {
    "spec": {
        "restartPolicy": "OnFailure",
        "dnsPolicy": "ClusterFirst",
        "containers": [
            {
                "name": "abc",
                "image": "image",
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "File",
            }
        ],
    }
}
VALID_SPEC: Obj = {
    "schedule": "5 5 * * ?",
    "concurrencyPolicy": "Allow",
    "timeZone": "Asia/Shanghai",
    "jobTemplate": {
        "spec": {"template": POD_TEMPLATE, "completionMode": "Indexed", "completions": 10, "parallelism": 10}
    },
}
SPEC_WITH_TZ_IN_SCHEDULE: Obj = {
    "schedule": "CRON_TZ=UTC 5 5 * * ?",
    "concurrencyPolicy": "Allow",
    "timeZone": "Asia/DoesNotExist",
    "jobTemplate": {"spec": {"template": POD_TEMPLATE}},
}
NOW = "2016-05-19T10:00:00Z"


def cronjob(name: str = "mycronjob", generation: int = 0, spec: Obj | None = None) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "9", "generation": generation},
        "spec": copy.deepcopy(spec if spec is not None else VALID_SPEC),
        "status": {"lastScheduleTime": NOW},
    }


def test_cronjob_strategy() -> None:
    """TestCronJobStrategy: a create drops the status and starts at generation 1; a label change keeps the
    generation, a spec change bumps it; an update cannot set the status; an invalid update is refused."""

    async def main() -> None:
        client = await local_api(FakeClock())
        body = cronjob(
            generation=999, spec={"schedule": "* * * * ?", "jobTemplate": {"spec": {"template": POD_TEMPLATE}}}
        )
        body["status"] = {"active": [{"kind": "Job", "name": "x", "namespace": "default"}], "lastScheduleTime": NOW}
        del body["metadata"]["resourceVersion"]
        created = await client.create(CRONJOBS, "default", body)
        assert created["status"] == {}
        assert created["metadata"]["generation"] == 1

        labelled = copy.deepcopy(created)
        labelled["metadata"]["labels"] = {"a": "true"}
        labelled = await client.update(CRONJOBS, "default", labelled)
        assert labelled["metadata"]["generation"] == 1

        changed = copy.deepcopy(labelled)
        changed["spec"]["schedule"] = "5 5 5 * ?"
        changed["status"] = {"lastScheduleTime": NOW}
        changed = await client.update(CRONJOBS, "default", changed)
        assert changed["status"] == {}  # PrepareForUpdate keeps the prior status
        assert changed["metadata"]["generation"] == 2

        bad = copy.deepcopy(changed)
        bad["spec"]["schedule"] = "obvious error schedule"
        with pytest.raises(ApiError) as refused:
            await client.update(CRONJOBS, "default", bad)
        assert refused.value.reason == "Invalid"

    asyncio.run(main())


def test_cronjob_status_strategy() -> None:
    """TestCronJobStatusStrategy: a status update changes the status, never the spec."""

    async def main() -> None:
        client = await local_api(FakeClock())
        body = cronjob(
            spec={
                "schedule": "* * * * ?",
                "concurrencyPolicy": "Allow",
                "jobTemplate": {"spec": {"template": POD_TEMPLATE}},
            }
        )
        del body["metadata"]["resourceVersion"]
        old = await client.create(CRONJOBS, "default", body)
        new = copy.deepcopy(old)
        new["spec"]["schedule"] = "5 5 * * ?"
        new["status"] = {"lastScheduleTime": NOW}
        written = await client.update(CRONJOBS, "default", new, subresource="status")
        assert written["status"]["lastScheduleTime"] == NOW
        assert written["spec"]["schedule"] == "* * * * ?"

    asyncio.run(main())


@pytest.mark.parametrize(
    ("name", "body", "warnings"),
    [
        ("happy path cronjob", cronjob(), []),
        (
            "dns invalid name",
            cronjob("my cronjob"),
            [
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; "
                "a DNS label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric "
                "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"
            ],
        ),
    ],
)
def test_cronjob_strategy_warnings_on_create(name: str, body: Obj, warnings: list[str]) -> None:
    """TestCronJobStrategy_WarningsOnCreate (kjobs gave a CronJob no warnings)."""
    assert warnings_for_cronjob(body) == warnings


BAD_PULL_SECRET: Obj = {
    "schedule": "5 5 * * ?",
    "concurrencyPolicy": "Allow",
    "jobTemplate": {"spec": {"template": {"spec": {"imagePullSecrets": [{"name": ""}]}}}},
}


@pytest.mark.parametrize(
    ("name", "old", "new", "warnings"),
    [
        ("generation 0 for both", cronjob(generation=0), cronjob(generation=0), []),
        (
            "generation 1 for new; force WarningsOnUpdate to check PodTemplate for updates",
            cronjob(generation=1),
            cronjob(generation=0),
            [],
        ),
        (
            "force validation failure in pod template",
            cronjob(generation=1),
            cronjob(generation=0, spec=BAD_PULL_SECRET),
            ['spec.jobTemplate.spec.template.spec.imagePullSecrets[0].name: invalid empty name ""'],
        ),
        (
            "timezone invalid failure",
            cronjob(generation=1),
            cronjob(generation=0, spec=SPEC_WITH_TZ_IN_SCHEDULE),
            [
                "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
            ],
        ),
    ],
)
def test_cronjob_strategy_warnings_on_update(name: str, old: Obj, new: Obj, warnings: list[str]) -> None:
    """TestCronJobStrategy_WarningsOnUpdate."""
    assert warnings_for_cronjob(new, old) == warnings


def test_repeated_and_empty_image_pull_secrets_warn_in_pod_warnings_order() -> None:
    """pkg/api/pod/warnings.go: every repeat of a name (the empty one too), then every empty name; before the
    negative grace period's warning."""
    spec = copy.deepcopy(BAD_PULL_SECRET)
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    pod["imagePullSecrets"] = [{"name": "reg"}, {"name": ""}, {"name": "reg"}, {"name": ""}]
    pod["terminationGracePeriodSeconds"] = -1
    at = "spec.jobTemplate.spec.template.spec"
    assert warnings_for_cronjob(cronjob(spec=spec)) == [
        f'{at}.imagePullSecrets[2].name: duplicate name "reg"',
        f'{at}.imagePullSecrets[3].name: duplicate name ""',
        f'{at}.imagePullSecrets[1].name: invalid empty name ""',
        f'{at}.imagePullSecrets[3].name: invalid empty name ""',
        f"{at}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
    ]
