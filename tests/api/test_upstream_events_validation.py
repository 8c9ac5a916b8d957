"""Upstream's Event validation tables (pkg/apis/core/validation/events_test.go), through kjobs' validators and API.

Upstream's rows are internal `core.Event`s validated as a given request version would: core `v1` and
`events.k8s.io/v1beta1` (the legacy rules only) or `events.k8s.io/v1` (the strict ones). Here a row is written in
core `v1` JSON; a `v1` row is converted to `events.k8s.io/v1` JSON (`from_core`, as the API shows it) and run
through that version's validator. kjobs serves no `v1beta1`: its rows run through core `v1`, whose rules are the
same legacy ones (only the reporting controller's path differs). Upstream asserts validity; the ports assert it,
and the first error's path where the row names what is wrong. docs/upstream-core-validation.md lists them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError, FieldError
from kjobs.api.events_v1 import (
    from_core,
    validate_event,
    validate_event_update,
    validate_event_v1,
    validate_event_v1_update,
)
from kjobs.api.types import Obj
from kjobs.client.resources import EVENTS
from tests.api.upstream_validation_support import causes, run

SOME_TIME = "2017-09-19T13:49:16.000000Z"  # metav1.MicroTime{time.Unix(1505828956, 0)}
LATER_TIME = "2017-09-19T13:49:59.000000Z"  # time.Unix(1505828999, 0)
SOME_TIMESTAMP = "2017-09-19T13:49:16Z"  # metav1.Time{time.Unix(1505828956, 0)}
LONG_INSTANCE = "node-xyz" + "z" * 140
LONG_MESSAGE = "\n".join(["z" * 99] * 10) + "\n" + "z" * 75  # the row's eleven lines: over 1 KiB


def event(name: str, namespace: str, involved: Obj, **fields: Any) -> Obj:
    """A core `v1` Event as a row writes it (`ReportingController` is `reportingComponent` in core JSON)."""
    meta: Obj = {}
    if name:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta, "involvedObject": involved, **fields}


NODE = {"apiVersion": "v1", "kind": "Node"}
NEW = {
    "eventTime": SOME_TIME,
    "reportingComponent": "k8s.io/my-controller",
    "reportingInstance": "node-xyz",
    "action": "Do",
    "reason": "Because",
}
"""What a "new" Event (one with an eventTime) carries in most rows."""


# TestValidateEventForCoreV1Events: (name, valid, event)
CORE_V1_ROWS = [
    ("test1", False, event("test1", "foo", {"namespace": "bar", "kind": "Pod"})),
    ("test2", False, event("test2", "aoeu-_-aoeu", {"namespace": "aoeu-_-aoeu", "kind": "Pod"})),
    ("test3", True, event("test3", "default", {"apiVersion": "v1", "kind": "Node"})),
    ("test4", True, event("test4", "default", {"apiVersion": "v1", "kind": "Namespace"})),
    ("test5", True, event("test5", "default", {"apiVersion": "apps/v1", "kind": "NoKind", "namespace": "default"})),
    ("test6", False, event("test6", "default", {"apiVersion": "batch/v1", "kind": "Job", "namespace": "foo"})),
    ("test7", True, event("test7", "default", {"apiVersion": "batch/v1", "kind": "Job", "namespace": "default"})),
    ("test8", False, event("test8", "default", {"apiVersion": "other/v1beta1", "kind": "Job", "namespace": "foo"})),
    ("test9", True, event("test9", "foo", {"apiVersion": "other/v1beta1", "kind": "Job", "namespace": "foo"})),
    ("test10", False, event("test10", "default", {"apiVersion": "batch", "kind": "Job", "namespace": "foo"})),
    ("test11", True, event("test11", "foo", {"apiVersion": "batch/v1", "kind": "Job", "namespace": "foo"})),
    ("test12", False, event("test12", "foo", {"apiVersion": "other/v1beta1", "kind": "FooBar", "namespace": "bar"})),
    ("test13", False, event("test13", "", {"apiVersion": "other/v1beta1", "kind": "FooBar", "namespace": "bar"})),
    ("test14", False, event("test14", "foo", {"apiVersion": "other/v1beta1", "kind": "FooBar", "namespace": ""})),
]


def _stored_twice(ev: Obj) -> tuple[Obj, Obj]:
    """The row as an update over itself (an update names the resourceVersion it read)."""
    new = copy.deepcopy(ev)
    new["metadata"]["resourceVersion"] = "1"
    return new, copy.deepcopy(new)


def _first_path(errs: list[FieldError]) -> str | None:
    return errs[0].field if errs else None


@pytest.mark.parametrize(("valid", "ev"), [row[1:] for row in CORE_V1_ROWS], ids=[row[0] for row in CORE_V1_ROWS])
def test_validate_event_for_core_v1_events(valid: bool, ev: Obj) -> None:
    """Created, and updated over itself, through core `v1`: the legacy rules (the namespaces must agree)."""
    assert (validate_event(ev) == []) is valid
    assert (validate_event_update(*_stored_twice(ev)) == []) is valid
    if not valid and ev["metadata"].get("namespace") and ev["metadata"]["namespace"] != "aoeu-_-aoeu":
        assert _first_path(validate_event(ev)) == "involvedObject.namespace"


# TestValidateEventForNewV1beta1Events: (msg, valid, event, first error's path as core v1 names it)
V1BETA1_ROWS = [
    (
        "Old Event with EventTime should trigger new validation and fail",
        False,
        event("test", "default", NODE, eventTime=SOME_TIME),
        "reportingComponent",
    ),
    ("Valid new Event", True, event("test", "kube-system", NODE, **NEW), None),
    (
        "not qualified reportingController",
        False,
        event("test", "kube-system", NODE, **{**NEW, "reportingComponent": "my-contr@ller"}),
        "reportingComponent",
    ),
    (
        "too long reporting instance",
        False,
        event("test", "kube-system", NODE, **{**NEW, "reportingInstance": LONG_INSTANCE}),
        "reportingInstance",
    ),
    ("missing reason", False, event("test", "kube-system", NODE, **{**NEW, "reason": ""}), "reason"),
    ("missing action", False, event("test", "kube-system", NODE, **{**NEW, "action": ""}), "action"),
    ("missing namespace", False, event("test", "", NODE, **{**NEW, "action": ""}), "involvedObject.namespace"),
    (
        "too long message",
        False,
        event("test", "", NODE, **NEW, message=LONG_MESSAGE),
        "involvedObject.namespace",
    ),
]


@pytest.mark.parametrize(
    ("valid", "ev", "path"), [row[1:] for row in V1BETA1_ROWS], ids=[row[0] for row in V1BETA1_ROWS]
)
def test_validate_event_for_new_v1beta1_events(valid: bool, ev: Obj, path: str | None) -> None:
    """`v1beta1`'s rules are the legacy ones; kjobs serves no `v1beta1`, so they run as core `v1` requests."""
    assert (validate_event(ev) == []) is valid
    assert (validate_event_update(*_stored_twice(ev)) == []) is valid
    assert _first_path(validate_event(ev)) == path


