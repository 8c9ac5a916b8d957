"""Rows of Kubernetes' pod validation tables, met through a Job's pod template.

Each table is named after its upstream test in pkg/apis/core/validation/validation_test.go (v1.32–1.35 rows;
docs/upstream-pod-validation.md lists what is ported, left out and why). A row's containers/volumes are put
into a created Job's `spec.template.spec` after defaulting — upstream validates internal objects with every
field as the row wrote it, so defaulting must not fill what a row leaves empty — and `validate_job` runs; every
error must lie under `spec.template.spec.`. Rows are asserted as upstream asserts them: type and field (and
the detail where upstream checks it), plus the rendered message where kjobs had differed.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_pod
from tests.api.job_fixtures import api_job

PREFIX = "spec.template.spec."
Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate
NotFound = ErrorType.FieldValueNotFound
NotSupported = ErrorType.FieldValueNotSupported

NO_RESTART_RULES = FeatureGates.parse("ContainerRestartRules=false")
DNS_SUBDOMAIN = "a lowercase RFC 1123 subdomain"
ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def _ctr(name: str = "abc-123", **fields: Any) -> Obj:
    """A container as upstream rows write it: pull and termination-message policies set explicitly."""
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"} | (
        fields
    )


def _template_errors(features: FeatureGates = DEFAULT, **spec: Any) -> list[FieldError]:
    """Errors of a created Job whose pod spec has `spec`'s fields replaced, paths relative to the pod spec."""
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    errs = validate_job(job, features=features)
    assert all(e.field.startswith(PREFIX) for e in errs), [str(e) for e in errs]
    return [FieldError(e.field.removeprefix(PREFIX), e.type, e.detail, e.bad_value) for e in errs]


def _container_errors(features: FeatureGates = DEFAULT, **container: Any) -> list[FieldError]:
    return _template_errors(features, containers=[_ctr(**container)])


def _types_and_fields(errs: list[FieldError]) -> list[tuple[ErrorType, str]]:
    return [(e.type, e.field) for e in errs]


# --- TestValidatePorts ----------------------------------------------------------------------------------------

_PORTS_OK = [
    {"name": "abc", "containerPort": 80, "hostPort": 80, "protocol": "TCP"},
    {"name": "easy", "containerPort": 82, "protocol": "TCP"},
    {"name": "as", "containerPort": 83, "protocol": "UDP"},
    {"name": "do-re-me", "containerPort": 84, "protocol": "SCTP"},
    {"containerPort": 85, "protocol": "TCP"},
]


def test_validate_ports_success_case() -> None:
    assert _container_errors(ports=_PORTS_OK) == []


@pytest.mark.parametrize(
    ("ports", "error_type", "field", "detail"),
    [
        pytest.param(
            [{"name": "a" * 16, "containerPort": 80, "protocol": "TCP"}],
            Invalid,
            "name",
            "15",
            id="name > 15 characters",
        ),
        pytest.param(
            [{"name": "a.b.c", "containerPort": 80, "protocol": "TCP"}],
            Invalid,
            "name",
            "alpha-numeric",
            id="name contains invalid characters",
        ),
        pytest.param(
            [{"name": "80", "containerPort": 80, "protocol": "TCP"}],
            Invalid,
            "name",
            "at least one letter",
            id="name is a number",
        ),
        pytest.param(
            [
                {"name": "abc", "containerPort": 80, "protocol": "TCP"},
                {"name": "abc", "containerPort": 81, "protocol": "TCP"},
            ],
            Duplicate,
            "[1].name",
            "",
            id="name not unique",
        ),
        pytest.param(
            [{"containerPort": 0, "protocol": "TCP"}], Required, "containerPort", "", id="zero container port"
        ),
        pytest.param(
            [{"containerPort": 65536, "protocol": "TCP"}],
            Invalid,
            "containerPort",
            "between",
            id="invalid container port",
        ),
        pytest.param(
            [{"containerPort": 80, "hostPort": 65536, "protocol": "TCP"}],
            Invalid,
            "hostPort",
            "between",
            id="invalid host port",
        ),
        pytest.param(
            [{"containerPort": 80, "protocol": "tcp"}],
            NotSupported,
            "protocol",
            'supported values: "SCTP", "TCP", "UDP"',
            id="invalid protocol case",
        ),
        pytest.param(
            [{"containerPort": 80, "protocol": "ICMP"}],
            NotSupported,
            "protocol",
            'supported values: "SCTP", "TCP", "UDP"',
            id="invalid protocol",
        ),
        pytest.param([{"name": "abc", "containerPort": 80}], Required, "protocol", "", id="protocol required"),
    ],
)
def test_validate_ports(ports: list[Obj], error_type: ErrorType, field: str, detail: str) -> None:
    errs = _container_errors(ports=ports)
    assert errs
    for e in errs:
        assert e.type is error_type
        assert e.field.startswith("containers[0].ports") and field in e.field
        assert detail in e.detail


# --- TestValidateEnv / TestRelaxedValidateEnv -------------------------------------------------------------------


def _field_ref(path: str, api_version: str = "v1") -> Obj:
    ref = {"fieldPath": path} if path else {}
    return {"fieldRef": ref | ({"apiVersion": api_version} if api_version else {})}


_ENV_PATHS_SUPPORTED = (
    '"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", '
    '"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"'
)


def test_validate_env_success_case() -> None:
    env = [
        {"name": "abc", "value": "value"},
        {"name": "ABC", "value": "value"},
        {"name": "AbC_123", "value": "value"},
        {"name": "abc", "value": ""},
        {"name": "a.b.c", "value": "value"},
        {"name": "a-b-c", "value": "value"},
        *(
            {"name": "abc", "valueFrom": _field_ref(path)}
            for path in (
                "metadata.annotations['key']",
                "metadata.labels['key']",
                "metadata.name",
                "metadata.namespace",
                "metadata.uid",
                "spec.nodeName",
                "spec.serviceAccountName",
                "status.hostIP",
                "status.podIP",
                "status.podIPs",
            )
        ),
        {"name": "secret_value", "valueFrom": {"secretKeyRef": {"name": "some-secret", "key": "secret-key"}}},
        {"name": "ENV_VAR_1", "valueFrom": {"configMapKeyRef": {"name": "some-config-map", "key": "some-key"}}},
    ]
    assert _container_errors(env=env) == []


def test_relaxed_validate_env_success_case() -> None:
    """RelaxedEnvironmentVariableValidation is GA (1.34): TestValidateEnv's strict-name rows no longer apply."""
    names = ["!\"#$%&'()", "* +,-./0123456789", ":;<>?@", "ABCDEFG", "abcdefghijklmn", "[\\]^_`{}|~"]
    assert _container_errors(env=[{"name": n, "value": "value"} for n in names]) == []


_SECRET = {"secretKeyRef": {"name": "a-secret", "key": "a-key"}}
_CONFIG_MAP = {"configMapKeyRef": {"name": "some-config-map", "key": "some-key"}}
_NAME_REF = _field_ref("metadata.name")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param([{"name": ""}], "env[0].name: Required value", id="zero-length name"),
        pytest.param(
            [{"name": "abc", "value": "foo", "valueFrom": _NAME_REF}],
            'env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
            id="value and valueFrom specified",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": {}}],
            'env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
            "`configMapKeyRef` or `secretKeyRef`",
            id="valueFrom without a source",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _NAME_REF | _SECRET}],
            'env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
            id="valueFrom.fieldRef and valueFrom.secretKeyRef specified",
        ),
        pytest.param(
            [{"name": "some_var_name", "valueFrom": _NAME_REF | _CONFIG_MAP}],
            'env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
            id="valueFrom.fieldRef and valueFrom.configMapKeyRef set",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _NAME_REF | _SECRET | _CONFIG_MAP}],
            'env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
            id="valueFrom.fieldRef, secretKeyRef and configMapKeyRef specified",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": {"secretKeyRef": {"name": "$%^&*#", "key": "a-key"}}}],
            'env[0].valueFrom.secretKeyRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
            id="valueFrom.secretKeyRef.name invalid",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": {"configMapKeyRef": {"name": "$%^&*#", "key": "some-key"}}}],
            'env[0].valueFrom.configMapKeyRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
            id="valueFrom.configMapKeyRef.name invalid",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("")}],
            "env[0].valueFrom.fieldRef.fieldPath: Required value",
            id="missing FieldPath on ObjectFieldSelector",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("metadata.name", api_version="")}],
            "env[0].valueFrom.fieldRef.apiVersion: Required value",
            id="missing APIVersion on ObjectFieldSelector",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("metadata.whoops")}],
            'env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.whoops": error converting fieldPath',
            id="invalid fieldPath",
        ),
        pytest.param(
            [{"name": "labels", "valueFrom": _field_ref("metadata.name['key']")}],
            "env[0].valueFrom.fieldRef.fieldPath: Invalid value: \"metadata.name['key']\": error converting "
            "fieldPath: field label does not support subscript: metadata.name['key']",
            id="metadata.name with subscript",
        ),
        pytest.param(
            [{"name": "labels", "valueFrom": _field_ref("metadata.labels")}],
            'env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.labels": supported values: '
            + _ENV_PATHS_SUPPORTED,
            id="metadata.labels without subscript",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("metadata.annotations")}],
            'env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.annotations": supported values: '
            + _ENV_PATHS_SUPPORTED,
            id="metadata.annotations without subscript",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("metadata.annotations['invalid~key']")}],
            'env[0].valueFrom.fieldRef: Invalid value: "invalid~key"',
            id="metadata.annotations with invalid key",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("metadata.labels['Www.k8s.io/test']")}],
            'env[0].valueFrom.fieldRef: Invalid value: "Www.k8s.io/test"',
            id="metadata.labels with invalid key",
        ),
        pytest.param(
            [{"name": "abc", "valueFrom": _field_ref("status.phase")}],
            'env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: '
            + _ENV_PATHS_SUPPORTED,
            id="unsupported fieldPath",
        ),
    ],
)
def test_validate_env(env: list[Obj], expected: str) -> None:
    """Upstream: every error's text contains the row's expected text (field `field` there, `env` here)."""
    errs = _container_errors(env=env)
    assert errs
    for e in errs:
        assert expected in str(e)


