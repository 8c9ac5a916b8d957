"""What Go's encoding/json would write of an object that kjobs writes otherwise: a checker, not on any write path.

kube-apiserver answers what it decoded into the Go structs of k8s.io/api, re-encoded (Go 1.23, no `omitzero`). A
non-pointer struct field is always written (`{}` at least); a field tagged without `omitempty` is written at its
zero value (`""`, `0`, `false`, `null`); a field tagged `omitempty` is dropped when empty (`""`, `0`, `false`,
`null`, `[]`, `{}` of a map), a non-pointer struct never; a field the struct lacks is dropped. `differences` lists
where an object differs from that; `zero` is the JSON of a Go type's zero value.

The tags come from `data/goalways-v1.32.json` (the fields without `omitempty`, made by `kjobs.server.gotypesgen`
from k8s.io/api v0.32.13), the types from `data/gotypes-v1.32.json`. Run it over what a server answers:

    kubectl get pods,jobs,events -A -o json | python -m kjobs.server.gozero
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

from kjobs.api.types import Obj
from kjobs.server.gotypes import ROOTS, resolve_type

_DATA = Path(__file__).parent / "data" / "goalways-v1.32.json"

_SELF_ZERO: dict[str, Any] = {
    "resource.Quantity": "0",
    "intstr.IntOrString": 0,
    "meta/v1.Time": None,
    "meta/v1.MicroTime": None,
    "meta/v1.Duration": "0s",
    "meta/v1.FieldsV1": None,
    "runtime.RawExtension": None,
}
"""The zero values of the types that encode themselves (apimachinery's `MarshalJSON`s: a zero Quantity is `"0"`, a
zero IntOrString the integer 0, a zero Time `null`, a nil RawExtension or FieldsV1 `null`)."""

_NUMBERS = {"int", "int32", "int64", "uint", "uint32", "uint64", "float32", "float64", "byte"}


@functools.cache
def always_written() -> dict[str, frozenset[str]]:
    """Per Go struct, its JSON fields tagged without `omitempty`."""
    table: dict[str, list[str]] = json.loads(_DATA.read_text())
    return {struct: frozenset(fields) for struct, fields in table.items()}


def _self(go_type: str) -> str | None:
    """The self-encoding type `go_type` is (pointers dropped), or None."""
    bare = go_type.removeprefix("*")
    if bare in _SELF_ZERO:
        return bare
    _, underlying, _ = resolve_type(bare)
    return underlying if underlying in _SELF_ZERO else None


def zero(go_type: str) -> Any:
    """The JSON Go writes for the zero value of `go_type`: `null` for a pointer, slice or map; a struct with its
    always-written fields; `""`, `0` or `false` for a scalar."""
    if go_type.startswith("*"):
        return None
    special = _self(go_type)
    if special is not None:
        return _SELF_ZERO[special]
    category, underlying, _ = resolve_type(go_type)
    if category in ("list", "map", "bytes"):
        return None
    if category == "struct":
        return _zero_struct(underlying)
    if underlying == "bool":
        return False
    return 0 if underlying in _NUMBERS else ""


@functools.cache
def _zero_struct(struct: str) -> dict[str, Any]:
    fields: dict[str, str] = resolve_type(struct)[2][1]
    always = always_written().get(struct, frozenset())
    return {field: zero(t) for field, t in fields.items() if field in always or _is_struct(t)}


@functools.cache
def zero_object(group: str, kind: str) -> Obj | None:
    """The JSON of the zero object of (API group, kind), `kind`/`apiVersion` aside (a Pod's `{"metadata":
    {"creationTimestamp": null}, "spec": {"containers": null}, "status": {}}`): what a cluster's watch bookmark
    carries (the cacher's `newFunc()`), or a strategy's cleared status. None for a kind the Go types do not know.
    Shared: copy before changing it."""
    root = ROOTS.get((group, kind))
    if root is None:
        return None
    value = zero(root)
    return value if type(value) is dict else None


def zero_status(group: str, kind: str) -> Obj:
    """A fresh copy of the zero `status` of (API group, kind) (`{}` where the Go types know none): what a strategy's
    `PrepareForCreate` that clears the status leaves, as Go writes it (a PodDisruptionBudget's four counters 0)."""
    status = (zero_object(group, kind) or {}).get("status")
    return json.loads(json.dumps(status)) if status else {}  # most kinds' is `{}`: no copy made


def _is_struct(go_type: str) -> bool:
    """A non-pointer struct field: encoding/json writes it whatever its tag."""
    return not go_type.startswith("*") and (_self(go_type) is not None or resolve_type(go_type)[0] == "struct")


def _empty(value: Any) -> bool:
    """encoding/json's `isEmptyValue` on the JSON form: what `omitempty` drops."""
    return value is None or value is False or value == 0 or value == "" or value == [] or value == {}


Difference = tuple[str, str, Any]
"""(path, what, value): `missing` (Go writes `value`), `omitted` (Go drops the field, which holds `value`),
`unknown` (the Go struct has no such field), `differs` (Go writes `value` instead: a null in a non-pointer field)."""


def differences(obj: Obj, group: str, kind: str) -> list[Difference]:
    """Where `obj`, of (API group, kind), differs from what Go's decode-then-encode gives; [] for a kind the Go
    types do not know."""
    root = ROOTS.get((group, kind))
    if root is None:
        return []
    out: list[Difference] = []
    _walk(obj, root, "", out)
    return out


def _walk(value: Any, go_type: str, path: str, out: list[Difference]) -> None:
    if value is None or _self(go_type) is not None:
        return
    category, underlying, detail = resolve_type(go_type)
    if category == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, detail, f"{path}[{index}]", out)
    elif category == "map" and isinstance(value, dict):
        for key, item in value.items():
            _walk(item, detail, f"{path}[{key}]", out)
    elif category == "struct" and isinstance(value, dict):
        _struct(value, underlying, detail[1], path, out)


def _struct(value: Obj, struct: str, fields: dict[str, str], path: str, out: list[Difference]) -> None:
    always = always_written().get(struct, frozenset())
    for field, go_type in fields.items():
        where = f"{path}.{field}"
        written = field in always or _is_struct(go_type)
        if field not in value:
            if written:
                out.append((where, "missing", zero(go_type)))
            continue
        item = value[field]
        if item is None and not go_type.startswith("*") and zero(go_type) is not None:
            out.append((where, "differs", zero(go_type)))
        elif not written and _empty(item) and not (go_type.startswith("*") and item is not None):
            out.append((where, "omitted", item))
        else:
            _walk(item, go_type, where, out)
    for field in value:
        if field not in fields:
            out.append((f"{path}.{field}", "unknown", value[field]))


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def main() -> None:
    """Print the differences of each object of the JSON object or List on stdin (`kubectl get -o json`)."""
    data = json.load(sys.stdin)
    items = data.get("items", []) if data.get("kind", "").endswith("List") else [data]
    for item in items:
        meta = item.get("metadata") or {}
        name = f"{item.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}"
        for where, what, shown in differences(item, _group(item.get("apiVersion", "")), item.get("kind", "")):
            print(f"{name}\t{where}\t{what}\t{json.dumps(shown)[:80]}")


if __name__ == "__main__":
    main()
