"""mrc-fabric controller: topology model, SID plan, static per-switch intents, host EV plans, and the
P4Runtime side (sessions, mapping to p4src, reconcile, wiring check, telemetry, daemon).
(The reconcile function itself: ``controller.reconcile.reconcile``; the submodule shadows the name.)

The P4Runtime names are imported lazily so ``import controller`` stays light (no grpc) for tools that
only need the topology and plans.
"""
from importlib import import_module

from .evplan import Ev, EvPlanError, EvProfile, host_ev_data, srv6_profile, stev_profile, write_ev_files
from .plan import FabricPlan, SwitchPlan, build_plan
from .sidplan import SidPlan, build_sid_plan
from .topogen import clos, clos_data
from .topology import Link, Switch, Topology, TopologyError, load_topology, parse_topology

_LAZY = {
    "Controller": "daemon", "Options": "daemon", "setup_logging": "daemon",
    "DesiredState": "mapping", "MappingError": "mapping", "P4Names": "mapping", "desired_state": "mapping",
    "ReconcileResult": "reconcile",
    "PacketIn": "session", "PipelineConfig": "session", "SessionError": "session", "SwitchSession": "session",
    "TelemetryCollector": "telemetry", "WiringChecker": "wiring", "WiringReport": "wiring",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'controller' has no attribute {name!r}")


__all__ = [
    "Controller", "DesiredState", "Ev", "EvPlanError", "EvProfile", "FabricPlan", "Link", "MappingError",
    "Options", "P4Names", "PacketIn", "PipelineConfig", "ReconcileResult", "SessionError", "SidPlan", "Switch",
    "SwitchPlan", "SwitchSession", "TelemetryCollector", "Topology", "TopologyError", "WiringChecker",
    "WiringReport", "build_plan", "build_sid_plan", "clos", "clos_data", "desired_state", "host_ev_data",
    "load_topology", "parse_topology", "setup_logging", "srv6_profile", "stev_profile",
    "write_ev_files",
]
