"""Rows of Kubernetes' pod update and pod status update tables, run through kjobs' validation and API.

Each table is named after its upstream test in pkg/apis/core/validation/validation_test.go
(`TestValidatePodUpdate`, `TestValidatePodStatusUpdate`; docs/upstream-pod-validation.md lists what is ported,
left out and why). A row's pods are written as `podtest.MakePod` builds them (pkg/api/pod/testing/make.go: one
container `ctr`, ClusterFirst, restartPolicy Always, grace 30, the default scheduler, an empty pod security
context), as JSON; `validate_pod_update` / `validate_pod_status_update` run on them as upstream runs
`ValidatePodUpdate` / `ValidatePodStatusUpdate`, and the row's expected text must be contained in the errors
rendered as Go's aggregate renders them (`[a, b]`). A sample of rows also goes through the in-process API
(PUT of a stored pod, PUT of its /status): 422 with the cause kube-apiserver gives (field, reason, message).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation_pod_status import validate_pod_status_update
from kjobs.api.validation_pod_update import validate_pod_update
from kjobs.client.resources import PODS
from tests.api.upstream_validation_support import Cause, causes, run

UPDATES_FORBIDDEN = "spec: Forbidden: pod updates may not change fields"
OTHER_THAN = "Forbidden: pod updates may not change fields other than `spec.containers[*].image"
GATE = {"name": "baz"}
TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def ctr(name: str = "ctr", **fields: Any) -> Obj:
    """`podtest.MakeContainer`: image `image`, IfNotPresent, File termination messages."""
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"} | (
        fields
    )


def make_pod(name: str = "", *, meta: Obj | None = None, status: Obj | None = None, **spec: Any) -> Obj:
    """`podtest.MakePod(name, tweaks...)`: `spec` holds the tweaked pod spec fields (None removes one)."""
    pod_spec: Obj = {
        "containers": [ctr()],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "securityContext": {},
    }
    for key, value in spec.items():
        if value is None:
            pod_spec.pop(key, None)
        else:
            pod_spec[key] = value
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", **(meta or {})},
        "spec": pod_spec,
    }
    if status is not None:
        pod["status"] = status
    return pod


def res(cpu: str = "", memory: str = "", storage: str = "") -> Obj:
    """`getResources(cpu, memory, storage, "")`."""
    names = (("cpu", cpu), ("memory", memory), ("ephemeral-storage", storage))
    return {name: value for name, value in names if value}


def resources(**lists: Obj) -> list[Obj]:
    return [ctr("container", resources=lists)]


def expr(key: str = "expr", *values: str) -> Obj:
    return {"key": key, "operator": "In", "values": list(values) or ["foo"]}


def field_req(value: str = "foo") -> Obj:
    return {"key": "metadata.name", "operator": "In", "values": [value]}


def required(*terms: Obj) -> Obj:
    """An affinity whose node affinity requires `terms`."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def preferred(*exprs: Obj) -> Obj:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": list(exprs)}}
            ]
        }
    }


def aggregate(errs: list[FieldError]) -> str:
    """`errs.ToAggregate().Error()`: one error as itself, several as `[a, b]`."""
    texts = [str(e) for e in errs]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _prepare(old: Obj, new: Obj) -> tuple[Obj, Obj]:
    """The upstream loop: resourceVersion 1 on both, a name when neither row named the pod."""
    old, new = copy.deepcopy(old), copy.deepcopy(new)
    for pod in (old, new):
        pod["metadata"]["resourceVersion"] = "1"
    if not old["metadata"]["name"] and not new["metadata"]["name"]:
        old["metadata"]["name"] = new["metadata"]["name"] = "name"
    return old, new


def _assert_row(errs: list[FieldError], err: str) -> None:
    if not err:
        assert errs == [], aggregate(errs)
    else:
        assert errs, "unexpected valid"
        assert err in aggregate(errs)


# --- TestValidatePodUpdate -------------------------------------------------------------------------------------

NOW = "2024-01-01T00:00:00Z"
TOL = {"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute"}
BIG_TERM = {"matchExpressions": [expr(), expr("expr2", "foo2")], "matchFields": [field_req()]}
BOTH = {"matchExpressions": [expr()], "matchFields": [field_req()]}

