"""More rows of Kubernetes' pod validation tables: volume devices, resize policies, the allowPrivilegeEscalation
conflicts, Windows options, host-process pods and resource claims.

Tables from pkg/apis/core/validation/validation_test.go (stored copy 000f2605; the rules they test read from
validation.go at a7264f95, v1.31/1.32-era, and 000f2605 for `validateResourceClaimNames`' `request`, a v1.32
field): TestValidateResizePolicy, TestAlphaValidateVolumeDevices, TestValidateVolumeMounts' three
volumeDevice rows, TestValidateContainers' two resize-policy rows, TestValidateInitContainers' sidecar resize
success case, TestValidateSecurityContext and TestValidateWindowsSecurityContextOptions. A row's containers go
into a created Job's `spec.template.spec` after defaulting (tests/api/test_upstream_pod_validation.py's
harness), or into a Pod (`podtest.MakePod`'s shape) where the row needs `restartPolicy: Always`. Where upstream
asserts only that a row fails, the errors are asserted as kube-apiserver renders them
(docs/upstream-pod-validation.md, "More pod spec rules").
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_pod
from tests.api.job_fixtures import api_job

PREFIX = "spec.template.spec."
Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Duplicate = ErrorType.FieldValueDuplicate
NotFound = ErrorType.FieldValueNotFound
NotSupported = ErrorType.FieldValueNotSupported
DNS_SUBDOMAIN = "a lowercase RFC 1123 subdomain"


def _ctr(name: str = "ctr", **fields: Any) -> Obj:
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"} | (
        fields
    )


def _template_errors(**spec: Any) -> list[str]:
    """Rendered errors of a created Job whose pod spec has `spec`'s fields replaced, relative to the pod spec."""
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    errs = validate_job(job)
    assert all(e.field.startswith(PREFIX) for e in errs), [str(e) for e in errs]
    return [str(e).removeprefix(PREFIX) for e in errs]


def _template_field_errors(**spec: Any) -> list[FieldError]:
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    return [FieldError(e.field.removeprefix(PREFIX), e.type, e.detail, e.bad_value) for e in validate_job(job)]


def _pod_errors(**spec: Any) -> list[str]:
    """Rendered errors of `podtest.MakePod`'s pod (restartPolicy Always) with `spec`'s fields replaced."""
    pod_spec: Obj = {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "containers": [_ctr()],
    } | spec
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "123", "namespace": "ns"}, "spec": pod_spec}
    return [str(e) for e in validate_pod(pod)]


# --- TestValidateResizePolicy ---------------------------------------------------------------------------------

RESIZE = "spec.containers[0].resizePolicy"
POLICIES = 'supported values: "NotRequired", "RestartContainer"'
NEVER_MSG = "must be 'NotRequired' when `restartPolicy` is 'Never'"


def _policies(*pairs: tuple[str, str]) -> list[Obj]:
    return [{"resourceName": name, "restartPolicy": policy} for name, policy in pairs]


@pytest.mark.parametrize(
    ("policies", "restart", "expected"),
    [
        pytest.param(
            _policies(("cpu", "NotRequired"), ("memory", "RestartContainer")),
            "Always",
            [],
            id="ValidCPUandMemoryPolicies",
        ),
        pytest.param(_policies(("cpu", "RestartContainer")), "Always", [], id="ValidCPUPolicy"),
        pytest.param(_policies(("memory", "NotRequired")), "Always", [], id="ValidMemoryPolicy"),
        pytest.param([], "Always", [], id="NoPolicy"),
        pytest.param(
            _policies(("cpu", "NotRequired"), ("memory", "Restarrrt")),
            "Always",
            [f'{RESIZE}: Unsupported value: "Restarrrt": {POLICIES}'],
            id="ValidCPUandInvalidMemoryPolicy",
        ),
        pytest.param(
            _policies(("cpu", "RestartNotRequirrred"), ("memory", "RestartContainer")),
            "Always",
            [f'{RESIZE}: Unsupported value: "RestartNotRequirrred": {POLICIES}'],
            id="ValidMemoryandInvalidCPUPolicy",
        ),
        pytest.param(
            _policies(("cpuuu", "NotRequired")),
            "Always",
            [f'{RESIZE}: Unsupported value: "cpuuu": supported values: "cpu", "memory"'],
            id="InvalidResourceNameValidPolicy",
        ),
        pytest.param(
            _policies(("memory", "")), "Always", [f"{RESIZE}: Required value"], id="ValidResourceNameMissingPolicy"
        ),
        pytest.param(
            _policies(("cpu", "NotRequired"), ("memory", "RestartContainer"), ("cpu", "RestartContainer")),
            "Always",
            [f'{RESIZE}[2]: Duplicate value: "cpu"'],
            id="RepeatedPolicies",
        ),
        pytest.param(
            _policies(("cpu", "NotRequired"), ("memory", "RestartContainer")),
            "Never",
            [f'{RESIZE}: Invalid value: "RestartContainer": {NEVER_MSG}'],
            id="InvalidCPUPolicyWithPodRestartPolicy",
        ),
        pytest.param(
            _policies(("cpu", "RestartContainer"), ("memory", "NotRequired")),
            "Never",
            [f'{RESIZE}: Invalid value: "RestartContainer": {NEVER_MSG}'],
            id="InvalidMemoryPolicyWithPodRestartPolicy",
        ),
        pytest.param(
            _policies(("cpu", "RestartContainer"), ("memory", "RestartContainer")),
            "Never",
            [f'{RESIZE}: Invalid value: "RestartContainer": {NEVER_MSG}'] * 2,
            id="InvalidMemoryCPUPolicyWithPodRestartPolicy",
        ),
        pytest.param(
            _policies(("cpu", "NotRequired"), ("memory", "NotRequired")),
            "Never",
            [],
            id="ValidMemoryCPUPolicyWithPodRestartPolicy",
        ),
    ],
)
def test_validate_resize_policy(policies: list[Obj], restart: str, expected: list[str]) -> None:
    """Upstream compares the whole error list (paths, types, bad values, details)."""
    assert _pod_errors(restartPolicy=restart, containers=[_ctr(resizePolicy=policies)]) == expected
    if restart == "Never":  # a Job's template may say Never too: the same errors, under the template
        errs = _template_errors(containers=[_ctr(resizePolicy=policies)])
        assert errs == [e.removeprefix("spec.") for e in expected]


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param(_policies(("memory", "RestartContainerrrr")), id="Unsupported resize policy for memory"),
        pytest.param(_policies(("cpu", "RestartNotRequired")), id="Unsupported resize policy for CPU"),
    ],
)
def test_validate_containers_resize_policy(policy: list[Obj]) -> None:
    """TestValidateContainers' rows: (type, field) of every error, as upstream compares them."""
    errs = _template_field_errors(restartPolicy="OnFailure", containers=[_ctr(resizePolicy=policy)])
    assert [(e.type, e.field) for e in errs] == [(NotSupported, "containers[0].resizePolicy")]


