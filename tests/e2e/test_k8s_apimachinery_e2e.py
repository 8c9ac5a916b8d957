"""Kubernetes' API machinery end-to-end tests, run against `kjobs up` through the official client.

Each test is one `It` of kubernetes/kubernetes test/e2e/apimachinery/watch.go, chunking.go, table_conversion.go
or namespace.go, named after it, with its steps and its assertions, against one `kjobs up` started for the module
and a namespace of its own per test, as the e2e framework gives each `It` (docs/kubernetes-e2e.md lists what was
ported, changed and left out). client-go's calls are the Python client's one for one: typed create/get/update/
patch, watches read on a thread of their own (a `watch.Interface`'s result channel), `RESTClient` requests with a
`Table` Accept header through `ApiClient.call_api`.

- chunking.go and table_conversion.go list PodTemplates, which kjobs does not serve: Secrets stand in (a
  namespaced kind nothing else creates in a namespace; ConfigMaps would not do, as every namespace holds
  `kube-root-ca.crt`). The assertions are the same.
- A continue token expires on a cluster when etcd compacts (every 5 minutes): kjobs keeps a bounded number of
  changes per resource instead, so the module runs `kjobs up --history-size 500` and the expiry `It` writes
  Secrets elsewhere until its token answers 410.
- `expectNoEvent` waits 10 s for an event that must not come; here `NO_EVENT` seconds, and each test also checks
  the whole sequence a watch received (a watch delivers in order, so an event that must not come would have come
  before the later ones the test waits for).
"""

from __future__ import annotations

import contextlib
import json
import queue
import random
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException
from kubernetes.watch.watch import iter_resp_lines

from tests.server.test_up import _up
from tests.support import free_port

pytestmark = pytest.mark.e2e

T = TypeVar("T")
POLL = 0.05
TIMEOUT = 45.0
"""Seconds any one wait may take (watch.go's `expectEvent` waits a minute; the rest poll for 60 s or more)."""
NO_EVENT = 0.5
"""Seconds `expectNoEvent` waits (10 s upstream; see the module notes)."""
HISTORY = 500
"""`kjobs up --history-size`: changes kept per resource, so the expiry `It` needs a few hundred writes."""
WATCH_LABEL = "watch-this-configmap"
TOTAL = 400
"""chunking.go numberOfTotalResources."""
TABLE = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"


@dataclass
class Cluster:
    api: k8s.ApiClient
    core: k8s.CoreV1Api


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One `kjobs up` (one node, 500 changes kept per resource) for every test of the module."""
    tmp = tmp_path_factory.mktemp("k8sapimachinery")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config))
    with _up(tmp, *args, "--history-size", str(HISTORY)) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        yield Cluster(api, k8s.CoreV1Api(api))
        api.close()


def create_namespace(c: Cluster, base: str) -> str:
    """framework.CreateNamespace: `base` and a random suffix."""
    name = f"{base}-{secrets.token_hex(3)}"
    c.core.create_namespace({"metadata": {"name": name}})
    return name


def delete_namespace(c: Cluster, name: str) -> None:
    try:
        c.core.delete_namespace(name)
    except ApiException as exc:
        if exc.status != 404:
            raise


F = TypeVar("F", bound=Callable[..., None])


def framework(base: str) -> Callable[[F], F]:
    """framework.NewDefaultFramework(base): the test's namespace is named `base-…`."""

    def mark(test: F) -> F:
        test.framework = base  # type: ignore[attr-defined]
        return test

    return mark


