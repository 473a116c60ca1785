"""The simulated fabric: switches with the P4 program's forwarding and queueing, built from the controller's plan.

Everything is derived from ``controller.build_plan(topology)``: the same uSIDs, routes, ECMP and
EV-direct groups and queue thresholds the controller writes into ``p4src/mrc_switch.p4``'s tables,
held here as per-switch dicts.  A packet's carrier (SRv6 outer destination, or the STEV/UDP flow
fields) is parsed once, at the first hop, and walked through those tables to the list of egress
ports it will cross (cached per carrier); queues, marks, trims and drops then happen per port and
per packet, in simulated time.
"""
from __future__ import annotations

import ipaddress
import zlib
from collections import Counter, deque
from dataclasses import dataclass

from controller import p4contract as P4
from controller import usid as U
from controller.plan import (
    DEFAULT_QUEUE_DEPTH,
    STEV_EV_DIRECT,
    EcmpGroup,
    EvDirectMap,
    FabricPlan,
    HostRoute,
    HostRouteGroup,
    OwnUsid,
    PortSetting,
    RouteUsid,
)
from mrc.wire import formats as F

# Drop reasons, as the controller labels reads of the program's drop_reasons counter (the names come
# from the contract, so a simulated run's switch_drops compare with an emulated one's) ...
DROP_NO_ROUTE = P4.DROP_REASONS[P4.DROP_REASON_NO_ROUTE]
DROP_USID_UNKNOWN = P4.DROP_REASONS[P4.DROP_REASON_USID_UNKNOWN]
DROP_LOCAL_NOT_PROBE = P4.DROP_REASONS[P4.DROP_REASON_LOCAL_NOT_PROBE]
DROP_PORT_ADMIN_DOWN = P4.DROP_REASONS[P4.DROP_REASON_PORT_ADMIN_DOWN]
DROP_QUEUE_FULL = P4.DROP_REASONS[P4.DROP_REASON_QUEUE_FULL]
# ... and the simulator's own, for losses no switch counts: a dark link, a stopped switch, a grey link
DROP_LINK_DOWN, DROP_SWITCH_DOWN, DROP_GREY_LOSS = "link_down", "switch_down", "grey_loss"
_BIG = 1 << 30
PRIO_UNBOUNDED = _BIG  # Port.pcap of a strict-priority queue without a bound


