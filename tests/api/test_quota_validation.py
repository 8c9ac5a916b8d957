"""ResourceQuota and LimitRange validation and defaulting (`kjobs.api.validation_quota`), one case per rule of
`ValidateResourceQuota*` and `ValidateLimitRange` (pkg/apis/core/validation/validation.go) with its exact
field path and words; and the LimitRanger plugin's defaults, annotation and refusals (`kjobs.api.limitranger`,
plugin/pkg/admission/limitranger/admission.go)."""

from __future__ import annotations

import pytest

from kjobs.api import limitranger
from kjobs.api.types import Obj
from kjobs.api.validation_quota import (
    default_limit_range_in_place,
    validate_limit_range,
    validate_resource_quota,
    validate_resource_quota_status_update,
    validate_resource_quota_update,
)
from kjobs.server.tables import resource_quota_cells


def _quota(**spec: object) -> Obj:
    return {"metadata": {"name": "q", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        pytest.param(
            {"hard": {"cpu": "1", "pods": "2", "count/jobs.batch": "3", "requests.hugepages-2Mi": "1Gi"}},
            [],
            id="valid",
        ),
        pytest.param(
            {"hard": {"cpu": "-1"}},
            ["spec.hard[cpu]: Invalid value: -1: must be greater than or equal to 0"],
            id="negative",
        ),
        pytest.param(
            {"hard": {"pods": "1.5"}},
            ["spec.hard[pods]: Invalid value: 1500m: must be an integer"],
            id="fractional-pods",
        ),
        pytest.param(
            {"hard": {"storage": "1Gi"}},
            ['spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota'],
            id="not-a-quota-resource",
        ),
        pytest.param(
            {"hard": {"foo": "1"}},
            ['spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified'],
            id="unqualified",
        ),
        pytest.param(
            {"hard": {"pods": "1"}, "scopes": ["Bogus"]},
            ['spec.scopes: Invalid value: ["Bogus"]: unsupported scope'],
            id="unsupported-scope",
        ),
        pytest.param(
            {"hard": {"cpu": "1"}, "scopes": ["BestEffort"]},
            ['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource'],
            id="best-effort-cpu",
        ),
        pytest.param(
            {"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]},
            ['spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes'],
            id="conflicting",
        ),
        pytest.param(
            {
                "hard": {"pods": "1"},
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "Terminating", "operator": "In", "values": ["x"]}]
                },
            },
            [
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope "
                "is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
                "ResourceQuotaScopeCrossNamespacePodAffinity"
            ],
            id="selector-exists-only",
        ),
        pytest.param(
            {
                "hard": {"pods": "1"},
                "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In"}]},
            },
            [
                "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when "
                "`operator` is 'In' or 'NotIn' for scope selector"
            ],
            id="selector-in-without-values",
        ),
        pytest.param(
            {
                "hard": {"pods": "1"},
                "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Near"}]},
            },
            ['spec.scopeSelector.matchExpressions.operator: Invalid value: "Near": not a valid selector operator'],
            id="selector-bad-operator",
        ),
    ],
)
def test_validate_resource_quota(spec: Obj, errors: list[str]) -> None:
    assert [str(e) for e in validate_resource_quota(_quota(**spec))] == errors


def test_scopes_are_immutable_and_status_needs_a_resource_version() -> None:
    old = {
        **_quota(hard={"pods": "1"}, scopes=["Terminating"]),
        "metadata": {"name": "q", "namespace": "ns", "resourceVersion": "1"},
    }
    new = {**old, "spec": {"hard": {"pods": "1"}, "scopes": ["NotTerminating"]}}
    assert [str(e) for e in validate_resource_quota_update(new, old)] == [
        'spec.scopes: Invalid value: ["NotTerminating"]: field is immutable'
    ]
    unversioned = {**old, "metadata": {"name": "q", "namespace": "ns"}, "status": {"used": {"pods": "-1"}}}
    assert [str(e) for e in validate_resource_quota_status_update(unversioned, old)] == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "resourceVersion: Required value",
        "status.used[pods]: Invalid value: -1: must be greater than or equal to 0",
    ]