POD_UPDATE_ROWS = [
    pytest.param(make_pod(""), make_pod(""), "", id="nothing"),
    pytest.param(make_pod("bar"), make_pod("foo"), "metadata.name", id="ids"),
    pytest.param(
        make_pod("foo", meta={"labels": {"bar": "foo"}}),
        make_pod("foo", meta={"labels": {"foo": "bar"}}),
        "",
        id="labels",
    ),
    pytest.param(
        make_pod("foo", meta={"annotations": {"bar": "foo"}}),
        make_pod("foo", meta={"annotations": {"foo": "bar"}}),
        "",
        id="annotations",
    ),
    pytest.param(
        make_pod("foo", containers=[ctr("foo", image="foo:V1"), ctr("bar", image="bar:V1")]),
        make_pod("foo", containers=[ctr("foo", image="foo:V2")]),
        "may not add or remove containers",
        id="less containers",
    ),
    pytest.param(
        make_pod("foo", containers=[ctr("foo", image="foo:V1")]),
        make_pod("foo", containers=[ctr("foo", image="foo:V2"), ctr("bar", image="bar:V2")]),
        "may not add or remove containers",
        id="more containers",
    ),
    pytest.param(
        make_pod("foo", initContainers=[ctr("foo", image="foo:V1"), ctr("bar", image="bar:V1")]),
        make_pod("foo", initContainers=[ctr("foo", image="foo:V2")]),
        "may not add or remove containers",
        id="more init containers",
    ),
    pytest.param(
        make_pod("foo", meta={"deletionTimestamp": NOW}),
        make_pod("foo"),
        "metadata.deletionTimestamp",
        id="deletion timestamp removed",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", meta={"deletionTimestamp": NOW}),
        "metadata.deletionTimestamp",
        id="deletion timestamp added",
    ),
    pytest.param(
        make_pod("foo", meta={"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 31}),
        make_pod("foo", meta={"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 30}),
        "metadata.deletionGracePeriodSeconds",
        id="deletion grace period seconds changed",
    ),
    pytest.param(
        make_pod("foo", containers=[ctr("container", image="foo:V2")]),
        make_pod("foo", containers=[ctr("container", image="foo:V1")]),
        "",
        id="image change",
    ),
    pytest.param(
        make_pod("foo", initContainers=[ctr("container", image="foo:V2")]),
        make_pod("foo", initContainers=[ctr("container", image="foo:V1")]),
        "",
        id="init container image change",
    ),
    pytest.param(
        make_pod("foo", containers=[ctr("container", image="foo:V2")]),
        make_pod("foo", containers=[ctr("container", image="")]),
        "spec.containers[0].image",
        id="image change to empty",
    ),
    pytest.param(
        make_pod("foo", initContainers=[ctr("container", image="foo:V2")]),
        make_pod("foo", initContainers=[ctr("container", image="")]),
        "spec.initContainers[0].image",
        id="init container image change to empty",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", ephemeralContainers=[{"name": "ephemeral", "image": "busybox"}]),
        "Forbidden: pod updates may not change fields other than",
        id="ephemeralContainer changes are not allowed via normal pod update",
    ),
    pytest.param(make_pod(""), make_pod(""), "", id="activeDeadlineSeconds no change, nil"),
    pytest.param(
        make_pod("", activeDeadlineSeconds=30),
        make_pod("", activeDeadlineSeconds=30),
        "",
        id="activeDeadlineSeconds no change, set",
    ),
    pytest.param(
        make_pod(""), make_pod("", activeDeadlineSeconds=30), "", id="activeDeadlineSeconds change to positive from nil"
    ),
    pytest.param(
        make_pod("", activeDeadlineSeconds=31),
        make_pod("", activeDeadlineSeconds=30),
        "",
        id="activeDeadlineSeconds change to smaller positive",
    ),
    pytest.param(
        make_pod("", activeDeadlineSeconds=30),
        make_pod("", activeDeadlineSeconds=31),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to larger positive",
    ),
    pytest.param(
        make_pod(""),
        make_pod("", activeDeadlineSeconds=-30),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to negative from nil",
    ),
    pytest.param(
        make_pod("", activeDeadlineSeconds=30),
        make_pod("", activeDeadlineSeconds=-30),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to negative from positive",
    ),
    pytest.param(
        make_pod("", activeDeadlineSeconds=30),
        make_pod("", activeDeadlineSeconds=0),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to zero from positive",
    ),
    pytest.param(
        make_pod(""),
        make_pod("", activeDeadlineSeconds=0),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to zero from nil",
    ),
    pytest.param(
        make_pod("", activeDeadlineSeconds=30),
        make_pod(""),
        "spec.activeDeadlineSeconds",
        id="activeDeadlineSeconds change to nil from positive",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "0", "1Gi"))),
        make_pod("pod", containers=resources(limits=res("200m", "0", "1Gi"))),
        UPDATES_FORBIDDEN,
        id="cpu limit change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "200Mi"))),
        make_pod("pod", containers=resources(limits=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="memory limit change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "100Mi", "2Gi"))),
        make_pod("pod", containers=resources(limits=res("100m", "100Mi", "1Gi"))),
        "Forbidden: pod updates may not change fields other than",
        id="storage limit change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(requests=res("200m", "0"))),
        make_pod("pod", containers=resources(requests=res("100m", "0"))),
        UPDATES_FORBIDDEN,
        id="cpu request change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(requests=res("0", "100Mi"))),
        make_pod("pod", containers=resources(requests=res("0", "200Mi"))),
        UPDATES_FORBIDDEN,
        id="memory request change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(requests=res("100m", "0", "1Gi"))),
        make_pod("pod", containers=resources(requests=res("100m", "0", "2Gi"))),
        "Forbidden: pod updates may not change fields other than",
        id="storage request change",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "100Mi", "1Gi"), requests=res("100m", "100Mi", "1Gi"))),
        make_pod("pod", containers=resources(limits=res("200m", "400Mi", "1Gi"), requests=res("200m", "400Mi", "1Gi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, guaranteed -> guaranteed",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("400m", "400Mi", "2Gi"), requests=res("200m", "200Mi", "1Gi"))),
        make_pod("pod", containers=resources(limits=res("200m", "200Mi", "2Gi"), requests=res("100m", "100Mi", "1Gi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, burstable -> burstable",
    ),
    pytest.param(
        make_pod("pod", containers=resources(requests=res("100m", "100Mi"))),
        make_pod("pod", containers=resources(limits=res("200m", "200Mi"), requests=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, burstable -> burstable, add limits",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("200m", "200Mi"), requests=res("100m", "100Mi"))),
        make_pod("pod", containers=resources(requests=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, burstable -> burstable, remove limits",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("200m", "500Mi", "1Gi"))),
        make_pod("pod", containers=resources(limits=res("400m", "", "1Gi"), requests=res("300m", "", "1Gi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, burstable -> burstable, add requests",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("200m", "300Mi", "2Gi"), requests=res("100m", "200Mi"))),
        make_pod("pod", containers=resources(limits=res("400m", "500Mi", "2Gi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS unchanged, burstable -> burstable, remove requests",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "100Mi"), requests=res("100m", "100Mi"))),
        make_pod("pod", containers=resources(limits=res("200m", "200Mi"), requests=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS change, guaranteed -> burstable",
    ),
    pytest.param(
        make_pod("pod", containers=resources(requests=res("100m", "100Mi"))),
        make_pod("pod", containers=resources(limits=res("100m", "100Mi"), requests=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS change, burstable -> guaranteed",
    ),
    pytest.param(
        make_pod("pod"),
        make_pod("pod", containers=resources(limits=res("200m", "200Mi"), requests=res("100m", "100Mi"))),
        UPDATES_FORBIDDEN,
        id="Pod QoS change, besteffort -> burstable",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("200m", "200Mi"), requests=res("100m", "100Mi"))),
        make_pod("pod"),
        UPDATES_FORBIDDEN,
        id="Pod QoS change, burstable -> besteffort",
    ),
    pytest.param(
        make_pod("pod", securityContext={}),
        make_pod("pod", securityContext={"fsGroupChangePolicy": "OnRootMismatch"}),
        UPDATES_FORBIDDEN,
        id="fsGroupChangePolicy change",
    ),
    pytest.param(
        make_pod(
            "pod", containers=[ctr("container", ports=[{"hostPort": 8000, "containerPort": 80, "protocol": "TCP"}])]
        ),
        make_pod(
            "pod", containers=[ctr("container", ports=[{"hostPort": 8080, "containerPort": 80, "protocol": "TCP"}])]
        ),
        UPDATES_FORBIDDEN,
        id="port change",
    ),
    pytest.param(
        make_pod("foo", meta={"labels": {"bar": "foo"}}),
        make_pod("foo", meta={"labels": {"foo": "bar"}}),
        "",
        id="bad label change",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[{"key": "key1", "value": "value1"}]),
        make_pod("foo", nodeName="node1", tolerations=[{"key": "key1", "value": "value2"}]),
        "spec.tolerations: Forbidden",
        id="existing toleration value modified in pod spec updates",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"tolerationSeconds": 10}]),
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"value": "value2"}]),
        "spec.tolerations: Forbidden",
        id="existing toleration value modified in pod spec updates with modified tolerationSeconds",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"tolerationSeconds": 20}]),
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"tolerationSeconds": 10}]),
        "",
        id="modified tolerationSeconds in existing toleration value in pod spec updates",
    ),
    pytest.param(
        make_pod("foo", nodeName="", tolerations=[{"key": "key1", "value": "value1"}]),
        make_pod("foo", tolerations=[{"key": "key1", "value": "value2"}]),
        "spec.tolerations: Forbidden",
        id="toleration modified in updates to an unscheduled pod",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[{"key": "key1", "value": "value1"}]),
        make_pod("foo", nodeName="node1", tolerations=[{"key": "key1", "value": "value1"}]),
        "",
        id="tolerations unmodified in updates to a scheduled pod",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"tolerationSeconds": 10}]),
        make_pod(
            "foo",
            nodeName="node1",
            tolerations=[
                TOL | {"tolerationSeconds": 20},
                {"key": "key2", "value": "value2", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 30},
            ],
        ),
        "",
        id="added valid new toleration to existing tolerations in pod spec updates",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", tolerations=[TOL | {"tolerationSeconds": 10}]),
        make_pod(
            "foo",
            nodeName="node1",
            tolerations=[
                TOL | {"tolerationSeconds": 20},
                {
                    "key": "key2",
                    "value": "value2",
                    "operator": "Equal",
                    "effect": "NoSchedule",
                    "tolerationSeconds": 30,
                },
            ],
        ),
        "spec.tolerations[1].effect",
        id="added invalid new toleration to existing tolerations in pod spec updates",
    ),
    pytest.param(
        make_pod("foo"), make_pod("foo", nodeName="foo"), UPDATES_FORBIDDEN, id="removed nodeName from pod spec"
    ),
    pytest.param(
        make_pod("foo", nodeName="foo"),
        make_pod("foo", meta={"annotations": {"kubernetes.io/config.mirror": ""}}, nodeName="foo"),
        "metadata.annotations[kubernetes.io/config.mirror]",
        id="added mirror pod annotation",
    ),
    pytest.param(
        make_pod("foo", meta={"annotations": {"kubernetes.io/config.mirror": ""}}, nodeName="foo"),
        make_pod("foo", nodeName="foo"),
        "metadata.annotations[kubernetes.io/config.mirror]",
        id="removed mirror pod annotation",
    ),
    pytest.param(
        make_pod("foo", meta={"annotations": {"kubernetes.io/config.mirror": "bar"}}, nodeName="foo"),
        make_pod("foo", meta={"annotations": {"kubernetes.io/config.mirror": "foo"}}, nodeName="foo"),
        "metadata.annotations[kubernetes.io/config.mirror]",
        id="changed mirror pod annotation",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", priorityClassName="foo-priority"),
        make_pod("foo", nodeName="node1", priorityClassName="bar-priority"),
        "spec: Forbidden: pod updates",
        id="changed priority class name",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", priorityClassName="foo-priority"),
        make_pod("foo", nodeName="node1", priorityClassName=None),
        "spec: Forbidden: pod updates",
        id="removed priority class name",
    ),
    pytest.param(
        make_pod("foo", terminationGracePeriodSeconds=-1),
        make_pod("foo", terminationGracePeriodSeconds=1),
        "",
        id="update termination grace period seconds",
    ),
    pytest.param(
        make_pod("foo", terminationGracePeriodSeconds=-1),
        make_pod("foo", terminationGracePeriodSeconds=0),
        "spec: Forbidden: pod updates",
        id="update termination grace period seconds not 1",
    ),
    pytest.param(
        make_pod("foo", os={"name": "linux"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
        make_pod("foo", os={"name": "windows"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
        OTHER_THAN,
        id="pod OS changing from Linux to Windows, IdentifyPodOS featuregate set",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", os={"name": "dummy"}),
        OTHER_THAN,
        id="invalid PodOS update, IdentifyPodOS featuregate set",
    ),
    pytest.param(
        make_pod("foo", os={"name": "windows"}),
        make_pod("foo", os={"name": "linux"}),
        "Forbidden: pod updates may not change fields other than ",
        id="update pod spec OS to a valid value, featuregate disabled",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", schedulingGates=[{"name": "foo"}]),
        "Forbidden: only deletion is allowed, but found new scheduling gate 'foo'",
        id="update pod spec schedulingGates: add new scheduling gate",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[{"name": "foo"}]),
        make_pod("foo", schedulingGates=[{"name": "bar"}]),
        "Forbidden: only deletion is allowed, but found new scheduling gate 'bar'",
        id="update pod spec schedulingGates: mutating an existing scheduling gate",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[{"name": "foo"}, {"name": "bar"}]),
        make_pod("foo", schedulingGates=[{"name": "baz"}]),
        "Forbidden: only deletion is allowed, but found new scheduling gate 'baz'",
        id="update pod spec schedulingGates: mutating an existing scheduling gate along with deletion",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[{"name": "foo"}]),
        make_pod("foo"),
        "",
        id="update pod spec schedulingGates: legal deletion",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[GATE]),
        make_pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=[GATE]),
        "",
        id="adding node selector is allowed for gated pods",
    ),
    pytest.param(
        make_pod("foo", nodeSelector={"foo": "bar"}),
        make_pod("foo", nodeSelector={"foo": "bar", "foo2": "bar2"}),
        OTHER_THAN,
        id="adding node selector is not allowed for non-gated pods",
    ),
    pytest.param(
        make_pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=[GATE]),
        make_pod("foo", schedulingGates=[GATE]),
        "spec.nodeSelector: Invalid value:",
        id="removing node selector is not allowed for gated pods",
    ),
    pytest.param(
        make_pod("foo", nodeSelector={"foo": "bar"}),
        make_pod("foo"),
        OTHER_THAN,
        id="removing node selector is not allowed for non-gated pods",
    ),
    pytest.param(
        make_pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=[GATE]),
        make_pod("foo", nodeSelector={"foo": "bar", "foo2": "bar2"}),
        "",
        id="old pod spec has scheduling gate, new pod spec does not, and node selector is added",
    ),
    pytest.param(
        make_pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=[GATE]),
        make_pod("foo", nodeSelector={"foo": "new value"}, schedulingGates=[GATE]),
        "spec.nodeSelector: Invalid value:",
        id="modifying value of existing node selector is not allowed",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        make_pod("foo", affinity=required(BIG_TERM), schedulingGates=[GATE]),
        "",
        id="addition to nodeAffinity is allowed for gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        make_pod("foo", affinity={"nodeAffinity": {}}, schedulingGates=[GATE]),
        f"{TERMS}: Invalid value:",
        id=(
            "old RequiredDuringSchedulingIgnoredDuringExecution is non-nil, "
            "new RequiredDuringSchedulingIgnoredDuringExecution is nil, pod is gated"
        ),
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]})),
        make_pod("foo", affinity=required(BIG_TERM)),
        OTHER_THAN,
        id="addition to nodeAffinity is not allowed for non-gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        make_pod("foo", affinity=required(BIG_TERM)),
        "",
        id="old pod spec has scheduling gate, new pod spec does not, and node affinity addition occurs",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        make_pod("foo", affinity=required({"matchFields": [field_req()]}), schedulingGates=[GATE]),
        f"{TERMS}[0]: Invalid value:",
        id="nodeAffinity deletion from MatchExpressions not allowed",
    ),
    pytest.param(
        make_pod("foo", affinity=required(BOTH), schedulingGates=[GATE]),
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        f"{TERMS}[0]: Invalid value:",
        id="nodeAffinity deletion from MatchFields not allowed",
    ),
    pytest.param(
        make_pod("foo", affinity=required(BOTH), schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity=required({"matchExpressions": [expr("expr", "bar")], "matchFields": [field_req()]}),
            schedulingGates=[GATE],
        ),
        f"{TERMS}[0]: Invalid value:",
        id="nodeAffinity modification of item in MatchExpressions not allowed",
    ),
    pytest.param(
        make_pod("foo", affinity=required(BOTH), schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity=required({"matchExpressions": [expr()], "matchFields": [field_req("bar")]}),
            schedulingGates=[GATE],
        ),
        f"{TERMS}[0]: Invalid value:",
        id="nodeAffinity modification of item in MatchFields not allowed",
    ),
    pytest.param(
        make_pod("foo", affinity=required(BOTH), schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity=required(
                {"matchExpressions": [expr()], "matchFields": [field_req("bar")]},
                {"matchExpressions": [expr("expr", "foo2")], "matchFields": [field_req("bar2")]},
            ),
            schedulingGates=[GATE],
        ),
        f"{TERMS}: Invalid value:",
        id="nodeSelectorTerms addition on gated pod should fail",
    ),
    pytest.param(
        make_pod("foo", affinity=preferred(expr()), schedulingGates=[GATE]),
        make_pod("foo", affinity=preferred(expr("expr", "foo2")), schedulingGates=[GATE]),
        "",
        id="preferredDuringSchedulingIgnoredDuringExecution can modified for gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=preferred(expr()), schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchExpressions": [expr(), expr("expr2", "foo2")],
                                "matchFields": [field_req("bar")],
                            },
                        }
                    ]
                }
            },
            schedulingGates=[GATE],
        ),
        "",
        id="preferredDuringSchedulingIgnoredDuringExecution can have additions for gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=preferred(expr()), schedulingGates=[GATE]),
        make_pod("foo", schedulingGates=[GATE]),
        "",
        id="preferredDuringSchedulingIgnoredDuringExecution can have removals for gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        make_pod("foo", affinity={}, schedulingGates=[GATE]),
        f"{TERMS}: Invalid value:",
        id="new node affinity is nil",
    ),
    pytest.param(
        make_pod("foo", affinity=required({}), schedulingGates=[GATE]),
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        f"{TERMS}[0]: Invalid value:",
        id="empty NodeSelectorTerm (selects nothing) cannot become populated (selects something)",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[GATE]),
        make_pod("foo", affinity=required({"matchExpressions": [expr()]}), schedulingGates=[GATE]),
        "",
        id="nil affinity can be mutated for gated pods",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity=required({"matchExpressions": [expr()]})
            | {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "foo", "labelSelector": {"matchLabels": {"foo": "bar"}}}
                    ]
                }
            },
            schedulingGates=[GATE],
        ),
        "pod updates may not change fields other than",
        id="the podAffinity cannot be updated on gated pods",
    ),
    pytest.param(
        make_pod("foo", schedulingGates=[GATE]),
        make_pod(
            "foo",
            affinity=required({"matchExpressions": [expr()]})
            | {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "foo", "labelSelector": {"matchLabels": {"foo": "bar"}}}
                    ]
                }
            },
            schedulingGates=[GATE],
        ),
        "pod updates may not change fields other than",
        id="the podAntiAffinity cannot be updated on gated pods",
    ),
    pytest.param(
        make_pod("foo", affinity=required({"matchExpressions": [expr("expr", "-1")]}), schedulingGates=[GATE]),
        make_pod("foo", affinity=required({"matchExpressions": [expr("expr", "-1")]})),
        "",
        id="allow update pod if old pod already has invalid label-value in node affinity",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "0", "1Gi"))),
        make_pod(
            "pod", containers=resources(limits=res("200m", "0", "1Gi")), resources={"limits": res("100m", "200Mi")}
        ),
        "pod updates may not change fields other than",
        id="cpu limit change with pod-level resources",
    ),
    pytest.param(
        make_pod("pod", containers=resources(limits=res("100m", "200Mi")), resources={"limits": res("100m", "200Mi")}),
        make_pod("pod", containers=resources(limits=res("100m", "100Mi"))),
        "pod updates may not change fields other than",
        id="memory limit change with pod-level resources",
    ),
]