def test_validate_init_containers_sidecar_resize_policy_success_case() -> None:
    """TestValidateInitContainers' success case 4 ("container-4-allowed-resize-policy", under a pod's Never):
    with InPlacePodVerticalScaling on (`AllowSidecarResizePolicy`) an init container may carry a resize policy."""
    init = [_ctr("container-4-allowed-resize-policy", resizePolicy=_policies(("cpu", "NotRequired")))]
    assert _template_errors(initContainers=init) == []


# --- TestAlphaValidateVolumeDevices ---------------------------------------------------------------------------

_BLOCK_VOLUMES = [
    {"name": "abc", "persistentVolumeClaim": {"claimName": "testclaim1"}},
    {"name": "abc-123", "persistentVolumeClaim": {"claimName": "testclaim2"}},
    {"name": "def", "hostPath": {"path": "/foo/baz"}},
    {
        "name": "ephemeral",
        "ephemeral": {
            "volumeClaimTemplate": {
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}}
            }
        },
    },
]
_GOOD_MOUNTS = [{"name": "xyz", "mountPath": "/foofoo"}, {"name": "ghi", "mountPath": "/foo/usr/share/test"}]
_BAD_MOUNTS = [{"name": "abc", "mountPath": "/foo"}, {"name": "abc-123", "mountPath": "/this/path/exists"}]
DEV = "containers[0].volumeDevices"
IN_MOUNTS = "must not already exist in volumeMounts"
PATH_IN_MOUNTS = "must not already exist as a path in volumeMounts"
BLOCK_ONLY = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"


def _device_errors(devices: list[Obj], mounts: list[Obj]) -> list[str]:
    """The errors under the container's `volumeDevices` (its mounts' own errors, e.g. an unknown volume, are
    not the function's: upstream calls `ValidateVolumeDevices` alone)."""
    container = _ctr(volumeDevices=devices, volumeMounts=mounts)
    errs = _template_errors(volumes=_BLOCK_VOLUMES, containers=[container])
    return [e for e in errs if e.startswith(DEV)]


