"""kjobs: Kubernetes batch Jobs with their failure-handling semantics, as a local control plane.

The Python API most users want:
- `kjobs.validate_manifest(obj)` → the Kubernetes field errors of a Job or Pod manifest (empty when valid);
- `kjobs.explain(job, pod)` → what the Job's podFailurePolicy does with a failed pod, and why;
- `kjobs.match_pod_failure_policy(policy, pod)` → the raw decision;
- `kjobs.load_manifests(path)` → objects from a YAML/JSON file.

The names are imported on first use (PEP 562 `__getattr__`): `import kjobs` happens in every pytest run of an
environment with kjobs installed (its plugin, `kjobs.pytest_plugin`), which should not pay for the validator.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kjobs.api.manifest import load_manifests, parse_manifests
    from kjobs.explanation import Explanation, explain
    from kjobs.policy import PolicyDecision, match_pod_failure_policy
    from kjobs.validate import validate_manifest

_LAZY = {
    "load_manifests": "kjobs.api.manifest",
    "parse_manifests": "kjobs.api.manifest",
    "Explanation": "kjobs.explanation",
    "explain": "kjobs.explanation",
    "PolicyDecision": "kjobs.policy",
    "match_pod_failure_policy": "kjobs.policy",
    "validate_manifest": "kjobs.validate",
}


def lazy_module_getattr(module: str, lazy: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module's PEP 562 `__getattr__` that imports `lazy[name]` when `name` is first read and keeps the value in
    `namespace` (the module's globals), so the module's import does not pay for the names' modules. `kjobs.store`
    uses it too: `kjobs` is imported before any `kjobs.*` module, and the pytest plugin may import nothing else."""

    def getattr_(name: str) -> Any:
        source = lazy.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    return getattr_


__getattr__ = lazy_module_getattr(__name__, _LAZY, globals())


__version__ = "0.1.0"

__all__ = [
    "Explanation",
    "PolicyDecision",
    "__version__",
    "explain",
    "load_manifests",
    "match_pod_failure_policy",
    "parse_manifests",
    "validate_manifest",
]
