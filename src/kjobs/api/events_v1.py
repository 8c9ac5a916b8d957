"""Events in their two versions: core `v1` (what is stored) and `events.k8s.io/v1` (a view of the same objects).

The apiserver serves both from one `events` storage: a request through `events.k8s.io/v1` is converted to the
stored form on the way in and back on the way out (kubernetes/kubernetes pkg/apis/events/v1/conversion.go:
`note`↔`message`, `regarding`↔`involvedObject`, `deprecatedSource`↔`source`, `deprecated{First,Last}Timestamp`
and `deprecatedCount`↔`{first,last}Timestamp` and `count`, `reportingController`↔`reportingComponent`; the other
fields keep their names). Each side is written with its Go type's JSON tags, so a field Go always encodes (a zero
time as `null`, an empty struct as `{}`) is there as it is on a cluster.

Validation depends on the version a request came through (pkg/apis/core/validation/events.go,
`ValidateEventCreate` / `ValidateEventUpdate`): every Event passes the legacy rules; one created or updated
through `events.k8s.io/v1` also has to be a "new" Event (`eventTime`, `reportingController`,
`reportingInstance`, `action`, `reason` required; no deprecated fields on create; most fields immutable). Field
paths are the stored type's (`involvedObject.namespace`, `message`), as the apiserver validates the internal
object.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_formats import is_dns1123_subdomain, is_qualified_name
from kjobs.api.validation_meta import IMMUTABLE_MSG, semantic_equal, validate_object_meta, validate_object_meta_update

API_VERSION = "events.k8s.io/v1"

REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024
"""The limits of pkg/apis/core/validation/events.go."""

# (events.k8s.io/v1 name, core v1 name) of the fields whose names differ
_RENAMED = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
)
_SAME = ("eventTime", "series", "reportingInstance", "action", "reason", "related", "type")

# What each Go type encodes even when empty (no `omitempty`, or a struct/time `omitempty` cannot drop), and as what.
_V1_ALWAYS: dict[str, Any] = {
    "eventTime": None,
    "regarding": {},
    "deprecatedSource": {},
    "deprecatedFirstTimestamp": None,
    "deprecatedLastTimestamp": None,
}
_CORE_ALWAYS: dict[str, Any] = {
    "involvedObject": {},
    "source": {},
    "firstTimestamp": None,
    "lastTimestamp": None,
    "eventTime": None,
    "reportingComponent": "",
    "reportingInstance": "",
}

FIELD_LABELS: dict[str, str] = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}
"""The field selectors `events.k8s.io/v1` accepts, and the stored Event's field each selects on
(pkg/apis/events/v1/conversion.go, `AddFieldLabelConversionsForEvent`)."""


def _convert(obj: Obj, api_version: str, pairs: list[tuple[str, str]], always: dict[str, Any]) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": api_version}
    if "metadata" in obj:
        out["metadata"] = obj["metadata"]
    for source, target in pairs:
        value = obj.get(source)
        if value is not None and value != "" and value != 0:
            out[target] = value
        elif target in always:
            out[target] = always[target]
    return out


_TO_CORE = [*_RENAMED, *((name, name) for name in _SAME)]
_TO_V1 = [(core, v1) for v1, core in _RENAMED] + [(name, name) for name in _SAME]


def to_core(event: Obj) -> Obj:
    """The core `v1` Event an `events.k8s.io/v1` Event is stored as (shares nested values with `event`)."""
    return _convert(event, "v1", _TO_CORE, _CORE_ALWAYS)


def from_core(event: Obj) -> Obj:
    """The `events.k8s.io/v1` Event a stored core `v1` Event reads as (shares nested values with `event`)."""
    return _convert(event, API_VERSION, _TO_V1, _V1_ALWAYS)


# ------------------------------------------------------------------------------------------- validation

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired


def _text(event: Obj, key: str) -> str:
    value = event.get(key)
    return value if isinstance(value, str) else ""


def _dict(event: Obj, key: str) -> Obj:
    value = event.get(key)
    return value if isinstance(value, dict) else {}


def _legacy(event: Obj, controller_path: str = "reportingController") -> list[FieldError]:
    """`legacyValidateEvent`: what every Event must satisfy, whichever version wrote it (core field names). Its
    reporting controller is named as the request's version names it: `reportingComponent` through core `v1`."""
    errs: list[FieldError] = []
    meta = _dict(event, "metadata")
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    involved_namespace = _text(_dict(event, "involvedObject"), "namespace")
    if not event.get("eventTime"):
        # an "old" Event: its namespace is its object's (or default, or none, for a cluster-scoped object)
        if (not involved_namespace and namespace not in ("", "default")) or (
            involved_namespace and namespace != involved_namespace
        ):
            errs.append(
                FieldError("involvedObject.namespace", Invalid, "does not match event.namespace", involved_namespace)
            )
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            errs.append(
                FieldError("involvedObject.namespace", Invalid, "does not match event.namespace", involved_namespace)
            )
        controller = _text(event, "reportingComponent")
        if not controller:
            errs.append(FieldError(controller_path, Required))
        for msg in is_qualified_name(controller):
            errs.append(FieldError(controller_path, Invalid, msg, controller))
        _bounded(event, "reportingInstance", "reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT, errs, required=True)
        _bounded(event, "action", "action", ACTION_LENGTH_LIMIT, errs, required=True)
        _bounded(event, "reason", "reason", REASON_LENGTH_LIMIT, errs, required=True)
        _bounded(event, "message", "message", NOTE_LENGTH_LIMIT, errs, required=False)
    for msg in is_dns1123_subdomain(namespace):
        errs.append(FieldError("namespace", Invalid, msg, namespace))
    return errs


def _bounded(event: Obj, key: str, path: str, limit: int, errs: list[FieldError], *, required: bool) -> None:
    value = _text(event, key)
    if required and not value:
        errs.append(FieldError(path, Required))
    if len(value) > limit:
        errs.append(FieldError(path, Invalid, f"can have at most {limit} characters", ""))


def _series(event: Obj) -> list[FieldError]:
    """`validateV1EventSeries`."""
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs: list[FieldError] = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        errs.append(FieldError("series.count", Invalid, "should be at least 2", ""))
    if not series.get("lastObservedTime"):
        errs.append(FieldError("series.lastObservedTime", Required))
    return errs


CORE_CONTROLLER_PATH = "reportingComponent"
"""The path of a core `v1` request's reporting-controller errors (`legacyValidateEvent` names the field as the
request's group version does, pkg/apis/core/validation/events.go)."""


def validate_event(event: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """An Event created through core `v1`: the legacy rules, then ObjectMeta's (`rest.BeforeCreate` runs the
    common metadata validation once the strategy's passed)."""
    return _legacy(event, CORE_CONTROLLER_PATH) or validate_object_meta(_dict(event, "metadata"), namespaced=True)


def validate_event_update(event: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """An Event updated through core `v1`: the legacy rules, then ObjectMeta's update rules."""
    return _legacy(event, CORE_CONTROLLER_PATH) or validate_object_meta_update(
        _dict(event, "metadata"), _dict(old, "metadata")
    )


def validate_event_v1(event: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """An Event created through `events.k8s.io/v1` (given in that version): `ValidateEventCreate`'s strict
    rules on top of the legacy ones."""
    core = to_core(event)
    errs = _legacy(core)
    errs += validate_object_meta(_dict(core, "metadata"), namespaced=True)
    errs += _series(core)
    if not core.get("eventTime"):
        errs.append(FieldError("eventTime", Required))
    kind = core.get("type")
    if kind not in ("Normal", "Warning"):
        errs.append(FieldError("type", Invalid, f"has invalid value: {kind if isinstance(kind, str) else ''}", ""))
    for key in ("firstTimestamp", "lastTimestamp"):
        if core.get(key):
            errs.append(FieldError(key, Invalid, "needs to be unset", ""))
    if core.get("count"):
        errs.append(FieldError("count", Invalid, "needs to be unset", ""))
    source = _dict(core, "source")
    if source.get("component") or source.get("host"):
        errs.append(FieldError("source", Invalid, "needs to be unset", ""))
    return errs


_IMMUTABLE = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "reason",
    "type",
    "eventTime",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
)
"""`ValidateEventUpdate`'s immutable fields, in its order (`reason` is checked twice there, so reported twice)."""

_PATHS = {"reportingComponent": "reportingController"}


def validate_event_v1_update(event: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """An Event updated through `events.k8s.io/v1` (both given in that version): `ValidateEventUpdate`."""
    core, old_core = to_core(event), to_core(old)
    errs = _legacy(core)
    errs += validate_object_meta_update(_dict(core, "metadata"), _dict(old_core, "metadata"))
    if core.get("series") != old_core.get("series"):
        errs += _series(core)
    for key in _IMMUTABLE:
        if not semantic_equal(core.get(key), old_core.get(key)):
            errs.append(FieldError(_PATHS.get(key, key), Invalid, IMMUTABLE_MSG, _shown(core.get(key))))
    return errs


def _shown(value: Any) -> Any:
    """How `field.Invalid` prints the new value (a struct as Go's `%#v` would be unreadable: the JSON is kept)."""
    return "" if value is None else value
