"""What Go's JSON decoder says of a value of the wrong type, before the API server validates anything.

kube-apiserver decodes a request body into the Go structs of k8s.io/api; a string where an int32 belongs (a
mis-indented block turning a mapping into a string, `completions: "3"`, `command: sh -c ...`) stops it there with a
400: `Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go struct field
JobSpec.spec.completions of type int32` (apiserver pkg/endpoints/handlers/create.go, `transformDecodeError`).
The text is encoding/json's `UnmarshalTypeError` (sigs.k8s.io/json's fork): the JSON kind found (`number 1.5`
for a number an integer field cannot hold), the innermost Go struct, the path of JSON field names from the root
(list indexes and map keys are not in it) and the Go type of the destination, pointers dropped. Only the first
is reported, in the order the body is read: kubectl sends a map, which Go marshals with sorted keys.

This is the one check of a body's Go types: the API server's (`ApiService._decode_check`, for every kind it
serves, a merge patch's result walked only where the patch reaches; the bodies of DeleteOptions, Eviction and
Binding), `kjobs validate`/`run`'s and kubectl's metadata decode (`metadata_type_error`).

The Go type names come from `data/gotypes-v1.32.json` (`kjobs.server.gotypesgen`). Of the types that
decode themselves, Quantity's, IntOrString's, Time's and MicroTime's errors are reproduced (a Time is parsed as Go
parses it, `kjobs.server.gotime`, and written back in place as Go writes it again: the apiserver stores what it
decoded, re-encoded); the others (Duration, RawExtension, ...) are left to the validators, as are fields the
structs lack (the strict field check's business) and the fields of kjobs' own feature gates.
"""

from __future__ import annotations

import functools
import math
import re
from copy import deepcopy
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from kjobs.api.types import Obj
from kjobs.server import gotime

_DATA = Path(__file__).parent / "data" / "gotypes-v1.32.json"

ROOTS: dict[tuple[str, str], str] = {
    ("", "Pod"): "core/v1.Pod",
    ("", "Namespace"): "core/v1.Namespace",
    ("", "Node"): "core/v1.Node",
    ("", "Event"): "core/v1.Event",
    ("", "Service"): "core/v1.Service",
    ("", "ConfigMap"): "core/v1.ConfigMap",
    ("", "Secret"): "core/v1.Secret",
    ("", "ServiceAccount"): "core/v1.ServiceAccount",
    ("", "ResourceQuota"): "core/v1.ResourceQuota",
    ("", "LimitRange"): "core/v1.LimitRange",
    ("", "Endpoints"): "core/v1.Endpoints",
    ("discovery.k8s.io", "EndpointSlice"): "discovery/v1.EndpointSlice",
    ("", "PersistentVolume"): "core/v1.PersistentVolume",
    ("", "PersistentVolumeClaim"): "core/v1.PersistentVolumeClaim",
    ("storage.k8s.io", "StorageClass"): "storage/v1.StorageClass",
    ("", "Binding"): "core/v1.Binding",
    ("batch", "Job"): "batch/v1.Job",
    ("batch", "CronJob"): "batch/v1.CronJob",
    ("events.k8s.io", "Event"): "events/v1.Event",
    ("coordination.k8s.io", "Lease"): "coordination/v1.Lease",
    ("policy", "PodDisruptionBudget"): "policy/v1.PodDisruptionBudget",
    ("policy", "Eviction"): "policy/v1.Eviction",
    ("scheduling.k8s.io", "PriorityClass"): "scheduling/v1.PriorityClass",
    ("rbac.authorization.k8s.io", "Role"): "rbac/v1.Role",
    ("rbac.authorization.k8s.io", "ClusterRole"): "rbac/v1.ClusterRole",
    ("rbac.authorization.k8s.io", "RoleBinding"): "rbac/v1.RoleBinding",
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): "rbac/v1.ClusterRoleBinding",
    ("authentication.k8s.io", "SelfSubjectReview"): "authentication/v1.SelfSubjectReview",
    ("authentication.k8s.io", "TokenReview"): "authentication/v1.TokenReview",
    ("authentication.k8s.io", "TokenRequest"): "authentication/v1.TokenRequest",
    ("authorization.k8s.io", "SelfSubjectAccessReview"): "authorization/v1.SelfSubjectAccessReview",
    ("authorization.k8s.io", "SelfSubjectRulesReview"): "authorization/v1.SelfSubjectRulesReview",
    ("authorization.k8s.io", "SubjectAccessReview"): "authorization/v1.SubjectAccessReview",
    ("authorization.k8s.io", "LocalSubjectAccessReview"): "authorization/v1.LocalSubjectAccessReview",
    ("meta.k8s.io", "DeleteOptions"): "meta/v1.DeleteOptions",
}
"""The Go struct a body of each (API group, kind) decodes into: every kind served, and the request bodies of
DeleteOptions, Eviction and Binding."""

