"""Wiring check: a PacketOut probe on every fabric port, expected as a PacketIn at the named neighbour.

A probe is a bare Ethernet frame of ethertype ``ETHERTYPE_LINK_PROBE`` (0x88B5).  Every switch
punts such a frame to its CPU on arrival, before port admin state and forwarding (no table entry
is involved), so it comes back as a PacketIn (reason ``LINK_PROBE``) carrying the ingress port at
whatever switch really is at the other end of the cable.  The payload names the sending switch,
port and round, so each arrival is matched to its probe.
"""
from __future__ import annotations

import itertools
import logging
import secrets
import struct
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from .mapping import ETHERTYPE_LINK_PROBE, REASON_LINK_PROBE
from .session import PacketIn, SessionError, SwitchSession
from .sidplan import SidPlan
from .topology import Topology

MAGIC = b"MRCWIRE2"
# IEEE 802.1Q nearest-bridge group address: a bridge never forwards it, so a probe stays on its cable.
PROBE_DST_MAC = bytes.fromhex("0180c200000e")
_ETH = struct.Struct(">6s6sH")
_HDR = struct.Struct(">8sIHB")  # magic, round, port, name length; then the switch name (utf-8)
MIN_FRAME = 60  # Ethernet minimum without FCS: shorter probes are zero-padded

UP, DEAD, MISWIRED, HALF = "up", "dead", "miswired", "half"


def probe_frame(switch: str, port: int, round_id: int, src_mac: str) -> bytes:
    """The probe sent out of ``switch:port``: Ethernet (0x88B5) / magic, round, port, name."""
    name = switch.encode()
    if len(name) > 255:
        raise ValueError(f"switch name {switch!r} is longer than 255 bytes")
    if not 0 <= port <= 0xFFFF:
        raise ValueError(f"port {port} does not fit 16 bits")
    frame = (_ETH.pack(PROBE_DST_MAC, bytes.fromhex(src_mac.replace(":", "")), ETHERTYPE_LINK_PROBE) +
             _HDR.pack(MAGIC, round_id & 0xFFFFFFFF, port, len(name)) + name)
    return frame.ljust(MIN_FRAME, b"\0")


def parse_probe(frame: bytes) -> tuple[str, int, int] | None:
    """(switch, port, round) of a probe frame (padding allowed), or None if the frame is not one."""
    off = _ETH.size
    if len(frame) < off + _HDR.size or _ETH.unpack_from(frame)[2] != ETHERTYPE_LINK_PROBE:
        return None
    magic, rnd, port, name_len = _HDR.unpack_from(frame, off)
    name = frame[off + _HDR.size:off + _HDR.size + name_len]
    if magic != MAGIC or len(name) != name_len:
        return None
    try:
        return name.decode(), port, rnd
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True, slots=True)
class End:
    """``switch:port``."""

    switch: str
    port: int

    def __str__(self) -> str:
        return f"{self.switch}:{self.port}"


@dataclass
class LinkState:
    """One fabric link of the topology and what the probes saw on it."""

    a: End
    b: End
    state: str = DEAD  # up | half (one direction only) | dead | miswired
    detail: str = ""


@dataclass
class WiringReport:
    """The result of one probe round."""

    round_id: int
    links: list[LinkState] = field(default_factory=list)
    miswired: list[tuple[End, End, End]] = field(default_factory=list)  # (sent from, expected at, arrived at)
    dead: list[tuple[End, End]] = field(default_factory=list)  # (sent from, expected at)
    unexpected: list[tuple[End, End]] = field(default_factory=list)  # (arrived at, sent from): no link there
    skipped: list[str] = field(default_factory=list)  # switches not probed (not primary / unreachable)
    resent: int = 0  # probes sent again because no copy had arrived within the timeout
    late_before: int = 0  # probes of earlier rounds that arrived after their round had ended

    @property
    def ok(self) -> bool:
        return not (self.miswired or self.dead or self.unexpected)

    def summary(self) -> dict:
        return {"round": self.round_id, "links_up": sum(ln.state == UP for ln in self.links),
                "links": len(self.links), "miswired": [f"{s}->{g} (expected {e})" for s, e, g in self.miswired],
                "dead": [f"{s}->{e}" for s, e in self.dead],
                "unexpected": [f"{s}->{a}" for a, s in self.unexpected], "skipped": self.skipped,
                "resent": self.resent, "late_before": self.late_before}


