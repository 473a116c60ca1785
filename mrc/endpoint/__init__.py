"""MRC endpoint driver: the sans-IO transport core over AF_PACKET sockets, one per NIC port (plane).

    from mrc.endpoint import Endpoint, PortConfig
    with Endpoint([PortConfig("eth1", 1, next_hop_mac=leaf1), PortConfig("eth2", 2, next_hop_mac=leaf2)],
                  gid, encap="srv6") as ep:
        qp = ep.create_qp(evs)                      # [(ev, port), ...], e.g. from load_plan(...)
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
from mrc.endpoint.plan import HostPlan, PeerPlan, PlanError, PortInfo, direct_evs, load_plan, parse_plan

__all__ = [
    "DriverCounters",
    "Endpoint",
    "EndpointError",
    "HostPlan",
    "InterfaceError",
    "LinkEvent",
    "PeerPlan",
    "PlanError",
    "PortConfig",
    "PortInfo",
    "direct_evs",
    "format_mac",
    "load_plan",
    "parse_mac",
    "parse_plan",
    "qp_overhead",
]
