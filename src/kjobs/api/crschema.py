"""Custom resources against their CRD's structural schema: pruning, defaulting and validation.

Follows kube-apiserver v1.32's apiextensions-apiserver: pruning of fields the schema does not declare
(pkg/apiserver/schema/pruning/algorithm.go: `apiVersion`, `kind` and `metadata` at the root are kept;
`x-kubernetes-preserve-unknown-fields: true` and `additionalProperties` keep everything below them),
defaulting from `default` (pkg/apiserver/schema/defaulting/algorithm.go: a missing property whose schema has
a default gets a copy of it, walking into objects, maps and arrays), and the OpenAPI value checks of
pkg/apiserver/validation (kube-openapi's validator, its errors converted to `field` errors the way
`kubeOpenAPIResultToFieldErrors` does: `spec.replicas in body must be of type integer: "string"`).

Not evaluated: `x-kubernetes-validations` (CEL; no CEL library is in kjobs' dependencies, and hand-written
CEL would be wrong more often than right), `oneOf`/`anyOf`/`not` (rare in CRDs, they only narrow).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, too_long, too_many
from kjobs.api.types import Obj

Schema = dict[str, Any]

_ROOT_KEEP = ("apiVersion", "kind", "metadata")


def _json_type(value: Any) -> str:
    """kube-openapi's name of a decoded JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _preserves(schema: Schema) -> bool:
    return schema.get("x-kubernetes-preserve-unknown-fields") is True


def unknown_fields(obj: Any, schema: Schema) -> list[str]:
    """The paths of the fields `prune` would drop (`unknown field "spec.extra"`), sorted as upstream reports."""
    found: list[str] = []
    _unknown(obj, schema, "", found, root=True)
    return sorted(found)