# TestValidateEventCreateForNewV1Events: (msg, valid, event, a path among the errors)
V1_CREATE_ROWS = [
    ("valid new event", True, event("test", "kube-system", NODE, **NEW, type="Normal"), None),
    (
        "missing name in objectMeta",
        False,
        event("", "kube-system", NODE, **{**NEW, "action": ""}),
        "metadata.name",
    ),
    (
        "missing namespace in objectMeta",
        False,
        event("test", "", NODE, **{**NEW, "action": ""}),
        "metadata.namespace",
    ),
    ("missing EventTime", False, event("test", "default", NODE), "eventTime"),
    (
        "not qualified reportingController",
        False,
        event("test", "kube-system", NODE, **{**NEW, "reportingComponent": "my-contr@ller"}),
        "reportingController",
    ),
    (
        "too long reporting instance",
        False,
        event("test", "kube-system", NODE, **{**NEW, "reportingInstance": LONG_INSTANCE}),
        "reportingInstance",
    ),
    ("missing reason", False, event("test", "kube-system", NODE, **{**NEW, "reason": ""}), "reason"),
    ("missing action", False, event("test", "kube-system", NODE, **{**NEW, "action": ""}), "action"),
    ("too long message", False, event("test", "", NODE, **NEW, message=LONG_MESSAGE), "message"),
    ("invalid type", False, event("test", "kube-system", NODE, **NEW, type="invalid-type"), "type"),
    (
        "non-empty firstTimestamp",
        False,
        event("test", "kube-system", NODE, **NEW, type="Normal", firstTimestamp=SOME_TIMESTAMP),
        "firstTimestamp",
    ),
    (
        "non-empty lastTimestamp",
        False,
        event("test", "kube-system", NODE, **NEW, type="Normal", lastTimestamp=SOME_TIMESTAMP),
        "lastTimestamp",
    ),
    ("non-empty count", False, event("test", "kube-system", NODE, **NEW, type="Normal", count=123), "count"),
    (
        "non-empty source",
        False,
        event("test", "kube-system", NODE, **NEW, type="Normal", source={"host": "host"}),
        "source",
    ),
    (
        "non-nil series with cound < 2",
        False,
        event("test", "kube-system", NODE, **NEW, type="Normal", series={"count": 0, "lastObservedTime": SOME_TIME}),
        "series.count",
    ),
    (
        "non-nil series with empty lastObservedTime",
        False,
        event("test", "kube-system", NODE, **NEW, type="Normal", series={"count": 2}),
        "series.lastObservedTime",
    ),
]


@pytest.mark.parametrize(
    ("valid", "ev", "path"), [row[1:] for row in V1_CREATE_ROWS], ids=[row[0] for row in V1_CREATE_ROWS]
)
def test_validate_event_create_for_new_v1_events(valid: bool, ev: Obj, path: str | None) -> None:
    """Created through `events.k8s.io/v1`: the strict rules on top of the legacy ones."""
    errs = validate_event_v1(from_core(ev))
    assert (errs == []) is valid
    if path is not None:
        assert path in [e.field for e in errs]