class WiringChecker:
    """Sends probe rounds through the sessions and matches the PacketIns to the topology."""

    def __init__(self, topology: Topology, sids: SidPlan, sessions: Mapping[str, SwitchSession],
                 log: logging.Logger | None = None) -> None:
        self.topo, self.sids, self.sessions = topology, sids, sessions
        self.log = log or logging.getLogger("controller.wiring")
        self.expected: dict[End, End] = {}
        self.links: list[tuple[End, End]] = []
        for lk in topology.links:
            if lk.a.node in topology.switches and lk.b.node in topology.switches:
                a, b = End(lk.a.node, lk.a.port), End(lk.b.node, lk.b.port)
                self.expected[a], self.expected[b] = b, a
                self.links.append((a, b))
        # a random first round: two checkers (or two controllers) never share round ids, so a late
        # probe of another checker's round cannot be taken for one of ours
        self._rounds = itertools.count(secrets.randbits(31))
        self._lock = threading.Condition()
        self._round = -1
        self._arrivals: dict[End, set[End]] = {}  # sent from -> where it arrived (current round)
        self._first_round = -1
        self._closed = -1  # the last round whose wait is over
        self._late = 0  # probes of this checker's earlier rounds that arrived after their round
        self.liveness: dict[tuple[str, str], str] = {(str(a), str(b)): DEAD for a, b in self.links}
        self.last: WiringReport | None = None

    def on_packet_in(self, pi: PacketIn) -> bool:
        """Record a probe arrival; False if the PacketIn is not a probe.

        Only the link-probe punt counts as a cable: a probe reaching the CPU for another reason
        (a route, say) is consumed but proves nothing about where it was plugged in."""
        got = parse_probe(pi.payload)
        if got is None:
            return False
        if pi.metadata.get("reason") != REASON_LINK_PROBE:
            self.log.debug("probe with another PacketIn reason ignored",
                           extra={"fields": {"switch": pi.switch, "reason": pi.metadata.get("reason")}})
            return True
        name, port, rnd = got
        with self._lock:
            if rnd == self._round:
                src, at = End(name, port), End(pi.switch, pi.metadata.get("ingress_port", -1))
                if at != src:  # a frame seen on the very port that sent it proves no cable
                    self._arrivals.setdefault(src, set()).add(at)
                self._lock.notify_all()
            elif self._first_round <= rnd <= self._closed:  # ours, but its round is over: too slow
                self._late += 1
        return True

    def check(self, timeout_s: float = 1.5, attempts: int = 2) -> WiringReport:
        """One round: probe every fabric port of every primary switch, wait (bounded), evaluate.

        A probe with no arrival after ``timeout_s`` is sent again, up to ``attempts`` sends in all,
        each followed by another ``timeout_s`` wait; every copy carries the same round id, so a
        late first copy counts as well as the resent one.  A slow target (bmv2 on a loaded machine
        took more than a second for one probe) then shows a link up, not dead; a dead cable is
        still dead after the last wait, and a miswire is seen on the first arrival."""
        rnd = next(self._rounds) & 0xFFFFFFFF
        with self._lock:
            if self._first_round < 0:
                self._first_round = rnd
            self._round, self._arrivals, late = rnd, {}, self._late
            self._late = 0
        report = WiringReport(rnd, late_before=late)
        sent: list[End] = []
        by_switch: dict[str, list[End]] = {}
        for name in sorted({e.switch for e in self.expected}):
            s = self.sessions.get(name)
            if s is None or not s.is_primary or s.names is None:
                report.skipped.append(name)
                continue
            by_switch[name] = sorted((e for e in self.expected if e.switch == name), key=lambda e: e.port)
        todo = [end for ends in by_switch.values() for end in ends]
        arrivals: dict[End, set[End]] = {}
        for attempt in range(max(1, attempts)):
            if attempt:
                report.resent += len(todo)
            for end in todo:
                try:
                    self.sessions[end.switch].packet_out(
                        probe_frame(end.switch, end.port, rnd, self.sids.switch_mac(end.switch, end.port)),
                        egress_port=end.port)
                    if attempt == 0:
                        sent.append(end)
                except SessionError as e:
                    self.log.warning("probe not sent", extra={"fields": {"end": str(end), "error": str(e)}})
            deadline = time.monotonic() + timeout_s
            with self._lock:
                while (left := deadline - time.monotonic()) > 0 and not all(e in self._arrivals for e in sent):
                    self._lock.wait(left)
                arrivals = {src: set(seen) for src, seen in self._arrivals.items()}
            todo = [e for e in sent if e not in arrivals]
            if not todo:
                break
        with self._lock:  # the round is over: a copy arriving from now on is late
            self._round, self._closed = -1, rnd
        for src in sent:
            exp, seen = self.expected[src], arrivals.get(src, set())
            if not seen:
                report.dead.append((src, exp))
            elif exp not in seen:  # an arrival at the expected end proves the cable; extra copies do not
                got = min(seen, key=str)
                if got in self.expected:
                    report.miswired.append((src, exp, got))
                else:
                    report.unexpected.append((got, src))
        skipped = set(report.skipped)
        elsewhere = {src: got for src, _, got in report.miswired} | {src: got for got, src in report.unexpected}
        for a, b in self.links:
            if a.switch in skipped and b.switch in skipped:
                continue
            ok_ab = b in arrivals.get(a, ()) or a.switch in skipped
            ok_ba = a in arrivals.get(b, ()) or b.switch in skipped
            if a in elsewhere or b in elsewhere:  # a probe of this cable came out somewhere else
                st, det = MISWIRED, ", ".join(f"{s} reached {elsewhere[s]}" for s in (a, b) if s in elsewhere)
            elif ok_ab and ok_ba:
                st, det = UP, ""
            elif ok_ab or ok_ba:
                st, det = HALF, f"only {a}->{b}" if ok_ab else f"only {b}->{a}"
            else:
                st, det = DEAD, "no probe arrived"
            report.links.append(LinkState(a, b, st, det))
            self.liveness[(str(a), str(b))] = st
        self.last = report
        level = logging.INFO if report.ok else logging.WARNING
        self.log.log(level, "wiring check", extra={"fields": report.summary()})
        return report