def test_alpha_validate_volume_devices_success_case() -> None:
    """Only PVC or generic ephemeral volumes, as block devices; mounts of other volumes beside them."""
    devices = [
        {"name": "abc", "devicePath": "/foo"},
        {"name": "abc-123", "devicePath": "/usr/share/test"},
        {"name": "ephemeral", "devicePath": "/disk"},
    ]
    assert _device_errors(devices, _GOOD_MOUNTS) == []
    mounts = [{"name": "def", "mountPath": "/foofoo"}]
    assert _template_errors(volumes=_BLOCK_VOLUMES, containers=[_ctr(volumeDevices=devices, volumeMounts=mounts)]) == []


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        pytest.param(
            [{"name": "", "devicePath": "/foo"}],
            [
                f"{DEV}[0].name: Required value",
                f'{DEV}[0].name: Not found: ""',
                f'{DEV}[0].devicePath: Invalid value: "/foo": {PATH_IN_MOUNTS}',
            ],
            id="empty name",
        ),
        pytest.param(
            [{"name": "abc", "devicePath": "/foo"}, {"name": "abc", "devicePath": "/foo/bar"}],
            [
                f'{DEV}[0].name: Invalid value: "abc": {IN_MOUNTS}',
                f'{DEV}[0].devicePath: Invalid value: "/foo": {PATH_IN_MOUNTS}',
                f'{DEV}[1].name: Invalid value: "abc": must be unique',
                f'{DEV}[1].name: Invalid value: "abc": {IN_MOUNTS}',
            ],
            id="duplicate name",
        ),
        pytest.param(
            [{"name": "not-found", "devicePath": "/usr/share/test"}],
            [f'{DEV}[0].name: Not found: "not-found"'],
            id="name not found",
        ),
        pytest.param(
            [{"name": "def", "devicePath": "/usr/share/test"}],
            [f'{DEV}[0].name: Invalid value: "def": {BLOCK_ONLY}'],
            id="name found but invalid source",
        ),
        pytest.param(
            [{"name": "abc", "devicePath": ""}],
            [f"{DEV}[0].devicePath: Required value", f'{DEV}[0].name: Invalid value: "abc": {IN_MOUNTS}'],
            id="empty devicepath",
        ),
        pytest.param(
            [{"name": "abc-123", "devicePath": "baz"}],
            [f'{DEV}[0].name: Invalid value: "abc-123": {IN_MOUNTS}'],
            id="relative devicepath",
        ),
        pytest.param(
            [{"name": "abc", "devicePath": "/foo"}, {"name": "abc-123", "devicePath": "/foo"}],
            [
                f'{DEV}[0].name: Invalid value: "abc": {IN_MOUNTS}',
                f'{DEV}[0].devicePath: Invalid value: "/foo": {PATH_IN_MOUNTS}',
                f'{DEV}[1].devicePath: Invalid value: "/foo": must be unique',
                f'{DEV}[1].name: Invalid value: "abc-123": {IN_MOUNTS}',
                f'{DEV}[1].devicePath: Invalid value: "/foo": {PATH_IN_MOUNTS}',
            ],
            id="duplicate devicepath",
        ),
        pytest.param(
            [{"name": "def", "devicePath": "/baz/../"}],
            [
                f'{DEV}[0].name: Invalid value: "def": {BLOCK_ONLY}',
                f"{DEV}[0].devicePath: Invalid value: \"/baz/../\": can not contain backsteps ('..')",
            ],
            id="no backsteps",
        ),
        pytest.param(
            [{"name": "abc", "devicePath": "/baz/../"}],
            [
                f"{DEV}[0].devicePath: Invalid value: \"/baz/../\": can not contain backsteps ('..')",
                f'{DEV}[0].name: Invalid value: "abc": {IN_MOUNTS}',
            ],
            id="name exists in volumemounts",
        ),
        pytest.param(
            [{"name": "xyz", "devicePath": "/this/path/exists"}],
            [
                f'{DEV}[0].name: Not found: "xyz"',
                f'{DEV}[0].devicePath: Invalid value: "/this/path/exists": {PATH_IN_MOUNTS}',
            ],
            id="path exists in volumemounts",
        ),
        pytest.param(
            [{"name": "abc", "devicePath": "/this/path/exists"}],
            [
                f'{DEV}[0].name: Invalid value: "abc": {IN_MOUNTS}',
                f'{DEV}[0].devicePath: Invalid value: "/this/path/exists": {PATH_IN_MOUNTS}',
            ],
            id="both exist in volumemounts",
        ),
    ],
)
def test_alpha_validate_volume_devices(devices: list[Obj], expected: list[str]) -> None:
    """Upstream asks only for a failure; these are the errors `ValidateVolumeDevices` gives, in its order."""
    assert _device_errors(devices, _BAD_MOUNTS) == expected


# --- TestValidateVolumeMounts: the volumeDevice rows -----------------------------------------------------------

MNT = "containers[0].volumeMounts"


@pytest.mark.parametrize(
    ("mount", "expected"),
    [
        pytest.param(
            {"name": "xyz", "mountPath": "/bar"},
            [
                f'{MNT}[0].name: Not found: "xyz"',
                f'{MNT}[0].name: Invalid value: "xyz": must not already exist in volumeDevices',
            ],
            id="name exists in volumeDevice",
        ),
        pytest.param(
            {"name": "uvw", "mountPath": "/mnt/exists"},
            [
                f'{MNT}[0].name: Not found: "uvw"',
                f'{MNT}[0].mountPath: Invalid value: "/mnt/exists": must not already exist as a path in volumeDevices',
            ],
            id="mountpath exists in volumeDevice",
        ),
        pytest.param(
            {"name": "xyz", "mountPath": "/mnt/exists"},
            [
                f'{MNT}[0].name: Not found: "xyz"',
                f'{MNT}[0].name: Invalid value: "xyz": must not already exist in volumeDevices',
                f'{MNT}[0].mountPath: Invalid value: "/mnt/exists": must not already exist as a path in volumeDevices',
            ],
            id="both exist in volumeDevice",
        ),
    ],
)
def test_validate_volume_mounts_volume_device_rows(mount: Obj, expected: list[str]) -> None:
    """`badVolumeDevice` is `xyz` at /mnt/exists (the device's own errors, an unknown volume, are left aside)."""
    container = _ctr(volumeMounts=[mount], volumeDevices=[{"name": "xyz", "devicePath": "/mnt/exists"}])
    errs = _template_errors(volumes=_BLOCK_VOLUMES, containers=[container])
    assert [e for e in errs if e.startswith(MNT)] == expected


def test_ephemeral_container_volume_devices_are_validated() -> None:
    """TestValidateEphemeralContainers' "All allowed fields" carries a device of a PVC volume: allowed; a device
    of another volume is refused there as anywhere (through the ephemeralcontainers subresource's validation)."""
    from kjobs.api.validation_pod import validate_pod_spec

    base: Obj = {
        "restartPolicy": "Never",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "containers": [_ctr()],
        "volumes": [{"name": "blk", "persistentVolumeClaim": {"claimName": "pvc"}}, {"name": "vol", "emptyDir": {}}],
    }
    ok = base | {"ephemeralContainers": [_ctr("debug", volumeDevices=[{"name": "blk", "devicePath": "/dev/block"}])]}
    errs: list[FieldError] = []
    validate_pod_spec(ok, "spec", errs, is_pod=True)
    assert errs == []
    bad = base | {"ephemeralContainers": [_ctr("debug", volumeDevices=[{"name": "vol", "devicePath": "/dev/block"}])]}
    validate_pod_spec(bad, "spec", errs, is_pod=True)
    assert [str(e) for e in errs] == [
        f'spec.ephemeralContainers[0].volumeDevices[0].name: Invalid value: "vol": {BLOCK_ONLY}'
    ]