_BY_KIND: dict[str, str] = {}
for (_group, _kind), _root in ROOTS.items():
    _BY_KIND.setdefault(_kind, _root)  # a bare `Event` is core/v1's, listed first

_SELF_DECODING = {
    "resource.Quantity",
    "intstr.IntOrString",
    "meta/v1.Time",
    "meta/v1.MicroTime",
    "meta/v1.Duration",
    "meta/v1.FieldsV1",
    "runtime.RawExtension",
}
"""Types with their own `UnmarshalJSON`, whose errors are not encoding/json's."""

_CHECKED_SELF_DECODING = {
    "resource.Quantity": "quantity",
    "intstr.IntOrString": "intorstring",
    "meta/v1.Time": "time",
    "meta/v1.MicroTime": "microtime",
}
"""Self-decoding types whose errors are reproduced, and whose values are normalized (the others are left to
the validators)."""

_CANONICAL = {
    "time": re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z"),
    "microtime": re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z"),
}
"""A Time or MicroTime already as Go writes it: nothing to do."""


def _time(value: Any, category: str, parent: tuple[Any, Any] | None) -> None:
    """`metav1.Time`/`MicroTime.UnmarshalJSON`: a JSON string Go's `time.Parse` reads, stored back as Go writes
    it (`kjobs.server.gotime`); anything else stops the decode with Go's error."""
    if not isinstance(value, str):
        raise _Abort(f"json: cannot unmarshal {_found(value)} into Go value of type string")
    if _CANONICAL[category].match(value):
        return
    try:
        normal = gotime.normalize(value, micro=category == "microtime")
    except gotime.ParseError as exc:
        raise _Abort(str(exc)) from None
    if parent is not None:
        parent[0][parent[1]] = normal


_INTS = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "int": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


@functools.cache
def _tables() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    data = orjson.loads(_DATA.read_bytes())
    named: dict[str, str] = data["named"]
    return data["structs"], {**named, "types.UID": "string"}


_PACKAGE = re.compile(r"\b[a-z]+/(v1\.)")


def render(go_type: str) -> str:
    """As Go's reflect prints a type: `[]core/v1.Container` → `[]v1.Container`, `[]byte` → `[]uint8`."""
    return _PACKAGE.sub(r"\1", go_type).replace("[]byte", "[]uint8")


def first_type_error(obj: Obj, kind: str, *, group: str | None = None, within: Obj | None = None) -> str | None:
    """encoding/json's message for the first value of `obj` (a `kind` body of API `group`; None: the kind's
    first in `ROOTS`) that its Go type cannot hold, or None (also for a kind not in `ROOTS`). Integral floats in
    integer fields (YAML `2.0`) become ints in place, as Go reads the `2` kubectl sends.

    `within`: a merge patch (strategic or JSON merge) whose result `obj` is, applied to an object that decodes
    (every write is checked). Only what the patch names can then be of a wrong type, so only that is walked:
    under a key the patch maps to an object, the keys it names; under any other key it names, the whole value
    (a list merged by key puts the patch's items at other indexes). Same answer as a walk of all of `obj`, in
    the same order (the parts not walked hold no error, saved or aborting), at the cost of the patch's size: a
    node agent's status patch does not pay for the pod's spec."""
    root = _BY_KIND.get(kind) if group is None else ROOTS.get((group, kind))
    if root is None:
        return None
    return _decode(obj, root, within)


def _decode(obj: Obj, root: str, within: Obj | None = None) -> str | None:
    saved: list[str] = []
    try:
        _walk(obj, root, "", (), None, saved, within)
    except _Abort as exc:
        return str(exc)
    return saved[0] if saved else None


