"""Type aliases for Kubernetes objects kept as their JSON form.

kjobs keeps objects as plain dicts in Kubernetes' JSON shape (camelCase field names, unknown fields
preserved), so whatever a user or a real API server sends round-trips unchanged.
"""

from typing import Any

Obj = dict[str, Any]
"""A Kubernetes object or sub-object in its JSON form."""


def section(obj: Obj, key: str) -> Obj:
    """`obj[key]` when it is a map, else an empty one: how a reader of a stored or user-sent object takes its
    `metadata`, `spec` or `status` without tripping on a missing or malformed one."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}
