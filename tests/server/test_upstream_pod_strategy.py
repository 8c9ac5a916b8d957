"""Upstream rows of pkg/registry/core/pod/strategy_test.go and the `pods/binding` rows of
pkg/registry/core/pod/storage/storage_test.go, run through kjobs' API service.

Upstream calls the Pod strategy's hooks (PrepareForCreate, Validate, CheckGracefulDelete, LogLocation, the field
matcher) and `BindingREST.Create` on internal objects. Here each row is a request to kjobs' in-process
`ApiService` — a create, a list with a field selector, a delete, a log request, a binding — and the row's want is
checked on what a user gets back. Row ids are the upstream row names; rows upstream leaves unnamed get an id
saying what they check. Rows left out and why: docs/upstream-registry.md.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.selectors import parse_field_selector, parse_label_selector
from kjobs.api.types import Obj
from kjobs.server import portforward
from kjobs.server.logs import log_options
from kjobs.server.registry import Resource, lookup
from kjobs.server.service import ApiService, DeleteOptions, _merge_affinity_label_keys
from tests.support import run_on_service

PODS: Resource = lookup("", "v1", "pods")  # type: ignore[assignment]


run = run_on_service


def container(name: str = "container", **fields: Any) -> Obj:
    return {"name": name, "image": "image", **fields}


def pod(name: str = "foo", *, containers: list[Obj] | None = None, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers if containers is not None else [container()], **spec},
    }


async def stored(service: ApiService, body: Obj, status: Obj | None = None) -> Obj:
    """Create `body`; then, when given, merge `status` into the stored Pod as the row's pod has it."""
    created = (await service.create(PODS, "default", copy.deepcopy(body))).obj
    if status is None:
        return created
    created = copy.deepcopy(created)
    created["status"] = {**created.get("status", {}), **status}
    return await service.store.update(PODS.store_key, created, expected_rv=created["metadata"]["resourceVersion"])


# ----------------------------------------------------------------------------------------------- TestMatchPod


def _match_row(fields: Obj, status: Obj | None, selector: str, expect: bool) -> Any:
    verb = "matches" if expect else "does not match"
    return pytest.param(fields, status, selector, expect, id=f"{selector} {verb}")


@pytest.mark.parametrize(
    ("spec", "status", "selector", "expect"),
    [
        _match_row({"nodeName": "node-a"}, None, "spec.nodeName=node-a", True),
        _match_row({"nodeName": "node-b"}, None, "spec.nodeName=node-a", False),
        _match_row({"restartPolicy": "Always"}, None, "spec.restartPolicy=Always", True),
        _match_row({"restartPolicy": "Always"}, None, "spec.restartPolicy=Never", False),
        _match_row({"schedulerName": "scheduler1"}, None, "spec.schedulerName=scheduler1", True),
        _match_row({"schedulerName": "scheduler1"}, None, "spec.schedulerName=scheduler2", False),
        _match_row({"serviceAccountName": "service-account1"}, None, "spec.serviceAccountName=service-account1", True),
        _match_row({"schedulerName": "service-account1"}, None, "spec.serviceAccountName=service-account2", False),
        _match_row({}, {"phase": "Running"}, "status.phase=Running", True),
        _match_row({}, {"phase": "Running"}, "status.phase=Pending", False),
        _match_row({}, {"podIP": "1.2.3.4", "podIPs": [{"ip": "1.2.3.4"}]}, "status.podIP=1.2.3.4", True),
        _match_row({}, {"podIP": "1.2.3.4", "podIPs": [{"ip": "1.2.3.4"}]}, "status.podIP=4.3.2.1", False),
        _match_row({}, {"nominatedNodeName": "node1"}, "status.nominatedNodeName=node1", True),
        _match_row({}, {"nominatedNodeName": "node1"}, "status.nominatedNodeName=node2", False),
        _match_row({}, {"podIP": "2001:db8::", "podIPs": [{"ip": "2001:db8::"}]}, "status.podIP=2001:db8::", True),
        _match_row({}, {"podIP": "2001:db8::", "podIPs": [{"ip": "2001:db8::"}]}, "status.podIP=2001:db7::", False),
        _match_row({"hostNetwork": True}, None, "spec.hostNetwork=true", True),
        _match_row({"hostNetwork": True}, None, "spec.hostNetwork=false", False),
        _match_row({"hostNetwork": False}, None, "spec.hostNetwork=false", True),
        _match_row({}, None, "spec.hostNetwork=false", True),
        _match_row({}, None, "spec.hostNetwork=true", False),
    ],
)
def test_match_pod(spec: Obj, status: Obj | None, selector: str, expect: bool) -> None:
    """TestMatchPod (rows unnamed upstream; ids say what they check): the Pod field selectors
    (`ToSelectableFields`) on a list; a pod without `hostNetwork` is `spec.hostNetwork=false`. Node and service
    account names are lowercased (`nodeA` is no DNS subdomain, which a create refuses)."""

    async def body(service: ApiService) -> list[str]:
        await stored(service, pod(**spec), status)
        items, _ = service.list(PODS, "default", parse_label_selector(None), parse_field_selector(selector))
        return [item["metadata"]["name"] for item in items]

    assert run(body) == (["foo"] if expect else [])


