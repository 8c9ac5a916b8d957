"""The harness fails loudly on what it does not implement, and reads every op/key the corpus README defines.

Each test pins one audit fix: unknown ops, step keys, selector keys, env keys, kinds and validation options are
errors (a held-back case using one must not silently pass); `expectJob`'s `hasConditions`/`conditionStatus` work in
unit scenarios and `exact`/`startTimeSet` in integration ones; a unit `expectEvent` checks the emitted Events;
`applyDefaults: true` defaults a unit Job; a policy case's `jobIsApiValid` is checked against validation.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.names import JOB_TRACKING_FINALIZER
from tests.conformance import harness as H
from tests.conformance import integration, schema
from tests.conformance.corpus import IN_REPO, load_cases
from tests.conformance.integration import local_client, merge_patch, run_integration
from tests.conformance.schema import CorpusFormatError, check_case, check_file
from tests.conformance.test_policy import test_policy_case
from tests.conformance.test_scenarios import _run_unit

_ENV = {"now": "2025-01-01T00:00:00Z"}
_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main-container", "image": "i"}]}}


def _job(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "job", "namespace": "default", "uid": "job-uid"},
        "spec": {"selector": {"matchLabels": {"job": "j"}}, "template": _TEMPLATE, **spec},
    }


def _unit(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "kind": "controller-sync",
        "env": _ENV,
        "applyDefaults": False,
        "job": _job(completions=1, parallelism=1),
        "steps": list(steps),
        **extra,
    }


def _failed_pod() -> dict[str, Any]:
    return {"metadata": {"name": "a", "finalizers": [JOB_TRACKING_FINALIZER]}, "status": {"phase": "Failed"}}


@pytest.mark.parametrize(
    "step",
    [
        pytest.param({"op": "expectPodsCreated", "count": 1}, id="unknown op"),
        pytest.param({"op": "expectActions", "creations": 1, "patches": 0}, id="unknown expectActions key"),
        pytest.param({"op": "expectJob", "status": {}, "eventually": True}, id="unknown expectJob key"),
        pytest.param({"op": "waitActive", "count": 1}, id="integration op in a unit scenario"),
    ],
)
def test_a_unit_step_the_harness_does_not_know_fails(step: dict[str, Any]) -> None:
    with pytest.raises(CorpusFormatError, match="unknown"):
        _run_unit(_unit({"op": "sync"}, step))


@pytest.mark.parametrize(
    "step",
    [
        pytest.param({"op": "sync"}, id="unit op in an integration scenario"),
        pytest.param({"op": "deletePods", "select": {"failed": True}}, id="unknown selector key"),
        pytest.param(
            {"op": "setPodStatus", "select": {"all": True}, "phase": "Failed", "phaseOnly": "Failed"}, id="two"
        ),
        pytest.param({"op": "controller", "action": "pause"}, id="unknown controller action"),
    ],
)
def test_an_integration_step_the_harness_does_not_know_fails(step: dict[str, Any]) -> None:
    case = {"kind": "integration", "env": {}, "job": {}, "steps": [step]}
    with pytest.raises(CorpusFormatError):
        asyncio.run(run_integration(case, local_client))


@pytest.mark.parametrize(
    ("part", "mutate", "match"),
    [
        ("scenarios", lambda c: c.update(kind="e2e"), "unknown kind"),
        ("scenarios", lambda c: c["env"].update(syncPeriod="1s"), "unknown key"),
        ("scenarios", lambda c: c.update(expectFinally={}), "unknown key"),
        ("validation", lambda c: c.update(validationOptions={"allowInvalidPodDeletionCost": True}), "unknown key"),
        ("validation", lambda c: c.update(operation="update", oldJob={}, expectWithoutDefaulting={}), "only read"),
        ("scenarios", lambda c: c.update(kind="integration", applyDefaults=False, steps=[]), "always defaults"),
        ("validation", lambda c: c["expect"]["errors"].append({"field": "f", "type": "Bogus", "detail": ""}), "type"),
        ("policy", lambda c: c["expect"].update(reason="PodFailurePolicy"), "unknown key"),
    ],
)
def test_a_case_the_harness_does_not_know_fails(part: str, mutate: Any, match: str) -> None:
    case = copy.deepcopy(load_cases(part)[0])
    check_case(part, case)
    mutate(case)
    with pytest.raises(CorpusFormatError, match=match):
        check_case(part, case)


def test_a_file_header_must_be_format_1_with_its_count() -> None:
    import orjson

    data = orjson.loads((IN_REPO / "policy.json").read_bytes())
    check_file(data, "policy")
    with pytest.raises(CorpusFormatError, match="count"):
        check_file(dict(data, count=data["count"] + 1), "policy")
    with pytest.raises(CorpusFormatError, match="formatVersion"):
        check_file(dict(data, formatVersion=2), "policy")


def test_every_op_of_the_readme_is_implemented() -> None:
    readme = (IN_REPO / "README.md").read_text()
    for op in set(schema.UNIT_STEPS) | set(schema.INTEGRATION_STEPS):
        assert f'"op": "{op}"' in readme or f'"op":"{op}"' in readme, op
    ops = {line.split('"op": "')[1].split('"')[0] for line in readme.splitlines() if '"op": "' in line}
    ops |= {line.split('"op":"')[1].split('"')[0] for line in readme.splitlines() if '"op":"' in line}
    assert ops <= set(schema.UNIT_STEPS) | set(schema.INTEGRATION_STEPS), ops


def test_unit_expect_job_reads_has_conditions_and_condition_status() -> None:
    failed = {"op": "seedPods", "pods": [_failed_pod()]}
    job = _job(completions=1, parallelism=1, backoffLimit=0)
    ok = _unit(
        failed,
        {"op": "sync"},
        {"op": "expectJob", "hasConditions": [{"type": "FailureTarget", "status": "True"}]},
        {"op": "expectJob", "conditionStatus": {"type": "Complete", "status": None}},
        job=job,
    )
    _run_unit(ok)
    wrong = _unit(
        failed,
        {"op": "sync"},
        {"op": "expectJob", "conditionStatus": {"type": "FailureTarget", "status": None}},
        job=job,
    )
    with pytest.raises(AssertionError, match="condition FailureTarget status 'True'"):
        _run_unit(wrong)


def test_unit_expect_event_checks_the_events_emitted() -> None:
    job = _job(completions=1, parallelism=1, backoffLimit=0)
    steps = [{"op": "seedPods", "pods": [_failed_pod()]}, {"op": "sync"}]
    _run_unit(_unit(*steps, {"op": "expectEvent", "reason": "BackoffLimitExceeded"}, job=job))
    with pytest.raises(AssertionError, match="no event 'DeadlineExceeded'"):
        _run_unit(_unit(*steps, {"op": "expectEvent", "reason": "DeadlineExceeded"}, job=job))


def test_apply_defaults_in_a_unit_scenario_defaults_the_job() -> None:
    # `applyDefaults: true` = created through the API: batch/v1 defaults (backoffLimit 6, NonIndexed, ...) apply
    defaulted = H.UnitScenario(_unit(job=_job(), applyDefaults=True)).job["spec"]
    assert (defaulted["backoffLimit"], defaulted["completionMode"], defaulted["suspend"]) == (6, "NonIndexed", False)
    as_given = H.UnitScenario(_unit(job=_job())).job["spec"]
    assert "backoffLimit" not in as_given and "completionMode" not in as_given


def test_policy_job_is_api_valid_is_checked() -> None:
    case = copy.deepcopy(next(c for c in load_cases("policy") if not c["jobIsApiValid"]))
    test_policy_case(case)
    case["jobIsApiValid"] = True
    with pytest.raises(AssertionError, match="jobIsApiValid=True"):
        test_policy_case(case)


@pytest.mark.e2e
def test_integration_expect_job_reads_exact_and_start_time_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(integration, "WAIT", 3.0)  # the failing step below polls until the deadline
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"generateName": "exact-", "namespace": "default"},
        "spec": {"completions": 1, "parallelism": 1, "template": _TEMPLATE},
    }
    base = {"kind": "integration", "env": {}, "applyDefaults": True, "job": job}
    steps: list[dict[str, Any]] = [{"op": "waitActive", "count": 1}]
    good = {"op": "expectJob", "status": {"active": 1, "ready": 0, "terminating": 0}, "startTimeSet": True}
    asyncio.run(run_integration(dict(base, steps=[*steps, good]), local_client))
    bad = {"op": "expectJob", "status": {}, "exact": True}  # `active: 1` is unlisted and not zero
    with pytest.raises(AssertionError, match="unexpected status fields"):
        asyncio.run(run_integration(dict(base, steps=[*steps, bad]), local_client))


@pytest.mark.parametrize(("marker", "offset"), [("@now", 0), ("@now-15s", -15), ("@now+5s", 5), ("@now-0.5s", -0.5)])
def test_now_markers_resolve_relative_to_the_scenario_clock(marker: str, offset: float) -> None:
    assert H.resolve_times({"t": [marker]}, 1000.0) == {"t": [H.format_time(1000.0 + offset)]}


@pytest.mark.parametrize("marker", ["@now-2m", "@now - 15s", "@nowish"])
def test_an_unknown_now_marker_fails_instead_of_staying_text(marker: str) -> None:
    with pytest.raises(AssertionError, match="unknown timestamp form"):
        H.resolve_times({"lastFailureTime": marker}, 1000.0)


def test_update_job_merges_nested_spec_fields() -> None:
    spec = {"suspend": True, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}}
    patch = {"suspend": False, "template": {"spec": {"nodeSelector": {"foo": "bar"}}}, "activeDeadlineSeconds": None}
    assert merge_patch(dict(spec, activeDeadlineSeconds=5), patch) == {
        "suspend": False,
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c"}], "nodeSelector": {"foo": "bar"}},
        },
    }


@pytest.mark.parametrize(
    ("name", "labels", "match"),
    [
        ("job_controller_job_pods_finished_totl", {"completion_mode": "Indexed", "result": "failed"}, "unknown metric"),
        ("job_controller_job_pods_finished_total", {"completionMode": "Indexed", "result": "failed"}, "labels"),
    ],
)
def test_an_expected_metric_kjobs_does_not_have_fails_even_at_zero(name: str, labels: Any, match: str) -> None:
    step = {"op": "expectMetric", "name": name, "values": [{"labels": labels, "value": 0}]}
    with pytest.raises(AssertionError, match=match):
        _run_unit(_unit({"op": "sync"}, step))


def test_a_counter_may_be_named_without_total() -> None:
    sc = H.UnitScenario(_unit())
    labels = {"completion_mode": "Indexed", "result": "failed"}
    for name in ("job_controller_job_pods_finished", "job_controller_job_pods_finished_total"):
        step = {"name": name, "values": [{"labels": labels, "value": 0}]}
        assert H.check_metric_known(sc.metrics, step) == "job_controller_job_pods_finished_total"
