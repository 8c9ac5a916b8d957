"""Custom resources: registry rows made from the Established CustomResourceDefinitions.

kube-apiserver's apiextensions-apiserver serves each CRD's versions from its `crdHandler`
(staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go): a storage per version
with the CRD's scope, names, subresources (`status`; `scale` is not served here), a table convertor from its
`additionalPrinterColumns` (pkg/registry/customresource/tableconvertor: NAME, then the columns; `Age` when
none is declared) and a strategy that prunes, defaults and validates against the structural schema
(`kjobs.api.crschema`). Here each served version becomes a `CustomResource` row added to the registry
(`registry.set_custom`), so routing, discovery, RBAC, the garbage collector and namespace cleanup see it as
any other resource; every version stores under `<plural>.<group>` (conversion `None`: only `apiVersion`
differs between versions, and a read is served as stored).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kjobs.api import crds, crschema, selectors
from kjobs.api.errors import FieldError
from kjobs.api.types import Obj
from kjobs.server import registry, tables
from kjobs.server.registry import Resource

Column = tuple[str, str, int, str]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class CustomResource(Resource):
    """A CRD's served version: the registry row plus what its strategy needs."""

    crd_name: str = ""
    schema: Obj = field(default_factory=dict)
    columns: tuple[Obj, ...] = ()
    selectable: tuple[str, ...] = ()
    scale: Obj = field(default_factory=dict)
    """The CRD's `subresources.scale` (spec/status replicas paths, label selector path), when declared."""

    @functools.cached_property
    def schema_name(self) -> str | None:
        """None: the built-in schemas do not describe it (its own schema prunes and validates it)."""
        return None

    @property
    def openapi_name(self) -> str:
        """Its OpenAPI definition name, as the CRD's builder names it: the reversed group, version, kind."""
        return ".".join([*reversed(self.group.split(".")), self.version, self.kind])

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """The CR strategy's `PrepareForUpdate`: generation follows every change but metadata's (and status's,
        when /status is its own subresource)."""
        skip = ("metadata", "status") if self.has_status else ("metadata",)
        return {k: v for k, v in new.items() if k not in skip} != {k: v for k, v in old.items() if k not in skip}

    def unknown_fields(self, body: Obj) -> list[str] | None:
        """What pruning would drop: the strict decoding's unknown fields."""
        return crschema.unknown_fields(body, self.schema)

    def hook(self, name: str) -> Any:
        """The strategy's steps, bound to this version's schema."""
        make = _HOOKS.get(name)
        return None if make is None else make(self)


def _default(r: CustomResource) -> Callable[..., Obj]:
    def run(obj: Obj, old: Obj | None = None) -> Obj:
        crschema.prune(obj, r.schema)
        crschema.default(obj, r.schema)
        if r.has_status and obj.get("status") == {}:  # PrepareForCreate drops a status the request sent
            obj.pop("status", None)
        return obj

    return run


def _validate(r: CustomResource) -> Callable[..., list[FieldError]]:
    def run(obj: Obj, features: Any = None) -> list[FieldError]:
        from kjobs.api.validation_meta import validate_object_meta

        errs = validate_object_meta(_dict(obj.get("metadata")), namespaced=r.namespaced)
        return errs + crschema.validate(obj, r.schema)

    return run


def _validate_update(r: CustomResource) -> Callable[..., list[FieldError]]:
    def run(obj: Obj, old: Obj, features: Any = None) -> list[FieldError]:
        from kjobs.api.validation_meta import validate_object_meta_update

        errs = validate_object_meta_update(_dict(obj.get("metadata")), _dict(old.get("metadata")))
        return errs + crschema.validate(obj, r.schema)

    return run


def _validate_status_update(r: CustomResource) -> Callable[..., list[FieldError]]:
    def run(obj: Obj, old: Obj) -> list[FieldError]:
        return _validate_update(r)(obj, old)

    return run


_HOOKS: dict[str, Callable[[CustomResource], Any]] = {
    "default": _default,
    "default_update": _default,
    "validate": _validate,
    "validate_update": _validate_update,
    "validate_status_update": _validate_status_update,
}


# ------------------------------------------------------------------------------------------- rows from CRDs


def resources_of_crd(crd: Obj) -> list[CustomResource]:
    """The rows a CRD serves (its served versions, the storage version first), from its accepted names."""
    spec = _dict(crd.get("spec"))
    names = _dict(_dict(crd.get("status")).get("acceptedNames")) or _dict(spec.get("names"))
    subresources_by_version: dict[str, Obj] = {}
    rows: list[CustomResource] = []
    listed = spec.get("versions")
    versions = [v for v in listed if isinstance(v, dict) and v.get("served")] if isinstance(listed, list) else []
    versions.sort(key=lambda v: 0 if v.get("storage") else 1)
    for v in versions:
        subs = _dict(v.get("subresources"))
        subresources_by_version[str(v.get("name"))] = subs
        declared = v.get("additionalPrinterColumns")
        columns = tuple(c for c in declared if isinstance(c, dict)) if isinstance(declared, list) else ()
        rows.append(
            CustomResource(
                str(spec.get("group")),
                str(v.get("name")),
                str(names.get("plural")),
                str(names.get("singular") or str(names.get("kind", "")).lower()),
                str(names.get("kind")),
                spec.get("scope") == "Namespaced",
                tuple(str(s) for s in _list(names.get("shortNames"))),
                tuple(str(c) for c in _list(names.get("categories"))),
                subresources=tuple(s for s in ("status", "scale") if isinstance(subs.get(s), dict)),
                has_status="status" in subs,
                tracks_generation=True,
                crd_name=str(_dict(crd.get("metadata")).get("name")),
                schema=_dict(_dict(v.get("schema")).get("openAPIV3Schema")),
                columns=columns,
                scale=_dict(subs.get("scale")),
                selectable=tuple(
                    str(f.get("jsonPath", "")).lstrip(".")
                    for f in _list(v.get("selectableFields"))
                    if isinstance(f, dict)
                ),
            )
        )
    return rows


