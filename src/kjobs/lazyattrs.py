"""A package's names imported when first read (PEP 562), so that most commands do not import their modules.

`kjobs` itself names the validator and the explainer, which every pytest run of an environment with kjobs
installed would otherwise import through the plugin; `kjobs.store` names the SQLite store, which a `kjobs run` or
`kjobs simulate` never opens (docs/startup52.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, table: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `table` maps a name to the module holding it; a name read once is
    kept in `namespace` (the package's globals), so later reads do not come back here."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
