"""Stop 53: a create's metadata shortcuts give the errors (or the exception) they gave.

`validate_object_meta` passes over a `generateName` and a namespace found valid before (sets), and the
collections pass over a label map whose every pair is known valid and an annotation map whose keys are known
valid, whose values are ASCII and whose characters are too few to pass the size limit, without `get_str_map`.
The form they replaced (`get_str_map`, then `validate_labels` or `validate_annotations`; the regexes of every
`generateName` and namespace) is kept here as the oracle; hypothesis fills the sets with earlier maps and compares.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_meta as V
from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.validation_access import Errors, get_str_map
from kjobs.api.validation_formats import name_is_dns_label, name_is_dns_subdomain
from tests.hypothesis_budget import examples

Invalid = ErrorType.FieldValueInvalid


@pytest.fixture(autouse=True)
def empty_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    for known in (
        "_VALID_LABEL_KEYS",
        "_VALID_LABEL_VALUES",
        "_VALID_ANNOTATION_KEYS",
        "_VALID_GENERATE_NAMES",
        "_VALID_NAMESPACES",
    ):
        monkeypatch.setattr(V, known, set())


def stop52_collections(meta: dict[str, Any]) -> Any:
    """Stop 52's labels and annotations: each map through `get_str_map`, then its check."""
    errs: Errors = []
    try:
        V.validate_labels(get_str_map(meta, "labels", "metadata.labels", errs), "metadata.labels", errs)
        V.validate_annotations(
            get_str_map(meta, "annotations", "metadata.annotations", errs), "metadata.annotations", errs
        )
    except (TypeError, AttributeError, UnicodeEncodeError) as err:
        return type(err)
    return [(e, str(e)) for e in errs]


def stop53_collections(meta: dict[str, Any]) -> Any:
    errs: Errors = []
    try:
        V._validate_meta_collections(meta, "metadata", errs, None)
    except (TypeError, AttributeError, UnicodeEncodeError) as err:
        return type(err)
    return [(e, str(e)) for e in errs]


KEYS = ["a", "job-name", "batch.kubernetes.io/job-completion-index", "K", "\u212a", "Bad Key", "x/y/z", ""]
TEXT = st.one_of(
    st.sampled_from(["", "0", "12", "bench", "A" * 63, "A" * 64, "a b", "\u00e9", "\ud800", "-a", "x" * 70_000]),
    st.text(max_size=5),
)
VALUE = st.one_of(TEXT, st.none(), st.integers(0, 2), st.lists(TEXT, max_size=1), st.just({}))
MAP = st.one_of(st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=3)), VALUE, max_size=5), VALUE)
META = st.fixed_dictionaries({}, optional={"labels": MAP, "annotations": MAP})


@settings(max_examples=examples(1500), deadline=None)
@given(meta=META, earlier=st.lists(META, max_size=3))
def test_collections_as_stop52(meta: dict[str, Any], earlier: list[dict[str, Any]]) -> None:
    """Maps known valid in part or whole (earlier maps fill the sets), of every type, near the size limit (four
    values of 70,000 characters: 280,000 bytes when ASCII), with a key whose lower-cased form is ASCII but that is
    not (the Kelvin sign) and a lone surrogate: the same errors in the same order, or the same exception."""
    for other in earlier:
        stop53_collections(other)
    want = stop52_collections(meta)
    for _ in range(2):
        assert stop53_collections(meta) == want


