"""Enums in `/openapi/v3` and `/openapi/v2`, as a 1.32 kube-apiserver serves them with `OpenAPIEnums` on.

`kjobs.server.enumgen` reads k8s.io/api's Go types the way kube-openapi's generator does (`pkg/generators/enum.go`,
`openapi.go`); its rules are checked here on small Go packages (TestParseEnums' rows, ported, and the description
rules), and the served documents on a few fields whose text a 1.32 cluster's spec has.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from kjobs.server import enumgen, openapiv2
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import client_tls, shared_pki


def _tree(root: Path, files: dict[str, str]) -> dict[str, enumgen.Package]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return enumgen.load(root)


def _values(packages: dict[str, enumgen.Package]) -> dict[str, list[str]]:
    return {name: enum.sorted_values() for name, enum in enumgen.enums(packages).items()}


FOO_ENUM = 'package foo\n\n// +enum\ntype Foo string\n\nconst (\n\tFooSame Foo = "same"\n)\n'

CASES = 'FooCase1 Foo = "case1"\n\tFooCase2 Foo = "case2"'

# kube-openapi pkg/generators/enum_test.go TestParseEnums (the `+enum` rows; `+k8s:enum` came after 1.32)
PARSE_ENUMS = {
    "value in different package": (
        {
            "foo/types.go": "package foo\n\n// +enum\ntype Foo string\n",
            "bar/types.go": 'package bar\n\nimport "k8s.io/api/foo"\n\nconst Bar foo.Foo = "bar"\n',
        },
        {"foo.Foo": ["bar"]},
    ),
    "value in same package": (
        {"foo/types.go": 'package foo\n\n// +enum\ntype Foo string\n\nconst Bar Foo = "bar"\n'},
        {"foo.Foo": ["bar"]},
    ),
    "values in same and different packages": (
        {
            "foo/types.go": FOO_ENUM,
            "bar/types.go": 'package bar\n\nimport "k8s.io/api/foo"\n\nconst FooDifferent foo.Foo = "different"\n',
        },
        {"foo.Foo": ["different", "same"]},
    ),
    "aliasing and re-exporting enum from different package": (
        {
            "foo/types.go": FOO_ENUM.replace('FooSame Foo = "same"', CASES),
            "bar/types.go": 'package bar\n\nimport "k8s.io/api/foo"\n\nconst (\n\tFooCase1 = foo.FooCase1\n'
            "\tFooCase2 = foo.Foo(foo.FooCase2)\n)\n",
        },
        {"foo.Foo": ["case1", "case2"]},
    ),
}


@pytest.mark.parametrize(("files", "expected"), list(PARSE_ENUMS.values()), ids=list(PARSE_ENUMS))
def test_parse_enums(tmp_path: Path, files: dict[str, str], expected: dict[str, list[str]]) -> None:
    assert _values(_tree(tmp_path, files)) == expected


def test_a_string_type_without_the_tag_is_no_enum(tmp_path: Path) -> None:
    source = (
        'package foo\n\n// Foo is free text.\ntype Foo string\n\n// +enum\n\ntype Bar string\n\nconst X Bar = "x"\n'
    )
    assert _values(_tree(tmp_path, {"foo/types.go": source})) == {}  # a blank line ends a doc comment


POLICY = """package foo

// +enum
type Policy string

const (
\t// PolicyZeta   is the last
\t// value,   split over lines.
\tPolicyZeta Policy = "Zeta"
\tPolicyAlpha Policy = "Alpha"
\t// Mid comes between.
\tPolicyMid = Policy("Mid")
\tUntyped = "not a Policy"
)

type Inner struct {
\t// inner's policy
\tInnerPolicy *Policy `json:"innerPolicy,omitempty"`
}