# --- TestValidateEnvFrom / TestRelaxedValidateEnvFrom -----------------------------------------------------------


def test_validate_env_from_success_cases() -> None:
    prefixes = ["", "pre_", "a.b", "!\"#$%&'()", "* +,-./0123456789", ":;<>?@", "abcdefghijklmn", "[\\]^_`{}|~"]
    env_from = [
        {"prefix": p, key: {"name": "abc"}} if p else {key: {"name": "abc"}}
        for p in prefixes
        for key in ("configMapRef", "secretRef")
    ]
    assert _container_errors(envFrom=env_from) == []


@pytest.mark.parametrize(
    ("env_from", "expected"),
    [
        pytest.param(
            [{"configMapRef": {"name": ""}}], "envFrom[0].configMapRef.name: Required value", id="zero-length name"
        ),
        pytest.param(
            [{"prefix": "=abc", "configMapRef": {"name": "abc"}}],
            'envFrom[0].prefix: Invalid value: "=abc": ' + ENV_NAME,
            id="invalid prefix",
        ),
        pytest.param(
            [{"secretRef": {"name": ""}}], "envFrom[0].secretRef.name: Required value", id="zero-length name (secret)"
        ),
        pytest.param([{"secretRef": {"name": "&"}}], "envFrom[0].secretRef.name: Invalid value", id="invalid name"),
        pytest.param(
            [{"configMapRef": {"name": "$"}}],
            "envFrom[0].configMapRef.name: Invalid value",
            id="invalid name (config map)",
        ),
        pytest.param(
            [{}], 'envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`', id="no refs"
        ),
        pytest.param(
            [{"secretRef": {"name": "abc"}, "configMapRef": {"name": "abc"}}],
            'envFrom: Invalid value: "": may not have more than one field specified at a time',
            id="multiple refs",
        ),
        pytest.param(
            [{"secretRef": {"name": "$%^&*#"}}],
            'envFrom[0].secretRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
            id="invalid secret ref name",
        ),
        pytest.param(
            [{"configMapRef": {"name": "$%^&*#"}}],
            'envFrom[0].configMapRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
            id="invalid config ref name",
        ),
    ],
)
def test_relaxed_validate_env_from(env_from: list[Obj], expected: str) -> None:
    errs = _container_errors(envFrom=env_from)
    assert errs
    for e in errs:
        assert expected in str(e)


# --- TestValidateVolumeMounts / TestValidateSubpathMutuallyExclusive / TestValidateMountPropagation --------------

_VOLUMES = [
    {"name": "abc", "persistentVolumeClaim": {"claimName": "testclaim1"}},
    {"name": "abc-123", "persistentVolumeClaim": {"claimName": "testclaim2"}},
    {"name": "123", "hostPath": {"path": "/foo/baz", "type": ""}},
]


def _mount_errors(mounts: list[Obj], **container: Any) -> list[FieldError]:
    return _template_errors(volumes=_VOLUMES, containers=[_ctr(volumeMounts=mounts, **container)])


def test_validate_volume_mounts_success_case() -> None:
    mounts = [
        {"name": "abc", "mountPath": "/foo"},
        {"name": "123", "mountPath": "/bar"},
        {"name": "abc-123", "mountPath": "/baz"},
        {"name": "abc-123", "mountPath": "/baa", "subPath": ""},
        {"name": "abc-123", "mountPath": "/bab", "subPath": "baz"},
        {"name": "abc-123", "mountPath": "d:", "subPath": ""},
        {"name": "abc-123", "mountPath": "F:", "subPath": ""},
        {"name": "abc-123", "mountPath": "G:\\mount", "subPath": ""},
        {"name": "abc-123", "mountPath": "/bac", "subPath": ".baz"},
        {"name": "abc-123", "mountPath": "/bad", "subPath": "..baz"},
        {"name": "123", "mountPath": "/rro-nil", "readOnly": True},
        {"name": "123", "mountPath": "/rro-disabled", "readOnly": True, "recursiveReadOnly": "Disabled"},
        {"name": "123", "mountPath": "/rro-disabled-2", "readOnly": False, "recursiveReadOnly": "Disabled"},
        {"name": "123", "mountPath": "/rro-ifpossible", "readOnly": True, "recursiveReadOnly": "IfPossible"},
        {"name": "123", "mountPath": "/rro-enabled", "readOnly": True, "recursiveReadOnly": "Enabled"},
        {
            "name": "123",
            "mountPath": "/rro-enabled-2",
            "readOnly": True,
            "recursiveReadOnly": "Enabled",
            "mountPropagation": "None",
        },
        {"name": "abc-123", "mountPath": "/bae", "subPathExpr": "$(POD_NAME)"},
    ]
    assert _mount_errors(mounts) == []


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        pytest.param(
            [{"name": "", "mountPath": "/foo"}],
            ["volumeMounts[0].name: Required value", 'volumeMounts[0].name: Not found: ""'],
            id="empty name",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": ""}], ["volumeMounts[0].mountPath: Required value"], id="empty mountpath"
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/path/a"}, {"name": "abc-123", "mountPath": "/path/a"}],
            ['volumeMounts[1].mountPath: Invalid value: "/path/a": must be unique'],
            id="mountpath collision",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/bar", "subPath": "/baz"}],
            ['volumeMounts.subPath: Invalid value: "/baz": must be a relative path'],
            id="absolute subpath",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/bar", "subPath": "../baz"}],
            ["volumeMounts.subPath: Invalid value: \"../baz\": must not contain '..'"],
            id="subpath in ..",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/bar", "subPath": "baz/../bat"}],
            ["volumeMounts.subPath: Invalid value: \"baz/../bat\": must not contain '..'"],
            id="subpath contains ..",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/bar", "subPath": "./.."}],
            ["volumeMounts.subPath: Invalid value: \"./..\": must not contain '..'"],
            id="subpath ends in ..",
        ),
        pytest.param(
            [{"name": "abc", "mountPath": "/bar", "mountPropagation": "Bidirectional"}],
            [
                "volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to "
                "privileged containers"
            ],
            id="disabled MountPropagation feature gate",
        ),
        pytest.param(
            [{"name": "123", "mountPath": "/rro-bad1", "readOnly": False, "recursiveReadOnly": "Enabled"}],
            ["volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true"],
            id="rro but not ro",
        ),
        pytest.param(
            [
                {
                    "name": "123",
                    "mountPath": "/rro-bad2",
                    "readOnly": True,
                    "recursiveReadOnly": "Enabled",
                    "mountPropagation": "HostToContainer",
                }
            ],
            [
                "volumeMounts.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or "
                "not specified"
            ],
            id="rro with incompatible propagation",
        ),
        pytest.param(
            [{"name": "123", "mountPath": "/rro-bad1", "readOnly": False, "recursiveReadOnly": "IfPossible"}],
            ["volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true"],
            id="rro-if-possible but not ro",
        ),
        pytest.param(
            [{"name": "abc-123", "mountPath": "/bab", "subPath": "baz", "subPathExpr": "$(POD_NAME)"}],
            [
                'volumeMounts[0].subPathExpr: Invalid value: "$(POD_NAME)": '
                "subPathExpr and subPath are mutually exclusive"
            ],
            id="subpath and subpathexpr specified",
        ),
    ],
)
def test_validate_volume_mounts(mounts: list[Obj], expected: list[str]) -> None:
    """Upstream only asks for a failure; these are kube-apiserver's errors. Note `volumeMounts.subPath`,
    `.mountPropagation` and `.recursiveReadOnly` name the list, not the item, as ValidateVolumeMounts does."""
    assert [str(e) for e in _mount_errors(mounts)] == [f"containers[0].{text}" for text in expected]


