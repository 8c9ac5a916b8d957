"""ObjectMeta, labels, annotations and label-selector validation, as Kubernetes' apimachinery does it.

Owns the checks every object kind shares (`ValidateObjectMeta`, `ValidateObjectMetaUpdate`, `ValidateLabels`,
`ValidateAnnotations`, `ValidateLabelSelector`) plus two small helpers the kind-specific validators need:
`selector_matches` (does a valid selector match a label set) and `semantic_equal` (Kubernetes'
`apiequality.Semantic.DeepEqual` on JSON: null, empty lists and empty maps count as absent).
Label-selector *parsing* for list/watch lives in `kjobs.api.selectors`; this module only validates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from kjobs.api.errors import ErrorType, FieldError, too_long
from kjobs.api.types import Obj
from kjobs.api.validation_access import (
    INT64_MAX,
    Errors,
    get_int,
    get_list,
    get_obj,
    get_str,
    get_str_map,
    items_of,
    type_error,
)
from kjobs.api.validation_formats import (
    DNS1123_LABEL_MAX,
    DNS1123_SUBDOMAIN_MAX,
    LABEL_VALUE_MAX,
    dns1123_label_match,
    dns1123_subdomain_match,
    is_dns1123_label,
    is_label_value,
    is_qualified_name,
    name_is_dns_subdomain,
)

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden

NEGATIVE_MSG = "must be greater than or equal to 0"
IMMUTABLE_MSG = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})

NameFn = Callable[[str, bool], Sequence[str]]


def validate_nonnegative(value: int | None, path: str, errs: Errors) -> None:
    """`ValidateNonnegativeField` for an optional number."""
    if value is not None and value < 0:
        errs.append(FieldError(path, Invalid, NEGATIVE_MSG, value))


def validate_label_name(name: str, path: str, errs: Errors) -> None:
    """`ValidateLabelName`: a qualified name."""
    for msg in is_qualified_name(name):
        errs.append(FieldError(path, Invalid, msg, name))


_KNOWN_VALID_MAX = 4096
"""How many strings each known-valid set holds before it starts over (as `kjobs.memo.Memo` does)."""
_VALID_LABEL_KEYS: set[str] = set()
"""Label keys found valid (`is_qualified_name` said nothing): the labels of a controller's objects repeat, and a
set lookup in the loop costs a fraction of the memoised check's call (docs/create50.md)."""
_VALID_LABEL_VALUES: set[str] = set()
"""Label values found valid (`is_label_value` said nothing), but those of letters and digits alone (valid when
no longer than 63: the regex is `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`), which are checked in place."""
_VALID_ANNOTATION_KEYS: set[str] = set()
"""Annotation keys whose lower-cased form is a valid qualified name."""
_VALID_FINALIZERS: set[str] = set()
"""Finalizer names that are valid qualified names and standard or domain-qualified: no error of their own."""


_VALID_GENERATE_NAMES: set[str] = set()
"""`generateName` prefixes that `name_is_dns_subdomain` found valid: a controller's objects repeat theirs."""
_VALID_NAMESPACES: set[str] = set()
"""Namespaces that `is_dns1123_label` found valid: every object of a namespace repeats it."""


def _remember(known: set[Any], value: Any, limit: int = _KNOWN_VALID_MAX) -> None:
    if len(known) >= limit:
        known.clear()
    known.add(value)


def validate_labels(labels: dict[str, str] | None, path: str, errs: Errors) -> None:
    """`ValidateLabels`: keys are qualified names, values valid label values (errors at the map's path).

    A pair whose key and value are known valid adds no error, so it is passed over without the checks."""
    if not labels:
        return
    keys, values = _VALID_LABEL_KEYS, _VALID_LABEL_VALUES
    for key, value in labels.items():
        if key in keys:
            if value in values:
                continue
            if type(value) is str and len(value) <= LABEL_VALUE_MAX and value.isalnum() and value.isascii():
                continue
        _validate_label(key, value, path, errs)


def _validate_label(key: str, value: str, path: str, errs: Errors) -> None:
    """One label's checks, as `ValidateLabels` makes them; a key or value found valid is remembered."""
    problems = is_qualified_name(key)
    for msg in problems:
        errs.append(FieldError(path, Invalid, msg, key))
    if not problems:
        _remember(_VALID_LABEL_KEYS, key)
    problems = is_label_value(value)
    for msg in problems:
        errs.append(FieldError(path, Invalid, msg, value))
    if not problems:
        _remember(_VALID_LABEL_VALUES, value)


