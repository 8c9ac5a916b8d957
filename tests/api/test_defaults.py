"""Defaulting (pkg/apis/batch/v1/defaults.go, core/v1 pod defaults) and the registry's PrepareForCreate."""

from __future__ import annotations

import copy

import pytest

from kjobs.api import names
from kjobs.api.defaults import (
    default_job,
    default_pod,
    default_pod_update_in_place,
    prepare_job_for_create,
    prepare_job_for_update,
    prepare_job_status_update,
)
from tests.api.job_fixtures import UID, api_job, raw_job, template_spec


def test_default_job_leaves_its_argument_untouched() -> None:
    job = raw_job()
    before = copy.deepcopy(job)
    default_job(job)
    assert job == before


@pytest.mark.parametrize(
    ("given", "completions", "parallelism"),
    [
        pytest.param({}, 1, 1, id="both absent"),
        pytest.param({"completions": 5}, 5, 1, id="completions only"),
        pytest.param({"parallelism": 3}, None, 3, id="parallelism only: work queue"),
        pytest.param({"completions": 0, "parallelism": 0}, 0, 0, id="explicit zeros kept"),
    ],
)
def test_completions_and_parallelism(given: dict[str, int], completions: int | None, parallelism: int) -> None:
    spec = default_job(raw_job(**given))["spec"]
    assert spec.get("completions") == completions
    assert spec["parallelism"] == parallelism


def test_backoff_limit_defaults() -> None:
    assert default_job(raw_job())["spec"]["backoffLimit"] == 6
    per_index = default_job(raw_job(completionMode="Indexed", completions=3, backoffLimitPerIndex=1))["spec"]
    assert per_index["backoffLimit"] == 2147483647
    assert default_job(raw_job(backoffLimit=0))["spec"]["backoffLimit"] == 0


def test_mode_suspend_and_replacement_policy() -> None:
    spec = default_job(raw_job())["spec"]
    assert (spec["completionMode"], spec["suspend"], spec["podReplacementPolicy"]) == (
        "NonIndexed",
        False,
        "TerminatingOrFailed",
    )
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    with_policy = default_job(raw_job(podFailurePolicy=policy))["spec"]
    assert with_policy["podReplacementPolicy"] == "Failed"


def test_explicit_empty_replacement_policy_is_not_defaulted() -> None:
    assert default_job(raw_job(podReplacementPolicy=""))["spec"]["podReplacementPolicy"] == ""


def test_on_pod_conditions_status_defaults_to_true() -> None:
    policy = {
        "rules": [
            {
                "action": "Ignore",
                "onPodConditions": [
                    {"type": "DisruptionTarget"},
                    {"type": "X", "status": "False"},
                    {"type": "Y", "status": ""},
                ],
            }
        ]
    }
    patterns = default_job(raw_job(podFailurePolicy=policy))["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"]
    assert [p["status"] for p in patterns] == ["True", "False", "True"]