@pytest.mark.parametrize(
    ("propagation", "privileged", "expected"),
    [
        pytest.param(None, None, [], id="implicitly non-privileged container + no propagation"),
        pytest.param("HostToContainer", None, [], id="implicitly non-privileged container + HostToContainer"),
        pytest.param("None", None, [], id="non-privileged container + None"),
        pytest.param(
            "Bidirectional",
            None,
            [(Forbidden, "Bidirectional mount propagation is available only to privileged containers")],
            id="error: implicitly non-privileged container + Bidirectional",
        ),
        pytest.param("HostToContainer", False, [], id="explicitly non-privileged container + HostToContainer"),
        pytest.param(
            "Bidirectional",
            False,
            [(Forbidden, "Bidirectional mount propagation is available only to privileged containers")],
            id="explicitly non-privileged container + Bidirectional",
        ),
        pytest.param(None, True, [], id="privileged container + no propagation"),
        pytest.param("HostToContainer", True, [], id="privileged container + HostToContainer"),
        pytest.param("Bidirectional", True, [], id="privileged container + Bidirectional"),
        pytest.param(
            "invalid",
            True,
            [(NotSupported, 'supported values: "Bidirectional", "HostToContainer", "None"')],
            id="error: privileged container + invalid mount propagation",
        ),
    ],
)
def test_validate_mount_propagation(
    propagation: str | None, privileged: bool | None, expected: list[tuple[ErrorType, str]]
) -> None:
    mount = {"name": "123", "mountPath": "/foo"} | ({"mountPropagation": propagation} if propagation else {})
    context = {"securityContext": {"privileged": privileged}} if privileged is not None else {}
    errs = _mount_errors([mount], **context)
    assert [(e.type, e.field, e.detail) for e in errs] == [
        (t, "containers[0].volumeMounts.mountPropagation", d) for t, d in expected
    ]


# --- Test_validateProbe / TestValidateProbe ----------------------------------------------------------------------

_EXEC = {"exec": {"command": ["echo"]}}


@pytest.mark.parametrize(
    ("kind", "probe", "want"),
    [
        pytest.param("readinessProbe", {}, [(Required, "")], id="no handler"),
        pytest.param("readinessProbe", _EXEC, [], id="exec handler"),
        *(
            pytest.param("readinessProbe", _EXEC | {key: -1}, [(Invalid, f".{key}")], id=f"negative {key}")
            for key in (
                "initialDelaySeconds",
                "timeoutSeconds",
                "periodSeconds",
                "successThreshold",
                "failureThreshold",
            )
        ),
        # A liveness probe (successThreshold 1): on a readiness probe the grace period is refused outright.
        pytest.param(
            "livenessProbe",
            _EXEC | {"successThreshold": 1, "terminationGracePeriodSeconds": -1},
            [(Invalid, ".terminationGracePeriodSeconds")],
            id="terminationGracePeriodSeconds -1",
        ),
        pytest.param(
            "livenessProbe",
            _EXEC | {"successThreshold": 1, "terminationGracePeriodSeconds": 0},
            [(Invalid, ".terminationGracePeriodSeconds")],
            id="terminationGracePeriodSeconds 0",
        ),
        pytest.param(
            "livenessProbe", _EXEC | {"successThreshold": 1, "terminationGracePeriodSeconds": 1}, [], id="grace 1"
        ),
        pytest.param(
            "readinessProbe",
            {"timeoutSeconds": 10, "initialDelaySeconds": 10},
            [(Required, "")],
            id="TestValidateProbe: no handler with delays",
        ),
    ],
)
def test_validate_probe(kind: str, probe: Obj, want: list[tuple[ErrorType, str]]) -> None:
    errs = _container_errors(**{kind: probe})
    assert _types_and_fields(errs) == [(t, f"containers[0].{kind}{suffix}") for t, suffix in want]


# --- TestValidateContainers ----------------------------------------------------------------------------------

_TCP = {"tcpSocket": {"port": 80}}
_ALL_NEGATIVE = {
    "initialDelaySeconds": -1,
    "timeoutSeconds": -1,
    "periodSeconds": -1,
    "successThreshold": -1,
    "failureThreshold": -1,
    "terminationGracePeriodSeconds": -1,
}
_NEGATIVE_FIELDS = [
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
    "terminationGracePeriodSeconds",
]


def _res(cpu: str = "", memory: str = "") -> Obj:
    """Upstream's `getResources(cpu, memory, "", "")`."""
    return {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}


