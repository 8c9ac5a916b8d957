"""TestValidatePod's seccomp and AppArmor *field* rows (pkg/apis/core/validation/validation_test.go, v1.32–1.35).

The profile fields of the pod and container security contexts are validated in every pod spec (a Pod's and a
Job's template: `validateSeccompProfileField`, `ValidateAppArmorProfileField`); their agreement with the
deprecated annotations only on a Pod's create (`ValidatePodCreate`). Rows use upstream's `podtest.MakePod`
shape (one container named `ctr`) and are asserted as upstream asserts them (the aggregate contains the row's
text) and against the complete errors kube-apiserver renders (docs/upstream-pod-validation.md).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_pod, validate_pod_update
from tests.api.job_fixtures import api_job

SUPPORTED = 'supported values: "Localhost", "RuntimeDefault", "Unconfined"'
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CTR = "container.seccomp.security.alpha.kubernetes.io/ctr"
APPARMOR_CTR = "container.apparmor.security.beta.kubernetes.io/ctr"


def _make_pod(annotations: dict[str, str] | None = None, pod_sc: Obj | None = None, ctr_sc: Obj | None = None) -> Obj:
    """`podtest.MakePod("123", …)`: container `ctr`, restartPolicy Always, dnsPolicy ClusterFirst."""
    container: Obj = {"name": "ctr", "image": "image", "imagePullPolicy": "IfNotPresent"}
    container["terminationMessagePolicy"] = "File"
    if ctr_sc is not None:
        container["securityContext"] = ctr_sc
    spec: Obj = {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "containers": [container],
    }
    if pod_sc is not None:
        spec["securityContext"] = pod_sc
    meta: Obj = {"name": "123", "namespace": "ns"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pod_errors(**row: Any) -> list[str]:
    return [str(e) for e in validate_pod(_make_pod(**row))]


def _template_errors(**row: Any) -> list[str]:
    """The row's pod spec as a Job's template (annotations on the template)."""
    pod = _make_pod(**row)
    job = api_job()
    job["spec"]["template"]["spec"] = pod["spec"] | {"restartPolicy": "Never"}
    if pod["metadata"].get("annotations"):
        job["spec"]["template"]["metadata"]["annotations"] = pod["metadata"]["annotations"]
    return [str(e).removeprefix("spec.template.") for e in validate_job(job)]


def _seccomp(kind: str, local: str | None = None) -> Obj:
    return {"seccompProfile": {"type": kind} | ({"localhostProfile": local} if local is not None else {})}


def _apparmor(kind: str, local: str | None = None) -> Obj:
    return {"appArmorProfile": {"type": kind} | ({"localhostProfile": local} if local is not None else {})}


@pytest.mark.parametrize(
    "row",
    [
        pytest.param({"pod_sc": _seccomp("RuntimeDefault")}, id="runtime default seccomp profile for a pod"),
        pytest.param({"ctr_sc": _seccomp("Unconfined")}, id="runtime default seccomp profile for a container"),
        pytest.param({"pod_sc": _seccomp("RuntimeDefault")}, id="unconfined seccomp profile for a pod"),
        pytest.param({"ctr_sc": _seccomp("Unconfined")}, id="unconfined seccomp profile for a container"),
        pytest.param({"pod_sc": _seccomp("Localhost", "filename.json")}, id="localhost seccomp profile for a pod"),
        pytest.param(
            {"ctr_sc": _seccomp("Localhost", "filename.json")}, id="localhost seccomp profile for a container, II"
        ),
        pytest.param({"pod_sc": _apparmor("RuntimeDefault")}, id="runtime default AppArmor profile for a pod"),
        pytest.param({"ctr_sc": _apparmor("RuntimeDefault")}, id="runtime default AppArmor profile for a container"),
        pytest.param({"pod_sc": _apparmor("Unconfined")}, id="unconfined AppArmor profile for a pod"),
        pytest.param({"ctr_sc": _apparmor("Unconfined")}, id="unconfined AppArmor profile for a container"),
        pytest.param(
            {"pod_sc": _apparmor("Localhost", "example-org/application-foo")}, id="localhost AppArmor profile for a pod"
        ),
        pytest.param(
            {"ctr_sc": _apparmor("Localhost", "example-org/application-foo")},
            id="localhost AppArmor profile for a container field",
        ),
        pytest.param(
            {"annotations": {APPARMOR_CTR: "localhost/foo"}, "ctr_sc": _apparmor("Localhost", "foo")},
            id="matching AppArmor fields and annotations",
        ),
        pytest.param(
            {"annotations": {APPARMOR_CTR: "localhost/foo"}, "pod_sc": _apparmor("Localhost", "foo")},
            id="matching AppArmor pod field and annotations",
        ),
    ],
)
def test_validate_pod_security_profile_success(row: Obj) -> None:
    """TestValidatePod's successCases with profile fields, as a Pod and as a Job's template."""
    assert _pod_errors(**row) == []
    assert _template_errors(**row) == []


_FIELD_ERRORS = [
    pytest.param(
        {"pod_sc": _apparmor("test")},
        'Unsupported value: "test"',
        [f'spec.securityContext.appArmorProfile.type: Unsupported value: "test": {SUPPORTED}'],
        id="unsupported pod AppArmor profile type",
    ),
    pytest.param(
        {"ctr_sc": _apparmor("test")},
        'Unsupported value: "test"',
        [f'spec.containers[0].securityContext.appArmorProfile.type: Unsupported value: "test": {SUPPORTED}'],
        id="unsupported container AppArmor profile type",
    ),
    pytest.param(
        {"pod_sc": _apparmor("")},
        "Required value: type is required when appArmorProfile is set",
        ["spec.securityContext.appArmorProfile.type: Required value: type is required when appArmorProfile is set"],
        id="missing pod AppArmor profile type",
    ),
    pytest.param(
        {"pod_sc": _apparmor("Localhost")},
        "Required value: must be set when AppArmor type is Localhost",
        [
            "spec.securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type "
            "is Localhost"
        ],
        id="missing AppArmor localhost profile",
    ),
    pytest.param(
        {"pod_sc": _apparmor("Localhost", "")},
        "Required value: must be set when AppArmor type is Localhost",
        [
            "spec.securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type "
            "is Localhost"
        ],
        id="empty AppArmor localhost profile",
    ),
    pytest.param(
        {"pod_sc": _apparmor("RuntimeDefault", "foo-bar")},
        'Invalid value: "foo-bar"',
        [
            'spec.securityContext.appArmorProfile.localhostProfile: Invalid value: "foo-bar": can only be set when '
            "AppArmor type is Localhost"
        ],
        id="invalid AppArmor localhost profile type",
    ),
    pytest.param(
        {"pod_sc": _apparmor("Localhost", "foo-bar ")},
        'Invalid value: "foo-bar "',
        [
            'spec.securityContext.appArmorProfile.localhostProfile: Invalid value: "foo-bar ": must not be padded '
            "with whitespace"
        ],
        id="invalid AppArmor localhost profile",
    ),
    pytest.param(
        {"pod_sc": _apparmor("Localhost", "a" * 4096)},
        "Too long: may not be more than 4095 bytes",
        ["spec.securityContext.appArmorProfile.localhostProfile: Too long: may not be more than 4095 bytes"],
        id="too long AppArmor localhost profile",
    ),
]


@pytest.mark.parametrize(("row", "expected", "full"), _FIELD_ERRORS)
def test_validate_pod_security_profile_fields(row: Obj, expected: str, full: list[str]) -> None:
    """TestValidatePod's errorCases on the profile fields themselves: a Pod and a Job's template alike."""
    errs = _pod_errors(**row)
    assert expected in "; ".join(errs)
    assert errs == full
    assert _template_errors(**row) == full


@pytest.mark.parametrize(
    ("row", "expected", "full"),
    [
        pytest.param(
            {"annotations": {SECCOMP_POD: "unconfined"}, "pod_sc": _seccomp("RuntimeDefault")},
            "seccomp type in annotation and field must match",
            ["spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match"],
            id="must match seccomp profile type and pod annotation",
        ),
        pytest.param(
            {"annotations": {SECCOMP_CTR: "unconfined"}, "ctr_sc": _seccomp("RuntimeDefault")},
            "seccomp type in annotation and field must match",
            [
                "spec.containers[0].securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and "
                "field must match"
            ],
            id="must match seccomp profile type and container annotation",
        ),
        pytest.param(
            {"annotations": {APPARMOR_CTR: "runtime/default"}, "ctr_sc": _apparmor("Unconfined")},
            "Forbidden: apparmor type in annotation and field must match",
            [
                "spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and "
                "field must match"
            ],
            id="mismatched AppArmor field and annotation types",
        ),
        pytest.param(
            {"annotations": {APPARMOR_CTR: "runtime/default"}, "pod_sc": _apparmor("Unconfined")},
            "Forbidden: apparmor type in annotation and field must match",
            # the pod's profile is checked for each container, at the container's path
            [
                "spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and "
                "field must match"
            ],
            id="mismatched AppArmor pod field and annotation types",
        ),
        pytest.param(
            {"annotations": {APPARMOR_CTR: "localhost/foo"}, "ctr_sc": _apparmor("Localhost", "bar")},
            "Forbidden: apparmor profile in annotation and field must match",
            [
                "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Forbidden: apparmor profile in "
                "annotation and field must match"
            ],
            id="mismatched AppArmor localhost profiles",
        ),
    ],
)
def test_validate_pod_security_profile_annotations_match(row: Obj, expected: str, full: list[str]) -> None:
    """TestValidatePod's errorCases where annotation and field disagree: refused on a Pod's create only; a Job's
    template is validated by `ValidatePodTemplateSpec`, which does not compare them (nor does kube-apiserver)."""
    errs = _pod_errors(**row)
    assert expected in "; ".join(errs)
    assert errs == full
    assert _template_errors(**row) == []


# --- TestValidateWindowsSecurityContext, pod OS ----------------------------------------------------------------


def _os_template_errors(os_name: str, **spec: Any) -> list[str]:
    job = api_job()
    job["spec"]["template"]["spec"].update(spec, os={"name": os_name})
    return [str(e).removeprefix("spec.template.") for e in validate_job(job)]


def _ctr_sc(**fields: Any) -> Obj:
    container = {"name": "ctr", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}
    return {"containers": [container | {"securityContext": fields}]}


@pytest.mark.parametrize(
    ("spec", "full"),
    [
        pytest.param(
            _ctr_sc(seLinuxOptions={"role": "dummy"}),
            ["spec.containers[0].securityContext.seLinuxOptions: Forbidden: cannot be set for a windows pod"],
            id="pod with SELinux Options",
        ),
        pytest.param(
            _ctr_sc(seccompProfile={"localhostProfile": "dummy"}),
            # through ValidatePodSpec the profile's own errors come first (upstream's row calls validateWindows)
            [
                "spec.containers[0].securityContext.seccompProfile.type: Required value: type is required when "
                "seccompProfile is set",
                "spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: core.SeccompProfile"
                '{Type:"", LocalhostProfile:(*string)(0x...)}: can only be set when seccomp type is Localhost',
                "spec.containers[0].securityContext.seccompProfile: Forbidden: cannot be set for a windows pod",
            ],
            id="pod with SeccompProfile",
        ),
        pytest.param(
            _ctr_sc(appArmorProfile={"type": "RuntimeDefault"}),
            ["spec.containers[0].securityContext.appArmorProfile: Forbidden: cannot be set for a windows pod"],
            id="pod with AppArmorProfile",
        ),
        pytest.param(_ctr_sc(windowsOptions={"runAsUserName": "dummy"}), [], id="pod with WindowsOptions, no error"),
    ],
)
def test_validate_windows_security_context(spec: Obj, full: list[str]) -> None:
    """TestValidateWindowsSecurityContext (`validateWindows`), met through a Job's template with `os: windows`;
    upstream checks the first error's type and detail, kjobs the complete list."""
    assert _os_template_errors("windows", **spec) == full


