"""Counters (periodic reads) and postcards (PacketIns) from the switches, kept as plain snapshots.

Per switch: per-port rx/tx packets and bytes, drops by reason, per-table direct-counter totals,
the egress queue-depth register, and the postcards received (hop records decoded with ``mrc.wire.codec``).
``controller/metrics.py`` exports the snapshots in Prometheus format.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import grpc
from p4.v1 import p4runtime_pb2

from mrc.wire import formats as F
from mrc.wire.codec import TelemetryRecord, decode_telemetry_record

from . import p4contract as P4
from .mapping import (
    C_CONGESTION_EVENTS,
    C_DROP_REASONS,
    C_PORT_RX,
    C_PORT_TX,
    DROP_REASONS,
    R_EGRESS_QDEPTH,
    REASON_POSTCARD,
    P4Names,
)
from .p4rt import no_answer
from .session import PacketIn, SessionError, SwitchSession

POSTCARD_RECORD_LEN = F.TELEMETRY_RECORD_LEN
# the controller's labels of the program's congestion events: the program's names (define.p4, through
# the contract), except that metrics and reports say "ecn_marked" for the program's ecn_ce
CONGESTION_EVENTS = {**P4.CONGESTION_EVENTS, P4.CONGESTION_EVENT_ECN_CE: "ecn_marked"}
EVENT_TRIMMED = CONGESTION_EVENTS[P4.CONGESTION_EVENT_TRIMMED]
EVENT_ECN_MARKED = CONGESTION_EVENTS[P4.CONGESTION_EVENT_ECN_CE]
EVENT_EARLY_DROP = CONGESTION_EVENTS[P4.CONGESTION_EVENT_EARLY_DROP]


@dataclass
class SwitchCounters:
    """One read of a switch's counters (packets, bytes) and queue depths."""

    port_rx: dict[int, tuple[int, int]] = field(default_factory=dict)
    port_tx: dict[int, tuple[int, int]] = field(default_factory=dict)
    drops: dict[str, tuple[int, int]] = field(default_factory=dict)
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)
    qdepth: dict[int, int] = field(default_factory=dict)
    congestion: dict[str, int] = field(default_factory=dict)  # trimmed / ecn_marked / early_drop packets
    read_at: float = 0.0


@dataclass(frozen=True)
class Postcard:
    """A decoded postcard: which switch sent it, its hop record (the same record the Hop-by-Hop
    telemetry option carries) and a one-line summary of the packet it describes."""

    switch: str
    hop: TelemetryRecord
    packet: str
    received_at: float


def decode_postcard(pi: PacketIn) -> Postcard:
    """Decode a POSTCARD PacketIn: a 20-byte hop record, then the start of the frame."""
    from scapy.layers.l2 import Ether

    if len(pi.payload) < POSTCARD_RECORD_LEN:
        raise ValueError(f"postcard from {pi.switch}: {len(pi.payload)} bytes, need {POSTCARD_RECORD_LEN}")
    frame = pi.payload[POSTCARD_RECORD_LEN:]
    summary = Ether(frame).summary() if frame else ""
    return Postcard(pi.switch, decode_telemetry_record(pi.payload), summary, time.time())


def _cell(counter_id: int, index: int | None = None) -> p4runtime_pb2.Entity:
    """A CounterEntry read request: one cell, or every cell (``index`` None: wildcard)."""
    ent = p4runtime_pb2.Entity()
    ent.counter_entry.counter_id = counter_id
    if index is not None:
        ent.counter_entry.index.index = index
    return ent


