"""Stop 39, second round: the strategic merge's helpers rewritten for fewer calls give the merge it gave.

`_set_order` names elements through one `_idents` call a list instead of a closure call an element,
`_merge_list` tests its strategy and its elements' kinds with plain loops, `_scalars_only` is a loop; stop 49:
`_merge_list` copies a flat new element without its nulls in one pass (`_stripped_flat`) where the plain version
calls `_strip`. The plain versions are kept here as they were; hypothesis makes pod statuses and status patches
(conditions and container statuses with repeated, missing and non-map elements, nulls, `$setElementOrder/…` in
any order) and the merge is run twice, once with the plain helpers patched in: the same merged object, or the
same error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import patch as P
from kjobs.server.schema import strategies_for
from tests.hypothesis_budget import examples

POD = strategies_for("io.k8s.api.core.v1.Pod")


def plain_scalars_only(value: dict[str, Any]) -> bool:
    return not any(type(v) is dict or type(v) is list for v in value.values())


def plain_merge_list(
    original: list[Any], patch: list[Any], path: tuple[str, ...], lookup: Any, mode: int = P._GENERAL
) -> list[Any]:
    strategy, merge_key = lookup(path)
    general = mode == P._GENERAL
    if general and any(isinstance(e, dict) and e.get(P._DIRECTIVE) == "replace" and len(e) == 1 for e in patch):
        return [P._strip(e, path, lookup) for e in patch if not (isinstance(e, dict) and P._DIRECTIVE in e)]
    if "merge" not in strategy.split(","):
        return list(patch) if mode == P._PLAIN else [P._strip(e, path, lookup, mode) for e in patch]
    if not merge_key or not all(isinstance(e, dict) for e in (*original, *patch)):
        merged = list(original)
        for element in patch:
            if general and isinstance(element, dict) and element.get(P._DIRECTIVE) == "delete":
                continue
            if element not in merged:
                merged.append(element)
        return merged
    result = list(original)
    for element in patch:
        if merge_key not in element:
            raise P.PatchError(f"map: {element} does not contain declared merge key: {merge_key}")
        key_value = element[merge_key]
        if general and element.get(P._DIRECTIVE) == "delete":
            result = [e for e in result if e.get(merge_key) != key_value]
            continue
        at = P._position(result, merge_key, key_value)
        if at is None:
            stripped = element if mode == P._PLAIN else P._strip(element, path, lookup, mode)
            if stripped is not None:
                result.append(stripped)
        else:
            merged_element = P._merge_map(result[at], element, path, lookup, mode)
            if merged_element is None:
                del result[at]
            else:
                result[at] = merged_element
    return result


def plain_set_order(
    original: dict[str, Any],
    result: dict[str, Any],
    patch: dict[str, Any],
    key: str,
    order: Any,
    path: tuple[str, ...],
    lookup: Any,
) -> None:
    if not isinstance(order, list):
        raise P.PatchError(f"{key} must be a list")
    field = key[len(P._ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    merge_key = lookup((*path, field))[1]

    def ident(element: Any) -> Any:
        return element.get(merge_key) if merge_key and isinstance(element, dict) else element

    wanted = [ident(e) for e in order]
    patch_list = patch.get(field)
    if isinstance(patch_list, list):
        named = [ident(e) for e in patch_list if not (isinstance(e, dict) and P._DIRECTIVE in e)]
        at = 0
        for value in named:
            while at < len(wanted) and wanted[at] != value:
                at += 1
            if at == len(wanted):
                raise P.PatchError(
                    f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                )
            at += 1
    before = original.get(field)
    rank_wanted = P._first_positions(wanted)
    rank_server = P._first_positions([ident(e) for e in before] if isinstance(before, list) else [])
    placed = [(rank_wanted(ident(e)), rank_server(ident(e)), e) for e in merged]
    ordered = sorted((p for p in placed if p[0] >= 0), key=lambda p: p[0])
    server_only = sorted((p for p in placed if p[0] < 0), key=lambda p: p[1])
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(ordered):
        if j >= len(ordered) or (i < len(server_only) and 0 <= server_only[i][1] < ordered[j][1]):
            out.append(server_only[i][2])
            i += 1
        else:
            out.append(ordered[j][2])
            j += 1
    result[field] = out


def outcome(merge: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", merge()
    except P.PatchError as err:
        return type(err).__name__, str(err)


def both(original: Any, body: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    new = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    with monkeypatch.context() as m:
        m.setattr(P, "_scalars_only", plain_scalars_only)
        m.setattr(P, "_merge_list", plain_merge_list)
        m.setattr(P, "_set_order", plain_set_order)
        old = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    return new, old


TYPES = st.sampled_from(["PodScheduled", "Initialized", "Ready", "ContainersReady", "DisruptionTarget", 7])
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "True", "False", "x"]))
CONDITION = st.one_of(
    st.fixed_dictionaries(
        {"type": TYPES},
        optional={
            "status": SCALAR,
            "reason": SCALAR,
            "lastProbeTime": SCALAR,
            "message": st.one_of(SCALAR, st.lists(SCALAR, max_size=2)),
        },
    ),
    st.fixed_dictionaries({}, optional={"status": SCALAR}),  # no merge key
    SCALAR,  # not a map at all
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c"])},
    optional={
        "ready": st.booleans(),
        "restartCount": st.integers(0, 3),
        "state": st.one_of(
            st.none(), st.fixed_dictionaries({"terminated": st.fixed_dictionaries({"exitCode": st.integers(0, 2)})})
        ),
    },
)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Pending", "Running", "Succeeded"]),
        "conditions": st.lists(CONDITION, max_size=5),
        "containerStatuses": st.lists(CONTAINER, max_size=3),
        "podIPs": st.lists(st.fixed_dictionaries({"ip": st.sampled_from(["10.0.0.1", "10.0.0.2"])}), max_size=2),
    },
)
ORDER = st.lists(st.one_of(st.fixed_dictionaries({"type": TYPES}), SCALAR), max_size=6)
PATCH = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.one_of(st.none(), st.sampled_from(["Running", "Failed"])),
        "conditions": st.one_of(st.none(), st.lists(CONDITION, max_size=5)),
        "containerStatuses": st.lists(CONTAINER, max_size=3),
        "podIPs": st.lists(st.fixed_dictionaries({"ip": st.sampled_from(["10.0.0.1", "10.0.0.3"])}), max_size=2),
        "$setElementOrder/conditions": st.one_of(ORDER, st.just("no list")),
        "$setElementOrder/containerStatuses": st.lists(st.fixed_dictionaries({"name": st.just("b")}), max_size=2),
        "$setElementOrder/podIPs": st.lists(st.fixed_dictionaries({"ip": st.just("10.0.0.2")}), max_size=2),
    },
)


@settings(max_examples=examples(600), deadline=None)
@given(status=STATUS, body=PATCH)
def test_status_patch_merges_as_before(status: dict[str, Any], body: dict[str, Any]) -> None:
    original = {"metadata": {"name": "p"}, "status": status}
    with pytest.MonkeyPatch.context() as monkeypatch:
        new, old = both(original, {"status": body}, monkeypatch)
    assert new == old


@settings(max_examples=examples(300), deadline=None)
@given(status=STATUS, body=PATCH, directive=st.sampled_from(["replace", "delete", "merge"]))
def test_patches_with_directives_merge_as_before(status: dict[str, Any], body: dict[str, Any], directive: str) -> None:
    """The general walk too (a `$patch` anywhere sends the whole patch there)."""
    conditions = [*(body.get("conditions") or []), {"type": "Ready", "$patch": directive}]
    original = {"metadata": {"name": "p"}, "status": status}
    with pytest.MonkeyPatch.context() as monkeypatch:
        new, old = both(original, {"status": {**body, "conditions": conditions}}, monkeypatch)
    assert new == old


def test_the_kubelets_reordering_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node agent's patch: PodScheduled (the scheduler's, first in the API) goes last, as the kubelet orders."""
    original = {
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
        }
    }
    body = {
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastProbeTime": None},
                {"type": "Ready", "status": "True", "lastProbeTime": None},
            ],
            "$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "Ready"}, {"type": "PodScheduled"}],
            "containerStatuses": [{"name": "c", "ready": True, "state": {"running": {}}}],
        }
    }
    new, old = both(original, body, monkeypatch)
    assert new == old
    assert new[0] == "ok"
    assert [c["type"] for c in new[1]["status"]["conditions"]] == ["Initialized", "Ready", "PodScheduled"]
    assert new[1]["status"]["conditions"][0] == {"type": "Initialized", "status": "True"}