_CONTAINER_ROWS = [
    ("zero-length name", [_ctr(name="")], [(Required, "containers[0].name")]),
    ("zero-length-image", [_ctr(name="abc", image="")], [(Required, "containers[0].image")]),
    ("name > 63 characters", [_ctr(name="a" * 64)], [(Invalid, "containers[0].name")]),
    ("name not a DNS label", [_ctr(name="a.b.c")], [(Invalid, "containers[0].name")]),
    ("name not unique", [_ctr(name="abc"), _ctr(name="abc")], [(Duplicate, "containers[1].name")]),
    ("zero-length image", [_ctr(name="abc", image="")], [(Required, "containers[0].image")]),
    (
        "host port not unique",
        [
            _ctr(name="abc", ports=[{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]),
            _ctr(name="def", ports=[{"containerPort": 81, "hostPort": 80, "protocol": "TCP"}]),
        ],
        [(Duplicate, "containers[1].ports[0].hostPort")],
    ),
    (
        "unknown volume name",
        [_ctr(name="abc", volumeMounts=[{"name": "anything", "mountPath": "/foo"}])],
        [(NotFound, "containers[0].volumeMounts[0].name")],
    ),
    (
        "invalid lifecycle, no exec command.",
        [_ctr(lifecycle={"preStop": {"exec": {}}})],
        [(Required, "containers[0].lifecycle.preStop.exec.command")],
    ),
    (
        "invalid lifecycle, no http path.",
        [_ctr(lifecycle={"preStop": {"httpGet": {"port": 80, "scheme": "HTTP"}}})],
        [(Required, "containers[0].lifecycle.preStop.httpGet.path")],
    ),
    (
        "invalid lifecycle, no http port.",
        [_ctr(lifecycle={"preStop": {"httpGet": {"path": "/", "scheme": "HTTP"}}})],
        [(Invalid, "containers[0].lifecycle.preStop.httpGet.port")],
    ),
    (
        "invalid lifecycle, no http scheme.",
        [_ctr(lifecycle={"preStop": {"httpGet": {"path": "/", "port": 80}}})],
        [(NotSupported, "containers[0].lifecycle.preStop.httpGet.scheme")],
    ),
    (
        "invalid lifecycle, no tcp socket port.",
        [_ctr(lifecycle={"preStop": {"tcpSocket": {}}})],
        [(Invalid, "containers[0].lifecycle.preStop.tcpSocket.port")],
    ),
    (
        "invalid lifecycle, zero tcp socket port.",
        [_ctr(lifecycle={"preStop": {"tcpSocket": {"port": 0}}})],
        [(Invalid, "containers[0].lifecycle.preStop.tcpSocket.port")],
    ),
    (
        "invalid lifecycle, no action.",
        [_ctr(lifecycle={"preStop": {}})],
        [(Required, "containers[0].lifecycle.preStop")],
    ),
    (
        "invalid readiness probe, terminationGracePeriodSeconds set.",
        [_ctr(readinessProbe=_TCP | {"terminationGracePeriodSeconds": 10})],
        [(Invalid, "containers[0].readinessProbe.terminationGracePeriodSeconds")],
    ),
    (
        "invalid liveness probe, no tcp socket port.",
        [_ctr(livenessProbe={"tcpSocket": {}, "successThreshold": 1})],
        [(Invalid, "containers[0].livenessProbe.tcpSocket.port")],
    ),
    (
        "invalid liveness probe, no action.",
        [_ctr(livenessProbe={"successThreshold": 1})],
        [(Required, "containers[0].livenessProbe")],
    ),
    (
        "invalid liveness probe, successThreshold != 1",
        [_ctr(livenessProbe=_TCP | {"successThreshold": 2})],
        [(Invalid, "containers[0].livenessProbe.successThreshold")],
    ),
    (
        "invalid startup probe, successThreshold != 1",
        [_ctr(startupProbe=_TCP | {"successThreshold": 2})],
        [(Invalid, "containers[0].startupProbe.successThreshold")],
    ),
    (
        "invalid liveness probe, negative numbers",
        [_ctr(livenessProbe=_TCP | _ALL_NEGATIVE)],
        [(Invalid, f"containers[0].livenessProbe.{f}") for f in [*_NEGATIVE_FIELDS, "successThreshold"]],
    ),
    (
        "invalid readiness probe, negative numbers",
        [_ctr(readinessProbe=_TCP | _ALL_NEGATIVE)],
        [(Invalid, f"containers[0].readinessProbe.{f}") for f in [*_NEGATIVE_FIELDS, "terminationGracePeriodSeconds"]],
    ),
    (
        "invalid startup probe, negative numbers",
        [_ctr(startupProbe=_TCP | _ALL_NEGATIVE)],
        [(Invalid, f"containers[0].startupProbe.{f}") for f in [*_NEGATIVE_FIELDS, "successThreshold"]],
    ),
    (
        "invalid message termination policy",
        [_ctr(terminationMessagePolicy="Unknown")],
        [(NotSupported, "containers[0].terminationMessagePolicy")],
    ),
    (
        "empty message termination policy",
        [_ctr(terminationMessagePolicy="")],
        [(Required, "containers[0].terminationMessagePolicy")],
    ),
    (
        "invalid compute resource",
        [_ctr(resources={"limits": {"disk": "10G"}})],
        [(Invalid, "containers[0].resources.limits[disk]")] * 2,
    ),
    (
        "Resource CPU invalid",
        [_ctr(resources={"limits": _res("-10", "0")})],
        [(Invalid, "containers[0].resources.limits[cpu]")],
    ),
    (
        "Resource Requests CPU invalid",
        [_ctr(resources={"requests": _res("-10", "0")})],
        [(Invalid, "containers[0].resources.requests[cpu]")],
    ),
    (
        "Resource Memory invalid",
        [_ctr(resources={"limits": _res("0", "-10")})],
        [(Invalid, "containers[0].resources.limits[memory]")],
    ),
    (
        "Request limit simple invalid",
        [_ctr(resources={"limits": _res("5", "3"), "requests": _res("6", "3")})],
        [(Invalid, "containers[0].resources.requests")],
    ),
    (
        "CPU request limit multiple invalid",
        [_ctr(resources={"limits": _res("5", "3"), "requests": _res("6", "3")})],
        [(Invalid, "containers[0].resources.requests")],
    ),
    (
        "Invalid storage limit request",
        [_ctr(resources={"limits": {"attachable-volumes-aws-ebs": 10}})],
        [(Invalid, "containers[0].resources.limits[attachable-volumes-aws-ebs]")] * 2,
    ),
    (
        "Memory request limit multiple invalid",
        [_ctr(resources={"limits": _res("5", "3"), "requests": _res("5", "4")})],
        [(Invalid, "containers[0].resources.requests")],
    ),
    (
        "Invalid env from",
        [_ctr(name="env-from-source", envFrom=[{"configMapRef": {"name": "$%^&*#"}}])],
        [(Invalid, "containers[0].envFrom[0].configMapRef.name")],
    ),
]


@pytest.mark.parametrize(("containers", "expected"), [pytest.param(c, e, id=title) for title, c, e in _CONTAINER_ROWS])
def test_validate_containers(containers: list[Obj], expected: list[tuple[ErrorType, str]]) -> None:
    """Upstream compares the whole error list, ignoring bad value and detail."""
    assert _types_and_fields(_template_errors(containers=containers)) == expected


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never", "invalid", ""])
def test_validate_containers_forbidden_restart_policy(policy: str) -> None:
    """ "Forbidden RestartPolicy: …" rows: with ContainerRestartRules off (the gate those rows predate)."""
    errs = _template_errors(NO_RESTART_RULES, containers=[_ctr(name="foo", restartPolicy=policy)])
    assert [str(e) for e in errs] == ["containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]


def test_lifecycle_handler_without_port_reports_port_zero() -> None:
    """An absent port is the int-or-string zero value to kube-apiserver, so it reports port 0 out of range."""
    errs = _container_errors(lifecycle={"preStop": {"httpGet": {"path": "/", "scheme": "HTTP"}}})
    assert [str(e) for e in errs] == [
        "containers[0].lifecycle.preStop.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"
    ]
    errs = _container_errors(livenessProbe={"tcpSocket": {"port": None}, "successThreshold": 1})
    assert [str(e) for e in errs] == [
        "containers[0].livenessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive"
    ]


# --- TestValidateInitContainers ------------------------------------------------------------------------------

_APP = _ctr(name="app", image="nginx")


def _init_errors(init: list[Obj], features: FeatureGates = DEFAULT) -> list[FieldError]:
    return _template_errors(features, containers=[_APP], initContainers=init)


def test_validate_init_containers_success_case() -> None:
    same_host_port = [
        {"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
        {"containerPort": 80, "hostPort": 80, "protocol": "UDP"},
    ]
    init = [
        _ctr(name="container-1-same-host-port-different-protocol", ports=same_host_port),
        _ctr(name="container-2-same-host-port-different-protocol", ports=same_host_port),
        _ctr(
            name="container-3-restart-always-with-lifecycle-hook-and-probes",
            restartPolicy="Always",
            lifecycle={
                "postStart": {"exec": {"command": ["echo", "post start"]}},
                "preStop": {"exec": {"command": ["echo", "pre stop"]}},
            },
            livenessProbe=_TCP | {"successThreshold": 1},
            readinessProbe=_TCP,
            startupProbe=_TCP | {"successThreshold": 1},
        ),
    ]
    assert _init_errors(init) == []


_INIT_ROWS = [
    ("empty name", [_ctr(name="")], [(Required, "initContainers[0].name")]),
    ("name collision with regular container", [_ctr(name="app")], [(Duplicate, "initContainers[0].name")]),
    (
        "invalid termination message policy",
        [_ctr(name="init", terminationMessagePolicy="Unknown")],
        [(NotSupported, "initContainers[0].terminationMessagePolicy")],
    ),
    ("duplicate names", [_ctr(name="init"), _ctr(name="init")], [(Duplicate, "initContainers[1].name")]),
    (
        "duplicate ports",
        [_ctr(name="abc", ports=[{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}] * 2)],
        [(Duplicate, "initContainers[0].ports[1].hostPort")],
    ),
    (
        "uses disallowed field: Lifecycle",
        [_ctr(name="debug", lifecycle={"preStop": {"exec": {"command": ["ls", "-l"]}}})],
        [(Forbidden, "initContainers[0].lifecycle")],
    ),
    (
        "uses disallowed field: LivenessProbe",
        [_ctr(name="debug", livenessProbe=_TCP | {"successThreshold": 1})],
        [(Forbidden, "initContainers[0].livenessProbe")],
    ),
    (
        "uses disallowed field: ReadinessProbe",
        [_ctr(name="debug", readinessProbe=_TCP)],
        [(Forbidden, "initContainers[0].readinessProbe")],
    ),
    (
        "Container uses disallowed field: StartupProbe",
        [_ctr(name="debug", startupProbe=_TCP | {"successThreshold": 1})],
        [(Forbidden, "initContainers[0].startupProbe")],
    ),
    (
        "Disallowed field with other errors should only return a single Forbidden",
        [_ctr(name="debug", startupProbe=_TCP | _ALL_NEGATIVE)],
        [(Forbidden, "initContainers[0].startupProbe")],
    ),
    (
        "invalid startup probe in restartable container, successThreshold != 1",
        [_ctr(name="restartable-init", restartPolicy="Always", startupProbe=_TCP | {"successThreshold": 2})],
        [(Invalid, "initContainers[0].startupProbe.successThreshold")],
    ),
    (
        "invalid readiness probe, terminationGracePeriodSeconds set.",
        [_ctr(name="life-123", restartPolicy="Always", readinessProbe=_TCP | {"terminationGracePeriodSeconds": 10})],
        [(Invalid, "initContainers[0].readinessProbe.terminationGracePeriodSeconds")],
    ),
    (
        "invalid liveness probe, successThreshold != 1",
        [_ctr(name="live-123", restartPolicy="Always", livenessProbe=_TCP | {"successThreshold": 2})],
        [(Invalid, "initContainers[0].livenessProbe.successThreshold")],
    ),
    (
        "invalid lifecycle, no exec command.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"exec": {}}})],
        [(Required, "initContainers[0].lifecycle.preStop.exec.command")],
    ),
    (
        "invalid lifecycle, no http path.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"port": 80, "scheme": "HTTP"}}})],
        [(Required, "initContainers[0].lifecycle.preStop.httpGet.path")],
    ),
    (
        "invalid lifecycle, no http port.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"path": "/", "scheme": "HTTP"}}})],
        [(Invalid, "initContainers[0].lifecycle.preStop.httpGet.port")],
    ),
    (
        "invalid lifecycle, no http scheme.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"path": "/", "port": 80}}})],
        [(NotSupported, "initContainers[0].lifecycle.preStop.httpGet.scheme")],
    ),
    (
        "invalid lifecycle, no tcp socket port.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"tcpSocket": {}}})],
        [(Invalid, "initContainers[0].lifecycle.preStop.tcpSocket.port")],
    ),
    (
        "invalid lifecycle, zero tcp socket port.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {"tcpSocket": {"port": 0}}})],
        [(Invalid, "initContainers[0].lifecycle.preStop.tcpSocket.port")],
    ),
    (
        "invalid lifecycle, no action.",
        [_ctr(restartPolicy="Always", lifecycle={"preStop": {}})],
        [(Required, "initContainers[0].lifecycle.preStop")],
    ),
]


@pytest.mark.parametrize(("init", "expected"), [pytest.param(c, e, id=title) for title, c, e in _INIT_ROWS])
def test_validate_init_containers(init: list[Obj], expected: list[tuple[ErrorType, str]]) -> None:
    assert _types_and_fields(_init_errors(init)) == expected


@pytest.mark.parametrize("policy", ["OnFailure", "Never", "invalid", ""])
def test_validate_init_containers_unsupported_restart_policy(policy: str) -> None:
    """ "Not supported RestartPolicy: …" rows, with ContainerRestartRules off (only sidecars' Always)."""
    errs = _init_errors([_ctr(name="init", restartPolicy=policy)], NO_RESTART_RULES)
    assert [str(e) for e in errs] == [
        f'initContainers[0].restartPolicy: Unsupported value: "{policy}": supported values: "Always"'
    ]


# --- TestValidateRestartPolicy / TestValidateDNSPolicy ------------------------------------------------------------


def _pod(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30,
            "containers": [_ctr()],
        }
        | spec,
    }


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_validate_restart_policy_success(policy: str) -> None:
    assert validate_pod(_pod(restartPolicy=policy)) == []


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("", "spec.restartPolicy: Required value", id="empty"),
        pytest.param(
            "newpolicy",
            'spec.restartPolicy: Unsupported value: "newpolicy": supported values: "Always", "OnFailure", "Never"',
            id="newpolicy",
        ),
    ],
)
def test_validate_restart_policy(policy: str, expected: str) -> None:
    """A Pod, not a Job: a Job's template allows only OnFailure and Never (its own rule, tested elsewhere)."""
    assert [str(e) for e in validate_pod(_pod(restartPolicy=policy))] == [expected]


