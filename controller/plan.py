"""Static per-switch intents computed from a topology and its SID plan.

Intents are target-neutral facts ("route uSID X to port P towards MAC M"); ``controller/mapping.py``
turns them into the P4 program's table entries.  Forwarding model (uN, RFC 9800 NEXT-C-SID):

* every switch matches its own ``block|uSID/48`` (``OwnUsid``), shifts the rest of the destination
  left by 16 bits and looks the new destination up in its ``RouteUsid`` /48 routes;
* spines route to each leaf's uSID, leaves to each spine's uSID and to the uSID of every host NIC port
  attached to them.  Delivery: the last leaf forwards the packet still encapsulated (destination =
  ``block|host-port uSID``) to the host port; the host endpoint decapsulates (uDT6).  Switches never
  decapsulate, so the P4 program needs no End.DT6 and the outer header (telemetry) reaches the host.
* STEV mode (no outer header): host routes /128 for every GID of the plane; the source leaf sends
  remote GIDs to an ECMP group over its uplinks (one member per spine, natural order), spines and the
  destination leaf have a single next hop.  In EV-direct mode the group member is chosen by the EV:
  ``member = (flow_label & 0xFF) % len(members)`` (see ``EvDirectMap``).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TypeVar

from . import usid as U
from .sidplan import SidPlan, build_sid_plan
from .topology import CPU_PORT, LinkProps, Topology

DEFAULT_QUEUE_DEPTH = 64  # packets; bmv2's default per queue
LEAF_UPLINK_GROUP = 1
EV_DIRECT_MASK = 0xFF  # flow_label[7:0]
# how leaves spread STEV/UDP traffic to remote hosts: the route's ECMP group (flow hash), or the
# EV-direct table (the EV's low bits pick the member); mapping.desired_state writes either
STEV_ECMP = "ecmp"
STEV_EV_DIRECT = "ev_direct"
STEV_MODES = (STEV_ECMP, STEV_EV_DIRECT)


@dataclass(frozen=True, slots=True)
class NextHop:
    """Send out of ``port`` rewriting Ethernet src/dst to ``own_mac``/``neighbour_mac``."""

    port: int
    neighbour: str  # "node:port" at the other end
    neighbour_mac: str
    own_mac: str


@dataclass(frozen=True, slots=True)
class PortSetting:
    """A connected port: admin state, MACs, congestion thresholds and link emulation."""

    port: int
    kind: str  # "fabric" (to a switch) | "host"
    neighbour: str
    own_mac: str
    neighbour_mac: str
    admin_up: bool = True
    ecn_threshold: int = 16  # queue depth (packets) at or above which ECT packets are CE-marked
    trim_threshold: int = 56  # queue depth (packets) at or above which data packets are trimmed
    drop_threshold: int = 64  # queue depth at or above which untrimmable packets are dropped
    trim_enabled: bool = True
    props: LinkProps = field(default_factory=LinkProps)


@dataclass(frozen=True, slots=True)
class OwnUsid:
    """uN: this switch's ``block|uSID/48``; shift the uSID list and route again."""

    prefix: str
    usid: int

    @property
    def block_usid(self) -> int:
        """The ``block | uSID`` value (the exact-match key of a uN table, ``usid.TOP_BITS`` wide)."""
        return U.top(int(ipaddress.IPv6Network(self.prefix).network_address))


@dataclass(frozen=True, slots=True)
class DropUnknownUsid:
    """Drop (and count) packets for our locator block whose uSID no route names (the /32)."""

    prefix: str


@dataclass(frozen=True, slots=True)
class RouteUsid:
    """Route ``block|uSID/48`` (a neighbour switch or a local host NIC port) to one next hop."""

    prefix: str
    usid: int
    next_hop: NextHop


@dataclass(frozen=True, slots=True)
class EcmpGroup:
    """A group of next hops hashed over (STEV mode) or selected by EV bits (EV-direct)."""

    group_id: int
    members: tuple[NextHop, ...]


