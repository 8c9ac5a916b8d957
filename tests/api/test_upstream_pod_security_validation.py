"""TestValidatePod's seccomp and AppArmor *field* rows (pkg/apis/core/validation/validation_test.go, v1.32–1.35).

The profile fields of the pod and container security contexts are validated in every pod spec (a Pod's and a
Job's template: `validateSeccompProfileField`, `ValidateAppArmorProfileField`); their agreement with the
deprecated annotations only on a Pod's create (`ValidatePodCreate`). Rows use upstream's `podtest.MakePod`
shape (one container named `ctr`) and are asserted as upstream asserts them (the aggregate contains the row's
text) and against the complete errors kube-apiserver renders (docs/upstream-pod-validation.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_pod
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