class Port:
    """One egress port (one direction of a link): a FIFO data queue and, ahead of it, ``mrc_switch.p4``'s
    two strict-priority queues sharing its line rate -- the top one (priority 0: trimmed headers, control
    packets) and the resend queue below it (1: data resent after a loss verdict) --, the program's
    thresholds (packets), line rate and propagation delay."""

    __slots__ = ("_pdeps", "_rdeps", "admin_up", "base_ns_per_byte", "dark_from", "dark_until", "dark_why", "delay_ns",
                 "deps", "drop_thr", "ecn_thr", "far_admin_up", "free", "loss", "name", "ns_per_byte", "owner", "pcap",
                 "peer", "peer_port", "pfree", "ptail", "rcap", "rfree", "rtail", "sw", "trim_thr", "tx", "up")

    def __init__(self, owner: str, port: int, peer: str, peer_port: int, gbps: float, delay_ns: int,
                 thresholds: tuple[int, int, int] | None, sw: SwitchState | None) -> None:
        self.owner, self.name, self.peer, self.peer_port = owner, f"{owner}:{port}", peer, peer_port
        self.base_ns_per_byte = self.ns_per_byte = 8.0 / gbps
        self.delay_ns = delay_ns
        ecn, trim, drop = thresholds if thresholds else (_BIG, _BIG, _BIG)
        self.ecn_thr, self.trim_thr, self.drop_thr = ecn, trim, drop
        self.deps: deque[float] = deque()  # departure times of the packets in the data queue
        self.free = 0.0  # when the data queue's last packet has left
        self.pfree = 0.0  # when the top priority queue's last packet has left
        self.rfree = 0.0  # when the resend queue's last packet has left
        # frames each priority queue holds (_BIG: no bound; with sim.priority_queue_factor the top one
        # that many times the data depth and the resend queue the data depth, as on the fabric), the
        # departure times of those in it (kept only when bounded: made at first use, an empty deque is
        # ~600 bytes and there are 32 ports per host) and its tail drops: p* the top queue's, r* the
        # resend queue's
        self.pcap = self.rcap = PRIO_UNBOUNDED
        self._pdeps: deque[float] | None = None
        self.ptail = 0
        self._rdeps: deque[float] | None = None
        self.rtail = 0
        self.up = True  # carrier (both ends of the link)
        self.admin_up = True
        # the far end's port admin state: frames this port sends there are dropped at that switch's
        # ingress (the program's port_admin), so they are lost as on a dark port and counted there
        self.far_admin_up = True
        # the latest time the port could not send, [dark_from, dark_until) in ns (empty, -1: never): a frame
        # still queued here when it went dark is lost, as on a real port, not only those offered after
        self.dark_from = self.dark_until = -1.0
        # why that interval began (``why_dark``): "admin", "far_admin", "switch" (its own switch stopped)
        # or "link"
        self.dark_why = ""
        self.loss = 0.0  # grey failure: silent drop probability
        self.tx = 0
        self.sw = sw

    def set_state(self, now: float, up: bool | None = None, admin_up: bool | None = None,
                  far_admin_up: bool | None = None) -> None:
        """Carrier (``up``), this port's and/or the far end's administrative state changed at ``now``;
        keeps the dark interval."""
        was = self.lit
        if up is not None:
            self.up = up
        if admin_up is not None:
            self.admin_up = admin_up
        if far_admin_up is not None:
            self.far_admin_up = far_admin_up
        lit = self.lit
        if was and not lit:
            self.dark_from, self.dark_until = now, float("inf")
            self.dark_why = self.why_dark()
        elif lit and not was:
            self.dark_until = now

    @property
    def pdeps(self) -> deque[float]:
        """Departure times of the frames in the top priority queue (kept when it is bounded)."""
        if self._pdeps is None:
            self._pdeps = deque()
        return self._pdeps

    @property
    def rdeps(self) -> deque[float]:
        """Departure times of the frames in the resend queue (kept when it is bounded)."""
        if self._rdeps is None:
            self._rdeps = deque()
        return self._rdeps

    @property
    def lit(self) -> bool:
        """The port can send (carrier, and both ends administratively up)."""
        return self.up and self.admin_up and self.far_admin_up

    def why_dark(self) -> str:
        """Why a dark port cannot send now: "admin" (this port is administratively down: its switch
        drops what it would send), "far_admin" (the far end's port is: that switch drops it on
        ingress), "switch" (its own switch stopped) or "link" (the carrier is down)."""
        if self.up and not self.admin_up:
            return "admin"
        if self.up and not self.far_admin_up:
            return "far_admin"
        sw = self.sw
        return "switch" if sw is not None and not sw.running else "link"

    def lost_in_queue(self, arrive_ns: float, nbytes: int) -> bool:
        """A frame of ``nbytes`` that this port scheduled to arrive at the far end at ``arrive_ns`` had
        not begun to leave when the port went dark (it left the queue before: it is on the wire)."""
        start = arrive_ns - 1 - self.delay_ns - nbytes * self.ns_per_byte
        return self.dark_from <= start < self.dark_until

    def depth(self, now: float) -> int:
        """Packets in the data queue at ``now``."""
        deps = self.deps
        while deps and deps[0] <= now:
            deps.popleft()
        return len(deps)


@dataclass
class SwitchState:
    """Counters of one switch (as the controller reads them from the program)."""

    name: str
    drops: Counter
    congestion: Counter
    rx: int = 0
    tx: int = 0
    running: bool = True


class Route:
    """Where a packet goes: the egress ports it crosses and the host NIC port it arrives on (or the
    drop reason and switch when the tables drop it)."""

    __slots__ = ("data", "drop", "drop_at", "dst_host", "dst_port", "ports", "src_host")

    def __init__(self, ports: tuple[Port, ...], dst_host: int = -1, dst_port: int = 0, drop: str = "",
                 drop_at: str = "") -> None:
        self.ports, self.dst_host, self.dst_port, self.drop, self.drop_at = ports, dst_host, dst_port, drop, drop_at
        self.src_host = -1  # the sending host's index (set by SimFabric.route)
        self.data = 0  # data-queue frames (first sends, resends as data) sent on this carrier (SimRun.ev_use)