# ----------------------------------------------------------------------------------------------- TestGetPodQOS


def _resources(cpu: str, memory: str) -> Obj:
    return {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}


@pytest.mark.parametrize(
    ("requests", "limits", "want"),
    [
        pytest.param(_resources("100m", "100Mi"), _resources("100m", "100Mi"), "Guaranteed", id="guaranteed"),
        pytest.param({}, {}, "BestEffort", id="best-effort"),
        pytest.param(_resources("100m", "100Mi"), {}, "Burstable", id="burstable"),
    ],
)
def test_get_pod_qos(requests: Obj, limits: Obj, want: str) -> None:
    """TestGetPodQOS (rows named by their pods): `PrepareForCreate` sets `status.qosClass`."""

    async def body(service: ApiService) -> Obj:
        resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
        return await stored(service, pod(containers=[container(resources=resources)]))

    assert run(body)["status"]["qosClass"] == want


# ------------------------------------------------------------------------------------ TestSchedulingGatedCondition


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({}, None, id="pod without .spec.schedulingGates"),
        pytest.param(
            {"schedulingGates": [{"name": "foo"}]},
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            },
            id="pod with .spec.schedulingGates",
        ),
    ],
)
def test_scheduling_gated_condition(spec: Obj, want: Obj | None) -> None:
    """TestSchedulingGatedCondition: a gated pod is created with PodScheduled=False/SchedulingGated."""

    async def body(service: ApiService) -> Obj | None:
        created = await stored(service, pod(**spec))
        conditions = (created.get("status") or {}).get("conditions") or []
        return next((dict(c) for c in conditions if c["type"] == "PodScheduled"), None)

    got = run(body)
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert got.pop("lastTransitionTime")
        got.pop("lastProbeTime", None)
        assert got == want


# ------------------------------------------------------------------------------------------ TestCheckGracefulDelete


@pytest.mark.parametrize(
    ("spec", "phase", "delete_grace", "want"),
    [
        pytest.param({"nodeName": "something"}, "Pending", 30, 30, id="in pending phase with has node name"),
        pytest.param({"nodeName": "something"}, "Failed", 30, 0, id="in failed phase with has node name"),
        pytest.param({}, "Pending", 30, 0, id="in failed phase"),
        pytest.param({}, "Succeeded", 30, 0, id="in succeeded phase"),
        pytest.param({}, None, 30, 0, id="no phase"),
        pytest.param(
            {"nodeName": "something", "terminationGracePeriodSeconds": -1},
            None,
            None,
            1,
            id="has negative grace period",
        ),
    ],
)
def test_check_graceful_delete(spec: Obj, phase: str | None, delete_grace: int | None, want: int) -> None:
    """TestCheckGracefulDelete: a delete of a pod not on a node, or terminal, is immediate (grace 0); one
    running on a node keeps the grace asked for; a negative `terminationGracePeriodSeconds` counts as 1.
    Seen by a user as the pod left with `deletionGracePeriodSeconds`, or gone."""

    async def body(service: ApiService) -> int | None:
        await stored(service, pod(**spec), {"phase": phase} if phase else None)
        query = {} if delete_grace is None else {"gracePeriodSeconds": str(delete_grace)}
        await service.delete(PODS, "default", "foo", DeleteOptions.parse(None, query))
        try:
            left = service.get(PODS, "default", "foo")
        except ApiError as exc:
            assert exc.code == 404
            return 0
        return int(left["metadata"]["deletionGracePeriodSeconds"])

    assert run(body) == want