# --- TestValidateSecurityContext ------------------------------------------------------------------------------


def _full_valid_sc(**changes: Any) -> Obj:
    """`fullValidSC()`: privileged false, capabilities add foo / drop bar, SELinux options, runAsUser 1."""
    return {
        "privileged": False,
        "capabilities": {"add": ["foo"], "drop": ["bar"]},
        "seLinuxOptions": {"user": "user", "role": "role", "type": "type", "level": "level"},
        "runAsUser": 1,
    } | changes


def _without(sc: Obj, key: str) -> Obj:
    return {k: v for k, v in sc.items() if k != key}


@pytest.mark.parametrize(
    ("sc", "host_users"),
    [
        pytest.param(_full_valid_sc(), False, id="all settings"),
        pytest.param(_without(_full_valid_sc(), "capabilities"), False, id="no capabilities"),
        pytest.param(_without(_full_valid_sc(), "seLinuxOptions"), False, id="no selinux"),
        pytest.param(_without(_full_valid_sc(), "privileged"), False, id="no priv request"),
        pytest.param(_without(_full_valid_sc(), "runAsUser"), False, id="no run as user"),
        pytest.param(_full_valid_sc(procMount="Default"), True, id="proc mount set"),
        pytest.param(_full_valid_sc(procMount="Unmasked"), False, id="proc mount unmasked"),
    ],
)
def test_validate_security_context_success(sc: Obj, host_users: bool) -> None:
    spec: dict[str, Any] = {"containers": [_ctr(securityContext=sc)]}
    if not host_users:
        spec["hostUsers"] = False
    assert _template_errors(**spec) == []


SC = "containers[0].securityContext"
SC_JSON_TAIL = (
    '"SELinuxOptions":{"User":"user","Role":"role","Type":"type","Level":"level"},"WindowsOptions":null,'
    '"RunAsUser":1,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,'
    '"AllowPrivilegeEscalation":false,"ProcMount":null,"SeccompProfile":null,"AppArmorProfile":null}'
)


