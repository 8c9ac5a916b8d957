"""kjobs in tests: an in-process Job cluster (or another cluster) behind one synchronous handle, for the
pytest plugin (`kjobs.pytest_plugin`) and for anyone who wants one outside pytest. README: "kjobs in tests"."""

from kjobs.testing.cluster import KjobsCluster, UnsupportedFault, WaitFailed
from kjobs.testing.embedded import ClusterOptions
from kjobs.testing.faults import FaultError

__all__ = ["ClusterOptions", "FaultError", "KjobsCluster", "UnsupportedFault", "WaitFailed"]