@pytest.mark.parametrize("policy", ["ClusterFirst", "Default", "ClusterFirstWithHostNet"])
def test_validate_dns_policy_success(policy: str) -> None:
    assert _template_errors(dnsPolicy=policy) == []


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param(
            "invalid",
            'dnsPolicy: Unsupported value: "invalid": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
            '"Default", "None"',
            id="invalid",
        ),
        pytest.param("", "dnsPolicy: Required value", id="empty"),
    ],
)
def test_validate_dns_policy(policy: str, expected: str) -> None:
    assert [str(e) for e in _template_errors(dnsPolicy=policy)] == [expected]


# --- TestValidatePodSpec ----------------------------------------------------------------------------------------

_MAX_INT32 = 2**31 - 1
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_ID_RANGE = "must be between 0 and 2147483647, inclusive"


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {
                "initContainers": [_ctr(name="ictr")],
                "volumes": [{"name": "vol", "emptyDir": {}}],
                "nodeSelector": {"key": "value"},
                "nodeName": "foobar",
                "activeDeadlineSeconds": _MAX_INT32,
                "serviceAccountName": "acct",
            },
            id="populate all fields",
        ),
        pytest.param(
            {
                "hostNetwork": True,
                "containers": [_ctr(ports=[{"hostPort": 8080, "containerPort": 8080, "protocol": "TCP"}])],
            },
            id="populate HostNetwork",
        ),
        pytest.param(
            {"securityContext": {"supplementalGroups": [0], "runAsUser": 0, "fsGroup": 0}},
            id="populate RunAsUser SupplementalGroups FSGroup with minID 0",
        ),
        pytest.param(
            {"securityContext": {"supplementalGroups": [_MAX_INT32], "runAsUser": _MAX_INT32, "fsGroup": _MAX_INT32}},
            id="populate RunAsUser SupplementalGroups FSGroup with maxID 2147483647",
        ),
        pytest.param({"hostIPC": True}, id="populate HostIPC"),
        pytest.param({"hostPID": True}, id="populate HostPID"),
        pytest.param(
            {"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1", "host2"]}]}, id="populate HostAliases"
        ),
        pytest.param(
            {"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1.foo", "host2.bar"]}]},
            id="populate HostAliases with `foo.bar` hostnames",
        ),
        pytest.param(
            {"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1.foo", "host2.bar"]}], "hostNetwork": True},
            id="populate HostAliases with HostNetwork",
        ),
        pytest.param({"priorityClassName": "valid-name"}, id="populate PriorityClassName"),
        pytest.param({"shareProcessNamespace": True}, id="populate ShareProcessNamespace"),
        pytest.param({"runtimeClassName": "valid-sandbox"}, id="populate RuntimeClassName"),
        pytest.param({"overhead": {}}, id="populate Overhead"),
        pytest.param({"securityContext": {"fsGroupChangePolicy": "Always"}}, id="populate FSGroupChangePolicy"),
    ],
)
def test_validate_pod_spec_success(spec: Obj) -> None:
    assert _template_errors(**spec) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"volumes": [{}]},
            ["volumes[0]: Required value: must specify a volume type", "volumes[0].name: Required value"],
            id="bad volume",
        ),
        pytest.param({"containers": []}, ["containers: Required value"], id="no containers"),
        pytest.param(
            {"containers": [{}]},
            [
                "containers[0].name: Required value",
                "containers[0].image: Required value",
                "containers[0].terminationMessagePolicy: Required value",
                "containers[0].imagePullPolicy: Required value",
            ],
            id="bad container",
        ),
        pytest.param(
            {"initContainers": [{}]},
            [
                "initContainers[0].name: Required value",
                "initContainers[0].image: Required value",
                "initContainers[0].terminationMessagePolicy: Required value",
                "initContainers[0].imagePullPolicy: Required value",
            ],
            id="bad init container",
        ),
        pytest.param(
            {"dnsPolicy": "invalid"},
            [
                'dnsPolicy: Unsupported value: "invalid": supported values: "ClusterFirstWithHostNet", '
                '"ClusterFirst", "Default", "None"'
            ],
            id="bad DNS policy",
        ),
        pytest.param(
            {"serviceAccountName": "invalidName"},
            [f'serviceAccountName: Invalid value: "invalidName": {_SUBDOMAIN_MSG}'],
            id="bad service account name",
        ),
        pytest.param(
            {
                "hostNetwork": True,
                "containers": [_ctr(ports=[{"hostPort": 8080, "containerPort": 2600, "protocol": "TCP"}])],
            },
            [
                "containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` "
                "is true"
            ],
            id="with hostNetwork hostPort not equal to containerPort",
        ),
        pytest.param(
            {"hostAliases": [{"ip": "999.999.999.999", "hostnames": ["host1", "host2"]}]},
            [
                'hostAliases[0].ip: Invalid value: "999.999.999.999": must be a valid IP address, '
                "(e.g. 10.9.8.7 or 2001:db8::ffff)"
            ],
            id="with hostAliases with invalid IP",
        ),
        pytest.param(
            {"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["@#$^#@#$"]}]},
            [f'hostAliases[0].hostnames[0]: Invalid value: "@#$^#@#$": {_SUBDOMAIN_MSG}'],
            id="with hostAliases with invalid hostname",
        ),
        pytest.param(
            {"securityContext": {"supplementalGroups": [_MAX_INT32 + 1, 1234]}},
            [f"securityContext.supplementalGroups[0]: Invalid value: 2147483648: {_ID_RANGE}"],
            id="bad supplementalGroups large than math.MaxInt32",
        ),
        pytest.param(
            {"securityContext": {"supplementalGroups": [-1, 1234]}},
            [f"securityContext.supplementalGroups[0]: Invalid value: -1: {_ID_RANGE}"],
            id="bad supplementalGroups less than 0",
        ),
        pytest.param(
            {"securityContext": {"runAsUser": _MAX_INT32 + 1}},
            [f"securityContext.runAsUser: Invalid value: 2147483648: {_ID_RANGE}"],
            id="bad runAsUser large than math.MaxInt32",
        ),
        pytest.param(
            {"securityContext": {"runAsUser": -1}},
            [f"securityContext.runAsUser: Invalid value: -1: {_ID_RANGE}"],
            id="bad runAsUser less than 0",
        ),
        pytest.param(
            {"securityContext": {"fsGroup": _MAX_INT32 + 1}},
            [f"securityContext.fsGroup: Invalid value: 2147483648: {_ID_RANGE}"],
            id="bad fsGroup large than math.MaxInt32",
        ),
        pytest.param(
            {"securityContext": {"fsGroup": -1}},
            [f"securityContext.fsGroup: Invalid value: -1: {_ID_RANGE}"],
            id="bad fsGroup less than 0",
        ),
        pytest.param(
            {"activeDeadlineSeconds": 0},
            ["activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
            id="bad-active-deadline-seconds",
        ),
        pytest.param(
            {"activeDeadlineSeconds": _MAX_INT32 + 1},
            ["activeDeadlineSeconds: Invalid value: 2147483648: must be between 1 and 2147483647, inclusive"],
            id="active-deadline-seconds-too-large",
        ),
        pytest.param(
            {"nodeName": "node name"},
            [f'nodeName: Invalid value: "node name": {_SUBDOMAIN_MSG}'],
            id="bad nodeName",
        ),
        pytest.param(
            {"priorityClassName": "InvalidName"},
            [f'priorityClassName: Invalid value: "InvalidName": {_SUBDOMAIN_MSG}'],
            id="bad PriorityClassName",
        ),
        pytest.param(
            {"hostPID": True, "shareProcessNamespace": True},
            [
                "securityContext.shareProcessNamespace: Invalid value: true: "
                "ShareProcessNamespace and HostPID cannot both be enabled"
            ],
            id="ShareProcessNamespace and HostPID both set",
        ),
        pytest.param(
            {"runtimeClassName": "invalid/sandbox"},
            [f'runtimeClassName: Invalid value: "invalid/sandbox": {_SUBDOMAIN_MSG}'],
            id="bad RuntimeClassName",
        ),
        pytest.param(
            {"securityContext": {"fsGroupChangePolicy": ""}},
            [
                'securityContext.fsGroupChangePolicy: Unsupported value: "": supported values: "Always", '
                '"OnRootMismatch"'
            ],
            id="bad empty fsGroupchangepolicy",
        ),
        pytest.param(
            {"securityContext": {"fsGroupChangePolicy": "invalid"}},
            [
                'securityContext.fsGroupChangePolicy: Unsupported value: "invalid": supported values: "Always", '
                '"OnRootMismatch"'
            ],
            id="bad invalid fsgroupchangepolicy",
        ),
    ],
)
def test_validate_pod_spec(spec: Obj, expected: list[str]) -> None:
    """Upstream asks only for a failure; these are the errors kube-apiserver gives."""
    assert [str(e) for e in _template_errors(**spec)] == expected


