"""Stop 52: `_set_order` places the merged elements through one table of the order's names when each name is in
the order once (the kubelet's conditions by type): the patch's own elements are in the order's relative order when
their places rise, and a merged list whose elements each have a place of their own is placed by place in C. An
order that repeats a name, or names one that does not hash, keeps the scans. Stop 51's `_set_order` is kept here as
it was; the merge is run with each patched in, on stop 39's hypothesis statuses and patches, on names that do not
hash or repeat, and on the kubelet's own patches: the same merged object (the same elements), or the same error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import patch as P
from kjobs.server.schema import strategies_for
from tests.hypothesis_budget import examples
from tests.server.test_patch_rewrites import PATCH, STATUS, outcome

POD = strategies_for("io.k8s.api.core.v1.Pod")


def old_set_order(
    original: dict[str, Any],
    result: dict[str, Any],
    patch: dict[str, Any],
    key: str,
    order: Any,
    path: tuple[str, ...],
    lookup: Any,
) -> None:
    """Stop 51's `_set_order`."""
    if not isinstance(order, list):
        raise P.PatchError(f"{key} must be a list")
    field = key[len(P._ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    merge_key = lookup((*path, field))[1]
    wanted = P._idents(order, merge_key)
    patch_list = patch.get(field)
    if isinstance(patch_list, list):
        named = P._named(patch_list, merge_key)
        at = 0
        for value in named:
            while at < len(wanted) and wanted[at] != value:
                at += 1
            if at == len(wanted):
                raise P.PatchError(
                    f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                )
            at += 1
    idents = P._idents(merged, merge_key)
    ranks = P._ranks(wanted, idents)
    if -1 not in ranks:
        result[field] = [merged[at] for _, at in sorted(zip(ranks, range(len(merged))))]  # noqa: B905
        return
    before = original.get(field)
    rank_server = P._first_positions(P._idents(before, merge_key) if isinstance(before, list) else [])
    placed = [(rank, rank_server(i), e) for rank, i, e in zip(ranks, idents, merged, strict=True)]
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


def both(original: Any, body: Any) -> tuple[tuple[str, Any], tuple[str, Any]]:
    new = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(P, "_set_order", old_set_order)
        old = outcome(lambda: P.strategic_merge(original, body, strategies=POD))
    return new, old


def same(original: Any, new: tuple[str, Any], old: tuple[str, Any]) -> None:
    assert new == old
    if new[0] == "ok":  # the stored elements kept, in the same places (each run copies the patch's own)
        for field in ("conditions", "containerStatuses", "podIPs"):
            stored = [id(e) for e in original["status"].get(field) or []]
            got, want = new[1]["status"].get(field), old[1]["status"].get(field)
            if isinstance(want, list):
                assert [id(e) in stored and stored.index(id(e)) for e in got] == [
                    id(e) in stored and stored.index(id(e)) for e in want
                ]


@settings(max_examples=examples(1500), deadline=None)
@given(status=STATUS, body=PATCH)
def test_status_patches_merge_as_before(status: dict[str, Any], body: dict[str, Any]) -> None:
    original = {"metadata": {"name": "p"}, "status": status}
    same(original, *both(original, {"status": body}))


NAME = st.sampled_from([["Ready"], {"a": 1}, "Ready", "PodScheduled", "Initialized", 7, 7.0, True, 1, None])
ODD_CONDITION = st.one_of(
    st.fixed_dictionaries({"type": NAME}, optional={"status": st.sampled_from(["True", None])}),
    st.fixed_dictionaries({}, optional={"status": st.just("x")}),
    NAME,
)


@settings(max_examples=examples(1500), deadline=None)
@given(
    before=st.lists(ODD_CONDITION, max_size=5),
    conditions=st.lists(st.one_of(ODD_CONDITION, st.just({"$patch": "delete", "type": "Ready"})), max_size=5),
    order=st.lists(st.one_of(st.fixed_dictionaries({"type": NAME}), NAME), max_size=6),
    nulls=st.booleans(),
)
def test_odd_names_merge_as_before(before: list[Any], conditions: list[Any], order: list[Any], nulls: bool) -> None:
    """Names that repeat in the order, that do not hash, that are equal across types (`1`, `True`, `7.0`), a
    `$patch` element (the general walk), elements with no merge key or not maps at all."""
    body: dict[str, Any] = {"conditions": conditions, "$setElementOrder/conditions": order}
    if nulls:
        body["phase"] = None
    original = {"status": {"conditions": before}}
    same(original, *both(original, {"status": body}))


KUBELET_ORDER = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]


@pytest.mark.parametrize(
    ("stored", "patched"),
    [
        (["PodScheduled"], KUBELET_ORDER[:4]),  # the first status write: PodScheduled moves last
        (KUBELET_ORDER, ["Ready", "ContainersReady"]),
        (["PodScheduled", "DisruptionTarget"], KUBELET_ORDER[:4]),  # a condition of the server's own
        (["PodScheduled"], ["Ready", "Initialized"]),  # out of the order's order: refused
    ],
)
def test_kubelet_status_patches_merge_as_before(stored: list[str], patched: list[str]) -> None:
    status = {"conditions": [{"type": t, "status": "True"} for t in stored]}
    body = {
        "$setElementOrder/conditions": [{"type": t} for t in KUBELET_ORDER],
        "conditions": [{"type": t, "status": "False", "lastProbeTime": None} for t in patched],
    }
    new, old = both({"status": status}, {"status": body})
    same({"status": status}, new, old)
    if patched == ["Ready", "Initialized"]:
        assert new[0] == "PatchError"
    else:
        assert [c["type"] for c in new[1]["status"]["conditions"]][-1] in {"PodScheduled", "DisruptionTarget"}
