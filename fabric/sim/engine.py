"""Run one traffic mode of a scenario on the simulated fabric: real ``mrc.core`` endpoints, simulated time.

One ``mrc.core.Endpoint`` per host (NIC port p = plane p), one QP per flow and direction, EVs from the
controller's own EV plans (``controller.evplan``); endpoints are driven exactly as ``mrc.sim.network``
drives them (``receive`` / ``datagrams_to_send`` / ``get_timer`` / ``handle_timer`` with ``now_ns``).
The result has the shape of the emulated runner's (``mrc_fabric.scenarios.runner.run_traffic``), so the
report and plot code is shared.  Time is integer nanoseconds in a binary heap; same inputs, same run.
"""
from __future__ import annotations

import gc
import heapq
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from controller import build_plan, parse_topology
from controller.evplan import ev_nodes, srv6_profile, stev_profile
from controller.plan import STEV_ECMP, STEV_EV_DIRECT
from controller.telemetry import EVENT_EARLY_DROP, EVENT_ECN_MARKED, EVENT_TRIMMED
from mrc.core import Endpoint, QpAttr, WcOpcode, WcStatus
from mrc.core import types as core_types
from mrc.ctl import AttrOpt, DeviceAttr, EvDeviceAttr, MrcCtlContext
from mrc.wire.codec import mark_ce, priority_queue, trim_packet
from mrc.wire.formats import DATA_PRIORITY, RESEND_PRIORITY, TRIM_PRIORITY

from ..faults import check_engine
from ..scenarios.runner import flows_for, rc_pins, topology_data
from ..scenarios.spec import FaultSpec, Scenario, ScenarioError, cc_for
from .model import (
    DROP_GREY_LOSS,
    DROP_LINK_DOWN,
    DROP_PORT_ADMIN_DOWN,
    DROP_QUEUE_FULL,
    DROP_SWITCH_DOWN,
    PRIO_UNBOUNDED,
    Port,
    Route,
    SimFabric,
)
from .payload import LazyPayload, payload
from .region import CheckedRegion

BASE_VA = 0x2_0000_0000
SIM_DEFAULT_GBPS = 100.0  # NIC and link rate when the scenario gives none (traffic.rate_gbps 0)
_EV_DATA, _EV_TIMER, _EV_CALL = 0, 1, 2
_NEVER = 1 << 62  # a QP without a deadline, in SimRun's timer cache


LOOP_GC_GEN0 = 20_000  # the cyclic collector's youngest-generation threshold during the event loop (loop_gc)


