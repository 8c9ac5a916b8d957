"""The two versions of an Event (kjobs.api.events_v1): conversion both ways and each version's validation."""

from __future__ import annotations

from typing import Any

from kjobs.api.events_v1 import from_core, to_core, validate_event, validate_event_v1, validate_event_v1_update

NEW = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "ns"},
    "eventTime": "2026-01-02T03:04:05.000000Z",
    "series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:05.000000Z"},
    "reportingController": "example.com/ctl",
    "reportingInstance": "ctl-1",
    "action": "Sync",
    "reason": "Synced",
    "regarding": {"kind": "Pod", "namespace": "ns", "name": "p"},
    "related": {"kind": "Node", "name": "n"},
    "note": "done",
    "type": "Warning",
}

NAME_PART_FORMAT = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _messages(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors]


def test_events_v1_to_core_renames_and_writes_what_go_always_encodes() -> None:
    core = to_core(NEW)
    assert core == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p"},
        "message": "done",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "reportingComponent": "example.com/ctl",
        "eventTime": "2026-01-02T03:04:05.000000Z",
        "series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:05.000000Z"},
        "reportingInstance": "ctl-1",
        "action": "Sync",
        "reason": "Synced",
        "related": {"kind": "Node", "name": "n"},
        "type": "Warning",
    }
    assert from_core(core) == {
        **NEW,
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": None,
        "deprecatedLastTimestamp": None,
    }


def test_core_to_events_v1_moves_the_legacy_fields_to_deprecated_ones() -> None:
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "old", "namespace": "ns"},
        "involvedObject": {"kind": "Job", "namespace": "ns", "name": "j"},
        "reason": "SuccessfulCreate",
        "message": "Created pod: j-x",
        "source": {"component": "job-controller", "host": "h"},
        "firstTimestamp": "2026-01-02T03:04:05Z",
        "lastTimestamp": "2026-01-02T03:04:09Z",
        "count": 3,
        "type": "Normal",
    }
    v1 = from_core(core)
    assert v1 == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "old", "namespace": "ns"},
        "eventTime": None,
        "reason": "SuccessfulCreate",
        "regarding": {"kind": "Job", "namespace": "ns", "name": "j"},
        "note": "Created pod: j-x",
        "type": "Normal",
        "deprecatedSource": {"component": "job-controller", "host": "h"},
        "deprecatedFirstTimestamp": "2026-01-02T03:04:05Z",
        "deprecatedLastTimestamp": "2026-01-02T03:04:09Z",
        "deprecatedCount": 3,
    }
    back = to_core(v1)
    assert {k: v for k, v in back.items() if v not in (None, "")} == core


def test_events_v1_create_requires_a_new_events_fields() -> None:
    assert validate_event_v1(NEW) == []
    bare = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"}}
    assert _messages(validate_event_v1(bare)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace',
        "eventTime: Required value",
        'type: Invalid value: "": has invalid value: ',
    ]
    timed = {**bare, "eventTime": "2026-01-02T03:04:05.000000Z", "type": "Normal"}
    timed["regarding"] = {"namespace": "ns"}
    assert _messages(validate_event_v1(timed)) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        f'reportingController: Invalid value: "": {NAME_PART_FORMAT}',
        "reportingInstance: Required value",
        "action: Required value",
        "reason: Required value",
    ]


def test_events_v1_create_refuses_the_deprecated_fields_and_checks_lengths() -> None:
    event = {
        **NEW,
        "deprecatedCount": 2,
        "deprecatedSource": {"component": "c"},
        "deprecatedFirstTimestamp": "2026-01-02T03:04:05Z",
        "note": "x" * 1025,
        "reportingController": "not a name",
        "series": {"count": 1},
    }
    assert _messages(validate_event_v1(event)) == [
        f'reportingController: Invalid value: "not a name": {NAME_PART_FORMAT}',
        'message: Invalid value: "": can have at most 1024 characters',
        'series.count: Invalid value: "": should be at least 2',
        "series.lastObservedTime: Required value",
        'firstTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]


def test_core_create_keeps_the_legacy_rules_only() -> None:
    old_style = {
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "namespace": "other", "name": "p"},
        "type": "Whatever",
    }
    assert _messages(validate_event(old_style)) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    ]
    assert (
        validate_event(
            {
                **old_style,
                "involvedObject": {"kind": "Node", "name": "n"},
                "metadata": {"name": "e", "namespace": "default"},
            }
        )
        == []
    )


def test_events_v1_update_keeps_the_event_but_its_series_and_metadata() -> None:
    old = {**NEW, "metadata": {**NEW["metadata"], "resourceVersion": "5"}}
    series = {**old, "series": {"count": 3, "lastObservedTime": "2026-01-02T03:06:05.000000Z"}}
    assert validate_event_v1_update(series, old) == []
    changed = {**old, "note": "other", "reportingController": "example.com/other", "action": "Other"}
    assert _messages(validate_event_v1_update(changed, old)) == [
        'message: Invalid value: "other": field is immutable',
        'action: Invalid value: "Other": field is immutable',
        'reportingController: Invalid value: "example.com/other": field is immutable',
    ]