@pytest.fixture
def ns(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (f.Namespace, named after the file's framework)."""
    name = create_namespace(cluster, request.function.framework)
    yield name
    delete_namespace(cluster, name)


def until(probe: Callable[[], T | bool | None], what: str, timeout: float = TIMEOUT) -> T:
    """wait.PollUntilContextTimeout: poll `probe` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found  # type: ignore[return-value]
        time.sleep(POLL)
    raise AssertionError(f"timed out waiting for {what}")


def plain(c: Cluster, obj: Any) -> Any:
    """An object as JSON data, through the client's model (what `apiequality.Semantic.DeepEqual` compares)."""
    return c.api.sanitize_for_serialization(obj)


def raw_request(c: Cluster, method: str, path: str, *, accept: str, body: Any = None, **query: Any) -> Any:
    """`RESTClient().Verb()...SetHeader("Accept", accept).Do(ctx).Into(...)`: the decoded JSON answer (an
    `ApiException` for a status that is not 2xx)."""
    params = [(key, value) for key, value in query.items() if value is not None]
    headers = {"Accept": accept, "Content-Type": "application/json"}
    request = c.api.param_serialize(method, path, query_params=params, header_params=headers, body=body)
    response = c.api.call_api(*request)
    response.read()
    if not 200 <= response.status < 300:
        raise ApiException(http_resp=response)
    return json.loads(response.data)


# --- watch.go ------------------------------------------------------------------------------------------------------


class ConfigMapWatch:
    """`c.CoreV1().ConfigMaps(ns).Watch(...)`: the events are read on a thread into a queue (`ResultChan()`)."""

    def __init__(self, c: Cluster, ns: str, resource_version: str, *labels: str) -> None:
        self.c = c
        self.response = c.core.list_namespaced_config_map(
            ns,
            watch=True,
            resource_version=resource_version or None,
            label_selector=f"{WATCH_LABEL} in ({','.join(labels)})" if labels else None,
            _preload_content=False,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[tuple[str, str]] = []
        """(type, name) of every event taken from the channel."""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for line in iter_resp_lines(self.response):
                self.lines.put(line)
        except Exception:  # the connection shut by stop()
            pass
        self.lines.put(None)

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event (its object decoded into a `V1ConfigMap`), or None when none came in `timeout`."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            raise AssertionError("Watch closed unexpectedly")
        event: dict[str, Any] = k8s_watch.Watch().unmarshal_event(line, "V1ConfigMap")
        self.seen.append((event["type"], event["raw_object"]["metadata"]["name"]))
        return event

    def stop(self) -> None:
        """`Stop()`: shut the connection so the reading thread ends, then close the response once it has: a
        reader that fails on the shut socket closes it too, and two threads closing one `HTTPResponse` at once
        can make the second's flush raise on a file the first just closed."""
        sock = getattr(self.response.connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        self.response.close()


def watch_config_maps(c: Cluster, ns: str, resource_version: str, *labels: str) -> ConfigMapWatch:
    """watchConfigMaps: a watch of the namespace's configmaps whose label `watch-this-configmap` is in `labels`."""
    return ConfigMapWatch(c, ns, resource_version, *labels)


def wait_for_event(w: ConfigMapWatch, kind: str, obj: Any, duration: float) -> dict[str, Any] | None:
    """waitForEvent: read events until one of type `kind` (and equal to `obj` unless None) comes, for `duration`."""
    deadline = time.monotonic() + duration
    while (left := deadline - time.monotonic()) > 0:
        event = w.next(left)
        if event is None:
            return None
        if event["type"] == kind and (obj is None or plain(w.c, event["object"]) == plain(w.c, obj)):
            return event
    return None


def expect_event(w: ConfigMapWatch, kind: str, obj: Any) -> dict[str, Any]:
    event = wait_for_event(w, kind, obj, TIMEOUT)
    assert event is not None, f"Timed out waiting for expected watch notification: {kind} {obj}"
    return event


def expect_no_event(w: ConfigMapWatch, kind: str, obj: Any) -> None:
    event = wait_for_event(w, kind, obj, NO_EVENT)
    assert event is None, f"Unexpected watch notification observed: {event}"


def update_config_map(c: Cluster, ns: str, name: str, mutate: Callable[[k8s.V1ConfigMap], None]) -> Any:
    """updateConfigMap (test/e2e/apimachinery/watch.go): get, mutate, update, retried on conflict."""
    for _ in range(5):
        cm = c.core.read_namespaced_config_map(name, ns)
        mutate(cm)
        try:
            return c.core.replace_namespaced_config_map(name, ns, cm)
        except ApiException as exc:
            if exc.status != 409:
                raise
    raise AssertionError(f"configmap {name}: too many conflicts")


def set_data(key: str, value: str) -> Callable[[k8s.V1ConfigMap], None]:
    def mutate(cm: k8s.V1ConfigMap) -> None:
        cm.data = {**(cm.data or {}), key: value}

    return mutate


def set_label(value: str) -> Callable[[k8s.V1ConfigMap], None]:
    def mutate(cm: k8s.V1ConfigMap) -> None:
        cm.metadata.labels[WATCH_LABEL] = value

    return mutate


def labelled(name: str, value: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {WATCH_LABEL: value}}}


@framework("watch")
def test_should_observe_add_update_and_delete_watch_notifications_on_configmaps(cluster: Cluster, ns: str) -> None:
    c = cluster
    a, b = "multiple-watchers-A", "multiple-watchers-B"
    watch_a = watch_config_maps(c, ns, "", a)
    watch_b = watch_config_maps(c, ns, "", b)
    watch_ab = watch_config_maps(c, ns, "", a, b)
    try:
        cm_a = c.core.create_namespaced_config_map(ns, labelled("e2e-watch-test-configmap-a", a))
        expect_event(watch_a, "ADDED", cm_a)
        expect_event(watch_ab, "ADDED", cm_a)
        expect_no_event(watch_b, "ADDED", cm_a)

        for mutation in ("1", "2"):
            cm_a = update_config_map(c, ns, cm_a.metadata.name, set_data("mutation", mutation))
            expect_event(watch_a, "MODIFIED", cm_a)
            expect_event(watch_ab, "MODIFIED", cm_a)
            expect_no_event(watch_b, "MODIFIED", cm_a)

        c.core.delete_namespaced_config_map(cm_a.metadata.name, ns)
        expect_event(watch_a, "DELETED", None)
        expect_event(watch_ab, "DELETED", None)
        expect_no_event(watch_b, "DELETED", None)

        cm_b = c.core.create_namespaced_config_map(ns, labelled("e2e-watch-test-configmap-b", b))
        expect_event(watch_b, "ADDED", cm_b)
        expect_event(watch_ab, "ADDED", cm_b)
        expect_no_event(watch_a, "ADDED", cm_b)

        c.core.delete_namespaced_config_map(cm_b.metadata.name, ns)
        expect_event(watch_b, "DELETED", None)
        expect_event(watch_ab, "DELETED", None)
        expect_no_event(watch_a, "DELETED", None)

        name_a, name_b = "e2e-watch-test-configmap-a", "e2e-watch-test-configmap-b"
        a_events = [("ADDED", name_a), ("MODIFIED", name_a), ("MODIFIED", name_a), ("DELETED", name_a)]
        b_events = [("ADDED", name_b), ("DELETED", name_b)]
        assert watch_a.seen == a_events
        assert watch_b.seen == b_events
        assert watch_ab.seen == a_events + b_events
    finally:
        for w in (watch_a, watch_b, watch_ab):
            w.stop()


@framework("watch")
def test_should_be_able_to_start_watching_from_a_specific_resource_version(cluster: Cluster, ns: str) -> None:
    c = cluster
    label = "from-resource-version"
    cm = c.core.create_namespaced_config_map(ns, labelled("e2e-watch-test-resource-version", label))
    first_update = update_config_map(c, ns, cm.metadata.name, set_data("mutation", "1"))
    second_update = update_config_map(c, ns, cm.metadata.name, set_data("mutation", "2"))
    c.core.delete_namespaced_config_map(cm.metadata.name, ns)

    w = watch_config_maps(c, ns, first_update.metadata.resource_version, label)
    try:
        expect_event(w, "MODIFIED", second_update)
        expect_event(w, "DELETED", None)
        assert w.seen == [("MODIFIED", cm.metadata.name), ("DELETED", cm.metadata.name)]
    finally:
        w.stop()


@framework("watch")
def test_should_be_able_to_restart_watching_from_the_last_resource_version_observed_by_the_previous_watch(
    cluster: Cluster, ns: str
) -> None:
    c = cluster
    label, name = "watch-closed-and-restarted", "e2e-watch-test-watch-closed"
    broken = watch_config_maps(c, ns, "", label)
    try:
        cm = c.core.create_namespaced_config_map(ns, labelled(name, label))
        update_config_map(c, ns, name, set_data("mutation", "1"))
        expect_event(broken, "ADDED", cm)
        last = wait_for_event(broken, "MODIFIED", None, TIMEOUT)
        assert last is not None, "Timed out waiting for second watch notification"
    finally:
        broken.stop()

    second_update = update_config_map(c, ns, name, set_data("mutation", "2"))
    assert isinstance(last["object"], k8s.V1ConfigMap), f"Expected last notification to refer to a configmap: {last}"
    restarted = watch_config_maps(c, ns, last["object"].metadata.resource_version, label)
    try:
        c.core.delete_namespaced_config_map(name, ns)
        expect_event(restarted, "MODIFIED", second_update)
        expect_event(restarted, "DELETED", None)
        assert restarted.seen == [("MODIFIED", name), ("DELETED", name)]
    finally:
        restarted.stop()


@framework("watch")
def test_should_observe_an_object_deletion_if_it_stops_meeting_the_requirements_of_the_selector(
    cluster: Cluster, ns: str
) -> None:
    c = cluster
    label, name = "label-changed-and-restored", "e2e-watch-test-label-changed"
    w = watch_config_maps(c, ns, "", label)
    try:
        cm = c.core.create_namespaced_config_map(ns, labelled(name, label))
        first_update = update_config_map(c, ns, name, set_data("mutation", "1"))
        update_config_map(c, ns, name, set_label("wrong-value"))
        expect_event(w, "ADDED", cm)
        expect_event(w, "MODIFIED", first_update)
        expect_event(w, "DELETED", None)

        second_update = update_config_map(c, ns, name, set_data("mutation", "2"))
        expect_no_event(w, "MODIFIED", second_update)

        restored = update_config_map(c, ns, name, set_label(label))
        third_update = update_config_map(c, ns, name, set_data("mutation", "3"))
        c.core.delete_namespaced_config_map(name, ns)
        expect_event(w, "ADDED", restored)
        expect_event(w, "MODIFIED", third_update)
        expect_event(w, "DELETED", None)
        kinds = ["ADDED", "MODIFIED", "DELETED", "ADDED", "MODIFIED", "DELETED"]
        assert w.seen == [(kind, name) for kind in kinds]
    finally:
        w.stop()


def produce_config_map_events(c: Cluster, ns: str, stop: threading.Event, errors: list[BaseException]) -> None:
    """produceConfigMapEvents: every 5 ms create, update or delete one configmap `cm-N` at random."""
    existing: list[int] = []
    i = 0
    try:
        while not stop.is_set():
            op = random.randrange(3) if existing else 0
            if op == 0:
                c.core.create_namespaced_config_map(ns, {"metadata": {"name": f"cm-{i}"}})
                existing.append(i)
                i += 1
            elif op == 1:
                name = f"cm-{random.choice(existing)}"
                c.core.replace_namespaced_config_map(name, ns, {"metadata": {"name": name}})
            else:
                index = random.randrange(len(existing))
                c.core.delete_namespaced_config_map(f"cm-{existing.pop(index)}", ns)
            stop.wait(0.005)
    except BaseException as exc:  # reported by the test
        errors.append(exc)


def next_config_map_event(w: ConfigMapWatch) -> k8s.V1ConfigMap:
    """waitForNextConfigMapEvent: the next event's configmap, within 10 s."""
    event = w.next(10.0)
    assert event is not None, "timed out waiting for watch event"
    assert isinstance(event["object"], k8s.V1ConfigMap), f"expected config map, got {event['object']}"
    return event["object"]


@pytest.mark.slow  # a few seconds: hundreds of writes and watches
@framework("watch")
def test_should_receive_events_on_concurrent_watches_in_same_order(cluster: Cluster, ns: str) -> None:
    c = cluster
    iterations = 100
    resource_version = c.core.list_namespaced_config_map(ns).metadata.resource_version
    stop, errors = threading.Event(), []
    producer = threading.Thread(target=produce_config_map_events, args=(c, ns, stop, errors), daemon=True)
    producer.start()
    watches: list[ConfigMapWatch] = []
    try:
        for _ in range(iterations):
            watches.append(watch_config_maps(c, ns, resource_version))
            resource_version = next_config_map_event(watches[0]).metadata.resource_version
            for w in watches[1:]:
                got = next_config_map_event(w).metadata.resource_version
                assert got == resource_version, f"resource version mismatch, expected {resource_version} but got {got}"
    finally:
        stop.set()
        for w in watches:
            w.stop()
        producer.join(TIMEOUT)
    assert not errors, errors


# --- chunking.go ---------------------------------------------------------------------------------------------------


def create_templates(c: Cluster, ns: str, count: int) -> None:
    """The BeforeEach's `count` objects `template-0000`..., Secrets standing in for PodTemplates."""
    for i in range(count):
        c.core.create_namespaced_secret(ns, {"metadata": {"name": f"template-{i:04d}"}, "data": {"k": "dg=="}})


def check_remaining(page: Any, found: int) -> None:
    """`list.GetRemainingItemCount()`: nil on the last page; else it and what was read make up the whole."""
    if not page.metadata._continue:
        assert page.metadata.remaining_item_count is None
    else:
        assert page.metadata.remaining_item_count is not None
        assert page.metadata.remaining_item_count + len(page.items) + found == TOTAL


@pytest.mark.slow  # a few seconds: hundreds of writes and watches
@framework("chunking")
def test_should_return_chunks_of_results_for_list_calls(cluster: Cluster, ns: str) -> None:
    c = cluster
    create_templates(c, ns, TOTAL)
    for _ in range(3):
        found, last_rv, token = 0, "", None
        while True:
            page = c.core.list_namespaced_secret(ns, limit=17, _continue=token)
            assert len(page.items) <= 17
            last_rv = last_rv or page.metadata.resource_version
            assert page.metadata.resource_version == last_rv
            check_remaining(page, found)
            for item in page.items:
                assert item.metadata.name == f"template-{found:04d}"
                found += 1
            token = page.metadata._continue
            if not token:
                break
        assert found == TOTAL

    whole = c.core.list_namespaced_secret(ns, limit=TOTAL + 1)
    assert len(whole.items) == TOTAL


@pytest.mark.slow  # a few seconds: hundreds of writes and watches
@framework("chunking")
def test_should_support_continue_listing_from_the_last_key_if_the_original_version_has_been_compacted_away_though_the_list_is_inconsistent(  # noqa: E501
    cluster: Cluster, ns: str
) -> None:
    c = cluster
    create_templates(c, ns, TOTAL)
    one_tenth = TOTAL // 10
    page = c.core.list_namespaced_secret(ns, limit=one_tenth)
    first_token, first_rv = page.metadata._continue, page.metadata.resource_version
    check_remaining(page, 0)

    # Retrieving the second page until the token expires: on a cluster etcd compacts every 5 minutes; here
    # writes elsewhere push the token's revision out of the bounded history.
    elsewhere = create_namespace(c, "chunking-writes")
    try:
        c.core.create_namespaced_secret(elsewhere, {"metadata": {"name": "churn"}})

        def expired() -> str | None:
            try:
                c.core.list_namespaced_secret(ns, limit=one_tenth, _continue=first_token)
            except ApiException as exc:
                assert exc.status == 410, exc.body
                status = json.loads(exc.body)
                assert status["reason"] == "Expired", status
                token: str = status["metadata"]["continue"]
                assert token, "expect non empty continue token"
                return token
            for n in range(50):
                c.core.replace_namespaced_secret("churn", elsewhere, {"metadata": {"name": "churn"}, "data": {"n": ""}})
                c.core.patch_namespaced_secret("churn", elsewhere, {"metadata": {"labels": {"n": str(n)}}})
            return None

        inconsistent = until(expired, "the continue token to expire", timeout=TIMEOUT)
    finally:
        delete_namespace(c, elsewhere)

    page = c.core.list_namespaced_secret(ns, limit=one_tenth, _continue=inconsistent)
    assert page.metadata.resource_version != first_rv
    assert len(page.items) == one_tenth
    found = one_tenth
    check_remaining(page, found)
    for item in page.items:
        assert item.metadata.name == f"template-{found:04d}"
        found += 1

    token, last_rv = page.metadata._continue, page.metadata.resource_version
    while True:
        page = c.core.list_namespaced_secret(ns, limit=one_tenth, _continue=token)
        check_remaining(page, found)
        assert len(page.items) <= one_tenth
        assert page.metadata.resource_version == last_rv
        for item in page.items:
            assert item.metadata.name == f"template-{found:04d}"
            found += 1
        token = page.metadata._continue
        if not token:
            break
    assert found == TOTAL


# --- table_conversion.go -------------------------------------------------------------------------------------------


def print_table(table: dict[str, Any]) -> str:
    """printers.NewTablePrinter(PrintOptions{}) through a tabwriter: the priority-0 columns, headers upper-cased,
    each column padded to its widest cell and one space."""
    shown = [i for i, column in enumerate(table["columnDefinitions"]) if not column.get("priority")]
    rows = [[str(table["columnDefinitions"][i]["name"]).upper() for i in shown]]
    rows += [[str(row["cells"][i]) for i in shown] for row in table.get("rows") or []]
    widths = [max(len(row[j]) for row in rows) for j in range(len(shown))]
    return "".join(" ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + "\n" for row in rows)


@framework("tables")
def test_should_return_pod_details(cluster: Cluster, ns: str) -> None:
    c = cluster
    pod_name = "pod-1"
    # newTablePod: agnhost `porter` serving on 8080 (SERVE_PORT_8080=foo), restartPolicy Never; a local process
    # that runs until signalled stands in for it (the `It` reads the pod's Table, not what it serves).
    container = {
        "name": "agnhost-container",
        "image": "registry.k8s.io/e2e-test-images/agnhost:2.52",
        "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 1000000 & wait"],
        "ports": [{"containerPort": 8080}],
        "env": [{"name": "SERVE_PORT_8080", "value": "foo"}],
    }
    pod = {"metadata": {"name": pod_name}, "spec": {"restartPolicy": "Never", "containers": [container]}}
    c.core.create_namespaced_pod(ns, pod)

    table = raw_request(c, "GET", f"/api/v1/namespaces/{ns}/pods/{pod_name}", accept=TABLE)
    assert len(table["columnDefinitions"]) > 2
    assert len(table["rows"]) == 1
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])
    assert table["columnDefinitions"][0]["name"] == "Name"
    assert table["rows"][0]["cells"][0] == pod_name

    out = print_table(table)
    assert re.search(r"^NAME\s", out)
    assert re.search(r"\npod-1\s", out)


@framework("tables")
def test_should_return_chunks_of_table_results_for_list_calls(cluster: Cluster, ns: str) -> None:
    c = cluster
    create_templates(c, ns, 20)
    path = f"/api/v1/namespaces/{ns}/secrets"
    paged = raw_request(c, "GET", path, accept=TABLE, limit=2)
    assert len(paged["rows"]) == 2
    assert paged["metadata"].get("resourceVersion", "") != ""
    assert paged["metadata"].get("continue", "") != ""
    assert paged["rows"][0]["cells"][0] == "template-0000"
    assert paged["rows"][1]["cells"][0] == "template-0001"

    paged = raw_request(c, "GET", path, accept=TABLE, **{"continue": paged["metadata"]["continue"]})
    assert paged["rows"]
    assert paged["rows"][0]["cells"][0] == "template-0002"


@framework("tables")
def test_should_return_generic_metadata_details_across_all_namespaces_for_nodes(cluster: Cluster, ns: str) -> None:
    table = raw_request(cluster, "GET", "/api/v1/nodes", accept=TABLE)
    assert len(table["columnDefinitions"]) >= 2
    assert table["rows"]
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])
    assert table["columnDefinitions"][0]["name"] == "Name"
    assert table["metadata"].get("resourceVersion", "") != ""
    assert re.search(r"^NAME\s", print_table(table))


