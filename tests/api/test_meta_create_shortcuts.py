"""Stop 50: `ValidateObjectMeta` with its shortcuts gives the errors it gave.

`validate_object_meta` reads its string fields inline (a path is built only for an error), matches a name (and a
generateName, masked) with the subdomain regex in place rather than through the memoised check (names are mostly
unique), passes over an absent collection, and its collections' checks pass over what is known valid: label keys
and values, annotation keys and finalizer names found valid before (sets), label values of letters and digits
alone, and owner reference lists whose JSON was found valid before (a memo). `get_str_map` finds all values
strings without a list. The plain versions are kept here; hypothesis makes metadata (valid or not, of every JSON
type, with str subclasses and strings of other scripts) and each is validated twice, so the second run takes the
shortcuts the first one filled: the same errors (rendered, bad values included), in the same order, or the same
exception, as the plain run.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_meta as V
from kjobs.api.errors import ErrorType, FieldError, too_long
from kjobs.api.validation_access import Errors, get_int, get_list, get_obj, get_str, items_of, type_error
from kjobs.api.validation_formats import is_label_value, is_qualified_name, name_is_dns_label, name_is_dns_subdomain
from tests.hypothesis_budget import examples

Invalid = ErrorType.FieldValueInvalid


def plain_labels(labels: Any, path: str, errs: Errors) -> None:
    if not labels:
        return
    for key, value in labels.items():
        for msg in is_qualified_name(key):
            errs.append(FieldError(path, Invalid, msg, key))
        for msg in is_label_value(value):
            errs.append(FieldError(path, Invalid, msg, value))


def plain_annotations(annotations: Any, path: str, errs: Errors) -> None:
    if not annotations:
        return
    total = 0
    for key, value in annotations.items():
        for msg in is_qualified_name(key.lower()):
            errs.append(FieldError(path, Invalid, msg, key))
        total += len(key.encode()) + len(value.encode())
    if total > V.TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, V.TOTAL_ANNOTATION_SIZE_LIMIT))


def plain_owner_references(refs: Any, path: str, errs: Errors) -> None:
    first_controller = ""
    for i, ref in items_of(refs, path, errs):
        item = f"{path}[{i}]"
        api_version = get_str(ref, "apiVersion", f"{item}.apiVersion", errs) or ""
        kind = get_str(ref, "kind", f"{item}.kind", errs) or ""
        name = get_str(ref, "name", f"{item}.name", errs) or ""
        uid = get_str(ref, "uid", f"{item}.uid", errs) or ""
        parts = api_version.split("/")
        version = parts[0] if len(parts) == 1 else parts[1] if len(parts) == 2 else ""
        group = parts[0] if len(parts) == 2 else ""
        if not version:
            errs.append(FieldError(f"{path}.apiVersion", Invalid, "version must not be empty", api_version))
        if not kind:
            errs.append(FieldError(f"{path}.kind", Invalid, "must not be empty", kind))
        if not name:
            errs.append(FieldError(f"{path}.name", Invalid, "must not be empty", name))
        if not uid:
            errs.append(FieldError(f"{path}.uid", Invalid, "must not be empty", uid))
        if group == "" and version == "v1" and kind == "Event":
            errs.append(FieldError(path, Invalid, "/v1, Kind=Event is disallowed from being an owner", ref))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                errs.append(
                    FieldError(
                        path,
                        Invalid,
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{first_controller} and {current}",
                        refs,
                    )
                )
            else:
                first_controller = current


def plain_finalizers(finalizers: Any, path: str, errs: Errors) -> None:
    names = [f for f in finalizers or [] if isinstance(f, str)]
    for i, item in enumerate(finalizers or []):
        if not isinstance(item, str):
            errs.append(FieldError(f"{path}[{i}]", Invalid, "must be of type string", item))
    for name in names:
        for msg in is_qualified_name(name):
            errs.append(FieldError(path, Invalid, msg, name))
    if "orphan" in names and "foregroundDeletion" in names:
        errs.append(FieldError(path, Invalid, "finalizer orphan and foregroundDeletion cannot be both set", names))
    for i, name in enumerate(finalizers or []):
        if not isinstance(name, str):
            continue
        msgs = is_qualified_name(name)
        for msg in msgs:
            errs.append(FieldError(f"{path}[{i}]", Invalid, msg, name))
        if not msgs and "/" not in name and name not in {"kubernetes", "orphan", "foregroundDeletion"}:
            errs.append(
                FieldError(
                    f"{path}[{i}]", Invalid, "name is neither a standard finalizer name nor is it fully qualified", name
                )
            )


def plain_str_map(parent: Any, key: str, path: str, errs: Errors) -> Any:
    value = get_obj(parent, key, path, errs)
    if value is None:
        return None
    bad = [k for k, v in value.items() if type(v) is not str]
    if not bad:
        return value
    for k in bad:
        errs.append(type_error(f"{path}[{k}]", value[k], "string"))
    return {k: v for k, v in value.items() if type(v) is str}


def plain_collections(meta: Any, path: str, errs: Errors, stored: Any, finalizers: Any = V._READ) -> None:
    if stored is None:
        stored = {}
    value = meta.get("labels")
    if value is None or value is not stored.get("labels"):
        plain_labels(plain_str_map(meta, "labels", f"{path}.labels", errs), f"{path}.labels", errs)
    value = meta.get("annotations")
    if value is None or value is not stored.get("annotations"):
        plain_annotations(plain_str_map(meta, "annotations", f"{path}.annotations", errs), f"{path}.annotations", errs)
    value = meta.get("ownerReferences")
    if value is None or value is not stored.get("ownerReferences"):
        refs_path = f"{path}.ownerReferences"
        plain_owner_references(get_list(meta, "ownerReferences", refs_path, errs), refs_path, errs)
    value = meta.get("finalizers")
    if value is None or value is not stored.get("finalizers"):
        if finalizers is V._READ:
            finalizers = get_list(meta, "finalizers", f"{path}.finalizers", errs)
        plain_finalizers(finalizers, f"{path}.finalizers", errs)


def plain_object_meta(meta: Any, *, namespaced: bool, path: str, name_fn: Any, stored: Any) -> list[FieldError]:
    errs: Errors = []
    if type(meta) is not dict:
        return [FieldError(path, Invalid, "must be of type object", meta)]
    generate_name = get_str(meta, "generateName", f"{path}.generateName", errs) or ""
    if generate_name:
        for msg in name_fn(generate_name, True):
            errs.append(FieldError(f"{path}.generateName", Invalid, msg, generate_name))
    name = get_str(meta, "name", f"{path}.name", errs) or ""
    if not name:
        errs.append(FieldError(f"{path}.name", ErrorType.FieldValueRequired, "name or generateName is required"))
    else:
        for msg in name_fn(name, False):
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))
    namespace = get_str(meta, "namespace", f"{path}.namespace", errs) or ""
    if namespaced:
        if not namespace:
            errs.append(FieldError(f"{path}.namespace", ErrorType.FieldValueRequired))
        else:
            for msg in name_is_dns_label(namespace, False):
                errs.append(FieldError(f"{path}.namespace", Invalid, msg, namespace))
    elif namespace:
        errs.append(FieldError(f"{path}.namespace", ErrorType.FieldValueForbidden, "not allowed on this type"))
    V.validate_nonnegative(get_int(meta, "generation", f"{path}.generation", errs, bits=64), f"{path}.generation", errs)
    plain_collections(meta, path, errs, stored)
    return errs


class Text(str):
    """A str subclass: the checks that test `type(x) is str` tell it apart, the memoised ones do not."""


WORDS = [
    "",
    "a",
    "job-1",
    "0123",
    "A" * 63,
    "A" * 64,
    "a_b.c",
    "-a",
    "Bad Name",
    "x" * 70,
    "Ünï",
    "é" * 40,
    "kubernetes",
    "orphan",
    "foregroundDeletion",
    "kubernetes.io/x",
    "batch.kubernetes.io/job-tracking",
    "example.com/a/b",
    "bench-5-",
    "bench-5-qj6l8",
    "default",
    "a" * 253,
    "a" * 254,
    "a" * 252 + "-",
    "a" * 253 + "-",
    "a.b",
    "a..b",
    "a.-b",
    "a.-",
    ".a",
    "a-",
    "-",
    "ab.c-",
    "a" * 63,  # a namespace (a DNS label, matched in place since stop 52) at its limit and past it
    "a" * 64,
    "a\n",
    "A",
]
TEXT = st.one_of(st.sampled_from(WORDS), st.sampled_from(WORDS).map(Text), st.text(max_size=6))
VALUE = st.one_of(st.none(), TEXT, st.integers(-1, 3), st.booleans(), st.lists(TEXT, max_size=2), st.just({}))
REF = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.one_of(st.sampled_from(["batch/v1", "", "v1", "a/b/c"]), VALUE),
        "kind": st.one_of(st.sampled_from(["Job", "Event", ""]), VALUE),
        "name": TEXT,
        "uid": st.one_of(st.sampled_from(["u1", "u2", ""]), VALUE),
        "controller": st.one_of(st.booleans(), st.just(1)),
        "blockOwnerDeletion": st.booleans(),
    },
)
META = st.fixed_dictionaries(
    {},
    optional={
        "generateName": st.one_of(TEXT, VALUE),
        "name": st.one_of(TEXT, VALUE),
        "namespace": st.one_of(TEXT, VALUE),
        "generation": st.one_of(st.integers(-2, 3), st.just(2**63), st.just(1.0), st.booleans(), st.none()),
        "labels": st.one_of(st.dictionaries(TEXT, st.one_of(TEXT, VALUE), max_size=4), VALUE),
        "annotations": st.one_of(st.dictionaries(TEXT, st.one_of(TEXT, VALUE), max_size=3), VALUE),
        "ownerReferences": st.one_of(st.lists(st.one_of(REF, VALUE), max_size=3), VALUE),
        "finalizers": st.one_of(st.lists(st.one_of(TEXT, VALUE), max_size=3), VALUE),
    },
)


def outcome(run: Any) -> Any:
    """The errors as Kubernetes renders them (bad values included), or the exception's type."""
    try:
        return [(e, str(e)) for e in run()]
    except (TypeError, AttributeError, UnicodeEncodeError) as err:
        return type(err)


