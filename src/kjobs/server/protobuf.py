"""Decoding the protobuf request bodies kubectl's typed client sends (`kubectl create job NAME --image=...`).

kubectl sends a few requests as `application/vnd.kubernetes.protobuf` and has no JSON fallback, so a server
that cannot read them fails `kubectl create job`. This module reads exactly that shape: the `k8s\\x00`
envelope (`runtime.Unknown`: type meta + raw bytes) around a batch/v1 Job, decoded against a small table of
the fields such a Job can carry (field numbers from Kubernetes' `generated.proto`). Go's protobuf
marshalling writes every non-pointer field, so zero values of non-pointer fields are dropped (JSON's
`omitempty`), while pointer fields keep an explicit zero (`backoffLimit: 0`). A field outside the table
that carries a value is refused with 415 rather than silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj

MAGIC = b"k8s\x00"

# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


@dataclass(frozen=True)
class F:
    """One known field: JSON name, kind (`str`, `int`, `bool`, `msg`, `map`, `strs`, `msgs`), pointer-ness."""

    name: str
    kind: str
    message: str = ""
    pointer: bool = False


_IGNORED = F("", "ignored")
"""Server-owned fields a client may send: read and dropped."""

MESSAGES: dict[str, dict[int, F]] = {
    "TypeMeta": {1: F("apiVersion", "str"), 2: F("kind", "str")},
    "ObjectMeta": {
        1: F("name", "str"),
        2: F("generateName", "str"),
        3: F("namespace", "str"),
        4: _IGNORED,  # selfLink
        5: _IGNORED,  # uid
        6: _IGNORED,  # resourceVersion
        7: _IGNORED,  # generation
        8: _IGNORED,  # creationTimestamp
        11: F("labels", "map"),
        12: F("annotations", "map"),
    },
    "Job": {1: F("metadata", "msg", "ObjectMeta"), 2: F("spec", "msg", "JobSpec"), 3: _IGNORED},
    "JobSpec": {
        1: F("parallelism", "int", pointer=True),
        2: F("completions", "int", pointer=True),
        3: F("activeDeadlineSeconds", "int", pointer=True),
        5: F("manualSelector", "bool", pointer=True),
        6: F("template", "msg", "PodTemplateSpec"),
        7: F("backoffLimit", "int", pointer=True),
        8: F("ttlSecondsAfterFinished", "int", pointer=True),
        9: F("completionMode", "str", pointer=True),
        10: F("suspend", "bool", pointer=True),
        12: F("backoffLimitPerIndex", "int", pointer=True),
        13: F("maxFailedIndexes", "int", pointer=True),
        14: F("podReplacementPolicy", "str", pointer=True),
        15: F("managedBy", "str", pointer=True),
    },
    "PodTemplateSpec": {1: F("metadata", "msg", "ObjectMeta"), 2: F("spec", "msg", "PodSpec")},
    "PodSpec": {2: F("containers", "msgs", "Container"), 3: F("restartPolicy", "str")},
    "Container": {
        1: F("name", "str"),
        2: F("image", "str"),
        3: F("command", "strs"),
        4: F("args", "strs"),
        5: F("workingDir", "str"),
        8: F("resources", "msg", "ResourceRequirements"),
    },
    "ResourceRequirements": {},
}

ROOTS = {("batch/v1", "Job"): "Job"}


def unsupported(detail: str) -> ApiError:
    """415 for a protobuf body this server cannot read."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: application/json, "
        f"application/yaml ({detail})",
    )


def _varint(data: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise unsupported("truncated varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, i


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == _VARINT:
            value, i = _varint(data, i)
        elif wire == _LEN:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise unsupported("truncated field")
            value, i = data[i : i + size], i + size
        elif wire == _I64:
            value, i = data[i : i + 8], i + 8
        elif wire == _I32:
            value, i = data[i : i + 4], i + 4
        else:
            raise unsupported(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def _empty(wire: int, value: Any) -> bool:
    return (wire == _VARINT and value == 0) or (wire == _LEN and len(value) == 0)


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: Any) -> str:
    try:
        return bytes(value).decode()
    except UnicodeDecodeError:
        raise unsupported("invalid UTF-8") from None


def decode_message(data: bytes, message: str) -> Obj:
    """Decode `data` as the table's `message` into its JSON form."""
    table = MESSAGES[message]
    out: Obj = {}
    for number, wire, value in _fields(data):
        field = table.get(number)
        if field is None:
            if _empty(wire, value):
                continue
            raise unsupported(f"field {number} of {message} is not supported")
        if field.kind == "ignored":
            continue
        expected = _VARINT if field.kind in ("int", "bool") else _LEN
        if wire != expected:
            raise unsupported(f"field {number} of {message} has wire type {wire}")
        if _empty(wire, value) and not field.pointer and field.kind not in ("strs", "msgs"):
            continue
        if field.kind == "str":
            out[field.name] = _text(value)
        elif field.kind == "int":
            out[field.name] = _signed(value)
        elif field.kind == "bool":
            out[field.name] = bool(value)
        elif field.kind == "msg":
            decoded = decode_message(value, field.message)
            if decoded or field.pointer:
                out[field.name] = decoded
        elif field.kind == "msgs":
            out.setdefault(field.name, []).append(decode_message(value, field.message))
        elif field.kind == "strs":
            out.setdefault(field.name, []).append(_text(value))
        elif field.kind == "map":
            entry = {n: _text(v) for n, w, v in _fields(value) if w == _LEN and n in (1, 2)}
            out.setdefault(field.name, {})[entry.get(1, "")] = entry.get(2, "")
    return out


def decode(body: bytes) -> Obj:
    """A protobuf request body (envelope + object) as the JSON object it stands for; 415 when unsupported."""
    if not body.startswith(MAGIC):
        raise unsupported("missing the k8s protobuf envelope")
    type_meta: Obj = {}
    raw = b""
    for number, wire, value in _fields(body[len(MAGIC) :]):
        if number == 1 and wire == _LEN:
            type_meta = decode_message(value, "TypeMeta")
        elif number == 2 and wire == _LEN:
            raw = bytes(value)
        elif number == 3 and wire == _LEN and value:
            raise unsupported("content encodings are not supported")
    root = ROOTS.get((type_meta.get("apiVersion", ""), type_meta.get("kind", "")))
    if root is None:
        raise unsupported(f"{type_meta.get('kind', '?')} in version {type_meta.get('apiVersion', '?')!r}")
    obj = decode_message(raw, root)
    return {"apiVersion": type_meta["apiVersion"], "kind": type_meta["kind"], **obj}
