"""Property: malformed manifests never crash defaulting or validation; wrong types become FieldErrors.

Manifests are valid Jobs/Pods with values replaced at random places by random JSON (wrong types, nesting, null,
huge numbers), plus free-form objects built from real field names so that deep paths are reached.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.api.defaults import default_job, default_pod, prepare_job_for_create
from kjobs.api.errors import FieldError
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_job_status_update, validate_job_update, validate_pod
from tests.api.job_fixtures import api_job, stored_job

FIELD_NAMES = [
    "metadata", "name", "namespace", "labels", "annotations", "uid", "generateName", "finalizers", "ownerReferences",
    "spec", "status", "template", "selector", "matchLabels", "matchExpressions", "key", "operator", "values",
    "parallelism", "completions", "completionMode", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes",
    "podFailurePolicy", "rules", "action", "onExitCodes", "containerName", "onPodConditions", "type", "status",
    "podReplacementPolicy", "successPolicy", "succeededIndexes", "succeededCount", "managedBy", "suspend",
    "activeDeadlineSeconds", "ttlSecondsAfterFinished", "manualSelector", "containers", "initContainers", "image",
    "command", "env", "value", "valueFrom", "fieldRef", "fieldPath", "apiVersion", "resources", "limits", "requests",
    "cpu", "memory", "ports", "containerPort", "hostPort", "protocol", "volumeMounts", "mountPath", "volumes",
    "emptyDir", "configMap", "restartPolicy", "dnsPolicy", "tolerations", "effect", "nodeSelector", "livenessProbe",
    "httpGet", "port", "path", "exec", "lifecycle", "conditions", "active", "succeeded", "failed", "ready",
    "terminating", "startTime", "completionTime", "completedIndexes", "failedIndexes", "uncountedTerminatedPods",
    "terminationGracePeriodSeconds", "securityContext", "runAsUser", "envFrom", "prefix", "secretRef",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "Indexed", "NonIndexed", "Never", "In", "True", "1Gi", "100m", "0-3", "FailJob", "a/b"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=6)), children, max_size=5),
    ),
    max_leaves=25,
)


def _mutate(base: Any, steps: list[int], value: Any) -> Any:
    """Replace the node reached by following `steps` (indexes into keys / list items) with `value`."""
    root = copy.deepcopy(base)
    parent: Any = None
    key: Any = None
    node = root
    for step in steps:
        if isinstance(node, dict) and node:
            k = sorted(node, key=str)[step % len(node)]
        elif isinstance(node, list) and node:
            k = step % len(node)
        else:
            break
        parent, key, node = node, k, node[k]
    if parent is None:
        return value
    parent[key] = value
    return root


def _all_render(errors: list[FieldError]) -> None:
    assert isinstance(errors, list)
    for error in errors:
        assert isinstance(error, FieldError)
        assert str(error).startswith(error.field)


BASE_JOB = api_job(completionMode="Indexed", completions=3, backoffLimitPerIndex=1, podFailurePolicy={
    "rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1, 2]}},
              {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]})  # fmt: skip
BASE_JOB["spec"]["template"]["spec"]["containers"][0].update(
    env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    resources={"limits": {"cpu": "1", "memory": "1Gi"}},
    ports=[{"containerPort": 80}],
)
STORED = stored_job()
STORED["status"] = {
    "active": 1,
    "startTime": "2025-01-01T00:00:00Z",
    "conditions": [{"type": "FailureTarget", "status": "True"}],
    "uncountedTerminatedPods": {"failed": ["x"]},
}
BASE_POD: Obj = {
    "metadata": {"name": "p", "namespace": "d", "labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 1}]}], "volumes": [{"name": "v"}]},
}

fuzz = settings(
    max_examples=int(os.environ.get("KJOBS_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
steps = st.lists(st.integers(min_value=0, max_value=50), max_size=9)


@fuzz
@given(steps=steps, value=json_values)
def test_job_create_never_crashes(steps: list[int], value: Any) -> None:
    job = _mutate(BASE_JOB, steps, value)
    defaulted = default_job(job)
    _all_render(validate_job(defaulted))
    _all_render(validate_job(job, require_prefixed_labels=False))
    _all_render(validate_job(prepare_job_for_create(defaulted, uid="u")))


@fuzz
@given(steps=steps, value=json_values)
def test_job_updates_never_crash(steps: list[int], value: Any) -> None:
    job = _mutate(STORED, steps, value)
    _all_render(validate_job_update(job, STORED))
    _all_render(validate_job_update(STORED, job))
    _all_render(validate_job_status_update(job, STORED))
    _all_render(validate_job_status_update(STORED, job))


@fuzz
@given(steps=steps, value=json_values)
def test_pod_never_crashes(steps: list[int], value: Any) -> None:
    pod = _mutate(BASE_POD, steps, value)
    _all_render(validate_pod(default_pod(pod)))
    _all_render(validate_pod(pod))


@fuzz
@given(spec=json_values, template=json_values)
def test_free_form_specs_never_crash(spec: Any, template: Any) -> None:
    job = {"metadata": {"name": "j", "namespace": "d"}, "spec": spec}
    if isinstance(spec, dict):
        spec["template"] = template
    _all_render(validate_job(default_job(job)))
    _all_render(validate_job_status_update({"metadata": {}, "spec": spec, "status": template}, STORED))


def test_a_wrong_type_is_reported_where_it_is() -> None:
    job = _mutate(BASE_JOB, [], None)
    assert validate_job(job)[0].detail == "must be of type object"
    bad = copy.deepcopy(BASE_JOB)
    bad["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "80"
    assert [str(e) for e in validate_job(default_job(bad))] == [
        'spec.template.spec.containers[0].ports[0].containerPort: Invalid value: "80": must be of type int32',
        "spec.template.spec.containers[0].ports[0].containerPort: Required value",
    ]


def test_deeply_nested_values_do_not_exhaust_the_stack() -> None:
    deep: Any = {}
    cursor = deep
    for _ in range(5000):
        cursor["a"] = [{}]
        cursor = cursor["a"][0]
    job = copy.deepcopy(STORED)
    job["spec"]["template"]["spec"]["containers"][0]["extra"] = deep
    job["spec"]["podFailurePolicy"] = deep
    _all_render(validate_job_update(job, STORED))
    _all_render(validate_job(default_job(job)))
    _all_render(validate_job_status_update(job, STORED))
    rendered = [str(e) for e in validate_job_update(job, STORED)]
    assert any(r.startswith("spec.template: Invalid value: ") and "..." in r for r in rendered)


def test_type_errors_are_recognisable() -> None:
    from kjobs.api.validation_access import is_type_error

    job = copy.deepcopy(BASE_JOB)
    job["spec"]["parallelism"] = "3"
    job["spec"]["backoffLimit"] = -1
    errors = validate_job(default_job(job))
    assert [e.field for e in errors if is_type_error(e)] == ["spec.parallelism"]
    assert [e.field for e in errors if not is_type_error(e)] == ["spec.backoffLimit"]


def test_ports_of_the_wrong_type_is_an_error_not_a_crash() -> None:
    """Found by hypothesis: `ports: true` crashed the host-port conflict check."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x", "ports": True}]},
    }
    errors = validate_pod(default_pod(pod))
    assert [e.field for e in errors] == ["spec.containers[0].ports"]