@pytest.fixture(autouse=True)
def empty_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    for known in (
        "_VALID_LABEL_KEYS",
        "_VALID_LABEL_VALUES",
        "_VALID_ANNOTATION_KEYS",
        "_VALID_FINALIZERS",
        "_VALID_OWNER_REFERENCES",
        "_VALID_GENERATE_NAMES",
        "_VALID_NAMESPACES",
    ):
        monkeypatch.setattr(V, known, set())


@settings(max_examples=examples(1500), deadline=None)
@given(
    meta=META,
    others=st.lists(META, max_size=2),
    namespaced=st.booleans(),
    path=st.sampled_from(["metadata", "spec.template.metadata"]),
    share=st.booleans(),
)
def test_object_meta_errors_as_before(
    meta: dict[str, Any], others: list[dict[str, Any]], namespaced: bool, path: str, share: bool
) -> None:
    stored = {k: v for k, v in meta.items() if k in ("labels", "finalizers")} if share else None
    for other in others:  # what earlier objects left in the shortcuts
        V.validate_object_meta(copy.deepcopy(other), namespaced=namespaced)
    plain = outcome(
        lambda: plain_object_meta(meta, namespaced=namespaced, path=path, name_fn=name_is_dns_subdomain, stored=stored)
    )
    for _ in range(2):  # the second run takes what the first found valid
        got = outcome(lambda: V.validate_object_meta(meta, namespaced=namespaced, path=path, stored=stored))
        assert got == plain


