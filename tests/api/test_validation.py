"""Job create and update validation: every rule of pkg/apis/batch/validation/validation.go, checked on the rendered
errors.

Each case defaults and prepares a Job as the API server does, applies one change, and compares `str()` of every
error with the text Kubernetes prints, in Kubernetes' emission order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kjobs.api import names
from kjobs.api.defaults import default_job, prepare_job_for_create
from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation import (
    validate_indexes_format,
    validate_job,
    validate_job_for_update,
    validate_job_update,
)
from tests.api.job_fixtures import UID, api_job, raw_job, stored_job, template_spec

QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _rendered(job: Obj) -> list[str]:
    return [str(e) for e in validate_job(job)]


def _create(**spec: Any) -> list[str]:
    return _rendered(api_job(**spec))


def _rule(**rule: Any) -> dict[str, Any]:
    return {"podFailurePolicy": {"rules": [rule]}}


def _exit_codes(operator: str = "In", values: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"action": "FailJob", "onExitCodes": {"operator": operator, "values": values or [1], **extra}}


CREATE_CASES = [
    pytest.param({}, [], id="valid"),
    pytest.param(
        {
            "parallelism": -1,
            "completions": -1,
            "activeDeadlineSeconds": -1,
            "backoffLimit": -1,
            "ttlSecondsAfterFinished": -1,
        },
        [
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
            "spec.completions: Invalid value: -1: must be greater than or equal to 0",
            "spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
            "spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0",
        ],
        id="negative counters",
    ),
    pytest.param(
        {"backoffLimitPerIndex": 1},
        ["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"],
        id="per-index needs Indexed",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 4, "maxFailedIndexes": 1},
        ["spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"],
        id="maxFailedIndexes needs per-index",
    ),
    pytest.param(
        {"maxFailedIndexes": 1, "backoffLimitPerIndex": 1},
        [
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
            "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
        ],
        id="maxFailedIndexes needs Indexed",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 3, "parallelism": 100001},
        [
            "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when "
            "completion mode is Indexed"
        ],
        id="indexed parallelism limit",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 10, "backoffLimitPerIndex": 1, "maxFailedIndexes": 11},
        ["spec.maxFailedIndexes: Invalid value: 11: must be less than or equal to completions"],
        id="maxFailedIndexes above completions",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 100001, "backoffLimitPerIndex": 1, "maxFailedIndexes": 100001},
        [
            "spec.maxFailedIndexes: Invalid value: 100001: must be less than or equal to 100000",
            "spec.maxFailedIndexes: Invalid value: 100001: must be less than or equal to 10000 when completions are "
            "above 100000 and used with backoff limit per index",
        ],
        id="maxFailedIndexes hard and high-completions limits",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 100001, "parallelism": 10001, "backoffLimitPerIndex": 1},
        [
            "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
            "spec.parallelism: Invalid value: 10001: must be less than or equal to 10000 when completions are above "
            "100000 and used with backoff limit per index",
        ],
        id="high completions with per-index",
    ),
    pytest.param(
        {"completionMode": "Sometimes"},
        ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'],
        id="unknown completion mode",
    ),
    pytest.param(
        {"managedBy": "kueue"},
        ['spec.managedBy: Invalid value: "kueue": must be a domain-prefixed path (such as "acme.io/foo")'],
        id="managedBy not a domain path",
    ),
    pytest.param(
        {"managedBy": "example.com/" + "x" * 60},
        ["spec.managedBy: Too long: may not be more than 63 bytes"],
        id="managedBy too long",
    ),
    pytest.param(_rule(**_exit_codes()), [], id="valid exit-code rule"),
    pytest.param(
        _rule(action="", onPodConditions=[{"type": "DisruptionTarget"}]),
        [
            'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" '
            '"FailIndex" "FailJob" "Ignore"]'
        ],
        id="action required",
    ),
    pytest.param(
        _rule(action="FailIndex", onPodConditions=[{"type": "DisruptionTarget"}]),
        [
            'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the '
            "backoffLimitPerIndex to be set"
        ],
        id="FailIndex without per-index",
    ),
    pytest.param(
        _rule(action="Restart", onPodConditions=[{"type": "DisruptionTarget"}]),
        [
            'spec.podFailurePolicy.rules[0].action: Unsupported value: "Restart": supported values: "Count", '
            '"FailIndex", "FailJob", "Ignore"'
        ],
        id="unknown action",
    ),
    pytest.param(
        _rule(**_exit_codes(operator="")),
        ['spec.podFailurePolicy.rules[0].onExitCodes.operator: Required value: valid values: ["In" "NotIn"]'],
        id="operator required",
    ),
    pytest.param(
        _rule(**_exit_codes(operator="Is")),
        [
            'spec.podFailurePolicy.rules[0].onExitCodes.operator: Unsupported value: "Is": supported '
            'values: "In", "NotIn"'
        ],
        id="unknown operator",
    ),
    pytest.param(
        _rule(**_exit_codes(containerName="sidecar")),
        [
            'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "sidecar": must be one of the '
            "container or initContainer names in the pod template"
        ],
        id="unknown container",
    ),
    pytest.param(_rule(**_exit_codes(containerName="main")), [], id="known container"),
    pytest.param(
        {"podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": []}}]}},
        ["spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []: at least one value is required"],
        id="no values",
    ),
    pytest.param(
        _rule(**_exit_codes(values=list(range(1, 257)))),
        ["spec.podFailurePolicy.rules[0].onExitCodes.values: Too many: 256: must have at most 255 items"],
        id="too many values",
    ),
    pytest.param(
        _rule(**_exit_codes(values=[0, 1])),
        ["spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator"],
        id="zero with In",
    ),
    pytest.param(_rule(**_exit_codes(operator="NotIn", values=[0, 1])), [], id="zero with NotIn"),
    pytest.param(_rule(**_exit_codes(values=[-3, -1, 2])), [], id="negative exit codes"),
    pytest.param(
        _rule(**_exit_codes(values=[1, 2, 2, 2])),
        [
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 2",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 2",
        ],
        id="every repeat reported",
    ),
    pytest.param(
        _rule(**_exit_codes(values=[5, 3, 5])),
        [
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 5",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [5,3,5]: must be ordered",
        ],
        id="unordered after per-value errors",
    ),
    pytest.param(
        _rule(action="Ignore", onPodConditions=[{"type": "", "status": "True"}]),
        [
            'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "": name part must be non-empty',
            f'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "": {QUALIFIED}',
        ],
        id="empty condition type",
    ),
    pytest.param(
        _rule(action="Ignore", onPodConditions=[{"type": "Ready", "status": "Maybe"}]),
        [
            'spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: "Maybe": supported values: '
            '"False", "True", "Unknown"'
        ],
        id="unknown condition status",
    ),
    pytest.param(
        _rule(action="Ignore", onPodConditions=[{"type": f"C{i}"} for i in range(21)]),
        ["spec.podFailurePolicy.rules[0].onPodConditions: Too many: 21: must have at most 20 items"],
        id="too many patterns",
    ),
    pytest.param(
        _rule(action="Ignore", onPodConditions=[{"type": "A"}], onExitCodes={"operator": "In", "values": [1]}),
        [
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and "
            "OnPodConditions is not supported"
        ],
        id="both requirements",
    ),
    pytest.param(
        _rule(action="Ignore"),
        [
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and "
            "OnPodConditions is required"
        ],
        id="no requirement",
    ),
    pytest.param(
        {"podFailurePolicy": {"rules": [_exit_codes()] * 21}},
        ["spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items"],
        id="too many rules",
    ),
    pytest.param({"podFailurePolicy": {"rules": []}}, [], id="empty rules"),
    pytest.param(
        {"podFailurePolicy": {"rules": [_exit_codes()]}, "podReplacementPolicy": "TerminatingOrFailed"},
        ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"'],
        id="replacement policy with failure policy",
    ),
    pytest.param(
        {"podReplacementPolicy": "Never"},
        ['spec.podReplacementPolicy: Unsupported value: "Never": supported values: "Failed", "TerminatingOrFailed"'],
        id="unknown replacement policy",
    ),
    pytest.param(
        {"successPolicy": {"rules": []}},
        ['spec.successPolicy: Invalid value: {"Rules":[]}: requires indexed completion mode'],
        id="success policy needs Indexed",
    ),
    pytest.param(
        {"completionMode": "Indexed", "completions": 3, "successPolicy": {"rules": []}},
        [
            "spec.successPolicy.rules: Required value: at least one rules must be specified when the "
            "successPolicy is specified"
        ],
        id="success policy without rules",
    ),
    pytest.param(
        {
            "completionMode": "Indexed",
            "completions": 3,
            "successPolicy": {
                "rules": [{}, {"succeededIndexes": "0-3"}, {"succeededIndexes": "0,1", "succeededCount": 3}]
            },
        },
        [
            "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be "
            "specified",
            'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "0-3": error parsing succeededIndexes: too '
            'large index: "3"',
            "spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number "
            "of indexes in the specified succeededIndexes field)",
        ],
        id="success policy rules",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), CREATE_CASES)
def test_create_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert _create(**spec) == expected


def _with_template(change: Callable[[Obj], None]) -> list[str]:
    job = raw_job()
    change(template_spec(job))
    return _rendered(prepare_job_for_create(default_job(job), uid=UID))


def test_restart_policy_rules() -> None:
    assert _with_template(lambda s: s.pop("restartPolicy")) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    assert _with_template(lambda s: s.update(restartPolicy="Invalid")) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: "Always", '
        '"OnFailure", "Never"',
        'spec.template.spec.restartPolicy: Unsupported value: "Invalid": supported values: "OnFailure", "Never"',
    ]
    on_failure = api_job(podFailurePolicy={"rules": [_exit_codes()]})
    template_spec(on_failure)["restartPolicy"] = "OnFailure"
    assert _rendered(on_failure) == [
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy '
        "is specified"
    ]


def test_selector_rules() -> None:
    no_selector = api_job()
    del no_selector["spec"]["selector"]
    assert _rendered(no_selector) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"batch.kubernetes.io/controller-uid":'
        '"1a2b3c","batch.kubernetes.io/job-name":"myjob","controller-uid":"1a2b3c","job-name":"myjob"}: '
        "`selector` does not match template `labels`",
    ]
    manual = prepare_job_for_create(
        default_job(raw_job(manualSelector=True, selector={"matchLabels": {"app": "a"}})), uid=UID
    )
    assert _rendered(manual) == [
        "spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`"
    ]
    manual["spec"]["template"]["metadata"] = {"labels": {"app": "a"}}
    assert _rendered(manual) == []
    bad_operator = copy.deepcopy(manual)
    bad_operator["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Near"}]}
    assert _rendered(bad_operator) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'
    ]


def test_generated_selector_rules() -> None:
    job = api_job()
    job["metadata"]["uid"] = ""
    job["spec"]["template"]["metadata"]["labels"][names.JOB_NAME_LABEL] = "other"
    del job["spec"]["template"]["metadata"]["labels"][names.LEGACY_CONTROLLER_UID_LABEL]
    rendered = _rendered(job)
    assert rendered[0] == "metadata.uid: Required value"
    assert rendered[1] == "spec.template.metadata.labels[controller-uid]: Required value: must be ''"
    assert rendered[2].startswith("spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Invalid value: ")
    assert rendered[3].startswith("spec.template.metadata.labels[batch.kubernetes.io/job-name]: Invalid value: {")
    assert rendered[3].endswith(": must be 'myjob'")
    assert rendered[4].startswith('spec.selector: Invalid value: {"matchLabels":{')
    assert rendered[4].endswith("`selector` not auto-generated")
    legacy_only = api_job()
    for key in (names.JOB_NAME_LABEL, names.CONTROLLER_UID_LABEL):
        del legacy_only["spec"]["template"]["metadata"]["labels"][key]
    legacy_only["spec"]["selector"] = {"matchLabels": {names.LEGACY_CONTROLLER_UID_LABEL: UID}}
    assert validate_job(legacy_only, require_prefixed_labels=False) == []
    assert [str(e) for e in validate_job(legacy_only, require_prefixed_labels=True)] == [
        "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Required value: must be '1a2b3c'",
        "spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: must be 'myjob'",
    ]


def test_object_meta_rules() -> None:
    assert _rendered(api_job(name="Bad_Name"))[0] == (
        'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    long_name = "x" * 64
    assert _rendered(api_job(name=long_name)) == [
        f'spec.template.labels: Invalid value: "{long_name}": must be no more than 63 bytes',
        f'spec.template.labels: Invalid value: "{long_name}": must be no more than 63 bytes',
    ]
    job = api_job()
    del job["metadata"]["namespace"]
    job["metadata"]["labels"] = {"bad key!": "v"}
    job["metadata"]["annotations"] = {"a/b/c": "v"}
    rendered = _rendered(job)
    assert rendered[0] == "metadata.namespace: Required value"
    assert rendered[1] == f'metadata.labels: Invalid value: "bad key!": {QUALIFIED}'
    assert rendered[2].startswith('metadata.annotations: Invalid value: "a/b/c": a valid label key must consist of')
    nameless = api_job()
    del nameless["metadata"]["name"]
    nameless["metadata"]["generateName"] = "pi-"
    assert _rendered(nameless)[0] == "metadata.name: Required value: name or generateName is required"


def test_annotations_over_256_kib_in_total_are_too_long() -> None:
    job = api_job()
    job["metadata"]["annotations"] = {"a": "x" * 256 * 1024}
    assert _rendered(job) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    job["metadata"]["annotations"] = {"a": "x" * (256 * 1024 - 1)}
    assert _rendered(job) == []


def test_indexed_hostname_must_be_a_dns_label() -> None:
    name = "j" * 62
    job = prepare_job_for_create(default_job(raw_job(name=name, completionMode="Indexed", completions=10)), uid=UID)
    assert str(validate_job(job)[-1]) == (
        f'metadata.name: Invalid value: "{name}": will not able to create pod with invalid DNS label: {name}-9'
    )


def test_wrong_types_become_errors() -> None:
    job = api_job()
    job["spec"]["parallelism"] = "2"
    job["spec"]["backoffLimit"] = 1.5
    job["spec"]["podFailurePolicy"] = ["not", "an", "object"]
    rendered = _rendered(job)
    assert 'spec.parallelism: Invalid value: "2": must be of type int32' in rendered
    assert "spec.backoffLimit: Invalid value: 1.5: must be of type int32" in rendered
    assert 'spec.podFailurePolicy: Invalid value: ["not","an","object"]: must be of type object' in rendered
    assert validate_job("not a job") == [FieldError("", ErrorType.FieldValueInvalid, "must be of type object")]  # type: ignore[arg-type]


# --- updates --------------------------------------------------------------------------------------------------


def _update(old: Obj, change: Callable[[Obj], None]) -> list[str]:
    new = copy.deepcopy(old)
    change(new["spec"])
    return [str(e) for e in validate_job_update(new, old)]


def test_immutable_fields() -> None:
    old = stored_job(completionMode="Indexed", completions=4, backoffLimitPerIndex=1)
    assert _update(
        old, lambda s: s.update(completionMode="NonIndexed", backoffLimitPerIndex=None, maxFailedIndexes=1)
    ) == [
        "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
        'spec.completionMode: Invalid value: "NonIndexed": field is immutable',
        "spec.backoffLimitPerIndex: Invalid value: null: field is immutable",
    ]
    assert _update(old, lambda s: s.update(maxFailedIndexes=2, parallelism=3, backoffLimit=1)) == []
    assert _update(old, lambda s: s.update(managedBy="example.com/x")) == [
        'spec.managedBy: Invalid value: "example.com/x": field is immutable'
    ]
    policy = {"rules": [_exit_codes()]}
    assert _update(old, lambda s: s.update(podFailurePolicy=policy, podReplacementPolicy="Failed"))[0].startswith(
        'spec.podFailurePolicy: Invalid value: {"Rules":[{"Action":"FailJob","OnExitCodes":{"ContainerName":null,'
        '"Operator":"In","Values":[1]},"OnPodConditions":null}]}: field is immutable'
    )


def test_elastic_indexed_completions() -> None:
    old = stored_job(completionMode="Indexed", completions=4, parallelism=4)
    assert _update(old, lambda s: s.update(completions=6, parallelism=6)) == []
    assert _update(old, lambda s: s.update(completions=6)) == [
        "spec.completions: Invalid value: 6: can only be modified in tandem with spec.parallelism"
    ]
    assert _update(old, lambda s: s.pop("completions")) == [
        "spec.completions: Required value: when completion mode is Indexed"
    ]
    non_indexed = stored_job(completions=4)
    assert _update(non_indexed, lambda s: s.update(completions=5, parallelism=5)) == [
        "spec.completions: Invalid value: 5: field is immutable"
    ]


def test_template_and_selector_immutable_except_scheduling_while_suspended() -> None:
    running = stored_job()
    assert _update(running, lambda s: s["template"]["spec"].update(nodeSelector={"zone": "a"}))[0].startswith(
        'spec.template: Invalid value: {"metadata":{"labels":{'
    )
    selector_change = _update(running, lambda s: s["selector"]["matchLabels"].update(extra="x"))
    assert selector_change[0].endswith("`selector` does not match template `labels`")
    assert selector_change[1] == (
        'spec.selector: Invalid value: {"matchLabels":{"batch.kubernetes.io/controller-uid":"1a2b3c","extra":"x"}}: '
        "field is immutable"
    )
    suspended = stored_job(suspend=True)

    def reschedule(spec: Obj) -> None:
        spec["template"]["spec"]["nodeSelector"] = {"zone": "a"}
        spec["template"]["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
        spec["template"]["metadata"]["annotations"] = {"note": "moved"}

    assert _update(suspended, reschedule) == []
    assert _update(suspended, lambda s: s["template"]["spec"]["containers"][0].update(image="other:1"))[0].startswith(
        "spec.template: Invalid value:"
    )
    started = copy.deepcopy(suspended)
    started["status"] = {"startTime": "2025-01-01T00:00:00Z"}
    assert _update(started, reschedule)[0].startswith("spec.template: Invalid value:")


def test_metadata_update_rules() -> None:
    old = stored_job()
    new = copy.deepcopy(old)
    new["metadata"]["name"] = "renamed"
    del new["metadata"]["resourceVersion"]
    assert [str(e) for e in validate_job_update(new, old)][:2] == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        'metadata.name: Invalid value: "renamed": field is immutable',
    ]


def test_full_update_runs_create_and_update_rules() -> None:
    old = stored_job()
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = -1
    rendered = [str(e) for e in validate_job_for_update(new, old)]
    assert rendered == ["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"] * 2


# --- index interval strings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "completions", "result"),
    [
        ("", 3, 0),
        ("0", 3, 1),
        ("0-2", 3, 3),
        ("0,2-4,6", 7, 5),
        (
            "1-2-3",
            5,
            'the fragment "1-2-3" violates the requirement that an index interval can have at most two parts '
            "separated by '-'",
        ),
        ("a", 5, 'cannot convert string to integer for index: "a"'),
        ("-1", 5, 'cannot convert string to integer for index: ""'),
        ("5", 5, 'too large index: "5"'),
        ("3-1", 5, "non-increasing order, previous: 3, current: 1"),
        ("2,1", 5, "non-increasing order, previous: 2, current: 1"),
        ("0-2,2", 5, "non-increasing order, previous: 2, current: 2"),
    ],
)
def test_index_interval_format(text: str, completions: int, result: int | str) -> None:
    if isinstance(result, int):
        assert validate_indexes_format(text, completions) == result
    else:
        with pytest.raises(ValueError, match="^" + __import__("re").escape(result) + "$"):
            validate_indexes_format(text, completions)


def test_overlong_succeeded_indexes() -> None:
    digits = "1" * (64 * 1024 + 1)
    job = api_job(completionMode="Indexed", completions=5, successPolicy={"rules": [{"succeededIndexes": digits}]})
    assert [(e.field, e.type.value, e.detail) for e in validate_job(job)] == [
        ("spec.successPolicy.rules[0].succeededIndexes", "FieldValueTooLong", "may not be more than 65536 bytes"),
        (
            "spec.successPolicy.rules[0].succeededIndexes",
            "FieldValueInvalid",
            f'error parsing succeededIndexes: cannot convert string to integer for index: "{digits}"',
        ),
    ]


def test_update_options_can_be_pinned() -> None:
    running = stored_job()
    new = copy.deepcopy(running)
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    required = {"nodeSelectorTerms": [term]}
    new["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
    }
    assert [e.field for e in validate_job_update(new, running)] == ["spec.template"]
    assert validate_job_update(new, running, allow_mutable_scheduling_directives=True) == []
    indexed = stored_job(completionMode="Indexed", completions=4, parallelism=4)
    scaled = copy.deepcopy(indexed)
    scaled["spec"].update(completions=6, parallelism=6)
    assert validate_job_update(scaled, indexed) == []
    assert [str(e) for e in validate_job_update(scaled, indexed, allow_elastic_indexed_jobs=False)] == [
        "spec.completions: Invalid value: 6: field is immutable"
    ]


def test_composite_bad_values_render_as_json() -> None:
    """Since apimachinery's "Nicer value rendering in API errors" (2025) composite bad values print as JSON; the
    texts are the entry names of TestValidateJobCreate (pkg/apis/batch/validation/validation_test.go)."""
    success = api_job()
    success["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "1-3"}, {"succeededCount": 2}]}
    assert (
        'spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":"1-3","SucceededCount":null},'
        '{"SucceededIndexes":null,"SucceededCount":2}]}: requires indexed completion mode'
    ) in _rendered(success)
    selector = api_job()
    selector["spec"]["selector"] = {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "k", "operator": "Exists"}, {"key": "v", "operator": "In", "values": ["x"]}],
    }
    assert (
        'spec.selector: Invalid value: {"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"},'
        '{"key":"v","operator":"In","values":["x"]}]}: `selector` not auto-generated'
    ) in _rendered(selector)
