"""MRC endpoint driver: the sans-IO transport core over AF_PACKET sockets, one per NIC port (plane).

    from mrc.endpoint import Endpoint, PortConfig
    with Endpoint([PortConfig("eth1", 1, next_hop_mac=leaf1), PortConfig("eth2", 2, next_hop_mac=leaf2)],
                  gid, encap="srv6") as ep:
        load_profile(ep.ctl, load_plan(path).peers["h2"].profiles["srv6"], ev_profile_id=1)
        qp = ep.create_qp(attr=ep.qp_attr(ev_profile_id=1))  # or ep.create_qp([(ev, port), ...])
        ep.connect(qp, remote_qpn, remote_gid, rq_psn=0, sq_psn=0)
        ep.post_write(qp, wr_id=1, data=buf, remote_va=va, rkey=rkey, imm=None)
        done = ep.wait_completions(1, timeout_s=10)
"""

from mrc.endpoint.driver import (
    DriverCounters,
    Endpoint,
    EndpointError,
    LinkEvent,
    PortConfig,
    qp_overhead,
)
from mrc.endpoint.netif import InterfaceError, format_mac, parse_mac
from mrc.endpoint.plan import (
    HostPlan,
    PeerPlan,
    PlanError,
    PlanProfile,
    PortInfo,
    direct_evs,
    load_plan,
    load_profile,
    parse_plan,
)

__all__ = [
    "DriverCounters",
    "Endpoint",
    "EndpointError",
    "HostPlan",
    "InterfaceError",
    "LinkEvent",
    "PeerPlan",
    "PlanError",
    "PlanProfile",
    "PortConfig",
    "PortInfo",
    "direct_evs",
    "format_mac",
    "load_plan",
    "load_profile",
    "parse_mac",
    "parse_plan",
    "qp_overhead",
]