@dataclass(frozen=True, slots=True)
class EvDirectMap:
    """EV-direct selection in ``group_id``: ``member = (flow_label & mask) % len(members)``."""

    group_id: int
    mask: int
    members: tuple[str, ...]  # neighbour node per member, in member order

    def member_for(self, flow_label: int) -> int:
        """Index of the member an EV's flow label selects."""
        return (flow_label & self.mask) % len(self.members)

    def ternary_entries(self) -> list[tuple[int, int, int]]:
        """(ev value, ev mask, member index) rows over the 32-bit EV ``udp_sport << 16 | flow_label``
        that implement ``member_for`` with a ternary match: one row per masked value, or, when the
        member count is a power of two and the mask is low bits (``fl & mask`` % n is then ``fl & (n-1)``),
        one row per member.  Two spines took 256 rows: 84% of what a leaf's counter poll read back (each
        row has a direct counter) and of the entries written at converge (docs/softswitch.md)."""
        n, m = len(self.members), self.mask
        if n and not n & (n - 1) and n <= m + 1 and not (m + 1) & m:
            return [(v, n - 1, v) for v in range(n)]
        return [(v, m, v % n) for v in range(m + 1)]


@dataclass(frozen=True, slots=True)
class HostRoute:
    """Route an inner address (GID /128, STEV mode) to one next hop."""

    prefix: str
    host: str
    next_hop: NextHop