KUBECTL_METADATA = "cli-runtime.metadataOnlyObject"
"""What kubectl decodes every object into before it sends it (cli-runtime pkg/resource/metadata_decoder.go):
its metadata as `metav1.ObjectMeta`, so a wrong type there is kubectl's own `unable to decode` error."""


def metadata_type_error(obj: Obj) -> str | None:
    """encoding/json's message for the first value of `obj`'s metadata that `metav1.ObjectMeta` cannot hold, as
    kubectl decodes it (`... Go struct field metadataOnlyObject.metadata.labels of type string`), or None."""
    return _decode({"metadata": deepcopy(obj.get("metadata"))}, KUBECTL_METADATA)


def _go_number(value: float) -> str:
    """A float as Go's encoding/json writes it (kubectl re-encodes what it read from YAML)."""
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _found(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _error(found: str, go_type: str, struct: str, path: tuple[str, ...]) -> str:
    if not path:
        return f"json: cannot unmarshal {found} into Go value of type {render(go_type)}"
    return f"json: cannot unmarshal {found} into Go struct field {struct}.{'.'.join(path)} of type {render(go_type)}"


@functools.cache
def _resolve(go_type: str) -> tuple[str, str, Any]:
    """(category, underlying type, detail) of a Go type, pointers and named types followed: `skip` (decodes
    itself), `bytes`, `list` (element), `map` (element), `struct` ((struct name, fields)) or `scalar`."""
    structs, named = _tables()
    if go_type == KUBECTL_METADATA:
        return "struct", go_type, ("metadataOnlyObject", {"metadata": "meta/v1.ObjectMeta"})
    if go_type.removeprefix("*") in _CHECKED_SELF_DECODING:
        return _CHECKED_SELF_DECODING[go_type.removeprefix("*")], go_type, None
    underlying = go_type.removeprefix("*")
    while underlying in named:
        if underlying in _SELF_DECODING:
            break
        underlying = named[underlying].removeprefix("*")
    if underlying in _SELF_DECODING:
        return "skip", underlying, None
    if underlying == "[]byte":
        return "bytes", underlying, None
    if underlying.startswith("[]"):
        return "list", underlying, underlying[2:]
    if underlying.startswith("map["):
        return "map", underlying, underlying[underlying.index("]") + 1 :]
    fields = structs.get(underlying)
    if fields is not None:
        return "struct", underlying, (underlying.rsplit(".", 1)[-1], fields)
    return "scalar", underlying, None


resolve_type = _resolve
"""`_resolve` for the other readers of the Go types (`kjobs.server.zerotimes`)."""


class _Abort(Exception):
    """An `UnmarshalJSON` of a self-decoding type failed: encoding/json returns its error at once, bare, ahead of
    any type error saved before it (Go's decode.go: `d.value` errors abort, `saveError` ones wait)."""


def _walk(
    value: Any,
    go_type: str,
    struct: str,
    path: tuple[str, ...],
    parent: tuple[Any, Any] | None,
    saved: list[str],
    within: Obj | None = None,
) -> None:
    """Record in `saved` the type errors of `value` as Go's decoder would, reading on after each as it does;
    `parent`: (container, key) holding `value`, to store a normalized integer back; `within`: the part of a
    merge patch at `value` (see `first_type_error`), None to walk all of `value`."""
    if value is None:
        return
    category, underlying, detail = _resolve(go_type)
    go_type = go_type.removeprefix("*")
    if category == "skip":
        return
    if category == "quantity":
        _quantity(value)
        return
    if category == "intorstring":
        _int_or_string(value, parent)
        return
    if category in _CANONICAL:
        _time(value, category, parent)
        return
    if category == "bytes":
        if not isinstance(value, str):
            saved.append(_error(_found(value), go_type, struct, path))
        return
    if category == "list":
        if not isinstance(value, list):
            saved.append(_error(_found(value), go_type, struct, path))
            return
        for i, item in enumerate(value):
            _walk(item, detail, struct, path, (value, i), saved)
        return
    if category == "map":
        if not isinstance(value, dict):
            saved.append(_error(_found(value), go_type, struct, path))
            return
        for key in sorted(value) if within is None else sorted(k for k in value if k in within):
            _walk(value[key], detail, struct, path, (value, key), saved, _part(within, key))
        return
    if category == "struct":
        if not isinstance(value, dict):
            saved.append(_error(_found(value), go_type, struct, path))
            return
        name, fields = detail
        for key in sorted(value) if within is None else sorted(k for k in value if k in within):
            field = fields.get(key)
            if field is not None:
                _walk(value[key], field, name, (*path, key), (value, key), saved, _part(within, key))
        return
    found = _scalar(value, underlying, go_type, struct, path, parent)
    if found is not None:
        saved.append(found)


def _part(within: Obj | None, key: str) -> Obj | None:
    """What a merge patch says under `key`: an object to restrict the walk to, else None (walk all of it)."""
    if within is None:
        return None
    part = within[key]
    return part if isinstance(part, dict) else None


def _quantity(value: Any) -> None:
    """`resource.Quantity.UnmarshalJSON`: the text (quotes dropped, spaces trimmed) through `ParseQuantity`, whose
    error stops the decode (apimachinery pkg/api/resource/quantity.go)."""
    from kjobs.api.quantity import ERR_FORMAT_WRONG, QuantityError, parse_quantity

    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _Abort(ERR_FORMAT_WRONG)
    try:
        parse_quantity(value.strip() if isinstance(value, str) else value)
    except QuantityError as exc:
        raise _Abort(str(exc)) from None


def _int_or_string(value: Any, parent: tuple[Any, Any] | None) -> None:
    """`intstr.IntOrString.UnmarshalJSON`: a JSON string, else `json.Unmarshal` into an int32 by a fresh decoder,
    whose error (no struct context) stops the decode (apimachinery pkg/util/intstr/intstr.go)."""
    if isinstance(value, str):
        return
    found = _scalar(value, "int32", "int32", "", (), parent)
    if found is not None:
        raise _Abort(found)


def _scalar(
    value: Any, underlying: str, go_type: str, struct: str, path: tuple[str, ...], parent: tuple[Any, Any] | None
) -> str | None:
    if underlying == "string":
        return None if isinstance(value, str) else _error(_found(value), go_type, struct, path)
    if underlying == "bool":
        return None if isinstance(value, bool) else _error(_found(value), go_type, struct, path)
    if underlying in ("float64", "float32"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else _error(_found(value), go_type, struct, path)
    if underlying in _INTS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _error(_found(value), go_type, struct, path)
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer() or abs(value) >= 1e21:
                return _error(f"number {_go_number(value)}", go_type, struct, path)
            value = int(value)
            if parent is not None:
                parent[0][parent[1]] = value
        low, high = _INTS[underlying]
        if not low <= value <= high:
            return _error(f"number {value}", go_type, struct, path)
    return None


def converter_type_error(obj: Obj, kind: str, *, group: str | None = None, within: Obj | None = None) -> str | None:
    """What the unstructured converter says of the first value of `obj` its Go type cannot hold, or None.

    A strategic merge patch's result is not decoded from JSON but converted from its map
    (`FromUnstructuredWithValidation`, apimachinery pkg/runtime/converter.go, called by the apiserver's
    handlers/patch.go `applyPatchToObject`): it stops at the first mismatch, with its own text (`cannot restore
    map from string` for `metadata.labels: "x"`, `cannot restore slice from map`, `cannot restore struct from:
    string`, `cannot convert float64 to int32`, `unrecognized type: int32` for a string where an int32
    belongs). Quantity and IntOrString decode themselves there too, with the messages `first_type_error` gives.
    Struct fields are read in sorted order (the converter reads them in declaration order: the two differ only
    for a patch with two mistyped fields). `within` as for `first_type_error`."""
    root = _BY_KIND.get(kind) if group is None else ROOTS.get((group, kind))
    if root is None:
        return None
    try:
        _convert(obj, root, within)
    except _Abort as exc:
        return str(exc)
    return None


_GO_KIND = {str: "string", bool: "bool", int: "int64", float: "float64", dict: "map", list: "slice"}


def _convert(value: Any, go_type: str, within: Obj | None) -> None:
    if value is None:
        return
    category, underlying, detail = _resolve(go_type)
    found = _GO_KIND.get(type(value), "interface")
    if category == "skip":
        return
    if category == "quantity":
        _quantity(value)
        return
    if category == "intorstring":
        _int_or_string(value, None)
        return
    if category in _CANONICAL:
        return
    if category == "bytes":
        if not isinstance(value, str | list):
            raise _Abort(f"cannot restore slice from {found}")
        return
    if category == "list":
        if not isinstance(value, list):
            raise _Abort(f"cannot restore slice from {found}")
        for item in value:
            _convert(item, detail, None)
        return
    if category in ("map", "struct"):
        if not isinstance(value, dict):
            raise _Abort(
                f"cannot restore map from {found}" if category == "map" else f"cannot restore struct from: {found}"
            )
        fields = detail[1] if category == "struct" else None
        for key in sorted(value) if within is None else sorted(k for k in value if k in within):
            field = detail if fields is None else fields.get(key)
            if field is not None:
                _convert(value[key], field, _part(within, key))
        return
    _convert_scalar(value, found, underlying, go_type.removeprefix("*"))


def _convert_scalar(value: Any, found: str, underlying: str, go_type: str) -> None:
    """converter.go `fromUnstructured` for a simple destination: an assignable or JSON-compatible convertible
    value is taken; a Go-convertible one of another JSON group is `cannot convert`; any other falls through to
    `unrecognized type: <kind>` (Go converts ints to strings but not strings to ints)."""
    kind = underlying
    if kind in ("string",):
        if found == "string":
            return
        if found == "int64":  # Go converts an integer to a string (a rune): the converter refuses it
            raise _Abort(f"cannot convert int64 to {render(go_type)}")
    elif kind == "bool":
        if found == "bool":
            return
    elif kind in _INTS or kind in ("float64", "float32"):
        if found == "int64":
            return
        if found == "float64":
            if kind in ("float64", "float32") or (math.isfinite(value) and value == math.trunc(value)):
                return
            raise _Abort(f"cannot convert float64 to {render(go_type)}")
    raise _Abort(f"unrecognized type: {kind}")


def well_typed(obj: Obj, kind: str, *, group: str | None = None, within: Obj | None = None) -> bool:
    """True when `obj` is plainly of its Go types: `first_type_error` and `converter_type_error` (same arguments)
    would both answer None and `first_type_error` would change nothing in place. False when either might find
    something (or normalize a float): the caller then asks them, which say exactly what.

    One walk instead of their two, without their sorted keys, paths and saved errors, for what nearly every
    request is: a body that decodes (a node agent's status patch walked twice cost `kjobs up` 7 % of its CPU
    over HTTP, docs/performance.md stop 37). Conservative where the two differ (an integral float, an integer
    where a string or a byte slice belongs, a scalar the converter does not know): False."""
    root = _BY_KIND.get(kind) if group is None else ROOTS.get((group, kind))
    return root is None or _plain(obj, root, within)


_PLAIN_SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "bool": (bool,),
    "float64": (int, float),
    "float32": (int, float),
    **dict.fromkeys(_INTS, (int,)),
}
"""The Python types (exactly: `type(value)`, so never a bool for a number) both checks take, per underlying
scalar type; an integer is further held to its range."""


_STR_ALONE: dict[str, bool] = {}
_BOOL_ALONE: dict[str, bool] = {}
"""Per Go type, whether `_plain` says True of every string (of every bool) by its type alone (`_alone`)."""


def _alone(go_type: str, kind: type) -> bool:
    """Whether `_plain(value, go_type, None)` is True for every value of Python type `kind` (str or bool): a
    string or bool scalar, a byte slice or an IntOrString for a string, a type that decodes itself unchecked.
    A Quantity or a time, whose text decides, is not."""
    category, underlying, _ = _resolve(go_type)
    if category == "skip":
        return True
    if category == "scalar":
        return kind in _PLAIN_SCALARS.get(underlying, ()) and kind is not int
    return kind is str and category in ("bytes", "intorstring")


_INT_SPAN: dict[str, tuple[float, float]] = {}
_NO_SPAN = (1.0, 0.0)
"""An empty range: every int goes to `_plain`."""


def _int_span(go_type: str) -> tuple[float, float]:
    """The ints `_plain(value, go_type, None)` says True of by their value alone, as a closed range: an integer
    type's range, any for a float or a type that decodes itself unchecked, an int32 for an IntOrString; empty
    where something else decides (a Quantity) or no int is plain."""
    category, underlying, _ = _resolve(go_type)
    if category == "skip":
        return (-math.inf, math.inf)
    if category == "intorstring":
        return (-(2**31), 2**31 - 1)
    if category == "scalar" and int in _PLAIN_SCALARS.get(underlying, ()):
        return _INTS.get(underlying, (-math.inf, math.inf))
    return _NO_SPAN


def _plain(value: Any, go_type: str, within: Obj | None) -> bool:
    if value is None:
        return True
    category, underlying, detail = _resolve(go_type)
    kind = type(value)
    if category == "struct" or category == "map":
        if kind is not dict:
            return False
        fields = detail[1] if category == "struct" else None
        for key, item in value.items():
            if within is not None and key not in within:
                continue
            field = detail if fields is None else fields.get(key)
            if field is None or item is None:
                continue
            # Most of a body's values are strings and booleans whose type alone makes them plain: answered here
            # from a table rather than by a call each (docs/performance.md, stop 40).
            kind = type(item)
            if kind is str or kind is bool:
                alone = _STR_ALONE if kind is str else _BOOL_ALONE
                verdict = alone.get(field)
                if verdict is None:
                    verdict = alone[field] = _alone(field, kind)
                if verdict:
                    continue
            elif kind is int:
                span = _INT_SPAN.get(field)
                if span is None:
                    span = _INT_SPAN[field] = _int_span(field)
                if span[0] <= item <= span[1]:
                    continue
            if not _plain(item, field, _part(within, key)):
                return False
        return True
    if category == "scalar":
        if kind not in _PLAIN_SCALARS.get(underlying, ()):
            return False
        if kind is int and underlying in _INTS:
            low, high = _INTS[underlying]
            return bool(low <= value <= high)
        return True
    if category == "list":
        if kind is not list:
            return False
        for item in value:  # noqa: SIM110 - a loop, not all() of a generator: a frame less for each list
            if item is not None and not _plain(item, detail, None):
                return False
        return True
    if category == "skip":
        return True
    if category == "quantity":
        try:
            _quantity(value)
        except _Abort:
            return False
        return True
    if category == "intorstring":
        return kind is str or (kind is int and -(2**31) <= value <= 2**31 - 1)
    if category in _CANONICAL:  # a time Go would write otherwise is normalized by `first_type_error`
        return kind is str and bool(_CANONICAL[category].match(value))
    return kind is str  # bytes: a string both take


def go_format(value: Any) -> str:
    """`fmt.Sprintf("%+v", v)` of a decoded JSON value (map keys sorted, as fmt prints maps)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_format(value[key])}" for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(item) for item in value) + "]"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), as %v prints a float64: the shortest digits, in exponent form when
    the exponent is below -4 or at least 6 (strconv/ftoa.go: `eprec = 6` for the shortest form)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    exp = len(text) + int(exponent) - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return prefix + format(Decimal(text).scaleb(exp - len(text) + 1), "f")


class _Syntax(Exception):
    pass


def go_json_syntax_error(raw: bytes) -> str:
    """encoding/json's text for a body that is not JSON (its scanner, encoding/json/scanner.go: the first byte
    it cannot take, and where), e.g. `invalid character 'a' looking for beginning of value` for YAML sent as
    JSON, `unexpected end of JSON input` for a truncated body."""
    text = raw.decode("utf-8", "replace")
    try:
        end = _scan_value(text, _skip(text, 0))
        end = _skip(text, end)
        if end < len(text):
            raise _Syntax(f"invalid character {_quote_char(text[end])} after top-level value")
    except _Syntax as exc:
        return str(exc)
    except IndexError:
        return "unexpected end of JSON input"
    return "unexpected end of JSON input"  # valid JSON: not reached for a body that failed to parse


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _quote_char(c: str) -> str:
    """scanner.go `quoteChar`."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    quoted = orjson.dumps(c).decode()[1:-1] if ord(c) < 0x20 or c == "\\" else c
    return f"'{quoted}'"


