"""CustomResourceDefinition validation, defaulting and status (`kjobs.api.crds`), and custom objects against their
schema (`kjobs.api.crschema`).

Rows of apiextensions-apiserver's pkg/apis/apiextensions/validation/validation_test.go
`TestValidateCustomResourceDefinition`, in their v1 form (a schema per version, no top-level `version`), matched
as upstream's `validationMatch` does: the (type, field) of every error, duplicates included.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from kjobs.api import crds, crschema
from kjobs.api.errors import ErrorType

Obj = dict[str, Any]

INVALID = ErrorType.FieldValueInvalid
REQUIRED = ErrorType.FieldValueRequired
FORBIDDEN = ErrorType.FieldValueForbidden
UNSUPPORTED = ErrorType.FieldValueNotSupported

OBJECT = {"openAPIV3Schema": {"type": "object"}}
NAMES = {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"}


def _crd(versions: list[Obj], *, stored: list[str], name: str = "plural.group.com", **spec: Any) -> Obj:
    body = {"group": "group.com", "scope": "Cluster", "names": dict(NAMES), "versions": versions, **spec}
    body.setdefault("conversion", {"strategy": "None"})
    return {"metadata": {"name": name}, "spec": body, "status": {"storedVersions": stored}}


def _version(name: str, storage: bool, schema: Obj | None = None) -> Obj:
    return {"name": name, "served": True, "storage": storage, "schema": copy.deepcopy(schema or OBJECT)}


ROWS: list[tuple[str, Obj, list[tuple[ErrorType, str]]]] = [
    (
        "no_storage_version",
        _crd([_version("version", False), _version("version2", False)], stored=["version"]),
        [(INVALID, "spec.versions")],
    ),
    (
        "multiple_storage_version",
        _crd([_version("version", True), _version("version2", True)], stored=["version"]),
        [(INVALID, "spec.versions"), (INVALID, "status.storedVersions")],
    ),
    (
        "missing_storage_version_in_stored_versions",
        _crd([_version("version", False), _version("version2", True)], stored=["version"]),
        [(INVALID, "status.storedVersions")],
    ),
    (
        "empty_stored_version",
        _crd([_version("version", True)], stored=[]),
        [(INVALID, "status.storedVersions")],
    ),
    (
        "mismatched name",
        {
            "metadata": {"name": "plural.not.group.com"},
            "spec": {"group": "group.com", "names": {"plural": "plural"}},
        },
        [
            (INVALID, "status.storedVersions"),
            (INVALID, "metadata.name"),
            (INVALID, "spec.versions"),
            (REQUIRED, "spec.scope"),
            (REQUIRED, "spec.names.singular"),
            (REQUIRED, "spec.names.kind"),
            (REQUIRED, "spec.names.listKind"),
        ],
    ),
    (
        "missing values",
        {"metadata": {"name": "plural.group.com"}},
        [
            (INVALID, "status.storedVersions"),
            (INVALID, "metadata.name"),
            (INVALID, "spec.versions"),
            (REQUIRED, "spec.group"),
            (REQUIRED, "spec.scope"),
            (REQUIRED, "spec.names.plural"),
            (REQUIRED, "spec.names.singular"),
            (REQUIRED, "spec.names.kind"),
            (REQUIRED, "spec.names.listKind"),
        ],
    ),
    (
        "bad names 01",
        {
            "metadata": {"name": "plural.group"},
            "spec": {
                "group": "group",
                "scope": "foo",
                "names": {"plural": "pl()*ural", "singular": "value()*a", "kind": "value()*a", "listKind": "value()*a"},
            },
            "status": {
                "acceptedNames": {
                    "plural": "pl()*ural",
                    "singular": "value()*a",
                    "kind": "value()*a",
                    "listKind": "value()*a",
                }
            },
        },
        [
            (INVALID, "status.storedVersions"),
            (INVALID, "metadata.name"),
            (INVALID, "spec.group"),
            (UNSUPPORTED, "spec.scope"),
            (INVALID, "spec.names.plural"),
            (INVALID, "spec.names.singular"),
            (INVALID, "spec.names.kind"),
            (INVALID, "spec.names.listKind"),
            (INVALID, "spec.names.listKind"),
            (INVALID, "status.acceptedNames.plural"),
            (INVALID, "status.acceptedNames.singular"),
            (INVALID, "status.acceptedNames.kind"),
            (INVALID, "status.acceptedNames.listKind"),
            (INVALID, "status.acceptedNames.listKind"),
            (INVALID, "spec.versions"),
        ],
    ),
    (
        "bad names 02",
        {
            "metadata": {"name": "plural.group"},
            "spec": {
                "group": "group.c(*&om",
                "versions": [_version("version", True)],
                "conversion": {"strategy": "None"},
                "names": {"plural": "plural", "singular": "singular", "kind": "matching", "listKind": "matching"},
            },
            "status": {
                "acceptedNames": {
                    "plural": "plural",
                    "singular": "singular",
                    "kind": "matching",
                    "listKind": "matching",
                },
                "storedVersions": ["version"],
            },
        },
        [
            (INVALID, "metadata.name"),
            (INVALID, "spec.group"),
            (REQUIRED, "spec.scope"),
            (INVALID, "spec.names.listKind"),
            (INVALID, "status.acceptedNames.listKind"),
        ],
    ),
    (
        "additionalProperties and properties forbidden",
        _crd(
            [
                _version(
                    "version",
                    True,
                    {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "foo": {
                                    "type": "object",
                                    "properties": {"bar": {"type": "object"}},
                                    "additionalProperties": False,
                                }
                            },
                        }
                    },
                )
            ],
            stored=["version"],
        ),
        [(FORBIDDEN, "spec.versions[0].schema.openAPIV3Schema.properties[foo].additionalProperties")],
    ),
    (
        "additionalProperties without properties allowed (map[string]string)",
        _crd(
            [
                _version(
                    "version",
                    True,
                    {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"foo": {"type": "object", "additionalProperties": {"type": "string"}}},
                        }
                    },
                )
            ],
            stored=["version"],
        ),
        [],
    ),
    (
        "x-kubernetes-preserve-unknown-field: false",
        _crd(
            [
                _version(
                    "version",
                    True,
                    {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": False}},
                )
            ],
            stored=["version"],
        ),
        [(INVALID, "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields")],
    ),
    (
        "preserveUnknownFields with unstructural schema in one version",
        _crd(
            [
                _version("version", True),
                _version(
                    "version2",
                    False,
                    {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"description": "x"}, "status": {"description": "y"}},
                        }
                    },
                ),
            ],
            stored=["version"],
        ),
        [
            (REQUIRED, "spec.versions[1].schema.openAPIV3Schema.properties[spec].type"),
            (REQUIRED, "spec.versions[1].schema.openAPIV3Schema.properties[status].type"),
        ],
    ),
    (
        "bad version name",  # IsDNS1035Label on each version's name
        _crd([_version("Ver_1", True)], stored=["Ver_1"]),
        [(INVALID, "spec.versions[0].name")],
    ),
    (
        "duplicate version names",
        _crd([_version("version", True), _version("version", False)], stored=["version"]),
        [(INVALID, "spec.versions")],
    ),
    (
        "schema required in v1",
        _crd([{"name": "version", "served": True, "storage": True}], stored=["version"]),
        [(REQUIRED, "spec.versions[0].schema.openAPIV3Schema")],
    ),
    (
        "root type must be object",
        _crd([_version("version", True, {"openAPIV3Schema": {"type": "string"}})], stored=["version"]),
        [(INVALID, "spec.versions[0].schema.openAPIV3Schema.type")],
    ),
    (
        "printer column with a bad type",
        _crd(
            [
                {
                    **_version("version", True),
                    "additionalPrinterColumns": [{"name": "X", "type": "time", "jsonPath": ".spec.x"}],
                }
            ],
            stored=["version"],
        ),
        [(INVALID, "spec.versions[0].additionalPrinterColumns[0].type")],
    ),
]


@pytest.mark.parametrize(("crd", "expected"), [pytest.param(c, e, id=n) for n, c, e in ROWS])
def test_validate_custom_resource_definition(crd: Obj, expected: list[tuple[ErrorType, str]]) -> None:
    errors = crds.validate_crd(copy.deepcopy(crd))
    assert Counter((e.type, e.field) for e in errors) == Counter(expected), [str(e) for e in errors]


def test_messages_are_upstreams() -> None:
    errors = crds.validate_crd(
        {"metadata": {"name": "plural.not.group.com"}, "spec": {"group": "group", "names": {"plural": "plural"}}}
    )
    texts = {str(e) for e in errors}
    assert 'metadata.name: Invalid value: "plural.not.group.com": must be spec.names.plural+"."+spec.group' in texts
    assert 'spec.group: Invalid value: "group": should be a domain with at least one dot' in texts
    assert "spec.scope: Required value" in texts
    assert "status.storedVersions: Invalid value: []: must have at least one stored version" in texts
    structural = crds.validate_structural({"type": "object", "properties": {"a": {}}}, "x")
    assert [str(e) for e in structural] == [
        "x.properties[a].type: Required value: must not be empty for specified object fields"
    ]


def test_update_keeps_group_and_plural() -> None:
    old = _crd([_version("version", True)], stored=["version"])
    new = copy.deepcopy(old)
    new["spec"]["group"] = "other.com"
    new["metadata"]["name"] = "plural.group.com"
    fields = {(e.type, e.field) for e in crds.validate_crd_update(new, old)}
    assert (INVALID, "spec.group") in fields


def test_defaults() -> None:
    crd = {"spec": {"names": {"kind": "CronTab"}, "versions": [{"name": "v1", "storage": True}]}}
    crds.default_crd_in_place(crd)
    assert crd["spec"]["names"] == {"kind": "CronTab", "singular": "crontab", "listKind": "CronTabList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"] == {"storedVersions": ["v1"]}


def test_status_established_and_name_conflict() -> None:
    first = _crd([_version("v1", True)], stored=["v1"], name="plural.group.com")
    status = crds.computed_status(first, [], "2024-01-01T00:00:00Z")
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted"),
    ]
    assert status["acceptedNames"] == NAMES
    first["status"] = status
    second = _crd([_version("v1", True)], stored=["v1"], name="plural.group.com")
    second["metadata"]["name"] = "other.group.com"
    clash = crds.computed_status(second, [first], "2024-01-01T00:00:00Z")
    assert [(c["type"], c["status"], c["reason"]) for c in clash["conditions"]] == [
        ("NamesAccepted", "False", "PluralConflict"),
        ("Established", "False", "NotAccepted"),
    ]


SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["cronSpec"],
            "properties": {
                "cronSpec": {"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True},
            },
        }
    },
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"cronSpec": "* * * * */5"}, [], id="valid"),
        pytest.param({}, ["spec.cronSpec: Required value"], id="required"),
        pytest.param(
            {"cronSpec": "* * * * */5", "replicas": "x"},
            ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
            id="type",
        ),
        pytest.param(
            {"cronSpec": "* * * * */5", "replicas": 11},
            ["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"],
            id="maximum",
        ),
        pytest.param(
            {"cronSpec": "* * * * */5", "replicas": 0},
            ["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"],
            id="minimum",
        ),
        pytest.param(
            {"cronSpec": "* * * * */5", "mode": "c"},
            ['spec.mode: Unsupported value: "c": supported values: "a", "b"'],
            id="enum",
        ),
        pytest.param(
            {"cronSpec": "nope"},
            [
                'spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match '
                "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'"
            ],
            id="pattern",
        ),
        pytest.param({"cronSpec": "* * * * */5", "port": 80}, [], id="int-or-string"),
    ],
)
def test_custom_object_validation(spec: Obj, expected: list[str]) -> None:
    obj = {"apiVersion": "g.com/v1", "kind": "CronTab", "metadata": {"name": "x"}, "spec": spec}
    assert [str(e) for e in crschema.validate(obj, SCHEMA)] == expected


def test_pruning_and_defaulting() -> None:
    obj = {
        "apiVersion": "g.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {"cronSpec": "* * * * *", "extra": 1, "labels": {"k": "v"}, "free": {"any": {"thing": 1}}},
        "other": True,
    }
    assert crschema.unknown_fields(obj, SCHEMA) == ["other", "spec.extra"]
    crschema.prune(obj, SCHEMA)
    crschema.default(obj, SCHEMA)
    assert obj == {
        "apiVersion": "g.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {"cronSpec": "* * * * *", "labels": {"k": "v"}, "free": {"any": {"thing": 1}}, "replicas": 1},
    }


def test_invalid_regex_pattern() -> None:
    """Upstream's schema validation row "invalid regex pattern" (pkg/apiserver/schema/validation_test.go), in Go's
    words; and a pattern Go's regexp cannot read but Python's can (a lookahead) is refused as Go refuses it."""
    schema = {"type": "object", "properties": {"foo": {"type": "string", "pattern": "+"}}}
    path = "spec.versions[0].schema.openAPIV3Schema"
    assert [str(e) for e in crds.validate_structural(schema, path)] == [
        'spec.versions[0].schema.openAPIV3Schema.properties[foo].pattern: Invalid value: "+": must be a valid '
        "regular expression, but isn't: error parsing regexp: missing argument to repetition operator: `+`"
    ]
    schema["properties"]["foo"]["pattern"] = "^(?=a)"
    assert [e.detail for e in crds.validate_structural(schema, path)] == [
        "must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
    ]


def test_a_pattern_is_matched_in_linear_time() -> None:
    """`(a+)+$` against 100,000 characters: catastrophic backtracking for Python's `re`, one pass for RE2 (Go's
    regexp), so a custom object cannot hold a request (this test would not finish with `re`)."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    obj = {"apiVersion": "g.com/v1", "kind": "K", "metadata": {"name": "x"}, "s": "a" * 100_000 + "b"}
    errors = crschema.validate(obj, schema)
    assert [e.field for e in errors] == ["s"]