@settings(max_examples=examples(500), deadline=None)
@given(meta=META, old=META)
def test_object_meta_update_collections_as_before(meta: dict[str, Any], old: dict[str, Any]) -> None:
    """The update's collections (none shared here: each is walked) give the plain collections' errors."""
    for _ in range(2):
        got = outcome(lambda: V.validate_object_meta_update(meta, old))
        with pytest.MonkeyPatch.context() as m:
            m.setattr(V, "_validate_meta_collections", plain_collections)
            plain = outcome(lambda: V.validate_object_meta_update(meta, old))
        assert got == plain


def test_shortcuts_fill_and_are_taken() -> None:
    """A Job pod's metadata fills the sets and the memo, and a second pod's (another index) is passed over by them:
    the checks of what is known valid are not called again."""
    uid = "60a659cd-9590-439c-9a54-1e76e2969589"

    def pod_meta(index: int) -> dict[str, Any]:
        return {
            "generateName": f"bench-{index}-",
            "name": f"bench-{index}-qj6l8",
            "namespace": "default",
            "labels": {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-completion-index": str(index),
            },
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
            "finalizers": ["batch.kubernetes.io/job-tracking"],
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "bench", "uid": uid, "controller": True}
            ],
        }

    assert V.validate_object_meta(pod_meta(0), namespaced=True) == []
    assert {"batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-completion-index"} == V._VALID_LABEL_KEYS
    assert {uid, "0"} == V._VALID_LABEL_VALUES
    assert {"batch.kubernetes.io/job-tracking"} == V._VALID_FINALIZERS
    assert len(V._VALID_OWNER_REFERENCES) == 1
    calls: list[str] = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(V, "_validate_label", lambda *a: calls.append("label"))
        m.setattr(V, "is_qualified_name", lambda name: calls.append(name) or ())
        m.setattr(V, "_walk_owner_references", lambda *a: calls.append("refs"))
        m.setattr(V, "_walk_finalizers", lambda *a: calls.append("finalizers"))
        assert V.validate_object_meta(pod_meta(1296), namespaced=True) == []
    assert calls == []


