"""`kjobs simulate`: a Job on the embedded cluster in virtual time, with the simulated container runtime."""

from kjobs.simulate.model import Model, ModelError, load_model, parse_model
from kjobs.simulate.session import SimulationOptions, SimulationResult, simulate

__all__ = [
    "Model",
    "ModelError",
    "SimulationOptions",
    "SimulationResult",
    "load_model",
    "parse_model",
    "simulate",
]
