"""Random UUIDs for object UIDs and container IDs."""

from __future__ import annotations

import os

_pool = bytearray()


def random_uuid() -> str:
    """A random (version 4) UUID string, as `str(uuid.uuid4())`, but cut from random bytes read 4 KiB at a time:
    every created object and started container takes one, and a `urandom` call per UUID was most of its cost."""
    global _pool
    if len(_pool) < 16:
        _pool = bytearray(os.urandom(4096))
    raw = _pool[-16:]
    del _pool[-16:]
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