def test_windows_pod_forbids_linux_only_pod_fields() -> None:
    """`validateWindows` on the pod: the fields v1 keeps on the pod spec are named there (`spec.hostPID`,
    `spec.shareProcessNamespace`), the others under `securityContext`; `hostNetwork` is allowed."""
    assert _os_template_errors(
        "windows",
        hostPID=True,
        hostNetwork=True,
        shareProcessNamespace=False,
        securityContext={"runAsUser": 1000, "sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
    ) == [
        "spec.hostPID: Forbidden: cannot be set for a windows pod",
        "spec.securityContext.sysctls: Forbidden: cannot be set for a windows pod",
        "spec.shareProcessNamespace: Forbidden: cannot be set for a windows pod",
        "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
    ]


@pytest.mark.parametrize(
    ("os_name", "spec", "full"),
    [
        pytest.param("linux", {}, [], id="linux"),
        pytest.param("windows", {}, [], id="windows"),
        pytest.param("", {}, ["spec.os.name: Required value: cannot be empty"], id="empty name"),
        pytest.param(
            "plan9", {}, ['spec.os: Unsupported value: "plan9": supported values: "linux", "windows"'], id="unknown"
        ),
        pytest.param(
            "linux",
            {"securityContext": {"windowsOptions": {"runAsUserName": "x"}}} | _ctr_sc(windowsOptions={}),
            [
                "spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
                "spec.containers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a "
                "linux pod",
            ],
            id="windows options on a linux pod",
        ),
    ],
)
def test_validate_pod_os(os_name: str, spec: Obj, full: list[str]) -> None:
    """`validateOS` then `validateLinux` (validation.go; no upstream table of its own): the NotSupported error
    names `spec.os`, not `spec.os.name`."""
    assert _os_template_errors(os_name, **spec) == full


# --- TestValidateHostUsers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "full"),
    [
        pytest.param({}, [], id="empty"),
        pytest.param({"securityContext": {}}, [], id="hostUsers unset"),
        pytest.param({"hostUsers": False}, [], id="hostUsers=false"),
        pytest.param({"hostUsers": True}, [], id="hostUsers=true"),
        pytest.param(
            {
                "hostUsers": False,
                "volumes": [
                    {"name": "configmap", "configMap": {"name": "configmap"}},
                    {"name": "secret", "secret": {"secretName": "secret"}},
                    {"name": "downward-api", "downwardAPI": {}},
                    {"name": "proj", "projected": {}},
                    {"name": "empty-dir", "emptyDir": {}},
                ],
            },
            [],
            id="hostUsers=false & volumes",
        ),
        # upstream's hostPath has no path (its row calls validateHostUsers alone); a whole spec needs one
        pytest.param(
            {"hostUsers": False, "volumes": [{"name": "host-path", "hostPath": {"path": "/data"}}]},
            [],
            id="hostUsers=false - stateful volume",
        ),
        pytest.param(
            {"hostUsers": True, "volumes": [{"name": "host-path", "hostPath": {"path": "/data"}}]},
            [],
            id="hostUsers=true - unsupported volume",
        ),
        pytest.param(
            {"hostUsers": False, "hostNetwork": True},
            ["spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false"],
            id="hostUsers=false & HostNetwork",
        ),
        pytest.param(
            {"hostUsers": False, "hostPID": True},
            ["spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false"],
            id="hostUsers=false & HostPID",
        ),
        pytest.param(
            {"hostUsers": False, "hostIPC": True},
            ["spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false"],
            id="hostUsers=false & HostIPC",
        ),
    ],
)
def test_validate_host_users(spec: Obj, full: list[str]) -> None:
    """TestValidateHostUsers through a Job's template; upstream's paths kept (`HostPID`, `HostIPC`)."""
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    assert [str(e).removeprefix("spec.template.") for e in validate_job(job)] == full