@pytest.mark.parametrize(("old", "new", "err"), POD_UPDATE_ROWS)
def test_validate_pod_update(old: Obj, new: Obj, err: str) -> None:
    old, new = _prepare(old, new)
    _assert_row(validate_pod_update(new, old), err)


def test_an_update_adding_ephemeral_containers_is_a_spec_change_not_a_create() -> None:
    """ "ephemeralContainer changes are not allowed via normal pod update": `validatePodMetadataAndSpec` has no
    create-only rule (no `spec.ephemeralContainers: cannot be set on create`); the spec's error comes with those of
    the ephemeral container itself (`validateEphemeralContainers`: the row's container has neither policy)."""
    old, new = _prepare(make_pod("foo"), make_pod("foo", ephemeralContainers=[{"name": "ephemeral", "image": "b"}]))
    assert [(e.field, e.type.value) for e in validate_pod_update(new, old)] == [
        ("spec.ephemeralContainers[0].terminationMessagePolicy", "FieldValueRequired"),
        ("spec.ephemeralContainers[0].imagePullPolicy", "FieldValueRequired"),
        ("spec", "FieldValueForbidden"),
    ]


def test_the_apparmor_annotations_of_a_pod_are_fixed() -> None:
    """`ValidatePodSpecificAnnotationUpdates`: a container's AppArmor annotation may be neither added nor changed
    nor removed once the pod exists."""
    key = "container.apparmor.security.beta.kubernetes.io/ctr"
    bare, annotated = make_pod("foo"), make_pod("foo", meta={"annotations": {key: "runtime/default"}})
    changed = make_pod("foo", meta={"annotations": {key: "unconfined"}})
    for old, new, detail in (
        (bare, annotated, "may not add AppArmor annotations"),
        (annotated, changed, "may not remove or update AppArmor annotations"),
        (annotated, bare, "may not remove or update AppArmor annotations"),
    ):
        errs = validate_pod_update(*reversed(_prepare(old, new)))
        assert [str(e) for e in errs] == [f"metadata.annotations[{key}]: Forbidden: {detail}"]


