"""Type aliases for Kubernetes objects kept as their JSON form.

kjobs keeps objects as plain dicts in Kubernetes' JSON shape (camelCase field names, unknown fields
preserved), so whatever a user or a real API server sends round-trips unchanged.
"""

from typing import Any

Obj = dict[str, Any]
"""A Kubernetes object or sub-object in its JSON form."""
