"""mrc-fabric controller: topology model, SID plan, static per-switch intents, host EV plans, and the
P4Runtime side (sessions, mapping to p4src, reconcile, wiring check, telemetry, daemon).
(The reconcile function itself: ``controller.reconcile.reconcile``; the submodule shadows the name.)

Every name is imported on first use (PEP 562): ``import controller`` loads nothing else, so tools that
only need the topology and plans get no grpc, and the console script's entry point
(``controller.cli``, under the package) starts inside its Ctrl-C handling at once (until 2026-12-08
the plan modules and yaml were imported here first, a window where Ctrl-C was a traceback).
"""
from importlib import import_module
from importlib.util import find_spec
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .evplan import Ev, EvPlanError, EvProfile, host_ev_data, srv6_profile, stev_profile, write_ev_files
    from .plan import FabricPlan, SwitchPlan, build_plan
    from .sidplan import SidPlan, build_sid_plan
    from .topogen import clos, clos_data
    from .topology import Link, Switch, Topology, TopologyError, load_topology, parse_topology

_LAZY = {
    "Ev": "evplan", "EvPlanError": "evplan", "EvProfile": "evplan", "host_ev_data": "evplan",
    "srv6_profile": "evplan", "stev_profile": "evplan", "write_ev_files": "evplan",
    "FabricPlan": "plan", "SwitchPlan": "plan", "build_plan": "plan",
    "SidPlan": "sidplan", "build_sid_plan": "sidplan", "clos": "topogen", "clos_data": "topogen",
    "Link": "topology", "Switch": "topology", "Topology": "topology", "TopologyError": "topology",
    "load_topology": "topology", "parse_topology": "topology",
    "Controller": "daemon", "Options": "daemon", "setup_logging": "daemon",
    "DesiredState": "mapping", "MappingError": "mapping", "P4Names": "mapping", "desired_state": "mapping",
    "ReconcileResult": "reconcile",
    "PacketIn": "session", "PipelineConfig": "session", "SessionError": "session", "SwitchSession": "session",
    "TelemetryCollector": "telemetry", "WiringChecker": "wiring", "WiringReport": "wiring",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    # A submodule by its dotted name after a bare `import controller` (`controller.plan.thresholds`,
    # `controller.evplan.ev_nodes`, as docs/ name them): the eager imports this file had until
    # 2026-12-08 made evplan, plan, sidplan, topogen, topology, usid and p4contract attributes; with
    # every import lazy they were an AttributeError.  Now any submodule loads on first use.
    if not name.startswith("_") and find_spec(f"{__name__}.{name}") is not None:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'controller' has no attribute {name!r}")


def __dir__() -> list[str]:  # the lazy names too (dir() showed none of them)
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Controller", "DesiredState", "Ev", "EvPlanError", "EvProfile", "FabricPlan", "Link", "MappingError",
    "Options", "P4Names", "PacketIn", "PipelineConfig", "ReconcileResult", "SessionError", "SidPlan", "Switch",
    "SwitchPlan", "SwitchSession", "TelemetryCollector", "Topology", "TopologyError", "WiringChecker",
    "WiringReport", "build_plan", "build_sid_plan", "clos", "clos_data", "desired_state", "host_ev_data",
    "load_topology", "parse_topology", "setup_logging", "srv6_profile", "stev_profile",
    "write_ev_files",
]