def test_validate_pod_spec_host_network_host_port_unspecified() -> None:
    """ "with hostNetwork hostPort unspecified" is a Pod's rule (ResourceIsPod): a template may leave hostPort 0,
    as defaulting sets it to containerPort when the pod is created."""
    ports = [{"hostPort": 0, "containerPort": 2600, "protocol": "TCP"}]
    assert _template_errors(hostNetwork=True, containers=[_ctr(ports=ports)]) == []
    assert [str(e) for e in validate_pod(_pod(hostNetwork=True, containers=[_ctr(ports=ports)]))] == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 0: must match `containerPort` when `hostNetwork` is true"
    ]


# --- TestValidatePod (the rows a pod template can meet) --------------------------------------------------------


def _ext(name: str = "invalid", limits: Obj | None = None, requests: Obj | None = None) -> Obj:
    return _ctr(name=name, resources={"limits": limits or {}, "requests": requests or {}})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {
                "tolerations": [
                    {"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}
                ]
            },
            "tolerations[0].key",
            id="invalid toleration key",
        ),
        pytest.param(
            {"tolerations": [{"key": "foo", "operator": "In", "value": "bar", "effect": "NoSchedule"}]},
            "tolerations[0].operator",
            id="invalid toleration operator",
        ),
        pytest.param(
            {"tolerations": [{"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"}]},
            "tolerations[0].operator",
            id="value must be empty when `operator` is 'Exists'",
        ),
        pytest.param(
            {"tolerations": [{"operator": "Equal", "value": "bar", "effect": "NoSchedule"}]},
            "tolerations[0].operator",
            id="operator must be 'Exists' when `key` is empty",
        ),
        pytest.param(
            {
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                        "tolerationSeconds": 20,
                    }
                ]
            },
            "tolerations[0].effect",
            id="effect must be 'NoExecute' when `TolerationSeconds` is set",
        ),
        pytest.param(
            {"containers": [_ext(limits={"invalid-name": "2"}, requests={"invalid-name": "2"})]},
            "must be a standard resource for containers",
            id="invalid extended resource name in container request",
        ),
        pytest.param(
            {"containers": [_ext(limits={"example.com/a": "1"}, requests={"example.com/a": "2"})]},
            "must be equal to example.com/a",
            id="invalid extended resource requirement: request must be == limit",
        ),
        pytest.param(
            {"containers": [_ext(requests={"example.com/a": "2"})]},
            "Limit must be set",
            id="invalid extended resource requirement without limit",
        ),
        pytest.param(
            {"containers": [_ext(requests={"example.com/a": "500m"})]},
            "must be an integer",
            id="invalid fractional extended resource in container request",
        ),
        pytest.param(
            {"initContainers": [_ext(requests={"example.com/a": "500m"})]},
            "must be an integer",
            id="invalid fractional extended resource in init container request",
        ),
        pytest.param(
            {"containers": [_ext(limits={"example.com/a": "2.5"}, requests={"example.com/a": "5"})]},
            "must be an integer",
            id="invalid fractional extended resource in container limit",
        ),
        pytest.param(
            {"initContainers": [_ext(limits={"example.com/a": "2.5"}, requests={"example.com/a": "2.5"})]},
            "must be an integer",
            id="invalid fractional extended resource in init container limit",
        ),
    ],
)
def test_validate_pod_errors(spec: Obj, expected: str) -> None:
    """Upstream: the aggregated errors contain the row's text (its `spec.` is the template's `spec.template.spec.`)."""
    errs = _template_errors(**spec)
    assert errs
    assert expected in "; ".join(str(e) for e in errs)


@pytest.mark.parametrize("value", [pytest.param("", id="present"), pytest.param("foo", id="populated")])
def test_validate_pod_mirror_pod_without_node_name(value: str) -> None:
    """ "mirror-pod present/populated without nodeName": ValidatePodTemplateSpec runs the pod-specific
    annotation rules too, at the template's `annotations`."""
    job = api_job()
    job["spec"]["template"]["metadata"]["annotations"] = {"kubernetes.io/config.mirror": value}
    assert [str(e) for e in validate_job(job)] == [
        f'spec.template.annotations[kubernetes.io/config.mirror]: Invalid value: "{value}": '
        "must set spec.nodeName if mirror pod annotation is set"
    ]


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {
                "tolerations": [
                    {"key": "foo", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 60}
                ]
            },
            id="populate forgiveness tolerations with exists operator in annotations.",
        ),
        pytest.param(
            {
                "tolerations": [
                    {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoExecute", "tolerationSeconds": 60}
                ]
            },
            id="populate forgiveness tolerations with equal operator in annotations.",
        ),
        pytest.param(
            {"tolerations": [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]},
            id="populate tolerations equal operator in annotations.",
        ),
        pytest.param(
            {"tolerations": [{"operator": "Exists", "effect": "NoSchedule"}]},
            id="empty key with Exists operator is OK for toleration",
        ),
        pytest.param(
            {"tolerations": [{"key": "foo", "value": "bar", "effect": "NoSchedule"}]},
            id="empty operator is OK for toleration, defaults to Equal.",
        ),
        pytest.param(
            {"tolerations": [{"key": "foo", "operator": "Equal", "value": "bar"}]},
            id="empty effect is OK for toleration",
        ),
        pytest.param(
            {
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": -2,
                    }
                ]
            },
            id="negative tolerationSeconds is OK for toleration.",
        ),
        pytest.param(
            {"initContainers": [_ext("valid-extended", {"example.com/a": "10"}, {"example.com/a": "10"})]},
            id="valid extended resources for init container",
        ),
        pytest.param(
            {"containers": [_ext("valid-extended", {"example.com/a": "10"}, {"example.com/a": "10"})]},
            id="valid extended resources for regular container",
        ),
    ],
)
def test_validate_pod_success(spec: Obj) -> None:
    assert _template_errors(**spec) == []