# --- TestValidatePodStatusUpdate -------------------------------------------------------------------------------

STARTED = "2024-01-01T00:00:00Z"
PULLABLE = "docker-pullable://nginx@sha256:d0gf00d"
WAITING = {"waiting": {"reason": "PodInitializing"}}
RUNNING = {"running": {"startedAt": STARTED}}
COMPLETED = {"terminated": {"exitCode": 0, "containerID": "docker://numbers", "reason": "Completed"}}
COMPLETED_AT = {"terminated": COMPLETED["terminated"] | {"startedAt": STARTED, "finishedAt": STARTED}}


def cstatus(name: str, image: str, state: Obj, *, ready: bool, started: bool | None = None, pulled: str = "") -> Obj:
    """A `ContainerStatus` as the rows write it: container id `docker://numbers`."""
    status: Obj = {"containerID": "docker://numbers", "image": image, "name": name, "ready": ready, "state": state}
    status |= {"restartCount": 0, "imageID": pulled or ""}
    if started is not None:
        status["started"] = started
    return status


NGINX_RUNNING = cstatus("nginx", "nginx:alpine", RUNNING, ready=True, started=True, pulled=PULLABLE)
MAIN_WAITING = cstatus("main", "nginx:alpine", WAITING, ready=False, started=False)
INIT_WAITING = cstatus("init", "alpine", WAITING, ready=False)
INIT_DONE = cstatus("init", "alpine", COMPLETED, ready=True, pulled=PULLABLE)
DEBUG_WAITING = cstatus("debug", "busybox", WAITING, ready=False)
DEBUG_RUNNING = cstatus("debug", "busybox", RUNNING, ready=False, pulled="docker-pullable://busybox@sha256:d0gf00d")
DEBUG_DONE = cstatus("debug", "busybox", COMPLETED_AT, ready=False, pulled="docker-pullable://busybox@sha256:d0gf00d")
SIDECAR = ctr("restartable-init", restartPolicy="Always")


