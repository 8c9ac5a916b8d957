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


def untyped_raws(raws: Iterable[bytes], api_version: str, kind: str) -> bytes:
    """The inside of a list's `items` array (the items joined by commas) for stored objects `raws` without their
    `apiVersion` and `kind`. Most objects start with them, as the server wrote them (the events.k8s.io view
    writes `kind` first), so they are cut from the bytes (0.2-0.3 µs an item beyond the bare join); any other
    is decoded and encoded again."""
    first = f'{{"apiVersion":"{api_version}","kind":"{kind}",'.encode()
    second = f'{{"kind":"{kind}","apiVersion":"{api_version}",'.encode()
    cut = len(first)  # the same two members, so the same length either way
    items = []
    for raw in raws:
        if raw.startswith(first) or raw.startswith(second):
            items.append(b"{" + raw[cut:])
        else:
            items.append(orjson.dumps(untyped(orjson.loads(raw))))
    return b",".join(items)


def untyped(obj: Obj) -> Obj:
    """`obj` without `apiVersion` and `kind` (a copy; `obj` is left as it is)."""
    return {key: value for key, value in obj.items() if key not in _TYPE_META}