def _unknown(obj: Any, schema: Schema, path: str, found: list[str], *, root: bool) -> None:
    if isinstance(obj, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        root = root or bool(schema.get("x-kubernetes-embedded-resource"))
        for key, value in obj.items():
            if root and key in _ROOT_KEEP:
                continue
            if isinstance(props, dict) and isinstance(props.get(key), dict):
                _unknown(value, props[key], _child(path, key), found, root=False)
            elif isinstance(additional, dict):
                _unknown(value, additional, f"{path}[{key}]", found, root=False)
            elif not (additional is True or _preserves(schema)):
                found.append(_child(path, key))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            _unknown(item, schema["items"], f"{path}[{i}]", found, root=False)


def prune(obj: Any, schema: Schema, *, root: bool = True) -> None:
    """Drop, in place, every field `schema` does not declare (the root's apiVersion/kind/metadata stay)."""
    if isinstance(obj, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        if schema.get("x-kubernetes-embedded-resource"):
            root = True
        for key in list(obj):
            if root and key in _ROOT_KEEP:
                continue
            if isinstance(props, dict) and key in props:
                prune(obj[key], props[key] if isinstance(props[key], dict) else {}, root=False)
            elif isinstance(additional, dict):
                prune(obj[key], additional, root=False)
            elif additional is True or _preserves(schema):
                continue
            else:
                del obj[key]
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in obj:
                prune(item, items, root=False)


def default(obj: Any, schema: Schema) -> None:
    """Set, in place, each missing property that has a `default` (a copy of it), walking the whole object."""
    if isinstance(obj, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if not isinstance(sub, dict):
                    continue
                if key not in obj and "default" in sub:
                    obj[key] = copy.deepcopy(sub["default"])
                if key in obj:
                    default(obj[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, value in obj.items():
                if not (isinstance(props, dict) and key in props):
                    default(value, additional)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in obj:
                default(item, items)


_FORMATS = {
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "uuid": re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"),
    "ipv4": re.compile(r"^(\d{1,3}\.){3}\d{1,3}$"),
    "email": re.compile(r"^[^@\s]+@[^@\s]+$"),
}
"""The string formats checked (cheap, common ones); others are accepted as any string."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_ok(value: Any, schema: Schema) -> bool:
    wanted = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    if value is None:
        return bool(schema.get("nullable")) or not wanted
    if not wanted:
        return True
    actual = _json_type(value)
    if wanted == "number":
        return actual in ("integer", "number")
    if wanted == "integer" and actual == "number":
        return float(value).is_integer()
    return bool(actual == wanted)


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def validate(obj: Any, schema: Schema, path: str = "") -> list[FieldError]:
    """The schema's errors for `obj` (value checks only: pruning and defaulting come first)."""
    errs: list[FieldError] = []
    _walk(obj, schema, path, errs, root=True)
    return errs


def _walk(value: Any, schema: Schema, path: str, errs: list[FieldError], *, root: bool = False) -> None:
    where = path or "<root>"
    if not _type_ok(value, schema):
        if value is None:
            errs.append(FieldError(where, ErrorType.FieldValueRequired, ""))
            return
        wanted = "integer or string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")
        errs.append(
            FieldError(
                where,
                ErrorType.FieldValueInvalid,
                f'{where} in body must be of type {wanted}: "{_json_type(value)}"',
                _json_type(value),  # kube-openapi's InvalidType carries the value's type name
            )
        )
        return
    if value is None:
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        supported = ", ".join(f'"{e}"' if isinstance(e, str) else _fmt(e) for e in enum)
        errs.append(FieldError(where, ErrorType.FieldValueNotSupported, f"supported values: {supported}", value))
    if _number(value):
        _numeric(value, schema, where, errs)
    elif isinstance(value, str):
        _string(value, schema, where, errs)
    elif isinstance(value, list):
        _array(value, schema, path, where, errs)
    elif isinstance(value, dict):
        _object(value, schema, path, where, errs, root=root)


def _numeric(value: float, schema: Schema, where: str, errs: list[FieldError]) -> None:
    low: Any = schema.get("minimum")
    high: Any = schema.get("maximum")
    if _number(low):
        if schema.get("exclusiveMinimum") is True and value <= low:
            errs.append(
                FieldError(
                    where, ErrorType.FieldValueInvalid, f"{where} in body should be greater than {_fmt(low)}", value
                )
            )
        elif value < low:
            errs.append(
                FieldError(
                    where,
                    ErrorType.FieldValueInvalid,
                    f"{where} in body should be greater than or equal to {_fmt(low)}",
                    value,
                )
            )
    if _number(high):
        if schema.get("exclusiveMaximum") is True and value >= high:
            errs.append(
                FieldError(
                    where, ErrorType.FieldValueInvalid, f"{where} in body should be less than {_fmt(high)}", value
                )
            )
        elif value > high:
            errs.append(
                FieldError(
                    where,
                    ErrorType.FieldValueInvalid,
                    f"{where} in body should be less than or equal to {_fmt(high)}",
                    value,
                )
            )
    multiple = schema.get("multipleOf")
    if _number(multiple) and multiple and (value / multiple) != int(value / multiple):
        errs.append(
            FieldError(
                where, ErrorType.FieldValueInvalid, f"{where} in body should be a multiple of {_fmt(multiple)}", value
            )
        )


def _string(value: str, schema: Schema, where: str, errs: list[FieldError]) -> None:
    if schema.get("x-kubernetes-int-or-string") and not schema.get("type"):
        return
    max_length, min_length = schema.get("maxLength"), schema.get("minLength")
    if isinstance(max_length, int) and len(value) > max_length:
        errs.append(too_long(where, max_length))
    if isinstance(min_length, int) and len(value) < min_length:
        errs.append(
            FieldError(
                where, ErrorType.FieldValueInvalid, f"{where} in body should be at least {min_length} chars long", value
            )
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        from kjobs.api import regexps  # RE2, with the first pattern checked (every kjobs up imports this module)

        try:
            matched = regexps.search(pattern, value)
        except regexps.RegexpError:
            matched = True  # refused when its CRD was made (`crds.validate_structural`): not checked
        if not matched:
            errs.append(
                FieldError(where, ErrorType.FieldValueInvalid, f"{where} in body should match '{pattern}'", value)
            )
    fmt = schema.get("format")
    check = _FORMATS.get(fmt) if isinstance(fmt, str) else None
    if check is not None and not check.match(value):
        errs.append(
            FieldError(where, ErrorType.FieldValueInvalid, f'{where} in body must be of type {fmt}: "{value}"', value)
        )


def _array(value: list[Any], schema: Schema, path: str, where: str, errs: list[FieldError]) -> None:
    max_items, min_items = schema.get("maxItems"), schema.get("minItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errs.append(too_many(where, len(value), max_items))
    if isinstance(min_items, int) and len(value) < min_items:
        errs.append(
            FieldError(
                where, ErrorType.FieldValueInvalid, f"{where} in body should have at least {min_items} items", value
            )
        )
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _walk(item, items, f"{path}[{i}]", errs)


def _object(value: Obj, schema: Schema, path: str, where: str, errs: list[FieldError], *, root: bool) -> None:
    required = schema.get("required")
    for key in required if isinstance(required, list) else []:
        if isinstance(key, str) and key not in value:
            errs.append(FieldError(_child(path, key), ErrorType.FieldValueRequired, ""))
    max_props, min_props = schema.get("maxProperties"), schema.get("minProperties")
    if isinstance(max_props, int) and len(value) > max_props:
        errs.append(too_many(where, len(value), max_props))
    if isinstance(min_props, int) and len(value) < min_props:
        errs.append(
            FieldError(
                where,
                ErrorType.FieldValueInvalid,
                f"{where} in body should have at least {min_props} properties",
                value,
            )
        )
    declared = schema.get("properties")
    props: Schema = declared if isinstance(declared, dict) else {}
    additional = schema.get("additionalProperties")
    for key, sub in value.items():
        if root and key in _ROOT_KEEP:
            continue
        if key in props and isinstance(props[key], dict):
            _walk(sub, props[key], _child(path, key), errs)
        elif isinstance(additional, dict):
            _walk(sub, additional, f"{path}[{key}]" if path else key, errs)
