"""mrc-fabric controller: topology model, SID plan, static per-switch intents and host EV plans."""
from .evplan import Ev, EvPlanError, EvProfile, host_ev_data, srv6_profile, stev_profile, write_ev_files
from .plan import FabricPlan, SwitchPlan, build_plan
from .sidplan import SidPlan, build_sid_plan
from .topogen import clos, clos_data
from .topology import Link, Switch, Topology, TopologyError, load_topology, parse_topology

__all__ = [
    "Ev", "EvPlanError", "EvProfile", "FabricPlan", "Link", "SidPlan", "Switch", "SwitchPlan",
    "Topology", "TopologyError", "build_plan", "build_sid_plan", "clos", "clos_data", "host_ev_data",
    "load_topology", "parse_topology", "srv6_profile", "stev_profile", "write_ev_files",
]
