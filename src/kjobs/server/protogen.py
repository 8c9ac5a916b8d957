"""Build-time generator for `kjobs/server/data/protobuf-v1.32.json` (not imported at run time).

kubectl sends some creates as `application/vnd.kubernetes.protobuf` with no JSON fallback (`create namespace`,
`create priorityclass`, `create poddisruptionbudget`, `create job`, `debug --copy-to`). Reading them needs, for
every message a served kind can hold, each field's number, wire type and JSON form. Two sources in the
Kubernetes 1.32 API modules give that, and neither alone suffices:

* `generated.proto` (k8s.io/api, k8s.io/apimachinery): the messages, field numbers and field types;
* the Go structs in the same packages (`types.go`): each field's JSON name (its `json:` tag), whether it is
  inlined in JSON though nested in protobuf (`json:",inline"`, e.g. `Volume.VolumeSource`), and whether it is a
  pointer (Go's protobuf marshalling writes every non-pointer field, zero or not, so only a pointer's zero is
  a value the client set: `backoffLimit: 0`).

The closure of the messages reachable from every kind in `schemas-v1.32.json.gz` is written as one compact
table. Regenerate with checkouts of both modules at v0.32.0:

    git clone -b v0.32.0 --depth 1 https://github.com/kubernetes/api
    git clone -b v0.32.0 --depth 1 https://github.com/kubernetes/apimachinery
    python -m kjobs.server.protogen api apimachinery

Table format: `roots` maps `apiVersion/Kind` to a message; `messages` maps a message's full protobuf name to
its fields, `{number: [jsonName, type, label, flags]}`, where `type` is a scalar (`string`, `int32`, `int64`,
`bool`, `double`, `float`, `bytes`) or a message's full name, `label` is `""`, `"repeated"` or `"map"` (then
`type` is the value type; keys are strings), and `flags` holds `p` (Go pointer) and `i` (inlined in JSON).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from kjobs.server.metrics_schema import SCHEMAS as METRICS_SCHEMAS
from kjobs.server.schema import schemas

OUTPUT = Path(__file__).parent / "data" / "protobuf-v1.32.json"

_PACKAGE = re.compile(r"^package ([\w.]+);", re.M)
_MESSAGE = re.compile(r"^message (\w+) \{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(r"^\s*(optional|repeated|map<\s*string\s*,\s*([.\w]+)\s*>)\s*([.\w]*)\s+(\w+)\s*=\s*(\d+)", re.M)
_STRUCT = re.compile(r"^type (\w+) struct \{(.*?)^\}", re.M | re.S)
_TAGGED = re.compile(r"^\s*([^`/]+?)\s*`([^`]*protobuf:\"[^`]*)`", re.M)
_TAG = re.compile(r'(\w+):"([^"]*)"')
_SCALARS = {"string", "int32", "int64", "bool", "double", "float", "bytes", "uint32", "uint64"}


def proto_name(schema_name: str) -> str:
    """`io.k8s.api.core.v1.Pod` → `k8s.io.api.core.v1.Pod` (the OpenAPI and protobuf names of one type)."""
    assert schema_name.startswith("io.k8s.")
    return "k8s.io." + schema_name[len("io.k8s.") :]


def _package_dir(package: str, api: Path, apimachinery: Path) -> Path:
    if package.startswith("k8s.io.api."):
        return api.joinpath(*package[len("k8s.io.api.") :].split("."))
    assert package.startswith("k8s.io.apimachinery."), package
    return apimachinery.joinpath(*package[len("k8s.io.apimachinery.") :].split("."))


def _go_fields(directory: Path) -> dict[str, dict[int, tuple[str, str]]]:
    """Per Go struct: field number → (JSON name, flags), from the `json:` and `protobuf:` tags."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for path in sorted(directory.glob("*.go")):
        if path.name.endswith("_test.go") or path.name.startswith("zz_generated") or path.name == "generated.pb.go":
            continue
        for struct in _STRUCT.finditer(path.read_text()):
            fields = out.setdefault(struct.group(1), {})
            for decl, tags in _TAGGED.findall(struct.group(2)):
                tag = dict(_TAG.findall(tags))
                if "," not in tag.get("protobuf", ""):
                    continue  # `protobuf:"-"`: not on the wire
                number = int(tag["protobuf"].split(",")[1])
                json_name = tag.get("json", "").split(",")[0]
                words = decl.split()
                go_type = words[-1] if words else ""
                flags = ("p" if go_type.startswith("*") else "") + ("i" if ",inline" in tag.get("json", "") else "")
                fields[number] = (json_name, flags)
    return out


