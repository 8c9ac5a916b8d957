"""Rows of Kubernetes' affinity and topology spread validation tables, met through a Job's pod template.

From pkg/apis/core/validation/validation_test.go (v1.32–1.35): TestValidatePod's affinity rows (success and
error), TestValidatePodSpec's "populate Affinity", and TestValidateTopologySpreadConstraints
(docs/upstream-pod-validation.md lists what is ported, left out and why). A row's pod-spec fields go into a
created Job's template after defaulting, `validate_job` runs and every error must lie under
`spec.template.spec.` (see tests/api/test_upstream_pod_validation.py). Rows are asserted as upstream asserts
them (the text a TestValidatePod row expects; TestValidateTopologySpreadConstraints' exact error list) and
against the complete errors kube-apiserver renders. The end-to-end tests send a Job and Pods through the API.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError, ErrorType, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job_for_update
from kjobs.api.validation_cronjob import validate_cronjob, validate_cronjob_update
from kjobs.client.resources import JOBS, PODS
from tests.api.job_fixtures import api_job, stored_job
from tests.api.test_upstream_pod_validation import _pod, _template_errors
from tests.api.upstream_validation_support import Cause, causes, run

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden
Duplicate = ErrorType.FieldValueDuplicate
NotSupported = ErrorType.FieldValueNotSupported

NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
NODE_REQ = f"affinity.nodeAffinity.{REQ}.nodeSelectorTerms"


def _expr(key: str, operator: str, *values: str) -> Obj:
    return {"key": key, "operator": operator} | ({"values": list(values)} if values else {})


def _selector(*exprs: Obj) -> Obj:
    return {"matchExpressions": list(exprs)}


def _required_nodes(*terms: Obj) -> Obj:
    return {"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}}


def _hard(kind: str, **term: Any) -> Obj:
    return {kind: {REQ: [term]}}


def _soft(kind: str, weight: int = 10, **term: Any) -> Obj:
    return {kind: {PREF: [{"weight": weight, "podAffinityTerm": term}]}}


def _term_path(kind: str, hard: bool) -> str:
    return f"affinity.{kind}.{REQ}[0]" if hard else f"affinity.{kind}.{PREF}[0].podAffinityTerm"


def _affinity_errors(affinity: Obj) -> list[str]:
    return [str(e) for e in _template_errors(affinity=affinity)]


# --- TestValidatePod, TestValidatePodSpec: success rows ----------------------------------------------------------

_NODE_AFFINITY = {
    "nodeAffinity": {
        REQ: {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [_expr("key2", "In", "value1", "value2")],
                    "matchFields": [_expr("metadata.name", "In", "host1")],
                }
            ]
        },
        PREF: [{"weight": 10, "preference": {"matchExpressions": [_expr("foo", "In", "bar")]}}],
    }
}
# A selector as the API leaves it after merging matchLabelKeys (key2 In) and mismatchLabelKeys (key3 NotIn).
_MERGED = _selector(
    _expr("key", "NotIn", "value1", "value2"), _expr("key2", "In", "value1"), _expr("key3", "NotIn", "value1")
)
_MERGED_TERM: Obj = {
    "labelSelector": _MERGED,
    "topologyKey": "k8s.io/zone",
    "matchLabelKeys": ["key2"],
    "mismatchLabelKeys": ["key3"],
}


@pytest.mark.parametrize(
    "affinity",
    [
        pytest.param(_NODE_AFFINITY, id="populate Affinity"),
        pytest.param(_NODE_AFFINITY, id="serialized node affinity requirements"),
        pytest.param(
            {
                "nodeAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": []}]},
                    PREF: [{"weight": 10, "preference": {"matchExpressions": []}}],
                }
            },
            id="serialized node affinity requirements, II",
        ),
        pytest.param(
            {
                "podAffinity": {
                    REQ: [
                        {
                            "labelSelector": _selector(_expr("key2", "In", "value1", "value2")),
                            "topologyKey": "zone",
                            "namespaces": ["ns"],
                            "namespaceSelector": _selector(_expr("key", "In", "value1", "value2")),
                        }
                    ],
                    PREF: [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "labelSelector": _selector(_expr("key2", "NotIn", "value1", "value2")),
                                "namespaces": ["ns"],
                                "topologyKey": "region",
                            },
                        }
                    ],
                }
            },
            id="serialized pod affinity in affinity requirements in annotations",
        ),
        pytest.param(
            {
                "podAntiAffinity": {
                    REQ: [
                        {
                            "labelSelector": _selector(_expr("key2", "Exists")),
                            "topologyKey": "zone",
                            "namespaces": ["ns"],
                        }
                    ],
                    PREF: [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "labelSelector": _selector(_expr("key2", "DoesNotExist")),
                                "namespaces": ["ns"],
                                "topologyKey": "region",
                            },
                        }
                    ],
                }
            },
            id="serialized pod anti affinity with different Label Operators in affinity requirements in annotations",
        ),
        pytest.param(
            _hard("podAffinity", **_MERGED_TERM), id="MatchLabelKeys/MismatchLabelKeys in required PodAffinity"
        ),
        pytest.param(
            _soft("podAffinity", **_MERGED_TERM), id="MatchLabelKeys/MismatchLabelKeys in preferred PodAffinity"
        ),
        pytest.param(
            _hard("podAntiAffinity", **_MERGED_TERM), id="MatchLabelKeys/MismatchLabelKeys in required PodAntiAffinity"
        ),
        pytest.param(
            _soft("podAntiAffinity", **_MERGED_TERM),
            id="MatchLabelKeys/MismatchLabelKeys in preferred PodAntiAffinity",
        ),
        pytest.param(
            _hard(
                "podAffinity",
                labelSelector=_selector(
                    _expr("key", "NotIn", "value1", "value2"),
                    _expr("key2", "In", "value1"),
                    _expr("key2", "NotIn", "value1"),
                ),
                topologyKey="k8s.io/zone",
                mismatchLabelKeys=["key2"],
            ),
            id="LabelSelector can have the same key as MismatchLabelKeys",
        ),
    ],
)
def test_validate_pod_affinity_success(affinity: Obj) -> None:
    """TestValidatePod's affinity successCases and TestValidatePodSpec's "populate Affinity"."""
    assert _template_errors(affinity=affinity) == []


# --- TestValidatePod: error rows -------------------------------------------------------------------------------

_KEY_NOT_IN = _selector(_expr("key", "NotIn", "value1", "value2"))
# The selector of the "exists in both matchLabelKeys and labelSelector" rows: the merged `In` first, then the
# user's own requirement on the same key.
_KEY_TWICE = _selector(_expr("key", "In", "value1"), _expr("key", "NotIn", "value2"))


def _topology_key_rows() -> list[Any]:
    rows = []
    for kind, hard, op, row in [
        (
            "podAffinity",
            True,
            "In",
            "invalid hard pod affinity, empty topologyKey is not allowed for hard pod affinity",
        ),
        (
            "podAntiAffinity",
            True,
            "In",
            "invalid hard pod anti-affinity, empty topologyKey is not allowed for hard pod anti-affinity",
        ),
        (
            "podAffinity",
            False,
            "NotIn",
            "invalid soft pod affinity, empty topologyKey is not allowed for soft pod affinity",
        ),
        (
            "podAntiAffinity",
            False,
            "NotIn",
            "invalid soft pod anti-affinity, empty topologyKey is not allowed for soft pod anti-affinity",
        ),
    ]:
        term = {"labelSelector": _selector(_expr("key2", op, "value1", "value2")), "namespaces": ["ns"]}
        path = f"{_term_path(kind, hard)}.topologyKey"
        full = [f"{path}: Required value: can not be empty", f'{path}: Invalid value: "": name part must be non-empty']
        full.append(f'{path}: Invalid value: "": {NAME_PART}')
        rows.append(
            pytest.param(_hard(kind, **term) if hard else _soft(kind, **term), "can not be empty", full, id=row)
        )
    return rows


def _label_key_rows() -> list[Any]:
    rows = []
    for field, name in (("matchLabelKeys", "MatchLabelKeys"), ("mismatchLabelKeys", "MismatchLabelKeys")):
        for kind, hard, who in [
            ("podAffinity", False, "soft pod affinity"),
            ("podAffinity", True, "hard pod affinity"),
            ("podAntiAffinity", False, "soft pod anti-affinity"),
            ("podAntiAffinity", True, "hard pod anti-affinity"),
        ]:
            term = {"labelSelector": _KEY_NOT_IN, "topologyKey": "k8s.io/zone", field: ["/simple"]}
            full = [f'{_term_path(kind, hard)}.{field}[0]: Invalid value: "/simple": prefix part must be non-empty']
            rows.append(
                pytest.param(
                    _hard(kind, **term) if hard else _soft(kind, **term),
                    "prefix part must be non-empty",
                    full,
                    id=f"invalid {who}, key in {name} isn't correctly defined",
                )
            )
    for kind, hard, who in [
        ("podAffinity", False, "soft pod affinity"),
        ("podAffinity", True, "hard pod affinity"),
        ("podAntiAffinity", False, "soft pod anti-affinity"),
        ("podAntiAffinity", True, "hard pod anti-affinity"),
    ]:
        term = {"labelSelector": _KEY_TWICE, "topologyKey": "k8s.io/zone", "matchLabelKeys": ["key"]}
        # upstream's path: the term indexed by the key's position in matchLabelKeys (fldPath.Index(i))
        full = [f'{_term_path(kind, hard)}[0]: Invalid value: "key": exists in both matchLabelKeys and labelSelector']
        rows.append(
            pytest.param(
                _hard(kind, **term) if hard else _soft(kind, **term),
                "exists in both matchLabelKeys and labelSelector",
                full,
                id=f"invalid {who}, key exists in both matchLabelKeys and labelSelector",
            )
        )
    for kind, hard, who in [
        ("podAffinity", False, "soft pod affinity"),
        ("podAffinity", True, "hard pod affinity"),
        ("podAntiAffinity", False, "soft pod anti-affinity"),
        ("podAntiAffinity", True, "hard pod anti-affinity"),
    ]:
        term = {
            "labelSelector": _KEY_NOT_IN,
            "topologyKey": "k8s.io/zone",
            "matchLabelKeys": ["samekey"],
            "mismatchLabelKeys": ["samekey"],
        }
        full = [
            f'{_term_path(kind, hard)}.matchLabelKeys[0]: Invalid value: "samekey": '
            "exists in both matchLabelKeys and mismatchLabelKeys"
        ]
        rows.append(
            pytest.param(
                _hard(kind, **term) if hard else _soft(kind, **term),
                "exists in both matchLabelKeys and mismatchLabelKeys",
                full,
                id=f"invalid {who}, key exists in both MatchLabelKeys and MismatchLabelKeys",
            )
        )
    return rows


_ANTI_PREF = f"affinity.podAntiAffinity.{PREF}[0].podAffinityTerm"


@pytest.mark.parametrize(
    ("affinity", "expected", "full"),
    [
        pytest.param(
            _required_nodes({"matchExpressions": [{"key": "key1"}]}),
            f"spec.{NODE_REQ}[0].matchExpressions[0].operator",
            [f'{NODE_REQ}[0].matchExpressions[0].operator: Invalid value: "": not a valid selector operator'],
            id="invalid node selector requirement in node affinity, operator can't be null",
        ),
        pytest.param(
            _required_nodes({"matchExpressions": [_expr("invalid key ___@#", "Exists")]}),
            f"spec.{NODE_REQ}[0].matchExpressions[0].key",
            [f'{NODE_REQ}[0].matchExpressions[0].key: Invalid value: "invalid key ___@#": {NAME_PART}'],
            id="invalid node selector requirement in node affinity, key is invalid",
        ),
        pytest.param(
            _required_nodes({"matchFields": [_expr("metadata.name", "In", "host1", "host2")]}),
            f"spec.{NODE_REQ}[0].matchFields[0].values",
            [
                f"{NODE_REQ}[0].matchFields[0].values: Required value: must be only one value when `operator` is "
                "'In' or 'NotIn' for node field selector"
            ],
            id="invalid node field selector requirement in node affinity, more values for field selector",
        ),
        pytest.param(
            _required_nodes({"matchFields": [_expr("metadata.name", "Exists")]}),
            f"spec.{NODE_REQ}[0].matchFields[0].operator",
            [f'{NODE_REQ}[0].matchFields[0].operator: Invalid value: "Exists": not a valid selector operator'],
            id="invalid node field selector requirement in node affinity, invalid operator",
        ),
        pytest.param(
            _required_nodes({"matchFields": [_expr("metadata.namespace", "In", "ns1")]}),
            f"spec.{NODE_REQ}[0].matchFields[0].key",
            [f'{NODE_REQ}[0].matchFields[0].key: Invalid value: "metadata.namespace": not a valid field selector key'],
            id="invalid node field selector requirement in node affinity, invalid key",
        ),
        pytest.param(
            {
                "nodeAffinity": {
                    PREF: [{"weight": 199, "preference": {"matchExpressions": [_expr("foo", "In", "bar")]}}]
                }
            },
            "must be in the range 1-100",
            [f"affinity.nodeAffinity.{PREF}[0].weight: Invalid value: 199: must be in the range 1-100"],
            id="invalid preferredSchedulingTerm in node affinity, weight should be in range 1-100",
        ),
        pytest.param(
            _required_nodes(),
            f"spec.{NODE_REQ}",
            [f"{NODE_REQ}: Required value: must have at least one node selector term"],
            id="invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms must have at "
            "least one term",
        ),
        pytest.param(
            _soft(
                "podAffinity",
                weight=109,
                labelSelector=_selector(_expr("key2", "NotIn", "value1", "value2")),
                namespaces=["ns"],
                topologyKey="region",
            ),
            "must be in the range 1-100",
            [f"affinity.podAffinity.{PREF}[0].weight: Invalid value: 109: must be in the range 1-100"],
            id="invalid weight in preferredDuringSchedulingIgnoredDuringExecution in pod affinity annotations, "
            "weight should be in range 1-100",
        ),
        pytest.param(
            _soft(
                "podAntiAffinity",
                labelSelector=_selector(_expr("key2", "Exists", "value1", "value2")),
                namespaces=["ns"],
                topologyKey="region",
            ),
            f"spec.{_ANTI_PREF}.labelSelector.matchExpressions[0].values",
            [
                f"{_ANTI_PREF}.labelSelector.matchExpressions[0].values: Forbidden: may not be specified when "
                "`operator` is 'Exists' or 'DoesNotExist'"
            ],
            id="invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity annotations, "
            "values should be empty if the operator is Exists",
        ),
        pytest.param(
            _soft(
                "podAntiAffinity",
                namespaceSelector=_selector(_expr("key2", "In")),
                namespaces=["ns"],
                topologyKey="region",
            ),
            f"spec.{_ANTI_PREF}.namespaceSelector.matchExpressions[0].values",
            [
                f"{_ANTI_PREF}.namespaceSelector.matchExpressions[0].values: Required value: must be specified when "
                "`operator` is 'In' or 'NotIn'"
            ],
            id="invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, In "
            "operator must include Values",
        ),
        pytest.param(
            _soft(
                "podAntiAffinity",
                namespaceSelector=_selector(_expr("key2", "Exists", "value1", "value2")),
                namespaces=["ns"],
                topologyKey="region",
            ),
            f"spec.{_ANTI_PREF}.namespaceSelector.matchExpressions[0].values",
            [
                f"{_ANTI_PREF}.namespaceSelector.matchExpressions[0].values: Forbidden: may not be specified when "
                "`operator` is 'Exists' or 'DoesNotExist'"
            ],
            id="invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, Exists "
            "operator can not have values",
        ),
        pytest.param(
            _soft(
                "podAffinity",
                labelSelector=_selector(_expr("key2", "Exists")),
                namespaces=["INVALID_NAMESPACE"],
                topologyKey="region",
            ),
            f"spec.affinity.podAffinity.{PREF}[0].podAffinityTerm.namespace",
            [
                f'affinity.podAffinity.{PREF}[0].podAffinityTerm.namespace: Invalid value: "INVALID_NAMESPACE": '
                + DNS_LABEL
            ],
            id="invalid name space in preferredDuringSchedulingIgnoredDuringExecution in podaffinity annotations, "
            "namespace should be valid",
        ),
        *_topology_key_rows(),
        *_label_key_rows(),
        pytest.param(
            _required_nodes({"matchExpressions": [_expr("foo", "In", "-1")]}),
            f'spec.{NODE_REQ}[0].matchExpressions[0].values[0]: Invalid value: "-1": {LABEL_VALUE}',
            [f'{NODE_REQ}[0].matchExpressions[0].values[0]: Invalid value: "-1": {LABEL_VALUE}'],
            id="invalid required node affinity, value of NodeSelectorRequirement should be a valid label value",
        ),
    ],
)
def test_validate_pod_affinity_errors(affinity: Obj, expected: str, full: list[str]) -> None:
    """TestValidatePod's affinity errorCases: the errors contain the row's text (its `spec.` is the template's
    `spec.template.spec.`), and are exactly the ones kube-apiserver renders."""
    errs = _affinity_errors(affinity)
    assert expected in "; ".join(f"spec.{e}" for e in errs)
    assert errs == full


# --- TestValidateTopologySpreadConstraints ----------------------------------------------------------------------

_TSC = "topologySpreadConstraints[0]"


def _tsc(
    max_skew: int | None = 1, key: str | None = "k8s.io/zone", when: str | None = "DoNotSchedule", **more: Any
) -> Obj:
    fields = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when} | more
    return {k: v for k, v in fields.items() if v is not None}


@pytest.mark.parametrize(
    ("constraints", "want"),
    [
        pytest.param([_tsc(minDomains=3)], [], id="all required fields ok"),
        pytest.param(
            [_tsc(max_skew=None)],
            [FieldError(f"{_TSC}.maxSkew", Invalid, "must be greater than zero", 0)],
            id="missing MaxSkew",
        ),
        pytest.param(
            [_tsc(max_skew=-1)],
            [FieldError(f"{_TSC}.maxSkew", Invalid, "must be greater than zero", -1)],
            id="negative MaxSkew",
        ),
        pytest.param(
            [_tsc(when="ScheduleAnyway")], [], id="can use MinDomains with ScheduleAnyway, when MinDomains = nil"
        ),
        pytest.param(
            [_tsc(minDomains=-1)],
            [FieldError(f"{_TSC}.minDomains", Invalid, "must be greater than zero", -1)],
            id="negative minDomains is invalid",
        ),
        pytest.param(
            [_tsc(when="ScheduleAnyway", minDomains=10)],
            [
                FieldError(
                    f"{_TSC}.minDomains",
                    Invalid,
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                    10,
                )
            ],
            id="cannot use non-nil MinDomains with ScheduleAnyway",
        ),
        pytest.param(
            [_tsc(when="ScheduleAnyway", minDomains=-1)],
            [
                FieldError(f"{_TSC}.minDomains", Invalid, "must be greater than zero", -1),
                FieldError(
                    f"{_TSC}.minDomains",
                    Invalid,
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                    -1,
                ),
            ],
            id="use negative MinDomains with ScheduleAnyway(invalid)",
        ),
        pytest.param(
            [_tsc(key=None)],
            [FieldError(f"{_TSC}.topologyKey", Required, "can not be empty")],
            id="missing TopologyKey",
        ),
        pytest.param(
            [_tsc(when=None)],
            [
                FieldError(
                    f"{_TSC}.whenUnsatisfiable", NotSupported, 'supported values: "DoNotSchedule", "ScheduleAnyway"', ""
                )
            ],
            id="missing scheduling mode",
        ),
        pytest.param(
            [_tsc(when="N/A")],
            [
                FieldError(
                    f"{_TSC}.whenUnsatisfiable",
                    NotSupported,
                    'supported values: "DoNotSchedule", "ScheduleAnyway"',
                    "N/A",
                )
            ],
            id="unsupported scheduling mode",
        ),
        pytest.param(
            [_tsc(), _tsc(max_skew=2, key="k8s.io/node", when="ScheduleAnyway")],
            [],
            id="multiple constraints ok with all required fields",
        ),
        pytest.param(
            [_tsc(key=None, when="ScheduleAnyway"), _tsc(max_skew=2)],
            [FieldError(f"{_TSC}.topologyKey", Required, "can not be empty")],
            id="multiple constraints missing TopologyKey on partial ones",
        ),
        pytest.param(
            [_tsc(), _tsc(max_skew=2)],
            [FieldError(f"{_TSC}.{{topologyKey, whenUnsatisfiable}}", Duplicate, "", "{k8s.io/zone, DoNotSchedule}")],
            id="duplicate constraints",
        ),
        pytest.param(
            [_tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore")],
            [],
            id="supported policy name set on NodeAffinityPolicy and NodeTaintsPolicy",
        ),
        pytest.param(
            [_tsc(nodeAffinityPolicy="Unknown", nodeTaintsPolicy="Ignore")],
            [FieldError(f"{_TSC}.nodeAffinityPolicy", NotSupported, 'supported values: "Honor", "Ignore"', "Unknown")],
            id="unsupported policy name set on NodeAffinityPolicy",
        ),
        pytest.param(
            [_tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Unknown")],
            [FieldError(f"{_TSC}.nodeTaintsPolicy", NotSupported, 'supported values: "Honor", "Ignore"', "Unknown")],
            id="unsupported policy name set on NodeTaintsPolicy",
        ),
        pytest.param(
            [_tsc(labelSelector={}, matchLabelKeys=["/simple"])],
            [FieldError(f"{_TSC}.matchLabelKeys[0]", Invalid, "prefix part must be non-empty", "/simple")],
            id="key in MatchLabelKeys isn't correctly defined",
        ),
        pytest.param(
            [_tsc(matchLabelKeys=["foo"], labelSelector=_selector(_expr("foo", "NotIn", "value1", "value2")))],
            [
                FieldError(
                    f"{_TSC}.matchLabelKeys[0]", Invalid, "exists in both matchLabelKeys and labelSelector", "foo"
                )
            ],
            id="key exists in both matchLabelKeys and labelSelector",
        ),
        pytest.param(
            [_tsc(matchLabelKeys=["foo"])],
            [FieldError(f"{_TSC}.matchLabelKeys", Forbidden, "must not be specified when labelSelector is not set")],
            id="key in MatchLabelKeys is forbidden to be specified when labelSelector is not set",
        ),
        pytest.param(
            [_tsc(labelSelector={"matchLabels": {"NoUppercaseOrSpecialCharsLike=Equals": "foo"}})],
            [
                FieldError(
                    f"{_TSC}.labelSelector.matchLabels", Invalid, NAME_PART, "NoUppercaseOrSpecialCharsLike=Equals"
                )
            ],
            id="invalid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is "
            "false",
        ),
        pytest.param(
            [_tsc(labelSelector={"matchLabels": {"foo": "foo"}})],
            [],
            id="valid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is false",
        ),
    ],
)
def test_validate_topology_spread_constraints(constraints: list[Obj], want: list[FieldError]) -> None:
    """Upstream compares the whole error list (type, field, bad value, detail)."""
    got = _template_errors(topologySpreadConstraints=constraints)
    assert [(e.type, e.field, e.bad_value, e.detail) for e in got] == [
        (e.type, e.field, e.bad_value, e.detail) for e in want
    ]


# --- end to end: what a client sees -------------------------------------------------------------------------------

_BAD_TEMPLATE_SPEC: Obj = {
    "affinity": {
        "podAntiAffinity": {
            REQ: [{"labelSelector": {"matchLabels": {"app": "web"}}}],
            PREF: [{"weight": 101, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "kubernetes.io/hostname"}}],
        }
    },
    "topologySpreadConstraints": [
        {"maxSkew": 0, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "Sometimes"}
    ],
}
_BAD_TEMPLATE_CAUSES: list[Cause] = [
    (
        f"spec.template.spec.affinity.podAntiAffinity.{REQ}[0].topologyKey",
        "FieldValueRequired",
        "Required value: can not be empty",
    ),
    (
        f"spec.template.spec.affinity.podAntiAffinity.{REQ}[0].topologyKey",
        "FieldValueInvalid",
        'Invalid value: "": name part must be non-empty',
    ),
    (
        f"spec.template.spec.affinity.podAntiAffinity.{REQ}[0].topologyKey",
        "FieldValueInvalid",
        f'Invalid value: "": {NAME_PART}',
    ),
    (
        f"spec.template.spec.affinity.podAntiAffinity.{PREF}[0].weight",
        "FieldValueInvalid",
        "Invalid value: 101: must be in the range 1-100",
    ),
    (
        "spec.template.spec.topologySpreadConstraints[0].maxSkew",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ),
    (
        "spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable",
        "FieldValueNotSupported",
        'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
]


def _api_job(spec: Obj) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "spread", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]} | spec
            }
        },
    }


@pytest.mark.e2e
def test_job_with_bad_affinity_and_spread_is_refused_422() -> None:
    """A Job whose template kube-apiserver refuses is refused by kjobs with the same causes, in its order;
    fixed, the same Job is created."""

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as refused:
            await client.create(JOBS, "default", _api_job(_BAD_TEMPLATE_SPEC))
        assert causes(refused.value) == _BAD_TEMPLATE_CAUSES
        fixed = copy.deepcopy(_BAD_TEMPLATE_SPEC)
        fixed["affinity"]["podAntiAffinity"][REQ][0]["topologyKey"] = "kubernetes.io/hostname"
        fixed["affinity"]["podAntiAffinity"][PREF][0]["weight"] = 100
        fixed["topologySpreadConstraints"][0] |= {"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}
        created = await client.create(JOBS, "default", _api_job(fixed))
        assert created["spec"]["template"]["spec"]["affinity"] == fixed["affinity"]

    run(scenario)


@pytest.mark.e2e
def test_pod_match_label_keys_are_validated_after_the_create_merge() -> None:
    """A Pod's matchLabelKeys key becomes an `In` requirement with the Pod's label value before validation
    (`mutatePodAffinity`), so a selector that already names that key is refused — only when the Pod has the
    label — at upstream's path: the term indexed by the key's position; a selector on other keys is created
    with the merged requirement."""
    term = {
        "labelSelector": _selector(_expr("app", "NotIn", "db")),
        "topologyKey": "kubernetes.io/hostname",
        "matchLabelKeys": ["app"],
    }
    labelled = _pod(affinity={"podAffinity": {REQ: [term]}})
    labelled["metadata"]["labels"] = {"app": "web"}
    unlabelled = copy.deepcopy(labelled)
    unlabelled["metadata"] |= {"name": "unlabelled", "labels": {"tier": "web"}}
    merged = copy.deepcopy(labelled)
    merged["metadata"]["name"] = "merged"
    merged["spec"]["affinity"]["podAffinity"][REQ][0]["labelSelector"] = _selector(_expr("tier", "NotIn", "db"))

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as refused:
            await client.create(PODS, "default", labelled)
        assert causes(refused.value) == [
            (
                f"spec.affinity.podAffinity.{REQ}[0][0]",
                "FieldValueInvalid",
                'Invalid value: "app": exists in both matchLabelKeys and labelSelector',
            )
        ]
        created = await client.create(PODS, "default", unlabelled)
        assert created["spec"]["affinity"]["podAffinity"][REQ][0]["labelSelector"] == term["labelSelector"]
        created = await client.create(PODS, "default", merged)
        assert created["spec"]["affinity"]["podAffinity"][REQ][0]["labelSelector"] == _selector(
            _expr("tier", "NotIn", "db"), _expr("app", "In", "web")
        )

    run(scenario)


# --- objects stored before these rules -----------------------------------------------------------------------------


def test_job_stored_with_a_now_invalid_template_stays_updatable() -> None:
    """A Job stored before kjobs validated affinity (a SQLite store outlives an upgrade) can still have its labels,
    finalizers or owner references changed — the garbage collector patches those — because a template pod spec
    left as stored is not validated again; a changed one is."""
    old = stored_job()
    old["spec"]["template"]["spec"]["affinity"] = _hard("podAntiAffinity", labelSelector={})  # no topologyKey
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"] = {"team": "a"}
    assert validate_job_for_update(relabelled, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["template"]["spec"]["affinity"] = _hard("podAffinity", labelSelector={})
    assert [e.field for e in validate_job_for_update(changed, old) if "affinity" in e.field] == [
        f"spec.template.spec.affinity.podAffinity.{REQ}[0].topologyKey"
    ] * 6  # ValidateJob and ValidateJobUpdate each report it (Required and two label-name errors), as upstream


def test_cronjob_stored_with_a_now_invalid_job_template_stays_updatable() -> None:
    cronjob: Obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default", "resourceVersion": "1"},
        "spec": {
            "schedule": "0 3 * * *",
            "concurrencyPolicy": "Allow",
            "jobTemplate": {"spec": {"template": {"spec": api_job()["spec"]["template"]["spec"]}}},
        },
    }
    cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["topologySpreadConstraints"] = [{"maxSkew": 0}]
    relabelled = copy.deepcopy(cronjob)
    relabelled["metadata"]["labels"] = {"team": "a"}
    assert validate_cronjob_update(relabelled, cronjob) == []
    assert validate_cronjob(cronjob) != []