def _range(*items: Obj) -> Obj:
    return {"metadata": {"name": "lr", "namespace": "ns"}, "spec": {"limits": list(items)}}


@pytest.mark.parametrize(
    ("item", "errors"),
    [
        pytest.param(
            {
                "type": "Container",
                "min": {"cpu": "100m"},
                "max": {"cpu": "1"},
                "default": {"cpu": "500m"},
                "defaultRequest": {"cpu": "200m"},
                "maxLimitRequestRatio": {"cpu": "2"},
            },
            [],
            id="valid",
        ),
        pytest.param(
            {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
            ["spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1"],
            id="min>max",
        ),
        pytest.param(
            {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}},
            [
                "spec.limits[0].defaultRequest[cpu]: Invalid value: 2: default request value 2 is greater than "
                "default limit value 1"
            ],
            id="request>default",
        ),
        pytest.param(
            {"type": "Container", "default": {"cpu": "2"}, "max": {"cpu": "1"}},
            ["spec.limits[0].default[cpu]: Invalid value: 1: default value 2 is greater than max value 1"],
            id="default>max",
        ),
        pytest.param(
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
            ["spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: 500m: ratio 500m is less than 1"],
            id="ratio<1",
        ),
        pytest.param(
            {"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "3"}},
            ["spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: 3: ratio 3 is greater than max/min = 2.000000"],
            id="ratio>max/min",
        ),
        pytest.param(
            {"type": "Pod", "default": {"cpu": "1"}},
            ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"],
            id="pod-default",
        ),
        pytest.param(
            {"type": "Container", "max": {"pods": "1"}},
            ['spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers'],
            id="not-a-container-resource",
        ),
        pytest.param(
            {"type": "Nope"},
            ['spec.limits[0].type: Invalid value: "Nope": must be a standard limit type or fully qualified'],
            id="bad-type",
        ),
        pytest.param(
            {"type": "PersistentVolumeClaim"},
            [
                "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, "
                "but neither was provided"
            ],
            id="claim-without-storage",
        ),
        pytest.param(
            {"type": "Container", "default": {"example.com/gpu": "2"}, "defaultRequest": {"example.com/gpu": "1"}},
            [
                "spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: 1: default value 2 must equal to "
                "defaultRequest value 1 in example.com/gpu"
            ],
            id="no-overcommit",
        ),
    ],
)
def test_validate_limit_range(item: Obj, errors: list[str]) -> None:
    assert [str(e) for e in validate_limit_range(_range(item))] == errors


def test_duplicate_types() -> None:
    errs = validate_limit_range(_range({"type": "Pod"}, {"type": "Pod"}))
    assert [str(e) for e in errs] == ['spec.limits[1].type: Duplicate value: "Pod"']


def test_container_items_are_defaulted() -> None:
    """`SetDefaults_LimitRangeItem`: default from max, defaultRequest from default, then from min; Pod items not."""
    lr = _range(
        {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}, "default": {"memory": "8Mi"}},
        {"type": "Pod", "max": {"cpu": "4"}},
    )
    limits = default_limit_range_in_place(lr)["spec"]["limits"]
    assert limits[0]["default"] == {"memory": "8Mi", "cpu": "2"}
    assert limits[0]["defaultRequest"] == {"memory": "8Mi", "cpu": "2"}
    assert limits[1] == {"type": "Pod", "max": {"cpu": "4"}}


def _pod(*containers: Obj, init: tuple[Obj, ...] = ()) -> Obj:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"metadata": {"name": "p"}, "spec": spec}