@dataclass(frozen=True, slots=True)
class HostRouteGroup:
    """Route an inner address (GID /128, STEV mode) to an ECMP group."""

    prefix: str
    host: str
    group_id: int


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Per-hop telemetry: the id this switch writes into trace records."""

    switch_id: int
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class CounterWatch:
    """Counters the controller collects and exports for this switch."""

    kind: str  # "port_rx" | "port_tx" | "drop" | "ecn_mark" | "trim" | "route"
    ports: tuple[int, ...] = ()


Intent = (PortSetting | OwnUsid | DropUnknownUsid | RouteUsid | EcmpGroup | EvDirectMap | HostRoute | HostRouteGroup
          | Telemetry | CounterWatch)
T = TypeVar("T")
COUNTER_KINDS = ("port_rx", "port_tx", "drop", "ecn_mark", "trim", "route")


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """Everything one switch must hold, plus how to reach it."""

    name: str
    role: str
    plane: int
    device_id: int
    grpc_port: int
    switch_id: int
    usid: int
    cpu_port: int
    intents: tuple[Intent, ...]

    def of(self, cls: type[T]) -> list[T]:
        """The intents of one type, in plan order."""
        return [i for i in self.intents if isinstance(i, cls)]


@dataclass(frozen=True, slots=True)
class FabricPlan:
    """The static plan of a whole fabric."""

    topology: Topology
    sids: SidPlan
    switches: dict[str, SwitchPlan] = field(default_factory=dict)


def thresholds(props: LinkProps) -> tuple[int, int, int]:
    """(ECN, trim, drop) thresholds of a port: 1/4, 7/8 and all of its queue depth (default 64)."""
    depth = props.queue_depth or DEFAULT_QUEUE_DEPTH
    return max(1, depth // 4), max(1, depth * 7 // 8), depth


def _next_hop(topo: Topology, sids: SidPlan, switch: str, port: int) -> NextHop:
    peer = topo.peer(switch, port)
    assert peer is not None
    mac = (sids.switch_mac(peer.node, peer.port) if peer.node in topo.switches
           else sids.host_mac(peer.node, peer.port))
    return NextHop(port, str(peer), mac, sids.switch_mac(switch, port))


def _switch_plan(topo: Topology, sids: SidPlan, name: str,
                 gids: list[tuple[str, str]] | None = None) -> SwitchPlan:
    """``gids``: every host's name and GID /128 in host order (computed once by ``build_plan``: each
    switch holds a route per host, and sharing the strings keeps the plan of a large fabric small)."""
    sw = topo.switches[name]
    usid = sids.switch_usid[name]
    intents: list[Intent] = []
    ports = topo.ports_of(name)
    hops: dict[int, NextHop] = {}  # one (immutable) next hop per port, shared by the routes through it

    def next_hop(port: int) -> NextHop:
        nh = hops.get(port)
        if nh is None:
            nh = hops[port] = _next_hop(topo, sids, name, port)
        return nh

    for port in ports:
        link = topo.link_at(name, port)
        nh = next_hop(port)
        ecn, trim, drop = thresholds(link.props)
        kind = "fabric" if nh.neighbour.split(":")[0] in topo.switches else "host"
        intents.append(PortSetting(port, kind, nh.neighbour, nh.own_mac, nh.neighbour_mac,
                                   ecn_threshold=ecn, trim_threshold=trim, drop_threshold=drop,
                                   props=link.props))
    intents.append(OwnUsid(str(sids.usid_prefix(usid)), usid))
    intents.append(DropUnknownUsid(str(sids.block)))
    # uSID routes to every neighbour switch, then (leaves) to every local host NIC port
    nbr_ports = {topo.peer(name, p).node: p for p in ports}
    for other in (topo.leaves(sw.plane) if sw.role == "spine" else topo.spines(sw.plane)):
        if other.name in nbr_ports:
            u = sids.switch_usid[other.name]
            intents.append(RouteUsid(str(sids.usid_prefix(u)), u, next_hop(nbr_ports[other.name])))
    local_hosts = topo.hosts_of_leaf(name) if sw.role == "leaf" else []
    for host, hport, lport in sorted(local_hosts, key=lambda t: sids.host_index[t[0]]):
        u = sids.host_port_usid[(host, hport)]
        intents.append(RouteUsid(str(sids.usid_prefix(u)), u, next_hop(lport)))
    # STEV mode: GID host routes
    local = {h: lport for h, _, lport in local_hosts}
    if sw.role == "leaf":
        spines = [s.name for s in topo.spines(sw.plane)]
        members = tuple(next_hop(nbr_ports[s]) for s in spines)
        intents.append(EcmpGroup(LEAF_UPLINK_GROUP, members))
        intents.append(EvDirectMap(LEAF_UPLINK_GROUP, EV_DIRECT_MASK, tuple(spines)))
    if gids is None:
        gids = _host_gids(topo, sids)
    for h, gid in gids:
        if sw.role == "leaf":
            if h in local:
                intents.append(HostRoute(gid, h, next_hop(local[h])))
            else:
                intents.append(HostRouteGroup(gid, h, LEAF_UPLINK_GROUP))
        else:
            leaf, _ = topo.host_leaf(h, sw.plane)
            intents.append(HostRoute(gid, h, next_hop(nbr_ports[leaf.name])))
    intents.append(Telemetry(sids.switch_id(name)))
    for kind in COUNTER_KINDS:
        intents.append(CounterWatch(kind, tuple(ports) if kind.startswith("port") else ()))
    return SwitchPlan(name, sw.role, sw.plane, sw.device_id, sw.grpc_port, sids.switch_id(name), usid,
                      CPU_PORT, tuple(intents))


def _host_gids(topo: Topology, sids: SidPlan) -> list[tuple[str, str]]:
    return [(h.name, f"{sids.host_gid(h.name)}/128") for h in topo.host_list()]


def build_plan(topo: Topology, sids: SidPlan | None = None) -> FabricPlan:
    """The static plan of every switch (deterministic for a given topology and SID plan)."""
    sids = sids or build_sid_plan(topo)
    plans = {}
    gids = _host_gids(topo, sids)
    for p in range(1, topo.planes + 1):
        for sw in topo.spines(p) + topo.leaves(p):
            plans[sw.name] = _switch_plan(topo, sids, sw.name, gids)
    return FabricPlan(topo, sids, plans)


def plan_to_data(plan: FabricPlan) -> dict:
    """Plain-data form of a fabric plan (``mrc-controller plan`` output)."""
    from dataclasses import asdict

    out = {}
    for name, sp in plan.switches.items():
        out[name] = {
            "role": sp.role, "plane": sp.plane, "device_id": sp.device_id, "grpc_port": sp.grpc_port,
            "switch_id": sp.switch_id, "usid": f"{sp.usid:04x}", "cpu_port": sp.cpu_port,
            "intents": [{"type": type(i).__name__, **asdict(i)} for i in sp.intents],
        }
    return out
