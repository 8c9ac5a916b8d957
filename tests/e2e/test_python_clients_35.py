"""Third-party Python clients against `kjobs up` where stop 35 found kjobs answering otherwise than a v1.32 API
server (docs/clients-stop35.md): JSON patches as json-patch v4 applies them and fails them, dry runs that answer
what the write would, `resourceVersion=0` lists, server-side apply of a field the schema lacks, and the answer to
removing a deleting object's last finalizer. Each test is what a user of the client writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_python_clients import _job
from tests.e2e.test_python_clients import kubeconfig as kubeconfig  # the fixture: one `kjobs up` for this module

pytestmark = pytest.mark.e2e

GENERIC_422 = "the server rejected our request due to an error in our request"


def _suspended(name: str, **metadata: Any) -> dict[str, Any]:
    job = _job(name, "exit 0", suspend=True)
    job["metadata"].update(metadata)
    return job


def test_kubernetes_json_patch_as_a_cluster_applies_and_refuses_it(kubeconfig: Path) -> None:
    """The official client's JSON patch (its default for a list body): `replace` of a label the Job does not
    have yet adds it and `remove` of `/…/-1` takes the last finalizer, as json-patch v4 does on a cluster; a
    failing `test` (an optimistic lock written as a patch) raises 422 with the apiserver's generic message."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    with config.new_client_from_config(str(kubeconfig)) as api:
        batch = client.BatchV1Api(api)
        batch.create_namespaced_job("default", _suspended("jp", finalizers=["example.com/a", "example.com/b"]))
        patched = batch.patch_namespaced_job(
            "jp",
            "default",
            [
                {"op": "replace", "path": "/metadata/labels/team", "value": "batch"},
                {"op": "remove", "path": "/metadata/finalizers/-1"},
            ],
        )
        assert patched.metadata.labels["team"] == "batch"
        assert patched.metadata.finalizers == ["example.com/a"]
        with pytest.raises(ApiException) as failed:
            batch.patch_namespaced_job("jp", "default", [{"op": "test", "path": "/spec/parallelism", "value": 5}])
        assert failed.value.status == 422
        status = json.loads(failed.value.body)
        assert (status["reason"], status["message"], status["details"]) == ("Invalid", GENERIC_422, {})
        batch.patch_namespaced_job("jp", "default", [{"op": "remove", "path": "/metadata/finalizers"}])


def test_lightkube_json_patch_failure_is_the_generic_invalid(kubeconfig: Path) -> None:
    """lightkube's `PatchType.JSON` with a path that is not there raises `ApiError` carrying the Status a cluster
    sends: 422 Invalid, the generic message, empty details (json-patch's own text is not sent)."""
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.codecs import from_dict
    from lightkube.resources.batch_v1 import Job
    from lightkube.types import PatchType

    c = Client(config=KubeConfig.from_file(str(kubeconfig)), field_manager="lk35")
    c.create(from_dict(_suspended("lk-jp")))
    with pytest.raises(ApiError) as failed:
        c.patch(Job, "lk-jp", [{"op": "remove", "path": "/spec/nope"}], namespace="default", patch_type=PatchType.JSON)
    assert (failed.value.status.code, failed.value.status.reason) == (422, "Invalid")
    assert failed.value.status.message == GENERIC_422


