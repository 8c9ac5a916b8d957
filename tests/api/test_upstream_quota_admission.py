"""ResourceQuota admission (`kjobs.api.quota.check_request`): the pod cases of
plugin/pkg/admission/resourcequota/admission_test.go, each id its upstream test, with the refusals' words of
staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go; then the object counts, the
scopes and the usage a pod has at each point of its life (pkg/quota/v1/evaluator/core/pods.go)."""

from __future__ import annotations

import pytest

from kjobs.api import quota as q
from kjobs.api.types import Obj


def _quota(name: str, hard: dict[str, str], used: dict[str, str], scopes: list[str] | None = None) -> Obj:
    spec: Obj = {"hard": hard}
    if scopes:
        spec["scopes"] = scopes
    return {
        "metadata": {"name": name, "namespace": "test", "resourceVersion": "124"},
        "spec": spec,
        "status": {"hard": hard, "used": used},
    }


def _pod(requests: dict[str, str], limits: dict[str, str], **spec: object) -> Obj:
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container = {"name": "ctr", "image": "image", "resources": resources}
    return {"metadata": {"name": "pod", "namespace": "test"}, "spec": {"containers": [container], **spec}}


COMPUTE = {"cpu": "3", "memory": "100Gi", "pods": "5"}
COMPUTE_USED = {"cpu": "1", "memory": "50Gi", "pods": "3"}


def test_admit_below_quota_limit() -> None:
    """TestAdmitBelowQuotaLimit: the quota's new usage is the pod's added to what it had."""
    changed, refusal = q.check_request(
        "", "pods", _pod({"cpu": "100m", "memory": "2Gi"}, {}), [_quota("quota", COMPUTE, COMPUTE_USED)]
    )
    assert refusal is None
    assert [c["status"]["used"] for c in changed] == [{"cpu": "1100m", "memory": "52Gi", "pods": "4"}]


def test_admit_dry_run() -> None:
    """TestAdmitDryRun: checked, never charged."""
    changed, refusal = q.check_request(
        "", "pods", _pod({"cpu": "100m", "memory": "2Gi"}, {}), [_quota("quota", COMPUTE, COMPUTE_USED)], dry_run=True
    )
    assert (changed, refusal) == ([], None)


def test_admit_exceed_quota_limit() -> None:
    """TestAdmitExceedQuotaLimit, with the message the refusal carries."""
    _, refusal = q.check_request(
        "", "pods", _pod({"cpu": "3", "memory": "2Gi"}, {}), [_quota("quota", COMPUTE, COMPUTE_USED)]
    )
    assert refusal == "exceeded quota: quota, requested: cpu=3, used: cpu=1, limited: cpu=3"


def test_admit_enforce_quota_constraints() -> None:
    """TestAdmitEnforceQuotaConstraints: a quota on limits.memory wants every container's memory limit."""
    hard = {"cpu": "3", "memory": "100Gi", "limits.memory": "200Gi", "pods": "5"}
    used = {"cpu": "1", "memory": "50Gi", "limits.memory": "100Gi", "pods": "3"}
    _, refusal = q.check_request(
        "", "pods", _pod({"cpu": "100m", "memory": "2Gi"}, {"cpu": "200m"}), [_quota("quota", hard, used)]
    )
    assert refusal == "failed quota: quota: must specify limits.memory for: ctr"


def test_admit_pod_in_namespace_without_quota() -> None:
    """TestAdmitPodInNamespaceWithoutQuota."""
    assert q.check_request("", "pods", _pod({"cpu": "100m"}, {"cpu": "200m"}), []) == ([], None)


def test_admit_below_terminating_quota_limit() -> None:
    """TestAdmitBelowTerminatingQuotaLimit: a pod with an active deadline is charged to the Terminating quota only."""
    quotas = [
        _quota("quota-non-terminating", COMPUTE, COMPUTE_USED, ["NotTerminating"]),
        _quota("quota-terminating", COMPUTE, COMPUTE_USED, ["Terminating"]),
    ]
    pod = _pod({"cpu": "100m", "memory": "2Gi"}, {}, activeDeadlineSeconds=30)
    changed, refusal = q.check_request("", "pods", pod, quotas)
    assert refusal is None
    assert [(c["metadata"]["name"], c["status"]["used"]) for c in changed] == [
        ("quota-terminating", {"cpu": "1100m", "memory": "52Gi", "pods": "4"})
    ]


@pytest.mark.parametrize(
    ("pod", "charged"),
    [
        pytest.param(_pod({}, {}), "quota-besteffort", id="TestAdmitBelowBestEffortQuotaLimit"),
        pytest.param(
            _pod({"cpu": "1", "memory": "2Gi"}, {"cpu": "1", "memory": "2Gi"}),
            "quota-not-besteffort",
            id="TestAdmitBestEffortQuotaLimitIgnoresBurstable",
        ),
    ],
)
def test_best_effort_scopes(pod: Obj, charged: str) -> None:
    quotas = [
        _quota("quota-besteffort", {"pods": "5"}, {"pods": "3"}, ["BestEffort"]),
        _quota("quota-not-besteffort", {"pods": "5"}, {"pods": "3"}, ["NotBestEffort"]),
    ]
    changed, refusal = q.check_request("", "pods", pod, quotas)
    assert refusal is None
    assert [(c["metadata"]["name"], c["status"]["used"]) for c in changed] == [(charged, {"pods": "4"})]


