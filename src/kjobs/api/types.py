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


def unchanged(new: Any, old: Any) -> bool:
    """`new == old`, answered at once when `new` is `old`'s very dict or list (a member an update merged copy on
    write kept, read-only): `==` compares a container's items by identity first, so a container equals itself at
    any depth. A float NaN is compared (it is not equal to itself)."""
    return (new is old and (type(new) is dict or type(new) is list)) or new == old