# ------------------------------------------------------------------------------------------- TestCheckLogLocation


@pytest.mark.parametrize(
    ("spec", "query", "want"),
    [
        pytest.param({"containers": [container("mycontainer")], "nodeName": "foo"}, {}, None, id="simple"),
        pytest.param(
            {"containers": [container("mycontainer")], "nodeName": "foo"},
            {"insecureSkipTLSVerifyBackend": "true"},
            None,
            id="insecure",
        ),
        pytest.param(
            {"containers": [container("container1"), container("container2")]},
            {},
            "a container name must be specified for pod test, choose one of: [container1 container2]",
            id="choice of two containers",
        ),
        pytest.param(
            {
                "containers": [container("container1"), container("container2")],
                "initContainers": [container("initcontainer1")],
            },
            {},
            "a container name must be specified for pod test, choose one of: [initcontainer1 container1 container2]",
            id="initcontainers",
        ),
        pytest.param(
            {"containers": [container("container1"), container("container2")]},
            {"container": "unknown"},
            "container unknown is not valid for pod test",
            id="bad container",
        ),
        pytest.param(
            {"containers": [container("container1"), container("container2")], "nodeName": "foo"},
            {"container": "container2"},
            None,
            id="good with two containers",
        ),
    ],
)
def test_check_log_location(spec: Obj, query: dict[str, str], want: str | None) -> None:
    """TestCheckLogLocation: which container a `pods/log` request reads, and its 400 BadRequest texts. A row
    that finds its container reaches the node, which answers that the container is waiting to start."""

    async def body(service: ApiService) -> str | None:
        containers = spec.pop("containers")
        await stored(service, pod("test", containers=containers, **spec))
        try:
            service.open_log("default", "test", log_options(query, "test"))
        except ApiError as exc:
            assert exc.code == 400
            if "is waiting to start" in exc.message:
                return None  # the location was found: the node answers that its container has not started
            return exc.message
        return None

    assert run(body) == want


# ------------------------------------------------------------------------------------------ TestPortForwardLocation


@pytest.mark.parametrize(
    ("node", "query", "want"),
    [
        pytest.param("", b"", "pod test does not have a host assigned", id="no host"),
        pytest.param("node1", b"", None, id="on a node"),
        pytest.param("node1", b"ports=80", None, id="on a node with ports"),
    ],
)
def test_port_forward_location(node: str, query: bytes, want: str | None) -> None:
    """TestPortForwardLocation: a pod without a node has no port-forward location (400 BadRequest); one with a
    node has, and the ports asked for are what the kubelet is given (`port=80`, `streamParams`)."""

    async def body(service: ApiService) -> str | None:
        await stored(service, pod("test", **({"nodeName": node} if node else {})))
        try:
            portforward.check_pod(service.get_pod("default", "test"))
        except ApiError as exc:
            assert exc.code == 400
            return exc.message
        if query:
            assert portforward.websocket_ports(query) == [80]
        return None

    assert run(body) == want


# ---------------------------------------------------------------------------- TestPodStrategyValidate (+ update)


def _hugepages(size: str, value: str, *, cpu: bool = True) -> Obj:
    amounts = {f"hugepages-{size}": value, **({"cpu": "10"} if cpu else {})}
    return {"requests": dict(amounts), "limits": dict(amounts)}


