"""Build-time generator for `kjobs/server/data/enums-v1.32.json` (not imported at run time).

A 1.32 kube-apiserver serves its OpenAPI with the `OpenAPIEnums` gate on (beta, default true): every field whose
Go type is a string type marked `// +enum` carries `enum` (the type's constant values, sorted) and a description
ending in a `Possible enum values:` paragraph, one line per value with its constant's comment. The schemas kjobs
ships (`schemagen`, from kubernetes-validate) come from specs written with the gate off (upstream's
hack/update-openapi-spec.sh runs `--feature-gates=...,OpenAPIEnums=false`), so they have neither; this reads the
Go source of k8s.io/api and writes, per shipped schema and property, what kube-openapi adds:

    git -C <k8s.io/api clone> archive release-1.32 | tar -x -C /tmp/api
    python -m kjobs.server.enumgen /tmp/api <commit>

The rules are kube-openapi's `pkg/generators/enum.go` and `openapi.go` (generateProperty, generateDescription):
- an enum type is `type T string` whose doc comment has a `+enum` line; its values are the constants of type T
  in every package (first one per value wins), a constant's comment is its doc comment lines joined by spaces;
- a value's line is `` - `"V"` comment`` with the constant's name trimmed off the comment's start and runs of
  whitespace collapsed; the lines are sorted, after a blank line and `Possible enum values:`;
- a field of type T or *T gets both; a `[]T` field's items and a `map[K]T` field's values get only `enum`;
- the paragraph goes through the description writer with the field's comment, so a field comment with a `---`
  line (everything after it is dropped) gets `enum` but no paragraph.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).parent / "data" / "enums-v1.32.json"
SCHEMAS = Path(__file__).parent / "data" / "schemas-v1.32.json.gz"
MODULE = "k8s.io/api/"

_TYPE = re.compile(r"^type\s+(\w+)\s+(=\s*)?([\w.]+)\s*$")
_STRUCT = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*$")
_CONST_ONE = re.compile(r"^const\s+(.*)$")
_CONST_SPEC = re.compile(r"^(\w+)\s+(?:([\w.]+)\s*)?=\s*(.+?)\s*(?://.*)?$")
_FIELD = re.compile(r"^(\w+)\s+([\w.*\[\]]+)\s+`[^`]*json:\"([^\"]*)\"")
_EMBEDDED = re.compile(r"^([\w.]+)\s+`[^`]*json:\",inline\"")
_IMPORT = re.compile(r"^(?:import\s+)?(\w+\s+)?\"([^\"]+)\"\s*$")
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_CALL = re.compile(r"^([\w.]+)\((.+)\)$")


@dataclass
class Package:
    """What one Go package declares, as far as enums need: string types, constants, struct fields, imports."""

    path: str  # relative to the module: core/v1
    imports: dict[str, str] = field(default_factory=dict)  # local name -> package path (relative if in k8s.io/api)
    strings: dict[str, list[str]] = field(default_factory=dict)  # type name -> its doc comment lines
    aliases: dict[str, str] = field(default_factory=dict)  # `type A = B`
    consts: list[tuple[str, str | None, str, list[str]]] = field(default_factory=list)  # name, type, expr, doc
    # struct name -> its fields: json name ("" for an embedded `json:",inline"` struct), Go name, Go type, doc
    structs: dict[str, list[tuple[str, str, str, list[str]]]] = field(default_factory=dict)


def _comment_text(line: str) -> str:
    text = line.strip()[2:]
    return text[1:] if text.startswith(" ") else text


def _parse_file(pkg: Package, source: str) -> None:
    doc: list[str] = []
    block: str | None = None  # "const", "import", "struct:<name>"
    depth = 0
    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("//"):
            doc.append(_comment_text(raw))
            continue
        if not line:
            doc = []
            continue
        if block is None:
            if line == "import (":
                block = "import"
            elif line.startswith("import "):
                _add_import(pkg, line)
            elif line == "const (":
                block = "const"
            elif m := _CONST_ONE.match(line):
                _add_const(pkg, m.group(1), doc)
            elif m := _STRUCT.match(line):
                block, depth = f"struct:{m.group(1)}", 1
                pkg.structs[m.group(1)] = []
            elif m := _TYPE.match(line):
                name, alias, target = m.groups()
                if alias:
                    pkg.aliases[name] = target
                elif target == "string":
                    pkg.strings[name] = doc
        elif block == "import":
            if line == ")":
                block = None
            else:
                _add_import(pkg, line)
        elif block == "const":
            if line == ")":
                block = None
            else:
                _add_const(pkg, line, doc)
        else:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                block = None
            elif depth == 1 and (m := _FIELD.match(line)):
                go_name, go_type, tag = m.groups()
                json_name = tag.split(",")[0]
                if json_name and json_name != "-":
                    pkg.structs[block.split(":", 1)[1]].append((json_name, go_name, go_type, doc))
            elif depth == 1 and (m := _EMBEDDED.match(line)):  # its fields are the struct's own (openapi-gen)
                pkg.structs[block.split(":", 1)[1]].append(("", "", m.group(1), doc))
        doc = []


def _add_import(pkg: Package, line: str) -> None:
    m = _IMPORT.match(line)
    if m:
        path = m.group(2)
        name = (m.group(1) or "").strip() or path.rsplit("/", 1)[-1]
        pkg.imports[name] = path[len(MODULE) :] if path.startswith(MODULE) else path


def _add_const(pkg: Package, spec: str, doc: list[str]) -> None:
    m = _CONST_SPEC.match(spec)
    if m:
        pkg.consts.append((m.group(1), m.group(2), m.group(3), doc))


def load(root: Path) -> dict[str, Package]:
    """Every package under `root` (a k8s.io/api tree), tests and generated files left out."""
    packages: dict[str, Package] = {}
    for path in sorted(root.rglob("*.go")):
        if path.name.endswith("_test.go") or path.name.startswith("zz_generated") or "testdata" in path.parts:
            continue
        rel = str(path.parent.relative_to(root))
        pkg = packages.setdefault(rel, Package(rel))
        _parse_file(pkg, path.read_text())
    return packages


def _qualify(pkg: Package, name: str) -> str:
    """`T` or `alias.T` as `pkgpath.T`, `=` aliases followed."""
    if "." in name:
        local, bare = name.split(".", 1)
        return f"{pkg.imports.get(local, local)}.{bare}"
    return f"{pkg.path}.{name}"


@dataclass
class Enum:
    values: dict[str, str] = field(default_factory=dict)  # value -> its description line

    def sorted_values(self) -> list[str]:
        return sorted(self.values, key=lambda v: json.dumps(v))

    def paragraph(self) -> str:
        return "Possible enum values:\n" + "\n".join(sorted(self.values.values()))


def enums(packages: dict[str, Package]) -> dict[str, Enum]:
    """Every `+enum` string type (by qualified name) with its values, as kube-openapi's parseEnums collects them."""
    found = {
        f"{p.path}.{name}": Enum()
        for p in packages.values()
        for name, doc in p.strings.items()
        if any(line.strip() == "+enum" or line.strip().startswith("+enum=") for line in doc)
    }
    values: dict[str, str] = {}  # qualified const name -> its value, for constants defined from constants

    def evaluate(p: Package, expr: str) -> tuple[str | None, str | None]:
        """(value, type) of a constant expression: a literal, `T("v")`, `T(C)` or `C`."""
        if m := _STRING.match(expr):
            return json.loads(f'"{m.group(1)}"'), None
        if m := _CALL.match(expr):
            value, _ = evaluate(p, m.group(2).strip())
            return value, _qualify(p, m.group(1))
        ref = _qualify(p, expr)
        return values.get(ref), types.get(ref)

    types: dict[str, str] = {}
    for _ in range(2):  # a constant may be defined from one in a package read later
        for p in packages.values():
            for name, go_type, expr, doc in p.consts:
                value, inferred = evaluate(p, expr)
                if value is None:
                    continue
                qualified = f"{p.path}.{name}"
                values[qualified] = value
                kind = _qualify(p, go_type) if go_type else inferred
                if kind is None:
                    continue
                types[qualified] = kind
                enum = found.get(kind)
                if enum is not None and value not in enum.values:
                    comment = re.sub(r"\s+", " ", " ".join(doc).strip().removeprefix(name).strip())
                    enum.values[value] = f" - `{json.dumps(value)}` {comment}".rstrip(" ")
    return found