UPDATED = {**NEW, "reason": "Yeees", "type": "Normal"}


def _pair(new: Obj, old: Obj) -> tuple[Obj, Obj]:
    for ev in (new, old):
        ev["metadata"]["resourceVersion"] = "1"
    return new, old


# TestValidateEventUpdateForNewV1Events: (msg, valid, new, old, the immutable path named)
V1_UPDATE_ROWS = [
    (
        "valid new updated event",
        True,
        *_pair(
            event(
                "test",
                "kube-system",
                {"apiVersion": "v2", "kind": "Node"},
                **UPDATED,
                series={"count": 2, "lastObservedTime": SOME_TIME},
            ),
            event(
                "test",
                "kube-system",
                {"apiVersion": "v2", "kind": "Node"},
                **UPDATED,
                series={"count": 1, "lastObservedTime": SOME_TIME},
            ),
        ),
        None,
    ),
    (
        "forbidden updates to involvedObject",
        False,
        *_pair(
            event("test", "kube-system", {"apiVersion": "v2", "kind": "Node"}, **UPDATED),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "involvedObject",
    ),
    (
        "forbidden updates to reason",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "reason": "Yeees-new"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "reason",
    ),
    (
        "forbidden updates to message",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED, message="new-message"),
            event("test", "kube-system", NODE, **UPDATED, message="message"),
        ),
        "message",
    ),
    (
        "forbidden updates to source",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED),
            event("test", "kube-system", NODE, **UPDATED, source={"host": "host"}),
        ),
        "source",
    ),
    (
        "forbidden updates to firstTimestamp",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED),
            event("test", "kube-system", NODE, **UPDATED, firstTimestamp=SOME_TIMESTAMP),
        ),
        "firstTimestamp",
    ),
    (
        "forbidden updates to lastTimestamp",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED),
            event("test", "kube-system", NODE, **UPDATED, lastTimestamp=SOME_TIMESTAMP),
        ),
        "lastTimestamp",
    ),
    (
        "forbidden updates to count",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED),
            event("test", "kube-system", NODE, **UPDATED, count=2),
        ),
        "count",
    ),
    (
        "forbidden updates to type",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "type": "Warning"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "type",
    ),
    (
        "forbidden updates to eventTime",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "eventTime": LATER_TIME}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "eventTime",
    ),
    (
        "forbidden updates to action",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "action": "Undo"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "action",
    ),
    (
        "forbidden updates to related",
        False,
        *_pair(
            event("test", "kube-system", NODE, **UPDATED, related={"apiVersion": "v1"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "related",
    ),
    (
        "forbidden updates to reportingController",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "reportingComponent": "k8s.io/my-controller/new"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "reportingController",
    ),
    (
        "forbidden updates to reportingInstance",
        False,
        *_pair(
            event("test", "kube-system", NODE, **{**UPDATED, "reportingInstance": "node-xyz-new"}),
            event("test", "kube-system", NODE, **UPDATED),
        ),
        "reportingInstance",
    ),
]


@pytest.mark.parametrize(
    ("valid", "new", "old", "path"), [row[1:] for row in V1_UPDATE_ROWS], ids=[row[0] for row in V1_UPDATE_ROWS]
)
def test_validate_event_update_for_new_v1_events(valid: bool, new: Obj, old: Obj, path: str | None) -> None:
    """Updated through `events.k8s.io/v1`: everything but the series (and metadata) is immutable."""
    errs = validate_event_v1_update(from_core(new), from_core(old))
    assert (errs == []) is valid
    if path is not None:  # only the changed field is immutable (`reason` is checked twice upstream, so twice here)
        assert {e.field for e in errs if e.detail == "field is immutable"} == {path}


def test_core_v1_names_the_reporting_controller_reporting_component() -> None:
    """Through core `v1` the API names the field as that version spells it (`legacyValidateEvent`'s
    `reportingControllerFieldName`): a new Event without a reporting controller is refused on
    `reportingComponent`, as kube-apiserver's 422 says."""

    async def scenario(client: Any) -> None:
        body = event("ev", "default", {"kind": "Pod", "namespace": "default"}, **{**NEW, "reportingComponent": ""})
        with pytest.raises(ApiError) as info:
            await client.create(EVENTS, "default", body)
        assert causes(info.value) == [
            ("reportingComponent", "FieldValueRequired", "Required value"),
            ("reportingComponent", "FieldValueInvalid", 'Invalid value: "": name part must be non-empty'),
            (
                "reportingComponent",
                "FieldValueInvalid",
                "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ]
        stored = await client.create(EVENTS, "default", event("ok", "default", NODE, **NEW))
        assert stored["reportingComponent"] == "k8s.io/my-controller"

    run(scenario)
