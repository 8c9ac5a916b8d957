"""Decoding the protobuf request bodies kubectl's typed client sends, for every kind the server serves.

kubectl sends some creates as `application/vnd.kubernetes.protobuf` and has no JSON fallback (`create job`,
`create namespace`, `create priorityclass`, `create poddisruptionbudget`, `debug --copy-to`), so a server that
cannot read them fails those commands. A body is the `k8s\\x00` envelope (`runtime.Unknown`: type meta + raw
bytes) around one object, decoded here into the JSON object it stands for with the table of
`data/protobuf-v1.32.json` (field numbers, types and JSON names of every message a served kind can hold,
generated from Kubernetes' `generated.proto` and Go types by `protogen`).

Go's protobuf marshalling writes every non-pointer field, so zero values of non-pointer fields are dropped
(JSON's `omitempty`), while pointer fields keep an explicit zero (`backoffLimit: 0`). A few apimachinery
messages have a JSON form of their own (`Time`, `MicroTime`, `Quantity`, `IntOrString`, `FieldsV1`). A field
outside the table that carries a value is refused with 415 rather than silently lost.
"""

from __future__ import annotations

import base64
import functools
import struct
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj

MAGIC = b"k8s\x00"

# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

_TABLE = Path(__file__).parent / "data" / "protobuf-v1.32.json"

Field = tuple[str, str, str, str]
"""(JSON name, type: a scalar or a message's full name, label: "" / "repeated" / "map", flags: p pointer, i inline)"""


_AUTHN = "k8s.io.api.authentication.v1."
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_EXTRA_MESSAGES: dict[str, dict[int, Field]] = {
    # staging/src/k8s.io/api/authentication/v1/generated.proto: what `kubectl create token` sends (kjobs.server
    # .tokenrest), which the generated table (its kinds are the schemas') lacks
    _AUTHN + "TokenRequest": {
        1: ("metadata", _META + "ObjectMeta", "", ""),
        2: ("spec", _AUTHN + "TokenRequestSpec", "", ""),
        3: ("status", _AUTHN + "TokenRequestStatus", "", ""),
    },
    _AUTHN + "TokenRequestSpec": {
        1: ("audiences", "string", "repeated", ""),
        3: ("boundObjectRef", _AUTHN + "BoundObjectReference", "", "p"),
        4: ("expirationSeconds", "int64", "", "p"),
    },
    _AUTHN + "TokenRequestStatus": {1: ("token", "string", "", ""), 2: ("expirationTimestamp", _META + "Time", "", "")},
    _AUTHN + "BoundObjectReference": {
        1: ("kind", "string", "", ""),
        2: ("apiVersion", "string", "", ""),
        3: ("name", "string", "", ""),
        4: ("uid", "string", "", ""),
    },
    _AUTHN + "TokenReview": {
        1: ("metadata", _META + "ObjectMeta", "", ""),
        2: ("spec", _AUTHN + "TokenReviewSpec", "", ""),
        3: ("status", _AUTHN + "TokenReviewStatus", "", ""),
    },
    _AUTHN + "TokenReviewSpec": {1: ("token", "string", "", ""), 2: ("audiences", "string", "repeated", "")},
    _AUTHN + "TokenReviewStatus": {
        1: ("authenticated", "bool", "", ""),
        2: ("user", _AUTHN + "UserInfo", "", ""),
        3: ("error", "string", "", ""),
        4: ("audiences", "string", "repeated", ""),
    },
}
_EXTRA_ROOTS = {
    "authentication.k8s.io/v1/TokenRequest": _AUTHN + "TokenRequest",
    "authentication.k8s.io/v1/TokenReview": _AUTHN + "TokenReview",
}


@functools.cache
def _table() -> tuple[dict[str, str], dict[str, dict[int, Field]]]:
    data = orjson.loads(_TABLE.read_bytes())
    messages = {
        name: {int(number): (f[0], f[1], f[2], f[3]) for number, f in fields.items()}
        for name, fields in data["messages"].items()
    }
    messages.update(_EXTRA_MESSAGES)
    return {**data["roots"], **_EXTRA_ROOTS}, messages


def root_message(api_version: str, kind: str) -> str | None:
    """The protobuf message of a served kind (`batch/v1`, `Job` → `k8s.io.api.batch.v1.Job`), or None."""
    return _table()[0].get(f"{api_version}/{kind}")


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
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if i + size > len(data):
                raise unsupported("truncated field")
            value, i = data[i : i + size], i + size
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


_SCALAR_WIRE = {
    "string": _LEN,
    "bytes": _LEN,
    "int32": _VARINT,
    "int64": _VARINT,
    "uint32": _VARINT,
    "uint64": _VARINT,
    "bool": _VARINT,
    "double": _I64,
    "float": _I32,
}


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return _text(value)
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "bool":
        return bool(value)
    if kind in ("int32", "int64"):
        return _signed(value)
    if kind == "double":
        return struct.unpack("<d", value)[0]
    if kind == "float":
        return struct.unpack("<f", value)[0]
    return value  # unsigned


