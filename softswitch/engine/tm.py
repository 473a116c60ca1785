"""Traffic manager: per egress port, 8 strict-priority FIFO queues with depth and rate limits.

Modelled on bmv2's ``QueueingLogicPriRL``: a packet's departure time is fixed when it is
enqueued (``max(now, previous departure + 1/rate)``), so the average rate is exact even when the
packet loop wakes up late; a full queue tail-drops.  Priority 0 is served first, then 1, ... 7,
as bmv2 does since its PR #1276 (November 2024: a packet's ``priority`` is its queue id, and queue 0
is the highest; before it, bmv2 put priority p in queue 7 - p and served 7 first).  The bmv2 1.15.5
the project is checked against has it (docs/softswitch.md says how that was told).  bmv2's
defaults: 64 packets per queue, no rate limit.

bmv2's rates are per priority queue: a port whose 8 queues all have rate R can send 8 x R when
every queue holds packets, so a second traffic class adds capacity instead of sharing the link.
The link rate (``set_link_rate``, softswitch only) is the port's serialisation: one frame per
1/rate whichever queue it comes from, the highest eligible priority (lowest value) first.  Its clock restarts
when an idle port gets a packet, and a backlog may catch up slots a late wake-up missed, so its
average is exact too.  A link rate in bits/s (``set_link_bps``, softswitch only) serialises the
same way but charges each frame its bytes on the wire (frame + ``WIRE_OVERHEAD``): a 100-byte ACK
then costs a link about 1/66 of an 8 KiB data frame instead of a whole frame slot.  The frame is charged
its length at dequeue; when egress makes it shorter (``truncate``: a trimmed packet) or drops it,
the packet loop refunds the difference (``PortQueues.refund``), so a trimmed header costs its own
bytes as on a real switch, where it is serialised after egress.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from softswitch.contract import TmItem

NB_PRIORITIES = 8
_NOT_A_PRIORITY = -NB_PRIORITIES  # bits that are never set in 0..NB_PRIORITIES - 1 (any negative has them)
assert NB_PRIORITIES & (NB_PRIORITIES - 1) == 0
DEFAULT_QUEUE_DEPTH = 64  # packets, bmv2 simple_switch's default egress buffer capacity
DEFAULT_QUEUE_RATE = 0  # packets/s; 0 means unlimited, as in bmv2
QUANTUM = 16  # packets served from one port before the next port's turn
WIRE_OVERHEAD = 24  # bytes a frame costs a link beyond its own: preamble + SFD (8), FCS (4), gap (12)


@dataclass(slots=True)
class QueueStats:
    """Counters of one priority queue."""

    enqueued: int = 0
    dequeued: int = 0
    dropped: int = 0
    passed: int = 0  # went straight to egress with the queue empty (the loop's straight path)


@dataclass(slots=True)
class _Queue:
    """One FIFO of (departure_us, item) with its limits."""

    depth: int
    interval_us: float  # 1e6 / rate, 0.0 when unlimited
    items: deque = field(default_factory=deque)
    last_departure_us: float = -1e18  # no packet yet: the first one leaves at once
    stats: QueueStats = field(default_factory=QueueStats)


def _interval(rate_pps: int | None) -> float:
    return 0.0 if not rate_pps else 1e6 / rate_pps


class PortQueues:
    """The 8 priority queues of one egress port plus its fixed link delay."""

    __slots__ = ("count", "direct", "link_bps", "link_delay_us", "link_free_us", "link_interval_us", "link_rate_pps",
                 "link_us_per_byte", "mask", "port", "queues", "rate_pps", "stats")

    def __init__(self, port: int, depth: int, rate_pps: int, link_rate_pps: int = 0) -> None:
        self.port = port
        self.queues = [_Queue(depth, _interval(rate_pps)) for _ in range(NB_PRIORITIES)]
        self.rate_pps = [rate_pps] * NB_PRIORITIES
        self.count = 0  # packets over all priorities
        self.mask = 0  # bit p set when queue p is not empty
        self.link_delay_us = 0
        self.link_rate_pps = link_rate_pps  # shared by all priorities; 0 = no link limit
        self.link_interval_us = _interval(link_rate_pps)
        self.link_bps = 0  # shared by all priorities, charged per byte on the wire; 0 = none
        self.link_us_per_byte = 0.0
        self.link_free_us = -1e18  # when the link can start its next frame
        self.stats = [q.stats for q in self.queues]
        # bit p set when a packet of priority p may go straight to egress while the port is idle
        # (count 0): the queue takes packets (depth > 0) and neither it nor the port models a
        # rate or a delay, so it would leave at once; see ``TrafficManager.pass_through``
        self.direct = 0
        self.refresh_direct()

    def refresh_direct(self) -> None:
        """Recompute ``direct`` after a change of depth, rate, link rate or link delay."""
        if self.link_interval_us or self.link_us_per_byte or self.link_delay_us:
            self.direct = 0
            return
        self.direct = sum(1 << pri for pri, q in enumerate(self.queues) if q.depth > 0 and not q.interval_us)

    def set_link_bps(self, bps: int) -> None:
        """This port's link in bits/s, shared by its queues and charged per byte (0 = none)."""
        self.link_bps = bps
        self.link_us_per_byte = 8e6 / bps if bps else 0.0
        self.refresh_direct()

    def link_cost_us(self, length: int) -> float:
        """How long a frame of ``length`` bytes holds the link (frame rate and bit rate together)."""
        return self.link_interval_us + (length + WIRE_OVERHEAD) * self.link_us_per_byte

    def refund(self, charged: int, sent: int) -> None:
        """A frame charged ``charged`` bytes at dequeue went out with ``sent`` (0: egress dropped it):
        give the link back the time of the difference (bit-rate links only)."""
        if self.link_us_per_byte and sent < charged:
            if not sent:
                charged += WIRE_OVERHEAD
            self.link_free_us -= (charged - sent) * self.link_us_per_byte