class SimFabric:
    """Ports, per-switch tables and counters of a fabric plan; ``route`` resolves a frame's path."""

    def __init__(self, plan: FabricPlan, *, link_gbps: float, nic_gbps: float, delay_ns: int | None,
                 queue_packets: int | None, stev_mode: str = STEV_EV_DIRECT) -> None:
        topo = plan.topology
        self.plan, self.topo, self.stev_mode = plan, topo, stev_mode
        self.hosts = [h.name for h in topo.host_list()]
        self.host_index = {h: i for i, h in enumerate(self.hosts)}
        self.switches = {n: SwitchState(n, Counter(), Counter()) for n in plan.switches}
        self.ports: dict[tuple[str, int], Port] = {}
        settings = {(n, ps.port): ps for n, sp in plan.switches.items() for ps in sp.of(PortSetting)}
        for lk in topo.links:
            for end, other in ((lk.a, lk.b), (lk.b, lk.a)):
                ps = settings.get((end.node, end.port))
                # the topology's delay_us is a switch port's egress delay (softswitch --link-delay), as
                # in the emulation; sim.delay_ns delays every link in both directions
                d = delay_ns if delay_ns is not None else (lk.props.delay_us * 1000 if ps is not None else 0)
                thr = None
                if ps is not None:
                    depth = queue_packets or lk.props.queue_depth or DEFAULT_QUEUE_DEPTH
                    thr = (max(1, depth // 4), max(1, depth * 7 // 8), depth) if queue_packets else \
                        (ps.ecn_threshold, ps.trim_threshold, ps.drop_threshold)
                sw = self.switches.get(end.node)
                gbps = link_gbps if sw is not None else nic_gbps
                self.ports[(end.node, end.port)] = Port(end.node, end.port, other.node, other.port, gbps, d, thr, sw)
        self.block = plan.sids.block_value
        self.own: dict[str, int] = {}
        self.usid_routes: dict[str, dict[int, Port]] = {}
        # a switch's GID host routes (STEV/UDP) are read from its plan at its first STEV/UDP frame: they are
        # one per host on every switch (half a million at 1,024 hosts), which SRv6 runs never read
        self.gid_routes: dict[str, dict[bytes, Port | tuple[Port, ...]]] = {}
        self._gid_packed: dict[str, bytes] = {}  # GID prefix -> its address, packed (shared by every switch)
        self.ev_direct: dict[str, int] = {}
        for n, sp in plan.switches.items():
            self.own[n] = sp.of(OwnUsid)[0].block_usid
            self.usid_routes[n] = {U.top(int(ipaddress.IPv6Network(r.prefix).network_address)):
                                   self.ports[(n, r.next_hop.port)] for r in sp.of(RouteUsid)}
            for ev in sp.of(EvDirectMap):
                self.ev_direct[n] = ev.mask
        self._cache: dict[tuple, Route] = {}

    def gid_table(self, n: str) -> dict[bytes, Port | tuple[Port, ...]]:
        """Switch ``n``'s GID host routes: packed GID -> egress port, or the ECMP group's ports."""
        gr = self.gid_routes.get(n)
        if gr is None:
            sp = self.plan.switches[n]
            packed = self._gid_packed

            def key(prefix: str) -> bytes:
                k = packed.get(prefix)
                if k is None:
                    k = packed[prefix] = ipaddress.IPv6Network(prefix).network_address.packed
                return k
            groups = {g.group_id: tuple(self.ports[(n, m.port)] for m in g.members) for g in sp.of(EcmpGroup)}
            gr = {}
            for hr in sp.of(HostRoute):
                gr[key(hr.prefix)] = self.ports[(n, hr.next_hop.port)]
            for hg in sp.of(HostRouteGroup):
                gr[key(hg.prefix)] = groups[hg.group_id]
            self.gid_routes[n] = gr
        return gr

    # ---- forwarding ---------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget cached routes (tables changed: an ECMP group lost or regained a member)."""
        self._cache.clear()

    def route(self, host: str, nic_port: int, data: bytes, encap: str) -> Route:
        """The egress ports a frame sent by ``host`` on ``nic_port`` crosses (cached per carrier)."""
        if encap == "srv6":
            key = (host, nic_port, data[38:54])
        else:
            udp = F.ETH_LEN + F.IPV6_LEN + (F.HBH_TELEMETRY_LEN if data[20] == F.NH_HOP_BY_HOP else 0)
            key = (host, nic_port, data[15:18], data[22:54], data[udp:udp + 4])
        r = self._cache.get(key)
        if r is None:
            r = self._cache[key] = (self._walk_srv6(host, nic_port, key[2]) if encap == "srv6"
                                    else self._walk_ip(host, nic_port, key))
            r.src_host = self.host_index[host]
        return r

    def _walk_srv6(self, host: str, nic_port: int, dst_b: bytes) -> Route:
        """uN: a switch whose ``block|uSID`` tops the carrier shifts it; then route on the top /48."""
        first = self.ports[(host, nic_port)]
        ports = [first]
        node = first.peer
        dst = int.from_bytes(dst_b, "big")
        block = U.block_of(dst)
        for _ in range(8):
            if node in self.host_index:
                return Route(tuple(ports), self.host_index[node], ports[-1].peer_port)
            top = U.top(dst)
            if top == self.own[node]:
                if U.argument(dst) == 0:  # RFC 9800 4.1.1: the whole Argument, as mrc_switch.p4
                    return Route(tuple(ports), drop=DROP_LOCAL_NOT_PROBE, drop_at=node)
                dst = U.shift(dst)
                top = U.top(dst)
            p = self.usid_routes[node].get(top)
            if p is None:
                why = DROP_USID_UNKNOWN if block == self.block else DROP_NO_ROUTE
                return Route(tuple(ports), drop=why, drop_at=node)
            ports.append(p)
            node = p.peer
        return Route(tuple(ports), drop=DROP_NO_ROUTE, drop_at=node)

    def _walk_ip(self, host: str, nic_port: int, key: tuple) -> Route:
        """STEV/UDP: GID host routes; a group picks its member by EV (ev_direct) or a flow hash (ecmp),
        as mrc_switch.p4 does (an EV-direct leaf reads ``flow_label[7:0] % n`` whatever the packet)."""
        flow = key[2]
        label = ((flow[0] & 0x0F) << 16) | (flow[1] << 8) | flow[2]
        dst_gid = key[3][16:32]
        first = self.ports[(host, nic_port)]
        ports = [first]
        node = first.peer
        for _ in range(8):
            if node in self.host_index:
                return Route(tuple(ports), self.host_index[node], ports[-1].peer_port)
            nh = self.gid_table(node).get(dst_gid)
            if nh is None:
                return Route(tuple(ports), drop=DROP_NO_ROUTE, drop_at=node)
            if isinstance(nh, tuple):
                live = nh
                if self.stev_mode == STEV_EV_DIRECT:
                    nh = live[(label & self.ev_direct.get(node, 0xFF)) % len(live)]
                else:  # the action selector hashes the flow fields (crc32 here; bmv2 uses crc16): the
                    # addresses, UDP ports and the 20-bit flow label -- not the traffic class, whose low
                    # bits share the label's first byte (a Not-ECT probe is its EV's data's flow)
                    nh = live[zlib.crc32(key[3] + key[4] + label.to_bytes(3, "big")) % len(live)]
            ports.append(nh)
            node = nh.peer
        return Route(tuple(ports), drop=DROP_NO_ROUTE, drop_at=node)

    # ---- faults -------------------------------------------------------------------------------
    def link_ports(self, a: str, b: str) -> list[Port]:
        """Both directions of the link between ``a`` and ``b`` (node or node:port)."""
        def parse(x: str) -> tuple[str, int | None]:
            n, _, p = x.partition(":")
            return n, int(p) if p else None
        (na, pa), (nb, pb) = parse(a), parse(b)
        for (node, port), p in self.ports.items():
            if node == na and (pa is None or port == pa) and p.peer == nb and (pb is None or p.peer_port == pb):
                return [p, self.ports[(p.peer, p.peer_port)]]
        raise ValueError(f"fault: no link between {a} and {b}")

    def congestion_counts(self) -> dict[str, dict[str, int]]:
        return {n: dict(s.congestion) for n, s in self.switches.items() if s.congestion}

    def counters(self) -> dict[str, dict]:
        """Per switch: drops by reason, tx/rx packets, congestion events (the netns runner's shape)."""
        return {n: {"drops": {r: v for r, v in s.drops.items() if v}, "tx": s.tx, "rx": s.rx,
                    "congestion": {k: v for k, v in s.congestion.items() if v}} for n, s in self.switches.items()}