def validate_annotations(annotations: dict[str, str] | None, path: str, errs: Errors) -> None:
    """`ValidateAnnotations`: keys are qualified names (case-insensitive); total size at most 256 KiB."""
    if not annotations:
        return
    total = 0
    known = _VALID_ANNOTATION_KEYS
    for key, value in annotations.items():
        if key not in known:
            problems = is_qualified_name(key.lower())
            for msg in problems:
                errs.append(FieldError(path, Invalid, msg, key))
            if not problems:
                _remember(known, key)
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))


_OWNER_REFERENCES_MAX = 1024
_VALID_OWNER_REFERENCES: set[bytes] = set()
"""Lists of owner references found valid, by their JSON: a controller's objects all name it alike (a set read
in place: a `Memo`'s `__contains__` is a Python call)."""


def _validate_owner_references(refs: list[Any] | None, path: str, errs: Errors) -> None:
    """`ValidateOwnerReferences`; a list known valid (the same JSON as one that added no error) is not walked."""
    if not refs:
        return
    try:  # a subclass of str, dict or list (whose type the walk tells apart) does not encode
        key = orjson.dumps(refs, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:  # not JSON (built in process): walked every time
        key = None
    if key is not None and key in _VALID_OWNER_REFERENCES:
        return
    before = len(errs)
    _walk_owner_references(refs, path, errs)
    if key is not None and len(errs) == before:
        _remember(_VALID_OWNER_REFERENCES, key, _OWNER_REFERENCES_MAX)


def _walk_owner_references(refs: list[Any], path: str, errs: Errors) -> None:
    first_controller = ""
    for i, ref in items_of(refs, path, errs):
        item = f"{path}[{i}]"
        api_version = get_str(ref, "apiVersion", f"{item}.apiVersion", errs) or ""
        kind = get_str(ref, "kind", f"{item}.kind", errs) or ""
        name = get_str(ref, "name", f"{item}.name", errs) or ""
        uid = get_str(ref, "uid", f"{item}.uid", errs) or ""
        parts = api_version.split("/")
        version = parts[0] if len(parts) == 1 else parts[1] if len(parts) == 2 else ""
        group = parts[0] if len(parts) == 2 else ""
        if not version:
            errs.append(FieldError(f"{path}.apiVersion", Invalid, "version must not be empty", api_version))
        if not kind:
            errs.append(FieldError(f"{path}.kind", Invalid, "must not be empty", kind))
        if not name:
            errs.append(FieldError(f"{path}.name", Invalid, "must not be empty", name))
        if not uid:
            errs.append(FieldError(f"{path}.uid", Invalid, "must not be empty", uid))
        if group == "" and version == "v1" and kind == "Event":
            errs.append(FieldError(path, Invalid, "/v1, Kind=Event is disallowed from being an owner", ref))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                errs.append(
                    FieldError(
                        path,
                        Invalid,
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{first_controller} and {current}",
                        refs,
                    )
                )
            else:
                first_controller = current


def _validate_finalizers(finalizers: list[Any] | None, path: str, errs: Errors) -> None:
    """`ValidateFinalizers` with the finalizer-name check; a list of names each known valid, not both `orphan`
    and `foregroundDeletion`, adds no error and is not walked."""
    if not finalizers:
        return
    known = _VALID_FINALIZERS
    for name in finalizers:
        if type(name) is not str or name not in known:
            break
    else:
        if "orphan" not in finalizers or "foregroundDeletion" not in finalizers:
            return
    _walk_finalizers(finalizers, path, errs)


def _walk_finalizers(finalizers: list[Any], path: str, errs: Errors) -> None:
    names = [f for f in finalizers or [] if isinstance(f, str)]
    for i, item in enumerate(finalizers or []):
        if not isinstance(item, str):
            errs.append(FieldError(f"{path}[{i}]", Invalid, "must be of type string", item))
    for name in names:
        for msg in is_qualified_name(name):
            errs.append(FieldError(path, Invalid, msg, name))
    if "orphan" in names and "foregroundDeletion" in names:
        errs.append(FieldError(path, Invalid, "finalizer orphan and foregroundDeletion cannot be both set", names))
    for i, name in enumerate(finalizers or []):
        if not isinstance(name, str):
            continue
        msgs = is_qualified_name(name)
        for msg in msgs:
            errs.append(FieldError(f"{path}[{i}]", Invalid, msg, name))
        if not msgs and "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.append(
                FieldError(
                    f"{path}[{i}]", Invalid, "name is neither a standard finalizer name nor is it fully qualified", name
                )
            )
        elif not msgs:
            _remember(_VALID_FINALIZERS, name)