def _value(kind: str, wire: int, value: Any, where: str) -> Any:
    expected = _SCALAR_WIRE.get(kind, _LEN)
    if wire != expected:
        raise unsupported(f"{where} has wire type {wire}")
    return _scalar(kind, value) if kind in _SCALAR_WIRE else decode_message(bytes(value), kind)


def _packed(kind: str, data: bytes) -> list[Any]:
    """A packed repeated scalar (proto2 does not pack by default, but a decoder must accept both)."""
    if _SCALAR_WIRE[kind] == _VARINT:
        out, i = [], 0
        while i < len(data):
            number, i = _varint(data, i)
            out.append(_scalar(kind, number))
        return out
    size = 8 if _SCALAR_WIRE[kind] == _I64 else 4
    if len(data) % size:
        raise unsupported("truncated packed field")
    return [_scalar(kind, data[i : i + size]) for i in range(0, len(data), size)]


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value == {} or value is False


def decode_message(data: bytes, message: str) -> Any:
    """Decode `data` as the table's `message` into its JSON form (an object, or a special type's scalar)."""
    special = _SPECIAL.get(message)
    if special is not None:
        return special(data)
    table = _table()[1].get(message)
    if table is None:
        raise unsupported(f"message {message} is not supported")
    out: Obj = {}
    for number, wire, value in _fields(data):
        field = table.get(number)
        if field is None:
            if _empty(wire, value):
                continue
            raise unsupported(f"field {number} of {message} is not supported")
        name, kind, label, flags = field
        where = f"field {number} of {message}"
        if label == "map":
            if wire != _LEN:
                raise unsupported(f"{where} has wire type {wire}")
            key, item = "", None
            for n, w, v in _fields(value):
                if n == 1 and w == _LEN:
                    key = _text(v)
                elif n == 2:
                    item = _value(kind, w, v, where)
            if item is None:
                item = "" if kind == "string" else {}
            out.setdefault(name, {})[key] = item
        elif label == "repeated":
            items = out.setdefault(name, [])
            if wire == _LEN and kind in _SCALAR_WIRE and _SCALAR_WIRE[kind] != _LEN:
                items.extend(_packed(kind, bytes(value)))
            else:
                items.append(_value(kind, wire, value, where))
        else:
            decoded = _value(kind, wire, value, where)
            if "i" in flags:
                if isinstance(decoded, dict):
                    out.update(decoded)
            elif decoded is not None and ("p" in flags or not _is_zero(decoded)):
                out[name] = decoded
    return out


def _subfields(data: bytes) -> dict[int, Any]:
    return {number: value for number, _wire, value in _fields(data)}


def _time(data: bytes, micro: bool) -> str | None:
    """`metav1.Time` / `MicroTime` (seconds, nanos) as their JSON text; the zero time is JSON null."""
    fields = _subfields(data)
    seconds, nanos = _signed(fields.get(1, 0)), _signed(fields.get(2, 0))
    if seconds == 0 and nanos == 0:
        return None
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise unsupported("time out of range") from None
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(data: bytes) -> int | str:
    """`intstr.IntOrString`: type 0 → intVal, type 1 → strVal."""
    fields = _subfields(data)
    if fields.get(1, 0) == 1:
        return _text(fields.get(3, b""))
    return _signed(fields.get(2, 0))


def _raw_json(data: bytes) -> Any:
    """`FieldsV1`: its raw bytes are the JSON document itself."""
    raw = _subfields(data).get(1, b"")
    if not raw:
        return {}
    try:
        return orjson.loads(bytes(raw))
    except orjson.JSONDecodeError:
        raise unsupported("FieldsV1 is not JSON") from None


_SPECIAL: dict[str, Callable[[bytes], Any]] = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": lambda data: _time(data, micro=False),
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": lambda data: _time(data, micro=True),
    "k8s.io.apimachinery.pkg.api.resource.Quantity": lambda data: _text(_subfields(data).get(1, b"")),
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": _raw_json,
}


def decode(body: bytes) -> Obj:
    """A protobuf request body (envelope + object) as the JSON object it stands for; 415 when unsupported."""
    if not body.startswith(MAGIC):
        raise unsupported("missing the k8s protobuf envelope")
    api_version = kind = ""
    raw = b""
    for number, wire, value in _fields(body[len(MAGIC) :]):
        if number == 1 and wire == _LEN:
            for n, w, v in _fields(value):
                if n == 1 and w == _LEN:
                    api_version = _text(v)
                elif n == 2 and w == _LEN:
                    kind = _text(v)
        elif number == 2 and wire == _LEN:
            raw = bytes(value)
        elif number == 3 and wire == _LEN and value:
            raise unsupported("content encodings are not supported")
    root = root_message(api_version, kind)
    if root is None:
        raise unsupported(f"{kind or '?'} in version {api_version or '?'!r}")
    obj = decode_message(raw, root)
    return {"apiVersion": api_version, "kind": kind, **obj}