@pytest.mark.parametrize(
    ("sc", "expected"),
    [
        pytest.param(
            _full_valid_sc(runAsUser=-1),
            [f"{SC}.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive"],
            id="negative RunAsUser",
        ),
        pytest.param(
            _full_valid_sc(capabilities={"add": ["CAP_SYS_ADMIN"], "drop": ["bar"]}, allowPrivilegeEscalation=False),
            [
                f'{SC}: Invalid value: {{"Capabilities":{{"Add":["CAP_SYS_ADMIN"],"Drop":["bar"]}},"Privileged":false,'
                + SC_JSON_TAIL
                + ": cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
            ],
            id="with CAP_SYS_ADMIN and allowPrivilegeEscalation false",
        ),
        pytest.param(
            _full_valid_sc(privileged=True, allowPrivilegeEscalation=False),
            [
                f'{SC}: Invalid value: {{"Capabilities":{{"Add":["foo"],"Drop":["bar"]}},"Privileged":true,'
                + SC_JSON_TAIL
                + ": cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            ],
            id="with privileged and allowPrivilegeEscalation false",
        ),
        pytest.param(
            _full_valid_sc(procMount="Unmasked"),
            [f'{SC}.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`'],
            id="with unmasked proc mount type and no user namespace",
        ),
    ],
)
def test_validate_security_context(sc: Obj, expected: list[str]) -> None:
    """Upstream checks the first error's type and detail; here the whole rendered list. The conflicts' bad value
    is the internal SecurityContext as Go's JSON (kjobs' rendering of composite values; Go's `%v` of the pointer
    would print an address)."""
    assert _template_errors(containers=[_ctr(securityContext=sc)]) == expected


def test_escalation_conflicts_are_reported_once_per_cap_sys_admin_and_with_privileged() -> None:
    sc = {"privileged": True, "allowPrivilegeEscalation": False, "capabilities": {"add": ["CAP_SYS_ADMIN"] * 2}}
    errs = _template_errors(containers=[_ctr(securityContext=sc)])
    assert [e.rsplit(": ", 1)[1] for e in errs] == [
        "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
    ]
    assert _template_errors(containers=[_ctr(securityContext=sc | {"allowPrivilegeEscalation": True})]) == []


# --- TestValidateWindowsSecurityContextOptions ----------------------------------------------------------------

_LONG_DNS_DOMAIN = ("a" * 63 + ".") * 4


@pytest.mark.parametrize(
    ("options", "substring"),
    [
        pytest.param({}, "", id="an empty struct"),
        pytest.param(
            {
                "gmsaCredentialSpecName": "dummy-gmsa-crep-spec-name",
                "gmsaCredentialSpec": "dummy-gmsa-crep-spec-contents",
            },
            "",
            id="a valid input",
        ),
        pytest.param(
            {"gmsaCredentialSpecName": "not_a-valid-gmsa-crep-spec-name"},
            DNS_SUBDOMAIN,
            id="a GMSA cred spec name that is not a valid resource name",
        ),
        pytest.param(
            {"gmsaCredentialSpec": ""},
            "gmsaCredentialSpec cannot be an empty string",
            id="empty GMSA cred spec contents",
        ),
        pytest.param(
            {"gmsaCredentialSpec": "a" * (64 * 1024 + 1)},
            "gmsaCredentialSpec size must be under",
            id="GMSA cred spec contents that are too long",
        ),
        pytest.param({"runAsUserName": None}, "", id="RunAsUserName is nil"),
        pytest.param({"runAsUserName": "Container. User"}, "", id="a valid RunAsUserName"),
        pytest.param(
            {"runAsUserName": "Network Service\\Container. User"}, "", id="a valid RunAsUserName with NetBios Domain"
        ),
        pytest.param(
            {"runAsUserName": "fOo" * 20 + ".liSH\\Container. User"}, "", id="a valid RunAsUserName with DNS Domain"
        ),
        pytest.param(
            {"runAsUserName": "fOo" * 20 + ".l\\Container. User"},
            "",
            id="a valid RunAsUserName with DNS Domain with a single character segment",
        ),
        pytest.param(
            {"runAsUserName": "a" * 42 + "\\Container. User"},
            "",
            id="a valid RunAsUserName with a long single segment DNS Domain",
        ),
        pytest.param({"runAsUserName": ""}, "runAsUserName cannot be an empty string", id="an empty RunAsUserName"),
        pytest.param(
            {"runAsUserName": "Container\tUser"},
            "runAsUserName cannot contain control characters",
            id="RunAsUserName containing a control character",
        ),
        pytest.param(
            {"runAsUserName": "Container\\Foo\\Lish"},
            "runAsUserName cannot contain more than one backslash",
            id="RunAsUserName containing too many backslashes",
        ),
        pytest.param(
            {"runAsUserName": "\\User"},
            "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
            id="RunAsUserName containing backslash but empty Domain",
        ),
        pytest.param(
            {"runAsUserName": "Container\\"},
            "runAsUserName's User cannot be empty",
            id="RunAsUserName containing backslash but empty User",
        ),
        pytest.param(
            {"runAsUserName": "NetBios " + "a" * 8 + "\\user"},
            "runAsUserName's Domain doesn't match the NetBios",
            id="RunAsUserName's NetBios Domain is too long",
        ),
        pytest.param(
            {"runAsUserName": _LONG_DNS_DOMAIN[:253] + ".com\\user"},
            "runAsUserName's Domain length must be under",
            id="RunAsUserName's DNS Domain is too long",
        ),
        pytest.param(
            {"runAsUserName": "a" * 105},
            "runAsUserName's User length must not be longer than",
            id="RunAsUserName's User is too long",
        ),
        pytest.param(
            {"runAsUserName": "... ..."},
            "runAsUserName's User cannot contain only periods or spaces",
            id="RunAsUserName's User cannot contain only spaces or periods",
        ),
        pytest.param(
            {"runAsUserName": ".FooLish\\User"},
            "runAsUserName's Domain doesn't match the NetBios",
            id="RunAsUserName's NetBios Domain cannot start with a dot",
        ),
        pytest.param(
            {"runAsUserName": "Foo? Lish?\\User"},
            "runAsUserName's Domain doesn't match the NetBios",
            id="RunAsUserName's NetBios Domain cannot contain invalid characters",
        ),
        pytest.param(
            {"runAsUserName": "a" * 32 + ".com-\\user"},
            "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
            id="RunAsUserName's DNS Domain cannot contain invalid characters",
        ),
        pytest.param(
            {"runAsUserName": "Container/User"},
            "runAsUserName's User cannot contain the following characters",
            id="RunAsUserName's User cannot contain invalid characters",
        ),
    ],
)
def test_validate_windows_security_context_options(options: Obj, substring: str) -> None:
    """Upstream: no error, or exactly one containing the row's text. Checked in a container's and in the pod's
    security context (`validatePodSpecSecurityContext` runs the same function)."""
    options = {k: v for k, v in options.items() if v is not None}
    for spec, where in (
        ({"containers": [_ctr(securityContext={"windowsOptions": options})]}, "containers[0].securityContext"),
        ({"securityContext": {"windowsOptions": options}}, "securityContext"),
    ):
        errs = _template_errors(**spec)
        if not substring:
            assert errs == []
        else:
            assert len(errs) == 1 and substring in errs[0], errs
            assert errs[0].startswith(f"{where}.windowsOptions."), errs


def test_windows_options_bad_values_render_the_string() -> None:
    """Upstream's bad value is the `*string`, which apimachinery dereferences: a quoted string."""
    errs = _template_errors(containers=[_ctr(securityContext={"windowsOptions": {"runAsUserName": "a/b"}})])
    assert errs == [
        f'{SC}.windowsOptions.runAsUserName: Invalid value: "a/b": '
        "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]"
    ]


# --- validateWindowsHostProcessPod (kjobs' rows, from validation.go) -------------------------------------------


def _host_process(value: bool) -> Obj:
    return {"windowsOptions": {"hostProcess": value}}


ALL_HOST_PROCESS = (
    'spec.template.spec: Invalid value: "": If pod contains any hostProcess containers then all containers must be '
    "HostProcess containers"
)


def _job_errors(**spec: Any) -> list[str]:
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    return [str(e) for e in validate_job(job)]


def test_host_process_pod_needs_every_container_and_host_network() -> None:
    spec = {"os": {"name": "windows"}, "containers": [_ctr("a", securityContext=_host_process(True)), _ctr("b")]}
    assert _job_errors(**spec) == [
        ALL_HOST_PROCESS,
        "spec.template.spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any "
        "hostProcess containers",
    ]


def test_host_process_inherited_from_the_pod_and_conflicting_values() -> None:
    ok = {
        "os": {"name": "windows"},
        "hostNetwork": True,
        "securityContext": _host_process(True),
        "containers": [_ctr("a"), _ctr("b", securityContext=_host_process(True))],
    }
    assert _job_errors(**ok) == []
    conflicting = ok | {"containers": [_ctr("a"), _ctr("b", securityContext=_host_process(False))]}
    assert _job_errors(**conflicting) == [
        "spec.template.spec.containers[1].securityContext.windowsOptions.hostProcess: Invalid value: false: pod "
        "hostProcess value must be identical if both are specified, was true",
        ALL_HOST_PROCESS,
    ]


# --- TestValidateWindowsHostProcessPod (the rows of the stored copy from "pod-wide HostProcess=nil" on) ---------


def _hp(value: bool | None) -> Obj:
    """A container named as upstream's `containerName`, with `hostProcess` set when `value` is not None."""
    container: Obj = {"name": "container"}
    if value is not None:
        container["securityContext"] = {"windowsOptions": {"hostProcess": value}}
    return container


def _hp_spec(pod: bool | None, containers: list[Obj], init: list[Obj] | None = None, **more: Any) -> Obj:
    context: Obj = {"windowsOptions": {"hostProcess": pod}} if pod is not None else {}
    spec: Obj = {"hostNetwork": True, "securityContext": context, "containers": containers} | more
    if init is not None:
        spec["initContainers"] = init
    return spec


@pytest.mark.parametrize(
    ("spec", "fails"),
    [
        pytest.param(
            _hp_spec(None, [_hp(True)], [_hp(True)]),
            False,
            id="Spec with feature enabled, pod-wide HostProcess=nil, HostNetwork set, and all containers setting "
            "HostProcess=true should validate",
        ),
        pytest.param(
            _hp_spec(None, [_hp(True)], [_hp(False)]),
            True,
            id="Pods with feature enabled, some containers setting HostProcess=true, and others setting "
            "HostProcess=false should not validate",
        ),
        pytest.param(
            _hp_spec(None, [_hp(True)], [_hp(None)]),
            True,
            id="Spec with feature enabled, some containers setting HostProcess=true, and other leaving HostProcess "
            "unset should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(True)], [_hp(False)]),
            True,
            id="Spec with feature enabled, pod-wide HostProcess=true, some containers setting HostProcess=true, and "
            "init containers setting HostProcess=false should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(True), _hp(False)]),
            True,
            id="Spec with feature enabled, pod-wide HostProcess=true, some containers setting HostProcess=true, and "
            "others setting HostProcess=false should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(True)], [_hp(None)]),
            False,
            id="Spec with feature enabled, pod-wide HostProcess=true, some containers setting HostProcess=true, and "
            "others leaving HostProcess=nil should validate",
        ),
        pytest.param(
            _hp_spec(False, [_hp(True)], [_hp(None)]),
            True,
            id="Spec with feature enabled, pod-wide HostProcess=false, some contaienrs setting HostProccess=true "
            "should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(False)]),
            True,
            id="Pod's HostProcess set to true but all containers override to false should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(None)], ephemeralContainers=[_hp(False) | {"name": ""}]),
            True,
            id="Non-HostProcess ephemeral container in HostProcess pod should not validate",
        ),
        pytest.param(
            _hp_spec(True, [_hp(None)], ephemeralContainers=[{}]),
            False,
            id="HostProcess ephemeral container in HostProcess pod should validate",
        ),
        pytest.param(
            {"containers": [_hp(None)], "ephemeralContainers": [_hp(False) | {"name": ""}]},
            False,
            id="Non-HostProcess ephemeral container in Non-HostProcess pod should validate",
        ),
        pytest.param(
            {"containers": [_hp(None)], "ephemeralContainers": [_hp(True) | {"name": ""}]},
            True,
            id="HostProcess ephemeral container in Non-HostProcess pod should not validate",
        ),
    ],
)
def test_validate_windows_host_process_pod(spec: Obj, fails: bool) -> None:
    """Upstream calls `validateWindowsHostProcessPod` alone and asks for failure or success (with
    `AllowPrivileged` true: kjobs has no `--allow-privileged=false`, so "Valid HostProcess pod should spec should
    not validate if allowPrivileged is not set" is left out)."""
    from kjobs.api.validation_security import validate_windows_host_process

    errs: list[FieldError] = []
    validate_windows_host_process(spec, "spec", errs)
    assert bool(errs) is fails, [str(e) for e in errs]


def test_host_process_errors_name_the_container_kind() -> None:
    from kjobs.api.validation_security import validate_windows_host_process

    errs: list[FieldError] = []
    validate_windows_host_process(_hp_spec(True, [_hp(None)], ephemeralContainers=[_hp(False)]), "spec", errs)
    assert [str(e) for e in errs] == [
        "spec.ephemeralContainers[0].securityContext.windowsOptions.hostProcess: Invalid value: false: pod "
        "hostProcess value must be identical if both are specified, was true",
        'spec: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess '
        "containers",
    ]


# --- TestValidateDynamicResourceAllocation ----------------------------------------------------------------------

_CLAIM = "some-claim"
_TEMPLATE = "some-claim-template"
CLAIMS = "spec.containers[0].resources.claims"


def _claims_pod_errors(
    pod_claims: list[Obj] | None = None, ctr_claims: list[Obj] | None = None, *, init: bool = False
) -> list[str]:
    """`podtest.MakePod("")` (container `ctr`, restartPolicy Always) with the row's claims."""
    container = _ctr("ctr-init" if init else "ctr")
    if ctr_claims is not None:
        container["resources"] = {"claims": ctr_claims}
    spec: Obj = {"initContainers": [container], "containers": [_ctr()]} if init else {"containers": [container]}
    if pod_claims is not None:
        spec["resourceClaims"] = pod_claims
    return _pod_errors(**spec)


def _ref(name: str, claim: str | None = _CLAIM, template: str | None = None) -> Obj:
    out: Obj = {"name": name}
    if claim is not None:
        out["resourceClaimName"] = claim
    if template is not None:
        out["resourceClaimTemplateName"] = template
    return out


@pytest.mark.parametrize(
    ("pod_claims", "ctr_claims", "init"),
    [
        pytest.param(
            [_ref("my-claim-reference")], [{"name": "my-claim-reference"}], False, id="resource claim reference"
        ),
        pytest.param(
            [_ref("my-claim-template", None, _TEMPLATE)],
            [{"name": "my-claim-template"}],
            False,
            id="resource claim template",
        ),
        pytest.param(
            [_ref("my-claim"), _ref("another-claim")],
            [{"name": "my-claim"}, {"name": "another-claim"}],
            False,
            id="multiple claims",
        ),
        pytest.param(
            [_ref("my-claim"), _ref("another-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "another-claim", "request": "req-0"}],
            False,
            id="multiple claims with requests",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim", "request": "req-1"}],
            False,
            id="single claim with requests",
        ),
        pytest.param([_ref("my-claim")], [{"name": "my-claim"}], True, id="init container"),
    ],
)
def test_validate_dynamic_resource_allocation_success(pod_claims: list[Obj], ctr_claims: list[Obj], init: bool) -> None:
    assert _claims_pod_errors(pod_claims, ctr_claims, init=init) == []


def _label_msgs(value: str) -> list[str]:
    from kjobs.api.validation_formats import is_dns1123_label

    return is_dns1123_label(value)


def _subdomain_msgs(value: str) -> list[str]:
    from kjobs.api.validation_formats import is_dns1123_subdomain

    return is_dns1123_subdomain(value)


RC = "spec.resourceClaims"
NO_CLAIM = "must be one of the names in pod.spec.resourceClaims"


@pytest.mark.parametrize(
    ("pod_claims", "ctr_claims", "expected"),
    [
        pytest.param(
            [_ref("../my-claim")],
            None,
            [f'{RC}[0].name: Invalid value: "../my-claim": {m}' for m in _label_msgs("../my-claim")],
            id="pod claim name with prefix",
        ),
        pytest.param(
            [_ref("my/claim")],
            None,
            [f'{RC}[0].name: Invalid value: "my/claim": {m}' for m in _label_msgs("my/claim")],
            id="pod claim name with path",
        ),
        pytest.param([_ref("")], None, [f"{RC}[0].name: Required value"], id="pod claim name empty"),
        pytest.param(
            [_ref("my-claim"), _ref("my-claim")],
            None,
            [f'{RC}[1].name: Duplicate value: "my-claim"'],
            id="duplicate pod claim entries",
        ),
        pytest.param(
            [_ref("my-claim", None)],
            None,
            [
                f'{RC}[0]: Invalid value: {{"Name":"my-claim","ResourceClaimName":null,'
                '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, '
                "`resourceClaimTemplateName`"
            ],
            id="resource claim source empty",
        ),
        pytest.param(
            [_ref("my-claim", _CLAIM, _TEMPLATE)],
            [{"name": "my-claim"}],
            [
                f'{RC}[0]: Invalid value: {{"Name":"my-claim","ResourceClaimName":"some-claim",'
                '"ResourceClaimTemplateName":"some-claim-template"}: at most one of `resourceClaimName` or '
                "`resourceClaimTemplateName` may be specified"
            ],
            id="resource claim reference and template",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "no-such-claim"}],
            [f'{CLAIMS}[0]: Not found: "no-such-claim": {NO_CLAIM}: my-claim'],
            id="claim not found",
        ),
        pytest.param([_ref("my-claim")], [{"name": ""}], [f"{CLAIMS}[0]: Required value"], id="claim name empty"),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim"}, {"name": "my-claim"}],
            [f'{CLAIMS}[1]: Duplicate value: "my-claim"'],
            id="pod claim name duplicates",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim"}, {"name": "my-claim", "request": "req-0"}],
            [f'{CLAIMS}[1]: Duplicate value: "my-claim"'],
            id="pod claim name duplicates without and with request",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim"}],
            [f'{CLAIMS}[1]: Duplicate value: "my-claim"'],
            id="pod claim name duplicates with and without request",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim", "request": "req-0"}, {"name": "my-claim", "request": "req-0"}],
            [f'{CLAIMS}[1]: Duplicate value: "my-claim/req-0"'],
            id="pod claim name duplicates with requests",
        ),
        pytest.param(
            [_ref("my-claim")],
            [{"name": "my-claim", "request": "*$@%^"}],
            [f'{CLAIMS}[0].request: Invalid value: "*$@%^": {m}' for m in _label_msgs("*$@%^")],
            id="bad request name",
        ),
        pytest.param(
            None,
            [{"name": "my-claim"}],
            [f'{CLAIMS}[0]: Not found: "my-claim": {NO_CLAIM} which is empty'],
            id="no claims defined",
        ),
        pytest.param(
            [_ref("my-claim"), _ref("my-claim")],
            [{"name": "my-claim"}],
            [f'{RC}[1].name: Duplicate value: "my-claim"'],
            id="duplicate pod claim name",
        ),
        pytest.param(
            [_ref("my-claim-template", None, ".foo_bar")],
            [{"name": "my-claim-template"}],
            [f'{RC}[0].resourceClaimTemplateName: Invalid value: ".foo_bar": {m}' for m in _subdomain_msgs(".foo_bar")],
            id="invalid claim template name",
        ),
        pytest.param(
            [_ref("my-claim-reference", ".foo_bar")],
            [{"name": "my-claim-reference"}],
            [f'{RC}[0].resourceClaimName: Invalid value: ".foo_bar": {m}' for m in _subdomain_msgs(".foo_bar")],
            id="invalid claim reference name",
        ),
    ],
)
def test_validate_dynamic_resource_allocation(
    pod_claims: list[Obj] | None, ctr_claims: list[Obj] | None, expected: list[str]
) -> None:
    """Upstream asks only for a failure; these are the errors kube-apiserver gives (a Pod's create)."""
    assert expected
    assert _claims_pod_errors(pod_claims, ctr_claims) == expected


