"""The gnostic protobuf encoding of a Swagger 2.0 document (`openapi.v2.Document`).

client-go's `DiscoveryClient.OpenAPISchema()` asks `/openapi/v2` for
`application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and `proto.Unmarshal`s the answer into
gnostic's `openapi_v2.Document` (google/gnostic-models openapiv2/OpenAPIv2.proto gives the message and field
numbers used below). kube-openapi makes those bytes with `openapi_v2.ParseDocument(json)` and `proto.Marshal`,
so this encoder follows the same reading of the JSON: maps become repeated `Named*` pairs in the JSON's key
order, `x-` keys become `NamedAny` vendor extensions whose `Any.yaml` holds the value as YAML text (JSON is
YAML), a parameter is a body parameter or a query/path/header/formData sub-schema, a `$ref` parameter or
response a `JsonReference`. Fields are written in field-number order with proto3's zero values left out, as
Go's marshaller writes them. A key the proto has no field for raises (gnostic refuses such documents too).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

_VARINT, _I64, _LEN = 0, 1, 2

Encoder = Callable[[Any], bytes]


class UnsupportedKey(ValueError):
    """A key with no field in the gnostic message it belongs to."""


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _len_field(number: int, payload: bytes) -> bytes:
    return _tag(number, _LEN) + _varint(len(payload)) + payload


def _yaml(value: Any) -> str:
    """A value as YAML text: its JSON form (flow style), one line, newline-terminated."""
    return json.dumps(value, ensure_ascii=False) + "\n"


def _any(value: Any) -> bytes:
    return _len_field(2, _yaml(value).encode())


def _named(number: int, name: str, value: bytes) -> bytes:
    return _len_field(number, _len_field(1, name.encode()) + _len_field(2, value))


# field kinds: "s" string, "b" bool, "d" double, "i" int64, "S" repeated string, "A" Any, "R" repeated Any,
# or a message encoder (single), or ("*", encoder) for a repeated message
Spec = dict[str, tuple[int, Any]]


def _message(spec: Spec, extensions: int | None) -> Encoder:
    def encode(obj: Any) -> bytes:
        if not isinstance(obj, dict):
            raise UnsupportedKey(f"expected an object, got {obj!r:.40}")
        fields: list[tuple[int, bytes]] = []
        vendor = b""
        for key, value in obj.items():
            if key.startswith("x-") and extensions is not None:
                vendor += _named(extensions, key, _any(value))
                continue
            if key not in spec:
                raise UnsupportedKey(key)
            number, kind = spec[key]
            fields.append((number, _field(number, kind, value)))
        if vendor:
            fields.append((extensions or 0, vendor))
        fields.sort(key=lambda f: f[0])
        return b"".join(f[1] for f in fields)

    return encode


def _field(number: int, kind: Any, value: Any) -> bytes:
    if kind == "s":
        return _len_field(number, str(value).encode()) if value else b""
    if kind == "b":
        return _tag(number, _VARINT) + b"\x01" if value else b""
    if kind == "d":
        return _tag(number, _I64) + struct.pack("<d", float(value)) if value else b""
    if kind == "i":
        return _tag(number, _VARINT) + _varint(int(value)) if value else b""
    if kind == "S":
        return b"".join(_len_field(number, str(v).encode()) for v in value)
    if kind == "A":
        return _len_field(number, _any(value))
    if kind == "R":
        return b"".join(_len_field(number, _any(v)) for v in value)
    if isinstance(kind, tuple):
        return b"".join(_len_field(number, kind[1](v)) for v in value)
    return _len_field(number, kind(value))


def _named_map(number: int, value_encoder: Encoder) -> Encoder:
    """A JSON object as repeated `Named*` (name = 1, value = 2) in field `number` of a wrapper message."""

    def encode(obj: Any) -> bytes:
        return b"".join(_named(number, name, value_encoder(value)) for name, value in obj.items())

    return encode


_PRIMITIVE_TAIL = {  # the fields PrimitivesItems, Header and the non-body parameters share, from `type` on
    "type": "s",
    "format": "s",
    "items": None,
    "collectionFormat": "s",
    "default": "A",
    "maximum": "d",
    "exclusiveMaximum": "b",
    "minimum": "d",
    "exclusiveMinimum": "b",
    "maxLength": "i",
    "minLength": "i",
    "pattern": "s",
    "maxItems": "i",
    "minItems": "i",
    "uniqueItems": "b",
    "enum": "R",
    "multipleOf": "d",
}


def _numbered(names: list[str], first: int, kinds: dict[str, Any]) -> Spec:
    return {name: (first + i, kinds[name]) for i, name in enumerate(names)}


def _primitives_items(obj: Any) -> bytes:
    return _PRIMITIVES(obj)


_PRIMITIVES = _message(_numbered(list(_PRIMITIVE_TAIL), 1, {**_PRIMITIVE_TAIL, "items": _primitives_items}), 18)
_TAIL = {**_PRIMITIVE_TAIL, "items": _PRIMITIVES}
_HEAD = {"required": "b", "in": "s", "description": "s", "name": "s", "allowEmptyValue": "b"}
_PATH_LIKE = _numbered(["required", "in", "description", "name", *_PRIMITIVE_TAIL], 1, {**_HEAD, **_TAIL})
_PATH_PARAM = _message(_PATH_LIKE, 22)
_HEADER_PARAM = _message(_PATH_LIKE, 22)
_QUERY_LIKE = _numbered(
    ["required", "in", "description", "name", "allowEmptyValue", *_PRIMITIVE_TAIL], 1, {**_HEAD, **_TAIL}
)
_QUERY_PARAM = _message(_QUERY_LIKE, 23)
_FORM_PARAM = _message(_QUERY_LIKE, 23)


def _schema(obj: Any) -> bytes:
    return _SCHEMA(obj)


def _items(value: Any) -> bytes:
    schemas = value if isinstance(value, list) else [value]
    return b"".join(_len_field(1, _schema(s)) for s in schemas)


def _additional(value: Any) -> bytes:
    if isinstance(value, bool):
        return _tag(2, _VARINT) + (b"\x01" if value else b"\x00")
    return _len_field(1, _schema(value))


def _type_item(value: Any) -> bytes:
    return b"".join(_len_field(1, str(v).encode()) for v in (value if isinstance(value, list) else [value]))


_EXTERNAL_DOCS = _message({"description": (1, "s"), "url": (2, "s")}, 3)
_XML = _message(
    {"name": (1, "s"), "namespace": (2, "s"), "prefix": (3, "s"), "attribute": (4, "b"), "wrapped": (5, "b")}, 6
)
_SCHEMA = _message(
    {
        "$ref": (1, "s"),
        "format": (2, "s"),
        "title": (3, "s"),
        "description": (4, "s"),
        "default": (5, "A"),
        "multipleOf": (6, "d"),
        "maximum": (7, "d"),
        "exclusiveMaximum": (8, "b"),
        "minimum": (9, "d"),
        "exclusiveMinimum": (10, "b"),
        "maxLength": (11, "i"),
        "minLength": (12, "i"),
        "pattern": (13, "s"),
        "maxItems": (14, "i"),
        "minItems": (15, "i"),
        "uniqueItems": (16, "b"),
        "maxProperties": (17, "i"),
        "minProperties": (18, "i"),
        "required": (19, "S"),
        "enum": (20, "R"),
        "additionalProperties": (21, _additional),
        "type": (22, _type_item),
        "items": (23, _items),
        "allOf": (24, ("*", _schema)),
        "properties": (25, _named_map(1, _schema)),
        "discriminator": (26, "s"),
        "readOnly": (27, "b"),
        "xml": (28, _XML),
        "externalDocs": (29, _EXTERNAL_DOCS),
        "example": (30, "A"),
    },
    31,
)

_BODY_PARAM = _message(
    {"description": (1, "s"), "name": (2, "s"), "in": (3, "s"), "required": (4, "b"), "schema": (5, _SCHEMA)}, 6
)
_NON_BODY = {
    "header": (1, _HEADER_PARAM),
    "formData": (2, _FORM_PARAM),
    "query": (3, _QUERY_PARAM),
    "path": (4, _PATH_PARAM),
}


def _parameter(obj: Any) -> bytes:
    """`Parameter`: body_parameter = 1, or non_body_parameter = 2 holding the sub-schema of its `in`."""
    where = obj.get("in")
    if where == "body":
        return _len_field(1, _BODY_PARAM(obj))
    if where not in _NON_BODY:
        raise UnsupportedKey(f"parameter in {where!r}")
    number, encoder = _NON_BODY[where]
    return _len_field(2, _len_field(number, encoder(obj)))


def _json_reference(obj: Any) -> bytes:
    return _message({"$ref": (1, "s"), "description": (2, "s")}, None)(obj)


def _parameters_item(obj: Any) -> bytes:
    """`ParametersItem`: parameter = 1 or json_reference = 2."""
    if "$ref" in obj:
        return _len_field(2, _json_reference(obj))
    return _len_field(1, _parameter(obj))


def _schema_item(obj: Any) -> bytes:
    return _len_field(1, _SCHEMA(obj))


_RESPONSE = _message({"description": (1, "s"), "schema": (2, _schema_item)}, 5)


def _response_value(obj: Any) -> bytes:
    if "$ref" in obj:
        return _len_field(2, _json_reference(obj))
    return _len_field(1, _RESPONSE(obj))


def _responses(obj: Any) -> bytes:
    codes = b""
    vendor = b""
    for key, value in obj.items():
        if key.startswith("x-"):
            vendor += _named(2, key, _any(value))
        else:
            codes += _named(1, key, _response_value(value))
    return codes + vendor


def _string_array(value: Any) -> bytes:
    return b"".join(_len_field(1, str(v).encode()) for v in value)


def _security_requirement(obj: Any) -> bytes:
    return _named_map(1, _string_array)(obj)


_OPERATION = _message(
    {
        "tags": (1, "S"),
        "summary": (2, "s"),
        "description": (3, "s"),
        "externalDocs": (4, _EXTERNAL_DOCS),
        "operationId": (5, "s"),
        "produces": (6, "S"),
        "consumes": (7, "S"),
        "parameters": (8, ("*", _parameters_item)),
        "responses": (9, _responses),
        "schemes": (10, "S"),
        "deprecated": (11, "b"),
        "security": (12, ("*", _security_requirement)),
    },
    13,
)
_PATH_ITEM = _message(
    {
        "$ref": (1, "s"),
        "get": (2, _OPERATION),
        "put": (3, _OPERATION),
        "post": (4, _OPERATION),
        "delete": (5, _OPERATION),
        "options": (6, _OPERATION),
        "head": (7, _OPERATION),
        "patch": (8, _OPERATION),
        "parameters": (9, ("*", _parameters_item)),
    },
    10,
)


def _paths(obj: Any) -> bytes:
    vendor = b"".join(_named(1, k, _any(v)) for k, v in obj.items() if k.startswith("x-"))
    return vendor + b"".join(_named(2, k, _PATH_ITEM(v)) for k, v in obj.items() if not k.startswith("x-"))


_API_KEY = _message({"type": (1, "s"), "name": (2, "s"), "in": (3, "s"), "description": (4, "s")}, 5)
_BASIC = _message({"type": (1, "s"), "description": (2, "s")}, 3)


def _security_definition(obj: Any) -> bytes:
    """`SecurityDefinitionsItem`: basic = 1, apiKey = 2 (the OAuth2 flows are not used by Kubernetes)."""
    kind = obj.get("type")
    if kind == "apiKey":
        return _len_field(2, _API_KEY(obj))
    if kind == "basic":
        return _len_field(1, _BASIC(obj))
    raise UnsupportedKey(f"security definition of type {kind!r}")


_INFO = _message({"title": (1, "s"), "version": (2, "s"), "description": (3, "s"), "termsOfService": (4, "s")}, 7)
_TAG = _message({"name": (1, "s"), "description": (2, "s"), "externalDocs": (3, _EXTERNAL_DOCS)}, 4)
_DOCUMENT = _message(
    {
        "swagger": (1, "s"),
        "info": (2, _INFO),
        "host": (3, "s"),
        "basePath": (4, "s"),
        "schemes": (5, "S"),
        "consumes": (6, "S"),
        "produces": (7, "S"),
        "paths": (8, _paths),
        "definitions": (9, _named_map(1, _schema)),
        "parameters": (10, _named_map(1, _parameter)),
        "responses": (11, _named_map(1, _RESPONSE)),
        "security": (12, ("*", _security_requirement)),
        "securityDefinitions": (13, _named_map(1, _security_definition)),
        "tags": (14, ("*", _TAG)),
        "externalDocs": (15, _EXTERNAL_DOCS),
    },
    16,
)


def encode_document(doc: dict[str, Any]) -> bytes:
    """The `openapi.v2.Document` bytes of a Swagger 2.0 JSON document."""
    return _DOCUMENT(doc)