def _parse_proto(path: Path) -> tuple[str, dict[str, list[tuple[str, str, str, int]]]]:
    """(package, message → [(label, type, name, number)]) of one generated.proto, comments stripped."""
    text = re.sub(r"//[^\n]*", "", path.read_text())
    package = _PACKAGE.search(text)
    assert package is not None, path
    messages: dict[str, list[tuple[str, str, str, int]]] = {}
    for message in _MESSAGE.finditer(text):
        fields = []
        for label, map_value, field_type, name, number in _FIELD.findall(message.group(2)):
            if label.startswith("map"):
                fields.append(("map", map_value, name, int(number)))
            else:
                fields.append((label if label == "repeated" else "", field_type, name, int(number)))
        messages[message.group(1)] = fields
    return package.group(1), messages


def _qualify(field_type: str, package: str) -> str:
    if field_type in _SCALARS:
        return field_type
    return field_type.lstrip(".") if field_type.startswith(".") else f"{package}.{field_type}"


def generate(api: Path, apimachinery: Path) -> dict[str, Any]:
    """The table for every kind with a schema: its roots and the closure of the messages they reach."""
    roots: dict[str, str] = {}
    for name, schema in schemas().items():
        if name in METRICS_SCHEMAS:  # k8s.io/metrics' kinds: not in these modules, and served as JSON only
            continue
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            group, version, kind = gvk.get("group", ""), gvk["version"], gvk["kind"]
            roots[f"{group}/{version}/{kind}" if group else f"{version}/{kind}"] = proto_name(name)
    protos: dict[str, tuple[str, dict[str, list[tuple[str, str, str, int]]]]] = {}
    go: dict[str, dict[str, dict[int, tuple[str, str]]]] = {}
    messages: dict[str, dict[str, list[str]]] = {}
    todo = sorted(set(roots.values()))
    while todo:
        full = todo.pop()
        if full in messages:
            continue
        package, _, message = full.rpartition(".")
        if package not in protos:
            directory = _package_dir(package, api, apimachinery)
            protos[package] = _parse_proto(directory / "generated.proto")
            go[package] = _go_fields(directory)
        parsed_package, parsed = protos[package]
        assert parsed_package == package, (parsed_package, package)
        go_struct = go[package].get(message, {})
        fields: dict[str, list[str]] = {}
        for label, field_type, name, number in parsed[message]:
            qualified = _qualify(field_type, package)
            json_name, flags = go_struct.get(number, (name, ""))
            fields[str(number)] = [json_name or name, qualified, label, flags]
            if qualified not in _SCALARS:
                todo.append(qualified)
        messages[full] = fields
    return {"roots": dict(sorted(roots.items())), "messages": dict(sorted(messages.items()))}


def main() -> None:
    """Write the table from checkouts of kubernetes/api and kubernetes/apimachinery (v0.32.0) given as arguments."""
    api, apimachinery = (Path(arg) for arg in sys.argv[1:3])
    table = generate(api, apimachinery)
    lines = [
        f"{json.dumps(name)}:{json.dumps(fields, separators=(',', ':'))}" for name, fields in table["messages"].items()
    ]
    text = (
        '{"roots":'
        + json.dumps(table["roots"], separators=(",", ":"))
        + ',\n"messages":{\n'
        + ",\n".join(lines)
        + "\n}}\n"
    )
    OUTPUT.write_text(text)
    print(f"{len(table['roots'])} roots, {len(lines)} messages, {len(text)} bytes -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
