"""Text Go's JSON decoder takes where orjson refuses it: invalid UTF-8 and lone UTF-16 surrogates become U+FFFD.

kube-apiserver decodes request bodies with sigs.k8s.io/json, a fork of encoding/json, whose `unquote`
(encoding/json/decode.go) does not treat either as an error: each byte of a sequence that is not UTF-8 (as
`utf8.DecodeRune` reads one: width 1) and each `\\u` escape of a surrogate that is not half of a pair is stored as
U+FFFD. orjson refuses such a body, so kjobs answered 400 where a cluster stores the object. A client can send one
without meaning to: Python's `json.dumps` writes a lone surrogate (a file name decoded with `surrogateescape`, as
`os.listdir` returns undecodable names) as `\\udcXX`, and the Python clients serialise bodies so. A body orjson
refuses for its text alone is read again here, as Go reads it; anything else Go refuses (NaN, `1e400`, a syntax
error) is refused as before.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

import orjson

_HANDLER = "kjobs.go-utf8"


def _one_byte(error: UnicodeError) -> tuple[str, int]:
    """U+FFFD for the first byte of what does not decode, resuming at the next byte (Go's `utf8.DecodeRune`)."""
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd", error.start + 1


codecs.register_error(_HANDLER, _one_byte)

_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_ERRORS = ("UTF-8", "surrogate")
"""Words of orjson's messages for text it refuses (`str is not valid UTF-8: surrogates not allowed`, `no low
surrogate in string`, ...)."""

_INT64_MIN, _UINT64_LIMIT = -(1 << 63), 1 << 64


def _refuse(constant: str) -> Any:
    raise ValueError(f"invalid character in {constant}")


def _number(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def _integer(text: str) -> int | float:
    """As orjson reads an integer: a float beyond what int64 and uint64 hold."""
    value = int(text)
    return value if _INT64_MIN <= value < _UINT64_LIMIT else float(value)


def loads(raw: bytes, refused: orjson.JSONDecodeError) -> Any:
    """The value Go decodes from `raw`, which orjson refused with `refused`; raises `refused` again when the
    refusal was not about text, or when the body does not decode either way."""
    if not any(word in str(refused) for word in _TEXT_ERRORS):
        raise refused
    try:
        value = json.loads(
            raw.decode("utf-8", _HANDLER), parse_constant=_refuse, parse_float=_number, parse_int=_integer
        )
    except (ValueError, RecursionError):
        raise refused from None
    return _replace_surrogates(value)


def _replace_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings and keys made U+FFFD (without recursion: the depth limit
    is checked after this)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if not isinstance(value, dict | list):
        return value
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = _SURROGATE.sub("\ufffd", item)
                elif isinstance(item, dict | list):
                    stack.append(item)
            continue
        if any(_SURROGATE.search(key) for key in node):  # renamed in place, the keys' order kept
            items = list(node.items())
            node.clear()
            node.update((_SURROGATE.sub("\ufffd", key), item) for key, item in items)
        for key, item in node.items():
            if isinstance(item, str):
                node[key] = _SURROGATE.sub("\ufffd", item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value
