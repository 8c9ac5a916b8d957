"""kjobs in tests: an in-process Job cluster (or another cluster) behind one synchronous handle, for the
pytest plugin (`kjobs.pytest_plugin`) and for anyone who wants one outside pytest. README: "kjobs in tests"."""

from kjobs.node.sim_runtime import Outcome
from kjobs.testing.cluster import KjobsCluster, UnsupportedFault, WaitFailed
from kjobs.testing.embedded import ClusterOptions
from kjobs.testing.faults import FaultError
from kjobs.testing.virtual import SimulatedCommandWarning

__all__ = [
    "ClusterOptions",
    "FaultError",
    "KjobsCluster",
    "Outcome",
    "SimulatedCommandWarning",
    "UnsupportedFault",
    "WaitFailed",
]