def _init_restart(policy: str, init: Obj, name: str) -> tuple[Obj, Obj]:
    """The restart rows: `init` is the init container, its status terminated before and running after."""
    done = cstatus(name, "alpine", COMPLETED, ready=False, pulled=PULLABLE)
    again = cstatus(name, "alpine", RUNNING, ready=True, pulled=PULLABLE)
    old = make_pod("foo", initContainers=[init], restartPolicy=policy, status={"initContainerStatuses": [done]})
    new = make_pod("foo", initContainers=[init], restartPolicy=policy, status={"initContainerStatuses": [again]})
    for pod in (old, new):
        pod["status"]["containerStatuses"] = [NGINX_RUNNING]
    return old, new


CLAIMS = [{"name": "my-claim"}, {"name": "my-other-claim"}]

POD_STATUS_UPDATE_ROWS = [
    pytest.param(
        make_pod("foo", nodeName="node1", status={}),
        make_pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}),
        "",
        id="removed nominatedNodeName",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}),
        make_pod("foo", nodeName="node1"),
        "",
        id="add valid nominatedNodeName",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1"),
        make_pod("foo", nodeName="node1", status={"nominatedNodeName": "Node1"}),
        "nominatedNodeName",
        id="Add invalid nominatedNodeName",
    ),
    pytest.param(
        make_pod("foo", nodeName="node1", status={"nominatedNodeName": "node2"}),
        make_pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}),
        "",
        id="Update nominatedNodeName",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", status={"initContainerStatuses": [INIT_WAITING], "containerStatuses": [MAIN_WAITING]}),
        "",
        id="Container statuses pending",
    ),
    pytest.param(
        make_pod("foo", status={"initContainerStatuses": [INIT_WAITING], "containerStatuses": [MAIN_WAITING]}),
        make_pod("foo", status={"initContainerStatuses": [INIT_DONE], "containerStatuses": [NGINX_RUNNING]}),
        "",
        id="Container statuses running",
    ),
    pytest.param(
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING]}),
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_WAITING]}),
        "",
        id="Container statuses add ephemeral container",
    ),
    pytest.param(
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_WAITING]}),
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_RUNNING]}),
        "",
        id="Container statuses ephemeral container running",
    ),
    pytest.param(
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_RUNNING]}),
        make_pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_DONE]}),
        "",
        id="Container statuses ephemeral container exited",
    ),
    pytest.param(
        make_pod(
            "foo",
            status={
                "initContainerStatuses": [INIT_DONE],
                "containerStatuses": [NGINX_RUNNING],
                "ephemeralContainerStatuses": [DEBUG_RUNNING],
            },
        ),
        make_pod(
            "foo",
            status={
                "initContainerStatuses": [INIT_DONE],
                "containerStatuses": [
                    cstatus("nginx", "nginx:alpine", COMPLETED_AT, ready=True, started=True, pulled=PULLABLE)
                ],
                "ephemeralContainerStatuses": [DEBUG_DONE],
            },
        ),
        "",
        id="Container statuses all containers terminated",
    ),
    pytest.param(
        make_pod("foo"),
        make_pod("foo", status={"resourceClaimStatuses": [{"name": "no-such-claim", "resourceClaimName": "my-claim"}]}),
        'status.resourceClaimStatuses[0].name: Invalid value: "no-such-claim": must match the name of an entry in '
        "`spec.resourceClaims`",
        id="Non-existent PodResourceClaim",
    ),
    pytest.param(
        make_pod("foo", resourceClaims=CLAIMS[:1]),
        make_pod(
            "foo",
            resourceClaims=CLAIMS[:1],
            status={"resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "%$!#"}]},
        ),
        'status.resourceClaimStatuses[0].name: Invalid value: "%$!#": a lowercase RFC 1123 subdomain must consist of',
        id="Invalid ResourceClaim name",
    ),
    pytest.param(
        make_pod("foo", resourceClaims=CLAIMS[:1]),
        make_pod(
            "foo",
            resourceClaims=CLAIMS,
            status={
                "resourceClaimStatuses": [
                    {"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                    {"name": "my-other-claim"},
                    {"name": "my-other-claim"},
                ]
            },
        ),
        'status.resourceClaimStatuses[2].name: Duplicate value: "my-other-claim"',
        id="Duplicate ResourceClaimStatuses.Name",
    ),
    pytest.param(
        make_pod("foo", resourceClaims=CLAIMS[:1]),
        make_pod(
            "foo",
            resourceClaims=CLAIMS,
            status={
                "resourceClaimStatuses": [
                    {"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                    {"name": "my-other-claim"},
                ]
            },
        ),
        "",
        id="ResourceClaimStatuses okay",
    ),
    pytest.param(
        *_init_restart("Never", ctr("init"), "init"),
        "status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
        id="init container cannot restart if RestartPolicyNever",
    ),
    pytest.param(
        *_init_restart("Never", SIDECAR, "restartable-init"),
        "",
        id="restartable init container can restart if RestartPolicyNever",
    ),
    pytest.param(
        *_init_restart("OnFailure", SIDECAR, "restartable-init"),
        "",
        id="restartable init container can restart if RestartPolicyOnFailure",
    ),
    pytest.param(
        *_init_restart("Always", SIDECAR, "restartable-init"),
        "",
        id="restartable init container can restart if RestartPolicyAlways",
    ),
    pytest.param(
        make_pod("foo", status={"qosClass": "Guaranteed"}),
        make_pod("foo", status={"qosClass": "Burstable"}),
        'tatus.qosClass: Invalid value: "Burstable": field is immutable',
        id="qosClass can not be changed",
    ),
    pytest.param(
        make_pod("foo", status={"qosClass": "Burstable"}),
        make_pod("foo", status={"qosClass": "Burstable"}),
        "",
        id="qosClass no change",
    ),
]


@pytest.mark.parametrize(("old", "new", "err"), POD_STATUS_UPDATE_ROWS)
def test_validate_pod_status_update(old: Obj, new: Obj, err: str) -> None:
    old, new = _prepare(old, new)
    _assert_row(validate_pod_status_update(new, old), err)


# --- TestValidatePodStatusUpdateWithSupplementalGroupsPolicy --------------------------------------------------

RANGE = "must be between 0 and 2147483647, inclusive"
USER_ROWS = [
    pytest.param([None, "linux"], [], [], id="nil container user is valid"),
    pytest.param([None, "linux"], [{"user": {}}], [], id="empty container user is valid"),
    pytest.param([None, "linux"], [{"user": {"linux": {}}}], [], id="container user with valid ids"),
    pytest.param(
        [None, "linux"],
        [{"user": {"linux": {"uid": -1, "gid": -1, "supplementalGroups": [-1]}}}],
        [
            ("[0].linux.uid", "FieldValueInvalid", f"Invalid value: -1: {RANGE}"),
            ("[0].linux.gid", "FieldValueInvalid", f"Invalid value: -1: {RANGE}"),
            ("[0].linux.supplementalGroups[0]", "FieldValueInvalid", f"Invalid value: -1: {RANGE}"),
        ],
        id="container user with invalid ids",
    ),
    pytest.param(
        ["windows"],
        [{"user": {"linux": {}}}],
        [("[0].linux", "FieldValueForbidden", "Forbidden: cannot be set for a windows pod")],
        id="user.linux must not be set in windows",
    ),
]


@pytest.mark.parametrize(("oses", "statuses", "expected"), USER_ROWS)
@pytest.mark.parametrize("kind", ["container", "initContainer", "ephemeralContainer"])
def test_validate_pod_status_update_with_supplemental_groups_policy(
    kind: str, oses: list[str | None], statuses: list[Obj], expected: list[Cause]
) -> None:
    """Every pod OS of the row and every kind of container status: exactly the row's errors, under
    `status.<kind>Statuses` (the path has no `user`, as upstream builds it)."""
    for os_name in oses:
        spec: Obj = {} if os_name is None else {"os": {"name": os_name}}
        old = {"metadata": {"name": "foo", "resourceVersion": "1"}, "spec": spec, "status": {}}
        new = {**old, "status": {f"{kind}Statuses": copy.deepcopy(statuses)}}
        errs = validate_pod_status_update(new, old)
        want = [(f"status.{kind}Statuses{at}", reason, message) for at, reason, message in expected]
        assert [(e.field, e.type.value, e.body()) for e in errs] == want


# --- kjobs' rows for ValidatePodStatusUpdate's other rules -----------------------------------------------------
# (TestValidatePodConditions, TestPodIPsValidation and TestHostIPsValidation are not ported: these rows assert
# the same rules, as pkg/apis/core/validation/validation.go states them.)

IP_FAMILY = "may specify no more than one IP for each IP family"
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
STATUS_RULE_ROWS = [
    pytest.param({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}, [], id="dual-stack pod IPs"),
    pytest.param({"podIPs": [{"ip": "010.000.000.001"}]}, [], id="leading zeros parse sloppily"),
    pytest.param(
        {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]},
        [("status.podIPs", f'Invalid value: [{{"ip":"10.0.0.1"}},{{"ip":"10.0.0.2"}}]: {IP_FAMILY}')],
        id="two IPv4 pod IPs",
    ),
    pytest.param(
        {"podIPs": [{"ip": "fd00::1"}, {"ip": "fd00::1"}]},
        [
            ("status.podIPs", f'Invalid value: [{{"ip":"fd00::1"}},{{"ip":"fd00::1"}}]: {IP_FAMILY}'),
            ("status.podIPs[1]", 'Duplicate value: {"ip":"fd00::1"}'),
        ],
        id="duplicate pod IPs",
    ),
    pytest.param(
        {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}, {"ip": "10.0.0.2"}]},
        [
            (
                "status.podIPs",
                f'Invalid value: [{{"ip":"10.0.0.1"}},{{"ip":"fd00::1"}},{{"ip":"10.0.0.2"}}]: {IP_FAMILY}',
            )
        ],
        id="three pod IPs",
    ),
    pytest.param(
        {"podIPs": [{"ip": "1.2.3"}]}, [("status.podIPs[0]", f'Invalid value: "1.2.3": {IP_MSG}')], id="invalid pod IP"
    ),
    pytest.param({"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}]}, [], id="host IPs agreeing with hostIP"),
    pytest.param(
        {"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.2"}]},
        [("status.hostIPs[0].ip", 'Invalid value: "10.0.0.2": must be equal to `hostIP`')],
        id="hostIPs[0] other than hostIP",
    ),
    pytest.param(
        {"hostIP": "::ffff:10.0.0.1", "hostIPs": [{"ip": "::ffff:10.0.0.1"}, {"ip": "10.0.0.2"}]},
        [
            (
                "status.hostIPs",
                f'Invalid value: [{{"ip":"::ffff:10.0.0.1"}},{{"ip":"10.0.0.2"}}]: {IP_FAMILY}',
            )
        ],
        id="an IPv4-mapped IPv6 address is of the IPv4 family",
    ),
    pytest.param(
        {"conditions": [{"type": "Ready", "status": "True"}, {"type": "example.com/Custom", "status": "True"}]},
        [],
        id="kubelet and qualified condition types",
    ),
    pytest.param(
        {"conditions": [{"type": "not a type", "status": "True"}]},
        [
            (
                "metadata.conditions[0].Type",
                "Invalid value: \"not a type\": name part must consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )
        ],
        id="a condition type that is no qualified name (at metadata.conditions, as upstream reports it)",
    ),
]


