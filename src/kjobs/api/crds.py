"""CustomResourceDefinitions (`apiextensions.k8s.io/v1`): defaulting, validation and status.

Follows kube-apiserver v1.32's apiextensions-apiserver:
* defaulting: pkg/apis/apiextensions/v1/defaults.go (`names.singular` from the kind, `names.listKind`,
  `conversion.strategy: None`, `status.storedVersions` from the storage version);
* validation: pkg/apis/apiextensions/validation/validation.go (`ValidateCustomResourceDefinition`, its spec,
  names, printer columns and stored versions) and the structural-schema rules of
  pkg/apiserver/schema/validation.go (`type` required, `object` at the root, preserve-unknown-fields true or unset);
* status: the naming and establishing controllers (pkg/controller/status/naming_controller.go,
  pkg/controller/establish): `NamesAccepted` and `Established`, `status.acceptedNames`.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_dns1035_label, is_dns1123_subdomain

GROUP = "apiextensions.k8s.io"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden

_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def storage_version(crd: Obj) -> str | None:
    """The version marked `storage: true`."""
    for v in _list(_dict(crd.get("spec")).get("versions")):
        if isinstance(v, dict) and v.get("storage") is True:
            return str(v.get("name"))
    return None


# ------------------------------------------------------------------------------------------- defaulting


def default_crd_in_place(crd: Obj) -> Obj:
    """`SetDefaults_CustomResourceDefinition` and `SetDefaults_CustomResourceDefinitionSpec`."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return crd
    names = spec.get("names")
    if isinstance(names, dict):
        kind = names.get("kind")
        if not names.get("singular") and isinstance(kind, str):
            names["singular"] = kind.lower()
        if not names.get("listKind") and isinstance(kind, str) and kind:
            names["listKind"] = kind + "List"
    default_crd_status_in_place(crd)  # the strategy's PrepareForCreate/PrepareForUpdate: storage version stored
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        spec["conversion"] = conversion = {"strategy": "None"}
    if conversion.get("strategy") == "Webhook":
        webhook = conversion.get("webhook")
        if isinstance(webhook, dict) and not webhook.get("conversionReviewVersions"):
            webhook["conversionReviewVersions"] = ["v1"]
    return crd


def default_crd_status_in_place(crd: Obj) -> Obj:
    """`status.storedVersions` starts as the storage version and gains each new one (defaults.go, strategy.go)."""
    status = crd.get("status")
    if not isinstance(status, dict):
        crd["status"] = status = {}
    stored = storage_version(crd)
    versions = status.get("storedVersions")
    if stored and not (isinstance(versions, list) and stored in versions):
        status["storedVersions"] = [*(versions if isinstance(versions, list) else []), stored]
    return crd


# ------------------------------------------------------------------------------------------- validation


def _dns1035(value: str, path: str, errs: list[FieldError], *, mixed_case: bool = False) -> None:
    problems = is_dns1035_label(value.lower() if mixed_case else value)
    if problems:
        detail = ",".join(problems)
        if mixed_case:
            detail = "may have mixed case, but should otherwise match: " + detail
        errs.append(FieldError(path, Invalid, detail, value))


