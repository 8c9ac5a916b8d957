"""Stop 40: `significant_update` answers at once for an update that keeps the very spec and annotations of the
stored pod; for validated pods (what the plugin sees: it runs after validation) that must be what the walk
answers. The walk is kept here as it was and both are fed the same pairs."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.server import podsecurity
from kjobs.server.podsecurity import _SECCOMP_CONTAINER_ANNOTATION, _changed, _meta, _spec
from tests.hypothesis_budget import examples


def _plain_significant_update(pod: Obj, old: Obj) -> bool:
    """`significant_update` before stop 40."""
    spec, old_spec = _spec(pod), _spec(old)
    annotations, old_annotations = _meta(pod).get("annotations") or {}, _meta(old).get("annotations") or {}
    seccomp_may_differ = annotations != old_annotations
    for kind in ("containers", "initContainers"):
        new_list, old_list = spec.get(kind) or (), old_spec.get(kind) or ()
        if len(new_list) != len(old_list):
            return True
        for container, previous in zip(new_list, old_list, strict=True):
            if (
                isinstance(container, dict)
                and isinstance(previous, dict)
                and _changed(container, previous, annotations, old_annotations, seccomp_may_differ)
            ):
                return True
    ephemeral = spec.get("ephemeralContainers")
    if not ephemeral:
        return False
    old_ephemeral = {str(c.get("name")): c for c in old_spec.get("ephemeralContainers") or () if isinstance(c, dict)}
    for container in ephemeral:
        if not isinstance(container, dict):
            continue
        previous = old_ephemeral.get(str(container.get("name")))
        if previous is None or _changed(container, previous, annotations, old_annotations, seccomp_may_differ):
            return True
    return False


IMAGES = st.sampled_from(["busybox", "busybox:1", "alpine"])
SECCOMP = st.sampled_from(["runtime/default", "unconfined", "localhost/x"])


@st.composite
def validated_pod(draw: st.DrawFn) -> Obj:
    """A pod as validation lets it be stored: unique container names over all lists, string images, string
    annotations (some of them a container's seccomp annotation)."""
    names = iter(draw(st.lists(st.sampled_from("abcdefgh"), min_size=8, max_size=8, unique=True)))
    spec: Obj = {}
    for kind, low in (("containers", 1), ("initContainers", 0), ("ephemeralContainers", 0)):
        count = draw(st.integers(low, 2))
        if count or draw(st.booleans()):
            spec[kind] = [{"name": next(names), "image": draw(IMAGES)} for _ in range(count)]
    annotations = draw(
        st.dictionaries(
            st.one_of(
                st.sampled_from(["x", "y"]), st.sampled_from("abcdefgh").map(_SECCOMP_CONTAINER_ANNOTATION.__add__)
            ),
            SECCOMP,
            max_size=3,
        )
    )
    meta: Obj = {"name": "p", "namespace": "default"}
    if annotations or draw(st.booleans()):
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


@settings(max_examples=examples(400), deadline=None)
@given(
    validated_pod(),
    validated_pod(),
    st.sampled_from(["same", "copy", "other"]),
    st.sampled_from(["same", "copy", "other"]),
)
def test_an_update_keeping_spec_and_annotations_is_answered_as_the_walk_does(
    old: Obj, other: Obj, spec_how: str, annotations_how: str
) -> None:
    def member(how: str, mine: Any, theirs: Any) -> Any:
        return mine if how == "same" else copy.deepcopy(mine) if how == "copy" else theirs

    meta = {**old["metadata"], "finalizers": []}  # a new metadata dict, as every write makes
    annotations = member(annotations_how, old["metadata"].get("annotations"), other["metadata"].get("annotations"))
    meta.pop("annotations", None)
    if annotations is not None:
        meta["annotations"] = annotations
    new = {"metadata": meta, "spec": member(spec_how, old["spec"], other["spec"])}
    assert podsecurity.significant_update(new, old) is _plain_significant_update(new, old)


def test_a_kept_spec_with_a_changed_seccomp_annotation_is_still_significant() -> None:
    spec = {"containers": [{"name": "a", "image": "busybox"}]}
    old = {"metadata": {"annotations": {}}, "spec": spec}
    new = {"metadata": {"annotations": {_SECCOMP_CONTAINER_ANNOTATION + "a": "unconfined"}}, "spec": spec}
    assert podsecurity.significant_update(new, old) is True
    assert podsecurity.significant_update({**new, "metadata": old["metadata"]}, old) is False