class TrafficManager:
    """Egress queues of every port; single-threaded: only the packet loop calls enqueue/dequeue.

    Configuration setters may be called from other threads: they only replace plain numbers.
    """

    def __init__(self, default_depth: int = DEFAULT_QUEUE_DEPTH,
                 default_rate_pps: int = DEFAULT_QUEUE_RATE) -> None:
        self.default_depth = default_depth
        self.default_rate_pps = default_rate_pps
        self.default_link_rate_pps = 0
        self.default_link_bps = 0
        self.default_link_delay_us = 0
        self.ports: dict[int, PortQueues] = {}
        self.total = 0  # packets queued over all ports
        self._ready: list[PortQueues] = []  # ports with count > 0

    # ---------------------------------------------------------------- configuration
    def port(self, port: int) -> PortQueues:
        """The queues of ``port``, created with the current defaults on first use."""
        pq = self.ports.get(port)
        if pq is None:
            pq = PortQueues(port, self.default_depth, self.default_rate_pps, self.default_link_rate_pps)
            if self.default_link_bps:
                pq.set_link_bps(self.default_link_bps)
            if self.default_link_delay_us:
                pq.link_delay_us = self.default_link_delay_us
                pq.refresh_direct()
            self.ports[port] = pq
        return pq

    def set_queue_depth(self, depth: int, port: int | None = None, priority: int | None = None) -> None:
        """bmv2 ``set_queue_depth``: all ports (and the default), one port, or one port+priority."""
        if depth < 0:
            raise ValueError(f"queue depth must be >= 0, got {depth}")
        for q in self._select(port, priority, "default_depth", depth):
            q.depth = depth
        self._refresh_direct()

    def set_queue_rate(self, rate_pps: int, port: int | None = None, priority: int | None = None) -> None:
        """bmv2 ``set_queue_rate`` in packets/s (0 = unlimited)."""
        if rate_pps < 0:
            raise ValueError(f"queue rate must be >= 0, got {rate_pps}")
        interval = _interval(rate_pps)
        for q in self._select(port, priority, "default_rate_pps", rate_pps):
            q.interval_us = interval
        for pq in ([self.port(port)] if port is not None else list(self.ports.values())):
            for pri in (range(NB_PRIORITIES) if priority is None else [priority]):
                pq.rate_pps[pri] = rate_pps
        self._refresh_direct()

    def set_link_rate(self, rate_pps: int, port: int | None = None) -> None:
        """The link rate of ``port`` (all ports and the default if None) in frames/s, shared by its 8
        priority queues (0 = none); softswitch's own, bmv2 has only per-queue rates."""
        if rate_pps < 0:
            raise ValueError(f"link rate must be >= 0, got {rate_pps}")
        if port is None:
            self.default_link_rate_pps = rate_pps
        for pq in ([self.port(port)] if port is not None else list(self.ports.values())):
            pq.link_rate_pps = rate_pps
            pq.link_interval_us = _interval(rate_pps)
            pq.refresh_direct()

    def set_link_bps(self, bps: int, port: int | None = None) -> None:
        """The link rate of ``port`` (all ports and the default if None) in bits/s, shared by its 8
        priority queues and charged per byte on the wire (0 = none); softswitch's own."""
        if bps < 0:
            raise ValueError(f"link rate must be >= 0 bits/s, got {bps}")
        if port is None:
            self.default_link_bps = bps
        for pq in ([self.port(port)] if port is not None else list(self.ports.values())):
            pq.set_link_bps(bps)

    def set_link_delay(self, delay_us: int, port: int | None = None) -> None:
        """Fixed delay applied to every frame of ``port`` (all ports and the default if None) after
        dequeue."""
        if delay_us < 0:
            raise ValueError(f"link delay must be >= 0, got {delay_us}")
        if port is None:
            self.default_link_delay_us = delay_us
        for pq in ([self.port(port)] if port is not None else list(self.ports.values())):
            pq.link_delay_us = delay_us
            pq.refresh_direct()

    def _refresh_direct(self) -> None:
        for pq in list(self.ports.values()):
            pq.refresh_direct()

    def _select(self, port: int | None, priority: int | None, default_attr: str, value: int) -> list[_Queue]:
        if priority is not None and not 0 <= priority < NB_PRIORITIES:
            raise ValueError(f"priority must be 0..{NB_PRIORITIES - 1}, got {priority}")
        if port is None:
            if priority is not None:
                raise ValueError("a priority needs a port")
            setattr(self, default_attr, value)
            return [q for pq in list(self.ports.values()) for q in pq.queues]
        pq = self.port(port)
        return pq.queues if priority is None else [pq.queues[priority]]

    # ---------------------------------------------------------------- data path
    def enqueue(self, item: TmItem, now_us: int) -> bool:
        """Queue ``item`` on its egress port and priority; False (and counted) when tail-dropped."""
        pq = self.ports.get(item.egress_port) or self.port(item.egress_port)
        pri = item.priority
        if pri & _NOT_A_PRIORITY:  # outside 0..NB_PRIORITIES - 1 (a power of two)
            pri = NB_PRIORITIES - 1 if pri > 0 else 0
        q = pq.queues[pri]
        items = q.items
        n = len(items)
        if n >= q.depth:
            q.stats.dropped += 1
            return False
        item.enq_timestamp_us = now_us
        item.enq_qdepth = n  # the packet's own priority queue, as bmv2 since PR #1270 (1.15.5 measured)
        item.qid = pri
        if q.interval_us:
            dep = q.last_departure_us + q.interval_us
            dep = max(dep, now_us)
            q.last_departure_us = dep
        else:
            dep = now_us
        items.append((dep, item))
        q.stats.enqueued += 1
        if pq.count == 0:
            self._ready.append(pq)
            pq.link_free_us = max(pq.link_free_us, now_us)  # an idle link banks no slots
        pq.count += 1
        if not n:  # the queue was empty (its bit is set exactly while it holds a packet)
            pq.mask |= 1 << pri
        self.total += 1
        return True

    def dequeue(self, now_us: int, budget: int, out: list) -> float | None:
        """Move up to ``budget`` eligible items into ``out`` as (port_queues, item).

        ``enq_qdepth``/``deq_qdepth`` count the packet's own priority queue, as bmv2 does since
        its PR #1270 (bmv2 1.15.5 reported 0 for a high-priority burst behind a low backlog).  Ports are served round-robin, up to ``QUANTUM`` packets each per turn; within a port the
        highest non-empty priority (lowest value) whose head may leave (rate limit) goes first.  Returns the
        earliest departure time (µs) of a packet held back by a rate limit, or None.
        """
        ready = self._ready
        next_due: float | None = None
        while budget > 0 and ready:
            progressed = False
            for pq in tuple(ready):
                queues = pq.queues
                n = min(budget, QUANTUM)
                m = pq.mask
                if not m & (m - 1):
                    # one priority holds packets: no choice between queues, take its eligible head
                    # packets in one go (the same order and fields as the general loop below)
                    pri = m.bit_length() - 1  # (its only bit)
                    q = queues[pri]
                    items = q.items
                    popleft = items.popleft
                    left = len(items)
                    took = 0
                    link = pq.link_interval_us or pq.link_us_per_byte
                    while took < n and left:
                        dep = items[0][0]
                        if link and pq.link_free_us > dep:
                            dep = pq.link_free_us  # the link is still sending an earlier frame
                        if dep > now_us:
                            if next_due is None or dep < next_due:
                                next_due = dep
                            break
                        item = popleft()[1]
                        if link:  # the frame starts at dep (a late wake-up catches up the slots)
                            pq.link_free_us = dep + pq.link_cost_us(item.length)
                        left -= 1
                        item.deq_timedelta_us = now_us - item.enq_timestamp_us
                        item.deq_qdepth = left
                        out.append((pq, item))
                        took += 1
                    if took:
                        progressed = True
                        q.stats.dequeued += took
                        budget -= took
                        self.total -= took
                        pq.count -= took
                        if not left:
                            pq.mask = 0
                        if not pq.count:
                            ready.remove(pq)
                    if budget <= 0:
                        break
                    continue
                link = pq.link_interval_us or pq.link_us_per_byte
                while n:
                    if link and pq.link_free_us > now_us:  # the link is busy: no queue may send
                        if next_due is None or pq.link_free_us < next_due:
                            next_due = pq.link_free_us
                        break
                    m = pq.mask
                    while m:
                        pri = (m & -m).bit_length() - 1  # the lowest value: the highest priority
                        q = queues[pri]
                        items = q.items
                        dep, item = items[0]
                        if dep > now_us:  # rate-limited: lower priorities may go
                            if next_due is None or dep < next_due:
                                next_due = dep
                            m &= ~(1 << pri)
                            continue
                        items.popleft()
                        if link:
                            pq.link_free_us = max(pq.link_free_us, dep) + pq.link_cost_us(item.length)
                        left = len(items)
                        if not left:
                            pq.mask &= ~(1 << pri)
                        item.deq_timedelta_us = now_us - item.enq_timestamp_us
                        item.deq_qdepth = left  # what stays in the packet's priority queue
                        q.stats.dequeued += 1
                        out.append((pq, item))
                        break
                    else:
                        break  # nothing eligible on this port
                    n -= 1
                    budget -= 1
                    progressed = True
                    pq.count -= 1
                    self.total -= 1
                    if not pq.count:
                        ready.remove(pq)
                        break
                if budget <= 0:
                    break
            if not progressed:
                break
        return next_due

    def depth(self, port: int, priority: int | None = None) -> int:
        """Packets currently queued on ``port`` (one priority or all)."""
        pq = self.ports.get(port)
        if pq is None:
            return 0
        return pq.count if priority is None else len(pq.queues[priority].items)

    def stats(self, port: int) -> list[dict]:
        """Per-priority configuration and counters of ``port``."""
        pq = self.port(port)
        return [
            {"priority": pri, "depth": q.depth, "rate_pps": pq.rate_pps[pri], "link_rate_pps": pq.link_rate_pps,
             "link_bps": pq.link_bps, "queued": len(q.items),
             # a packet passed straight through was enqueued and dequeued at once
             "enqueued": q.stats.enqueued + q.stats.passed, "dequeued": q.stats.dequeued + q.stats.passed,
             "dropped": q.stats.dropped}
            for pri, q in enumerate(pq.queues)
        ]