def validate_names(names: Obj, path: str) -> list[FieldError]:
    """`ValidateCustomResourceDefinitionNames`."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = names.get(key)
        if isinstance(value, str) and value:
            _dns1035(value, f"{path}.{key}", errs)
    for key in ("kind", "listKind"):
        value = names.get(key)
        if isinstance(value, str) and value:
            _dns1035(value, f"{path}.{key}", errs, mixed_case=True)
    for i, short in enumerate(_list(names.get("shortNames"))):
        _dns1035(str(short), f"{path}.shortNames[{i}]", errs)
    kind = names.get("kind")
    if kind and kind == names.get("listKind"):
        errs.append(FieldError(f"{path}.listKind", Invalid, "kind and listKind may not be the same", kind))
    for i, category in enumerate(_list(names.get("categories"))):
        _dns1035(str(category), f"{path}.categories[{i}]", errs)
    return errs


def _validate_column(col: Obj, path: str, errs: list[FieldError]) -> None:
    if not col.get("name"):
        errs.append(FieldError(f"{path}.name", Required))
    kinds = ",".join(_COLUMN_TYPES)
    if not col.get("type"):
        errs.append(FieldError(f"{path}.type", Required, f"must be one of {kinds}"))
    elif col["type"] not in _COLUMN_TYPES:
        errs.append(FieldError(f"{path}.type", Invalid, f"must be one of {kinds}", col["type"]))
    if col.get("format") and col["format"] not in _COLUMN_FORMATS:
        errs.append(FieldError(f"{path}.format", Invalid, f"must be one of {','.join(_COLUMN_FORMATS)}", col["format"]))
    json_path = col.get("jsonPath")
    if not json_path:
        errs.append(FieldError(f"{path}.jsonPath", Required))
    elif not str(json_path).startswith("."):
        errs.append(FieldError(f"{path}.jsonPath", Invalid, "must be a simple json path starting with .", json_path))


_SCHEMA_SHAPES: tuple[tuple[str, Any, str], ...] = (
    ("type", str, "a string"),
    ("format", str, "a string"),
    ("pattern", str, "a string"),
    ("description", str, "a string"),
    ("required", list, "a list"),
    ("enum", list, "a list"),
    ("properties", dict, "an object"),
    ("items", dict, "an object"),
    ("minimum", float, "a number"),
    ("maximum", float, "a number"),
    ("multipleOf", float, "a number"),
    ("minLength", int, "an integer"),
    ("maxLength", int, "an integer"),
    ("minItems", int, "an integer"),
    ("maxItems", int, "an integer"),
    ("minProperties", int, "an integer"),
    ("maxProperties", int, "an integer"),
    ("nullable", bool, "a boolean"),
    ("exclusiveMinimum", bool, "a boolean"),
    ("exclusiveMaximum", bool, "a boolean"),
)
"""The JSONSchemaProps fields' JSON types (what the typed decoder of a cluster refuses otherwise)."""