def poll_entities(names: P4Names, ports: set[int]) -> tuple[dict[int, str], list[p4runtime_pb2.Entity]]:
    """What :meth:`TelemetryCollector.poll` reads from a switch with P4 names ``names`` whose connected ports are
    ``ports``: (counter id -> what it counts, the entities of its one ReadRequest).  Also what
    bench/softswitch_reads.py sends, so the bench measures the controller's own poll."""
    kinds: dict[int, str] = {}  # counter id -> what it counts
    ents: list[p4runtime_pb2.Entity] = []
    for cname, kind in ((C_PORT_RX, "rx"), (C_PORT_TX, "tx")):
        if cname in names.counters:
            kinds[names.counters[cname].preamble.id] = kind
    kinds.update({c.preamble.id: "drop" for c in names.counters_named(C_DROP_REASONS)})
    kinds.update({c.preamble.id: "congestion" for c in names.counters_named(C_CONGESTION_EVENTS)})
    for cid, kind in kinds.items():
        if kind in ("rx", "tx") and ports:
            # the switch's connected ports (and the CPU port) by index, not all MAX_PORTS cells: a
            # wildcard over 512-cell arrays on every switch at once is work a software switch does
            # between packets (it stalled the demo's flows for up to 2 s at each refresh)
            ents += [_cell(cid, i) for i in sorted(ports | {P4.CPU_PORT})]
        else:
            ents.append(_cell(cid))
    # One wildcard per table: PI/bmv2 answers UNIMPLEMENTED to table_id 0 ("all tables"), and a
    # per-table wildcard is what the spec requires every server to support.
    for dc in names.p4info.direct_counters:
        dce = p4runtime_pb2.Entity()
        dce.direct_counter_entry.table_entry.table_id = dc.direct_table_id
        ents.append(dce)
    return kinds, ents