def test_job_labels_copied_from_template_only_when_empty() -> None:
    job = raw_job()
    job["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    assert default_job(job)["metadata"]["labels"] == {"app": "x"}
    job["metadata"]["labels"] = {"team": "a"}
    assert default_job(job)["metadata"]["labels"] == {"team": "a"}


def test_pod_template_defaults() -> None:
    job = raw_job()
    job["spec"]["template"]["spec"].pop("restartPolicy")
    job["spec"]["template"]["spec"]["containers"].append(
        {"name": "side", "image": "nginx", "ports": [{"containerPort": 80}]}
    )
    spec = template_spec(default_job(job))
    assert spec["restartPolicy"] == "Always"  # the Job validator then rejects it as Required
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    main, side = spec["containers"]
    assert main["imagePullPolicy"] == "IfNotPresent"
    assert side["imagePullPolicy"] == "Always"  # no tag means :latest
    assert main["terminationMessagePath"] == "/dev/termination-log"
    assert main["terminationMessagePolicy"] == "File"
    assert side["ports"][0]["protocol"] == "TCP"
    assert "enableServiceLinks" not in spec  # a Pod-only default


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("busybox", "Always"),
        ("busybox:latest", "Always"),
        ("busybox:1.36", "IfNotPresent"),
        ("registry.local:5000/team/busybox", "Always"),
        ("registry.local:5000/team/busybox:v2", "IfNotPresent"),
        ("busybox@sha256:" + "a" * 64, "IfNotPresent"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    job = raw_job()
    template_spec(job)["containers"][0]["image"] = image
    assert template_spec(default_job(job))["containers"][0]["imagePullPolicy"] == policy


def test_quantities_canonical_and_probe_defaults() -> None:
    job = raw_job()
    container = template_spec(job)["containers"][0]
    container["resources"] = {"limits": {"cpu": "0.5", "memory": "1.5Gi"}, "requests": {"cpu": "1000m", "memory": 1000}}
    container["livenessProbe"] = {"httpGet": {"port": 8080}}
    out = template_spec(default_job(job))["containers"][0]
    assert out["resources"] == {"limits": {"cpu": "500m", "memory": "1536Mi"}, "requests": {"cpu": "1", "memory": "1k"}}
    assert out["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def test_volume_defaults() -> None:
    job = raw_job()
    template_spec(job)["volumes"] = [{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "c"}}]
    volumes = template_spec(default_job(job))["volumes"]
    assert volumes[0] == {"name": "scratch", "emptyDir": {}}
    assert volumes[1]["configMap"] == {"name": "c", "defaultMode": 420}


def test_default_pod_sets_pod_only_fields() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1", "resources": {"limits": {"cpu": "1"}}}]},
    }
    spec = default_pod(pod)["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["enableServiceLinks"] is True
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    assert "priority" not in pod["spec"]


def test_wrong_types_are_left_for_validation() -> None:
    job = raw_job(parallelism="two", template="not an object")
    out = default_job(job)
    assert out["spec"]["parallelism"] == "two"
    assert out["spec"]["template"] == "not an object"


def test_prepare_for_create_generates_selector_and_labels() -> None:
    job = default_job(raw_job())
    job["status"] = {"active": 3}
    out = prepare_job_for_create(job, uid=UID)
    assert out["metadata"]["uid"] == UID
    assert out["metadata"]["generation"] == 1
    assert out["status"] == {}
    assert out["spec"]["selector"] == {"matchLabels": {names.CONTROLLER_UID_LABEL: UID}}
    assert out["spec"]["template"]["metadata"]["labels"] == {
        names.LEGACY_JOB_NAME_LABEL: "myjob",
        names.JOB_NAME_LABEL: "myjob",
        names.LEGACY_CONTROLLER_UID_LABEL: UID,
        names.CONTROLLER_UID_LABEL: UID,
    }
    assert job["status"] == {"active": 3}


def test_prepare_for_create_keeps_user_labels_and_manual_selector() -> None:
    job = default_job(raw_job())
    job["spec"]["template"]["metadata"] = {"labels": {names.LEGACY_JOB_NAME_LABEL: "other", "app": "a"}}
    labels = prepare_job_for_create(job, uid=UID)["spec"]["template"]["metadata"]["labels"]
    assert labels[names.LEGACY_JOB_NAME_LABEL] == "other"
    assert labels["app"] == "a"
    manual = default_job(raw_job(manualSelector=True, selector={"matchLabels": {"app": "a"}}))
    out = prepare_job_for_create(manual, uid=UID)
    assert out["spec"]["selector"] == {"matchLabels": {"app": "a"}}
    assert "metadata" not in out["spec"]["template"]


def test_prepare_for_update_bumps_generation_only_on_spec_change() -> None:
    old = api_job()
    old["status"] = {"active": 1}
    same = copy.deepcopy(old)
    same["status"] = {"active": 99}
    kept = prepare_job_for_update(same, old)
    assert kept["metadata"]["generation"] == 1
    assert kept["status"] == {"active": 1}
    changed = copy.deepcopy(old)
    changed["spec"]["parallelism"] = 4
    assert prepare_job_for_update(changed, old)["metadata"]["generation"] == 2


def test_prepare_status_update_keeps_old_spec() -> None:
    old = api_job()
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 7
    new["status"] = {"active": 1}
    out = prepare_job_status_update(new, old)
    assert out["spec"]["parallelism"] == 1
    assert out["status"] == {"active": 1}


def test_an_update_sharing_the_stored_spec_adds_no_defaults_and_a_new_spec_is_defaulted() -> None:
    stored = default_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    patched = {**stored, "metadata": {**stored["metadata"], "labels": {"a": "b"}}}  # a patch copies on write
    assert default_pod_update_in_place(patched, stored)["spec"] is stored["spec"]
    replaced = copy.deepcopy(patched)
    del replaced["spec"]["containers"][0]["imagePullPolicy"]  # a PUT that leaves a default out gets it back
    assert default_pod_update_in_place(replaced, stored)["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_every_container_reads_back_with_resources_as_go_writes_them() -> None:
    """`Container.Resources` is a struct, not a pointer: Go decodes an absent one to its zero value and writes
    `resources: {}` back (omitempty never omits a struct), so `kubectl get pod -o yaml` on a cluster shows it on
    every container, init and ephemeral ones included, and in a Job's template."""
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {"name": "main", "image": "busybox"},
                {"name": "cpu", "image": "busybox", "resources": {"requests": {"cpu": "1"}}},
            ],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
        },
    }
    spec = default_pod(pod)["spec"]
    every = [*spec["initContainers"], *spec["containers"], *spec["ephemeralContainers"]]
    assert [c["resources"] for c in every] == [{}, {}, {"requests": {"cpu": "1"}}, {}]
    job = default_job(raw_job())
    assert [c["resources"] for c in job["spec"]["template"]["spec"]["containers"]] == [{}]
