"""ConfigMaps and Secrets: what the API server does to them on a write, and their validation.

Design note: pure, like the rest of `kjobs.api`. A Secret's `stringData` is a write-only convenience: the
apiserver's conversion to the internal type (`Convert_v1_Secret_To_core_Secret`) merges each entry into `data`
(overwriting a key in both) and drops the field, so it is never stored or returned; `type` defaults to `Opaque`
(`SetDefaults_Secret`). `data` (Secret) and `binaryData` (ConfigMap) are `[]byte` in Go, base64 in JSON: a
value that is not base64 fails decoding (400 BadRequest, as the apiserver answers), and sizes count decoded
bytes. Validation follows `ValidateConfigMap`, `ValidateConfigMapUpdate`, `ValidateSecret` and
`ValidateSecretUpdate` in pkg/apis/core/validation/validation.go: keys by `IsConfigMapKey`, a key in both
`data` and `binaryData`, `MaxSecretSize` (1 MiB) in total, the built-in Secret types' required keys, and
`immutable: true` freezing the contents.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from kjobs.api.errors import ApiError, ErrorType, FieldError, bad_request, too_long
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation_access import Errors, get_bool, get_str, get_str_map
from kjobs.api.validation_formats import is_config_map_key
from kjobs.api.validation_meta import IMMUTABLE_MSG, semantic_equal, validate_object_meta, validate_object_meta_update

MAX_SECRET_SIZE = 1 * 1024 * 1024
"""`core.MaxSecretSize`, which also bounds a ConfigMap's total size."""

SECRET_TYPE_OPAQUE = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
SECRET_TYPE_DOCKERCFG = "kubernetes.io/dockercfg"
DOCKER_CONFIG_KEY = ".dockercfg"
SECRET_TYPE_DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
DOCKER_CONFIG_JSON_KEY = ".dockerconfigjson"
SECRET_TYPE_BASIC_AUTH = "kubernetes.io/basic-auth"
BASIC_AUTH_USERNAME_KEY = "username"
BASIC_AUTH_PASSWORD_KEY = "password"
SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"
SSH_AUTH_PRIVATE_KEY = "ssh-privatekey"
SECRET_TYPE_TLS = "kubernetes.io/tls"
TLS_CERT_KEY = "tls.crt"
TLS_PRIVATE_KEY_KEY = "tls.key"

IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
REDACTED = "<secret contents redacted>"

_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

Invalid = ErrorType.FieldValueInvalid
Required = ErrorType.FieldValueRequired
Forbidden = ErrorType.FieldValueForbidden


# ------------------------------------------------------------------------------------------------ bytes


def base64_error(text: str) -> int | None:
    """Where Go's `base64.StdEncoding` (as `encoding/json` decodes a `[]byte`) finds `text` illegal: the
    byte offset of `CorruptInputError`, or None when it decodes. Newlines are skipped, as Go skips them."""
    chars = [(i, c) for i, c in enumerate(text) if c not in "\r\n"]
    for n, (i, c) in enumerate(chars):
        if c == "=":
            quantum = n % 4
            rest = "".join(ch for _, ch in chars[n:])
            if quantum < 2 or rest not in ("=" * (4 - quantum),):
                return i
            return None
        if c not in _BASE64_ALPHABET:
            return i
    if len(chars) % 4:
        return chars[len(chars) - len(chars) % 4][0]
    return None


def decode_bytes(text: str) -> bytes:
    """The bytes a valid base64 `[]byte` field holds (check with `base64_error` first)."""
    return base64.b64decode(text.replace("\r", "").replace("\n", ""))


BYTES_FIELDS = {"ConfigMap": "binaryData", "Secret": "data"}
"""The `map[string][]byte` field of each kind (base64 in JSON)."""


def check_bytes(obj: Obj) -> None:
    """Decoding of a ConfigMap's or Secret's `[]byte` values: each a base64 string, or a 400 `ApiError` (the
    apiserver's `cannot be handled as a Secret: illegal base64 data at input byte N`), and of a Secret's
    `stringData` strings."""
    field = BYTES_FIELDS.get(str(obj.get("kind") or ""))
    if field is not None:
        _check_bytes_map(obj, field)
    if obj.get("kind") == "Secret":
        _check_string_map(obj.get("stringData"), "Secret", "stringData")