def _resolve(packages: dict[str, Package], qualified: str) -> str:
    for _ in range(5):
        path, name = qualified.rsplit(".", 1)
        target = packages[path].aliases.get(name) if path in packages else None
        if target is None:
            return qualified
        qualified = _qualify(packages[path], target)
    return qualified


def _fields(packages: dict[str, Package], p: Package, struct: str) -> list[tuple[Package, str, str, list[str]]]:
    """A struct's fields with the package that declares each, embedded inline structs' fields included."""
    out: list[tuple[Package, str, str, list[str]]] = []
    for json_name, _go_name, go_type, doc in p.structs.get(struct, []):
        if json_name:
            out.append((p, json_name, go_type, doc))
            continue
        path, name = _qualify(p, go_type).rsplit(".", 1)
        if path in packages:
            out.extend(_fields(packages, packages[path], name))
    return out


def table(packages: dict[str, Package], schemas: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per shipped schema and property: `enum`, and the `paragraph` to append (or `items`/`values` for a list's or
    a map's elements). Fails loudly when a property named here is missing from the shipped schema."""
    found = enums(packages)
    out: dict[str, dict[str, Any]] = {}
    for p in packages.values():
        for struct in p.structs:
            schema_name = "io.k8s.api." + p.path.replace("/", ".") + "." + struct
            if schema_name not in schemas:
                continue
            props = schemas[schema_name].get("properties", {})
            for owner, json_name, go_type, doc in _fields(packages, p, struct):
                where = "value"
                bare = go_type.lstrip("*")
                if bare.startswith("[]"):
                    where, bare = "items", bare[2:].lstrip("*")
                elif bare.startswith("map["):
                    where, bare = "values", bare.split("]", 1)[1].lstrip("*")
                enum = found.get(_resolve(packages, _qualify(owner, bare)))
                if enum is None or not enum.values:
                    continue
                if json_name not in props:
                    raise SystemExit(f"{schema_name}.{json_name}: not in the shipped schema")
                entry: dict[str, Any] = {"enum": enum.sorted_values()}
                if where != "value":
                    entry["in"] = where
                elif not any(line == "---" for line in doc):
                    entry["paragraph"] = enum.paragraph()
                out.setdefault(schema_name, {})[json_name] = entry
    return dict(sorted(out.items()))


def main() -> None:
    """Read a k8s.io/api tree (argv[1]) at a commit (argv[2], recorded) and write the enum table."""
    root, commit = Path(sys.argv[1]), sys.argv[2]
    schemas = json.loads(gzip.decompress(SCHEMAS.read_bytes()))
    found = table(load(root), schemas)
    result = {"source": f"k8s.io/api {commit}", "schemas": found}
    OUTPUT.write_text(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    count = sum(len(v) for v in found.values())
    print(f"{count} properties in {len(found)} schemas -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