@contextmanager
def loop_gc() -> Iterator[None]:
    """The cyclic garbage collector's settings for an event loop: what the process holds when the loop
    starts is frozen (``gc.freeze``), and the youngest generation is collected every ``LOOP_GC_GEN0``
    allocations instead of 700; both as before once the loop is over.

    The simulator makes no garbage cycles to speak of, but the collector still ran: a full collection
    walks every tracked object, and a run holds millions from its set-up (the fabric plan, the routes,
    the endpoints' QPs and EV profiles: 0.6 M at 128 hosts, 4.6 M at 1,024) plus whatever the caller
    keeps (the bench's scale-failure keeps the clean run's result, 12.6 M sample rows at 1,024 hosts,
    while the failed run runs).  The frames, events and per-packet records in flight live for
    hundreds of thousands of allocations at that size, so at 700 many of them outlived the young
    generations and their count set off a full collection every few hundred thousand events: 3.8 of
    the 39.9 s of CPU of the first 10 us of the 1,024-host scale case, 15% with the young collections
    (bench/README.md "Stop 60").  Frozen, the set-up is never walked again; at 20,000 the objects in
    flight mostly die young.  Collection never changes what a run computes: the same events and
    results either way (tests/fabric/sim/test_sim_loop_gc.py).  A caller that froze objects itself
    keeps them frozen and the loop freezes nothing more (``gc.unfreeze`` would thaw the caller's too)."""
    thr = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(max(thr[0], LOOP_GC_GEN0), *thr[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thr)
        if freeze:
            gc.unfreeze()


class SimFaults:
    """The simulator's fault primitives (``mrc_fabric.faults.FaultTarget``)."""

    fault_primitives = frozenset({"set_link", "host_link", "spine_links", "switch_stop", "switch_start",
                                  "port_admin", "link_loss", "link_rate"})

    def __init__(self, sim: SimRun) -> None:
        self.sim, self.fab = sim, sim.fab

    def set_link(self, a: str, b: str, up: bool) -> None:
        now = self.sim.now
        for p in self.fab.link_ports(a, b):
            p.set_state(now, up=up)
        self.sim.link_changed(a, b, up)

    def host_link(self, host: str, plane: int) -> tuple[str, str]:
        p = self.fab.ports.get((host, plane))
        if p is None:
            raise ScenarioError(f"fault: host {host} has no NIC port {plane}")
        return f"{host}:{plane}", f"{p.peer}:{p.peer_port}"

    def spine_links(self, spine: str) -> list[tuple[str, str]]:
        sw = self.fab.topo.switches.get(spine)
        if sw is None or sw.role != "spine":
            raise ScenarioError(f"fault: {spine!r} is not a spine of this fabric")
        return [(f"{n}:{p}", f"{q.peer}:{q.peer_port}") for (n, p), q in self.fab.ports.items() if n == spine]

    def _switch(self, switch: str, running: bool) -> None:
        st = self.fab.switches.get(switch)
        if st is None:
            raise ScenarioError(f"fault: no switch {switch!r}")
        st.running = running
        for (n, p), q in self.fab.ports.items():
            if n == switch:  # a stopped switch neither sends nor receives: every link goes dark
                q.set_state(self.sim.now, up=running)
                self.fab.ports[(q.peer, q.peer_port)].set_state(self.sim.now, up=running)
                self.sim.link_changed(f"{n}:{p}", f"{q.peer}:{q.peer_port}", running)

    def switch_stop(self, switch: str) -> None:
        self._switch(switch, False)

    def switch_start(self, switch: str) -> None:
        self._switch(switch, True)

    def port_admin(self, switch: str, port: int, up: bool) -> None:
        p = self.fab.ports.get((switch, port))
        if p is None or p.sw is None:
            raise ScenarioError(f"fault: switch {switch} has no connected port {port}")
        p.set_state(self.sim.now, admin_up=up)
        self.fab.ports[(p.peer, p.peer_port)].set_state(self.sim.now, far_admin_up=up)
        self.sim.note_link(p.owner, p.peer, up)

    def link_loss(self, a: str, b: str, loss: float) -> None:
        for p in self.fab.link_ports(a, b):
            p.loss = loss
        self.sim._fault_grey.append([a, b, loss])

    def link_rate(self, a: str, b: str, fraction: float) -> None:
        for p in self.fab.link_ports(a, b):
            p.ns_per_byte = p.base_ns_per_byte / fraction


class _Frame:
    """A data frame in flight whose payload is a slice of a :class:`LazyPayload`: the bytes before it
    (headers), the slice [a, b) of ``src`` and the bytes after it (ICRC).  ``bytes()`` makes the frame
    again, equal to the one the requester sent; a frame in flight is ~200 bytes instead of ~4.2 KB."""

    __slots__ = ("a", "b", "head", "src", "tail")

    def __init__(self, head: bytes, src: LazyPayload, a: int, b: int, tail: bytes) -> None:
        self.head, self.src, self.a, self.b, self.tail = head, src, a, b, tail

    def __len__(self) -> int:
        return len(self.head) + self.b - self.a + len(self.tail)

    def __bytes__(self) -> bytes:
        return b"".join((self.head, self.src.peek(self.a, self.b), self.tail))


class _Out:
    __slots__ = ("count", "done", "dst", "failed", "fct_ns", "fid", "last_done_ns", "lat_us", "outstanding",
                 "post_ns", "posted", "qp", "rkey", "size", "start_ns", "start_seq", "step_done_ns", "tx_depth", "va")

    def __init__(self, fid: int, dst: int, size: int, count: int, tx_depth: int) -> None:
        self.fid, self.dst, self.size, self.count, self.tx_depth = fid, dst, size, count, tx_depth
        self.posted = self.done = self.failed = self.outstanding = 0
        self.post_ns: dict[int, int] = {}
        self.lat_us: list[float] = []
        self.last_done_ns = 0
        self.start_ns = 0
        self.fct_ns: list[int] = []
        self.step_done_ns = 0


class SimRun:
    """One mode of one scenario on a fresh simulated fabric (``run()`` returns the runner-shaped result)."""

    SCAN_ALL = False  # True: ask every QP's deadline after every event, as the endpoint does (_init_timers)
    # a host with fewer QPs asks them all, as the endpoint does: the kept deadlines' bookkeeping cost more
    # than the scan it spares there (link-failure, 1-2 QPs a host: 41.7-46.9 s CPU with the scans against
    # 53.8-58.0 s with the kept deadlines, alternating runs 2026-12-07); the incast receiver's 31-1,023 keep them
    CACHE_MIN_QPS = 8

    def __init__(self, sc: Scenario, mode: str, progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        # the set-up makes millions of live objects (plan, routes, EV profiles, QPs: 3.6 M at 1,024 hosts)
        # and no garbage cycle to speak of, so the cyclic collector found nothing while its full
        # collections walked the growing heap: 14 of them, 3.0 s of the set-up's 25.5 s of CPU at
        # 1,024 hosts (bench/README.md "Stop 61").  Paused for the set-up, as before after it.
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            self._setup(sc, mode, progress)
        finally:
            if paused:
                gc.enable()

    def _setup(self, sc: Scenario, mode: str, progress: Callable[[dict[str, Any]], None] | None) -> None:
        self.sc, self.mode, self.progress = sc, mode, progress
        s = sc.sim
        data = topology_data(sc.fabric)
        self.topo = parse_topology(data)
        self.plan = build_plan(self.topo)
        t = sc.traffic
        # NIC line rate: traffic.rate_gbps, else the switch links' rate, else a datacenter NIC's 100 Gb/s
        nic = t.rate_gbps or s.link_gbps or SIM_DEFAULT_GBPS
        self.nic_gbps = nic
        # UDP-encap hosts carry their EV only in the UDP source port (flow label 0): their leaves are
        # configured to hash (ECMP), as the emulated fabric's controller does by default; EV-direct
        # leaves would send every EV of a host pair to one spine (until 2026-12-06 the simulator did)
        stev_mode = STEV_ECMP if t.encap == "udp" else s.stev_mode
        self.fab = SimFabric(self.plan, link_gbps=s.link_gbps or nic, nic_gbps=nic,
                             delay_ns=s.delay_ns, queue_packets=s.queue_packets or None, stev_mode=stev_mode)
        if s.priority_queue_factor:  # switch ports' strict-priority queues (top, resend) bounded as the program's
            for port in self.fab.ports.values():
                if port.sw is not None and port.drop_thr < PRIO_UNBOUNDED:
                    port.pcap = s.priority_queue_factor * port.drop_thr
                    port.rcap = port.drop_thr
        self.encap = t.encap
        self.hosts = self.fab.hosts
        self.flows = flows_for(t, self.hosts)
        self.rng = random.Random(sc.seed)
        self.heap: list = []
        self.seq = 0
        self.now = 0
        self.events = 0
        self.timer_at: list[int | None] = [None] * len(self.hosts)
        self.fault_log: list[dict[str, Any]] = []
        self.cong_samples: list[list] = []
        self.step_ns: list[int] = []
        self.link_events: list[list] = [[] for _ in self.hosts]
        self._fault_links: list[list] = []  # links (node names) the fault being applied took down or up
        self._fault_grey: list[list] = []  # links (node names) it made lossy ([a, b, loss]; loss 0: whole again)
        # packets offered to a link that was down (carrier or admin): (from node, to node, src host, dst host)
        self.dead_drops: dict[tuple[str, str, int, int], list[int]] = {}  # -> [packets, first, last at ns]
        # slices of the posted payloads the requesters read since the last frames were sent: (payload,
        # a, b, bytes), matched with the data frames that carry them (_compact)
        self._served: list[tuple[LazyPayload, int, int, bytes]] = []
        # (host, EV profile id) -> peer, each EV's (NIC port, spine) in profile order (the EV values are the
        # profile's; the pairs, 8 ports x 32 spines at most, are shared: _hop_of)
        self._prof_evs: dict[tuple[int, int], tuple[int, list[tuple[int, str]]]] = {}
        self._hops: dict[tuple[int, str], tuple[int, str]] = {}
        for i, f in enumerate(sc.faults):
            check_engine(f.spec, SimFaults.fault_primitives, "sim", f"scenario.faults[{i}]")
        self._build_endpoints()

    # ---- set-up -------------------------------------------------------------------------------
    def _clock(self) -> int:
        """The simulated time (ns): the hosts' control API stamps its own EV changes with it."""
        return self.now

    def _evs(self, src: str, dst: str) -> list[tuple[bytes | int, int, str]]:
        """The controller's EV plan from ``src`` to ``dst``: (EV, NIC port, spine) in plan order."""
        e = self.sc.sim.evs_per_path
        if self.encap == "srv6":
            prof = srv6_profile(self.plan, src, dst, e)
            return [(ev.value, ev.port, ev.spine) for ev in prof.evs]
        prof = stev_profile(self.plan, src, dst, e)
        if self.encap == "stev":
            return [(int.from_bytes(ev.value, "big"), ev.port, ev.spine) for ev in prof.evs]
        return [(ev.udp_sport, ev.port, ev.spine) for ev in prof.evs]

    def _attr(self, ep: Endpoint, ev_profile_id: int) -> QpAttr:
        """A QP's attributes: bound to EV profile ``ev_profile_id`` of ``ep`` and, for NSCC or no CC, to
        the endpoint's CC profile (``make_cc_profile``; DCQCN is not an mrc_ctl algorithm: ``QpAttr.cc``)."""
        t = self.sc.traffic
        # as the file says; auto: NSCC for MRC, DCQCN for RC; empty: no congestion control (docs/simulation.md)
        cc = cc_for(t.cc, self.mode, "none")
        mtu = t.mtu or 4096
        cc_pid = ep.make_cc_profile(cc, mode=self.mode, mtu=mtu, nscc=t.nscc or None)
        return QpAttr(mode=self.mode, mtu=mtu, ack_timeout=t.ack_timeout,
                      reorder_min_ns=int(t.reorder_ms * 1e6), probe_interval_ns=int(t.probe_interval_ms * 1e6),
                      probe_min_ns=min(1_000_000, int(t.probe_interval_ms * 1e6) or 1_000_000),
                      resend_dscp=t.resend_dscp, trim_ahead_after=t.trim_ahead,
                      cc=cc if cc_pid is None else None, ev_profile_id=ev_profile_id, cc_profile_id=cc_pid)

    def _device(self, planes: list[int]) -> DeviceAttr:
        """The simulated NIC's mrc_ctl device: its planes as ports, room for one EV profile per peer
        (and their EVs), and what the transport implements (profiles modifiable while ONLINE)."""
        n = len(self.hosts)
        paths = len(self._evs(self.hosts[0], self.hosts[1])) if n > 1 else 1
        profiles = max(256, n)
        ev = EvDeviceAttr(ev_max_profiles=profiles, ev_max_count=max(1 << 20, profiles * paths),
                          ev_free_count=max(1 << 20, profiles * paths))
        dev = DeviceAttr(ev=ev, phy_port_mask=sum(1 << p for p in planes))
        dev.opt_attr |= AttrOpt.EV_PROFILE_MODIFY_ONLINE | AttrOpt.CC_PROFILE_MODIFY_ONLINE
        return dev

    def _hop_of(self, evs: list[tuple[bytes | int, int, str]]) -> list[tuple[int, str]]:
        """Each EV's (NIC port, spine), one shared tuple per pair."""
        hops = self._hops
        return [hops.setdefault((p, sp), (p, sp)) for _, p, sp in evs]

    def _rc_pin(self, a: str, b: str) -> int:
        if self.sc.sim.rc_path == "even":
            return self._pins[tuple(sorted((a, b)))]
        # "hash": a static per-pair choice as a switch's ECMP hash makes it (collisions included)
        return random.Random(f"{self.sc.seed}:{min(a, b)}:{max(a, b)}").getrandbits(32)

    def _build_endpoints(self) -> None:
        t, sids = self.sc.traffic, self.plan.sids
        planes = list(range(1, self.topo.planes + 1))
        self.gids = [sids.host_gid(h).packed for h in self.hosts]
        dev = self._device(planes)
        self.eps = [Endpoint(g, planes, encap=self.encap, port_rate_bps=self.nic_gbps * 1e9, first_qpn=0x100,
                             ctl=MrcCtlContext(dev, clock=self._clock)) for g in self.gids]
        self._pins = rc_pins(self.hosts) if self.mode == "rc" and self.sc.sim.rc_path == "even" else {}
        hi = self.fab.host_index
        self.out: list[list[_Out]] = [[] for _ in self.hosts]
        # per flow: receiving host, its checked region (region.CheckedRegion: no buffer of the bytes), size
        self.in_bufs: dict[int, tuple[int, CheckedRegion, int]] = {}
        self.in_by_host: list[list[int]] = [[] for _ in self.hosts]
        self.by_qpn: list[dict[int, _Out]] = [{} for _ in self.hosts]
        rng = random.Random(self.sc.seed ^ 0x5EED)
        self.msgs = t.count * t.size
        self.base_count = t.count
        self.rc_spines: dict[int, tuple[str, str]] = {}
        self._pair_spines: dict[tuple[int, int], tuple[str, str]] = {}
        # one EV profile per host and peer (ctl, as mrc_ctl.h binds QPs by profile id), shared by every QP
        # of that host to that peer, sending or receiving: EV states, ev_min_active and events are the
        # profile's.  Made when the pair's first flow is set up, in the same order at both ends.
        prof: dict[tuple[int, int], int] = {}
        for f in self.flows:
            s, d = hi[f.src], hi[f.dst]
            if (s, d) not in prof:
                evs_sd, evs_ds = self._evs(f.src, f.dst), self._evs(f.dst, f.src)
                if self.mode == "rc":  # slot 0, the one path an RC QP takes, is the pair's pinned EV
                    pin = self._rc_pin(f.src, f.dst)
                    k = pin % len(evs_sd)
                    evs_sd, evs_ds = evs_sd[k:] + evs_sd[:k], evs_ds[k:] + evs_ds[:k]
                elif self.sc.sim.shuffle_evs:  # the same EVs, each pair's round robin in its own order; one
                    # permutation for both ends, so EV i of one end still names the path of EV i of the other
                    # (the core answers probes and acknowledges on the EV of the same index)
                    perm = list(range(len(evs_sd)))
                    rng.shuffle(perm)
                    evs_sd = [evs_sd[i] for i in perm]
                    evs_ds = [evs_ds[i] for i in perm]
                prof[(s, d)] = self.eps[s].make_ev_profile([(v, p) for v, p, _ in evs_sd])
                prof[(d, s)] = self.eps[d].make_ev_profile([(v, p) for v, p, _ in evs_ds])
                self._prof_evs[(s, prof[(s, d)])] = (d, self._hop_of(evs_sd))
                self._prof_evs[(d, prof[(d, s)])] = (s, self._hop_of(evs_ds))
                self._pair_spines[(s, d)] = (evs_sd[0][2], evs_ds[0][2])
                self._pair_spines[(d, s)] = (evs_ds[0][2], evs_sd[0][2])
            if self.mode == "rc":
                self.rc_spines[f.fid] = self._pair_spines[(s, d)]
            qs = self.eps[s].create_qp(attr=self._attr(self.eps[s], prof[(s, d)]))
            qd = self.eps[d].create_qp(attr=self._attr(self.eps[d], prof[(d, s)]))
            ps, pd = rng.getrandbits(24), rng.getrandbits(24)
            self.eps[s].connect(qs, qd.qpn, self.gids[d], rq_psn=pd, sq_psn=ps)
            self.eps[d].connect(qd, qs.qpn, self.gids[s], rq_psn=ps, sq_psn=pd)
            va = BASE_VA + (f.fid << 32)
            # an rkey from the endpoint's own sequence, then the checked region in that registration's place
            mr = self.eps[d].reg_mr(bytearray(), va)
            buf = self.eps[d].mrs[mr.rkey] = CheckedRegion(
                mr.rkey, va, t.size, t.count, lambda m, fid=f.fid, size=t.size: LazyPayload(self.sc.seed, fid, m, size))
            o = _Out(f.fid, d, t.size, t.count, t.tx_depth)
            o.qp, o.va, o.rkey, o.start_seq = qs, va, mr.rkey, qs.snd_una
            self.out[s].append(o)
            self.by_qpn[s][qs.qpn] = o
            self.in_bufs[f.fid] = (d, buf, t.size)
            self.in_by_host[d].append(f.fid)
        self.fab.invalidate()
        self._init_timers()

    def _init_timers(self) -> None:
        """Each host's QPs' deadlines, kept instead of asked of every QP after every event.

        ``Endpoint.get_timer`` and ``handle_timer`` ask every QP of the endpoint for its deadline, and a
        QP's answer (``MrcRequester.timer``: its EVs' probe and suspicion deadlines, the tail-loss scan)
        is the costliest thing it does: the receiver of a 1,023 -> 1 incast holds 1,023 QPs and asked
        each of them on every frame it got, so the cost of an event grew with the fabric.  A QP's
        deadline is a function of its own state and of its EV profile's, which change only when the
        endpoint hands it a frame from its peer, runs its timer, lets it send, is given a message, or a
        NIC port changes; so the simulator asks again only the QPs those calls can have changed: a
        frame from host ``s`` dirties every QP of the host to ``s`` (they share the pair's EV profile),
        a timer or a send the QP and its peer group, a port change all.  ``_next_timer`` and
        ``_handle_timer`` then give what the endpoint's full scans give (tests/fabric/sim/
        test_sim_timer_cache.py runs cases both ways and compares the whole results); ``SCAN_ALL``
        makes the run use the endpoint's scans."""
        gid_host = {g: i for i, g in enumerate(self.gids)}
        self._tqps: list[list] = []
        self._tval: list[list[int]] = []
        self._tdirty: list[set[int]] = []
        self._tbusy: list[set[int]] = []  # QPs that may have data to send (a superset of those that have)
        self._tgroup: list[list[list[int]]] = []  # per QP, the QPs of its host to the same peer
        self._tpeer: list[dict[int, list[int]]] = []
        self._tqpn: list[dict[int, int]] = []
        self._tscan: list[bool] = []  # per host: ask the endpoint's own scans (SCAN_ALL, or few QPs)
        for ep in self.eps:
            qps = list(ep.qps.values())
            by_peer: dict[bytes, list[int]] = {}
            for i, qp in enumerate(qps):
                by_peer.setdefault(qp.remote.gid, []).append(i)
            groups = [by_peer[qp.remote.gid] for qp in qps]
            first: dict[int, list[int]] = {}
            for i, qp in enumerate(qps):  # QPs of one EV profile share its states: they must be one group
                if first.setdefault(id(qp.evset.prof), groups[i]) is not groups[i]:
                    everyone = list(range(len(qps)))
                    groups, by_peer = [everyone] * len(qps), {g: everyone for g in by_peer}
                    break
            self._tqps.append(qps)
            self._tval.append([_NEVER] * len(qps))
            self._tdirty.append(set(range(len(qps))))
            self._tbusy.append(set(range(len(qps))))
            self._tgroup.append(groups)
            self._tpeer.append({gid_host[g]: v for g, v in by_peer.items() if g in gid_host})
            self._tqpn.append({qp.qpn: i for i, qp in enumerate(qps)})
            self._tscan.append(self.SCAN_ALL or len(qps) < self.CACHE_MIN_QPS)

    # ---- events -------------------------------------------------------------------------------
    def push(self, t: int, kind: int, a: Any, b: Any = None, c: Any = None) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, a, b, c))

    def at(self, t_ns: int, fn: Callable[[], None]) -> None:
        """Call ``fn`` at simulated time ``t_ns``."""
        self.push(t_ns, _EV_CALL, fn)

    def note_link(self, a: str, b: str, up: bool) -> None:
        """Record that the link between ``a`` and ``b`` (node or node:port) went down or up (fault_log "links")."""
        self._fault_links.append([a.partition(":")[0], b.partition(":")[0], up])

    def link_changed(self, a: str, b: str, up: bool) -> None:
        """A link changed carrier: recorded for the fault log, and a host NIC link's endpoint learns it,
        as the driver's netlink does."""
        self.note_link(a, b, up)
        for x in (a, b):
            node, _, port = x.partition(":")
            if node in self.fab.host_index and port:
                h = self.fab.host_index[node]
                self.link_events[h].append([self.now, int(port), up])
                self.eps[h].set_port_state(int(port), up, self.now)
                self._touch(h, range(len(self._tqps[h])))
                self._flush(h)

    def _enqueue(self, p: Port, r: Route, i: int, data: bytes, prio: int, now: int) -> None:
        """A packet reaches egress port ``p`` (hop ``i`` of ``r``) at ``now``: admit, trim, mark or drop."""
        sw = p.sw
        if sw is not None:
            sw.rx += 1
        if not (p.up and p.admin_up and p.far_admin_up):  # not p.lit: this runs for every hop
            self._lost_dark(p, r, now)
            return
        if p.loss and self.rng.random() < p.loss:
            if sw is not None:
                sw.drops[DROP_GREY_LOSS] += 1
            return
        n = len(data)
        if prio != DATA_PRIORITY:  # control packets and trimmed headers (top queue), resent data: ahead of data
            t = self._prio_tx(p, n, now, prio)
            if t is None:  # that queue is full (sim.priority_queue_factor): a traffic-manager tail drop
                return
        else:
            deps = p.deps
            while deps and deps[0] <= now:
                deps.popleft()
            depth = len(deps)
            if depth >= p.trim_thr:
                tr = trim_packet(data if type(data) is bytes else bytes(data))
                if tr is not None:
                    sw.congestion[EVENT_TRIMMED] += 1
                    t = self._prio_tx(p, len(tr), now, TRIM_PRIORITY)
                    if t is not None:  # else the trimmed header is tail-dropped (priority queue full)
                        sw.tx += 1
                        self.push(int(t) + 1, _EV_DATA, r, i + 1, (tr, TRIM_PRIORITY))
                    return
                if depth >= p.drop_thr:
                    sw.drops[DROP_QUEUE_FULL] += 1
                    sw.congestion[EVENT_EARLY_DROP] += 1
                    return
            elif depth >= p.drop_thr:  # the host NIC queue: never reached (its endpoint paces)
                return
            if depth >= p.ecn_thr:
                if type(data) is _Frame:  # the mark is in the outer IPv6 header
                    h2 = mark_ce(data.head)
                    m = data if h2 is data.head else _Frame(h2, data.src, data.a, data.b, data.tail)
                else:
                    m = mark_ce(data)
                if m is not data and sw is not None:
                    sw.congestion[EVENT_ECN_MARKED] += 1
                    data = m
            start = max(now, p.free)
            p.free = start + n * p.ns_per_byte
            deps.append(p.free)
            t = p.free + p.delay_ns
        if sw is not None:
            sw.tx += 1
        self.push(int(t) + 1, _EV_DATA, r, i + 1, (data, prio))

    @staticmethod
    def _prio_tx(p: Port, n: int, now: int, prio: int = TRIM_PRIORITY) -> float | None:
        """A frame of ``n`` bytes on ``p``'s strict-priority queue ``prio`` (TRIM_PRIORITY: the top one,
        RESEND_PRIORITY: resends) at
        ``now``: it leaves after the frames ahead of it in its queue and, for the resend queue, after
        those waiting in the top one; it takes its bytes' time from the link the lower queues share, so
        every lower-queue frame that starts after it waits that much longer (one already scheduled keeps
        its time: the wait for the one in service, at most a frame, is not modelled either).  Returns its
        arrival time at the far end; None when its queue holds ``p.pcap`` / ``p.rcap`` frames already
        (``sim.priority_queue_factor``; counted in ``p.ptail`` / ``p.rtail``)."""
        top = prio == TRIM_PRIORITY
        cap = p.pcap if top else p.rcap
        bounded = cap < PRIO_UNBOUNDED
        if bounded:
            pd = p.pdeps if top else p.rdeps
            while pd and pd[0] <= now:
                pd.popleft()
            if len(pd) >= cap:
                if top:
                    p.ptail += 1
                else:
                    p.rtail += 1
                return None
        tx = n * p.ns_per_byte
        if top:
            done = p.pfree = max(now, p.pfree) + tx
            p.rfree = max(now, p.rfree) + tx
        else:
            done = p.rfree = max(now, p.rfree, p.pfree) + tx
        p.free = max(now, p.free) + tx
        if bounded:
            pd.append(done)
        return done + p.delay_ns

    def _lost_dark(self, p: Port, r: Route, now: int, queued: bool = False) -> None:
        """A frame lost at port ``p`` because it cannot send (offered while it is dark, or ``queued``
        there when it went dark): counted by its switch by why -- administratively down, the link down,
        or the switch stopped; when the far end's port is administratively down, by the far switch,
        whose program drops it on ingress (for a queued one, why the port went dark then: it may be
        lit again now) -- and in the dead-link drops of ``r``'s host pair."""
        why = p.dark_why if queued else p.why_dark()
        sw = self.fab.ports[(p.peer, p.peer_port)].sw if why == "far_admin" else p.sw
        if sw is not None:
            sw.drops[{"admin": DROP_PORT_ADMIN_DOWN, "far_admin": DROP_PORT_ADMIN_DOWN,
                      "switch": DROP_SWITCH_DOWN}.get(why, DROP_LINK_DOWN)] += 1
        self._dead(p, r, now)

    def _dead(self, p: Port, r: Route, now: int) -> None:
        d = self.dead_drops.get((p.owner, p.peer, r.src_host, r.dst_host))
        if d is None:
            self.dead_drops[(p.owner, p.peer, r.src_host, r.dst_host)] = [1, now, now]
        else:
            d[0] += 1
            d[2] = now

    def _send(self, h: int, port: int, data: bytes) -> None:
        r = self.fab.route(self.hosts[h], port, data, self.encap)
        if r.drop and len(r.ports) == 1:
            self.fab.switches[r.drop_at].drops[r.drop] += 1
            return
        # control packets (ACK/NAK, CNP, probes) ride the top strict-priority queue with trimmed headers
        # at every hop, as congestion.p4 queues them: never behind data, never trimmed or dropped early;
        # data resent after a loss verdict (DSCP_RESEND) the queue below it (1): ahead of the data queue,
        # behind the headers and control packets (a full-size resend storm must not delay the trims'
        # and probes' news)
        prio = priority_queue(data)
        if prio == DATA_PRIORITY:
            r.data += 1
        if self._served and prio != TRIM_PRIORITY:
            data = self._compact(data)
        self._enqueue(r.ports[0], r, 0, data, prio, self.now)

    def _compact(self, data: bytes) -> bytes | _Frame:
        """``data`` as a :class:`_Frame` if its payload is a slice a requester just read (the frame ends
        with it and the 4-byte ICRC), else ``data``."""
        served = self._served
        n_all = len(data)
        for i, (src, a, b, sl) in enumerate(served):
            n = b - a
            if n and n_all >= n + 4 and data[n_all - 4 - n:n_all - 4] == sl:
                del served[i]
                return _Frame(data[:n_all - 4 - n], src, a, b, data[n_all - 4:])
        return data

    def _touch(self, h: int, idx: Any) -> None:
        """QPs ``idx`` of host ``h`` may have changed: ask their deadlines again, and whether they can send."""
        if self._tscan[h]:
            return
        self._tdirty[h].update(idx)
        self._tbusy[h].update(idx)

    def _sent_by(self, h: int) -> None:
        """Host ``h``'s endpoint let its QPs send: those that could have changed; keep those still with work."""
        busy = self._tbusy[h]
        if busy and not self._tscan[h]:
            self._tdirty[h].update(busy)
            qps = self._tqps[h]
            self._tbusy[h] = {i for i in busy if qps[i].has_work()}

    def _next_timer(self, h: int) -> int | None:
        """``eps[h].get_timer()``, asking only the QPs that may have changed since."""
        if self._tscan[h]:
            return self.eps[h].get_timer()
        tv, dirty = self._tval[h], self._tdirty[h]
        if dirty:
            qps = self._tqps[h]
            for i in dirty:
                t = qps[i].timer()
                tv[i] = _NEVER if t is None else t
            dirty.clear()
        t = min(tv, default=_NEVER)
        return None if t == _NEVER else t

    def _handle_timer(self, h: int, now: int) -> None:
        """``eps[h].handle_timer(now)``: each QP whose deadline has passed runs its timer, in the
        endpoint's QP order, a QP's deadline read when its turn comes (a QP's timer can change those of
        its peer group's later QPs)."""
        if self._tscan[h]:
            self.eps[h].handle_timer(now)
            return
        qps, tv, dirty, busy, groups = self._tqps[h], self._tval[h], self._tdirty[h], self._tbusy[h], self._tgroup[h]
        todo = sorted(dirty.union([i for i, t in enumerate(tv) if t <= now]))
        last = -1
        while todo:
            i = heapq.heappop(todo)
            if i <= last:
                continue
            last = i
            if i in dirty:
                t = qps[i].timer()
                tv[i] = _NEVER if t is None else t
                dirty.discard(i)
            if tv[i] <= now:
                qps[i].on_timer(now)
                for j in groups[i]:
                    dirty.add(j)
                    busy.add(j)
                    if j > i:
                        heapq.heappush(todo, j)

    def _to_send(self, h: int) -> list[tuple[int, bytes]]:
        """``eps[h].datagrams_to_send(now)``, offering only the QPs that may have work (``_tbusy``)."""
        if self._tscan[h]:
            return self.eps[h].datagrams_to_send(self.now)
        busy, qps = self._tbusy[h], self._tqps[h]
        return self.eps[h].datagrams_to_send(self.now, [qps[i] for i in sorted(busy)] if len(busy) > 1
                                             else [qps[i] for i in busy])

    def _flush(self, h: int) -> None:
        ep = self.eps[h]
        for port, data in self._to_send(h):
            self._send(h, port, data)
        self._sent_by(h)
        self._served.clear()
        t = self._next_timer(h)
        if t is not None:
            if t <= self.now:
                t = self.now + 1
            cur = self.timer_at[h]
            if cur is None or t < cur or cur <= self.now:
                self.timer_at[h] = t
                self.push(t, _EV_TIMER, h)
        cs = ep.poll_completions()
        if cs:
            qpn = self._tqpn[h]  # (polling an immediate's completion frees a receive credit of its QP)
            self._touch(h, [qpn[c.qpn] for c in cs if c.imm is not None and c.qpn in qpn])
            self._completions(h, cs)

    def _post(self, h: int) -> None:
        seed, ep = self.sc.seed, self.eps[h]
        for o in self.out[h]:
            while o.posted < o.count and o.outstanding < o.tx_depth:
                k = o.posted
                m = k % self.base_count  # a later step rewrites the same messages
                # payload(seed, fid, m, size), made a block at a time as packets are sent and checked
                data = LazyPayload(seed, o.fid, m, o.size, self._served)
                self.in_bufs[o.fid][1].hold(m, data)  # the receiver checks writes against these bytes
                o.post_ns[k] = self.now
                ep.post_write(o.qp, k, data, o.va + m * o.size, o.rkey)
                self._touch(h, (self._tqpn[h][o.qp.qpn],))
                o.outstanding += 1
                o.posted += 1

    def _completions(self, h: int, cs: list) -> None:
        by = self.by_qpn[h]
        more = False
        for c in cs:
            o = by.get(c.qpn)
            if o is None or c.opcode is not WcOpcode.RDMA_WRITE:
                continue
            o.outstanding -= 1
            self.in_bufs[o.fid][1].release(c.wr_id % self.base_count)
            t_post = o.post_ns.pop(c.wr_id, c.time_ns)
            if c.status is not WcStatus.SUCCESS:
                o.failed += 1
                continue
            o.done += 1
            o.lat_us.append((c.time_ns - t_post) / 1000)
            o.last_done_ns = c.time_ns
            if o.done + o.failed >= o.count:
                o.fct_ns.append(c.time_ns - o.start_ns)
                self.pending -= 1
            more = True
        if more:
            self._post(h)
            for port, data in self._to_send(h):
                self._send(h, port, data)
            self._sent_by(h)
            self._served.clear()

    # ---- the run ------------------------------------------------------------------------------
    def _start_step(self) -> None:
        """Start a step: every flow writes its ``count`` messages again (a collective's step)."""
        self.step_start = self.now
        first = not self.step_ns
        self.pending = 0
        for h, outs in enumerate(self.out):
            for o in outs:
                if not first:
                    o.count += self.base_count
                o.start_ns = self.now
                self.pending += 1
            if outs:
                self._post(h)
                self._flush(h)

    def _sample(self) -> None:
        now = self.now
        for h, outs in enumerate(self.out):
            if outs:
                self.samples[h].append([now] + [self._acked(o) for o in outs])
        self._drain_ev_events()
        self.at(now + self.sample_ns, self._sample)

    def _drain_ev_events(self) -> None:
        """Take every host's EV events now (``Endpoint.poll_events``) into ``ev_log``: a profile keeps at most
        ``EV_EVENT_BACKLOG`` unpolled and drops the older half past it, and the result's ``ev_events`` -- from
        which the report counts healthy-path retirements -- must hold them all (review h-rev5: polled only at
        the end, a long run of faults lost all but the newest 4,096-8,192 of a profile's, without a word)."""
        profs = self._ev_profs
        if profs is None:  # each host's EV profiles, found once (QPs are made before the run)
            profs = self._ev_profs = [list({id(q.evset.prof): q.evset.prof for q in ep.qps.values()}.values())
                                      for ep in self.eps]
        half = core_types.EV_EVENT_BACKLOG >> 1
        for h, ep in enumerate(self.eps):
            if any(len(pr.events) >= half for pr in profs[h]):  # (a len() per profile: samples are us apart)
                self.ev_log[h].extend(ep.poll_events())

    def _acked(self, o: _Out) -> int:
        mtu = self.sc.traffic.mtu or 4096
        per = max(1, -(-o.size // mtu))
        n = max(0, o.qp.snd_una - o.start_seq)
        return min((n // per) * o.size + min((n % per) * mtu, o.size), o.posted * o.size)

    def _cong(self) -> None:
        self.cong_samples.append([self.now / 1e9, self.fab.congestion_counts()])
        self.at(self.now + self.cong_ns, self._cong)

    def _fault(self, f: FaultSpec, undo: bool) -> None:
        self._fault_links, self._fault_grey = [], []
        try:
            what = f.spec.apply(SimFaults(self), f, undo)
            # "links": every link it took down or up ([node, node, up]), "grey": every link whose loss
            # rate it set ([node, node, loss]), for the report's path checks
            self.fault_log.append({"t_s": self.now / 1e9, "fault": f.label(), "undo": undo, "did": what,
                                   "down": f.spec.is_failure(f, undo), "links": self._fault_links,
                                   **({"grey": self._fault_grey} if self._fault_grey else {})})
        except (ScenarioError, ValueError) as e:
            self.fault_log.append({"t_s": self.now / 1e9, "fault": f.label(), "undo": undo, "error": str(e),
                                   "down": False})

    def run(self) -> dict[str, Any]:
        """Simulate until every step completes or the deadline; returns the runner-shaped result."""
        sc, t = self.sc, self.sc.traffic
        steps = max(1, t.steps)
        deadline = int(sc.deadline_s * 1e9)
        self.sample_ns = max(1, int(sc.measure.sample_ms * 1e6))
        self.cong_ns = max(1, int(sc.measure.congestion_ms * 1e6))
        self.samples: list[list] = [[] for _ in self.hosts]
        self.ev_log: list[list] = [[] for _ in self.hosts]  # EV events polled so far (_drain_ev_events)
        self._ev_profs: list[list] | None = None
        for f in sc.faults:
            self.at(int(f.at * 1e9), lambda f=f: self._fault(f, False))
            if f.duration > 0:
                self.at(int((f.at + f.duration) * 1e9), lambda f=f: self._fault(f, True))
        self.at(0, self._sample)
        self.at(0, self._cong)
        with loop_gc():
            wall0, cpu0 = time.monotonic(), time.process_time()
            self._start_step()
            heap, eps, fab = self.heap, self.eps, self.fab
            pop = heapq.heappop
            next_report = wall0 + 1.0
            steps_done = 0
            completed = False
            self.done_ns = None
            while heap:
                tt, _s, kind, a, b, c = heap[0]
                if tt > deadline:
                    self.now = deadline
                    break
                pop(heap)
                self.events += 1
                self.now = tt
                if kind == _EV_DATA:
                    r: Route = a
                    pp = r.ports[b - 1]  # the port the frame left by (hop 0 is enqueued at the send)
                    if pp.dark_from >= 0 and pp.lost_in_queue(tt, len(c[0])):  # (never dark: no call)
                        self._lost_dark(pp, r, tt, queued=True)
                    elif b < len(r.ports):
                        self._enqueue(r.ports[b], r, b, c[0], c[1], tt)
                    elif r.drop:
                        fab.switches[r.drop_at].drops[r.drop] += 1
                    else:
                        h = r.dst_host
                        d = c[0]
                        eps[h].receive(d if type(d) is bytes else bytes(d), r.dst_port, tt)
                        g = self._tpeer[h].get(r.src_host)
                        self._touch(h, range(len(self._tqps[h])) if g is None else g)
                        self._flush(h)
                elif kind == _EV_TIMER:
                    if self.timer_at[a] == tt:
                        self.timer_at[a] = None
                    self._handle_timer(a, tt)
                    self._flush(a)
                else:
                    a()
                if self.pending <= 0 and not completed:
                    self.step_ns.append(self.now - self.step_start)
                    steps_done += 1
                    if steps_done >= steps:
                        completed = True
                        self.done_ns = self.now
                        if sc.sim.linger_s <= 0:
                            break
                        # keep running (probes, timers, faults and their undoing) for sim.linger_s
                        deadline = min(deadline, self.now + int(sc.sim.linger_s * 1e9))
                        continue
                    self._start_step()
                if self.progress is not None and not (self.events & 0x3FF) and time.monotonic() >= next_report:
                    next_report = time.monotonic() + 1.0
                    self._report_progress(wall0)
        self.wall_s, self.cpu_s = time.monotonic() - wall0, time.process_time() - cpu0
        self.completed = completed
        for h, outs in enumerate(self.out):
            if outs:
                self.samples[h].append([self.now] + [self._acked(o) for o in outs])
        self.cong_samples.append([self.now / 1e9, fab.congestion_counts()])
        if self.progress is not None:
            self._report_progress(wall0)
        return self._result(steps)

    def _report_progress(self, wall0: float) -> None:
        acked = sum(self._acked(o) for outs in self.out for o in outs)
        el = max(1e-9, time.monotonic() - wall0)
        self.progress({"mode": self.mode, "t_s": self.now / 1e9, "acked": acked,
                       "total": len(self.flows) * self.msgs * max(1, self.sc.traffic.steps),
                       "faults": list(self.fault_log), "events": self.events, "events_per_s": self.events / el,
                       "wall_s": el})

    def _result(self, steps: int) -> dict[str, Any]:
        sc = self.sc
        hosts: dict[str, Any] = {}
        by_fid = {o.fid: o for outs in self.out for o in outs}
        for h, name in enumerate(self.hosts):
            ep = self.eps[h]
            outs = self.out[h]
            out_qpns = {o.qp.qpn for o in outs}
            retx = {"rack": 0, "timeout": 0, "trim": 0, "nak": 0}
            extra = {"trims_received": 0, "ecn_echoes": 0, "duplicates_received": 0, "timeouts": 0,
                     "probes_sent": 0, "data_packets_sent": 0, "retx_trim_ahead": 0,
                     "retx_lost_as_data": 0}
            for qpn, qp in ep.qps.items():
                c = qp.counters
                if qpn in out_qpns:
                    for k in retx:
                        retx[k] += getattr(c, f"retx_{k}")
                    for k in ("ecn_echoes", "timeouts", "data_packets_sent", "retx_trim_ahead", "retx_lost_as_data"):
                        extra[k] += getattr(c, k)
                # every QP bound to a host's profile probes its ASSUMED_BAD EVs, the receiving ones too
                extra["probes_sent"] += c.probes_sent
                if qpn not in out_qpns:
                    extra["trims_received"] += c.trims_received
                    extra["duplicates_received"] += c.duplicates_received
            verify = {}
            for fid in self.in_by_host[h]:
                _, buf, size = self.in_bufs[fid]
                o = by_fid[fid]
                done = min(o.done, self.base_count)  # every step rewrites the same messages
                bad = [k for k in range(done) if not buf.matches(k)]
                verify[str(fid)] = {"messages_checked": done, "bytes_checked": done * size * steps,
                                    "bad_messages": bad[:20], "bad_count": len(bad)}
            events = self.ev_log[h] + ep.poll_events()  # (_drain_ev_events: each sample's, in time order)
            pev = self._prof_evs
            hosts[name] = {
                "host": name, "mode": self.mode, "errors": [],
                "flows": {str(o.fid): {"dst": self.hosts[o.dst], "size": o.size, "count": o.count,
                                       "posted": o.posted, "done": o.done, "failed": o.failed,
                                       "lat_us": [round(x, 3) for x in o.lat_us],
                                       "last_done_ns": o.last_done_ns or None, "fct_ns": o.fct_ns}
                          for o in outs},
                "flow_order": [o.fid for o in outs],
                "samples": self.samples[h],
                # the 8th field: the path the EV names, as the nodes it crosses (the report checks it
                # against the links a fault took down); the 9th: the evidence of the change (EvEvent.evidence)
                "ev_events": [[e.time_ns, e.qpn, e.ev_index, e.port, e.old_state.name, e.new_state.name, e.cause,
                               self._ev_path(h, pev.get((h, e.profile_id)), e.ev_index), e.evidence]
                              for e in events],
                "link_events": self.link_events[h], "retx": retx, "counters": extra,
                "srtt_ns": sorted(o.qp.srtt for o in outs if o.qp.srtt), "verify": verify, "driver": {},
            }
        dead = [{"link": [a, b], "src": self.hosts[s] if s >= 0 else None, "dst": self.hosts[d] if d >= 0 else None,
                 "packets": n, "first_s": t / 1e9, "last_s": t2 / 1e9}
                for (a, b, s, d), (n, t, t2) in sorted(self.dead_drops.items())]
        return {"mode": self.mode, "engine": "sim", "completed": self.completed, "elapsed_s": self.now / 1e9,
                "done_s": None if self.done_ns is None else self.done_ns / 1e9, "dead_link_drops": dead,
                "deadline_s": sc.deadline_s, "total_bytes": len(self.flows) * self.msgs * steps,
                "flows": [f.__dict__ for f in self.flows], "hosts": hosts, "faults": self.fault_log,
                "switch_counters": self.fab.counters(), "congestion_samples": self.cong_samples,
                # the strict-priority queues' tail drops (only with sim.priority_queue_factor), as the
                # emulation reports a traffic manager's: per switch and per "switch:port/0" or "/1" queue
                "queue_tail_drops": self._prio_tail(by_queue=False),
                "queue_tail_drops_by_queue": self._prio_tail(by_queue=True),
                "step_s": [x / 1e9 for x in self.step_ns],
                "rc_pins": {str(k): list(v) for k, v in self.rc_spines.items()}, "sim": {"events": self.events, "wall_s": round(self.wall_s, 3),
                                       "cpu_s": round(self.cpu_s, 3),
                                       "events_per_s": round(self.events / max(self.cpu_s, 1e-9)),
                                       "hosts": len(self.hosts), "paths_per_pair": len(self._evs(self.hosts[0],
                                                                                                 self.hosts[1])),
                                       "base_rtt_ns": self.base_rtt_ns(), "ev_use": self.ev_use()}}

    def ev_use(self) -> dict[str, Any]:
        """How many of a host pair's paths its data took: per sending host pair, the carriers (EVs: the
        simulator caches a route per host, NIC port and carrier) that sent data-queue frames (first
        sends, resends as data), and the most frames one of them sent (the cache is cleared only at
        set-up, so the counts are the whole run's)."""
        per: dict[tuple[int, int], list[int]] = {}
        for r in self.fab._cache.values():
            if r.data:
                x = per.setdefault((r.src_host, r.dst_host), [0, 0, 0])
                x[0] += 1
                x[1] = max(x[1], r.data)
                x[2] += r.data
        if not per:
            return {"pairs": 0}
        used = sorted(v[0] for v in per.values())
        return {"pairs": len(per), "evs_used_min": used[0], "evs_used_median": used[len(used) // 2],
                "evs_used_max": used[-1], "max_frames_on_one_ev": max(v[1] for v in per.values()),
                "frames_per_pair_max": max(v[2] for v in per.values())}

    def _prio_tail(self, by_queue: bool) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.fab.ports.values():
            if p.sw is None:
                continue
            for q, n in ((TRIM_PRIORITY, p.ptail), (RESEND_PRIORITY, p.rtail)):
                if n:
                    k = f"{p.name}/{q}" if by_queue else p.owner
                    out[k] = out.get(k, 0) + n
        return out

    def _ev_path(self, h: int, prof: tuple[int, list] | None, index: int) -> list[str] | None:
        """The nodes EV ``index`` of host ``h``'s profile ``prof`` (peer, each EV's NIC port and spine) crosses
        (``controller.evplan.ev_nodes``); None if the profile is not one of ours or the plan does not
        decide the path (UDP)."""
        if prof is None or not 0 <= index < len(prof[1]):
            return None
        peer, evs = prof
        port, spine = evs[index]
        return ev_nodes(self.fab.topo, self.hosts[h], self.hosts[peer], port, spine, self.encap,
                        ev_direct=self.fab.stev_mode == STEV_EV_DIRECT)

    def base_rtt_ns(self) -> int:
        """The RTT of an idle path between two leaves: 8 link delays and a full data frame (MTU + the
        MRC headers: 154 bytes counted, 134 on the wire with SRv6 -- ~6 ns over 4 hops at 100 Gb/s, kept
        so figures stay comparable) serialised at each of the 4 hops, the ACK's time neglected."""
        host = next(p for p in self.fab.ports.values() if p.sw is None)  # a host NIC port's egress
        sw = next(p for p in self.fab.ports.values() if p.sw is not None)  # a switch port's egress
        frame = (self.sc.traffic.mtu or 4096) + 154
        # the links' own rates: a link_slow fault on the first switch port must not change the unit
        per_byte = host.base_ns_per_byte + 3 * sw.base_ns_per_byte
        one_way = host.delay_ns + 3 * sw.delay_ns + frame * per_byte
        return int(2 * one_way - frame * per_byte)


def run_sim(sc: Scenario, mode: str, progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Simulate one mode of ``sc`` (a fresh fabric per mode, so modes do not share state)."""
    return SimRun(sc, mode, progress).run()


def progress_bar(total_hint: str = "") -> Callable[[dict[str, Any]], None]:
    """A one-line progress bar on stderr: simulated time, bytes acknowledged, events/s."""
    def show(p: dict[str, Any]) -> None:
        frac = p["acked"] / p["total"] if p["total"] else 0.0
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r{p['mode']:>3} [{bar:<30}] {frac:6.1%}  sim {p['t_s'] * 1e6:9.1f} us  "
                         f"{p.get('events', 0):>10} events  {p.get('events_per_s', 0):8.0f} events/s  "
                         f"wall {p.get('wall_s', 0):6.1f} s {total_hint}")
        sys.stderr.flush()
    return show


__all__ = ["SimFaults", "SimRun", "payload", "progress_bar", "run_sim"]
