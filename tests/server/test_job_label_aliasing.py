"""A created Job's labels when its name is too long for one (docs/trial-stop35.md).

`SetDefaults_Job` (pkg/apis/batch/v1/defaults.go) gives a Job without labels its pod template's labels, the same
Go map, at decode; the registry strategy's `PrepareForCreate` then writes the job-name and controller-uid labels
into that map. So a Job whose manifest sets template labels has them under `metadata.labels` too when it is
validated, and a name over 63 characters is refused there as well; a Job whose manifest sets none is refused
only under `spec.template.labels` (its `metadata.labels` come from storage's defaulting, after validation).
`kjobs up` gave the `metadata.labels` errors to both, `kjobs validate` to neither.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.cli import main
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore

JOBS: Resource = lookup("batch", "v1", "jobs")  # type: ignore[assignment]
LONG = "a-job-name-that-is-longer-than-the-sixty-three-bytes-a-label-value-may-hold"
TEMPLATE_ERROR = f'spec.template.labels: Invalid value: "{LONG}": must be no more than 63 bytes'
META_ERROR = f'metadata.labels: Invalid value: "{LONG}": must be no more than 63 bytes'


def job(template_labels: dict[str, str] | None, labels: dict[str, str] | None = None) -> Obj:
    template: Obj = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}
    if template_labels is not None:
        template["metadata"] = {"labels": template_labels}
    meta: Obj = {"name": LONG}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": template}}


def created_errors(body: Obj) -> list[str]:
    async def main() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
        await service.ensure_namespaces()
        with pytest.raises(ApiError) as refused:
            await service.create(JOBS, "default", body)
        return refused.value

    error = asyncio.run(main())
    return [f"{c['field']}: {c['message']}" for c in error.details["causes"]]


CASES = [
    pytest.param(None, None, [TEMPLATE_ERROR, TEMPLATE_ERROR], id="no-template-labels"),
    pytest.param({"app": "x"}, None, [META_ERROR, META_ERROR, TEMPLATE_ERROR, TEMPLATE_ERROR], id="template-labels"),
    pytest.param({}, None, [META_ERROR, META_ERROR, TEMPLATE_ERROR, TEMPLATE_ERROR], id="empty-template-labels"),
    pytest.param({"app": "x"}, {"team": "t"}, [TEMPLATE_ERROR, TEMPLATE_ERROR], id="own-labels"),
]


@pytest.mark.parametrize(("template_labels", "labels", "causes"), CASES)
def test_the_api_refuses_the_labels_the_job_has_when_validated(
    template_labels: dict[str, str] | None, labels: dict[str, str] | None, causes: list[str]
) -> None:
    assert created_errors(job(template_labels, labels)) == causes


@pytest.mark.parametrize(("template_labels", "labels", "causes"), CASES)
def test_validate_prints_what_kubectl_prints_for_them(
    tmp_path: Path, template_labels: dict[str, str] | None, labels: dict[str, str] | None, causes: list[str]
) -> None:
    import yaml

    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(job(template_labels, labels)))
    result = CliRunner().invoke(main, ["validate", str(manifest)])
    distinct = list(dict.fromkeys(causes))
    if len(distinct) == 1:
        expected = f'{manifest}: The Job "{LONG}" is invalid: {distinct[0]}\n'
    else:
        expected = f'{manifest}: The Job "{LONG}" is invalid: \n' + "".join(f"* {c}\n" for c in distinct)
    assert (result.exit_code, result.stdout) == (1, expected)


def test_a_created_job_still_gets_its_template_labels() -> None:
    """What a cluster returns: the template's labels, the generated ones included, as the Job's."""

    async def main() -> Any:
        service = ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
        await service.ensure_namespaces()
        body = job(None)
        body["metadata"]["name"] = "short"
        return (await service.create(JOBS, "default", body)).obj

    created = asyncio.run(main())
    assert created["metadata"]["labels"] == created["spec"]["template"]["metadata"]["labels"]
    assert created["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "short"