def sync(crd_objects: list[Obj]) -> None:
    """Serve exactly the resources of the Established CRDs that are not being deleted."""
    rows: list[Resource] = []
    for crd in crd_objects:
        if crds.is_established(crd) and not _dict(crd.get("metadata")).get("deletionTimestamp"):
            rows.extend(resources_of_crd(crd))
    tables.CUSTOM_PRINTERS.clear()
    for key in _selectable_keys:  # `selectableFields`: field labels beyond metadata's
        selectors.FIELD_LABELS.pop(key, None)
        selectors._PLANS.pop(key, None)
    _selectable_keys.clear()
    for r in rows:
        if isinstance(r, CustomResource):
            tables.CUSTOM_PRINTERS[(r.group, r.kind)] = _printer(r)
            if r.selectable and r.store_key not in selectors.FIELD_LABELS:
                selectors.FIELD_LABELS[r.store_key] = selectors._METADATA_FIELDS | set(r.selectable)
                _selectable_keys.add(r.store_key)
    registry.set_custom(rows)


_selectable_keys: set[str] = set()


# ------------------------------------------------------------------------------------------- tables


_AGE_DESC = tables._DESC_AGE


def _columns(r: CustomResource) -> list[Obj]:
    """`serveDefaultColumnsIfEmpty`: an Age column when the version declares none."""
    if r.columns:
        return list(r.columns)
    return [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": _AGE_DESC}]


def _printer(r: CustomResource) -> tuple[list[Obj], Callable[[Obj, float], list[Any]]]:
    columns = _columns(r)
    headers: list[Obj] = [
        {"name": "Name", "type": "string", "format": "name", "description": tables._DESC_NAME, "priority": 0}
    ]
    for c in columns:
        path = str(c.get("jsonPath", ""))
        headers.append(
            {
                "name": c.get("name", ""),
                "type": c.get("type", "string"),
                "format": c.get("format", ""),
                "description": c.get("description")
                or f"Custom resource definition column (in JSONPath format): {path}",
                "priority": int(c.get("priority") or 0),
            }
        )

    def cells(obj: Obj, now: float) -> list[Any]:
        row: list[Any] = [_dict(obj.get("metadata")).get("name", "")]
        for c in columns:
            found = evaluate(str(c.get("jsonPath", "")), obj)
            row.append(None if found is _MISSING else _cell(str(c.get("type", "string")), found, now))
        return row

    return headers, cells


def _cell(kind: str, value: Any, now: float) -> Any:
    """`cellForJSONValue`, and the string printing of a `string` column."""
    if value is None:
        return None
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return _fmt_number(value)
        return orjson.dumps(value).decode()
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        from kjobs.api.timeutil import parse_time

        try:
            return tables.human_duration(now - parse_time(value))
        except ValueError:
            return "<invalid>"
    return None


def _fmt_number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


_MISSING = object()
_STEP = re.compile(
    r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_\-.]+)\s*==\s*['\"]([^'\"]*)['\"]\)\]|\['([^']*)'\]"
)


def evaluate(path: str, obj: Any) -> Any:
    """A simple JSONPath (what printer columns use: `.a.b`, `[0]`, `['x.y']`, `[?(@.type=="Ready")]`): the first
    result, or `_MISSING`."""
    pos, value = 0, obj
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return _MISSING
        pos = m.end()
        key, index, fkey, fvalue, quoted = m.groups()
        if key is not None or quoted is not None:
            name = key if key is not None else quoted
            if not isinstance(value, dict) or name not in value:
                return _MISSING
            value = value[name]
        elif index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return _MISSING
            value = value[int(index)]
        else:
            if not isinstance(value, list):
                return _MISSING
            match = _MISSING
            for item in value:
                probe = evaluate("." + fkey, item)
                if probe is not _MISSING and str(probe) == fvalue:
                    match = item
                    break
            if match is _MISSING:
                return _MISSING
            value = match
    return value


# ------------------------------------------------------------------------------------------- OpenAPI


def openapi_schemas(rows: list[Resource]) -> Obj:
    """The OpenAPI v3 definitions of the custom kinds among `rows` (what `kubectl explain` reads), as the CRD
    builder makes them (pkg/controller/openapi/builder): the schema with apiVersion, kind and metadata."""
    out: Obj = {}
    for r in rows:
        if not isinstance(r, CustomResource):
            continue
        body = dict(r.schema) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        props = dict(_dict(body.get("properties")))
        props["apiVersion"] = {
            "description": "APIVersion defines the versioned schema of this representation of an object. Servers "
            "should convert recognized schemas to the latest internal value, and may reject unrecognized values. "
            "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
            "type": "string",
        }
        props["kind"] = {
            "description": "Kind is a string value representing the REST resource this object represents. Servers "
            "may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. "
            "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
            "type": "string",
        }
        props["metadata"] = {
            "description": "Standard object's metadata. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
            "default": {},
        }
        body["properties"] = props
        body["type"] = "object"
        body["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
        out[r.openapi_name] = body
        out[r.openapi_name + "List"] = {
            "description": f"{r.kind}List is a list of {r.kind}",
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": props["apiVersion"],
                "items": {"type": "array", "items": {"$ref": f"#/components/schemas/{r.openapi_name}"}},
                "kind": props["kind"],
                "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}]},
            },
            "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": r.kind + "List"}],
        }
    return out
