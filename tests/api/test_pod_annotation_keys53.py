"""Stop 53: a pod whose annotation keys (in order) were found plain before skips the pod annotation rules.

`validate_pod` remembers the key tuples of annotation maps of strings without a mirror, deletion-cost, seccomp or
AppArmor key (the only keys `_validate_pod_annotations` reads) and passes over `get_str_map` and those rules for a
map of the same keys. The oracle is `validate_pod` with the set never holding anything (stop 52's path, which the
shortcut's else branch keeps): hypothesis makes annotation maps of those keys and others, with values of every
type, valid and invalid; earlier pods fill the set; the errors (rendered) are the same, in the same order.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_pod as P
from kjobs.api.defaults import default_pod
from kjobs.api.types import Obj
from tests.hypothesis_budget import examples


class _NeverKnown(set[tuple[str, ...]]):
    """Stop 52: nothing is remembered."""

    def __contains__(self, item: object) -> bool:
        return False

    def add(self, item: tuple[str, ...]) -> None:
        pass


@pytest.fixture(autouse=True)
def empty_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "_PLAIN_ANNOTATION_KEYS", set())


def _pod(annotations: Any, node: bool) -> Obj:
    pod = default_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]},
        }
    )
    if node:
        pod["spec"]["nodeName"] = "n1"
    if annotations is not None:
        pod["metadata"]["annotations"] = annotations
    return pod


KEYS = st.sampled_from(
    [
        "a",
        "batch.kubernetes.io/job-completion-index",
        "kubernetes.io/config.mirror",
        "controller.kubernetes.io/pod-deletion-cost",
        "seccomp.security.alpha.kubernetes.io/pod",
        "container.seccomp.security.alpha.kubernetes.io/main",
        "container.apparmor.security.beta.kubernetes.io/main",
        "container.apparmor.security.beta.kubernetes.io/other",
    ]
)
VALUES = st.one_of(
    st.sampled_from(["", "0", "12", "-3", "x", "99999999999", "runtime/default", "localhost/p", "unconfined", "bad"]),
    st.none(),
    st.integers(-1, 1),
    st.lists(st.just("0"), max_size=1),
)
ANNOTATIONS = st.one_of(st.none(), st.dictionaries(KEYS, VALUES, max_size=4), st.just([]), st.just("x"))


def errors(pod: Obj) -> list[str]:
    return [str(e) for e in P.validate_pod(copy.deepcopy(pod))]


@settings(max_examples=examples(1000), deadline=None)
@given(annotations=ANNOTATIONS, node=st.booleans(), earlier=st.lists(ANNOTATIONS, max_size=3))
def test_pod_annotation_errors_as_stop52(annotations: Any, node: bool, earlier: list[Any]) -> None:
    pod = _pod(annotations, node)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(P, "_PLAIN_ANNOTATION_KEYS", _NeverKnown())
        want = errors(pod)
    for other in earlier:
        errors(_pod(other, node))
    for _ in range(2):
        assert errors(pod) == want


@pytest.mark.parametrize(
    "bad",
    [
        {"a": "0", "kubernetes.io/config.mirror": "x"},  # no node: an error
        {"a": "0", "controller.kubernetes.io/pod-deletion-cost": "x"},
        {"a": "0", "container.apparmor.security.beta.kubernetes.io/other": "runtime/default"},
    ],
)
def test_keys_the_rules_read_are_never_remembered(bad: dict[str, Any]) -> None:
    """A map with a key the rules read is checked every time, even after a valid map of the same keys."""
    good = {k: v for k, v in bad.items() if k == "a"} | {k: "" for k in bad if k != "a"}
    good = {k: ("1" if "cost" in k else "runtime/default" if "apparmor" in k else v) for k, v in good.items()}
    P.validate_pod(_pod(good, node=True))
    assert set() == P._PLAIN_ANNOTATION_KEYS
    assert errors(_pod(bad, node=False)) != []


def test_plain_keys_fill_and_are_taken() -> None:
    """A Job pod's annotation keys are remembered; another index's map passes over the rules."""
    P.validate_pod(_pod({"batch.kubernetes.io/job-completion-index": "0"}, node=False))
    assert {("batch.kubernetes.io/job-completion-index",)} == P._PLAIN_ANNOTATION_KEYS
    calls: list[str] = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(P, "_validate_pod_annotations", lambda *a: calls.append("rules") or False)
        m.setattr(P, "get_str_map", lambda *a: calls.append("get_str_map"))
        assert P.validate_pod(_pod({"batch.kubernetes.io/job-completion-index": "7"}, node=False)) == []
    assert calls == []
