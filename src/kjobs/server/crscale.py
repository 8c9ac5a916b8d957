"""The `/scale` subresource of a custom resource whose CRD declares `subresources.scale`.

As apiextensions-apiserver's pkg/registry/customresource (`ScaleREST`): the object is read and written as an
`autoscaling/v1` Scale — `spec.replicas` at the CRD's `specReplicasPath`, `status.replicas` at its
`statusReplicasPath` (0 when unset), `status.selector` at its `labelSelectorPath` — and a write sets only the
replicas of the custom object (then validated by its schema like any update). `kubectl scale`, the official
client's `patch_namespaced_custom_object_scale` and HPA-style controllers use it.
"""

from __future__ import annotations

import copy
from typing import Any

from kjobs.api.errors import ErrorType, FieldError, bad_request, invalid
from kjobs.api.types import Obj
from kjobs.server.customresources import _MISSING, CustomResource, evaluate


def scale_of(r: CustomResource, obj: Obj) -> Obj:
    """The Scale view of a custom object."""
    meta = obj.get("metadata") or {}
    spec_path = str(r.scale.get("specReplicasPath") or "")
    status_path = str(r.scale.get("statusReplicasPath") or "")
    replicas = evaluate(spec_path, obj)
    current = evaluate(status_path, obj)
    status: Obj = {"replicas": current if isinstance(current, int) and not isinstance(current, bool) else 0}
    selector_path = r.scale.get("labelSelectorPath")
    if selector_path:
        selector = evaluate(str(selector_path), obj)
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    kept = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in kept if k in meta},
        "spec": {"replicas": replicas} if isinstance(replicas, int) and not isinstance(replicas, bool) else {},
        "status": status,
    }


def replicas_of(scale: Any, name: str) -> int:
    """`spec.replicas` of a Scale a client sent (0 when unset, as Go's zero value)."""
    if not isinstance(scale, dict):
        raise bad_request('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal into Scale')
    spec = scale.get("spec")
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else 0
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise bad_request(
            'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
            "into Go struct field ScaleSpec.spec.replicas of type int32"
        )
    if replicas < 0:
        raise invalid(
            "Scale",
            name,
            [FieldError("spec.replicas", ErrorType.FieldValueInvalid, "must be greater than or equal to 0", replicas)],
            group="autoscaling",
        )
    return replicas


def with_replicas(r: CustomResource, obj: Obj, replicas: int) -> Obj:
    """A copy of the custom object with `replicas` at the spec replicas path."""
    new = copy.deepcopy(obj)
    parts = [p for p in str(r.scale.get("specReplicasPath") or "").split(".") if p]
    node = new
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    if parts:
        node[parts[-1]] = replicas
    return new


__all__ = ["_MISSING", "replicas_of", "scale_of", "with_replicas"]
