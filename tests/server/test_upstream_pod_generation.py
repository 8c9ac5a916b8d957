"""A pod's `metadata.generation` (PodObservedGenerationTracking, GA and locked on in Kubernetes 1.35), through kjobs'
API service. Ported rows of pkg/registry/core/pod/strategy_test.go (TestPodGenerationPrepareForCreate,
TestPodGenerationPrepareForUpdate, TestEphemeralContainersPrepareForUpdate; ids are upstream's), plus the generation
bump of a first deletion, for pods and for a Job held by a finalizer (staging/src/k8s.io/apiserver/pkg/registry/rest/
delete.go `BeforeDelete`, .../generic/registry/store.go `markAsDeleting`). The observedGeneration the feature adds to
the pod's status is not ported: the v1.32 API kjobs serves has no such field (docs/upstream41.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService, DeleteOptions
from tests.support import run_on_service

PODS: Resource = lookup("", "v1", "pods")  # type: ignore[assignment]
JOBS: Resource = lookup("batch", "v1", "jobs")  # type: ignore[assignment]


run = run_on_service


def pod(name: str = "foo", generation: int | None = None, **spec: Any) -> Obj:
    meta: Obj = {"name": name}
    if generation is not None:
        meta["generation"] = generation
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "container", "image": "i"}], **spec},
    }


@pytest.mark.parametrize("name, generation", [("gen-not-set", None), ("gen-custom-set", 5)])
def test_TestPodGenerationPrepareForCreate(name: str, generation: int | None) -> None:
    """A created pod has generation 1, whatever the request said."""

    async def body(service: ApiService) -> Obj:
        return (await service.create(PODS, "default", pod(name, generation))).obj

    assert run(body)["metadata"]["generation"] == 1


def _tolerate(spec: Obj) -> None:
    spec["tolerations"] = [{"key": "toleration-key", "value": "toleration-value"}]


def _annotate(p: Obj) -> None:
    p["metadata"]["annotations"] = {"foo": "baz"}


@pytest.mark.parametrize(
    "change, expected",
    [
        pytest.param(lambda p: None, 1, id="pod not updated"),
        pytest.param(_annotate, 1, id="only metadata change"),
        pytest.param(lambda p: _tolerate(p["spec"]), 2, id="tolerations updated"),
    ],
)
def test_TestPodGenerationPrepareForUpdate(change: Callable[[Obj], None], expected: int) -> None:
    """A PUT changing the spec bumps the generation; one changing metadata only does not."""

    async def body(service: ApiService) -> Obj:
        old = (await service.create(PODS, "default", pod())).obj
        new = copy.deepcopy(old)
        change(new)
        return (await service.update(PODS, "default", "foo", new)).obj

    assert run(body)["metadata"]["generation"] == expected


@pytest.mark.parametrize(
    "added, expected", [(False, 1), (True, 2)], ids=["pod not updated", "ephemeral containers updated"]
)
def test_TestEphemeralContainersPrepareForUpdate(added: bool, expected: int) -> None:
    """The ephemeralcontainers subresource bumps the generation when it adds a container."""

    async def body(service: ApiService) -> Obj:
        old = (await service.create(PODS, "default", pod())).obj
        new = copy.deepcopy(old)
        if added:
            new["spec"]["ephemeralContainers"] = [
                {"name": "ephemeral-container", "image": "i", "terminationMessagePolicy": "File"}
            ]
        return (await service.update(PODS, "default", "foo", new, subresource="ephemeralcontainers")).obj

    assert run(body)["metadata"]["generation"] == expected


def test_status_and_binding_writes_leave_the_generation() -> None:
    """A status write and a binding change no spec the strategy counts: the generation stays 1 (the binding's
    `setPodNodeAndMetadata` writes through the storage, not the strategy)."""

    async def body(service: ApiService) -> tuple[int, int]:
        old = (await service.create(PODS, "default", pod())).obj
        new = copy.deepcopy(old)
        new["status"]["phase"] = "Running"
        after_status = (await service.update(PODS, "default", "foo", new, subresource="status")).obj
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bar"}, "target": {"name": "n1"}}
        await service.create(PODS, "default", pod("bar"))
        await service.bind("default", "bar", binding)
        bound = service.store.get("pods", "default", "bar")
        assert bound is not None
        return after_status["metadata"]["generation"], bound["metadata"]["generation"]

    assert run(body) == (1, 1)


def test_graceful_pod_deletion_bumps_the_generation_once() -> None:
    """`BeforeDelete`: the first graceful deletion of an object with a generation bumps it; a second DELETE
    shortening the grace does not."""

    async def body(service: ApiService) -> tuple[int, int]:
        await service.create(PODS, "default", pod(nodeName="n1", terminationGracePeriodSeconds=30))
        first = (await service.delete(PODS, "default", "foo", DeleteOptions())).obj
        second = (await service.delete(PODS, "default", "foo", DeleteOptions(grace_period=5))).obj
        return first["metadata"]["generation"], second["metadata"]["generation"]

    assert run(body) == (2, 2)


def test_deleting_a_job_held_by_a_finalizer_bumps_its_generation() -> None:
    """`markAsDeleting`: an object kept by finalizers gets deletionTimestamp and one more generation."""
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "finalizers": ["example.com/hold"]},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}},
    }

    async def body(service: ApiService) -> Obj:
        await service.create(JOBS, "default", job)
        return (await service.delete(JOBS, "default", "j", DeleteOptions(propagation="Background"))).obj

    meta = run(body)["metadata"]
    assert (meta["generation"], bool(meta.get("deletionTimestamp"))) == (2, True)


@pytest.mark.parametrize(
    "change, expected",
    [
        pytest.param(lambda p: None, None, id="generation not set"),
        pytest.param(_annotate, None, id="generation not set, only metadata change"),
        pytest.param(lambda p: _tolerate(p["spec"]), 1, id="generation not set, tolerations updated"),
    ],
)
def test_a_pod_an_earlier_release_stored_without_a_generation(change: Callable[[Obj], None], expected: Any) -> None:
    """Upstream's "generation not set" row, which a kjobs upgrade makes real: pods stored by a release before stop
    41 have no `metadata.generation` (as pods made before PodObservedGenerationTracking on a cluster), and keep none
    until their spec changes (`updatePodGeneration`: 0 + 1); a status write and a first deletion add none
    (`BeforeDelete` bumps only a generation > 0). docs/upgrade41.md."""

    async def body(service: ApiService) -> tuple[Any, Any, Any]:
        created = (await service.create(PODS, "default", pod(nodeName="n1", terminationGracePeriodSeconds=30))).obj
        old = copy.deepcopy(created)
        del old["metadata"]["generation"]
        service.store.store.update("pods", "default", "foo", old)  # as the earlier release's store holds it
        current = service.store.get("pods", "default", "foo")
        assert current is not None
        new = copy.deepcopy(current)
        change(new)
        updated = (await service.update(PODS, "default", "foo", new)).obj
        status = copy.deepcopy(updated)
        status["status"]["phase"] = "Running"
        after_status = (await service.update(PODS, "default", "foo", status, subresource="status")).obj
        deleted = (await service.delete(PODS, "default", "foo", DeleteOptions())).obj
        return tuple(o["metadata"].get("generation") for o in (updated, after_status, deleted))  # type: ignore[return-value]

    after_delete = None if expected is None else expected + 1
    assert run(body) == (expected, expected, after_delete)