@pytest.mark.parametrize(("status", "expected"), STATUS_RULE_ROWS)
def test_validate_pod_status_rules(status: Obj, expected: list[tuple[str, str]]) -> None:
    old, new = _prepare(make_pod("foo"), make_pod("foo", status=status))
    assert [(e.field, e.body()) for e in validate_pod_status_update(new, old)] == expected


# --- through the API -------------------------------------------------------------------------------------------


def _row(rows: list[Any], name: str) -> tuple[Obj, Obj]:
    """A row's (old, new) pods by its name."""
    for param in rows:
        if param.id == name:
            old, new, _ = param.values
            return _prepare(old, new)
    raise KeyError(name)


def _body(pod: Obj) -> Obj:
    """A row's pod as a client sends it: no resourceVersion, no status, the name the rows leave empty set."""
    body = copy.deepcopy(pod)
    body["metadata"].pop("resourceVersion", None)
    body.pop("status", None)
    return body


def _changed(stored: Obj, old: Obj, new: Obj) -> Obj:
    """The stored pod with the row's change made (as a client edits what it read): each spec field and
    annotation the row's new pod has otherwise than its old one."""
    body = copy.deepcopy(stored)
    for key in old["spec"].keys() | new["spec"].keys():
        if old["spec"].get(key) != new["spec"].get(key):
            if key in new["spec"]:
                body["spec"][key] = copy.deepcopy(new["spec"][key])
            else:
                body["spec"].pop(key, None)
    annotations = new["metadata"].get("annotations")
    if annotations != old["metadata"].get("annotations"):
        body["metadata"]["annotations"] = annotations
    return body


