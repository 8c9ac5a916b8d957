"""kjobs: Kubernetes batch Jobs with their failure-handling semantics, as a local control plane.

The Python API most users want:
- `kjobs.validate_manifest(obj)` → the Kubernetes field errors of a Job or Pod manifest (empty when valid);
- `kjobs.explain(job, pod)` → what the Job's podFailurePolicy does with a failed pod, and why;
- `kjobs.match_pod_failure_policy(policy, pod)` → the raw decision;
- `kjobs.load_manifests(path)` → objects from a YAML/JSON file.
"""

from kjobs.api.manifest import load_manifests, parse_manifests
from kjobs.explain import Explanation, explain
from kjobs.policy import PolicyDecision, match_pod_failure_policy
from kjobs.validate import validate_manifest

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