# --- TestValidateHandler --------------------------------------------------------------------------------------

_HEADER_MSG = (
    "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for "
    "validation is '[-A-Za-z0-9]+')"
)


@pytest.mark.parametrize(
    "handler",
    [
        {"exec": {"command": ["echo"]}},
        {"httpGet": {"path": "/", "port": 1, "host": "", "scheme": "HTTP"}},
        {"httpGet": {"path": "/foo", "port": 65535, "host": "host", "scheme": "HTTP"}},
        {"httpGet": {"path": "/", "port": "port", "host": "", "scheme": "HTTP"}},
        {
            "httpGet": {
                "path": "/",
                "port": "port",
                "scheme": "HTTP",
                "httpHeaders": [{"name": "Host", "value": "foo.example.com"}],
            }
        },
        {
            "httpGet": {
                "path": "/",
                "port": "port",
                "scheme": "HTTP",
                "httpHeaders": [
                    {"name": "X-Forwarded-For", "value": "1.2.3.4"},
                    {"name": "X-Forwarded-For", "value": "5.6.7.8"},
                ],
            }
        },
    ],
)
def test_validate_handler_success(handler: Obj) -> None:
    assert _container_errors(readinessProbe=handler) == []


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        ({}, ["readinessProbe: Required value: must specify a handler type"]),
        ({"exec": {"command": []}}, ["readinessProbe.exec.command: Required value"]),
        (
            {"httpGet": {"path": "", "port": 0, "host": ""}},
            [
                "readinessProbe.httpGet.path: Required value",
                "readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive",
                'readinessProbe.httpGet.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"',
            ],
        ),
        (
            {"httpGet": {"path": "/foo", "port": 65536, "host": "host"}},
            [
                "readinessProbe.httpGet.port: Invalid value: 65536: must be between 1 and 65535, inclusive",
                'readinessProbe.httpGet.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"',
            ],
        ),
        (
            {"httpGet": {"path": "", "port": "", "host": ""}},
            [
                "readinessProbe.httpGet.path: Required value",
                'readinessProbe.httpGet.port: Invalid value: "": must contain only alpha-numeric characters '
                "(a-z, 0-9), and hyphens (-)",
                'readinessProbe.httpGet.port: Invalid value: "": must contain at least one letter (a-z)',
                'readinessProbe.httpGet.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"',
            ],
        ),
        (
            {
                "httpGet": {
                    "path": "/",
                    "port": "port",
                    "scheme": "HTTP",
                    "httpHeaders": [{"name": "Host:", "value": "foo.example.com"}],
                }
            },
            [f'readinessProbe.httpGet.httpHeaders: Invalid value: "Host:": {_HEADER_MSG}'],
        ),
        (
            {
                "httpGet": {
                    "path": "/",
                    "port": "port",
                    "scheme": "HTTP",
                    "httpHeaders": [{"name": "X_Forwarded_For", "value": "foo.example.com"}],
                }
            },
            [f'readinessProbe.httpGet.httpHeaders: Invalid value: "X_Forwarded_For": {_HEADER_MSG}'],
        ),
    ],
)
def test_validate_handler(handler: Obj, expected: list[str]) -> None:
    """Upstream asks only for a failure; these are kube-apiserver's errors (header errors name the list)."""
    assert [str(e) for e in _container_errors(readinessProbe=handler)] == [f"containers[0].{t}" for t in expected]


# --- TestValidateVolumes (configMap and secret sources; the others are accepted as written) ----------------------

_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param(
            {"configMap": {"name": "c", "items": [{"key": "key", "path": ""}]}},
            ["configMap.items[0].path: Required value"],
            id="configmap with missing path",
        ),
        pytest.param(
            {"configMap": {"name": "c", "items": [{"key": "key", "path": "../foo"}]}},
            ["configMap.items[0].path: Invalid value: \"../foo\": must not contain '..'"],
            id="configmap with leading ..",
        ),
        pytest.param(
            {"configMap": {"name": "c", "items": [{"key": "key", "path": "foo/../bar"}]}},
            ["configMap.items[0].path: Invalid value: \"foo/../bar\": must not contain '..'"],
            id="configmap with .. inside",
        ),
        pytest.param(
            {"configMap": {"name": "c", "defaultMode": 0o1000}},
            [f"configMap.defaultMode: Invalid value: 512: {_MODE_MSG}"],
            id="configmap with invalid positive defaultMode",
        ),
        pytest.param(
            {"configMap": {"name": "c", "defaultMode": -1}},
            [f"configMap.defaultMode: Invalid value: -1: {_MODE_MSG}"],
            id="configmap with invalid negative defaultMode",
        ),
        pytest.param(
            {"secret": {"secretName": "s", "items": [{"key": "key", "path": "..badFileName"}]}},
            ["secret.items[0].path: Invalid value: \"..badFileName\": must not start with '..'"],
            id="secret item path starting with ..",
        ),
        pytest.param(
            {"secret": {"secretName": "s", "items": [{"key": "", "path": "/abs", "mode": 0o1000}]}},
            [
                "secret.items[0].key: Required value",
                'secret.items[0].path: Invalid value: "/abs": must be a relative path',
                f"secret.items[0].mode: Invalid value: 512: {_MODE_MSG}",
            ],
            id="secret item without key, absolute path, bad mode",
        ),
        pytest.param(
            {"secret": {"secretName": "", "defaultMode": 0o1000}},
            ["secret.secretName: Required value", f"secret.defaultMode: Invalid value: 512: {_MODE_MSG}"],
            id="secret without name, bad defaultMode",
        ),
    ],
)
def test_validate_volumes(volume: Obj, expected: list[str]) -> None:
    """Upstream compares type and field (and some details); these are kube-apiserver's whole errors."""
    errs = _template_errors(volumes=[{"name": "cfgmap"} | volume])
    assert [str(e) for e in errs] == [f"volumes[0].{text}" for text in expected]


def test_validate_volumes_valid_config_map_items() -> None:
    volume = {
        "name": "cfgmap",
        "configMap": {
            "name": "my-cfgmap",
            "defaultMode": 0o644,
            "items": [{"key": "key", "path": "filename", "mode": 0o644}, {"key": "key", "path": "dir/filename"}],
        },
    }
    assert _template_errors(volumes=[volume]) == []


def test_sub_path_backslash_is_not_a_separator() -> None:
    """kube-apiserver splits paths on '/' only (filepath.ToSlash is the identity on Linux)."""
    mounts = [{"name": "abc", "mountPath": "/bar", "subPath": "a\\..\\b"}]
    assert _mount_errors(mounts) == []


# --- TestValidatePodDNSConfig ---------------------------------------------------------------------------------


def _paths(*lengths: int) -> list[str]:
    """Upstream's `generateTestSearchPathFunc`: search paths of `a`s of the given lengths."""
    return ["a" * n for n in lengths]


_SEARCHES_32 = ["custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local", "default.svc.cluster.local."]


