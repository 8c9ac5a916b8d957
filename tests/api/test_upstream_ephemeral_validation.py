"""Rows of Kubernetes' ephemeral container tables (pkg/apis/core/validation/validation_test.go
`TestValidateEphemeralContainers`, `TestValidatePodEphemeralContainersUpdate`), run through kjobs'
`validate_pod_ephemeral_containers_update` as the `pods/{name}/ephemeralcontainers` subresource runs it, and a
sample through the in-process API (a strategic merge patch of the subresource: 422 with the cause upstream gives).
What is ported and left out: docs/upstream-pod-validation.md."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.api.validation_pod_update import validate_pod_ephemeral_containers_update
from kjobs.client.resources import PODS
from tests.api.test_upstream_pod_update_validation import ctr, make_pod
from tests.api.upstream_validation_support import causes, run

VOLUMES = [{"name": "vol", "emptyDir": {}}]


def ephemeral(name: str = "debug", **fields: Any) -> Obj:
    """An ephemeral container as the upstream rows write one (`image`, IfNotPresent, File)."""
    return ctr(name, **fields)


def pods(*debuggers: Obj, old: list[Obj] | None = None, **spec: Any) -> tuple[Obj, Obj]:
    """The stored pod (container `ctr`, init container `ictr`, volume `vol`; `old` its ephemeral containers)
    and the same pod with `debuggers` as its ephemeral containers."""
    base = make_pod("pod", meta={"resourceVersion": "1"}, initContainers=[ctr("ictr")], volumes=VOLUMES, **spec)
    before = copy.deepcopy(base)
    if old:
        before["spec"]["ephemeralContainers"] = old
    after = copy.deepcopy(base)
    if debuggers:
        after["spec"]["ephemeralContainers"] = list(debuggers)
    return after, before


def errors(new: Obj, old: Obj) -> list[tuple[str, str]]:
    return [(e.field, e.type.value) for e in validate_pod_ephemeral_containers_update(new, old)]


ALLOWED = {
    "Single Container": [ephemeral()],
    "Multiple Containers": [ephemeral("debug1"), ephemeral("debug2")],
    "Single Container with Target": [ephemeral(targetContainerName="ctr")],
    "All allowed fields": [
        ephemeral(
            command=["bash"],
            args=["bash"],
            workingDir="/",
            envFrom=[{"configMapRef": {"name": "dummy", "optional": True}}],
            env=[{"name": "TEST", "value": "TRUE"}],
            volumeMounts=[{"name": "vol", "mountPath": "/vol"}],
            terminationMessagePath="/dev/termination-log",
            securityContext={"capabilities": {"add": ["SYS_ADMIN"]}},
            stdin=True,
            stdinOnce=True,
            tty=True,
        )
    ],
}


@pytest.mark.parametrize("debuggers", ALLOWED.values(), ids=ALLOWED.keys())
def test_validate_ephemeral_containers_success(debuggers: list[Obj]) -> None:
    assert errors(*pods(*debuggers)) == []


PROBE = {"tcpSocket": {"port": 80}, "successThreshold": 1}
FAILURES: dict[str, tuple[list[Obj], list[tuple[str, str]]]] = {
    "Name Collision with Container.Containers": (
        [ephemeral("ctr")],
        [("spec.ephemeralContainers[0].name", "FieldValueDuplicate")],
    ),
    "Name Collision with Container.InitContainers": (
        [ephemeral("ictr")],
        [("spec.ephemeralContainers[0].name", "FieldValueDuplicate")],
    ),
    "Name Collision with EphemeralContainers": (
        [ephemeral("debug1"), ephemeral("debug1")],
        [("spec.ephemeralContainers[1].name", "FieldValueDuplicate")],
    ),
    "empty Container": (
        [{}],
        [
            ("spec.ephemeralContainers[0].name", "FieldValueRequired"),
            ("spec.ephemeralContainers[0].image", "FieldValueRequired"),
            ("spec.ephemeralContainers[0].terminationMessagePolicy", "FieldValueRequired"),
            ("spec.ephemeralContainers[0].imagePullPolicy", "FieldValueRequired"),
        ],
    ),
    "empty Container Name": ([ephemeral("")], [("spec.ephemeralContainers[0].name", "FieldValueRequired")]),
    "whitespace padded image name": (
        [ephemeral(image=" image")],
        [("spec.ephemeralContainers[0].image", "FieldValueInvalid")],
    ),
    "invalid image pull policy": (
        [ephemeral(imagePullPolicy="PullThreeTimes")],
        [("spec.ephemeralContainers[0].imagePullPolicy", "FieldValueNotSupported")],
    ),
    "TargetContainerName doesn't exist": (
        [ephemeral(targetContainerName="bogus")],
        [("spec.ephemeralContainers[0].targetContainerName", "FieldValueNotFound")],
    ),
    "Targets an ephemeral container": (
        [ephemeral("debug"), ephemeral("debugception", targetContainerName="debug")],
        [("spec.ephemeralContainers[1].targetContainerName", "FieldValueNotFound")],
    ),
    "Container uses disallowed field: Lifecycle": (
        [ephemeral(lifecycle={"preStop": {"exec": {"command": ["ls", "-l"]}}})],
        [("spec.ephemeralContainers[0].lifecycle", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: LivenessProbe": (
        [ephemeral(livenessProbe=PROBE)],
        [("spec.ephemeralContainers[0].livenessProbe", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: Ports": (
        [ephemeral(ports=[{"protocol": "TCP", "containerPort": 80}])],
        [("spec.ephemeralContainers[0].ports", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: ReadinessProbe": (
        [ephemeral(readinessProbe={"tcpSocket": {"port": 80}})],
        [("spec.ephemeralContainers[0].readinessProbe", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: StartupProbe": (
        [ephemeral(startupProbe=PROBE)],
        [("spec.ephemeralContainers[0].startupProbe", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: Resources": (
        [ephemeral(resources={"limits": {"cpu": "10"}})],
        [("spec.ephemeralContainers[0].resources", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: VolumeMount.SubPath": (
        [
            ephemeral(
                volumeMounts=[
                    {"name": "vol", "mountPath": "/vol"},
                    {"name": "vol", "mountPath": "/s", "subPath": "foo"},
                ]
            )
        ],
        [("spec.ephemeralContainers[0].volumeMounts[1].subPath", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: VolumeMount.SubPathExpr": (
        [
            ephemeral(
                volumeMounts=[
                    {"name": "vol", "mountPath": "/vol"},
                    {"name": "vol", "mountPath": "/s", "subPathExpr": "$(POD_NAME)"},
                ]
            )
        ],
        [("spec.ephemeralContainers[0].volumeMounts[1].subPathExpr", "FieldValueForbidden")],
    ),
    "Disallowed field with other errors should only return a single Forbidden": (
        [ephemeral(lifecycle={"preStop": {"exec": {"command": []}}})],
        [("spec.ephemeralContainers[0].lifecycle", "FieldValueForbidden")],
    ),
    "Container uses disallowed field: ResizePolicy": (
        [ephemeral(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}])],
        [("spec.ephemeralContainers[0].resizePolicy", "FieldValueForbidden")],
    ),
    **{
        f"Forbidden RestartPolicy: {policy or 'empty'}": (
            [ephemeral(restartPolicy=policy)],
            [("spec.ephemeralContainers[0].restartPolicy", "FieldValueForbidden")],
        )
        for policy in ("Always", "OnFailure", "Never", "invalid", "")
    },
}


@pytest.mark.parametrize(("debuggers", "expected"), FAILURES.values(), ids=FAILURES.keys())
def test_validate_ephemeral_containers_failures(debuggers: list[Obj], expected: list[tuple[str, str]]) -> None:
    assert errors(*pods(*debuggers)) == expected


REMOVED = 'existing ephemeral containers "debug" may not be removed\n'
CHANGED = 'existing ephemeral containers "debug" may not be changed\n'
UPDATES: dict[str, tuple[list[Obj], list[Obj], str]] = {
    "no ephemeral containers": ([], [], ""),
    "No change in Ephemeral Containers": (
        [ephemeral("debugger"), ephemeral("debugger2")],
        [ephemeral("debugger"), ephemeral("debugger2")],
        "",
    ),
    "Ephemeral Container list order changes": (
        [ephemeral("debugger2"), ephemeral("debugger")],
        [ephemeral("debugger"), ephemeral("debugger2")],
        "",
    ),
    "Add an Ephemeral Container": ([ephemeral("debugger")], [], ""),
    "Add two Ephemeral Containers": ([ephemeral("debugger1"), ephemeral("debugger2")], [], ""),
    "Add to an existing Ephemeral Containers": (
        [ephemeral("debugger"), ephemeral("debugger2")],
        [ephemeral("debugger")],
        "",
    ),
    "Remove an Ephemeral Container": ([], [ephemeral()], REMOVED),
    "Replace an Ephemeral Container": ([ephemeral("firstone")], [ephemeral()], REMOVED),
    "Change an Ephemeral Containers": ([ephemeral(image="image2")], [ephemeral()], CHANGED + "image"),
}


@pytest.mark.parametrize(("new", "old", "detail"), UPDATES.values(), ids=UPDATES.keys())
def test_validate_pod_ephemeral_containers_update(new: list[Obj], old: list[Obj], detail: str) -> None:
    found = validate_pod_ephemeral_containers_update(*pods(*new, old=old))
    assert [(e.field, e.type.value, e.detail) for e in found] == (
        [("spec.ephemeralContainers", "FieldValueForbidden", detail)] if detail else []
    )


def test_ephemeral_container_in_static_pod() -> None:
    """A mirror pod's only error is this one, on the root path."""
    new, old = pods(ephemeral())
    for pod in (new, old):
        pod["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "foo"}
    assert [(e.field, e.detail) for e in validate_pod_ephemeral_containers_update(new, old)] == [
        ("", "static pods do not support ephemeral containers")
    ]


def test_the_subresource_answers_what_kube_apiserver_answers() -> None:
    """A strategic merge patch of `pods/{name}/ephemeralcontainers` (as `kubectl debug` sends): only the
    ephemeral containers change; a removal or an invalid container is 422 with upstream's cause."""

    async def scenario(client: Any) -> None:
        await client.create(PODS, "default", make_pod("p", meta={"labels": {"a": "b"}}))
        patch = {"metadata": {"labels": {"a": "changed"}}, "spec": {"ephemeralContainers": [ephemeral()]}}
        written = await client.patch(PODS, "default", "p", patch, subresource="ephemeralcontainers")
        assert [c["name"] for c in written["spec"]["ephemeralContainers"]] == ["debug"]
        assert written["metadata"]["labels"] == {"a": "b"}  # metadata is the stored pod's
        bad = {"spec": {"ephemeralContainers": [ephemeral("x", ports=[{"containerPort": 80}])]}}
        with pytest.raises(ApiError) as invalid:
            await client.patch(PODS, "default", "p", bad, subresource="ephemeralcontainers")
        assert causes(invalid.value) == [
            (
                "spec.ephemeralContainers[1].ports",
                "FieldValueForbidden",
                "Forbidden: cannot be set for an Ephemeral Container",
            )
        ]
        removal = [{"op": "remove", "path": "/spec/ephemeralContainers/0"}]
        with pytest.raises(ApiError) as removed:
            await client.patch(PODS, "default", "p", removal, subresource="ephemeralcontainers", patch_type="json")
        assert causes(removed.value) == [("spec.ephemeralContainers", "FieldValueForbidden", f"Forbidden: {REMOVED}")]

    run(scenario)
