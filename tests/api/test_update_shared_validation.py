"""Stop 50: a pod update's validation skips what it shares with the stored pod, and gives the errors it gave.

`validate_pod` on an update that keeps the spec no longer reads annotations that are the stored ones, and
`validate_pod_status_update` no longer runs the pod-specific annotation rules when both the annotations and the
spec are the stored pod's own. Each skipped rule
reads only what is shared, which passed it when the pod was stored.

The oracle is the same validation without the sharing: the new and the stored objects deep-copied apart, so that
every shortcut that asks whether a value is the stored one's is off and every rule runs. Hypothesis makes stored
pods whose skipped parts are valid (what being stored means) and updates that keep, copy or change each part.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kjobs.api import validation_pod as P
from kjobs.api.validation_pod_status import validate_pod_status_update
from kjobs.api.validation_pod_update import validate_pod_update
from tests.hypothesis_budget import examples

HOW = st.sampled_from(["keep", "copy", "drop", "change"])
ANNOTATION_KEYS = st.sampled_from(
    [
        "a",
        "kubernetes.io/config.mirror",
        "controller.kubernetes.io/pod-deletion-cost",
        "seccomp.security.alpha.kubernetes.io/pod",
        "container.apparmor.security.beta.kubernetes.io/main",
        "batch.kubernetes.io/job-completion-index",
    ]
)
ANNOTATIONS = st.one_of(
    st.none(),
    st.dictionaries(ANNOTATION_KEYS, st.sampled_from(["", "1", "x", "runtime/default", "localhost/p"]), max_size=3),
)
SPEC = st.fixed_dictionaries(
    {"containers": st.just([{"name": "main", "image": "busybox"}])},
    optional={"nodeName": st.sampled_from(["", "n1"]), "restartPolicy": st.sampled_from(["Never", "Always"])},
)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Pending", "Running", "Succeeded"]),
        "qosClass": st.sampled_from(["BestEffort", ""]),
        "conditions": st.lists(
            st.fixed_dictionaries({"type": st.sampled_from(["Ready", "PodScheduled", "Bad Type!", "x"])}), max_size=2
        ),
    },
)


def _stored_pod(annotations: Any, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "job-1-abcde", "namespace": "default", "resourceVersion": "7", "uid": "u1"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _annotations_valid(pod: dict[str, Any]) -> bool:
    """Whether the stored pod's annotations pass the pod's annotation rules (what storing it checked)."""
    errs: list[Any] = []
    P._validate_pod_annotations(pod["metadata"].get("annotations"), pod["spec"], "metadata.annotations", errs)
    return not errs


def _member(how: str, before: Any, other: Any) -> Any:
    if how == "keep":
        return before
    if how == "copy":
        return copy.deepcopy(before)
    return other


@settings(max_examples=examples(500), deadline=None)
@given(
    annotations=ANNOTATIONS,
    other_annotations=ANNOTATIONS,
    spec=SPEC,
    other_spec=SPEC,
    status=STATUS,
    other_status=STATUS,
    hows=st.fixed_dictionaries({k: HOW for k in ("annotations", "spec", "status", "finalizers")}),
)
def test_pod_update_errors_as_when_nothing_is_shared(
    annotations: Any,
    other_annotations: Any,
    spec: dict[str, Any],
    other_spec: dict[str, Any],
    status: dict[str, Any],
    other_status: dict[str, Any],
    hows: dict[str, str],
) -> None:
    """A status write and an update of the pod itself (a finalizer's removal, an annotation's change), the
    stored pod's annotations valid: the errors of the run with everything shared are those of the run with
    nothing shared."""
    old = _stored_pod(annotations, spec, status)
    assume(_annotations_valid(old))
    meta = dict(old["metadata"])
    how = hows["annotations"]
    if how == "drop":
        meta.pop("annotations", None)
    elif how != "keep" or "annotations" in meta:
        value = _member(how, meta.get("annotations"), other_annotations)
        if value is None:
            meta.pop("annotations", None)
        else:
            meta["annotations"] = value
    if hows["finalizers"] == "change":
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    new = {
        **old,
        "metadata": meta,
        "spec": old["spec"] if hows["spec"] == "drop" else _member(hows["spec"], old["spec"], other_spec),
        "status": _member(hows["status"], old["status"], other_status),
    }
    apart_new, apart_old = copy.deepcopy(new), copy.deepcopy(old)
    assert validate_pod_update(new, old) == validate_pod_update(apart_new, apart_old)
    assert validate_pod_status_update(new, old) == validate_pod_status_update(apart_new, apart_old)


def test_a_changed_annotation_of_a_status_write_is_still_checked() -> None:
    """The shortcut asks for the very annotations: a status write that changes them is refused as before."""
    old = _stored_pod({"a": "1"}, {"containers": [{"name": "main", "image": "busybox"}]}, {})
    meta = {**old["metadata"], "annotations": {"controller.kubernetes.io/pod-deletion-cost": "x"}}
    errs = validate_pod_status_update({**old, "metadata": meta}, old)
    assert [e.detail for e in errs] == ["must be a 32bit integer"]
