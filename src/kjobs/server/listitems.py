"""The items of a list answer as kube-apiserver writes them: a built-in kind's items carry no `apiVersion` and
`kind`.

kube-apiserver converts a list from its internal version item by item, and the conversion of an item leaves its
`TypeMeta` empty; only the list itself gets its group, version and kind from the encoder (apimachinery's
`runtime/serializer/versioning` codec, `setTargetKind` for the outer object). So `GET /api/v1/pods` answers
`{"kind":"PodList","apiVersion":"v1",...,"items":[{"metadata":...`, which is why client-go's unstructured
decoder fills each item's kind from the list's ("For typed lists, e.g., a PodList, API server doesn't set each
item's APIVersion and Kind", apimachinery `apis/meta/v1/unstructured/helpers.go` `decodeToList`, at
05c351a9037b) and why the official Python client's `list_namespaced_pod().items[0].kind` is None against a
cluster. A custom resource's items are the stored unstructured objects and keep both (apiextensions-apiserver),
and so do the rows of a Table (`asTable` converts each) and the items of a PartialObjectMetadataList, which are
answered elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from kjobs.api.types import Obj

_TYPE_META = ("apiVersion", "kind")


def untyped_raws(raws: Iterable[bytes], api_version: str, kind: str) -> list[bytes | memoryview]:
    """The pieces of a list's `items` array (joined by the caller, commas included) for stored objects `raws`
    without their `apiVersion` and `kind`. Most objects start with them, as the server wrote them (the
    events.k8s.io view writes `kind` first), so they are cut from the bytes; any other is decoded and encoded
    again."""
    heads = (
        f'{{"apiVersion":"{api_version}","kind":"{kind}",'.encode(),
        f'{{"kind":"{kind}","apiVersion":"{api_version}",'.encode(),
    )
    pieces: list[bytes | memoryview] = []
    for raw in raws:
        if pieces:
            pieces.append(b",")
        head = next((head for head in heads if raw.startswith(head)), None)
        if head is not None:
            pieces.append(b"{")
            pieces.append(memoryview(raw)[len(head) :])
        else:
            pieces.append(orjson.dumps(untyped(orjson.loads(raw))))
    return pieces


def untyped(obj: Obj) -> Obj:
    """`obj` without `apiVersion` and `kind` (a copy; `obj` is left as it is)."""
    return {key: value for key, value in obj.items() if key not in _TYPE_META}