async def _put_errors(client: Any, body: Obj, subresource: str | None = None) -> list[Cause]:
    try:
        await client.update(PODS, "default", body, subresource=subresource)
    except ApiError as exc:
        return causes(exc)
    return []


LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NODE_SELECTOR_CHANGE = "only additions to spec.nodeSelector are allowed (no mutations or deletions)"

API_UPDATE_ROWS = [
    pytest.param(
        "less containers",
        [("spec.containers", "FieldValueForbidden", "Forbidden: pod updates may not add or remove containers")],
        id="less containers",
    ),
    pytest.param(
        "update pod spec schedulingGates: add new scheduling gate",
        [
            (
                "spec.schedulingGates[0].name",
                "FieldValueForbidden",
                "Forbidden: only deletion is allowed, but found new scheduling gate 'foo'",
            )
        ],
        id="update pod spec schedulingGates: add new scheduling gate",
    ),
    pytest.param(
        "modifying value of existing node selector is not allowed",
        [
            ("spec.nodeSelector", "FieldValueInvalid", f'Invalid value: "new value": {LABEL_VALUE}'),
            ("spec.nodeSelector", "FieldValueInvalid", f'Invalid value: {{"foo":"new value"}}: {NODE_SELECTOR_CHANGE}'),
        ],
        id="modifying value of existing node selector is not allowed",
    ),
    pytest.param(
        "nodeAffinity deletion from MatchExpressions not allowed",
        [
            (
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]",
                "FieldValueInvalid",
                'Invalid value: {"MatchExpressions":null,"MatchFields":[{"Key":"metadata.name","Operator":"In",'
                '"Values":["foo"]}]}: only additions are allowed (no mutations or deletions)',
            )
        ],
        id="nodeAffinity deletion from MatchExpressions not allowed",
    ),
    pytest.param(
        "changed mirror pod annotation",
        [
            (
                "metadata.annotations[kubernetes.io/config.mirror]",
                "FieldValueForbidden",
                "Forbidden: may not remove or update mirror pod annotation",
            )
        ],
        id="changed mirror pod annotation",
    ),
    pytest.param(
        "adding node selector is allowed for gated pods", [], id="adding node selector is allowed for gated pods"
    ),
    pytest.param(
        "addition to nodeAffinity is allowed for gated pods",
        [],
        id="addition to nodeAffinity is allowed for gated pods",
    ),
]


