"""Build-time generator for `kjobs/server/data/gotypes-v1.32.json` (not imported at run time).

The API server decodes a body into Go structs before anything validates it, and a value of the wrong JSON type
fails there with encoding/json's text, which names Go types: `json: cannot unmarshal string into Go struct field
JobSpec.spec.completions of type int32`, `... of type v1.RestartPolicy`, `... of type []v1.Container`. The
OpenAPI schemas (`schemagen`) do not carry those names (a named string type such as `RestartPolicy` is only
`string` there), so this reads them from the Go sources of k8s.io/api and k8s.io/apimachinery at the release's
tags, as `{"structs": {PKG.Struct: {jsonField: goType}}, "named": {PKG.Type: underlyingType}}`, with packages
written `core/v1`, `batch/v1`, `meta/v1`, `policy/v1`, ... so that equal names in two packages stay apart (the
`Event` of core/v1 and of events/v1):

    python -m kjobs.server.gotypesgen API_CHECKOUT APIMACHINERY_CHECKOUT  # git trees at v0.32.x

It writes beside it `data/goalways-v1.32.json`: per struct, the fields tagged without `omitempty`, which Go writes
at their zero value (`kjobs.server.gozero`).

The shipped file was made from the trees of k8s.io/api and k8s.io/apimachinery at tag v0.32.13 (Kubernetes
1.32), every package of `SOURCES` (the kinds kjobs serves, and the bodies of DeleteOptions, Eviction and Binding).

A Go type is kept as written, qualified with its package (`[]core/v1.Container`, `map[string]string`,
`*int32`); `kjobs.server.gotypes` renders it as Go's reflect does (`[]v1.Container`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SOURCES = {
    "core/v1": ("api", "core/v1/types.go"),
    "batch/v1": ("api", "batch/v1/types.go"),
    "meta/v1": ("apimachinery", "pkg/apis/meta/v1/types.go"),
    "policy/v1": ("api", "policy/v1/types.go"),
    "coordination/v1": ("api", "coordination/v1/types.go"),
    "scheduling/v1": ("api", "scheduling/v1/types.go"),
    "events/v1": ("api", "events/v1/types.go"),
    "authentication/v1": ("api", "authentication/v1/types.go"),
    "authorization/v1": ("api", "authorization/v1/types.go"),
    "rbac/v1": ("api", "rbac/v1/types.go"),
    "discovery/v1": ("api", "discovery/v1/types.go"),
    "storage/v1": ("api", "storage/v1/types.go"),
}
IMPORTS = {"metav1": "meta/v1", "corev1": "core/v1", "v1": "core/v1", "apiv1": "core/v1"}
"""The import aliases those files use for each other."""

OUT = Path(__file__).parent / "data" / "gotypes-v1.32.json"
OUT_ALWAYS = Path(__file__).parent / "data" / "goalways-v1.32.json"
"""Per struct, the JSON fields whose tag has no `omitempty`: encoding/json writes them even at their zero value
(`""`, `0`, `false`, `null`); read by `kjobs.server.gozero`."""

_STRUCT = re.compile(r"^type (\w+) struct \{$")
_NAMED = re.compile(r"^type (\w+) ([\w.\[\]*]+)$")
_FIELD = re.compile(r'^\t(\w+)\s+([\w.\[\]*]+)\s+`json:"([^"]*)"')
_EMBEDDED = re.compile(r'^\t([\w.]+)\s+`json:"([^"]*)"')
"""An embedded struct: promoted when `,inline`, else a field named by its tag (`metav1.ObjectMeta`)."""
_IDENT = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?")
_BUILTIN = {"string", "bool", "byte", "int", "int32", "int64", "uint", "uint32", "uint64", "float32", "float64"}


def qualify(expr: str, pkg: str) -> str:
    """`[]Container` in core/v1 → `[]core/v1.Container`; `metav1.Time` → `meta/v1.Time`; builtins unchanged;
    other packages (`resource.Quantity`, `intstr.IntOrString`, `types.UID`) as written."""

    def one(match: re.Match[str]) -> str:
        name = match.group(0)
        if "." in name:
            alias, _, rest = name.partition(".")
            return f"{IMPORTS[alias]}.{rest}" if alias in IMPORTS else name
        return name if name in _BUILTIN or name == "map" else f"{pkg}.{name}"

    return _IDENT.sub(one, expr)


def parse(
    pkg: str,
    text: str,
    structs: dict[str, dict[str, str]],
    named: dict[str, str],
    always: dict[str, set[str]] | None = None,
) -> None:
    """Every struct's JSON fields (inline embeddings recorded as `,inline` entries) and every named type; in
    `always`, per struct, its fields tagged without `omitempty`."""
    current: dict[str, str] | None = None
    name = ""
    for line in text.splitlines():
        if current is not None:
            if line == "}":
                current = None
            elif (m := _FIELD.match(line)) is not None and m.group(3).split(",")[0] not in ("", "-"):
                field, *options = m.group(3).split(",")
                current[field] = qualify(m.group(2), pkg)
                if always is not None and "omitempty" not in options:
                    always.setdefault(name, set()).add(field)
            elif (m := _EMBEDDED.match(line)) is not None:
                tag = m.group(2).split(",")[0]
                current[tag or f",inline{len(current)}"] = qualify(m.group(1), pkg)
            continue
        if (m := _STRUCT.match(line)) is not None:
            name = f"{pkg}.{m.group(1)}"
            current = structs.setdefault(name, {})
        elif (m := _NAMED.match(line)) is not None:
            named[f"{pkg}.{m.group(1)}"] = qualify(m.group(2), pkg)


def flatten(structs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Fields of inline-embedded structs merged into the embedding struct (encoding/json promotes them)."""

    def fields(name: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, expr in structs.get(name, {}).items():
            if key.startswith(",inline"):
                out.update(fields(expr))
            else:
                out[key] = expr
        return out

    return {name: fields(name) for name in structs}


def flatten_always(structs: dict[str, dict[str, str]], always: dict[str, set[str]]) -> dict[str, list[str]]:
    """`always` with the fields of inline-embedded structs merged in, as `flatten` merges them; sorted lists."""

    def fields(name: str) -> set[str]:
        out = set(always.get(name, ()))
        for key, expr in structs.get(name, {}).items():
            if key.startswith(",inline"):
                out |= fields(expr)
        return out

    return {name: sorted(found) for name in structs if (found := fields(name))}


def main(api: str, apimachinery: str) -> None:
    roots = {"api": Path(api), "apimachinery": Path(apimachinery)}
    structs: dict[str, dict[str, str]] = {}
    named: dict[str, str] = {}
    always: dict[str, set[str]] = {}
    for pkg, (repo, path) in SOURCES.items():
        parse(pkg, (roots[repo] / path).read_text(), structs, named, always)
    OUT.write_text(json.dumps({"structs": flatten(structs), "named": named}, sort_keys=True, indent=0) + "\n")
    OUT_ALWAYS.write_text(json.dumps(flatten_always(structs, always), sort_keys=True, indent=0) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