# --- sysctls ---------------------------------------------------------------------------------------------------

_SYSCTL_REGEX = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"


def test_syntactically_valid_sysctls() -> None:
    """TestValidatePod "syntactically valid sysctls"."""
    sysctls = [
        {"name": "kernel.shmmni", "value": "32768"},
        {"name": "kernel.shmmax", "value": "1000000000"},
        {"name": "knet.ipv4.route.min_pmtu", "value": "1000"},
    ]
    assert _pod_errors(pod_sc={"sysctls": sysctls}) == []
    assert _template_errors(pod_sc={"sysctls": sysctls}) == []


@pytest.mark.parametrize(
    ("spec", "full"),
    [
        pytest.param(
            {"securityContext": {"sysctls": [{"name": ""}, {"name": "Kernel.SHM"}, {"name": "a" * 254}]}},
            [
                "spec.securityContext.sysctls[0].name: Required value",
                f'spec.securityContext.sysctls[1].name: Invalid value: "Kernel.SHM": must have at most 253 '
                f"characters and match regex {_SYSCTL_REGEX}",
                f'spec.securityContext.sysctls[2].name: Invalid value: "{"a" * 254}": must have at most 253 '
                f"characters and match regex {_SYSCTL_REGEX}",
            ],
            id="names required and well formed",
        ),
        pytest.param(
            {"securityContext": {"sysctls": [{"name": "net/ipv4/ip_forward"}, {"name": "net/ipv4/ip_forward"}]}},
            ['spec.securityContext.sysctls[1].name: Duplicate value: "net/ipv4/ip_forward"'],
            id="duplicate names, slash separators allowed",
        ),
        pytest.param(
            {
                "hostNetwork": True,
                "hostIPC": True,
                "securityContext": {
                    "sysctls": [
                        {"name": "net.core.somaxconn"},
                        {"name": "kernel/msgmax"},
                        {"name": "fs.mqueue.msg_max"},
                        {"name": "kernel.domainname"},
                    ]
                },
            },
            [
                'spec.securityContext.sysctls[0].name: Invalid value: "net.core.somaxconn": may not be specified '
                "when 'hostNetwork' is true",
                'spec.securityContext.sysctls[1].name: Invalid value: "kernel/msgmax": may not be specified when '
                "'hostIPC' is true",
                'spec.securityContext.sysctls[2].name: Invalid value: "fs.mqueue.msg_max": may not be specified '
                "when 'hostIPC' is true",
            ],
            id="namespaced sysctls with the host's namespaces",
        ),
    ],
)
def test_validate_sysctls(spec: Obj, full: list[str]) -> None:
    """`validateSysctls` and `ValidateHostSysctl` (validation.go; the namespaces from
    k8s.io/component-helpers/node/util/sysctl): cases written from the source, as TestValidateSysctls is not
    in the stored test file's pages kjobs read."""
    job = api_job()
    job["spec"]["template"]["spec"].update(spec)
    assert [str(e).removeprefix("spec.template.") for e in validate_job(job)] == full


def test_profile_annotations_are_compared_on_create_only() -> None:
    """`validateAppArmorAnnotationsAndFieldsMatchOnCreate` runs in `ValidatePodCreate`, not `ValidatePodUpdate`:
    an image update of a pod whose annotation and field disagree is not refused for it."""
    old = _make_pod(annotations={APPARMOR_CTR: "runtime/default"}, ctr_sc=_apparmor("Unconfined"))
    old["metadata"] |= {"resourceVersion": "1", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"}
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "image:v2"
    assert [str(e) for e in validate_pod_update(new, old)] == []