_MAX_NESTING = 10000
"""encoding/json scanner.go `maxNestingDepth`: the 10001st open bracket is `exceeded max depth`."""


def _scan_value(text: str, i: int) -> int:
    """Where the JSON value at `i` ends. A loop over an explicit stack, not recursion: a body nested 100,000
    deep must get the scanner's error, not a RecursionError (a 500)."""
    stack: list[str] = []
    while True:
        c = text[i]
        if c == "{" or c == "[":
            if len(stack) >= _MAX_NESTING:
                raise _Syntax(f"invalid character {_quote_char(c)} exceeded max depth")
            i = _skip(text, i + 1)
            if text[i] == ("}" if c == "{" else "]"):
                i += 1
            else:
                stack.append(c)
                if c == "{":
                    i = _scan_key(text, i)
                continue
        elif c == '"':
            i = _scan_string(text, i)
        elif c == "-" or c.isdigit():
            i = _scan_number(text, i)
        else:
            i = _scan_literal(text, i, c)
        # a value ended: close what it ends, until one more value is due
        while True:
            if not stack:
                return i
            i = _skip(text, i)
            if stack[-1] == "{":
                if text[i] == "}":
                    stack.pop()
                    i += 1
                    continue
                if text[i] != ",":
                    raise _Syntax(f"invalid character {_quote_char(text[i])} after object key:value pair")
                i = _scan_key(text, _skip(text, i + 1))
                break
            if text[i] == "]":
                stack.pop()
                i += 1
                continue
            if text[i] != ",":
                raise _Syntax(f"invalid character {_quote_char(text[i])} after array element")
            i = _skip(text, i + 1)
            break