@pytest.mark.parametrize(("name", "expected"), API_UPDATE_ROWS)
def test_validate_pod_update_through_the_api(name: str, expected: list[Cause]) -> None:
    """PUT of the row's new pod over its stored old pod: the causes kube-apiserver gives, or the update stored."""
    old, new = _row(POD_UPDATE_ROWS, name)

    async def scenario(client: Any) -> None:
        stored = await client.create(PODS, "default", _body(old))
        assert await _put_errors(client, _changed(stored, old, new)) == expected
        if not expected:
            fresh = await client.get(PODS, "default", new["metadata"]["name"])
            assert fresh["spec"].get("nodeSelector") == new["spec"].get("nodeSelector")
            assert fresh["spec"].get("affinity") == new["spec"].get("affinity")

    run(scenario)


API_STATUS_ROWS = [
    pytest.param(
        "Add invalid nominatedNodeName",
        [
            (
                "status.nominatedNodeName",
                "FieldValueInvalid",
                'Invalid value: "Node1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
                "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ],
        id="Add invalid nominatedNodeName",
    ),
    pytest.param(
        "qosClass can not be changed",
        [("status.qosClass", "FieldValueInvalid", 'Invalid value: "Burstable": field is immutable')],
        id="qosClass can not be changed",
    ),
    pytest.param(
        "init container cannot restart if RestartPolicyNever",
        [
            (
                "status.initContainerStatuses[0].state",
                "FieldValueForbidden",
                "Forbidden: may not be transitioned to non-terminated state",
            )
        ],
        id="init container cannot restart if RestartPolicyNever",
    ),
    pytest.param(
        "restartable init container can restart if RestartPolicyNever",
        [],
        id="restartable init container can restart if RestartPolicyNever",
    ),
]


@pytest.mark.parametrize(("name", "expected"), API_STATUS_ROWS)
def test_validate_pod_status_update_through_the_api(name: str, expected: list[Cause]) -> None:
    """The row's old status written through /status, then its new one: the causes, or the status stored."""
    old, new = _row(POD_STATUS_UPDATE_ROWS, name)

    async def scenario(client: Any) -> None:
        stored = await client.create(PODS, "default", _body(old))
        seeded = copy.deepcopy(stored)
        seeded["status"] = {**stored["status"], **{k: v for k, v in old.get("status", {}).items() if k != "qosClass"}}
        stored = await client.update(PODS, "default", seeded, subresource="status")
        body = copy.deepcopy(stored)
        body["status"] = {**stored["status"], **new.get("status", {})}
        assert await _put_errors(client, body, "status") == expected
        if not expected:
            fresh = await client.get(PODS, "default", new["metadata"]["name"])
            assert fresh["status"]["initContainerStatuses"] == new["status"]["initContainerStatuses"]

    run(scenario)


def test_an_empty_node_affinity_may_be_added_to_a_gated_pod() -> None:
    """Go compares node affinities as pointers: `nodeAffinity: {}` differs from none, and, with nothing stored,
    is munged away with the affinity around it (`ValidatePodUpdate`'s third case)."""
    old, new = _prepare(make_pod("foo", schedulingGates=[GATE]), make_pod("foo", schedulingGates=[GATE]))
    new["spec"]["affinity"] = {"nodeAffinity": {}}
    assert validate_pod_update(new, old) == []
    new["spec"]["affinity"] = {}  # no node affinity on either side: an affinity of its own is a spec change
    assert [e.field for e in validate_pod_update(new, old)] == ["spec"]
