"""The sans-IO MRC endpoint: memory regions, QPs, NIC ports, probes; bytes in, bytes out.

No sockets, threads or clocks: every call takes ``now_ns``; a driver (or the simulator) feeds
received frames with :meth:`Endpoint.receive`, sends what :meth:`Endpoint.datagrams_to_send`
returns (``(port, frame)`` pairs), and calls :meth:`Endpoint.handle_timer` at
:meth:`Endpoint.get_timer`.  Data packets are paced at each NIC port's rate, as a NIC's scheduler
does, so a driver never needs a deep transmit queue.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable
from typing import Any

from mrc.core.cc import DEFAULT_BASE_RTT_NS, VENDOR_CFG_LEARN_BASE_RTT
from mrc.core.ev import PROBE_LATE_KEEP, EvEntry, ev_entries
from mrc.core.memory import MemoryRegion, PayloadSource
from mrc.core.nscc import NsccConfig
from mrc.core.qp import QpAttr, QueuePair
from mrc.core.types import Completion, EndpointCounters, EvEvent, EvState, QpState
from mrc.wire import formats as F
from mrc.wire.codec import (
    Encap,
    PortStatusInfo,
    ProbeInfo,
    WireError,
    decode_frame,
    encode_port_status,
    encode_probe,
)

_FMT_MODE = 1 << 2  # mrc.ctl.EvFmtProfileAttrMask.MODE (mrc.ctl is imported where it is used)
_FMT_MODES = {1: "stev", 2: "srv6", 4: "udp"}  # enum mrc_ctl_ev_fmt_mode -> Encap mode
_CTL_MODES = {v: k for k, v in _FMT_MODES.items()}
_EV_BYTES = {"srv6": 16, "stev": 4, "udp": 2}  # make_ev_profile: EV bytes per encapsulation (SRv6 with SRH: 32)
_CTL_RESPONSES_MAX = 65536  # answers to controller requests kept until the transport takes them


class Endpoint:
    """One host's MRC transport: owns its QPs and registered memory, driven by a driver/simulator.

    It is the :class:`~mrc.core.host.QpHost` of its QPs: they reach it only through that interface.
    """

    def __init__(self, gid: bytes, ports: Iterable[int] = (1,), *, encap: str = "srv6",
                 port_rate_bps: float = 100e9, telemetry: bool = False, mac: bytes = b"\x02\0\0\0\0\1",
                 peer_macs: dict[int, bytes] | None = None, first_qpn: int = 0x100, first_rkey: int = 0x1000,
                 ctl: Any = None):
        if len(gid) != 16:
            raise ValueError("gid must be a 16-byte IPv6 address")
        self.gid = bytes(gid)
        self.ports = sorted({int(p) for p in ports})
        if not self.ports or self.ports[0] < 1:
            raise ValueError("ports are 1-based NIC port numbers")
        self.encap_mode = encap
        self.telemetry = telemetry
        self.mac = mac
        self.peer_macs = peer_macs or {}
        self.port_rate_bps = float(port_rate_bps)  # the NIC port's line rate (pacing; the CC's ceiling)
        self.ns_per_byte = 8e9 / port_rate_bps
        self.slack_ns = 2 * 4200 * self.ns_per_byte  # a 2-packet transmit ring per port
        self.port_free: dict[int, float] = {p: 0.0 for p in self.ports}
        self.ports_down: set[int] = set()
        self.qps: dict[int, QueuePair] = {}
        self.mrs: dict[int, MemoryRegion] = {}
        self.counters = EndpointCounters()
        self._qpns = itertools.count(first_qpn)
        self._rkeys = itertools.count(first_rkey)
        self._probe_ids = itertools.count(1)
        self._probes: dict[int, tuple[QueuePair, int]] = {}
        # (QPN, EV index) -> the id of its probe in flight: an EV has one probe in flight at a time, so a
        # new one replaces the old in _probes (new_probe), which holds at most one id per EV of each QP
        self._probe_of: dict[tuple[int, int], int] = {}
        # ...and the ids of the probes before it, whose answers the QP still takes late (PROBE_LATE_KEEP)
        self._probe_late: dict[tuple[int, int], list[int]] = {}
        self._peers: dict[bytes, list[QueuePair]] = {}
        self._reply_encaps: dict[tuple[bytes, int, int], Encap] = {}
        self._out: list[tuple[int, bytes]] = []
        self._rr = 0  # round-robin start among QPs with data to send
        self._completions: list[Completion] = []
        self._ctl = ctl
        self._cc_profiles: dict[Any, int] = {}  # make_cc_profile's request -> CC profile id
        self._cc_keep: list[Any] = []
        self._ev_fmt_ids: dict[tuple[int, ...], int] = {}  # make_ev_profile's format profiles, by field widths
        self._next_ev_pid = 0  # make_ev_profile: the lowest id that may still be INIT
        self.ctl_responses: list[tuple[int, int, int, int, int, int | None]] = []
        if ctl is not None:
            missing = set(self.ports) - set(ctl.query_device().ports())
            if missing:
                raise ValueError(f"the MrcCtlContext's device lacks port(s) {sorted(missing)} of this endpoint")

    # ------------------------------------------------------------------ control (mrc_ctl.h)
    @property
    def ctl(self) -> Any:
        """This NIC's ``mrc.ctl.MrcCtlContext``: the format, EV and CC profiles QPs bind to by id.

        Made on first use (device: this endpoint's ports, every optional feature the transport
        implements, including modifying ONLINE EV and CC profiles) unless one was given to the constructor.
        """
        if self._ctl is None:
            from mrc.ctl import AttrOpt, DeviceAttr, MrcCtlContext

            dev = DeviceAttr(phy_port_mask=sum(1 << p for p in self.ports))
            dev.opt_attr |= AttrOpt.EV_PROFILE_MODIFY_ONLINE | AttrOpt.CC_PROFILE_MODIFY_ONLINE
            self._ctl = MrcCtlContext(dev)
        return self._ctl

    # ------------------------------------------------------------------ setup
    def reg_mr(self, buf: bytearray, base_va: int = 0, rkey: int | None = None,
               remote_write: bool = True) -> MemoryRegion:
        """Register ``buf`` at virtual address ``base_va``; remote writes need the returned rkey."""
        if not isinstance(buf, bytearray):
            raise TypeError("a memory region is a bytearray (writable, fixed address)")
        key = next(self._rkeys) if rkey is None else rkey & 0xFFFFFFFF
        if key in self.mrs:
            raise ValueError(f"rkey 0x{key:x} already registered")
        mr = MemoryRegion(key, base_va, buf, remote_write)
        self.mrs[key] = mr
        return mr

    def dereg_mr(self, mr: MemoryRegion) -> None:
        self.mrs.pop(mr.rkey, None)

    def create_qp(self, evs: Iterable[Any] | None = None, attr: QpAttr | None = None) -> QueuePair:
        """A QP in RST: bound to the EV (and CC) profile of ``attr.ev_profile_id`` (``cc_profile_id``),
        as mrc.h's QP attributes bind it (or given as ``evs``: a profile of :attr:`ctl`), or spraying over
        its own ``evs`` (EvEntry, ``(ev, port)`` tuples, ``mrc.ctl`` ``Ev`` objects), which become a
        profile private to this QP."""
        attr = attr or QpAttr()
        if evs is not None and hasattr(evs, "expanded") and hasattr(evs, "profile_id"):  # an mrc.ctl EvProfile
            if evs is not self.ctl.ev_profile(evs.profile_id):
                raise ValueError(f"EV profile {evs.profile_id} is not a profile of this endpoint's MrcCtlContext")
            attr, evs = dataclasses.replace(attr, ev_profile_id=evs.profile_id), None
        attr.validate()
        qpn = next(self._qpns)
        profile = cc_profile = None
        if attr.ev_profile_id is None:
            if evs is None:
                raise ValueError("create_qp needs EVs or QpAttr.ev_profile_id")
            if attr.cc_profile_id is not None:
                raise ValueError("QpAttr.cc_profile_id needs QpAttr.ev_profile_id (mrc_ctl attaches a QP to "
                                 "its EV profile); for a QP with its own EV list give QpAttr.cc instead")
            entries = ev_entries(evs)
        else:
            if evs is not None:
                raise ValueError("give create_qp either EVs or QpAttr.ev_profile_id, not both")
            profile, entries = self._bind_profile(qpn, attr)
            if attr.cc_profile_id is not None:
                cfg, learn = self._cc_of_profile(attr.cc_profile_id)
                attr = dataclasses.replace(attr, cc=cfg, cc_learn_base_rtt=learn)
                cc_profile = self.ctl.cc_profile(attr.cc_profile_id)
        for e in entries:
            if e.port not in self.port_free:
                raise ValueError(f"EV on port {e.port}, but this endpoint has ports {self.ports}")
        if attr.ev_profile_id is not None:
            self.ctl.attach_qp(qpn, attr.ev_profile_id, attr.cc_profile_id)
        qp = QueuePair(self, qpn, attr, entries, profile, cc_profile)
        qp.ports_down_changed()
        self.qps[qp.qpn] = qp
        return qp

    def _bind_profile(self, qpn: int, attr: QpAttr) -> tuple[Any, list[EvEntry]]:
        """The ONLINE ctl EV profile ``attr.ev_profile_id`` and one entry per slot (its expanded EV)."""
        from mrc.ctl import EvFmtMode, EvMode, ProfileState

        ctx = self.ctl
        pid = attr.ev_profile_id
        prof = ctx.ev_profile(pid)
        if prof.state != ProfileState.ONLINE:
            raise ValueError(f"QP {qpn}: EV profile {pid} is {prof.state.name}, not ONLINE")
        if prof.mode == EvMode.AUTO:
            raise ValueError(f"QP {qpn}: EV profile {pid} is AUTO (device-chosen ECMP), which this "
                             "endpoint does not implement; use an EXP or GEN profile")
        mode = ctx.query_ev_fmt_profile(prof.fmt_profile_id, _FMT_MODE).ev_fmt_mode
        want = {"srv6": EvFmtMode.SRV6, "stev": EvFmtMode.STEV, "udp": EvFmtMode.UDP}[self.encap_mode]
        if mode != want:
            raise ValueError(f"QP {qpn}: EV profile {pid} is {EvFmtMode(mode).name} but this endpoint "
                             f"sends {self.encap_mode}")
        entries = [EvEntry(prof.expanded(i), ev.port) for i, ev in enumerate(prof.evs)]
        if not entries:
            raise ValueError(f"QP {qpn}: EV profile {pid} has no EVs")
        return prof, entries

    def _cc_of_profile(self, cc_profile_id: int) -> tuple[Any, bool]:
        """The congestion control configuration of an ONLINE ctl CC profile (None: CC disabled), and
        whether its base RTT is to be learnt (vendor_cfg :data:`~mrc.core.cc.VENDOR_CFG_LEARN_BASE_RTT`)."""
        from mrc.ctl import CC_ALGO_NSCC, CcProfileAttrMask, ProfileState

        m = CcProfileAttrMask
        q = self.ctl.query_cc_profile(cc_profile_id, m.STATE | m.ALGORITHM | m.CONFIG | m.VENDOR_CFG)
        if q.cur_profile_state != ProfileState.ONLINE:
            raise ValueError(f"CC profile {cc_profile_id} is {q.cur_profile_state.name}, not ONLINE")
        if q.algorithm is None:
            return None, False
        if q.algorithm != CC_ALGO_NSCC:
            raise ValueError(f"CC profile {cc_profile_id}: algorithm {q.algorithm!r} is not implemented")
        return q.cc_config, bool(q.vendor_cfg[:1] and q.vendor_cfg[0] & VENDOR_CFG_LEARN_BASE_RTT[0])

    def make_cc_profile(self, cc: Any, *, mode: str = "mrc", mtu: int = 4096, base_rtt_ns: int = 0,
                        nscc: dict[str, Any] | None = None) -> int | None:
        """An ONLINE CC profile of :attr:`ctl` for the congestion control ``cc`` names (as ``QpAttr.cc``
        takes it), for ``QpAttr.cc_profile_id``; the same request gives the same profile, so the QPs
        that ask alike share one (a CONFIG change reaches them all).

        ``"nscc"``: algorithm ``uet-1.0-nscc`` with ``NsccConfig.defaults`` for this endpoint's line rate
        (MRC: every port; RC: one), ``mtu`` and the mode's trimming, at ``base_rtt_ns`` -- or, with 0, at
        a guess that each QP learns (vendor_cfg :data:`~mrc.core.cc.VENDOR_CFG_LEARN_BASE_RTT`); ``nscc``:
        NSCC parameters by ``NsccConfig`` field name over those defaults, ``base_rtt`` (ns) among them
        (a learnt base RTT re-derives every parameter, so overrides need a fixed one); an
        ``NsccConfig``: that config as given; ``"none"``/None: algorithm None (no window).  DCQCN
        (``"dcqcn"``, a ``DcqcnConfig``) is not an mrc_ctl algorithm: None is returned and the QP keeps
        ``QpAttr.cc``.  ValueError (naming the profile) if ctl refuses the profile.
        """
        from mrc.ctl import CC_ALGO_NSCC, CcProfileAttr, CcProfileAttrMask, MrcCtlError, ProfileState

        if cc is None or cc == "none":
            key: Any = ("none",)
            algorithm, cfg, vendor = None, None, b""
        elif cc == "nscc":
            over = dict(nscc or {})
            base = int(over.pop("base_rtt", base_rtt_ns) or 0)
            if over and not base:
                raise ValueError(f"NSCC parameters {', '.join(sorted(over))} need base_rtt too (without it each "
                                 "QP learns the base RTT and derives every parameter from it)")
            key = ("nscc", mode, mtu, base, tuple(sorted(over.items())))
            rate = self.port_rate_bps * (len(self.ports) if mode == "mrc" else 1)
            cfg = NsccConfig.defaults(base or DEFAULT_BASE_RTT_NS, rate, mtu, trimming=mode == "mrc")
            if over:
                cfg = cfg.replace(**over)  # ValueError naming an unknown or unusable parameter
            algorithm, vendor = CC_ALGO_NSCC, b"" if base else VENDOR_CFG_LEARN_BASE_RTT
        elif isinstance(cc, NsccConfig):
            key = ("cfg", id(cc))
            algorithm, cfg, vendor = CC_ALGO_NSCC, cc, b""
        else:
            return None  # DCQCN or a ready controller: not an mrc_ctl algorithm
        pid = self._cc_profiles.get(key)
        if pid is not None:
            return pid
        ctx, m, S = self.ctl, CcProfileAttrMask, ProfileState
        limit = ctx.query_device().cc.cc_max_profiles
        pid = next((i for i in range(limit) if ctx.cc_profile(i).state == S.INIT), None)
        if pid is None:
            raise ValueError(f"all {limit} CC profiles of this endpoint are in use")
        try:
            ctx.modify_cc_profile(pid, CcProfileAttr(profile_state=S.OFFLINE, algorithm=algorithm, vendor_cfg=vendor),
                                  m.STATE | m.ALGORITHM | m.VENDOR_CFG)
            ctx.modify_cc_profile(pid, CcProfileAttr(profile_state=S.ONLINE, cc_config=cfg),
                                  m.STATE | (m.CONFIG if algorithm is not None else 0))
        except MrcCtlError as exc:
            raise ValueError(f"CC profile {pid} ({algorithm}): {exc}") from None
        self._cc_profiles[key] = pid
        if key[0] == "cfg":
            self._cc_keep.append(cc)  # the key is the config's id: keep it alive
        return pid

    def make_ev_profile(self, evs: Iterable[Any], ev_min_active: int = 1) -> int:
        """An ONLINE EXP EV profile of :attr:`ctl` holding ``evs`` (wire values as ``create_qp`` takes
        them: ``(ev, port)`` tuples or EvEntry), for ``QpAttr.ev_profile_id``; returns its id.

        The values are written as they go on the wire: one EV format profile per endpoint and width
        (SRv6: 32-bit fields over the 128-bit carrier, or 256 bits with an SRH segment; STEV: one 32-bit
        field; UDP: one 16-bit field), each EV field taking all of its format field's bits, so ctl's
        expansion of an EV is the EV itself.
        ValueError (naming the profile) if ctl refuses it.
        """
        from mrc.ctl import Ev, EvFmtProfileAttrMask, EvState, MrcCtlError, ProfileState
        from mrc.ctl.loading import online_exp_ev_profile, online_fmt_profile

        ctx, S = self.ctl, ProfileState
        items = ev_entries(evs)
        raw = [e.ev.to_bytes(_EV_BYTES[self.encap_mode], "big") if isinstance(e.ev, int) else bytes(e.ev)
               for e in items]
        nbytes = _EV_BYTES[self.encap_mode]
        if self.encap_mode == "srv6" and any(any(v[16:]) for v in raw):
            nbytes = 32  # carrier + SRH segment
        vals = []
        for e, v in zip(items, raw, strict=True):
            if e.state is not EvState.GOOD:
                raise ValueError(f"make_ev_profile takes GOOD EVs (got one {e.state.name}); DENY with modify_ev_profile")
            if len(v) < nbytes or any(v[nbytes:]):
                raise ValueError(f"EV {v.hex()} is not a {nbytes}-byte {self.encap_mode} EV")
            if e.port not in self.port_free:
                raise ValueError(f"EV on port {e.port}, but this endpoint has ports {self.ports}")
            vals.append(Ev(v[:nbytes], e.port))
        widths = (16,) if self.encap_mode == "udp" else (32,) * (nbytes // 4)
        dev = ctx.query_device().ev
        try:
            fid = self._ev_fmt_ids.get(widths)
            if fid is None:
                fid = next((i for i in range(dev.ev_max_fmt_profiles)
                            if ctx.query_ev_fmt_profile(i, EvFmtProfileAttrMask.STATE).cur_profile_state == S.INIT), None)
                if fid is None:
                    raise ValueError(f"all {dev.ev_max_fmt_profiles} EV format profiles are in use")
                online_fmt_profile(ctx, fid, _CTL_MODES[self.encap_mode], widths)
                self._ev_fmt_ids[widths] = fid
            pid = self._next_ev_pid
            while pid < dev.ev_max_profiles and ctx.ev_profile(pid).state != S.INIT:
                pid += 1
            if pid >= dev.ev_max_profiles:
                raise ValueError(f"all {dev.ev_max_profiles} EV profiles of this endpoint are in use")
            self._next_ev_pid = pid + 1
            online_exp_ev_profile(ctx, pid, fid, widths, vals, ev_min_active)
        except MrcCtlError as exc:
            raise ValueError(f"EV profile of {len(vals)} {self.encap_mode} EVs: {exc}") from None
        return pid

    def refresh_entries(self, qp: QueuePair) -> None:
        """Take a bound profile's current EV values into ``qp``'s entries (after a REPLACE_EV)."""
        prof = qp.evset.prof
        if not hasattr(prof, "expanded"):
            return
        for i, e in enumerate(qp.evset.entries):
            e.ev = prof.expanded(i)
            e.port = prof.evs[i].port

    def connect(self, qp: QueuePair, remote_qpn: int, remote_gid: bytes, rq_psn: int, sq_psn: int,
                now_ns: int = 0) -> None:
        """RST -> INIT -> RTR -> RTS in one call."""
        qp.modify_to_init()
        qp.modify_to_rtr(remote_qpn, remote_gid, rq_psn)
        qp.modify_to_rts(sq_psn, now_ns)

    def make_encap(self, remote_gid: bytes, e: EvEntry, index: int) -> Encap:
        return Encap(self.encap_mode, self.gid, remote_gid, e.ev, ev_index=index, src_mac=self.mac,
                     dst_mac=self.peer_macs.get(e.port, b"\x02\0\0\0\0\2"), telemetry=self.telemetry)

    def register_peer(self, qp: QueuePair) -> None:
        """``qp`` talks to ``qp.remote.gid`` (QpHost)."""
        self._peers.setdefault(qp.remote.gid, []).append(qp)

    # ------------------------------------------------------------------ application surface
    def post_write(self, qp: QueuePair, wr_id: int, data: bytes | memoryview | PayloadSource, remote_va: int, rkey: int,
                   imm: int | None = None) -> None:
        """Post an RDMA WRITE (WRITE_WITH_IMM when ``imm`` is given) on ``qp``."""
        qp.post_write(wr_id, data, remote_va, rkey, imm)

    def poll_completions(self) -> list[Completion]:
        """Completions since the last call, in order (polling frees immediate-receive credits)."""
        out, self._completions = self._completions, []
        for c in out:
            if c.imm is not None:
                qp = self.qps.get(c.qpn)
                if qp is not None:
                    qp.imm_polled()
        return out

    def poll_events(self) -> list[EvEvent]:
        """EV state changes (to GOOD / ASSUMED_BAD) of every EV profile our QPs use since the last call,
        oldest first: one event per change of a profile, however many QPs are bound to it."""
        profiles = {id(qp.evset.prof): qp.evset.prof for qp in self.qps.values()}
        ev: list[EvEvent] = []
        for prof in profiles.values():
            ev.extend(prof.events)
            prof.events.clear()
        ev.sort(key=lambda e: e.time_ns)
        return ev

    def complete(self, c: Completion) -> None:
        """A completion for the application's next :meth:`poll_completions` (QpHost)."""
        self._completions.append(c)

    def count(self, name: str) -> None:
        """One more of endpoint counter ``name`` (in ``counters.extra``) (QpHost)."""
        extra = self.counters.extra
        extra[name] = extra.get(name, 0) + 1

    def memory_region(self, rkey: int) -> MemoryRegion | None:
        """The region registered under ``rkey`` (QpHost)."""
        return self.mrs.get(rkey)

    # ------------------------------------------------------------------ ports and pacing
    def port_ok_fn(self, now_ns: int):
        free, limit, down = self.port_free, now_ns + self.slack_ns, self.ports_down
        return lambda p: free[p] <= limit and p not in down

    def send_frame(self, port: int, frame: bytes, now_ns: int) -> None:
        """Queue ``frame`` on ``port``, after what is queued already (QpHost)."""
        self.port_send(port, len(frame), now_ns)
        self._out.append((port, frame))

    def port_send(self, port: int, nbytes: int, now_ns: int) -> None:
        """A frame of ``nbytes`` leaves on ``port``: it holds the port for its bytes on the wire (the
        frame plus Ethernet's preamble, FCS and gap, as a NIC serialises it and as softswitch's
        bit-rate links charge it: a NIC at the links' rate then never outruns them with small frames)."""
        f = self.port_free[port]
        self.port_free[port] = (max(now_ns, f)) + (nbytes + F.ETH_WIRE_OVERHEAD) * self.ns_per_byte

    def port_wake(self, port: int) -> int:
        return int(self.port_free[port] - self.slack_ns) + 1

    def earliest_port_wake(self, ports: list[int]) -> int | None:
        ok = [self.port_free[p] for p in ports if p not in self.ports_down]
        return int(min(ok) - self.slack_ns) + 1 if ok else None

    def set_port_state(self, port: int, up: bool, now_ns: int) -> None:
        """A NIC port went down/up: retire its EVs at once and tell every peer with PORT_STATUS."""
        if port not in self.port_free:
            raise ValueError(f"no port {port}")
        if up:
            self.ports_down.discard(port)
        else:
            self.ports_down.add(port)
        for qp in self.qps.values():
            qp.ports_down_changed()
            if not up:
                for i, e in enumerate(qp.evset.entries):
                    if e.port == port:
                        qp.evset.mark_bad(i, now_ns, "port_down", qpn=0,
                                          evidence={"rule": "port_down", "port": port,
                                                    "ports_down": sorted(self.ports_down)})
        self._send_port_status(now_ns)

    def _send_port_status(self, now_ns: int) -> None:
        mask = 0
        for p in self.ports:
            if p not in self.ports_down:
                mask |= 1 << (p - 1)
        for qps in self._peers.values():
            qp = qps[0]
            qp.sync_evs()
            sent_ports = set()
            for e in qp.evset.entries:
                if e.port in self.ports_down or e.port in sent_ports or e.encap is None:
                    continue
                sent_ports.add(e.port)
                pkt = encode_port_status(e.encap, PortStatusInfo(next(self._probe_ids), max(self.ports), mask))
                self.port_send(e.port, len(pkt), now_ns)
                self._out.append((e.port, pkt))

    # ------------------------------------------------------------------ the sans-IO loop
    def receive(self, data: bytes, port: int, now_ns: int) -> None:
        """One received frame on NIC ``port``; bad frames are counted and dropped, never raised."""
        c = self.counters
        c.rx_packets += 1
        if port in self.ports_down:
            c.rx_port_down += 1
            return
        try:
            fr = decode_frame(data)
        except WireError as exc:
            if "ICRC" in str(exc):
                c.rx_bad_icrc += 1
            else:
                c.rx_malformed += 1
            return
        op = fr.opcode
        if op in F.DATA_OPCODES or op == F.OP_ACK or op == F.OP_CNP:
            qp = self.qps.get(fr.dest_qp)
            if qp is None or qp.remote.gid != fr.src_gid or fr.dst_gid != self.gid:
                c.rx_unknown_qp += 1
                return
            if not F.pkey_match(fr.pkey, qp.attr.pkey):
                # InfiniBand's P_Key check of a packet for a connected QP: another partition's packet
                # is dropped silently and counted (PortInfo P_KeyViolations; Linux rxe: check_keys)
                c.pkey_violations += 1
                return
            st = qp.state
            if st is not QpState.RTS and not (st is QpState.RTR and op in F.DATA_OPCODES):
                c.rx_wrong_state += 1  # a QP in ERR takes nothing, one in RTR only data (IB: silently dropped)
                return
            if op == F.OP_ACK:
                qp.on_ack(fr, now_ns)
            elif op == F.OP_CNP:
                qp.on_cnp(now_ns)
            else:
                qp.on_data(fr, now_ns)
            return
        if op == F.OP_PROBE_REQ:
            self._answer_probe(fr, port, now_ns)
        elif op == F.OP_PROBE_RESP:
            pr = fr.probe
            if pr.flags & F.PROBE_FLAG_CTL:  # the answer to a controller request (ep_batch_send_wait)
                svc = pr.service_time_ns if pr.flags & F.PROBE_FLAG_SERVICE_TIME else None
                op_type = 1 if pr.flags & F.PROBE_FLAG_PORT_STATUS_ACK else 0  # mrc_ctl_ep_op_type
                if len(self.ctl_responses) < _CTL_RESPONSES_MAX:
                    self.ctl_responses.append((op_type, pr.req_id, pr.sender_ts_ns, port, now_ns, svc))
                return
            ent = self._probes.pop(pr.req_id, None)
            if ent is not None:
                key = (ent[0].qpn, ent[1])
                if self._probe_of.get(key) == pr.req_id:
                    del self._probe_of[key]
                else:
                    self._unlate(key, pr.req_id)
                ent[0].on_probe_resp(ent[1], pr.req_id, now_ns)
        elif op == F.OP_PORT_STATUS:
            self._on_port_status(fr, now_ns, port)

    def _reply_path(self, fr, port: int, ctl: bool = False) -> tuple[Encap, int] | None:
        """(encapsulation, port) to answer a connectionless packet from ``fr.src_gid`` that came in on
        ``port``: the mirror EV of a QP to that peer (another of its EVs if the controller DENIED that
        one), else (STEV/UDP) the same entropy back on the same port; None when there is no way back
        (SRv6 without a QP: no carrier to the sender).

        ``ctl``: the answer to a controller's request (``ep_batch_send_wait``), whose figures (rx
        port, RTT) must describe the path it probed: STEV/UDP answers with the request's own entropy
        on the port it came in on, SRv6 with the mirror EV if it is on that port and usable, else the
        first usable EV of a QP to the peer on that port, else the first one there that is not DENIED
        (ASSUMED_BAD is a belief; DENIED is the controller's order), else none; never a round-robin
        pick (a request carries no EV index of ours, and a pick would move the QP's spray pointer)."""
        qps = self._peers.get(fr.src_gid)
        for qp in qps or ():
            qp.sync_evs()  # answer on the profiles' current EVs (after a REPLACE_EV)
        if ctl:
            if port in self.ports_down:
                return None
            if fr.outer_dst is None:
                qps = None  # the request's own entropy, below
            else:
                for qp in qps or ():
                    es = qp.evset
                    evi = qp.ev_index_of(fr)
                    on_port = [i for i, e in enumerate(es.entries) if e.port == port]
                    if evi in on_port and es.usable(evi):
                        return es.entries[evi].encap, port
                    for i in on_port:
                        if es.usable(i):
                            return es.entries[i].encap, port
                    for i in on_port:  # only believed dead: still a way back; a DENIED EV never is
                        if es.prof.states[i] is not EvState.DENIED:
                            return es.entries[i].encap, port
                return None
        if qps:
            qp = qps[0]
            evi = qp.ev_index_of(fr)
            e = qp.evset.entries[evi] if 0 <= evi < len(qp.evset.entries) else None
            if e is None or e.port in self.ports_down or qp.evset.prof.states[evi] is EvState.DENIED:
                j = qp.evset.reply_index(evi)
                if qp.evset.prof.states[j] is EvState.DENIED:
                    return None  # every other EV is DENIED or down: no path the controller allows
                e = qp.evset.entries[j]
            return e.encap, e.port
        if fr.outer_dst is not None or port in self.ports_down:
            return None
        # the entropy it came with (UDP source port, flow label low bits) as an STEV value: the same
        # headers back, so a STEV or UDP fabric hashes the answer like the request
        return Encap("stev", self.gid, fr.src_gid, fr.entropy, src_mac=self.mac,
                     dst_mac=self.peer_macs.get(port, b"\x02\0\0\0\0\2"), telemetry=self.telemetry), port

    def _answer_probe(self, fr, port: int, now_ns: int) -> None:
        path = self._reply_path(fr, port, ctl=bool(fr.probe.flags & F.PROBE_FLAG_CTL))
        if path is None:
            self.counters.rx_unknown_qp += 1
            return
        encap, out_port = path
        p = fr.probe
        flags = F.PROBE_FLAG_SERVICE_TIME | (p.flags & F.PROBE_FLAG_CTL)
        pkt = encode_probe(encap, F.OP_PROBE_RESP, ProbeInfo(p.req_id, port, flags, p.sender_ts_ns, 0, fr.entropy))
        self.counters.probes_answered += 1
        self.port_send(out_port, len(pkt), now_ns)
        self._out.append((out_port, pkt))

    def _on_port_status(self, fr, now_ns: int, port: int = 0) -> None:
        self.counters.port_status_received += 1
        ps = fr.port_status
        if ps.flags & F.PORT_STATUS_FLAG_CTL:  # a controller's PORT_STATUS_UPDATE: acknowledge it
            path = self._reply_path(fr, port, ctl=True)
            if path is not None:
                encap, out_port = path
                flags = F.PROBE_FLAG_CTL | F.PROBE_FLAG_PORT_STATUS_ACK | F.PROBE_FLAG_SERVICE_TIME
                pkt = encode_probe(encap, F.OP_PROBE_RESP, ProbeInfo(ps.req_id, port, flags, 0, 0, fr.entropy))
                self.port_send(out_port, len(pkt), now_ns)
                self._out.append((out_port, pkt))
        down = {p for p in range(1, min(ps.n_ports, 64) + 1) if not ps.up_mask >> (p - 1) & 1}
        for qp in self._peers.get(fr.src_gid, []):
            qp.set_peer_down(down)
            for i, e in enumerate(qp.evset.entries):
                if e.port in down:
                    qp.evset.mark_bad(i, now_ns, "peer_port_down", qpn=0,
                                      evidence={"rule": "peer_port_down", "peer_ports_down": sorted(down),
                                                "rx_port": port, "port_status_id": ps.req_id})

    def send_ctl_request(self, req: Any, now_ns: int) -> None:
        """Put one controller request on the wire (an ``mrc.ctl.EpWireRequest``: EV probe or
        PORT_STATUS_UPDATE) on ``req.ev.port``, its EV taken as the wire value in ``req.ev_fmt_mode``.
        Answers come back in :attr:`ctl_responses` as ``(op_type, req_id, sender_ts_ns, rx_port,
        rx_ns, service_time_ns or None)``."""
        port = req.ev.port
        if port not in self.port_free:
            raise ValueError(f"no port {port} (ports {self.ports})")
        mode = _FMT_MODES.get(int(req.ev_fmt_mode))
        if mode is None:
            raise ValueError(f"ev_fmt_mode {req.ev_fmt_mode!r} is not one of STEV, SRV6, UDP")
        ev = bytes(req.ev.val)
        if mode == "srv6" and not any(ev[16:]):
            ev = ev[:16]
        encap = Encap(mode, bytes(req.sgid), bytes(req.dgid), ev, src_mac=self.mac,
                      dst_mac=self.peer_macs.get(port, b"\x02\0\0\0\0\2"), telemetry=self.telemetry,
                      dscp=req.dscp)
        if int(req.op_type) == 0:  # MRC_CTL_EP_OP_EV_PROBE
            pkt = encode_probe(encap, F.OP_PROBE_REQ, ProbeInfo(req.req_id, port, F.PROBE_FLAG_CTL, req.sender_ts_ns))
        else:  # MRC_CTL_EP_OP_PORT_STATUS_UPDATE (req.port_status: bit p-1 = port p, as on the wire)
            pkt = encode_port_status(encap, PortStatusInfo(req.req_id, max(self.ports), req.port_status,
                                                           F.PORT_STATUS_FLAG_CTL))
        self.port_send(port, len(pkt), now_ns)
        self._out.append((port, pkt))

    def new_probe(self, qp: QueuePair, ev_i: int) -> int:
        """A probe request id whose answer goes to ``qp``'s EV ``ev_i`` (QpHost)."""
        rid = next(self._probe_ids) & 0xFFFFFFFF
        key = (qp.qpn, ev_i)
        old = self._probe_of.get(key)
        if old is not None:
            # the QP no longer waits for its EV's previous probe (one per EV in flight; it dropped the id
            # when the EV went ASSUMED_BAD or suspect again): until 2026-12-06 an id dropped without
            # forget_probe and never answered (a dead path's) stayed here for the endpoint's lifetime
            self._probes.pop(old, None)
        self._probe_of[key] = rid
        self._probes[rid] = (qp, ev_i)
        return rid

    def keep_late_probe(self, rid: int) -> None:
        """The QP gave up on probe ``rid`` but still takes its answer, late (QpHost)."""
        ent = self._probes.get(rid)
        if ent is None:
            return
        key = (ent[0].qpn, ent[1])
        if self._probe_of.get(key) == rid:
            del self._probe_of[key]
        late = self._probe_late.setdefault(key, [])
        late.append(rid)
        for gone in late[:-PROBE_LATE_KEEP]:  # the QP keeps the same last PROBE_LATE_KEEP (MrcRequester._probe)
            self._probes.pop(gone, None)
        del late[:-PROBE_LATE_KEEP]

    def forget_probe(self, rid: int) -> None:
        """Stop routing the answer of probe ``rid`` (QpHost)."""
        ent = self._probes.pop(rid, None)
        if ent is not None:
            key = (ent[0].qpn, ent[1])
            if self._probe_of.get(key) == rid:
                del self._probe_of[key]
            else:
                self._unlate(key, rid)

    def _unlate(self, key: tuple[int, int], rid: int) -> None:
        late = self._probe_late.get(key)
        if late and rid in late:
            late.remove(rid)
            if not late:
                del self._probe_late[key]

    def datagrams_to_send(self, now_ns: int, candidates: Iterable[QueuePair] | None = None) -> list[tuple[int, bytes]]:
        """Frames to transmit now, as ``(port, frame)``: control first, then paced data.

        ``candidates``: QPs of this endpoint, in its QP order, among which is every QP that has data
        to send now (a caller that knows which QPs can have work -- the simulator, whose incast
        receiver holds a thousand QPs with nothing to send -- spares the pass over all of them); the
        frames are the same as without it."""
        out = self._out  # QPs append to it through send_frame, after the control frames
        # One packet per QP per turn, starting one QP further each call: QPs share the ports
        # round robin as a NIC's scheduler does (filling QP by QP let the first QP with work
        # take every pacing slot and starved the later ones for seconds).
        busy = [qp for qp in (self.qps.values() if candidates is None else candidates) if qp.has_work()]
        if busy:
            k = self._rr % len(busy)
            self._rr += 1
            busy = busy[k:] + busy[:k]
            while len(busy) > 1:
                busy = [qp for qp in busy if qp.fill(now_ns, 1) and qp.has_work()]
            if busy:  # the last one left takes what remains
                busy[0].fill(now_ns)
        self._out = []
        return out

    def get_timer(self) -> int | None:
        """The next time (ns) :meth:`handle_timer` must be called, or None."""
        t = None
        for qp in self.qps.values():
            c = qp.timer()
            if c is not None and (t is None or c < t):
                t = c
        return t

    def handle_timer(self, now_ns: int) -> None:
        """Run every QP deadline that has passed (RTO, loss detection, ACK coalescing, probes)."""
        for qp in self.qps.values():
            c = qp.timer()
            if c is not None and c <= now_ns:
                qp.on_timer(now_ns)

    def ev_states(self, qp: QueuePair) -> list[EvState]:
        """Current state of each EV of ``qp`` (its profile's, shared by every QP bound to it)."""
        return list(qp.evset.prof.states)