def test_status_unknown_until_the_controller_counted() -> None:
    """`hasUsageStats`: a quota whose status lacks a used value for a name it limits refuses."""
    quota = _quota("quota", {"pods": "5", "cpu": "1"}, {"pods": "0"})
    _, refusal = q.check_request("", "pods", _pod({"cpu": "1"}, {}), [quota])
    assert refusal == "status unknown for quota: quota, resources: cpu,pods"


def test_a_quota_without_status_hard_does_not_apply_yet() -> None:
    quota = {"metadata": {"name": "new"}, "spec": {"hard": {"pods": "0"}}, "status": {}}
    assert q.check_request("", "pods", _pod({}, {}), [quota]) == ([], None)


@pytest.mark.parametrize(
    ("group", "plural", "hard", "expected"),
    [
        pytest.param("batch", "jobs", {"count/jobs.batch": "1"}, {"count/jobs.batch": "1"}, id="count-jobs"),
        pytest.param("", "configmaps", {"configmaps": "2"}, {"configmaps": "1"}, id="legacy-configmaps"),
        pytest.param(
            "",
            "secrets",
            {"count/secrets": "2", "secrets": "2"},
            {"count/secrets": "1", "secrets": "1"},
            id="both-names",
        ),
        pytest.param("", "configmaps", {"pods": "2"}, None, id="unrelated-quota"),
    ],
)
def test_object_counts(group: str, plural: str, hard: dict[str, str], expected: dict[str, str] | None) -> None:
    used = dict.fromkeys(hard, "0")
    changed, refusal = q.check_request(group, plural, {"metadata": {"name": "x"}}, [_quota("counts", hard, used)])
    assert refusal is None
    assert [c["status"]["used"] for c in changed] == ([expected] if expected else [])


def test_object_count_exceeded() -> None:
    quota = _quota("counts", {"count/jobs.batch": "1"}, {"count/jobs.batch": "1"})
    _, refusal = q.check_request("batch", "jobs", {"metadata": {"name": "x"}}, [quota])
    assert refusal == (
        "exceeded quota: counts, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1"
    )


def test_scoped_quotas_take_no_other_objects() -> None:
    """`MatchesNoScopeFunc`: a quota with scopes matches only pods."""
    quota = _quota("scoped", {"count/jobs.batch": "0"}, {"count/jobs.batch": "0"}, ["Terminating"])
    assert q.check_request("batch", "jobs", {"metadata": {"name": "x"}}, [quota]) == ([], None)


@pytest.mark.parametrize(
    ("op", "values", "class_name", "matches"),
    [
        ("Exists", [], "high", True),
        ("Exists", [], "", False),
        ("In", ["high", "low"], "high", True),
        ("In", ["low"], "high", False),
        ("NotIn", ["low"], "high", True),
        ("NotIn", ["low"], "", True),
        ("DoesNotExist", [], "", True),
    ],
)
def test_priority_class_scope(op: str, values: list[str], class_name: str, matches: bool) -> None:
    selector = {"scopeName": "PriorityClass", "operator": op, "values": values}
    pod = _pod({}, {}, priorityClassName=class_name) if class_name else _pod({}, {})
    assert q.pod_matches_scope(selector, pod) is matches


def test_pod_usage_through_its_life() -> None:
    """`PodUsageFunc`/`QuotaV1Pod`: `count/pods` always; compute while not terminal and not past its grace."""
    pod = _pod({"cpu": "250m", "memory": "1Gi"}, {"cpu": "500m"})
    assert q.dump(q.pod_usage(pod)) == {
        "count/pods": "1",
        "cpu": "250m",
        "limits.cpu": "500m",
        "memory": "1Gi",
        "pods": "1",
        "requests.cpu": "250m",
        "requests.memory": "1Gi",
    }
    assert q.dump(q.pod_usage({**pod, "status": {"phase": "Succeeded"}})) == {"count/pods": "1"}
    deleted = {**pod, "metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30}}
    assert "pods" in q.pod_usage(deleted, now=1704067200.0 + 30)
    assert q.dump(q.pod_usage(deleted, now=1704067200.0 + 31)) == {"count/pods": "1"}


def test_pod_requests_count_init_containers_and_sidecars() -> None:
    """`PodRequests`: containers plus sidecars, or the largest init moment if larger; overhead on top."""
    spec: Obj = {
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}}}],
        "initContainers": [
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "1", "memory": "10Mi"}}},
        ],
        "overhead": {"cpu": "10m"},
    }
    assert q.dump(q.pod_totals(spec, "requests")) == {"cpu": "1060m", "memory": "10Mi"}


def test_calculate_status() -> None:
    """The controller's recount: hard from spec, used per hard name over the objects the scopes take."""
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "4", "requests.cpu": "2", "count/jobs.batch": "3"}}}
    pods = [
        _pod({"cpu": "500m"}, {}),
        {**_pod({"cpu": "1"}, {}), "status": {"phase": "Failed"}},
    ]
    status = q.calculate_status(quota, {("", "pods"): pods, ("batch", "jobs"): []}, now=0.0)
    assert status == {
        "hard": {"count/jobs.batch": "3", "pods": "4", "requests.cpu": "2"},
        "used": {"count/jobs.batch": "0", "pods": "1", "requests.cpu": "500m"},
    }
