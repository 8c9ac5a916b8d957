"""kjobs: Kubernetes batch Jobs with their failure-handling semantics, as a local control plane."""

__version__ = "0.1.0"