@pytest.mark.parametrize(
    ("dns_config", "dns_policy"),
    [
        pytest.param({}, "ClusterFirst", id="valid: empty DNSConfig"),
        pytest.param({"options": [{"name": "ndots", "value": "2"}]}, "ClusterFirst", id="valid: 1 option"),
        pytest.param({"nameservers": ["127.0.0.1"]}, "ClusterFirst", id="valid: 1 nameserver"),
        pytest.param({"nameservers": ["127.0.0.1"]}, "None", id="valid: DNSNone with 1 nameserver"),
        pytest.param({"searches": ["custom"]}, "ClusterFirst", id="valid: 1 search path"),
        pytest.param({"searches": ["custom."]}, "ClusterFirst", id="valid: 1 search path with trailing period"),
        pytest.param(
            {"nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8"], "searches": _SEARCHES_32},
            "ClusterFirst",
            id="valid: 3 nameservers and 6 search paths(legacy)",
        ),
        pytest.param(
            {
                "nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8"],
                "searches": _SEARCHES_32 + [str(n) for n in range(7, 33)],
            },
            "ClusterFirst",
            id="valid: 3 nameservers and 32 search paths",
        ),
        pytest.param({"searches": _paths(1, 50, 50, 50, 50, 50)}, "ClusterFirst", id="valid: 256 characters (legacy)"),
        pytest.param({"searches": _paths(64, *[63] * 31)}, "ClusterFirst", id="valid: 2048 characters"),
        pytest.param({"nameservers": ["FE80::0202:B3FF:FE1E:8329"]}, "ClusterFirst", id="valid: ipv6 nameserver"),
        pytest.param(
            {"searches": [*_SEARCHES_32[:5], "default.svc.cluster.local", "exceeded"]},
            "ClusterFirst",
            id="valid: 7 search paths",
        ),
        pytest.param({"searches": _paths(2, 50, 50, 50, 50, 50)}, "ClusterFirst", id="valid: 257 characters"),
        pytest.param(
            {"searches": ["_sip._tcp.abc_d.example.com", "."]},
            "ClusterFirst",
            id="relaxed DNS search: underscores and a lone dot",
        ),
    ],
)
def test_validate_pod_dns_config_success(dns_config: Obj, dns_policy: str) -> None:
    assert _template_errors(dnsConfig=dns_config, dnsPolicy=dns_policy) == []


_SUBDOMAIN_UNDERSCORE_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("dns_config", "dns_policy", "expected"),
    [
        pytest.param(
            {"nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"]},
            "ClusterFirst",
            ["dnsConfig.nameservers: Invalid value: must not have more than 3 nameservers"],
            id="invalid: 4 nameservers",
        ),
        pytest.param(
            {"searches": _SEARCHES_32 + [str(n) for n in range(7, 34)]},
            "ClusterFirst",
            ["dnsConfig.searches: Invalid value: must not have more than 32 search paths"],
            id="invalid: 33 search paths",
        ),
        pytest.param(
            {"searches": _paths(65, *[63] * 31)},
            "ClusterFirst",
            [
                "dnsConfig.searches: Invalid value: must not have more than 2048 characters (including spaces) "
                "in the search list"
            ],
            id="invalid: 2049 characters in search path list",
        ),
        pytest.param(
            {"searches": ["custom?"]},
            "ClusterFirst",
            [f"dnsConfig.searches[0]: Invalid value: {_SUBDOMAIN_UNDERSCORE_MSG}"],
            id="invalid search path",
        ),
        pytest.param(
            {"nameservers": ["invalid"]},
            "ClusterFirst",
            ["dnsConfig.nameservers[0]: Invalid value: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"],
            id="invalid nameserver",
        ),
        pytest.param(
            {"options": [{"value": "2"}]},
            "ClusterFirst",
            ["dnsConfig.options[0]: Required value: must not be empty"],
            id="invalid empty option name",
        ),
        pytest.param(
            {"searches": ["custom"]},
            "None",
            [
                "dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when "
                "`dnsPolicy` is None"
            ],
            id="invalid: DNSNone with 0 nameserver",
        ),
    ],
)
def test_validate_pod_dns_config(dns_config: Obj, dns_policy: str, expected: list[str]) -> None:
    """Upstream asks only for a failure; here each error's path, type and detail (the long lists' bad values
    left out)."""
    errs = _template_errors(dnsConfig=dns_config, dnsPolicy=dns_policy)
    assert [f"{e.field}: {e.type.text}: {e.detail}" for e in errs] == expected


# --- TestValidatePod: the deprecated seccomp and AppArmor annotations on a template -------------------------------

_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CTR = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CTR = "container.apparmor.security.beta.kubernetes.io/"


def _annotation_errors(annotations: dict[str, str], **spec: Any) -> list[str]:
    job = api_job()
    job["spec"]["template"]["metadata"]["annotations"] = annotations
    job["spec"]["template"]["spec"].update(spec)
    return [str(e) for e in validate_job(job)]


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param(
            {_SECCOMP_POD: "foo"},
            [f'spec.template.annotations.{_SECCOMP_POD}: Invalid value: "foo": must be a valid seccomp profile'],
            id="must be a valid pod seccomp profile",
        ),
        pytest.param(
            {_SECCOMP_CTR + "foo": "foo"},
            [f'spec.template.annotations.{_SECCOMP_CTR}foo: Invalid value: "foo": must be a valid seccomp profile'],
            id="must be a valid container seccomp profile",
        ),
        pytest.param(
            {_SECCOMP_CTR + "foo": ""},
            [f'spec.template.annotations.{_SECCOMP_CTR}foo: Invalid value: "": must be a valid seccomp profile'],
            id="must be a non-empty container profile in seccomp annotation",
        ),
        pytest.param(
            {_SECCOMP_POD: "localhost//foo"},
            [f'spec.template.annotations.{_SECCOMP_POD}: Invalid value: "/foo": must be a relative path'],
            id="must be a relative path in a node-local seccomp profile annotation",
        ),
        pytest.param(
            {_SECCOMP_POD: "localhost/../foo"},
            [f"spec.template.annotations.{_SECCOMP_POD}: Invalid value: \"../foo\": must not contain '..'"],
            id="must not start with '../'",
        ),
        pytest.param(
            {_APPARMOR_CTR + "main": "runtime/default", _APPARMOR_CTR + "fake-ctr": "runtime/default"},
            [f'spec.template.annotations[{_APPARMOR_CTR}fake-ctr]: Invalid value: "fake-ctr": container not found'],
            id="AppArmor profile must apply to a container",
        ),
        pytest.param(
            {_APPARMOR_CTR + "main": "bad-name"},
            [
                f'spec.template.annotations[{_APPARMOR_CTR}main]: Invalid value: "bad-name": '
                'invalid AppArmor profile name: "bad-name"'
            ],
            id="AppArmor profile format must be valid",
        ),
        pytest.param(
            {_APPARMOR_CTR + "main": "runtime/foo"},
            [
                f'spec.template.annotations[{_APPARMOR_CTR}main]: Invalid value: "runtime/foo": '
                'invalid AppArmor profile name: "runtime/foo"'
            ],
            id="only default AppArmor profile may start with runtime/",
        ),
    ],
)
def test_validate_pod_security_annotations(annotations: dict[str, str], expected: list[str]) -> None:
    """ValidatePodTemplateSpec runs ValidatePodSpecificAnnotations on the template's annotations."""
    assert _annotation_errors(annotations) == expected


def test_validate_pod_seccomp_annotation_without_container_name() -> None:
    """ "must be a non-empty container name in seccomp annotation": the key fails as an annotation name, and its
    value as a profile."""
    errs = _annotation_errors({_SECCOMP_CTR: "foo"})
    assert "spec.template.annotations: Invalid value: " + f'"{_SECCOMP_CTR}": name part must be non-empty' in errs
    assert f'spec.template.annotations.{_SECCOMP_CTR}: Invalid value: "foo": must be a valid seccomp profile' in errs


@pytest.mark.parametrize(
    "annotations",
    [
        pytest.param({_SECCOMP_POD: "runtime/default"}, id="runtime default seccomp profile"),
        pytest.param({_SECCOMP_POD: "unconfined"}, id="docker default seccomp profile"),
        pytest.param({_SECCOMP_POD: "localhost/foo"}, id="localhost seccomp profile"),
        pytest.param({_SECCOMP_CTR + "foo": "localhost/foo"}, id="localhost seccomp profile for a container"),
        pytest.param({_APPARMOR_CTR + "main": "runtime/default"}, id="default AppArmor annotation for a container"),
        pytest.param({_APPARMOR_CTR + "main": "localhost/foo"}, id="localhost AppArmor annotation for a container"),
    ],
)
def test_validate_pod_security_annotations_success(annotations: dict[str, str]) -> None:
    assert _annotation_errors(annotations) == []


def test_validate_pod_apparmor_annotation_for_an_init_container() -> None:
    """ "default AppArmor annotation for an init container": init containers are containers of the pod too."""
    init = [
        {"name": "init-ctr", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}
    ]
    assert _annotation_errors({_APPARMOR_CTR + "init-ctr": "runtime/default"}, initContainers=init) == []