class TelemetryCollector:
    """Holds the latest counters of every switch and the recent postcards."""

    def __init__(self, watched_ports: dict[str, tuple[int, ...]], max_postcards: int = 1000,
                 log: logging.Logger | None = None) -> None:
        self.watched_ports = watched_ports
        self.log = log or logging.getLogger("controller.telemetry")
        self._lock = threading.Lock()
        self.counters: dict[str, SwitchCounters] = {}
        # the switches whose latest read succeeded: a failed read or a lost session (``mark_stale``)
        # removes one, so an exporter can tell current counters from a lost switch's last ones
        self.fresh: set[str] = set()
        # per switch, how many times it was marked stale: a read that began before a mark (a reconnect,
        # a lost session) keeps its counters as the latest read but does not make the switch fresh
        self._stale_marks: dict[str, int] = {}
        self.no_register_reads: set[str] = set()  # switches that answered a register read UNIMPLEMENTED
        self.postcards: deque[Postcard] = deque(maxlen=max_postcards)
        self.postcards_total: dict[str, int] = {}
        self.bad_postcards = 0
        # set by the controller's close(): a read that close() cancels (run() no longer waits for the
        # switches' workers) is no failure to report
        self.closing = False

    def on_packet_in(self, pi: PacketIn) -> bool:
        """Take a postcard PacketIn; False for other PacketIns."""
        if pi.metadata.get("reason") != REASON_POSTCARD:
            return False
        try:
            pc = decode_postcard(pi)
        except Exception as e:  # noqa: BLE001 - a malformed postcard is counted, not fatal
            self.bad_postcards += 1
            self.log.warning("bad postcard", extra={"fields": {"switch": pi.switch, "error": str(e)}})
            return True
        with self._lock:
            self.postcards.append(pc)
            self.postcards_total[pi.switch] = self.postcards_total.get(pi.switch, 0) + 1
        return True

    def poll(self, s: SwitchSession, timeout_s: float | None = None) -> SwitchCounters:
        """Read one switch's counters and queue depths and keep them: per-port arrays at the watched ports
        (and the CPU port) by index, the rest with wildcard reads -- one ReadRequest for the counters,
        one for the queue-depth registers (:meth:`_read_qdepth`), each within ``timeout_s`` (default: the
        session's RPC timeout; the daemon gives ``Options.counters_timeout_s``).

        One request, not one per counter and table: a P4Runtime Read may carry any number of entities
        (the server answers each in turn; PI's does, and so does softswitch's), and on a Python switch each
        RPC costs more than the cells it returns.  Sixteen reads a switch made every demo refresh a burst
        of 0.5 s of CPU on the 2-core machine, which stalled every path for ~200 ms at once and made RACK
        retire healthy EVs (docs/demo.md)."""
        with self._lock:
            marks = self._stale_marks.get(s.name, 0)
        names = s.names
        if names is None:
            # a SessionError, as any other read that cannot be made: the daemon logs it and goes on (a
            # reconnect clears the names between its check and this read; a ValueError left its pool)
            self.mark_stale(s.name)
            raise SessionError(f"switch {s.name}: no P4Info yet (reconnected; the next converge resolves it)")
        ports = set(self.watched_ports.get(s.name, ()))
        out = SwitchCounters(read_at=time.time())
        kinds, ents = poll_entities(names, ports)
        for dc in names.p4info.direct_counters:  # every table with a counter is listed, read or not
            t = names.table_by_id.get(dc.direct_table_id)
            out.tables.setdefault(t.preamble.name if t else str(dc.direct_table_id), (0, 0))
        try:
            got = s.read(ents, timeout_s) if ents else []
        except SessionError:
            self.mark_stale(s.name)
            raise
        for e in got:
            which = e.WhichOneof("entity")
            if which == "counter_entry":
                c = e.counter_entry
                kind, idx, p, b = kinds.get(c.counter_id), c.index.index, c.data.packet_count, c.data.byte_count
                if kind == "congestion":
                    ev = CONGESTION_EVENTS.get(idx, f"event_{idx}")
                    out.congestion[ev] = out.congestion.get(ev, 0) + p
                elif kind == "drop":
                    reason = DROP_REASONS.get(idx, f"reason_{idx}")
                    op, ob = out.drops.get(reason, (0, 0))
                    if p or idx in DROP_REASONS:
                        out.drops[reason] = (op + p, ob + b)
                elif kind in ("rx", "tx") and (idx in ports or p):
                    (out.port_rx if kind == "rx" else out.port_tx)[idx] = (p, b)
            elif which == "direct_counter_entry":
                tid = e.direct_counter_entry.table_entry.table_id
                t = names.table_by_id.get(tid)
                tname = t.preamble.name if t else str(tid)
                p, b = out.tables.get(tname, (0, 0))
                out.tables[tname] = (p + e.direct_counter_entry.data.packet_count,
                                     b + e.direct_counter_entry.data.byte_count)
        self._read_qdepth(s, ports, out, timeout_s)
        with self._lock:
            self.counters[s.name] = out
            if self._stale_marks.get(s.name, 0) == marks:
                self.fresh.add(s.name)
        return out

    def mark_stale(self, switch: str) -> None:
        """The switch's counters could not be read (session lost, read failed): what is kept of them is
        no longer current (``Controller.metrics_snapshot`` exports none of it until a read succeeds)."""
        with self._lock:
            self.fresh.discard(switch)
            self._stale_marks[switch] = self._stale_marks.get(switch, 0) + 1

    def _read_qdepth(self, s: SwitchSession, ports: set[int], out: SwitchCounters,
                     timeout_s: float | None = None) -> None:
        """The queue-depth estimate registers at the watched ports, in a request of their own: PI (so
        bmv2) answers a RegisterEntry read with UNIMPLEMENTED ("Register reads are not supported yet"),
        which in one request with the counters cost every counter of the switch.  A switch that answered
        so is not asked again (its ``qdepth`` stays empty); a read the switch did not answer
        (``p4rt.no_answer``) is raised, as the counter read's would be (the switch stopped answering in
        between); any other failure is logged and the counters are kept."""
        names = s.names
        if not ports or names is None or s.name in self.no_register_reads:
            return
        regs = {reg.preamble.id for reg in names.registers_named(R_EGRESS_QDEPTH)}
        ents = []
        for rid in regs:
            for i in sorted(ports):
                ent = p4runtime_pb2.Entity()
                ent.register_entry.register_id = rid
                ent.register_entry.index.index = i
                ents.append(ent)
        if not ents:
            return
        try:
            got = s.read(ents, timeout_s)
        except SessionError as e:
            if no_answer(e.code):
                self.mark_stale(s.name)
                raise
            if e.code == grpc.StatusCode.UNIMPLEMENTED:
                self.no_register_reads.add(s.name)
                self.log.info("switch %s reads no registers over P4Runtime: queue depths not polled", s.name)
            elif not self.closing:
                self.log.warning("queue depth read failed", extra={"fields": {"switch": s.name, "error": str(e)}})
            return
        for e in got:
            if e.register_entry.register_id in regs and e.register_entry.index.index in ports:
                out.qdepth[e.register_entry.index.index] = int.from_bytes(e.register_entry.data.bitstring, "big")

    def snapshot(self) -> tuple[dict[str, SwitchCounters], dict[str, int], list[Postcard]]:
        """(counters per switch, postcards per switch, recent postcards) — copies, safe to export.  The
        counters are each switch's latest read, current or not (``fresh`` says which are)."""
        with self._lock:
            return dict(self.counters), dict(self.postcards_total), list(self.postcards)