def validate_object_meta(
    meta: Obj,
    *,
    namespaced: bool,
    path: str = "metadata",
    name_fn: NameFn = name_is_dns_subdomain,
    stored: Obj | None = None,
) -> list[FieldError]:
    """Kubernetes' `ValidateObjectMeta` (core flavour, with the finalizer-name check) for a create.

    `stored`: on an update, the stored metadata; a map or list the update shares with it (the same object, as
    a copy-on-write patch leaves it) passed these rules when it was stored, and is not walked again, nor is a
    name, `generateName` or namespace that is the stored one's very string (a pod's four writes keep them)."""
    errs: Errors = []
    if type(meta) is not dict:
        return [FieldError(path, Invalid, "must be of type object", meta)]
    if stored is None:
        stored = _NOTHING
    # The string fields are read inline (as `get_str` would, its path built only for an error): this runs for
    # every create of every object.
    generate_name = meta.get("generateName")
    if type(generate_name) is not str:
        if generate_name is not None:
            errs.append(type_error(f"{path}.generateName", generate_name, "string"))
        generate_name = ""
    subdomains = name_fn is name_is_dns_subdomain  # names are mostly unique: valid ones are matched in place
    if (
        generate_name
        and generate_name is not stored.get("generateName")
        and not (subdomains and generate_name in _VALID_GENERATE_NAMES)
    ):
        masked = generate_name[:-1] + "a" if len(generate_name) > 1 and generate_name[-1] == "-" else generate_name
        if not subdomains or len(masked) > DNS1123_SUBDOMAIN_MAX or dns1123_subdomain_match(masked) is None:
            for msg in name_fn(generate_name, True):
                errs.append(FieldError(f"{path}.generateName", Invalid, msg, generate_name))
        else:
            _remember(_VALID_GENERATE_NAMES, generate_name)
    name = meta.get("name")
    if type(name) is not str:
        if name is not None:
            errs.append(type_error(f"{path}.name", name, "string"))
        name = ""
    if not name:
        errs.append(FieldError(f"{path}.name", Required, "name or generateName is required"))
    elif name is stored.get("name"):
        pass
    elif not subdomains or len(name) > DNS1123_SUBDOMAIN_MAX or dns1123_subdomain_match(name) is None:
        for msg in name_fn(name, False):
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))
    namespace = meta.get("namespace")
    if type(namespace) is not str:
        if namespace is not None:
            errs.append(type_error(f"{path}.namespace", namespace, "string"))
        namespace = ""
    if namespaced:
        if not namespace:
            errs.append(FieldError(f"{path}.namespace", Required))
        elif namespace is not stored.get("namespace") and namespace not in _VALID_NAMESPACES:
            if len(namespace) > DNS1123_LABEL_MAX or dns1123_label_match(namespace) is None:  # valid: matched in place
                for msg in is_dns1123_label(namespace):  # `NameIsDNSLabel` of a name, not a prefix
                    errs.append(FieldError(f"{path}.namespace", Invalid, msg, namespace))
            else:
                _remember(_VALID_NAMESPACES, namespace)
    elif namespace:
        errs.append(FieldError(f"{path}.namespace", Forbidden, "not allowed on this type"))
    generation = meta.get("generation")
    if generation is not None and not (type(generation) is int and 0 <= generation <= INT64_MAX):
        generation = get_int(meta, "generation", f"{path}.generation", errs, bits=64)
        validate_nonnegative(generation, f"{path}.generation", errs)
    _validate_meta_collections(meta, path, errs, stored)
    return errs


_READ = object()
_NOTHING: Obj = {}
"""The stored metadata of a create: nothing in it is any value's own."""


def _validate_meta_collections(meta: Obj, path: str, errs: Errors, stored: Obj | None, finalizers: Any = _READ) -> None:
    """Labels, annotations, owner references and finalizers, skipping those shared with `stored`
    (`finalizers`: the list already read, with its type checked, by the caller). An absent (or null) one has
    nothing to check."""

    # A collection is shared when it is the stored object's own (not None): read inline rather than through a
    # helper, as this runs for every write of every object (four a pod).
    if stored is None:
        stored = _NOTHING
    paths = _META_PATHS if path == "metadata" else None
    value = meta.get("labels")
    if value is not None and value is not stored.get("labels") and not _known_labels(value):
        at = paths[0] if paths is not None else f"{path}.labels"
        validate_labels(get_str_map(meta, "labels", at, errs), at, errs)
    value = meta.get("annotations")
    if value is not None and value is not stored.get("annotations") and not _known_annotations(value):
        at = paths[1] if paths is not None else f"{path}.annotations"
        validate_annotations(get_str_map(meta, "annotations", at, errs), at, errs)
    value = meta.get("ownerReferences")
    if value is not None and value is not stored.get("ownerReferences"):
        at = paths[2] if paths is not None else f"{path}.ownerReferences"
        _validate_owner_references(
            value if type(value) is list else get_list(meta, "ownerReferences", at, errs), at, errs
        )
    value = meta.get("finalizers")
    if value is not None and value is not stored.get("finalizers"):
        at = paths[3] if paths is not None else f"{path}.finalizers"
        if finalizers is _READ:
            finalizers = value if type(value) is list else get_list(meta, "finalizers", at, errs)
        _validate_finalizers(finalizers, at, errs)


