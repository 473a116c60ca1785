"""Wiring check: a PacketOut probe on every fabric port, expected as a PacketIn at the named neighbour.

A probe is a bare Ethernet frame of ethertype ``ETHERTYPE_LINK_PROBE`` (0x88B5).  Every switch
punts such a frame to its CPU on arrival, before port admin state and forwarding (no table entry
is involved), so it comes back as a PacketIn (reason ``LINK_PROBE``) carrying the ingress port at
whatever switch really is at the other end of the cable.  The payload names the sending switch,
port and round, so each arrival is matched to its probe.
"""
from __future__ import annotations

import collections
import itertools
import logging
import secrets
import struct
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from .mapping import ETHERTYPE_LINK_PROBE, REASON_LINK_PROBE
from .repeatlog import RepeatLog
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
# how long a round waits, beyond the caller's timeout, on a target whose probes are slow (round_wait)
LATENCY_FACTOR = 3.0  # times the delay of the slowest late probe of the recent rounds
LATENCY_ROUNDS = 5  # rounds a late probe is remembered for
FIRST_ROUND_S = 3.0  # a checker's first round, which knows nothing about the target yet
MAX_WAIT_S = 10.0


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
    # of those, the ones whose stream is up: they take probes in, but their PacketIns cannot be read as
    # probe arrivals (no P4Info names yet while they converge, or another controller is their primary),
    # so a probe sent to them proves nothing either way and their links stay unknown
    unseen: list[str] = field(default_factory=list)
    resent: int = 0  # probes sent again (same round) because no copy had arrived half-way
    late_before: int = 0  # probes of earlier rounds that arrived after their round had ended
    wait_s: float = 0.0  # how long this round would wait for the last arrival

    @property
    def ok(self) -> bool:
        return not (self.miswired or self.dead or self.unexpected)

    def summary(self) -> dict:
        return {"round": self.round_id, "links_up": sum(ln.state == UP for ln in self.links),
                "links": len(self.links), "miswired": [f"{s}->{g} (expected {e})" for s, e, g in self.miswired],
                "dead": [f"{s}->{e}" for s, e in self.dead],
                "unexpected": [f"{s}->{a}" for a, s in self.unexpected], "skipped": self.skipped,
                "unseen": self.unseen,
                "resent": self.resent, "late_before": self.late_before, "wait_s": round(self.wait_s, 3)}