def test_ephemeral_container_dont_support_resource_requirements() -> None:
    """The row "ephemeral container don't support resource requirements", through `ValidatePodSpec` (a Pod's
    create refuses ephemeral containers before, and the ephemeralcontainers subresource validates this way)."""
    from kjobs.api.validation_pod import validate_pod_spec

    ephemeral = _ctr("ctr-ephemeral", resources={"claims": [{"name": "my-claim"}]}, targetContainerName="ctr")
    spec: Obj = {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "containers": [_ctr()],
        "ephemeralContainers": [ephemeral],
        "resourceClaims": [_ref("my-claim")],
    }
    errs: list[FieldError] = []
    validate_pod_spec(spec, "spec", errs, is_pod=True)
    assert [str(e) for e in errs] == [
        "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container"
    ]


def test_resource_claims_in_a_job_template() -> None:
    """The same rules in a Job's pod template; a valid claim reference passes."""
    ok = {"resourceClaims": [_ref("gpu")], "containers": [_ctr(resources={"claims": [{"name": "gpu"}]})]}
    assert _template_errors(**ok) == []
    bad = {"containers": [_ctr(resources={"claims": [{"name": "gpu"}]})]}
    assert _template_errors(**bad) == [
        f'containers[0].resources.claims[0]: Not found: "gpu": {NO_CLAIM} which is empty'
    ]