@framework("tables")
def test_should_return_a_406_for_a_backend_which_does_not_implement_metadata(cluster: Cluster, ns: str) -> None:
    review = {"spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}
    with pytest.raises(ApiException) as caught:
        raw_request(
            cluster,
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            accept="application/json;as=Table;v=v1;g=meta.k8s.io",
            body=review,
        )
    assert caught.value.status == 406


# --- namespace.go --------------------------------------------------------------------------------------------------


def namespace_gone(c: Cluster, name: str) -> bool:
    try:
        c.core.read_namespace(name)
    except ApiException as exc:
        return exc.status == 404
    return False


PAUSE = "trap 'exit 0' TERM; sleep 1000000 & wait"
"""The pause image: runs until signalled, then exits 0."""


@framework("namespaces")
def test_should_ensure_that_all_pods_are_removed_when_a_namespace_is_deleted(cluster: Cluster, ns: str) -> None:
    c = cluster
    namespace = create_namespace(c, "nsdeletetest")
    pod = {
        "metadata": {"name": "test-pod"},
        "spec": {
            "containers": [{"name": "nginx", "image": "registry.k8s.io/pause:3.10", "command": ["sh", "-c", PAUSE]}]
        },
    }
    created = c.core.create_namespaced_pod(namespace, pod)
    until(lambda: c.core.read_namespaced_pod("test-pod", namespace).status.phase == "Running", "the pod Running")

    c.core.delete_namespace(namespace)
    until(
        lambda: namespace_gone(c, namespace),
        "the namespace removed",
        60 + created.spec.termination_grace_period_seconds,
    )

    # Beyond the `It` (whose recreated namespace has a new random name): the namespace went only once its pod had.
    with pytest.raises(ApiException) as left:
        c.core.read_namespaced_pod("test-pod", namespace)
    assert left.value.status == 404

    recreated = create_namespace(c, "nsdeletetest")
    try:
        with pytest.raises(ApiException) as caught:
            c.core.read_namespaced_pod("test-pod", recreated)
        assert caught.value.status == 404
    finally:
        delete_namespace(c, recreated)


def extinguish(c: Cluster, total: int, max_allowed_after_delete: int, max_seconds: float) -> None:
    """extinguish: create `total` namespaces, delete them all, poll until at most `max_allowed_after_delete`
    remain. The 10 s wait between the two is left out (it waits for nothing the test then checks)."""
    names = [create_namespace(c, f"nslifetest-{n}") for n in range(total)]
    deleted = []
    for item in c.core.list_namespace().items:  # framework.DeleteNamespaces(["nslifetest"], nil)
        if "nslifetest" in item.metadata.name:
            c.core.delete_namespace(item.metadata.name)
            deleted.append(item.metadata.name)
    assert sorted(deleted) == sorted(names)

    def vanished() -> bool:
        left = [i for i in c.core.list_namespace().items if "nslifetest" in i.metadata.name]
        return len(left) <= max_allowed_after_delete

    until(vanished, "namespaces to vanish", max_seconds)


@framework("namespaces")
def test_should_delete_fast_enough_90_percent_of_100_namespaces_in_150_seconds(cluster: Cluster, ns: str) -> None:
    extinguish(cluster, 100, 10, 150)


@framework("namespaces")
def test_should_always_delete_fast_all_of_100_namespaces_in_150_seconds(cluster: Cluster, ns: str) -> None:
    extinguish(cluster, 100, 0, 150)


@framework("namespaces")
def test_should_patch_a_namespace(cluster: Cluster, ns: str) -> None:
    c = cluster
    name = create_namespace(c, f"nspatchtest-{secrets.token_hex(8)}")
    try:
        created = c.core.read_namespace(name)
        assert int(created.metadata.resource_version) > 0  # HaveValidResourceVersion
        patched = c.core.patch_namespace(name, {"metadata": {"labels": {"testLabel": "testValue"}}})
        assert int(created.metadata.resource_version) < int(patched.metadata.resource_version)
        assert c.core.read_namespace(name).metadata.labels["testLabel"] == "testValue"
    finally:
        delete_namespace(c, name)


@framework("namespaces")
def test_should_apply_changes_to_a_namespace_status(cluster: Cluster, ns: str) -> None:
    c = cluster
    status_path = f"/api/v1/namespaces/{ns}/status"
    status = raw_request(c, "GET", status_path, accept="application/json")
    assert status["status"]["phase"] == "Active"

    condition = {"type": "StatusPatch", "status": "True", "reason": "E2E", "message": "Patched by an e2e test"}
    patch = {"metadata": {"annotations": {"e2e-patched-ns-status": ns}}, "status": {"conditions": [condition]}}
    c.api.set_default_header("Content-Type", "application/merge-patch+json")
    try:
        patched = c.core.patch_namespace_status(ns, patch)
    finally:
        c.api.default_headers.pop("Content-Type", None)
    assert patched.metadata.annotations["e2e-patched-ns-status"] == ns
    assert patched.status.conditions[-1].reason == "E2E"
    assert patched.status.conditions[-1].message == "Patched by an e2e test"

    for _ in range(5):  # retry.RetryOnConflict
        current = raw_request(c, "GET", status_path, accept="application/json")
        current["status"]["conditions"].append(
            {"type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "Updated by an e2e test"}
        )
        try:
            updated = c.core.replace_namespace_status(ns, current)
            break
        except ApiException as exc:
            if exc.status != 409:
                raise
    else:
        raise AssertionError("failed to update namespace status: conflicts")
    assert updated.status.conditions[-1].type == "StatusUpdate"
    assert updated.status.conditions[-1].message == "Updated by an e2e test"


@framework("namespaces")
def test_should_apply_an_update_to_a_namespace(cluster: Cluster, ns: str) -> None:
    c = cluster
    for _ in range(5):  # retry.RetryOnConflict
        namespace = c.core.read_namespace(ns)
        namespace.metadata.labels[ns] = "updated"
        try:
            updated = c.core.replace_namespace(ns, namespace)
            break
        except ApiException as exc:
            if exc.status != 409:
                raise
    else:
        raise AssertionError("failed to update namespace: conflicts")
    assert updated.metadata.labels[ns] == "updated"


@framework("namespaces")
def test_should_apply_a_finalizer_to_a_namespace(cluster: Cluster, ns: str) -> None:
    c = cluster
    fake = "e2e.example.com/fakeFinalizer"
    name = create_namespace(c, "e2e-ns")
    try:
        namespace = c.core.read_namespace(name)
        namespace.spec.finalizers = [*(namespace.spec.finalizers or []), fake]
        updated = c.core.replace_namespace_finalize(name, namespace)
        assert fake in updated.spec.finalizers, f"Finalizer {fake} was not found: {updated.spec.finalizers}"

        namespace = c.core.read_namespace(name)
        namespace.spec.finalizers = [f for f in namespace.spec.finalizers or [] if f != fake]
        updated = c.core.replace_namespace_finalize(name, namespace)
        assert fake not in (updated.spec.finalizers or []), f"Finalizer {fake} was found: {updated.spec.finalizers}"
    finally:
        delete_namespace(c, name)


# --- health_handlers.go --------------------------------------------------------------------------------------------

SHARED_CHECKS = {"[+]ping ok", "[+]log ok", "[+]etcd ok"}
"""The required checks kjobs has: kube-apiserver's `poststarthook/...`, `informer-sync` and `autoregister-completion`
watch components kjobs does not run (apiextensions, the aggregator, the system namespaces controller)."""


def health_path(c: Cluster, path: str, required: set[str]) -> None:
    """testPath: poll `path` until it answers 200, then every required check is a line of its body."""

    def answered() -> str | None:
        try:
            text = raw_text(c, path)
        except ApiException:
            return None
        return text

    body = until(answered, f"{path} to answer 200", timeout=30)
    missing = required - set(body.split("\n"))
    assert not missing, f"missing required {path} checks: {sorted(missing)} in: {body}"


def raw_text(c: Cluster, path: str) -> str:
    request = c.api.param_serialize("GET", path)
    response = c.api.call_api(*request)
    response.read()
    if response.status != 200:
        raise ApiException(http_resp=response)
    text: str = response.data.decode()
    return text


@framework("health")
def test_should_contain_necessary_checks(cluster: Cluster, ns: str) -> None:
    health_path(cluster, "/healthz?verbose=1", SHARED_CHECKS)
    health_path(cluster, "/livez?verbose=1", SHARED_CHECKS)
    health_path(cluster, "/readyz?verbose=1", SHARED_CHECKS)


# --- discovery.go --------------------------------------------------------------------------------------------------


def resource_enabled(c: Cluster, group: str, version: str, resource: str) -> bool:
    """client-go discovery.IsResourceEnabled: the group version's resource list names it (a 404 for the group
    version is "not enabled", not an error)."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        listed = raw_request(c, "GET", path, accept="application/json")
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return any(r["name"] == resource for r in listed["resources"])


@framework("discovery")
def test_should_accurately_determine_present_and_missing_resources(cluster: Cluster, ns: str) -> None:
    c = cluster
    assert resource_enabled(c, "", "v1", "namespaces"), "namespace.v1 should always be present"
    # deployments.v1.apps stands for a non-legacy group's resource upstream; kjobs serves no apps group, so
    # jobs.v1.batch stands in for it.
    assert resource_enabled(c, "batch", "v1", "jobs"), "jobs.v1.batch should always be present"
    assert not resource_enabled(c, "apps", "v1", "please-dont-ever-create-this")
    assert not resource_enabled(c, "batch", "v1", "please-dont-ever-create-this")
    assert not resource_enabled(c, "not-these-apps", "v1", "deployments")


@framework("discovery")
def test_should_validate_preferred_version_for_each_api_group(cluster: Cluster, ns: str) -> None:
    c = cluster
    groups = raw_request(c, "GET", "/apis/", accept="application/json")["groups"]
    assert groups, "Missing APIGroups"
    for group in groups:
        if group["name"].endswith(".example.com"):
            continue
        checked = raw_request(c, "GET", f"/apis/{group['name']}/", accept="application/json")
        assert checked["versions"], f"No version found for {group['name']}"
        preferred = checked["preferredVersion"]["groupVersion"]
        assert preferred in [v["groupVersion"] for v in checked["versions"]], checked


SERVED_GROUP_RESOURCES = [
    ("/api", "", "v1", "namespaces"),
    ("/apis", "authorization.k8s.io", "v1", "selfsubjectaccessreviews"),
    ("/apis", "batch", "v1", "jobs"),
    ("/apis", "coordination.k8s.io", "v1", "leases"),
    ("/apis", "events.k8s.io", "v1", "events"),
    ("/apis", "policy", "v1", "poddisruptionbudgets"),
    ("/apis", "scheduling.k8s.io", "v1", "priorityclasses"),
]
"""The `It`'s table rows for the groups kjobs serves (docs/kubernetes-e2e.md names the rows left out)."""


@framework("discovery")
def test_should_locate_the_group_version_and_a_resource_within_each_api_group(cluster: Cluster, ns: str) -> None:
    for base, group, version, resource in SERVED_GROUP_RESOURCES:
        path = "/".join(part for part in (base, group, version) if part)
        listed = raw_request(cluster, "GET", path, accept="application/json")
        assert listed["groupVersion"] == (f"{group}/{version}" if group else version)
        names = [r["name"] for r in listed["resources"]]
        assert resource in names, f"Resource {resource!r} was not found inside of resourceList {names}"
