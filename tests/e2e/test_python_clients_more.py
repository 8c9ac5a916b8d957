"""More of what users of third-party Python clients do against `kjobs up` as against a cluster, each a path where
kjobs once answered differently from a real API server (the first such tests are in test_python_clients.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_python_clients import _job
from tests.e2e.test_python_clients import kubeconfig as kubeconfig  # the fixture: one `kjobs up` for this module

pytestmark = pytest.mark.e2e


def test_lightkube_applies_to_a_job_the_controller_is_writing(kubeconfig: Path) -> None:
    """lightkube `apply` right after `create` resumes a suspended Job while the Job controller writes its status:
    the apiserver applies again to the object as it then is (GuaranteedUpdate), it answers no 409 Conflict."""
    from lightkube import Client, KubeConfig
    from lightkube.codecs import from_dict
    from lightkube.resources.batch_v1 import Job

    c = Client(config=KubeConfig.from_file(str(kubeconfig)), field_manager="resumer")
    for i in range(5):
        suspended = _job(f"lk-resume-{i}", "exit 0", suspend=True)
        c.create(from_dict(suspended))
        resumed = c.apply(from_dict(_job(f"lk-resume-{i}", "exit 0", suspend=False)), force=True)
        assert resumed.spec.suspend is False
        done = c.wait(Job, f"lk-resume-{i}", for_conditions=["Complete", "Failed"], namespace="default")
        assert [cond.type for cond in done.status.conditions if cond.status == "True"][-1] == "Complete"


def test_kubernetes_watch_with_bookmarks_gets_one_before_its_timeout(kubeconfig: Path) -> None:
    """The official client's `Watch.stream` with `allow_watch_bookmarks` and `timeout_seconds`: an idle watch
    gets one bookmark, 2 s before its timeout (the cacher's `nextBookmarkTime`), and none as it ends. It carries
    the store's revision, which the node's lease renewals may have moved past the list's."""
    from kubernetes import client, config, watch

    api = config.new_client_from_config(str(kubeconfig))
    with api:
        batch = client.BatchV1Api(api)
        for _ in range(2):  # the extra bookmark at the deadline came in about 2 watches of 3
            rv = batch.list_namespaced_job("default").metadata.resource_version
            events = watch.Watch().stream(
                batch.list_namespaced_job,
                "default",
                field_selector="metadata.name=no-such-job",
                resource_version=rv,
                allow_watch_bookmarks=True,
                timeout_seconds=3,
            )
            seen = [(e["type"], e["raw_object"]["metadata"]) for e in events]
            expected = [("BOOKMARK", ["resourceVersion", "creationTimestamp"])]  # the zero Job's metadata
            assert [(kind, list(meta)) for kind, meta in seen] == expected
            assert int(seen[0][1]["resourceVersion"]) >= int(rv)


def test_kubernetes_watch_list_from_a_revision_not_reached_raises_the_too_large_timeout(kubeconfig: Path) -> None:
    """The official client's `Watch.stream` with `send_initial_events` from a resourceVersion the server does not
    reach within 3 s: the watch is a 200 stream whose ERROR event the client raises as `ApiException` 504 with
    the Status's reason and message (and no HTTP body), as against a cluster's watch cache (cacher `Watch`)."""
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException

    api = config.new_client_from_config(str(kubeconfig))
    with api:
        core = client.CoreV1Api(api)
        wanted = int(core.list_namespaced_pod("default").metadata.resource_version) + 1_000_000
        with pytest.raises(ApiException) as raised:
            for _ in watch.Watch().stream(
                core.list_namespaced_pod,
                "default",
                resource_version=str(wanted),
                resource_version_match="NotOlderThan",
                send_initial_events=True,
                allow_watch_bookmarks=True,
                timeout_seconds=30,
            ):
                pass
    assert raised.value.status == 504
    assert raised.value.reason.startswith(f"Timeout: Timeout: Too large resource version: {wanted}, current: ")
    assert raised.value.body is None  # an ERROR event, not an HTTP error response


def test_kubernetes_paged_list_tells_how_many_items_remain(kubeconfig: Path) -> None:
    """`limit` pages carry `remainingItemCount` as etcd3's GetList gives it: the objects after the page, only when
    no selector narrows the list."""
    from kubernetes import client, config

    api = config.new_client_from_config(str(kubeconfig))
    with api:
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        core.create_namespace({"metadata": {"name": "paged"}})
        for i in range(4):
            job = _job(f"paged-{i}", "exit 0", suspend=True)
            job["metadata"]["namespace"] = "paged"
            batch.create_namespaced_job("paged", job)
        first = batch.list_namespaced_job("paged", limit=1)
        assert [j.metadata.name for j in first.items] == ["paged-0"]
        assert first.metadata.remaining_item_count == 3
        second = batch.list_namespaced_job("paged", limit=2, _continue=first.metadata._continue)
        assert [j.metadata.name for j in second.items] == ["paged-1", "paged-2"]
        assert second.metadata.remaining_item_count == 1
        last = batch.list_namespaced_job("paged", limit=2, _continue=second.metadata._continue)
        assert [j.metadata.name for j in last.items] == ["paged-3"]
        assert last.metadata._continue is None and last.metadata.remaining_item_count is None
        selected = batch.list_namespaced_job("paged", limit=1, label_selector="job-name!=x")
        assert selected.metadata._continue is not None and selected.metadata.remaining_item_count is None
