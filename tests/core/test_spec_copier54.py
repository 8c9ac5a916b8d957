"""Stop 54: an Indexed Job's pods get `JOB_COMPLETION_INDEX` from the template copy that `_spec_copier` encodes once
a sync, not from `_add_index_env` on each pod (the variable names no index: docs/jobctl54.md). Stop 53's
`_pod_from_template` and `_spec_copier` are kept here; on hypothesis Jobs (Indexed or not, with per-index limits or
not, init and regular containers whose `env` is missing, null, empty or holds the variable, a spec that is not JSON)
the planned pods are stop 53's, to the order of their keys, and share nothing with the Job or with each other."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
    JOB_TRACKING_FINALIZER,
)
from kjobs.api.types import Obj
from kjobs.job.context import has_backoff_limit_per_index
from kjobs.job.sync import (
    SyncContext,
    _add_index_env,
    _pod_from_template,
    _spec_copier,
    generate_name_with_index,
    new_context,
    new_index_failure_counts,
    plan_sync,
)
from tests.core.test_add_index_env53 import _containers
from tests.hypothesis_budget import examples

NOW = 1_767_225_600.0


def old_pod_from_template(ctx: SyncContext, index: int | None, template_spec: Callable[[], Obj]) -> Obj:
    """Stop 53's `_pod_from_template`: the template copy, its index env added per pod.

    The pod shares nothing with the Job (its spec is a fresh copy from `template_spec`), so whoever creates it
    may hand it over to the API as it is."""
    job = ctx.job
    meta = job.get("metadata") or {}
    name = str(meta.get("name") or "")
    template = ctx.spec.get("template") or {}
    tmeta = template.get("metadata") or {}
    pod_spec = template_spec()
    labels = dict(tmeta.get("labels") or {})
    annotations = dict(tmeta.get("annotations") or {})
    finalizers = list(tmeta.get("finalizers") or ())
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    generate_name = f"{name}-"
    if index is not None:
        _add_index_env(pod_spec)
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        labels[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        pod_spec["hostname"] = f"{name}-{index}"
        generate_name = generate_name_with_index(name, index)
        if has_backoff_limit_per_index(job):
            failures, ignored = new_index_failure_counts(job, ctx.pods_with_delayed_deletion.get(index))
            annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = str(failures)
            if ignored > 0:
                annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
    pod_meta: Obj = {
        "generateName": generate_name,
        "namespace": meta.get("namespace") or "default",
        "labels": labels,
        "annotations": annotations,
        "finalizers": finalizers,
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": name,
                "uid": meta.get("uid") or "",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if not annotations:
        del pod_meta["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def old_spec_copier(spec: Obj) -> Callable[[], Obj]:
    """Fresh deep copies of a pod template's spec: decoded from its JSON, encoded once for all the pods of a sync."""
    try:
        raw = orjson.dumps(spec)
    except TypeError:  # not JSON (a Job built in process): copied the slow way
        return lambda: copy.deepcopy(spec)

    def decode() -> Obj:
        fresh: Obj = orjson.loads(raw)
        return fresh

    return decode


def _job(containers: list[Obj], init: list[Obj] | None, indexed: bool, per_index: bool, json: bool) -> Obj:
    spec: Obj = {"restartPolicy": "Never", "containers": containers}
    if init is not None:
        spec["initContainers"] = init
    if not json:
        spec["nodeSelector"] = {"zone": ("a",)}  # a tuple: not JSON, so copied the slow way
    job_spec: Obj = {"completions": 4, "parallelism": 3, "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}
    if indexed:
        job_spec["completionMode"] = "Indexed"
        if per_index:
            job_spec["backoffLimitPerIndex"] = 1
    return {"metadata": {"name": "j", "namespace": "default", "uid": "u"}, "spec": job_spec}


def _old_pods(job: Obj, pods: list[Obj]) -> list[Obj]:
    ctx: SyncContext = new_context(job, [], now=NOW, expected_rm_finalizers=frozenset())
    copier = old_spec_copier((ctx.spec.get("template") or {}).get("spec") or {})
    indexes: list[int | None] = [
        int(p["metadata"]["annotations"][JOB_COMPLETION_INDEX_ANNOTATION])
        if JOB_COMPLETION_INDEX_ANNOTATION in (p["metadata"].get("annotations") or {})
        else None
        for p in pods
    ]
    return [old_pod_from_template(ctx, index, copier) for index in indexes]


def _ids(value: Any) -> set[int]:
    found = {id(value)} if isinstance(value, dict | list) else set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids(item)
    return found


@settings(max_examples=examples(150), deadline=None)
@given(_containers, st.one_of(st.none(), _containers), st.booleans(), st.booleans(), st.booleans())
def test_planned_pods_are_stop_53s(
    containers: list[Obj], init: list[Obj] | None, indexed: bool, per_index: bool, json: bool
) -> None:
    job = _job(containers, init, indexed, per_index, json)
    before = copy.deepcopy(job)
    pods = plan_sync(job, [], now=NOW).creations
    assert len(pods) == 3
    old = _old_pods(job, pods)
    assert pods == old
    if json:
        assert [orjson.dumps(p) for p in pods] == [orjson.dumps(p) for p in old]  # the same key order
    else:
        assert [repr(p) for p in pods] == [repr(p) for p in old]
    assert job == before
    shared = [_ids(p) for p in pods] + [_ids(job)]
    for n, ids in enumerate(shared):
        for other in shared[n + 1 :]:
            assert not ids & other


@settings(max_examples=examples(100), deadline=None)
@given(
    held=st.dictionaries(
        st.integers(0, 3),
        st.tuples(st.sampled_from([None, "0", "2", "x"]), st.sampled_from([None, "0", "1"])),
        max_size=4,
    ),
    policy=st.booleans(),
)
def test_a_replacement_carries_stop_53s_failure_counts(
    held: dict[int, tuple[str | None, str | None]], policy: bool
) -> None:
    job = _job([{"name": "c"}], None, True, True, True)
    if policy:
        job["spec"]["podFailurePolicy"] = {
            "rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]
        }
    ctx: SyncContext = new_context(job, [], now=NOW, expected_rm_finalizers=frozenset())
    for index, (failures, ignored) in held.items():
        annotations = {JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
        if failures is not None:
            annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = failures
        if ignored is not None:
            annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = ignored
        ctx.pods_with_delayed_deletion[index] = {
            "metadata": {"name": f"p{index}", "uid": f"u{index}", "annotations": annotations},
            "status": {
                "phase": "Failed",
                "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 1}}}],
            },
        }
    spec = job["spec"]["template"]["spec"]
    for index in range(4):
        pod = _pod_from_template(ctx, index, _spec_copier(spec, index_env=True))
        old = old_pod_from_template(ctx, index, old_spec_copier(spec))
        assert orjson.dumps(pod) == orjson.dumps(old)