def test_dry_run_create_of_a_taken_name_conflicts(kubeconfig: Path) -> None:
    """`dry_run="All"` creates check what the create would: a Job whose name is taken is 409 AlreadyExists
    (the official client), a free name is answered without being stored (lightkube's `dry_run=True`)."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    from lightkube import Client, KubeConfig
    from lightkube.codecs import from_dict

    with config.new_client_from_config(str(kubeconfig)) as api:
        batch = client.BatchV1Api(api)
        batch.create_namespaced_job("default", _suspended("dry-taken"))
        with pytest.raises(ApiException) as taken:
            batch.create_namespaced_job("default", _suspended("dry-taken"), dry_run="All")
        assert taken.value.status == 409 and taken.value.reason == "Conflict"
        assert '"reason":"AlreadyExists"' in taken.value.body
        c = Client(config=KubeConfig.from_file(str(kubeconfig)))
        answered = c.create(from_dict(_suspended("dry-free")), dry_run=True)
        assert answered.metadata.name == "dry-free" and answered.metadata.resourceVersion is None
        assert [
            j.metadata.name for j in batch.list_namespaced_job("default").items if j.metadata.name == "dry-free"
        ] == []


def test_dry_run_foreground_delete_answers_the_job_marked_for_deletion(kubeconfig: Path) -> None:
    """The official client's `delete_namespaced_job(dry_run="All", propagation_policy="Foreground")`: the answer
    is the Job with the `foregroundDeletion` finalizer and a deletionTimestamp, as the real DELETE's, and the Job
    stays as it was."""
    from kubernetes import client, config

    with config.new_client_from_config(str(kubeconfig)) as api:
        batch = client.BatchV1Api(api)
        batch.create_namespaced_job("default", _suspended("dry-del"))
        response = batch.delete_namespaced_job(
            "dry-del", "default", dry_run="All", propagation_policy="Foreground", _preload_content=False
        )
        body = json.loads(response.data)
        assert body["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert body["metadata"]["deletionTimestamp"]
        assert batch.read_namespaced_job("dry-del", "default").metadata.deletion_timestamp is None


def test_kubernetes_list_at_revision_0_is_whole(kubeconfig: Path) -> None:
    """`resource_version="0"` with `limit`: the watch cache answers every item and no continue token (a
    reflector's first list); the same limit at the current revision pages."""
    from kubernetes import client, config

    with config.new_client_from_config(str(kubeconfig)) as api:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "rv0"}})
        for i in range(3):
            core.create_namespaced_config_map("rv0", {"metadata": {"name": f"cm-{i}"}})
        whole = core.list_namespaced_config_map("rv0", resource_version="0", limit=1)
        assert {f"cm-{i}" for i in range(3)} <= {cm.metadata.name for cm in whole.items}
        assert whole.metadata._continue is None
        paged = core.list_namespaced_config_map("rv0", limit=1)
        assert len(paged.items) == 1 and paged.metadata._continue


def test_server_side_apply_of_a_field_the_server_does_not_know(kubeconfig: Path) -> None:
    """lightkube's apply patch of a manifest written for a newer Kubernetes (a field v1.32's Job lacks): refused
    with structured-merge-diff's `field not declared in schema`, as a cluster does, instead of a warning and the
    field recorded as the applier's."""
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.resources.batch_v1 import Job
    from lightkube.types import PatchType

    c = Client(config=KubeConfig.from_file(str(kubeconfig)), field_manager="newer")
    manifest = _suspended("from-the-future")
    manifest["spec"]["managedByFuture"] = "x"
    with pytest.raises(ApiError) as refused:
        c.patch(Job, "from-the-future", manifest, namespace="default", patch_type=PatchType.APPLY)
    assert refused.value.status.code == 400
    assert refused.value.status.message == (
        "failed to create typed patch object (default/from-the-future; batch/v1, Kind=Job): "
        ".spec.managedByFuture: field not declared in schema"
    )


def test_removing_the_last_finalizer_answers_the_object_without_it(kubeconfig: Path) -> None:
    """An operator removes its finalizer from a ConfigMap being deleted: the official client's patch returns
    the object it made (no finalizers), as `deleteWithoutFinalizers` answers, and the object is gone."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    with config.new_client_from_config(str(kubeconfig)) as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_config_map("default", {"metadata": {"name": "held", "finalizers": ["example.com/x"]}})
        deleting = core.delete_namespaced_config_map("held", "default")
        assert deleting is not None
        released = core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
        assert released.metadata.finalizers is None and released.metadata.deletion_timestamp is not None
        with pytest.raises(ApiException) as gone:
            core.read_namespaced_config_map("held", "default")
        assert gone.value.status == 404