@pytest.mark.parametrize(
    ("spec", "want_error"),
    [
        pytest.param(
            {"containers": [container("foo", resources=_hugepages("1Mi", "1.1Mi"))]},
            True,
            id="a new pod setting container with indivisible hugepages values",
        ),
        pytest.param(
            {
                "containers": [container()],
                "initContainers": [container("init", resources=_hugepages("64Ki", "127Ki", cpu=False))],
            },
            True,
            id="a new pod setting init-container with indivisible hugepages values",
        ),
        pytest.param(
            {
                "initContainers": [container("init", resources=_hugepages("2Mi", "5.1Mi", cpu=False))],
                "containers": [container(resources=_hugepages("1Gi", "2Gi", cpu=False))],
            },
            True,
            id="a new pod setting init-container with indivisible hugepages values while container with divisible "
            "hugepages values",
        ),
        pytest.param(
            {"containers": [container(resources=_hugepages("1Mi", "2Mi"))]},
            False,
            id="a new pod setting container with divisible hugepages values",
        ),
    ],
)
def test_pod_strategy_validate(spec: Obj, want_error: bool) -> None:
    """TestPodStrategyValidate: a hugepages amount that is no multiple of its page size is refused on create
    (`validatePodResourceName`/`ValidateResourceRequirements` with `AllowIndivisibleHugePagesValues` off)."""

    async def body(service: ApiService) -> bool:
        containers = spec["containers"]
        rest = {k: v for k, v in spec.items() if k != "containers"}
        try:
            await service.create(PODS, "default", pod(containers=containers, **rest))
        except ApiError as exc:
            assert exc.code == 422, exc.message
            return True
        return False

    assert run(body) is want_error


def test_pod_strategy_validate_update() -> None:
    """TestPodStrategyValidateUpdate "an existing pod with indivisible hugepages values to a new pod with
    indivisible hugepages values": a pod stored with one (before the check) stays updatable
    (`AllowIndivisibleHugePagesValues` from the old pod, `GetValidationOptionsFromPodSpecAndMeta`)."""

    async def body(service: ApiService) -> Obj:
        created = await stored(service, pod(containers=[container("foo", resources=_hugepages("2Mi", "10Mi"))]))
        old = copy.deepcopy(created)
        for part in ("requests", "limits"):
            old["spec"]["containers"][0]["resources"][part]["hugepages-2Mi"] = "2202009600m"  # 2.1Mi
        old = await service.store.update(PODS.store_key, old, expected_rv=old["metadata"]["resourceVersion"])
        new = copy.deepcopy(old)
        new["metadata"]["labels"] = {"a": "b"}
        return (await service.update(PODS, "default", "foo", new)).obj

    assert run(body)["metadata"]["labels"] == {"a": "b"}


# ------------------------------------------------------------------------------------------ Test_mutatePodAffinity

_ASIA = {"matchLabels": {"region": "Asia"}}
_MERGED = {
    "matchLabels": {"region": "Asia"},
    "matchExpressions": [
        {"key": "country", "operator": "In", "values": ["Japan"]},
        {"key": "city", "operator": "NotIn", "values": ["Kyoto"]},
    ],
}


def _term(selector: Obj | None, match: list[str] | None = None, mismatch: list[str] | None = None) -> Obj:
    term: Obj = {"topologyKey": "kubernetes.io/hostname"}
    if selector is not None:
        term["labelSelector"] = selector
    if match:
        term["matchLabelKeys"] = match
    if mismatch:
        term["mismatchLabelKeys"] = mismatch
    return term


def _both_kinds(required: Obj, preferred: Obj | None = None) -> Obj:
    terms: Obj = {"requiredDuringSchedulingIgnoredDuringExecution": [required]}
    if preferred is not None:
        terms["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": 1, "podAffinityTerm": preferred}]
    return terms


