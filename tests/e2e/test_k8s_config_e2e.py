"""Kubernetes' ConfigMap and Secret end-to-end tests (test/e2e/common/node/configmap.go, secrets.go), run against
`kjobs up` through the official client.

Each test is one `It`, named after it, with its steps and its assertions, against one `kjobs up` started for the
module and a namespace of its own per test (docs/kubernetes-e2e.md lists what was ported and left out). The pods'
busybox `sh -c env` runs `env` as a local process: the local `/bin/sh` (dash) leaves variables whose names are no
shell identifiers (`data-1`, `$_-data-1`) out of its children's environment, where busybox's shell passes them on.
`TestContainerOutput` waits for the pod to succeed and looks for each expected line in its log.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from tests.e2e.k8s_up import Cluster, core_cluster

pytestmark = pytest.mark.e2e

T = TypeVar("T")
POLL = 0.05
TIMEOUT = 45.0
"""Seconds any one wait may take (the framework's pod start timeout is 5 minutes; these take a second)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` (one node) for every test of the module."""
    with core_cluster(tmp_path_factory.mktemp("k8sconfig")) as up:
        yield up


@pytest.fixture
def ns(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own (`configmap-…` or `secrets-…`, the files' frameworks), deleted after it."""
    base = "secrets" if "secret" in request.node.name else "configmap"
    name = f"{base}-{secrets.token_hex(4)}"
    cluster.core.create_namespace({"metadata": {"name": name}})
    yield name
    cluster.core.delete_namespace(name)


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def test_container_output(c: Cluster, ns: str, pod: dict[str, Any], expected: list[str]) -> None:
    """e2epodoutput.TestContainerOutput (container 0): create the pod, wait until it succeeds, and find every
    expected string in its container's log."""
    created = c.core.create_namespaced_pod(ns, pod)
    name = created.metadata.name

    def finished() -> str | None:
        phase: str | None = c.core.read_namespaced_pod(name, ns).status.phase
        assert phase != "Failed", f"pod {name} failed"
        return phase if phase == "Succeeded" else None

    until(finished, f"pod {name} to succeed")
    container = pod["spec"]["containers"][0]["name"]
    log = c.core.read_namespaced_pod_log(name, ns, container=container)
    for text in expected:
        assert text in log, f"{text!r} not in the output of {name}:\n{log}"


test_container_output.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def env_pod(name: str, container: str, **env: Any) -> dict[str, Any]:
    """A pod of one busybox container running `sh -c env` (here `env` itself: see the module notes), restartPolicy
    Never."""
    spec = {"name": container, "image": "busybox", "command": ["env"], **env}
    return {"metadata": {"name": name}, "spec": {"containers": [spec], "restartPolicy": "Never"}}


def new_uuid() -> str:
    return str(uuid.uuid4())


# --- configmap.go --------------------------------------------------------------------------------------------------


def new_config_map(name: str) -> dict[str, Any]:
    """newConfigMap (configmap_volume.go): data-1..3 = value-1..3."""
    return {"metadata": {"name": name}, "data": {"data-1": "value-1", "data-2": "value-2", "data-3": "value-3"}}


def test_configmap_should_be_consumable_via_environment_variable(cluster: Cluster, ns: str) -> None:
    name = f"configmap-test-{new_uuid()}"
    cluster.core.create_namespaced_config_map(ns, new_config_map(name))
    ref = {"configMapKeyRef": {"name": name, "key": "data-1"}}
    pod = env_pod(f"pod-configmaps-{new_uuid()}", "env-test", env=[{"name": "CONFIG_DATA_1", "valueFrom": ref}])
    test_container_output(cluster, ns, pod, ["CONFIG_DATA_1=value-1"])


def test_configmap_should_be_consumable_via_the_environment(cluster: Cluster, ns: str) -> None:
    name = f"configmap-test-{new_uuid()}"
    data = {"data_1": "value-1", "data_2": "value-2", "data_3": "value-3"}  # newEnvFromConfigMap
    cluster.core.create_namespaced_config_map(ns, {"metadata": {"name": name}, "data": data})
    sources = [{"configMapRef": {"name": name}}, {"prefix": "p_", "configMapRef": {"name": name}}]
    pod = env_pod(f"pod-configmaps-{new_uuid()}", "env-test", envFrom=sources)
    expected = ["data_1=value-1", "data_2=value-2", "data_3=value-3"]
    test_container_output(cluster, ns, pod, [*expected, *(f"p_{line}" for line in expected)])


def test_configmap_should_fail_to_create_configmap_with_empty_key(cluster: Cluster, ns: str) -> None:
    body = {"metadata": {"name": f"configmap-test-emptykey-{new_uuid()}"}, "data": {"": "value-1"}}
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_config_map(ns, body)
    assert caught.value.status == 422


def test_configmap_should_update_configmap_successfully(cluster: Cluster, ns: str) -> None:
    name = f"configmap-test-{new_uuid()}"
    config_map = new_config_map(name)
    cluster.core.create_namespaced_config_map(ns, config_map)
    config_map["data"] = {"data": "value"}
    # The `It` updates the object it created from, which has no resourceVersion: an unconditional update.
    cluster.core.replace_namespaced_config_map(name, ns, config_map)
    assert cluster.core.read_namespaced_config_map(name, ns).data == config_map["data"]


def test_configmap_should_run_through_a_configmap_lifecycle(cluster: Cluster, ns: str) -> None:
    c = cluster
    name = f"test-configmap{new_uuid()}"
    static = "test-configmap-static=true"
    listed = c.core.list_namespaced_config_map(ns, label_selector=static)
    events: list[tuple[str, Any]] = []
    arrived = threading.Condition()
    watcher = k8s_watch.Watch()

    def read() -> None:  # WatchEventSequenceVerifier's RetryWatcher from the list's resourceVersion
        stream = watcher.stream(
            c.core.list_namespaced_config_map,
            ns,
            label_selector=static,
            resource_version=listed.metadata.resource_version,
            timeout_seconds=int(TIMEOUT),
        )
        with contextlib.suppress(Exception):  # the connection ends with the module's server
            for event in stream:
                with arrived:
                    events.append((event["type"], event["object"]))
                    arrived.notify_all()

    def watch_until(kind: str) -> None:
        """framework.WatchUntilWithoutRetry: an event of type `kind` (30 s)."""
        with arrived:
            assert arrived.wait_for(lambda: any(t == kind for t, _ in events), 30), f"no {kind} event"

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        body = {"metadata": {"name": name, "labels": {"test-configmap-static": "true"}}, "data": {"valueName": "value"}}
        c.core.create_namespaced_config_map(ns, body)
        watch_until("ADDED")

        patch = {"metadata": {"labels": {"test-configmap": "patched"}}, "data": {"valueName": "value1"}}
        c.core.patch_namespaced_config_map(name, ns, patch)
        watch_until("MODIFIED")

        config_map = c.core.read_namespaced_config_map(name, ns)
        assert config_map.data["valueName"] == "value1"
        assert config_map.metadata.labels["test-configmap"] == "patched"

        every = c.core.list_config_map_for_all_namespaces(label_selector=static).items
        assert every, "no ConfigMaps found in ConfigMap list"
        assert any(
            cm.metadata.name == name
            and cm.metadata.namespace == ns
            and cm.metadata.labels["test-configmap-static"] == "true"
            and cm.data["valueName"] == "value1"
            for cm in every
        ), "failed to find ConfigMap in list"

        c.core.delete_collection_namespaced_config_map(ns, label_selector=static)
        watch_until("DELETED")
        with arrived:  # WatchEventSequenceVerifier: the events seen are exactly the expected ones, in order
            assert [t for t, _ in events] == ["ADDED", "MODIFIED", "DELETED"]
    finally:
        watcher.stop()
        c.core.delete_collection_namespaced_config_map(ns, label_selector=static)


# --- secrets.go ----------------------------------------------------------------------------------------------------


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret_for_test(name: str) -> dict[str, Any]:
    """secretForTest: data-1..3 = "value-1\\n".."value-3\\n"."""
    return {"metadata": {"name": name}, "data": {f"data-{i}": b64(f"value-{i}\n") for i in (1, 2, 3)}}


def test_secrets_should_be_consumable_from_pods_in_env_vars(cluster: Cluster, ns: str) -> None:
    name = f"secret-test-{new_uuid()}"
    cluster.core.create_namespaced_secret(ns, secret_for_test(name))
    ref = {"secretKeyRef": {"name": name, "key": "data-1"}}
    pod = env_pod(f"pod-secrets-{new_uuid()}", "secret-env-test", env=[{"name": "SECRET_DATA", "valueFrom": ref}])
    test_container_output(cluster, ns, pod, ["SECRET_DATA=value-1"])


def test_secrets_should_be_consumable_via_the_environment(cluster: Cluster, ns: str) -> None:
    name = f"secret-test-{new_uuid()}"
    cluster.core.create_namespaced_secret(ns, secret_for_test(name))
    sources = [{"secretRef": {"name": name}}, {"prefix": "p-", "secretRef": {"name": name}}]
    pod = env_pod(f"pod-configmaps-{new_uuid()}", "env-test", envFrom=sources)
    expected = ["data-1=value-1", "data-2=value-2", "data-3=value-3"]
    test_container_output(cluster, ns, pod, [*expected, *(f"p-{line}" for line in expected)])


def test_secrets_should_fail_to_create_secret_due_to_empty_secret_key(cluster: Cluster, ns: str) -> None:
    body = {"metadata": {"name": f"secret-emptykey-test-{new_uuid()}"}, "data": {"": b64("value-1\n")}}
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_secret(ns, body)
    assert caught.value.status == 422


def test_secrets_should_patch_a_secret(cluster: Cluster, ns: str) -> None:
    c = cluster
    name = f"test-secret-{new_uuid()}"
    body = {
        "metadata": {"name": name, "labels": {"testsecret-constant": "true"}},
        "data": {"key": b64("value")},
        "type": "Opaque",
    }
    created = c.core.create_namespaced_secret(ns, body)
    assert int(created.metadata.resource_version) > 0  # HaveValidResourceVersion

    every = c.core.list_secret_for_all_namespaces(label_selector="testsecret-constant=true").items
    assert every, "no secrets found"
    assert any(s.metadata.name == name and s.metadata.namespace == ns for s in every)

    # The `It` marshals map[string][]byte{"key": []byte(base64("value1"))}: Go encodes the []byte in base64
    # once more, so the stored value is base64("value1") and the test decodes it once again.
    patch = {"metadata": {"labels": {"testsecret": "true"}}, "data": {"key": b64(b64("value1"))}}
    c.core.patch_namespaced_secret(name, ns, patch)
    secret = c.core.read_namespaced_secret(name, ns)
    assert int(created.metadata.resource_version) < int(secret.metadata.resource_version)
    assert base64.b64decode(base64.b64decode(secret.data["key"])).decode() == "value1"

    c.core.delete_collection_namespaced_secret(ns, label_selector="testsecret=true")
    every = c.core.list_secret_for_all_namespaces(label_selector="testsecret-constant=true").items
    assert not any(s.metadata.name == name and s.metadata.namespace == ns for s in every)


def test_secrets_should_be_consumable_as_environment_variable_names_with_various_prefixes(
    cluster: Cluster, ns: str
) -> None:
    name = f"secret-test-{new_uuid()}"
    cluster.core.create_namespaced_secret(ns, secret_for_test(name))
    prefixes = ["", "1-", "$_-", "ABC_", "#@!"]
    sources = [{"secretRef": {"name": name}, **({"prefix": p} if p else {})} for p in prefixes]
    pod = env_pod(f"pod-secret-{new_uuid()}", "env-test", envFrom=sources)
    expected = [f"{p}data-{i}=value-{i}" for p in prefixes for i in (1, 2, 3)]
    test_container_output(cluster, ns, pod, expected)