def test_defaults_and_the_annotation() -> None:
    lr = _range({"type": "Container", "default": {"cpu": "1", "memory": "1Gi"}, "defaultRequest": {"cpu": "100m"}})
    pod = _pod({"name": "main", "resources": {"limits": {"memory": "2Gi"}}}, init=({"name": "setup"},))
    out = limitranger.mutate_pod(pod, [lr])
    assert out["metadata"]["annotations"] == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu request for container main; cpu limit for "
        "container main; cpu request for init container setup; cpu, memory limit for init container setup"
    }
    assert out["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "2Gi", "cpu": "1"},
        "requests": {"cpu": "100m"},
    }
    assert "annotations" not in pod["metadata"]  # the input is left as it was
    assert limitranger.mutate_pod(out, [lr]) is out  # nothing left to set


@pytest.mark.parametrize(
    ("item", "resources", "refusal"),
    [
        (
            {"type": "Container", "min": {"cpu": "100m"}},
            {},
            "minimum cpu usage per Container is 100m.  No request is specified",
        ),
        (
            {"type": "Container", "min": {"cpu": "100m"}},
            {"requests": {"cpu": "50m"}},
            "minimum cpu usage per Container is 100m, but request is 50m",
        ),
        (
            {"type": "Container", "max": {"memory": "1Gi"}},
            {"requests": {"memory": "1Mi"}},
            "maximum memory usage per Container is 1Gi.  No limit is specified",
        ),
        (
            {"type": "Container", "max": {"memory": "1Gi"}},
            {"limits": {"memory": "2Gi"}},
            "maximum memory usage per Container is 1Gi, but limit is 2Gi",
        ),
        (
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
            {"requests": {"cpu": "100m"}, "limits": {"cpu": "300m"}},
            "cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000",
        ),
        (
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
            {"limits": {"cpu": "300m"}},
            "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0",
        ),
        (
            {"type": "Pod", "max": {"cpu": "1"}},
            {"limits": {"cpu": "800m"}},
            "maximum cpu usage per Pod is 1, but limit is 1600m",
        ),
        (
            {"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"}},
            {"requests": {"cpu": "500m"}},
            "[minimum cpu usage per Container is 1, but request is 500m, "
            "maximum cpu usage per Container is 2.  No limit is specified]",
        ),
    ],
)
def test_validate_pod_against_a_limit_range(item: Obj, resources: Obj, refusal: str) -> None:
    pod = _pod({"name": "a", "resources": resources}, {"name": "b", "resources": resources})
    if item["type"] == "Container":
        pod = _pod({"name": "a", "resources": resources})
    assert limitranger.validate_pod(pod, _range(item)) == refusal


def test_quota_table_row() -> None:
    quota = {
        "metadata": {"name": "compute", "creationTimestamp": "1970-01-01T00:00:00Z"},
        "spec": {"hard": {"requests.cpu": "1", "limits.memory": "1Gi", "pods": "4"}},
        "status": {
            "hard": {"requests.cpu": "1", "limits.memory": "1Gi", "pods": "4"},
            "used": {"requests.cpu": "500m", "pods": "1"},
        },
    }
    assert resource_quota_cells(quota, 30.0) == [
        "compute",
        "30s",
        "pods: 1/4, requests.cpu: 500m/1",
        "limits.memory: 0/1Gi",
    ]


@pytest.mark.parametrize(
    ("storage", "refusal"),
    [
        ("1Gi", None),
        ("2Gi", "maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 2Gi"),
        ("1Mi", "minimum storage usage per PersistentVolumeClaim is 100Mi, but request is 1Mi"),
        (
            None,
            "[minimum storage usage per PersistentVolumeClaim is 100Mi.  No request is specified, "
            "maximum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified]",
        ),
    ],
)
def test_validate_claim_against_a_limit_range(storage: str | None, refusal: str | None) -> None:
    """`PersistentVolumeClaimValidateLimitFunc`: min and max against the claim's storage request."""
    lr = _range({"type": "PersistentVolumeClaim", "min": {"storage": "100Mi"}, "max": {"storage": "1Gi"}})
    claim: Obj = {"spec": {"resources": {"requests": {"storage": storage}} if storage else {}}}
    assert limitranger.validate_claim(claim, lr) == refusal
