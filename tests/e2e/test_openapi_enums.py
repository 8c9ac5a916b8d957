"""`kubectl explain` of enum fields on `kjobs up` (docs/openapi.md, "Enums"): a 1.32 kube-apiserver serves its
OpenAPI with the `OpenAPIEnums` gate on, so a field whose Go type is marked `+enum` carries `enum` and its
description ends in a `Possible enum values:` paragraph; kubectl prints an `ENUM:` block for the field it explains
and an `enum:` line under a listed field (plaintext.tmpl's `extractEnum`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("openapi-enums")) as kubectl:
        yield kubectl


# what `kubectl explain pod.spec.restartPolicy` prints on a 1.32 cluster (kubectl 1.32 trims the last newline)
RESTART_POLICY = [
    "KIND:       Pod",
    "VERSION:    v1",
    "",
    "FIELD: restartPolicy <string>",
    "ENUM:",
    "    Always",
    "    Never",
    "    OnFailure",
    "",
    "DESCRIPTION:",
    "    Restart policy for all containers within the pod. One of Always, OnFailure,",
    "    Never. In some contexts, only a subset of those values may be permitted.",
    "    Default to Always. More info:",
    "    https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy",
    "    ",
    "    Possible enum values:",
    '     - `"Always"`',
    '     - `"Never"`',
    '     - `"OnFailure"`',
]


def test_explain_pod_restart_policy_prints_its_enum(up: Up) -> None:
    assert up.ok("explain", "pod.spec.restartPolicy").splitlines() == RESTART_POLICY


def test_explain_job_completion_mode_prints_its_enum(up: Up) -> None:
    lines = up.ok("explain", "job.spec.completionMode").splitlines()
    assert lines[:9] == [
        "GROUP:      batch",
        "KIND:       Job",
        "VERSION:    v1",
        "",
        "FIELD: completionMode <string>",
        "ENUM:",
        "    Indexed",
        "    NonIndexed",
        "",
    ]
    # the field's own text, a blank line, then one line per value with its constant's comment (wrapped at 80)
    assert lines[-8:] == [
        "    ",
        "    Possible enum values:",
        '     - `"Indexed"` is a Job completion mode. In this mode, the Pods of a Job get',
        "    an associated completion index from 0 to (.spec.completions - 1). The Job is",
        "    considered complete when a Pod completes for each completion index.",
        '     - `"NonIndexed"` is a Job completion mode. In this mode, the Job is',
        "    considered complete when there have been .spec.completions successfully",
        "    completed Pods. Pod completions are homologous to each other.",
    ]


def test_explain_pod_failure_policy_rules_lists_the_action_enum(up: Up) -> None:
    # 1.32's PodFailurePolicyAction is `+enum`: upstream's committed spec lacks it only because
    # hack/update-openapi-spec.sh runs the apiserver with OpenAPIEnums=false
    out = up.ok("explain", "job.spec.podFailurePolicy.rules")
    lines = out.splitlines()
    at = lines.index("  action\t<string> -required-")
    assert lines[at + 1] == "  enum: Count, FailIndex, FailJob, Ignore"
    assert "    Possible enum values:" in lines[at:]
    assert '     - `"FailJob"` This is an action which might be taken on a pod failure -' in lines[at:]
    # onExitCodes' operator is an enum too, one level down
    nested = up.ok("explain", "job.spec.podFailurePolicy.rules.onExitCodes.operator").splitlines()
    assert nested[4:8] == ["FIELD: operator <string>", "ENUM:", "    In", "    NotIn"]


def test_explain_openapiv2_prints_the_paragraph_from_the_protobuf_document(up: Up) -> None:
    # kubectl's v2 printer reads /openapi/v2 as gnostic protobuf; it prints descriptions, not `enum` (which the
    # protobuf carries as repeated Any: tests/server/test_openapi_v2.py reads it back)
    out = up.ok("explain", "pod.spec.restartPolicy", "--output=plaintext-openapiv2")
    assert out.splitlines()[3:] == [
        "FIELD:    restartPolicy <string>",
        "",
        "DESCRIPTION:",
        "     Restart policy for all containers within the pod. One of Always, OnFailure,",
        "     Never. In some contexts, only a subset of those values may be permitted.",
        "     Default to Always. More info:",
        "     https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy",
        "",
        "     Possible enum values:",
        '     - `"Always"`',
        '     - `"Never"`',
        '     - `"OnFailure"`',
    ]
