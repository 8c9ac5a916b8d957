"""Label and field selectors: Kubernetes' grammar, matching rules and error messages."""

from __future__ import annotations

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.selectors import (
    FieldSelector,
    field_value,
    format_label_selector,
    label_selector_from_object,
    parse_field_selector,
    parse_label_selector,
    selectable_fields,
)

KEY_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _labels(**labels: str) -> dict[str, object]:
    return {"metadata": {"name": "x", "labels": {k.replace("_", "-"): v for k, v in labels.items()}}}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param("a=b", {"a": "b"}, True, id="equals"),
        pytest.param("a=b", {"a": "c"}, False, id="equals-other-value"),
        pytest.param("a=b", {}, False, id="equals-missing"),
        pytest.param("a==b", {"a": "b"}, True, id="double-equals"),
        pytest.param("a!=b", {"a": "c"}, True, id="not-equals"),
        pytest.param("a!=b", {}, True, id="not-equals-missing-key-matches"),
        pytest.param("a!=b", {"a": "b"}, False, id="not-equals-same"),
        pytest.param("a in (x,y)", {"a": "y"}, True, id="in"),
        pytest.param("a in (x,y)", {"a": "z"}, False, id="in-other"),
        pytest.param("a in (x,y)", {}, False, id="in-missing"),
        pytest.param("a notin (x)", {"a": "y"}, True, id="notin"),
        pytest.param("a notin (x)", {}, True, id="notin-missing"),
        pytest.param("a notin (x)", {"a": "x"}, False, id="notin-listed"),
        pytest.param("a", {"a": ""}, True, id="exists"),
        pytest.param("a", {"b": "1"}, False, id="exists-missing"),
        pytest.param("!a", {"b": "1"}, True, id="does-not-exist"),
        pytest.param("!a", {"a": "1"}, False, id="does-not-exist-present"),
        pytest.param("a=b,c=d", {"a": "b", "c": "d"}, True, id="and"),
        pytest.param("a=b,c=d", {"a": "b", "c": "e"}, False, id="and-one-fails"),
        pytest.param("a=", {"a": ""}, True, id="empty-value"),
        pytest.param(" a = b , !c ", {"a": "b"}, True, id="whitespace"),
        pytest.param("a in (in,notin)", {"a": "notin"}, True, id="keywords-as-values"),
        pytest.param("x in (foo,,baz)", {"x": ""}, True, id="empty-member"),
        pytest.param("a>5", {"a": "7"}, True, id="greater-than"),
        pytest.param("a<5", {"a": "7"}, False, id="less-than"),
        pytest.param("a>5", {"a": "z"}, False, id="greater-than-non-integer"),
        pytest.param(
            "batch.kubernetes.io/controller-uid=u1",
            {"batch.kubernetes.io/controller-uid": "u1"},
            True,
            id="prefixed-key",
        ),
        pytest.param("", {"a": "b"}, True, id="empty-selects-all"),
    ],
)
def test_label_selector_matches(selector: str, labels: dict[str, str], expected: bool) -> None:
    sel = parse_label_selector(selector)
    assert sel.matches({"metadata": {"labels": labels}}) is expected
    assert sel.matches_labels(labels) is expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("a in b", "unable to parse requirement: found 'b' expected: '('", id="in-without-paren"),
        pytest.param(
            "a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt", id="no-operator"
        ),
        pytest.param("a,", "found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param("a=b c", "found 'c', expected: ',' or 'end of string'", id="junk-after-value"),
        pytest.param("a in (x", "unable to parse requirement: found '', expected: ',' or ')'", id="unclosed-set"),
        pytest.param("=b", "found '=', expected: !, identifier, or 'end of string'", id="missing-key"),
        pytest.param("a=(", "unable to parse requirement: found '(', expected: identifier", id="paren-as-value"),
        pytest.param("!a=b", "found '=', expected: ',' or 'end of string'", id="not-with-value"),
        pytest.param(
            "app:monolith",
            f'unable to parse requirement: <nil>: Invalid value: "app:monolith": {KEY_NAME_PART}',
            id="invalid-key",
        ),
        pytest.param(
            "a=b c d",
            "found 'c', expected: ',' or 'end of string'",
            id="two-junk-words",
        ),
    ],
)
def test_label_selector_syntax_errors_are_kubernetes_bad_requests(selector: str, message: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_label_selector(selector)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    assert info.value.message == message


def test_invalid_label_value_names_its_path() -> None:
    with pytest.raises(ApiError) as info:
        parse_label_selector("app=a b")
    assert info.value.code == 400
    # "a b" lexes as value "a" then junk "b"; a value with a bad character gets the path values[0][key]
    with pytest.raises(ApiError) as info:
        parse_label_selector("app=-x")
    assert info.value.message.startswith('unable to parse requirement: values[0][app]: Invalid value: "-x": ')
    assert "a valid label must be an empty string" in info.value.message


def test_label_selector_renders_sorted_like_kubernetes() -> None:
    sel = parse_label_selector("z=1,a in (y,x),!m,k")
    assert str(sel) == "a in (x,y),k,!m,z=1"


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "b"}, True, id="match-labels"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "c"}, False, id="match-labels-other"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]}, {"a": "x"}, True, id="In"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {"a": "x"}, False, id="NotIn"
        ),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": "1"}, True, id="Exists"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "1"}, False, id="DoesNotExist"
        ),
        pytest.param({}, {"a": "1"}, True, id="empty-selects-everything"),
        pytest.param(None, {"a": "1"}, False, id="missing-selects-nothing"),
    ],
)
def test_label_selector_from_object(selector: dict[str, object] | None, labels: dict[str, str], expected: bool) -> None:
    assert label_selector_from_object(selector).matches_labels(labels) is expected


