"""The sans-IO MRC endpoint: memory regions, QPs, NIC ports, probes; bytes in, bytes out.

No sockets, threads or clocks: every call takes ``now_ns``; a driver (or the simulator) feeds
received frames with :meth:`Endpoint.receive`, sends what :meth:`Endpoint.datagrams_to_send`
returns (``(port, frame)`` pairs), and calls :meth:`Endpoint.handle_timer` at
:meth:`Endpoint.get_timer`.  Data packets are paced at each NIC port's rate, as a NIC's scheduler
does, so a driver never needs a deep transmit queue.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from mrc.core.ev import EvEntry, ev_entries
from mrc.core.memory import MemoryRegion
from mrc.core.qp import QpAttr, QueuePair
from mrc.core.types import Completion, EndpointCounters, EvEvent, EvState
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


class Endpoint:
    """One host's MRC transport: owns its QPs and registered memory, driven by a driver/simulator."""

    def __init__(self, gid: bytes, ports: Iterable[int] = (1,), *, encap: str = "srv6",
                 port_rate_bps: float = 100e9, telemetry: bool = False, mac: bytes = b"\x02\0\0\0\0\1",
                 peer_macs: dict[int, bytes] | None = None, first_qpn: int = 0x100):
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
        self._rkeys = itertools.count(0x1000)
        self._probe_ids = itertools.count(1)
        self._probes: dict[int, tuple[QueuePair, int]] = {}
        self._peers: dict[bytes, list[QueuePair]] = {}
        self._reply_encaps: dict[tuple[bytes, int, int], Encap] = {}
        self._out: list[tuple[int, bytes]] = []
        self._rr = 0  # round-robin start among QPs with data to send
        self._completions: list[Completion] = []

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

    def create_qp(self, evs: Iterable[Any], attr: QpAttr | None = None) -> QueuePair:
        """A QP in RST spraying over ``evs`` (EvEntry, (ev, port) tuples, or mrc.ctl EV objects)."""
        entries = ev_entries(evs)
        for e in entries:
            if e.port not in self.port_free:
                raise ValueError(f"EV on port {e.port}, but this endpoint has ports {self.ports}")
        qp = QueuePair(self, next(self._qpns), attr or QpAttr(), entries)
        qp.evset.ports_down = set(self.ports_down)
        self.qps[qp.qpn] = qp
        return qp

    def connect(self, qp: QueuePair, remote_qpn: int, remote_gid: bytes, rq_psn: int, sq_psn: int,
                now_ns: int = 0) -> None:
        """RST -> INIT -> RTR -> RTS in one call."""
        qp.modify_to_init()
        qp.modify_to_rtr(remote_qpn, remote_gid, rq_psn)
        qp.modify_to_rts(sq_psn, now_ns)

    def make_encap(self, remote_gid: bytes, e: EvEntry, index: int) -> Encap:
        return Encap(self.encap_mode, self.gid, remote_gid, e.ev, ev_index=index, src_mac=self.mac,
                     dst_mac=self.peer_macs.get(e.port, b"\x02\0\0\0\0\2"), telemetry=self.telemetry)

    def _register_peer(self, qp: QueuePair) -> None:
        self._peers.setdefault(qp.remote.gid, []).append(qp)

    # ------------------------------------------------------------------ application surface
    def post_write(self, qp: QueuePair, wr_id: int, data: bytes | memoryview, remote_va: int, rkey: int,
                   imm: int | None = None) -> None:
        """Post an RDMA WRITE (WRITE_WITH_IMM when ``imm`` is given) on ``qp``."""
        qp.post_write(wr_id, data, remote_va, rkey, imm)

    def poll_completions(self) -> list[Completion]:
        """Completions since the last call, in order (polling frees immediate-receive credits)."""
        out, self._completions = self._completions, []
        for c in out:
            if c.imm is not None:
                qp = self.qps.get(c.qpn)
                if qp is not None and qp.wimm_unpolled > 0:
                    qp.wimm_unpolled -= 1
        return out

    def poll_events(self) -> list[EvEvent]:
        """EV state changes (to GOOD / ASSUMED_BAD) since the last call, oldest first."""
        ev: list[EvEvent] = []
        for qp in self.qps.values():
            ev.extend(qp.evset.events)
            qp.evset.events.clear()
        ev.sort(key=lambda e: e.time_ns)
        return ev

    def _complete(self, c: Completion) -> None:
        self._completions.append(c)

    # ------------------------------------------------------------------ ports and pacing
    def port_ok_fn(self, now_ns: int):
        free, limit, down = self.port_free, now_ns + self.slack_ns, self.ports_down
        return lambda p: free[p] <= limit and p not in down

    def port_send(self, port: int, nbytes: int, now_ns: int) -> None:
        f = self.port_free[port]
        self.port_free[port] = (max(now_ns, f)) + nbytes * self.ns_per_byte

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
            qp.evset.ports_down = self.ports_down | getattr(qp, "peer_down", set())
            if not up:
                for i, e in enumerate(qp.evset.entries):
                    if e.port == port:
                        qp.evset.mark_bad(i, now_ns, "port_down")
        self._send_port_status(now_ns)

    def _send_port_status(self, now_ns: int) -> None:
        mask = 0
        for p in self.ports:
            if p not in self.ports_down:
                mask |= 1 << (p - 1)
        for qps in self._peers.values():
            qp = qps[0]
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
            if op == F.OP_ACK:
                qp.on_ack(fr, now_ns)
            elif op == F.OP_CNP:
                qp.on_cnp(now_ns)
            else:
                qp.on_data(fr, now_ns, self._out)
            return
        if op == F.OP_PROBE_REQ:
            self._answer_probe(fr, port, now_ns)
        elif op == F.OP_PROBE_RESP:
            ent = self._probes.pop(fr.probe.req_id, None)
            if ent is not None:
                ent[0].on_probe_resp(ent[1], fr.probe.req_id, now_ns)
        elif op == F.OP_PORT_STATUS:
            self._on_port_status(fr, now_ns)

    def _answer_probe(self, fr, port: int, now_ns: int) -> None:
        qps = self._peers.get(fr.src_gid)
        if not qps:
            self.counters.rx_unknown_qp += 1
            return
        qp = qps[0]
        evi = qp.ev_index_of(fr)
        e = qp.evset.entries[evi] if 0 <= evi < len(qp.evset.entries) else None
        if e is None or e.port in self.ports_down:
            e = qp.evset.entries[qp.evset.reply_index(evi)]
        p = fr.probe
        pkt = encode_probe(e.encap, F.OP_PROBE_RESP,
                           ProbeInfo(p.req_id, port, F.PROBE_FLAG_SERVICE_TIME, p.sender_ts_ns, 0, fr.entropy))
        self.counters.probes_answered += 1
        self.port_send(e.port, len(pkt), now_ns)
        self._out.append((e.port, pkt))

    def _on_port_status(self, fr, now_ns: int) -> None:
        self.counters.port_status_received += 1
        ps = fr.port_status
        down = {p for p in range(1, min(ps.n_ports, 64) + 1) if not ps.up_mask >> (p - 1) & 1}
        for qp in self._peers.get(fr.src_gid, []):
            qp.peer_down = down
            qp.evset.ports_down = self.ports_down | down
            for i, e in enumerate(qp.evset.entries):
                if e.port in down:
                    qp.evset.mark_bad(i, now_ns, "peer_port_down")

    def _new_probe(self, qp: QueuePair, ev_i: int) -> int:
        rid = next(self._probe_ids) & 0xFFFFFFFF
        self._probes[rid] = (qp, ev_i)
        return rid

    def _forget_probe(self, rid: int) -> None:
        self._probes.pop(rid, None)

    def datagrams_to_send(self, now_ns: int) -> list[tuple[int, bytes]]:
        """Frames to transmit now, as ``(port, frame)``: control first, then paced data."""
        out, self._out = self._out, []
        # One packet per QP per turn, starting one QP further each call: QPs share the ports
        # round robin as a NIC's scheduler does (filling QP by QP let the first QP with work
        # take every pacing slot and starved the later ones for seconds).
        busy = [qp for qp in self.qps.values() if qp.has_work()]
        if busy:
            k = self._rr % len(busy)
            self._rr += 1
            busy = busy[k:] + busy[:k]
            while len(busy) > 1:
                busy = [qp for qp in busy if qp.fill(now_ns, out, 1) and qp.has_work()]
            if busy:  # the last one left takes what remains
                busy[0].fill(now_ns, out)
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
                qp.on_timer(now_ns, self._out)

    def ev_states(self, qp: QueuePair) -> list[EvState]:
        """Current state of each EV of ``qp``."""
        return [e.state for e in qp.evset.entries]