def _is(value: Any, kind: Any) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def validate_structural(schema: Any, path: str, level: str = "root") -> list[FieldError]:
    """pkg/apiserver/schema/validation.go's `validateStructuralInvariants`/completeness, the common rules."""
    errs: list[FieldError] = []
    if not isinstance(schema, dict):
        return errs
    for key, kind, what in _SCHEMA_SHAPES:
        if key in schema and schema[key] is not None and not _is(schema[key], kind):
            errs.append(FieldError(f"{path}.{key}", Invalid, f"must be {what}", schema[key]))
    if errs:
        return errs
    type_ = schema.get("type") or ""
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    embedded = schema.get("x-kubernetes-embedded-resource") is True
    if embedded and type_ != "object":
        if not type_:
            errs.append(
                FieldError(f"{path}.type", Required, "must be object if x-kubernetes-embedded-resource is true")
            )
        else:
            errs.append(
                FieldError(f"{path}.type", Invalid, "must be object if x-kubernetes-embedded-resource is true", type_)
            )
    elif not type_ and not int_or_string and preserve is not True:
        detail = {
            "root": "must not be empty at the root",
            "item": "must not be empty for specified array items",
            "field": "must not be empty for specified object fields",
        }[level]
        errs.append(FieldError(f"{path}.type", Required, detail))
    if level == "root" and type_ and type_ != "object":
        errs.append(FieldError(f"{path}.type", Invalid, "must be object at the root", type_))
    if preserve is False:
        errs.append(
            FieldError(f"{path}.x-kubernetes-preserve-unknown-fields", Invalid, "must be true or undefined", False)
        )
    if schema.get("uniqueItems") is True:
        errs.append(
            FieldError(
                f"{path}.uniqueItems",
                Forbidden,
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if (
        isinstance(props, dict)
        and props
        and additional is not None
        and (additional is False or isinstance(additional, dict))
    ):
        errs.append(
            FieldError(
                f"{path}.additionalProperties", Forbidden, "additionalProperties and properties are mutual exclusive"
            )
        )
    for key in ("$ref", "patternProperties", "definitions", "dependencies", "additionalItems", "id"):
        if key in schema:
            name = "$ref" if key == "$ref" else key
            errs.append(FieldError(f"{path}.{name}", Forbidden, f"{name} is not supported"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        from kjobs.api import regexps  # RE2, imported by the first CRD with a pattern (`kjobs run` stores none)

        try:
            regexps.compile_go(pattern)
        except regexps.RegexpError as exc:
            errs.append(
                FieldError(f"{path}.pattern", Invalid, f"must be a valid regular expression, but isn't: {exc}", pattern)
            )
    if type_ == "array" and not isinstance(schema.get("items"), dict):
        errs.append(FieldError(f"{path}.items", Required, "must be specified"))
    if isinstance(props, dict):
        for key in sorted(props):
            errs += validate_structural(props[key], f"{path}.properties[{key}]", "field")
    if isinstance(additional, dict):
        errs += validate_structural(additional, f"{path}.additionalProperties", "field")
    if isinstance(schema.get("items"), dict):
        errs += validate_structural(schema["items"], f"{path}.items", "item")
    return errs


def _shape(spec: Obj, path: str) -> list[FieldError]:
    """What Go's decoder refuses before validation (kjobs ships no Go types for apiextensions): values of the
    wrong JSON type, reported as invalid rather than let through."""
    errs: list[FieldError] = []

    def want(value: Any, kind: type, where: str, what: str) -> bool:
        if value is None or (isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))):
            return True
        errs.append(FieldError(where, Invalid, f"must be {what}", value))
        return False

    for key in ("group", "scope"):
        want(spec.get(key), str, f"{path}.{key}", "a string")
    names = spec.get("names")
    if want(names, dict, f"{path}.names", "an object") and isinstance(names, dict):
        for key in ("plural", "singular", "kind", "listKind"):
            want(names.get(key), str, f"{path}.names.{key}", "a string")
        for key in ("shortNames", "categories"):
            items = names.get(key)
            if want(items, list, f"{path}.names.{key}", "a list") and isinstance(items, list):
                for i, item in enumerate(items):
                    want(item, str, f"{path}.names.{key}[{i}]", "a string")
    versions = spec.get("versions")
    if want(versions, list, f"{path}.versions", "a list") and isinstance(versions, list):
        for i, version in enumerate(versions):
            vpath = f"{path}.versions[{i}]"
            if not (want(version, dict, vpath, "an object") and isinstance(version, dict)):
                continue
            want(version.get("name"), str, f"{vpath}.name", "a string")
            for key in ("served", "storage", "deprecated"):
                want(version.get(key), bool, f"{vpath}.{key}", "a boolean")
            for key in ("schema", "subresources"):
                want(version.get(key), dict, f"{vpath}.{key}", "an object")
            for key in ("additionalPrinterColumns", "selectableFields"):
                items = version.get(key)
                if want(items, list, f"{vpath}.{key}", "a list") and isinstance(items, list):
                    for j, item in enumerate(items):
                        want(item, dict, f"{vpath}.{key}[{j}]", "an object")
    want(spec.get("conversion"), dict, f"{path}.conversion", "an object")
    return errs


def validate_crd_spec(spec: Obj, path: str = "spec") -> list[FieldError]:
    """`ValidateCustomResourceDefinitionSpec` (the v1 rules kjobs serves)."""
    errs = _shape(spec, path)
    if errs:
        return errs
    group = spec.get("group")
    if not group:
        errs.append(FieldError(f"{path}.group", Required))
    elif not isinstance(group, str) or is_dns1123_subdomain(group):
        errs.append(FieldError(f"{path}.group", Invalid, ",".join(is_dns1123_subdomain(str(group))), group))
    elif len(group.split(".")) < 2:
        errs.append(FieldError(f"{path}.group", Invalid, "should be a domain with at least one dot", group))
    scope = spec.get("scope")
    if not scope:
        errs.append(FieldError(f"{path}.scope", Required))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(
            FieldError(
                f"{path}.scope", ErrorType.FieldValueNotSupported, 'supported values: "Cluster", "Namespaced"', scope
            )
        )
    versions = _list(spec.get("versions"))
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        v = _dict(version)
        vpath = f"{path}.versions[{i}]"
        name = str(v.get("name") or "")
        if v.get("storage") is True:
            storage_count += 1
        if name in seen:
            unique = False
        seen.add(name)
        _dns1035(name, f"{vpath}.name", errs)
        schema = _dict(v.get("schema")).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            errs.append(FieldError(f"{vpath}.schema.openAPIV3Schema", Required, "schemas are required"))
        else:
            errs += validate_structural(schema, f"{vpath}.schema.openAPIV3Schema")
        for j, column in enumerate(_list(v.get("additionalPrinterColumns"))):
            _validate_column(_dict(column), f"{vpath}.additionalPrinterColumns[{j}]", errs)
        scale = _dict(v.get("subresources")).get("scale")
        if isinstance(scale, dict):
            for key in ("specReplicasPath", "statusReplicasPath"):
                value = scale.get(key)
                if not value:
                    errs.append(FieldError(f"{vpath}.subresources.scale.{key}", Required))
    if not unique:
        errs.append(FieldError(f"{path}.versions", Invalid, "must contain unique version names", versions))
    if storage_count != 1:
        errs.append(
            FieldError(f"{path}.versions", Invalid, "must have exactly one version marked as storage version", versions)
        )
    names = _dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(FieldError(f"{path}.names.{key}", Required))
    errs += validate_names(names, f"{path}.names")
    strategy = _dict(spec.get("conversion")).get("strategy")
    if "conversion" in spec and strategy not in ("None", "Webhook"):
        errs.append(
            FieldError(
                f"{path}.conversion.strategy",
                ErrorType.FieldValueNotSupported,
                'supported values: "None", "Webhook"',
                strategy,
            )
        )
    if spec.get("preserveUnknownFields") is True:
        errs.append(
            FieldError(
                f"{path}.preserveUnknownFields",
                Invalid,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema "
                "instead",
                True,
            )
        )
    return errs


def validate_stored_versions(stored: Any, versions: list[Any], path: str = "status.storedVersions") -> list[FieldError]:
    """`ValidateCustomResourceDefinitionStoredVersions`."""
    stored_list = [str(s) for s in _list(stored)]
    if not stored_list:
        return [FieldError(path, Invalid, "must have at least one stored version", stored_list)]
    errs: list[FieldError] = []
    names = {str(_dict(v).get("name")) for v in versions}
    for v in versions:
        d = _dict(v)
        if d.get("storage") is True and d.get("name") not in stored_list:
            errs.append(FieldError(path, Invalid, f"must have the storage version {d.get('name')}", d))
    for i, s in enumerate(stored_list):
        if s not in names:
            errs.append(FieldError(f"{path}[{i}]", Invalid, "must appear in spec.versions", s))
    return errs


def validate_crd(crd: Obj, *, features: Any = None) -> list[FieldError]:
    """`ValidateCustomResourceDefinition`: the name is `<plural>.<group>`, then spec and status."""
    from kjobs.api.validation_meta import validate_object_meta

    spec = _dict(crd.get("spec"))
    required = f"{_dict(spec.get('names')).get('plural', '')}.{spec.get('group', '')}"

    def name_fn(name: str, prefix: bool) -> tuple[str, ...]:
        problems = tuple(is_dns1123_subdomain(name[:-1] + "a" if prefix and name.endswith("-") else name))
        if name != required:
            problems += ('must be spec.names.plural+"."+spec.group',)
        return problems

    errs = validate_object_meta(_dict(crd.get("metadata")), namespaced=False, name_fn=name_fn)
    errs += validate_crd_spec(spec)
    status = _dict(crd.get("status"))
    errs += validate_names(_dict(status.get("acceptedNames")), "status.acceptedNames")
    errs += validate_stored_versions(status.get("storedVersions"), _list(spec.get("versions")))
    return errs


def _established(crd: Obj) -> bool:
    return any(
        _dict(c).get("type") == "Established" and _dict(c).get("status") == "True"
        for c in _list(_dict(crd.get("status")).get("conditions"))
    )


def validate_crd_update(crd: Obj, old: Obj, *, features: Any = None) -> list[FieldError]:
    """`ValidateCustomResourceDefinitionUpdate`: group and plural never change; scope and kind once Established."""
    from kjobs.api.validation_meta import validate_object_meta_update

    errs = validate_object_meta_update(_dict(crd.get("metadata")), _dict(old.get("metadata")))
    spec, old_spec = _dict(crd.get("spec")), _dict(old.get("spec"))
    errs += validate_crd_spec(spec)
    immutable = "field is immutable"
    pairs = [("group", spec.get("group"), old_spec.get("group"))]
    pairs.append(("names.plural", _dict(spec.get("names")).get("plural"), _dict(old_spec.get("names")).get("plural")))
    if _established(old):
        pairs.append(("scope", spec.get("scope"), old_spec.get("scope")))
        pairs.append(("names.kind", _dict(spec.get("names")).get("kind"), _dict(old_spec.get("names")).get("kind")))
    for key, new, was in pairs:
        if new != was:
            errs.append(FieldError(f"spec.{key}", Invalid, immutable, new))
    status = _dict(crd.get("status"))
    errs += validate_names(_dict(status.get("acceptedNames")), "status.acceptedNames")
    errs += validate_stored_versions(status.get("storedVersions"), _list(spec.get("versions")))
    return errs


def validate_crd_status_update(crd: Obj, old: Obj) -> list[FieldError]:
    """`ValidateUpdateCustomResourceDefinitionStatus`."""
    from kjobs.api.validation_meta import validate_object_meta_update

    errs = validate_object_meta_update(_dict(crd.get("metadata")), _dict(old.get("metadata")))
    errs += validate_names(_dict(_dict(crd.get("status")).get("acceptedNames")), "status.acceptedNames")
    return errs


# ------------------------------------------------------------------------------------------- status


def _condition(type_: str, status: str, reason: str, message: str, now: str, old: list[Any]) -> Obj:
    for c in old:
        if isinstance(c, dict) and c.get("type") == type_ and c.get("status") == status:
            now = str(c.get("lastTransitionTime") or now)
    return {"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}


def name_conflict(crd: Obj, others: list[Obj]) -> tuple[str, str] | None:
    """The naming controller's check against the other CRDs of the same group: (reason, message) of the first
    name another one has accepted already, or None."""
    spec = _dict(crd.get("spec"))
    names = {k: v for k, v in _dict(spec.get("names")).items() if isinstance(v, (str, list))}
    group = spec.get("group")
    taken_resources: set[str] = set()
    taken_kinds: set[str] = set()
    for other in others:
        ospec = _dict(other.get("spec"))
        if ospec.get("group") != group or _dict(other.get("metadata")).get("name") == _dict(crd.get("metadata")).get(
            "name"
        ):
            continue
        accepted = _dict(_dict(other.get("status")).get("acceptedNames"))
        taken_resources.update(
            str(x) for x in [accepted.get("plural"), accepted.get("singular"), *_list(accepted.get("shortNames"))] if x
        )
        taken_kinds.update(str(x) for x in [accepted.get("kind"), accepted.get("listKind")] if x)
    if str(names.get("plural")) in taken_resources:
        return "PluralConflict", f'"{names["plural"]}" is already in use'
    if str(names.get("singular")) in taken_resources:
        return "SingularConflict", f'"{names["singular"]}" is already in use'
    for short in _list(names.get("shortNames")):
        if str(short) in taken_resources:
            return "ShortNamesConflict", f'"{short}" is already in use'
    if str(names.get("kind")) in taken_kinds:
        return "KindConflict", f'"{names["kind"]}" is already in use'
    if str(names.get("listKind")) in taken_kinds:
        return "ListKindConflict", f'"{names["listKind"]}" is already in use'
    return None


def computed_status(crd: Obj, others: list[Obj], now: str) -> Obj:
    """The status the naming and establishing controllers give `crd`: accepted names and its conditions."""
    status = dict(_dict(crd.get("status")))
    old = _list(status.get("conditions"))
    conflict = name_conflict(crd, others)
    names = _dict(_dict(crd.get("spec")).get("names"))
    conditions: list[Obj] = []
    if conflict is None:
        status["acceptedNames"] = {k: v for k, v in names.items()}
        conditions.append(_condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now, old))
        conditions.append(
            _condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now, old)
        )
    else:
        status.setdefault("acceptedNames", {"plural": "", "kind": ""})
        conditions.append(_condition("NamesAccepted", "False", conflict[0], conflict[1], now, old))
        conditions.append(_condition("Established", "False", "NotAccepted", "not all names are accepted", now, old))
    if _dict(crd.get("metadata")).get("deletionTimestamp"):
        conditions.append(
            _condition(
                "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now, old
            )
        )
    status["conditions"] = conditions
    stored = storage_version(crd)
    stored_versions = [str(s) for s in _list(status.get("storedVersions"))]
    if stored and stored not in stored_versions:
        stored_versions.append(stored)
    status["storedVersions"] = stored_versions
    return status


def is_established(crd: Obj) -> bool:
    """Whether the CRD's `Established` condition is True (its resources are then served)."""
    return _established(crd)
