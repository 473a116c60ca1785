"""The simulated fabric engine: real ``mrc.core`` endpoints over a model of ``p4src/mrc_switch.p4``
switches in simulated time, driven by the same scenario files as the emulated fabric."""
from .engine import SimFaults, SimRun, progress_bar, run_sim
from .model import Port, Route, SimFabric

__all__ = ["Port", "Route", "SimFabric", "SimFaults", "SimRun", "progress_bar", "run_sim"]