type Thing struct {
\t// The policy.
\tPolicy Policy `json:"policy"`
\t// Policies, each one of them.
\tPolicies []Policy `json:"policies,omitempty"`
\tByName map[string]Policy `json:"byName,omitempty"`
\t// Cut.
\t// ---
\t// hidden text
\tCut Policy `json:"cut"`
\tInner `json:",inline"`
\tSkipped Policy `json:"-"`
}
"""

THING_SCHEMA = {
    "properties": {
        name: {"type": "string"} for name in ("policy", "policies", "byName", "cut", "innerPolicy", "Skipped")
    }
}


def test_table_rules(tmp_path: Path) -> None:
    packages = _tree(tmp_path, {"foo/types.go": POLICY})
    table = enumgen.table(packages, {"io.k8s.api.foo.Thing": THING_SCHEMA})
    paragraph = (
        "Possible enum values:\n"
        ' - `"Alpha"`\n'  # no comment: nothing after the value
        ' - `"Mid"` Mid comes between.\n'  # a comment not starting with the constant's name is kept whole
        ' - `"Zeta"` is the last value, split over lines.'  # the name trimmed, whitespace collapsed
    )
    values = ["Alpha", "Mid", "Zeta"]
    assert table == {
        "io.k8s.api.foo.Thing": {
            "policy": {"enum": values, "paragraph": paragraph},
            "policies": {"enum": values, "in": "items"},  # a list: the items' enum, no paragraph
            "byName": {"enum": values, "in": "values"},
            "cut": {"enum": values},  # `---` drops the rest of the comment, the paragraph with it
            "innerPolicy": {"enum": values, "paragraph": paragraph},  # an inline struct's field, a pointer
        }
    }


def test_a_field_missing_from_the_shipped_schema_stops_the_build(tmp_path: Path) -> None:
    packages = _tree(tmp_path, {"foo/types.go": POLICY})
    with pytest.raises(SystemExit, match=r"io\.k8s\.api\.foo\.Thing\.policies: not in the shipped schema"):
        enumgen.table(packages, {"io.k8s.api.foo.Thing": {"properties": {"policy": {}}}})


# ------------------------------------------------------------------------------------ served documents

RESTART_POLICY = {
    "description": "Restart policy for all containers within the pod. One of Always, OnFailure, Never. In some "
    "contexts, only a subset of those values may be permitted. Default to Always. More info: "
    "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy\n\nPossible enum values:\n"
    ' - `"Always"`\n - `"Never"`\n - `"OnFailure"`',
    "enum": ["Always", "Never", "OnFailure"],
    "type": "string",
}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    store = MemoryStore()
    with (
        serve(store, app=create_app(store), pki=shared_pki()) as url,
        httpx.Client(base_url=url, timeout=30, verify=client_tls()) as c,
    ):
        yield c
    store.close()


def _v3(http: httpx.Client, key: str) -> dict[str, Any]:
    link = http.get("/openapi/v3").json()["paths"][key]["serverRelativeURL"]
    schemas: dict[str, Any] = http.get(link).json()["components"]["schemas"]
    return schemas


def test_v3_documents_carry_enums(http: httpx.Client) -> None:
    core = _v3(http, "api/v1")
    assert core["io.k8s.api.core.v1.PodSpec"]["properties"]["restartPolicy"] == RESTART_POLICY
    pvc = core["io.k8s.api.core.v1.PersistentVolumeClaimSpec"]["properties"]["accessModes"]
    assert pvc["items"]["enum"] == ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
    assert "Possible enum values" not in pvc["description"]
    # EphemeralContainerCommon's fields are EphemeralContainer's (json inline)
    pull = core["io.k8s.api.core.v1.EphemeralContainer"]["properties"]["imagePullPolicy"]
    assert pull["enum"] == ["Always", "IfNotPresent", "Never"]
    assert pull["description"].endswith(
        ' - `"Never"` means that kubelet never pulls an image, but only uses a local image. Container will fail if '
        "the image isn't present"
    )
    host_path = core["io.k8s.api.core.v1.HostPathVolumeSource"]["properties"]["type"]
    assert (
        host_path["enum"][0] == ""
        and '\n - `""` For backwards compatible, leave it empty if unset\n' in (host_path["description"])
    )

    batch = _v3(http, "apis/batch/v1")
    action = batch["io.k8s.api.batch.v1.PodFailurePolicyRule"]["properties"]["action"]
    assert action["enum"] == ["Count", "FailIndex", "FailJob", "Ignore"]
    assert action["description"].startswith("Specifies the action taken on a pod failure when the requirements")
    assert (
        'react to an unknown action by skipping the rule.\n\nPossible enum values:\n - `"Count"` This is'
        in (action["description"])
    )
    assert batch["io.k8s.api.batch.v1.JobSpec"]["properties"]["completionMode"]["enum"] == ["Indexed", "NonIndexed"]

    slices = _v3(http, "apis/discovery.k8s.io/v1")
    # AddressType's constants are AddressType(v1.IPv4Protocol)..., EndpointPort.protocol is core/v1's Protocol
    assert slices["io.k8s.api.discovery.v1.EndpointSlice"]["properties"]["addressType"]["enum"] == [
        "FQDN",
        "IPv4",
        "IPv6",
    ]
    assert slices["io.k8s.api.discovery.v1.EndpointPort"]["properties"]["protocol"]["enum"] == ["SCTP", "TCP", "UDP"]


def test_v2_definitions_carry_enums_but_not_kubernetes_validates_apiversion_and_kind(http: httpx.Client) -> None:
    defs = http.get("/openapi/v2").json()["definitions"]
    assert defs["io.k8s.api.core.v1.PodSpec"]["properties"]["restartPolicy"] == RESTART_POLICY
    job = defs["io.k8s.api.batch.v1.Job"]["properties"]
    assert "enum" not in job["apiVersion"] and "enum" not in job["kind"]
    scopes = defs["io.k8s.api.core.v1.ResourceQuotaSpec"]["properties"]["scopes"]["items"]
    assert scopes["enum"][0] == "BestEffort"


def test_v2_protobuf_encodes_enum_as_repeated_any() -> None:
    """gnostic's Schema.enum (field 20) is `repeated Any`, each Any's yaml holding one value (the whole document
    is read back with an independent reader in tests/server/test_openapi_v2.py, enums included)."""
    restart = orjson.loads(openapiv2.document().json)["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]
    encoded = openapiv2.gnostic.encode_document({"definitions": {"s": restart["restartPolicy"]}})
    for value in ("Always", "Never", "OnFailure"):
        any_yaml = b"\x12" + bytes([len(value) + 3]) + f'"{value}"\n'.encode()  # Any.yaml = field 2
        assert b"\xa2\x01" + bytes([len(any_yaml)]) + any_yaml in encoded  # field 20, length-delimited