def _known_labels(labels: Any) -> bool:
    """A map of strings whose every key and value `validate_labels` would pass over as known valid: neither
    `get_str_map` nor `validate_labels` adds an error to it, so neither is called (a Job's pods repeat theirs)."""
    if type(labels) is not dict:
        return False
    keys, values = _VALID_LABEL_KEYS, _VALID_LABEL_VALUES
    for key, value in labels.items():
        if type(value) is not str or key not in keys:
            return False
        if value not in values and not (len(value) <= LABEL_VALUE_MAX and value.isalnum() and value.isascii()):
            return False
    return True


_ANNOTATIONS_SHORT = TOTAL_ANNOTATION_SIZE_LIMIT // 4
"""At most this many characters (keys and values) encode to at most the limit's bytes: UTF-8 takes at most 4 a
character."""


def _known_annotations(annotations: Any) -> bool:
    """A map of strings whose keys are known valid and whose characters are ASCII and too few to pass the size
    limit: neither `get_str_map` nor `validate_annotations` adds an error to it (nor raises: each encodes), so
    neither is called."""
    if type(annotations) is not dict:
        return False
    known = _VALID_ANNOTATION_KEYS
    total = 0
    for key, value in annotations.items():
        if type(value) is not str or key not in known or not value.isascii():
            return False
        total += len(key) + len(value)
    return total <= _ANNOTATIONS_SHORT


_META_PATHS = ("metadata.labels", "metadata.annotations", "metadata.ownerReferences", "metadata.finalizers")
"""The collections' paths under `metadata`, where nearly every object's are."""


def validate_metadata_update(obj: Obj, old: Any) -> list[FieldError]:
    """`ValidateObjectMetaUpdate(&obj.ObjectMeta, &old.ObjectMeta)` for two whole objects, a metadata that is no
    object read as empty (the decoder has already refused it), so the validators of each kind share one entry."""
    meta = obj.get("metadata")
    old_meta = old.get("metadata") if type(old) is dict else None
    return validate_object_meta_update(meta if type(meta) is dict else {}, old_meta if type(old_meta) is dict else {})