class WiringChecker:
    """Sends probe rounds through the sessions and matches the PacketIns to the topology."""

    def __init__(self, topology: Topology, sids: SidPlan, sessions: Mapping[str, SwitchSession],
                 log: logging.Logger | None = None, first_round_s: float = FIRST_ROUND_S,
                 max_wait_s: float = MAX_WAIT_S) -> None:
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
        # one round at a time: a round's state (round id, arrivals, send times) is the checker's, so a
        # second round started meanwhile (a script's wiring_check() while run()'s wiring thread probes)
        # took the first one's arrivals, and the first, ending, closed the second: every probe of the
        # second then counted as lost and every cable was reported dead
        self._one_round = threading.Lock()
        self._round = -1
        self._arrivals: dict[End, set[End]] = {}  # sent from -> where it arrived (current round)
        self._first_round = -1
        self._closed = -1  # the last round whose wait is over
        self._late = 0  # probes of this checker's earlier rounds that arrived after their round
        self._sent_at: dict[End, float] = {}  # send time of each probe of the current round
        self._closed_sent: dict[End, float] = {}  # ... and of the last closed round (late copies)
        # (round, delay) of probes that arrived after their round: how slow the target has been
        self._late_delays: collections.deque[tuple[int, float]] = collections.deque(maxlen=64)
        self.first_round_s = first_round_s
        self.max_wait_s = max_wait_s  # the longest a round waits, however slow the probes have been
        # (a, b) -> the state the last round that could judge the link found; a link no round has judged
        # (before the first, on a backup controller, which never probes, or while both its switches are
        # skipped) is absent: unknown, not dead (the metrics export no series for it, the view says unknown)
        self.liveness: dict[tuple[str, str], str] = {}
        self._repeat = RepeatLog()  # what the last round logged above DEBUG found, and when
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
                if rnd == self._closed and (t := self._closed_sent.get(End(name, port))) is not None:
                    self._late_delays.append((rnd, time.monotonic() - t))  # the next rounds wait long enough
        return True

    def _send(self, ends: list[End], rnd: int, again: bool = False) -> list[End]:
        """PacketOut one probe out of each end; the ends it could be sent from."""
        out = []
        for end in ends:
            try:
                self.sessions[end.switch].packet_out(
                    probe_frame(end.switch, end.port, rnd, self.sids.switch_mac(end.switch, end.port)),
                    egress_port=end.port)
                out.append(end)
                if not again:
                    with self._lock:
                        self._sent_at[end] = time.monotonic()
            except SessionError as e:
                self.log.warning("probe not sent", extra={"fields": {"end": str(end), "error": str(e)}})
        return out

    def round_wait(self, timeout_s: float) -> float:
        """How long a round waits for its last probe: ``timeout_s``, or longer on a target whose
        probes have been seen to come too late -- ``LATENCY_FACTOR`` times the delay of the slowest
        probe that arrived after its round in the last ``LATENCY_ROUNDS`` rounds -- and at least
        ``first_round_s`` in a checker's first round, which has nothing to go by (capped at
        ``max_wait_s``, ``MAX_WAIT_S`` unless the caller chose: the live view caps it near its timeout).  A target whose probes all arrive in time keeps ``timeout_s``, so a dead
        cable is reported as fast as before."""
        with self._lock:
            seen = max((d for r, d in self._late_delays if r > self._closed - LATENCY_ROUNDS), default=0.0)
            first = self._first_round < 0
        wait = max(timeout_s, LATENCY_FACTOR * seen, self.first_round_s if first else 0.0)
        return min(wait, max(timeout_s, self.max_wait_s))

    def check(self, timeout_s: float = 1.5) -> WiringReport:
        """One round: probe every fabric port of every primary switch, wait (bounded), evaluate.
        Rounds run one at a time: a call made while another thread's round is in progress waits for
        it to end (at most its ``round_wait``), then runs its own.

        The round waits ``round_wait(timeout_s)``, so a slow target (bmv2 on a loaded machine once
        took more than a second for one probe) is given the time its probes need instead of having
        good cables called dead, while a fast one keeps the short timeout and a dead cable is still
        reported after one round.  Half-way, every probe with no arrival yet is sent once more (same
        round id): a lost probe does not make a dead cable either.  A miswire is seen on the first
        arrival."""
        with self._one_round:
            return self._check(timeout_s)

    def _check(self, timeout_s: float) -> WiringReport:
        wait = self.round_wait(timeout_s)
        rnd = next(self._rounds) & 0xFFFFFFFF
        with self._lock:
            if self._first_round < 0:
                self._first_round = rnd
            self._round, self._arrivals, late = rnd, {}, self._late
            self._late, self._sent_at = 0, {}
        report = WiringReport(rnd, late_before=late, wait_s=wait)
        sent: list[End] = []
        for name in sorted({e.switch for e in self.expected}):
            s = self.sessions.get(name)
            if s is None or not s.may_act or s.names is None:
                report.skipped.append(name)
                up = getattr(s, "stream_up", None)
                if up is not None and up.is_set():
                    report.unseen.append(name)
                continue
            sent += sorted((e for e in self.expected if e.switch == name), key=lambda e: e.port)
        t0 = time.monotonic()
        sent = self._send(sent, rnd)
        arrivals: dict[End, set[End]] = {}
        for until in (t0 + wait / 2, t0 + wait):
            with self._lock:
                while (left := until - time.monotonic()) > 0 and not all(e in self._arrivals for e in sent):
                    self._lock.wait(left)
                arrivals = {src: set(seen) for src, seen in self._arrivals.items()}
            todo = [e for e in sent if e not in arrivals]
            if not todo:
                break
            if until < t0 + wait:
                report.resent += len(self._send(todo, rnd, again=True))
        with self._lock:  # the round is over: a copy arriving from now on is late
            self._round, self._closed, self._closed_sent = -1, rnd, self._sent_at
        unseen = set(report.unseen)
        for src in sent:
            exp, seen = self.expected[src], arrivals.get(src, set())
            if not seen:
                if exp.switch not in unseen:  # arrived or not, it could not have been seen
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
            if (a.switch in skipped and b.switch in skipped) or a.switch in unseen or b.switch in unseen:
                # nothing seen either way, or one end cannot report what reaches it (a switch still
                # converging at start-up has no names to read a probe's PacketIn with): no longer known.
                # It was dead, logged as such and exported mrc_link_up 0 until the next round, 0.2 s later
                # (h-new3, 2026-12-07); a *stopped* switch's stream is down, and its links are dead (below)
                self.liveness.pop((str(a), str(b)), None)
                continue
            ok_ab = b in arrivals.get(a, ()) or a.switch in skipped
            ok_ba = a in arrivals.get(b, ()) or b.switch in skipped
            if a in elsewhere or b in elsewhere:  # a probe of this cable came out somewhere else
                st, det = MISWIRED, ", ".join(f"{s} reached {elsewhere[s]}" for s in (a, b) if s in elsewhere)
            elif ok_ab and ok_ba:
                st, det = UP, ""
            elif a.switch in skipped or b.switch in skipped:
                # one direction could be probed, and its probe did not arrive: nothing was seen on the
                # cable (a stopped switch reports nothing), so it is dead, not "half" -- which would
                # claim the direction from the switch that was never probed works
                st, det = DEAD, f"no probe arrived; {a.switch if a.switch in skipped else b.switch} not probed"
            elif ok_ab or ok_ba:
                st, det = HALF, f"only {a}->{b}" if ok_ab else f"only {b}->{a}"
            else:
                st, det = DEAD, "no probe arrived"
            report.links.append(LinkState(a, b, st, det))
            self.liveness[(str(a), str(b))] = st
        self.last = report
        # a round runs every 0.5-10 s: its line is INFO (all well) or WARNING (a problem) when what it
        # found differs from the round before, and again every REPEAT_LOG_S while it stays; the other
        # rounds log at DEBUG (a dead cable was a WARNING line every 0.5 s with the live view on)
        found = (report.ok, tuple(report.miswired), tuple(report.dead), tuple(report.unexpected),
                 tuple(report.skipped))
        level = (logging.INFO if report.ok else logging.WARNING) if self._repeat.due(found) else logging.DEBUG
        self.log.log(level, "wiring check", extra={"fields": report.summary()})
        return report
