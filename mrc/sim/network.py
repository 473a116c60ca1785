"""A deterministic discrete-event network of N paths between two sans-IO endpoints.

Each path has, per direction, a delay, a rate (serialisation through one FIFO queue), a queue
limit (tail drop), optional trimming and ECN marking above depth thresholds, seeded random loss,
reordering (extra delay) and duplication, and a schedule of down/up intervals.  Frames are routed to
a path by their EV (SRv6: the outer destination; STEV/UDP: flow label + UDP source port) and NIC port,
as registered by :meth:`Network.connect_qps`.  Same seed, same inputs -> the same run.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

from mrc.core.endpoint import Endpoint
from mrc.core.qp import QueuePair
from mrc.wire import formats as F
from mrc.wire.codec import Encap, mark_ce, trim_packet


@dataclass
class PathSpec:
    """One path (both directions use the same parameters, separate queues)."""

    delay_ns: int = 2_000
    rate_bps: float = 100e9
    queue_bytes: int = 512 * 1024  # tail drop when the queue would exceed this
    trim_bytes: int | None = None  # data packets are trimmed when the queue exceeds this
    ecn_bytes: int | None = None  # ECN-capable packets are CE-marked when the queue exceeds this
    loss: float = 0.0
    reorder: float = 0.0  # probability of an extra delay of reorder_ns
    reorder_ns: int = 0
    dup: float = 0.0
    down: list[tuple[int, int | None]] = field(default_factory=list)  # [(t_down, t_up or None)]
    max_frame: int | None = None  # frames longer than this are dropped silently (an MTU mismatch)

    def is_down(self, t: int) -> bool:
        for a, b in self.down:
            if a <= t and (b is None or t < b):
                return True
        return False


@dataclass
class LinkStats:
    sent: int = 0
    delivered: int = 0
    dropped_loss: int = 0
    dropped_down: int = 0
    dropped_queue: int = 0
    trimmed: int = 0
    ecn_marked: int = 0
    duplicated: int = 0
    bytes_delivered: int = 0


def frame_route_key(data: bytes, mode: str) -> bytes:
    """The bytes a path is chosen by: SRv6 outer destination, or flow label low 16 bits + UDP sport."""
    if mode == "srv6":
        return bytes(data[38:54])
    udp = F.ETH_LEN + F.IPV6_LEN + (F.HBH_TELEMETRY_LEN if data[20] == F.NH_HOP_BY_HOP else 0)
    return bytes(data[16:18]) + bytes(data[udp : udp + 2])


def encap_route_key(enc: Encap) -> bytes:
    if enc.mode == "srv6":
        return enc.outer_dst
    return (enc.flow_label & 0xFFFF).to_bytes(2, "big") + enc.sport.to_bytes(2, "big")


class _Link:
    __slots__ = ("free_ns", "ns_per_byte", "spec", "stats")

    def __init__(self, spec: PathSpec):
        self.spec = spec
        self.free_ns = 0.0
        self.stats = LinkStats()
        self.ns_per_byte = 8e9 / spec.rate_bps


class Network:
    """Two endpoints joined by ``paths``; :meth:`run` advances simulated time."""

    def __init__(self, a: Endpoint, b: Endpoint, paths: list[PathSpec], seed: int = 1):
        self.eps = (a, b)
        self.paths = paths
        self.links = {(0, i): _Link(p) for i, p in enumerate(paths)} | {(1, i): _Link(p) for i, p in enumerate(paths)}
        self.rng = random.Random(seed)
        self.routes: tuple[dict, dict] = ({}, {})
        self.now = 0
        self._heap: list = []
        self._seq = 0
        self._timer_at: list[int | None] = [None, None]
        self.unrouted = 0
        self.events = 0

    def connect_qps(self, qa: QueuePair, qb: QueuePair) -> None:
        """Route EV i of each QP over path i (both QPs must be past RTR, so their encaps exist)."""
        for side, qp in ((0, qa), (1, qb)):
            for i, e in enumerate(qp.evset.entries):
                if i >= len(self.paths):
                    raise ValueError(f"EV {i} has no path (only {len(self.paths)} paths)")
                self.routes[side][(e.port, encap_route_key(e.encap))] = i

    # ------------------------------------------------------------------ events
    def _push(self, t: int, kind: int, side: int, port: int = 0, data: bytes = b"") -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, side, port, data))

    def _send(self, side: int, port: int, data: bytes) -> None:
        ep = self.eps[side]
        key = (port, frame_route_key(data, ep.encap_mode))
        path = self.routes[side].get(key)
        if path is None:
            self.unrouted += 1
            return
        link = self.links[(side, path)]
        spec = link.spec
        st = link.stats
        st.sent += 1
        now = self.now
        if spec.is_down(now):
            st.dropped_down += 1
            return
        rng = self.rng
        if spec.loss and rng.random() < spec.loss:
            st.dropped_loss += 1
            return
        if spec.max_frame is not None and len(data) > spec.max_frame:
            st.dropped_loss += 1
            return
        backlog = (link.free_ns - now) if link.free_ns > now else 0.0
        depth = backlog / link.ns_per_byte
        n = len(data)
        if spec.trim_bytes is not None and depth + n > spec.trim_bytes:
            t = trim_packet(data)
            if t is not None:  # trimmed packets skip the queue (highest priority)
                st.trimmed += 1
                self._arrive(side, port, t, now + len(t) * link.ns_per_byte + spec.delay_ns, st)
                return
        if depth + n > spec.queue_bytes:
            st.dropped_queue += 1
            return
        if spec.ecn_bytes is not None and depth > spec.ecn_bytes:
            marked = mark_ce(data)
            if marked is not data:
                st.ecn_marked += 1
                data = marked
        start = max(now, link.free_ns)
        link.free_ns = start + n * link.ns_per_byte
        t = link.free_ns + spec.delay_ns
        if spec.reorder and rng.random() < spec.reorder:
            t += spec.reorder_ns
        self._arrive(side, port, data, t, st)
        if spec.dup and rng.random() < spec.dup:
            st.duplicated += 1
            self._arrive(side, port, data, t + 1, st)

    def _arrive(self, side: int, port: int, data: bytes, t: float, st: LinkStats) -> None:
        st.delivered += 1
        st.bytes_delivered += len(data)
        self._push(int(t), 0, 1 - side, port, data)

    def _flush(self, side: int) -> None:
        ep = self.eps[side]
        for port, data in ep.datagrams_to_send(self.now):
            self._send(side, port, data)
        t = ep.get_timer()
        if t is not None:
            if t <= self.now:
                t = self.now + 1
            cur = self._timer_at[side]
            if cur is None or t < cur or cur <= self.now:
                self._timer_at[side] = t
                self._push(t, 1, side)

    def send_later(self, t: int, side: int, port: int, data: bytes) -> None:
        """Let ``data`` leave ``side``'s ``port`` at ``t`` (ns), as if sent then: a frame a test's fault
        layer (one that replaces ``_send``) holds back re-enters the network here, past that layer."""
        self._push(int(t), 2, side, port, data)

    def kick(self) -> None:
        """Let both endpoints send what they have now (call after posting work)."""
        self._flush(0)
        self._flush(1)

    def run(self, until_ns: int | None = None, stop=None, max_events: int = 50_000_000) -> int:
        """Process events until none are left, ``until_ns`` passes, or ``stop()`` is true; returns now."""
        self.kick()
        heap = self._heap
        eps = self.eps
        while heap and self.events < max_events:
            t, _s, kind, side, port, data = heap[0]
            if until_ns is not None and t > until_ns:
                self.now = until_ns
                break
            heapq.heappop(heap)
            self.events += 1
            self.now = max(self.now, t)
            if kind == 0:
                eps[side].receive(data, port, self.now)
            elif kind == 2:  # a held frame (send_later): onto its path now, past any replaced _send
                type(self)._send(self, side, port, data)
                continue
            else:
                if self._timer_at[side] == t:
                    self._timer_at[side] = None
                eps[side].handle_timer(self.now)
            self._flush(side)
            if stop is not None and stop():
                break
        return self.now

    def stats(self) -> list[tuple[LinkStats, LinkStats]]:
        """Per path: (a->b stats, b->a stats)."""
        return [(self.links[(0, i)].stats, self.links[(1, i)].stats) for i in range(len(self.paths))]