def validate_object_meta_update(
    meta: Obj, old: Obj, *, path: str = "metadata", collections_passed: bool = False
) -> list[FieldError]:
    """Kubernetes' `ValidateObjectMetaUpdate`: identity fields immutable, resourceVersion required.

    `collections_passed`: the caller's `validate_object_meta(meta, stored=old)` (same `path`) found no error in
    the labels, annotations, owner references and finalizers; the same check of the same input finds none here
    either, so it is not run twice (a pod update runs both, as `ValidatePodUpdate` does)."""
    errs: Errors = []
    if type(meta) is not dict:
        return [FieldError(path, Invalid, "must be of type object", meta)]
    if type(old) is not dict:
        old = {}
    # Each of the three read in place when of its type, the field path (only an error's) then never built: this
    # runs for every update of every object (two a pod).
    finalizers = meta.get("finalizers")
    if finalizers is not None and type(finalizers) is not list:
        finalizers = get_list(meta, "finalizers", f"{path}.finalizers", errs)
    if old.get("deletionTimestamp"):
        new_set = {f for f in finalizers or [] if isinstance(f, str)}
        old_set = {f for f in old.get("finalizers") or [] if isinstance(f, str)}
        extra = sorted(new_set - old_set)
        if extra:
            listing = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(
                FieldError(
                    f"{path}.finalizers",
                    Forbidden,
                    f"no new finalizers can be added if the object is being deleted, found new finalizers {listing}",
                )
            )
    resource_version = meta.get("resourceVersion")
    if resource_version is not None and type(resource_version) is not str:
        resource_version = get_str(meta, "resourceVersion", f"{path}.resourceVersion", errs)
    if not resource_version:
        errs.append(FieldError(f"{path}.resourceVersion", Invalid, "must be specified for an update", ""))
    generation = meta.get("generation")
    if generation is not None and not (type(generation) is int and -(2**63) <= generation < 2**63):  # int64
        generation = get_int(meta, "generation", f"{path}.generation", errs, bits=64)
    generation = generation or 0
    raw_old_generation = old.get("generation")
    old_generation = raw_old_generation if type(raw_old_generation) is int else 0
    if generation < old_generation:
        errs.append(FieldError(f"{path}.generation", Invalid, "must not be decremented", generation))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        new_value = meta.get(key)
        old_value = old.get(key)
        # the same str (or both None) is equal without the call: most updates keep these as they were read
        if new_value is old_value and (new_value is None or type(new_value) is str):
            continue
        if not semantic_equal(new_value, old_value):
            shown = new_value if new_value is not None else ("" if key in ("name", "namespace", "uid") else None)
            errs.append(FieldError(f"{path}.{key}", Invalid, IMMUTABLE_MSG, shown))
    if not collections_passed:
        _validate_meta_collections(meta, path, errs, old, finalizers)
    return errs


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(
    selector: Obj | None, path: str, errs: Errors, *, allow_invalid_label_value: bool = False
) -> None:
    """`ValidateLabelSelector`; values are checked as label values unless `allow_invalid_label_value`
    (`LabelSelectorValidationOptions.AllowInvalidLabelValueInSelector`, which an update sets when the stored
    selector already has such a value)."""
    if selector is None:
        return
    validate_labels(get_str_map(selector, "matchLabels", f"{path}.matchLabels", errs), f"{path}.matchLabels", errs)
    exprs_path = f"{path}.matchExpressions"
    for i, expr in items_of(get_list(selector, "matchExpressions", exprs_path, errs), exprs_path, errs):
        item = f"{exprs_path}[{i}]"
        operator = get_str(expr, "operator", f"{item}.operator", errs) or ""
        raw_values = get_list(expr, "values", f"{item}.values", errs) or []
        if operator in ("In", "NotIn"):
            if not raw_values:
                errs.append(
                    FieldError(f"{item}.values", Required, "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if raw_values:
                errs.append(
                    FieldError(
                        f"{item}.values",
                        Forbidden,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(FieldError(f"{item}.operator", Invalid, "not a valid selector operator", operator))
        validate_label_name(get_str(expr, "key", f"{item}.key", errs) or "", f"{item}.key", errs)
        for j, value in enumerate(raw_values):
            if type(value) is not str:
                errs.append(FieldError(f"{item}.values[{j}]", Invalid, "must be of type string", value))
                continue
            if not allow_invalid_label_value:
                for msg in is_label_value(value):
                    errs.append(FieldError(f"{item}.values[{j}]", Invalid, msg, value))


def selector_has_invalid_label_value(selector: Any) -> bool:
    """`LabelSelectorHasInvalidLabelValue` (apimachinery pkg/apis/meta/v1/validation): a matchExpressions value
    that is no valid label value."""
    if type(selector) is not dict or type(selector.get("matchExpressions")) is not list:
        return False
    for expr in selector["matchExpressions"]:
        values = expr.get("values") if type(expr) is dict else None
        for value in values if type(values) is list else []:
            if type(value) is str and is_label_value(value):
                return True
    return False


def selector_matches(selector: Obj | None, labels: dict[str, str] | None) -> bool:
    """Whether a selector (already validated) matches a label set; an absent selector matches nothing."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key = expr.get("key")
        operator = expr.get("operator")
        values = expr.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def semantic_equal(a: Any, b: Any) -> bool:
    """Kubernetes' semantic deep equality on JSON: absent, null, `[]` and `{}` are all the same empty value.

    Iterative, so arbitrarily deep input cannot exhaust the interpreter stack.
    """
    try:
        if a == b:  # the common case (unchanged objects), at C speed
            return True
    except RecursionError:
        pass
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if _is_empty(x) and _is_empty(y):
            continue
        if type(x) is dict and type(y) is dict:
            stack.extend((x.get(k), y.get(k)) for k in x.keys() | y.keys())
        elif type(x) is list and type(y) is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(x) is not type(y) or x != y:
            return False
    return True


__all__ = [
    "IMMUTABLE_MSG",
    "NEGATIVE_MSG",
    "get_obj",
    "selector_matches",
    "semantic_equal",
    "validate_annotations",
    "validate_label_name",
    "validate_label_selector",
    "validate_labels",
    "validate_metadata_update",
    "validate_nonnegative",
    "validate_object_meta",
    "validate_object_meta_update",
]