@pytest.mark.parametrize(
    "meta",
    [
        {"name": "x", "labels": {"a": "A" * 64}},  # letters and digits, but too long
        {"name": "x", "finalizers": ["orphan", "foregroundDeletion"]},  # each known valid, not both
        {
            "name": "x",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Job", "name": "a", "uid": "u", "controller": True}] * 2,
        },
        {  # the JSON of a valid list, but a name of another type
            "name": "x",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Job", "name": Text("a"), "uid": "u", "controller": True}],
        },
        {"name": "x", "finalizers": [Text("orphan"), Text("foregroundDeletion")]},
        # names the regex matches, but too long (a generateName masked: its last '-' read as a letter)
        {"name": "a" * 254},
        {"generateName": "a" * 253 + "-", "name": "x"},
    ],
)
def test_what_is_known_valid_does_not_pass_an_invalid_whole(meta: dict[str, Any]) -> None:
    valid = {
        "name": "x",
        "labels": {"a": "b"},
        "finalizers": ["orphan", "foregroundDeletion", "kubernetes"][:1],
        "ownerReferences": [{"apiVersion": "v1", "kind": "Job", "name": "a", "uid": "u", "controller": True}],
    }
    assert V.validate_object_meta(valid, namespaced=False) == []
    V.validate_object_meta({"name": "y", "finalizers": ["foregroundDeletion"]}, namespaced=False)
    got = V.validate_object_meta(meta, namespaced=False)
    plain = plain_object_meta(meta, namespaced=False, path="metadata", name_fn=name_is_dns_subdomain, stored=None)
    assert [str(e) for e in got] == [str(e) for e in plain] != []


@pytest.mark.parametrize(
    "meta",
    [
        {"name": "a" * 253},
        {"generateName": "a" * 252 + "-", "name": "a-b.c"},
        {"generateName": "a.-", "name": "x"},  # a prefix is checked with its last '-' read as a letter
        {"name": "x", "namespace": "a" * 63},
        {"name": "x", "namespace": "a-b-1"},
    ],
)
def test_names_at_the_limit_are_valid(meta: dict[str, Any]) -> None:
    namespaced = "namespace" in meta
    assert V.validate_object_meta(meta, namespaced=namespaced) == []
    plain = plain_object_meta(meta, namespaced=namespaced, path="metadata", name_fn=name_is_dns_subdomain, stored=None)
    assert plain == []


@settings(max_examples=examples(500), deadline=None)
@given(namespace=st.one_of(st.text(alphabet="ab-.A\n\u00e9", min_size=1, max_size=66), st.sampled_from(WORDS)))
def test_a_namespace_matched_in_place_has_its_errors(namespace: str) -> None:
    """The namespace, matched in place with the label regex (stop 52), has `NameIsDNSLabel`'s errors."""
    meta = {"name": "x", "namespace": namespace}
    plain = plain_object_meta(meta, namespaced=True, path="metadata", name_fn=name_is_dns_subdomain, stored=None)
    assert outcome(lambda: V.validate_object_meta(meta, namespaced=True)) == [(e, str(e)) for e in plain]