def test_annotations_at_the_size_limit() -> None:
    """Known keys and ASCII values past the limit, or within it but with more characters than the shortcut
    allows, or non-ASCII: each is checked as before (the shortcut takes none of them but the small one)."""
    V._validate_meta_collections({"annotations": {"a": "0", "b": "1"}}, "metadata", [], None)
    limit = V.TOTAL_ANNOTATION_SIZE_LIMIT
    for meta in (
        {"annotations": {"a": "x" * (limit - 1), "b": "1"}},  # 256 KiB + 1 byte
        {"annotations": {"a": "x" * (limit - 2), "b": "1"}},  # exactly 256 KiB
        {"annotations": {"a": "\u00e9" * (limit // 2), "b": ""}},  # 256 KiB + 1 byte, in half as many characters
        {"annotations": {"a": "0", "b": "1"}},
    ):
        assert stop53_collections(meta) == stop52_collections(meta)
    assert stop53_collections({"annotations": {"a": "x" * (limit - 1), "b": "1"}}) != []


def test_shortcuts_fill_and_are_taken() -> None:
    """A Job pod's metadata fills the sets, and another index's pod passes over the regexes and `get_str_map`."""

    def pod_meta(index: int) -> dict[str, Any]:
        return {
            "generateName": "bench-0-",
            "name": f"bench-0-q{index}",
            "namespace": "default",
            "labels": {"job-name": "bench", "batch.kubernetes.io/job-completion-index": str(index)},
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
        }

    assert V.validate_object_meta(pod_meta(0), namespaced=True) == []
    assert {"bench-0-"} == V._VALID_GENERATE_NAMES
    assert {"default"} == V._VALID_NAMESPACES
    matched: list[str] = []
    real_subdomain, real_label = V.dns1123_subdomain_match, V.dns1123_label_match
    with pytest.MonkeyPatch.context() as m:
        m.setattr(V, "dns1123_subdomain_match", lambda s: matched.append(s) or real_subdomain(s))
        m.setattr(V, "dns1123_label_match", lambda s: matched.append(s) or real_label(s))
        m.setattr(V, "get_str_map", lambda *a: matched.append("get_str_map"))
        assert V.validate_object_meta(pod_meta(7), namespaced=True) == []
    assert matched == ["bench-0-q7"]  # the name alone: names are mostly unique


@pytest.mark.parametrize(
    ("meta", "namespaced"),
    [
        ({"generateName": "a.-", "name": "x"}, False),  # valid: its last '-' is read as a letter
        ({"generateName": "a" * 253 + "-", "name": "x"}, False),
        ({"generateName": "Bad-", "name": "x"}, False),
        ({"generateName": "bench-0-", "name": "x", "namespace": "a" * 64}, True),
        ({"generateName": "bench-0-", "name": "x", "namespace": "Default"}, True),
        ({"name": "x", "namespace": "default"}, True),
    ],
)
def test_names_known_valid_stay_exact(meta: dict[str, Any], namespaced: bool) -> None:
    """Each checked twice (the second run after the first filled the sets): the same errors as the name checks
    Kubernetes makes (`NameIsDNSSubdomain` of the prefix, `NameIsDNSLabel` of the namespace), and only a valid
    one remembered."""

    prefix, namespace = meta.get("generateName"), meta.get("namespace")
    prefix_msgs = list(name_is_dns_subdomain(prefix, True)) if prefix else []
    namespace_msgs = list(name_is_dns_label(namespace, False)) if namespace else []
    plain = [str(FieldError("metadata.generateName", Invalid, msg, prefix)) for msg in prefix_msgs]
    plain += [str(FieldError("metadata.namespace", Invalid, msg, namespace)) for msg in namespace_msgs]
    for _ in range(2):
        assert [str(e) for e in V.validate_object_meta(meta, namespaced=namespaced)] == plain
    assert (prefix in V._VALID_GENERATE_NAMES) == (bool(prefix) and not prefix_msgs)
    assert (namespace in V._VALID_NAMESPACES) == (bool(namespace) and not namespace_msgs)


def test_a_prefix_known_valid_as_a_subdomain_is_checked_by_another_name_rule() -> None:
    """A `generateName` remembered under `NameIsDNSSubdomain` is checked again by a kind whose names are DNS
    labels: the set holds what the subdomain rule passed."""
    assert V.validate_object_meta({"generateName": "a.b-", "name": "x"}, namespaced=False) == []
    got = V.validate_object_meta({"generateName": "a.b-", "name": "x"}, namespaced=False, name_fn=name_is_dns_label)
    want = [FieldError("metadata.generateName", Invalid, m, "a.b-") for m in name_is_dns_label("a.b-", True)]
    assert [str(e) for e in got] == [str(e) for e in want] != []


def test_a_lone_surrogate_still_raises() -> None:
    """A known key with a value that does not encode (a lone surrogate, built in process) raises as before."""
    V._validate_meta_collections({"annotations": {"a": "0"}}, "metadata", [], None)
    meta = {"annotations": {"a": "\ud800"}}
    assert stop52_collections(meta) is UnicodeEncodeError
    assert stop53_collections(meta) is UnicodeEncodeError