@pytest.mark.parametrize(
    ("affinity", "want"),
    [
        pytest.param(
            {
                "podAffinity": _both_kinds(_term(_ASIA, ["country"], ["city"]), _term(_ASIA, ["country"], ["city"])),
                "podAntiAffinity": _both_kinds(
                    _term(_ASIA, ["country"], ["city"]), _term(_ASIA, ["country"], ["city"])
                ),
            },
            {
                "podAffinity": _both_kinds(
                    _term(_MERGED, ["country"], ["city"]), _term(_MERGED, ["country"], ["city"])
                ),
                "podAntiAffinity": _both_kinds(
                    _term(_MERGED, ["country"], ["city"]), _term(_MERGED, ["country"], ["city"])
                ),
            },
            id="matchLabelKeys are merged into labelSelector with In and mismatchLabelKeys are merged with NotIn",
        ),
        pytest.param(
            {"podAffinity": _both_kinds(_term(_ASIA, ["city", "not-found"]))},
            {
                "podAffinity": _both_kinds(
                    _term(
                        {**_ASIA, "matchExpressions": [{"key": "city", "operator": "In", "values": ["Kyoto"]}]},
                        ["city", "not-found"],
                    )
                )
            },
            id="keys, which are not found in Pod labels, are ignored",
        ),
        pytest.param(
            {"podAffinity": _both_kinds(_term(None, ["country"], ["city"]))},
            {"podAffinity": _both_kinds(_term(None, ["country"], ["city"]))},
            id="matchLabelKeys is ignored if the labelSelector is nil",
        ),
    ],
)
def test_mutate_pod_affinity(affinity: Obj, want: Obj) -> None:
    """Test_mutatePodAffinity: on create, `matchLabelKeys`/`mismatchLabelKeys` of pod (anti-)affinity terms
    become In/NotIn requirements with the pod's own label values (`MatchLabelKeysInPodAffinity`, on in v1.32).
    Called directly, as upstream calls `mutatePodAffinity`: through the API the nil-selector row is then refused
    by validation (`validateLabelKeys`); tests/api/test_upstream_pod_affinity_validation.py creates merged Pods."""
    created = pod(affinity=copy.deepcopy(affinity))
    created["metadata"]["labels"] = {"country": "Japan", "city": "Kyoto"}
    assert _merge_affinity_label_keys(created)["spec"]["affinity"] == want


# ------------------------------------------------------------------- storage_test.go: pods/binding (BindingREST)


SUPPORTED_BINDING_KINDS = 'supported values: "Node", "<empty>"'


def binding(name: str = "foo", target: Obj | None = None, **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, **meta},
        "target": {"name": "machine"} if target is None else target,
    }


@pytest.mark.parametrize(
    ("body", "url_name", "want"),
    [
        pytest.param(
            binding(target={}), "foo", (422, 'Binding "foo" is invalid: target.name: Required value'), id="noName"
        ),
        pytest.param(
            binding(target={}),
            "foobadNameInURL",
            (400, "name in URL does not match name in Binding object"),
            id="badNameInURL",
        ),
        pytest.param(
            binding(target={"name": "machine1", "kind": "unknown"}),
            "foo",
            (
                422,
                'Binding "foo" is invalid: target.kind: Unsupported value: "unknown": ' + SUPPORTED_BINDING_KINDS,
            ),
            id="badKind",
        ),
        pytest.param(binding(target={"name": "machine2"}), "foo", "machine2", id="emptyKind"),
        pytest.param(binding(target={"name": "machine3", "kind": "Node"}), "foo", "machine3", id="kindNode"),
    ],
)
def test_etcd_create_binding(body: Obj, url_name: str, want: str | tuple[int, str]) -> None:
    """TestEtcdCreateBinding: `BindingREST.Create` refuses a name other than the URL's (400) and what
    `ValidatePodBinding` refuses, with the same field errors; kube-apiserver answers the latter 500 (a plain
    aggregate error), kjobs 422 Invalid, as it answers all bad input (docs/upstream-registry.md). A good binding
    sets `spec.nodeName`."""

    async def body_(service: ApiService) -> str | tuple[int, str]:
        await stored(service, pod())
        try:
            await service.bind("default", url_name, copy.deepcopy(body))
        except ApiError as exc:
            return exc.code, exc.message
        return str(service.get(PODS, "default", "foo")["spec"]["nodeName"])

    assert run(body_) == want


def test_etcd_create_with_containers_not_found() -> None:
    """TestEtcdCreateWithContainersNotFound: the binding's annotations are copied onto the pod."""

    async def body(service: ApiService) -> Obj:
        await stored(service, pod())
        await service.bind("default", "foo", binding(annotations={"label1": "value1"}))
        return service.get(PODS, "default", "foo")

    assert run(body)["metadata"]["annotations"] == {"label1": "value1"}