def _scan_key(text: str, i: int) -> int:
    """An object's key and its colon at `i`; where its value starts."""
    if text[i] != '"':
        raise _Syntax(f"invalid character {_quote_char(text[i])} looking for beginning of object key string")
    i = _skip(text, _scan_string(text, i))
    if text[i] != ":":
        raise _Syntax(f"invalid character {_quote_char(text[i])} after object key")
    return _skip(text, i + 1)


def _scan_literal(text: str, i: int, c: str) -> int:
    for literal in ("true", "false", "null"):
        if c == literal[0]:
            for k, expected in enumerate(literal[1:], 1):
                if text[i + k] != expected:
                    got = _quote_char(text[i + k])
                    raise _Syntax(f"invalid character {got} in literal {literal} (expecting {_quote_char(expected)})")
            return i + len(literal)
    raise _Syntax(f"invalid character {_quote_char(c)} looking for beginning of value")


def _scan_string(text: str, i: int) -> int:
    i += 1
    while True:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\":
            e = text[i + 1]
            if e == "u":
                for k in range(2, 6):
                    if text[i + k] not in "0123456789abcdefABCDEF":
                        raise _Syntax(
                            f"invalid character {_quote_char(text[i + k])} in \\u hexadecimal character escape"
                        )
                i += 6
                continue
            if e not in '"\\\\/bfnrt':
                raise _Syntax(f"invalid character {_quote_char(e)} in string escape code")
            i += 2
            continue
        if ord(c) < 0x20:
            raise _Syntax(f"invalid character {_quote_char(c)} in string literal")
        i += 1


def _scan_number(text: str, i: int) -> int:
    if text[i] == "-":
        i += 1
        if not text[i].isdigit():
            raise _Syntax(f"invalid character {_quote_char(text[i])} in numeric literal")
    if text[i] == "0":
        i += 1
    else:
        while i < len(text) and text[i].isdigit():
            i += 1
    if i < len(text) and text[i] == ".":
        i += 1
        if not text[i].isdigit():
            raise _Syntax(f"invalid character {_quote_char(text[i])} after decimal point in numeric literal")
        while i < len(text) and text[i].isdigit():
            i += 1
    if i < len(text) and text[i] in "eE":
        i += 1
        if text[i] in "+-":
            i += 1
        if not text[i].isdigit():
            raise _Syntax(f"invalid character {_quote_char(text[i])} in exponent of numeric literal")
        while i < len(text) and text[i].isdigit():
            i += 1
    return i