def _check_bytes_map(obj: Obj, field: str) -> None:
    values = obj.get(field)
    if not isinstance(values, dict):
        return
    kind = str(obj.get("kind") or "")
    for value in values.values():
        if value is None:
            continue
        if not isinstance(value, str):
            raise _unmarshal_error(kind, field, value, "[]uint8")
        where = base64_error(value)
        if where is not None:
            raise bad_request(
                f'{kind} in version "v1" cannot be handled as a {kind}: illegal base64 data at input byte {where}'
            )


def _check_string_map(values: Any, kind: str, field: str) -> None:
    """Go's decoding of a `map[string]string` field (a Secret's `stringData`, merged into `data` before anything
    validates it): a value that is not a string, or a field that is not an object, is a 400 `ApiError` with the
    decoder's text (`json: cannot unmarshal bool into Go struct field Secret.stringData of type string`), never
    dropped in silence."""
    if values is None:
        return
    if not isinstance(values, dict):
        raise _unmarshal_error(kind, field, values, "map[string]string")
    for value in values.values():
        if value is not None and not isinstance(value, str):
            raise _unmarshal_error(kind, field, value, "string")


def _unmarshal_error(kind: str, field: str, value: Any, go_type: str) -> ApiError:
    if isinstance(value, dict):
        found = "object"
    elif isinstance(value, list):
        found = "array"
    elif isinstance(value, str):
        found = "string"
    else:
        found = "bool" if isinstance(value, bool) else "number"
    return bad_request(
        f'{kind} in version "v1" cannot be handled as a {kind}: '
        f"json: cannot unmarshal {found} into Go struct field {kind}.{field} of type {go_type}"
    )