def test_label_selector_from_object_rejects_unknown_operator() -> None:
    with pytest.raises(ApiError) as info:
        label_selector_from_object({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    assert info.value.message == '"Gt" is not a valid label selector operator'


def test_label_selector_from_object_rejects_empty_in_set() -> None:
    with pytest.raises(ApiError) as info:
        label_selector_from_object({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert info.value.message == "values: Invalid value: for 'in', 'notin' operators, values set can't be empty"


def test_format_label_selector_is_kubectl_selector_column() -> None:
    sel = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["y", "x"]}],
    }
    assert format_label_selector(sel) == "a=1,b=2,c notin (x,y)"
    assert format_label_selector({}) == "<none>"


POD = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "node-1", "restartPolicy": "Never"},
    "status": {"phase": "Running"},
}
EVENT = {
    "metadata": {"name": "e", "namespace": "ns"},
    "involvedObject": {"kind": "Job", "name": "j", "namespace": "ns", "uid": "u1"},
    "reason": "Completed",
    "type": "Normal",
    "source": {"component": "job-controller"},
}


@pytest.mark.parametrize(
    ("selector", "obj", "expected"),
    [
        pytest.param("metadata.name=p", POD, True, id="name"),
        pytest.param("metadata.name==q", POD, False, id="name-double-equals-other"),
        pytest.param("spec.nodeName=node-1", POD, True, id="node-name"),
        pytest.param(
            "spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed", POD, True, id="drain-selector"
        ),
        pytest.param("status.phase!=Running", POD, False, id="phase-not-equals"),
        pytest.param("spec.schedulerName=", POD, True, id="absent-field-is-empty-string"),
        pytest.param(
            "involvedObject.name=j,involvedObject.namespace=ns,involvedObject.kind=Job,involvedObject.uid=u1",
            EVENT,
            True,
            id="describe-events",
        ),
        pytest.param("involvedObject.uid=u2", EVENT, False, id="event-other-uid"),
        pytest.param("source=job-controller", EVENT, True, id="event-source-is-component"),
        pytest.param("reason=Completed,type=Normal", EVENT, True, id="event-reason-type"),
        pytest.param("spec.unschedulable=false", {"metadata": {"name": "n"}}, True, id="unset-bool-reads-false"),
        pytest.param("spec.unschedulable=true", {"spec": {"unschedulable": True}}, True, id="bool-true"),
        pytest.param("status.successful=0", {"status": {}}, True, id="job-successful-defaults-to-zero"),
        pytest.param("status.successful=3", {"status": {"succeeded": 3}}, True, id="job-successful-reads-succeeded"),
        pytest.param("", POD, True, id="empty-selects-all"),
    ],
)
def test_field_selector_matches(selector: str, obj: dict[str, object], expected: bool) -> None:
    assert parse_field_selector(selector).matches(obj) is expected


def test_field_selector_escapes() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b\=c")
    assert sel.matches({"metadata": {"name": "a,b=c"}})
    assert str(sel) == r"metadata.name=a\,b\=c"


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("bad", "invalid selector: 'bad'; can't understand 'bad'", id="no-operator"),
        pytest.param("a=b=c", "invalid field selector: unescaped character in value: 61", id="unescaped-equals"),
        pytest.param(r"a=b\x", r"invalid field selector: invalid escape sequence: \x", id="bad-escape"),
    ],
)
def test_field_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_field_selector(selector)
    assert (info.value.code, info.value.message) == (400, message)


def test_unsupported_field_label_is_rejected_like_the_api_server() -> None:
    parse_field_selector("spec.nodeName=n,status.phase!=Failed").check_supported("pods")
    with pytest.raises(ApiError) as info:
        parse_field_selector("spec.nodeName=n").check_supported("jobs.batch")
    assert (info.value.code, info.value.message) == (400, "field label not supported: spec.nodeName")


def test_field_value_renders_scalars() -> None:
    obj = {"spec": {"parallelism": 3, "suspend": False, "template": {"x": 1}}}
    assert field_value(obj, "spec.parallelism") == "3"
    assert field_value(obj, "spec.suspend") == "false"
    assert field_value(obj, "spec.template") == ""
    assert FieldSelector().matches(obj)


def test_field_labels_follow_each_kinds_conversion() -> None:
    """pkg/apis/core/v1/conversion.go: a pod's `spec.host` (an old client's name) selects on `spec.nodeName` and
    `status.podIPs` is accepted; Nodes and Namespaces, whose conversions list their own labels, refuse
    `metadata.namespace` (400), as kube-apiserver does."""
    converted = parse_field_selector("spec.host=n1,status.phase=Running").converted("pods")
    assert converted.matches({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})
    assert not converted.matches({"spec": {"nodeName": "n2"}, "status": {"phase": "Running"}})
    assert "spec.host" not in selectable_fields("pods", {"spec": {"nodeName": "n1"}})
    parse_field_selector("status.podIPs=10.0.0.1").converted("pods")
    for resource in ("nodes", "namespaces"):
        parse_field_selector("metadata.name=x").converted(resource)
        with pytest.raises(ApiError) as info:
            parse_field_selector("metadata.namespace=x").converted(resource)
        assert (info.value.code, info.value.message) == (400, "field label not supported: metadata.namespace")