# --- through the API ------------------------------------------------------------------------------------------


def test_a_job_create_gets_the_causes_kube_apiserver_gives() -> None:
    """POST of a Job whose container is privileged without privilege escalation, resizes memory with a restart
    under `restartPolicy: Never`, mounts a hostPath volume as a block device and names an undeclared claim: 422
    with each cause (field, reason, message without the path); a valid resize policy and claim are stored."""
    from kjobs.api.errors import ApiError
    from kjobs.client.resources import JOBS
    from tests.api.job_fixtures import raw_job
    from tests.api.upstream_validation_support import causes, run

    bad = raw_job("bad")
    spec = bad["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "host", "hostPath": {"path": "/tmp"}}]
    spec["containers"][0] |= {
        "securityContext": {"privileged": True, "allowPrivilegeEscalation": False},
        "resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
        "volumeDevices": [{"name": "host", "devicePath": "/dev/xvda"}],
        "resources": {"claims": [{"name": "gpu"}]},
    }
    good = raw_job("good")
    good["spec"]["template"]["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]
    good["spec"]["template"]["spec"]["containers"][0] |= {
        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
        "resources": {"claims": [{"name": "gpu"}]},
    }
    ctr = "spec.template.spec.containers[0]"

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as info:
            await client.create(JOBS, "default", bad)
        got = causes(info.value)
        assert (f"{ctr}.volumeDevices[0].name", "FieldValueInvalid", f'Invalid value: "host": {BLOCK_ONLY}') in got
        assert (
            f"{ctr}.resources.claims[0]",
            "FieldValueNotFound",
            f'Not found: "gpu": {NO_CLAIM} which is empty',
        ) in got
        assert (f"{ctr}.resizePolicy", "FieldValueInvalid", f'Invalid value: "RestartContainer": {NEVER_MSG}') in got
        escalation = [c for c in got if c[0] == f"{ctr}.securityContext"]
        assert len(escalation) == 1 and escalation[0][2].startswith(
            'Invalid value: {"Capabilities":null,"Privileged":true,'
        )
        assert escalation[0][2].endswith("cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
        stored = await client.create(JOBS, "default", good)
        stored_spec = stored["spec"]["template"]["spec"]
        assert stored_spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]
        assert stored_spec["containers"][0]["resizePolicy"] == [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]

    run(scenario)


@pytest.mark.parametrize("gate", ["InPlacePodVerticalScaling", "DynamicResourceAllocation"])
def test_the_gates_are_ga_and_locked_on_as_in_1_35(gate: str) -> None:
    """Both gates are GA and locked on in 1.35 (kube_features.go): turning one off is refused with
    component-base's message, so resize policies and claims are never dropped."""
    from kjobs.api.features import DEFAULT, FeatureGateError, FeatureGates

    assert DEFAULT.enabled(gate)
    assert FeatureGates.parse(f"{gate}=true").enabled(gate)
    with pytest.raises(FeatureGateError, match=f"cannot set feature gate {gate} to false, feature is locked to true"):
        FeatureGates.parse(f"{gate}=false")