def _byte_size(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(decode_bytes(value))
    except (binascii.Error, ValueError):
        return 0


# --------------------------------------------------------------------------------------------- defaults


def default_config_map_in_place(cm: Obj) -> Obj:
    """A ConfigMap as decoded: `binaryData` must be base64 (nothing is defaulted)."""
    _check_bytes_map(cm, BYTES_FIELDS["ConfigMap"])
    return cm


def default_secret_in_place(secret: Obj) -> Obj:
    """A Secret as the apiserver decodes and defaults it: `stringData` merged into `data` (base64) and
    dropped, `type` `Opaque` when unset."""
    _check_bytes_map(secret, BYTES_FIELDS["Secret"])
    string_data = secret.pop("stringData", None)
    _check_string_map(string_data, "Secret", "stringData")
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        # a new map: the one read may be shared with the stored object (a copy-on-write patch)
        data = secret["data"] = dict(data) if isinstance(data, dict) else {}
        for key, value in string_data.items():
            if isinstance(value, str):
                data[key] = base64.b64encode(value.encode()).decode()
    if not secret.get("type"):
        secret["type"] = SECRET_TYPE_OPAQUE
    return secret


# ------------------------------------------------------------------------------------------- validation


def _keys(values: dict[str, Any] | None, path: str, errs: Errors) -> None:
    for key in sorted(values or {}):
        for msg in is_config_map_key(key):
            errs.append(FieldError(f"{path}[{key}]", Invalid, msg, key))


def validate_config_map(cm: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateConfigMap`."""
    errs: Errors = validate_object_meta(cm.get("metadata") or {}, namespaced=True)
    data = get_str_map(cm, "data", "data", errs) or {}
    binary = get_str_map(cm, "binaryData", "binaryData", errs) or {}
    _keys(data, "data", errs)
    for key in sorted(data):
        if key in binary:
            errs.append(FieldError(f"data[{key}]", Invalid, "duplicate of key present in binaryData", key))
    _keys(binary, "binaryData", errs)
    get_bool(cm, "immutable", "immutable", errs)
    total = sum(len(v.encode()) for v in data.values()) + sum(_byte_size(v) for v in binary.values())
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("", MAX_SECRET_SIZE))  # the path "" names the whole object
    return errs


def _immutable_errors(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[FieldError]:
    """Once `immutable: true` is stored, it stays, and so do the contents."""
    if old.get("immutable") is not True:
        return []
    errs: list[FieldError] = []
    if new.get("immutable") is not True:
        errs.append(FieldError("immutable", Forbidden, IMMUTABLE_WHEN_SET))
    for name in fields:
        if not semantic_equal(new.get(name), old.get(name)):
            errs.append(FieldError(name, Forbidden, IMMUTABLE_WHEN_SET))
    return errs


def validate_config_map_update(cm: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateConfigMapUpdate`: metadata update rules, the immutable contents, then `ValidateConfigMap`."""
    errs = validate_object_meta_update(cm.get("metadata") or {}, old.get("metadata") or {})
    errs += _immutable_errors(cm, old, ("data", "binaryData"))
    return errs + validate_config_map(cm, features=features)


def _json_object_error(raw: bytes) -> str | None:
    """Go's `json.Unmarshal` into a `map[string]interface{}`: its error text, or None when it is one."""
    text = raw.decode("utf-8", "replace")
    stripped = text.strip()
    if not stripped:
        return "unexpected end of JSON input"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            return "unexpected end of JSON input"
        char = text[exc.pos]
        where = "looking for beginning of value" if exc.pos == len(text) - len(text.lstrip()) else "after value"
        return f"invalid character {char!r} {where}"
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "bool", type(None): ""}.get(type(value), "number")
        if not kind:
            return None  # null leaves the map nil, without an error
        return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    return None


def validate_secret(secret: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateSecret`: metadata, keys, total size, and what the built-in types require."""
    errs: Errors = validate_object_meta(secret.get("metadata") or {}, namespaced=True)
    data = get_str_map(secret, "data", "data", errs) or {}
    _keys(data, "data", errs)
    get_bool(secret, "immutable", "immutable", errs)
    if sum(_byte_size(v) for v in data.values()) > MAX_SECRET_SIZE:
        errs.append(too_long("data", MAX_SECRET_SIZE))
    kind = get_str(secret, "type", "type", errs) or ""
    annotations = (secret.get("metadata") or {}).get("annotations") or {}
    if kind == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        if not isinstance(annotations, dict) or not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            errs.append(FieldError(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]", Required))
    elif kind in (SECRET_TYPE_DOCKERCFG, SECRET_TYPE_DOCKER_CONFIG_JSON):
        key = DOCKER_CONFIG_KEY if kind == SECRET_TYPE_DOCKERCFG else DOCKER_CONFIG_JSON_KEY
        if key not in data:
            errs.append(FieldError(f"data[{key}]", Required))
        else:
            problem = _json_object_error(decode_bytes(data[key])) if base64_error(data[key]) is None else None
            if problem is not None:
                errs.append(FieldError(f"data[{key}]", Invalid, problem, REDACTED))
    elif kind == SECRET_TYPE_BASIC_AUTH:
        if BASIC_AUTH_USERNAME_KEY not in data and BASIC_AUTH_PASSWORD_KEY not in data:
            errs.append(FieldError(f"data[{BASIC_AUTH_USERNAME_KEY}]", Required))
            errs.append(FieldError(f"data[{BASIC_AUTH_PASSWORD_KEY}]", Required))
    elif kind == SECRET_TYPE_SSH_AUTH:
        if not _byte_size(data.get(SSH_AUTH_PRIVATE_KEY)):
            errs.append(FieldError(f"data[{SSH_AUTH_PRIVATE_KEY}]", Required))
    elif kind == SECRET_TYPE_TLS:
        for key in (TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY):
            if key not in data:
                errs.append(FieldError(f"data[{key}]", Required))
    return errs


def validate_secret_update(secret: Obj, old: Obj, *, features: FeatureGates = DEFAULT) -> list[FieldError]:
    """`ValidateSecretUpdate`: metadata update rules, `type` immutable, the immutable contents, then
    `ValidateSecret` (stringData was merged into data before, so data is what is compared)."""
    errs = validate_object_meta_update(secret.get("metadata") or {}, old.get("metadata") or {})
    if secret.get("type") != old.get("type"):
        errs.append(FieldError("type", Invalid, IMMUTABLE_MSG, secret.get("type") or ""))
    errs += _immutable_errors(secret, old, ("data",))
    return errs + validate_secret(secret, features=features)