def test_etcd_create_with_conflict() -> None:
    """TestEtcdCreateWithConflict: a second binding of a bound pod is 409 Conflict."""

    async def body(service: ApiService) -> ApiError:
        await stored(service, pod())
        await service.bind("default", "foo", binding(annotations={"label1": "value1"}))
        with pytest.raises(ApiError) as info:
            await service.bind("default", "foo", binding(annotations={"label1": "value1"}))
        return info.value

    error = run(body)
    assert (error.code, error.reason) == (409, "Conflict")
    assert (
        error.message
        == 'Operation cannot be fulfilled on pods/binding "foo": pod foo is already assigned to node "machine"'
    )


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param(
            [{"name": "foo"}, {"name": "bar"}],
            'Operation cannot be fulfilled on pods/binding "foo": pod foo has non-empty .spec.schedulingGates',
            id="pod with non-nil schedulingGates",
        ),
        pytest.param(None, None, id="pod with nil schedulingGates"),
    ],
)
def test_etcd_create_with_scheduling_gates(gates: list[Obj] | None, want: str | None) -> None:
    """TestEtcdCreateWithSchedulingGates: a gated pod cannot be bound (409, the upstream error text)."""

    async def body(service: ApiService) -> str | None:
        await stored(service, pod(**({"schedulingGates": gates} if gates else {})))
        try:
            await service.bind("default", "foo", binding())
        except ApiError as exc:
            assert exc.code == 409
            return exc.message
        return None

    assert run(body) == want


@pytest.mark.parametrize(
    ("uid", "rv", "ok"),
    [
        pytest.param("origin", "origin", True, id="originUID-originResourceVersion"),
        pytest.param("origin", "empty", True, id="originUID-emptyResourceVersion"),
        pytest.param("origin", "changed", False, id="originUID-changedResourceVersion"),
        pytest.param("empty", "origin", True, id="emptyUID-originResourceVersion"),
        pytest.param("empty", "empty", True, id="emptyUID-emptyResourceVersion"),
        pytest.param("empty", "changed", False, id="emptyUID-changedResourceVersion"),
        pytest.param("changed", "origin", False, id="changedUID-originResourceVersion"),
        pytest.param("changed", "empty", False, id="changedUID-emptyResourceVersion"),
        pytest.param("changed", "changed", False, id="changedUID-changedResourceVersion"),
    ],
)
def test_etcd_create_binding_with_uid_and_resource_version(uid: str, rv: str, ok: bool) -> None:
    """TestEtcdCreateBindingWithUIDAndResourceVersion: the binding's uid and resourceVersion are preconditions
    on the pod (`setPodNodeAndMetadata`): either differing is 409 Conflict and leaves the pod unbound."""

    def pick(how: str, value: str) -> str:
        return {"origin": value, "empty": "", "changed": value + "-changed"}[how]

    async def body(service: ApiService) -> tuple[int | None, str]:
        created = await stored(service, pod())
        meta = created["metadata"]
        code = None
        try:
            await service.bind(
                "default",
                "foo",
                binding(
                    target={"name": "machine", "kind": "Node"},
                    uid=pick(uid, meta["uid"]),
                    resourceVersion=pick(rv, meta["resourceVersion"]),
                ),
            )
        except ApiError as exc:
            code = exc.code
        return code, str(service.get(PODS, "default", "foo")["spec"].get("nodeName", ""))

    assert run(body) == ((None, "machine") if ok else (409, ""))


def test_etcd_create_binding_no_pod() -> None:
    """TestEtcdCreateBindingNoPod: binding a pod that does not exist is 404 NotFound."""

    async def body(service: ApiService) -> ApiError:
        with pytest.raises(ApiError) as info:
            await service.bind("default", "foo", binding())
        return info.value

    error = run(body)
    assert (error.code, error.message) == (404, 'pods "foo" not found')


def test_binding_precondition_failure_is_the_storage_layers_conflict() -> None:
    """A binding whose uid differs from the pod's: the 409 kube-apiserver words from the storage layer's
    invalid-object error (`Preconditions.Check`, `InterpretUpdateError`), a Conflict on `pods`."""

    async def body(service: ApiService) -> tuple[str, Obj]:
        uid = (await stored(service, pod()))["metadata"]["uid"]
        with pytest.raises(ApiError) as info:
            await service.bind("default", "foo", binding(uid="other"))
        return info.value.message.replace(uid, "<uid>"), info.value.details or {}

    message, details = run(body)
    assert message == (
        'Operation cannot be fulfilled on pods "foo": StorageError: invalid object, Code: 4, Key: '
        "/registry/pods/default/foo, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
        "precondition: other, UID in object meta: <uid>"
    )
    assert details == {"name": "foo", "kind": "pods"}