@pytest.mark.parametrize(
    ("elements", "merge_key", "expected"),
    [
        ([{"type": "a"}, {"type": "b"}], "type", ["a", "b"]),
        ([{"name": "x"}, "s", 3], "type", [None, "s", 3]),
        ([{"type": "a"}, "s"], "", [{"type": "a"}, "s"]),
    ],
)
def test_idents(elements: list[Any], merge_key: str, expected: list[Any]) -> None:
    assert P._idents(elements, merge_key) == expected


@pytest.mark.parametrize(
    "value", [{}, {"a": 1}, {"a": None, "b": "x"}, {"a": {}}, {"a": []}, {"a": 1, "b": [1]}, {"a": (1,)}]
)
def test_scalars_only(value: dict[str, Any]) -> None:
    assert P._scalars_only(value) == plain_scalars_only(value)


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"type": "Ready", "status": "True", "lastProbeTime": None},
        {"ip": "10.0.0.1"},
        {"a": None},
        {"$setElementOrder/x": 1, "b": None},
        {"a": 1, "b": {"c": None}},
        {"a": [None]},
    ],
)
def test_stripped_flat(value: dict[str, Any]) -> None:
    """A flat map: what `_strip` gives it outside the general walk; a nested one: None (`_strip` walks it)."""
    flat = P._stripped_flat(value)
    if plain_scalars_only(value):
        assert flat == P._strip(value, ("status", "conditions"), POD, P._NO_DIRECTIVES)
    else:
        assert flat is None
