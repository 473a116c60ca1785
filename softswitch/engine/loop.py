"""The packet loop: receive → ingress → traffic manager → egress → transmit, in one thread.

One thread does everything (measured faster than an RX thread plus an egress thread under the
GIL: no hand-off, no locks on the hot path).  Other threads talk to it only through
``inject`` (a deque plus an eventfd wake-up) and ``set_pipeline`` (one attribute store).
"""
from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from itertools import repeat

from softswitch.contract import CLOCK_NOW, CLOCK_RX, INTERNAL_ERROR, IngressResult, Pipeline
from softswitch.engine.ports import LinuxPort
from softswitch.engine.tm import TrafficManager

log = logging.getLogger("softswitch.loop")

RX_BATCH = 64  # frames read from one socket per wake-up
TM_BATCH = 256  # items dequeued per round
RECIRC_CAPACITY = 1024  # like bmv2's high-priority input buffer
LINK_CHECK_S = 0.25  # how often link state is re-read
# CPython's GIL switch interval in a switch process (``softswitch.cli.run_switch``): how long the loop
# thread, woken from ``poll()`` for a due departure or a received frame, can wait for the GIL while
# another thread of the process runs Python -- the P4Runtime server answering a Read builds its
# protobuf messages in pure Python (README, "Dependencies and why"): 40-140 ms of CPU for a leaf's counters in
# the demo.  At the interpreter's default of 5 ms every wake-up of the loop came that much late, and a
# leaf stalled for 170-440 ms under a Read on the loaded 2-core machine, long enough for MRC to retire
# the healthy paths through it (docs/softswitch.md, "The GIL and the loop").  0.5 ms: a wake-up
# comes ~0.7 ms late instead of ~5.3 ms (tests/softswitch/engine/test_loop_gil.py).
GIL_SWITCH_INTERVAL_S = 0.0005
_POLLIN = select.POLLIN | select.POLLPRI
time_ns = time.time_ns  # CLOCK_REALTIME, the rx ring's clock


@dataclass(slots=True)
class LoopCounters:
    """Whole-switch packet counters."""

    ingress_packets: int = 0
    ingress_drops: int = 0
    egress_drops: int = 0
    recirculated: int = 0
    recirc_drops: int = 0
    no_pipeline_drops: int = 0
    unbound_port_drops: int = 0  # sent to a port with no interface
    packet_in: int = 0
    packet_in_dropped: int = 0  # of packet_in: not delivered (no primary, its stream full, too short)
    pipeline_errors: int = 0


def _now_us_fn(t0: int) -> Callable[[], int]:
    mono = time.monotonic_ns

    def now_us() -> int:
        return (mono() - t0) // 1000

    return now_us


def _within(raw: list[int], now: int) -> list[int]:
    """Ring timestamps in the switch clock, with one before the switch started (a slot with no
    timestamp) or after ``now`` (the batch's read: realtime stepped back since the offset was
    read) replaced by ``now``."""
    return [t if 0 <= t <= now else now for t in raw]


def _port_number(item: tuple[int, list[bytes]]) -> int:
    return item[0]


def _internal(res) -> bool:
    """True when a dropped result is the pipeline's internal error (an exception it caught), not a
    drop the program decided: those count as ``pipeline_errors``, not as ingress/egress drops."""
    return res.drop_reason.startswith(INTERNAL_ERROR)


class PacketLoop:
    """Runs the v1model flow for every packet; owns the ports and the traffic manager."""

    def __init__(self, tm: TrafficManager, ports: list[LinuxPort], cpu_port: int | None = None,
                 on_packet_in: Callable[[bytes], bool | None] | None = None) -> None:
        self.tm = tm
        self.ports = {p.number: p for p in ports}
        self.cpu_port = cpu_port
        self.on_packet_in = on_packet_in
        self.pipeline: Pipeline | None = None
        self.counters = LoopCounters()
        # the switch clock in µs: now_us(), or (_mono() - _t0) // 1000 inlined on the per-packet path
        self._mono = time.monotonic_ns
        self._t0 = time.monotonic_ns()
        self.now_us = _now_us_fn(self._t0)
        self._inject: deque[tuple[int, bytes]] = deque()
        self._recirc: deque[tuple[bytes, object]] = deque()
        self._delay: dict[int, deque[tuple[int, bytes]]] = {}
        self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._poller = select.poll()
        self._by_fd: dict[int, LinuxPort] = {}
        self._tx_hook: Callable[[int, bytes], None] | None = None
        self._calls: deque[tuple[Callable[[], object], Future]] = deque()
        # frames of this round for each bound port, sent with one ``send_many`` per port at its end
        self._txq: dict[int, list[bytes]] = {}

    # ------------------------------------------------------------- control (any thread)
    def set_pipeline(self, pipeline: Pipeline | None) -> None:
        """Swap the pipeline; the loop picks it up at its next packet (atomic attribute store)."""
        self.pipeline = pipeline
        self._wake()

    def inject(self, port: int, data: bytes) -> None:
        """Make ``data`` enter ingress as if received on ``port`` (PacketOut uses the CPU port)."""
        self._inject.append((port, data))
        self._wake()

    def call(self, fn: Callable[[], object], timeout: float = 5.0) -> object:
        """Run ``fn`` on the loop thread (so it never races the data path) and return its result."""
        if self._thread is None or not self._thread.is_alive():
            return fn()
        fut: Future = Future()
        self._calls.append((fn, fut))
        self._wake()
        return fut.result(timeout)

    def set_tx_hook(self, hook: Callable[[int, bytes], None] | None) -> None:
        """Deliver frames for ports with no interface to ``hook(port, data)`` (tests, benchmarks)."""
        self._tx_hook = hook

    def start(self) -> None:
        """Open the ports and run the loop in a daemon thread."""
        for p in self.ports.values():
            if not p.open():
                log.warning("port %d: interface %s not present yet; will bind when it appears",
                            p.number, p.ifname)
            elif p.offload_failures:
                log.info("port %d (%s): could not disable %s", p.number, p.ifname,
                         ",".join(p.offload_failures))
        self._register_all()
        self._thread = threading.Thread(target=self.run, name="softswitch-loop", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop thread and close every socket."""
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        for p in self.ports.values():
            p.shutdown()
        try:
            os.close(self._wake_fd)
        except OSError:
            pass

    def _wake(self) -> None:
        try:
            os.eventfd_write(self._wake_fd, 1)
        except OSError:
            pass

    def _register_all(self) -> None:
        for fd in list(self._by_fd):
            self._poller.unregister(fd)
        self._by_fd = {}
        self._poller.register(self._wake_fd, select.POLLIN)
        for p in self.ports.values():
            fd = p.fileno()
            if fd >= 0:
                self._poller.register(fd, _POLLIN)
                self._by_fd[fd] = p

    # ------------------------------------------------------------- the loop (its own thread)
    def run(self) -> None:
        """Loop until ``stop``; never raises for a bad packet (counted as a pipeline error)."""
        poll = self._poller.poll
        wake_fd = self._wake_fd
        by_fd = self._by_fd
        tm = self.tm
        next_link_check = time.monotonic() + LINK_CHECK_S
        timeout_ms: int | None = 0
        stop = self._stop
        # (port, frames, their ring timestamps or None) read in this wake-up
        ready: list[tuple[int, list[bytes], list[int] | None]] = []
        while not stop.is_set():
            events = poll(timeout_ms)
            # the frames' receive times only for a program that names ingress_global_timestamp:
            # the rx rings' realtime stamps less realtime's offset from the switch clock (read
            # once for the wake-up's batches)
            stamped = getattr(self.pipeline, "ingress_clock", 0) & CLOCK_RX
            if stamped:
                off_ns = self._realtime_offset_ns()
            for fd, ev in events:
                if fd == wake_fd:
                    try:
                        os.eventfd_read(wake_fd)
                    except BlockingIOError:
                        pass
                    continue
                port = by_fd.get(fd)
                if port is not None:
                    if ev & select.POLLERR:
                        port.take_error()
                    if stamped:
                        raw: list[int] = []
                        frames = port.receive_stamped(RX_BATCH, raw, off_ns)
                        if frames:
                            ready.append((port.number, frames, raw if len(raw) == len(frames) else None))
                    else:
                        frames = port.receive(RX_BATCH)
                        if frames:
                            ready.append((port.number, frames, None))
            if ready:
                if len(ready) == 1:
                    p, frames, raw = ready[0]
                    self._ingress_batch(p, frames, None, raw)
                else:
                    ready.sort(key=_port_number)  # bmv2's round visits ports by number
                    self._ingress_interleaved(ready)
                ready = []
            if self._calls:
                self._run_calls()
            if self._inject:
                self._drain_injected()
            if self._recirc:
                self._drain_recirc()
            next_due = self._service_tm() if tm.total else None
            next_delay = self._service_delay(self.now_us()) if self._delay else None
            busy = bool(self._inject or self._recirc)
            t = time.monotonic()
            if t >= next_link_check:
                next_link_check = t + LINK_CHECK_S
                self._check_links()
                by_fd = self._by_fd
            timeout_ms = self._timeout_ms(busy, next_due, next_delay, next_link_check - t)

    def _realtime_offset_ns(self) -> int:
        """CLOCK_REALTIME minus the switch clock, in ns: the realtime read between two reads of
        the monotonic clock, against their middle; the closest pair of three tries (a pair the
        thread was preempted in between would put the offset off by the preemption)."""
        mono = self._mono
        best = None
        for _ in range(3):
            m1 = mono()
            rt = time_ns()
            m2 = mono()
            if best is None or m2 - m1 < best[0]:
                best = (m2 - m1, rt - (m1 + m2) // 2)
                if best[0] < 2000:
                    break
        return best[1] + self._t0

    def _run_calls(self) -> None:
        calls = self._calls
        while calls:
            fn, fut = calls.popleft()
            try:
                fut.set_result(fn())
            except Exception as e:  # noqa: BLE001 - handed to the caller through the future
                fut.set_exception(e)

    def _timeout_ms(self, busy: bool, next_due: float | None, next_delay: float | None,
                    link_s: float) -> int:
        if busy or (self.tm.total and next_due is None):
            return 0
        wait_us = link_s * 1e6
        now = self.now_us()
        for due in (next_due, next_delay):
            if due is not None and due - now < wait_us:
                wait_us = due - now
        if wait_us <= 0:
            return 0
        return int(wait_us + 999) // 1000  # round up: never spin for sub-millisecond waits

    def _ingress_interleaved(self, ready: list[tuple[int, list[bytes], list[int] | None]]) -> None:
        """Frames read from several ports in one wake-up, taken a frame from each port in turn (in
        the order given: ``run`` sorts them by port number), as bmv2's select thread takes one frame from each ready
        port per round (``bmi_port.c``): a backlog on one port does not enter ahead of the others'
        in a run of up to ``RX_BATCH``.  Each frame keeps its ring timestamp."""
        frames: list[bytes] = []
        ports: list[int] = []
        stamped = any(r is not None for _p, _f, r in ready)
        raw: list[int] | None = [] if stamped else None
        for i in range(max(len(f) for _p, f, _r in ready)):
            for p, f, r in ready:
                if i < len(f):
                    frames.append(f[i])
                    ports.append(p)
                    if raw is not None:
                        raw.append(r[i] if r is not None else -1)  # -1: none (``_within``)
        self._ingress_batch(ports[0], frames, ports, raw)

    def _ingress_batch(self, port: int, frames: list[bytes], ports: list[int] | None = None,
                       raw: list[int] | None = None) -> None:
        """Ingress for each frame, with the times v1model gives it as bmv2 takes them:

        * ``ingress_global_timestamp``: when the frame was received (bmv2: when ``receive_`` takes
          it from its port, before the input buffer, so a backlog counts in its latency).  That is
          the rx ring's timestamp of the frame (``raw``: in the switch clock, ``run`` reads
          realtime's offset once per wake-up; a time outside [0, now] is not used),
          else the time this batch was read (the ``recvmsg`` path, injected frames).  Only for a
          program that names it (``ingress_clock``).
        * the time meters see: when that packet's ingress starts (a clock read per packet, for a
          program with a meter only).
        * ``enq_timestamp`` (and a rate-limited queue's departure): when the traffic manager takes
          the packet, after its ingress (bmv2's ``enqueue``): a clock read per queued packet.
        * ``egress_global_timestamp``: when its egress starts (``_service_tm``, or below on the
          straight path).

        A plain unicast packet for an idle port whose queue models no rate or delay
        (``PortQueues.direct``) goes straight on to egress and the port's tx ring when the program
        reads none of the queue figures (the pipeline's ``queue_blind``): it would have left the
        queue at once, in the same order, with the same counters.  A program that reads them gets
        them from the traffic manager as before.  ``ports``: each frame's own input port, when the
        frames came from several (``_ingress_interleaved``); else all came from ``port``."""
        pipeline = self.pipeline
        c = self.counters
        if pipeline is None:
            c.no_pipeline_drops += len(frames)
            return
        # a pipeline with the fast entry point (softswitch.exec's) returns the one TmItem of a plain
        # unicast packet itself instead of an IngressResult holding it
        ingress = getattr(pipeline, "ingress_item", None) or pipeline.ingress
        direct = pipeline.egress_frame if getattr(pipeline, "queue_blind", False) else None
        # a program that cannot observe the time (``clock_free``) needs no clock read for a packet
        # the traffic manager does not hold: one read for the batch, a fresh one for an enqueue
        clock_free = direct is not None and getattr(pipeline, "clock_free", False)
        clock = getattr(pipeline, "ingress_clock", CLOCK_NOW)
        per_packet = clock & CLOCK_NOW  # the time ingress starts, per packet (meters)
        two = clock == CLOCK_RX | CLOCK_NOW  # ingress(data, port, now, rx)
        tm = self.tm
        enqueue = tm.enqueue
        tm_ports = tm.ports
        mono, t0 = self._mono, self._t0
        ports_get = self.ports.get
        cpu = self.cpu_port
        txq = self._txq
        txq_get = txq.get
        c.ingress_packets += len(frames)
        now = (mono() - t0) // 1000
        if raw is not None and clock & CLOCK_RX:
            rxs = raw if 0 <= min(raw) and max(raw) <= now else _within(raw, now)
        else:
            rxs = repeat(now)
        for inport, data, rx in zip(ports or repeat(port, len(frames)), frames, rxs):
            try:
                if per_packet:
                    t = (mono() - t0) // 1000
                    res = ingress(data, inport, t, rx) if two else ingress(data, inport, t)
                else:
                    res = ingress(data, inport, rx)
            except Exception:  # a pipeline bug must not kill the switch
                c.pipeline_errors += 1
                log.exception("ingress failed on a packet from port %d", inport)
                continue
            if res.__class__ is not IngressResult:
                if direct is not None:
                    eport = res.egress_port
                    pq = tm_ports.get(eport) or tm.port(eport)
                    pri = res.priority
                    if not pq.count and pq.direct >> pri & 1:
                        pq.stats[pri].passed += 1
                        if not clock_free:
                            now = (mono() - t0) // 1000
                        try:
                            out = direct(res, now)
                        except Exception:
                            c.pipeline_errors += 1
                            log.exception("egress failed on a packet for port %d", eport)
                            continue
                        if out.__class__ is bytes:
                            frames_out = txq_get(eport)
                            if frames_out is not None:
                                frames_out.append(out)
                            elif eport != cpu and ports_get(eport) is not None:
                                txq[eport] = [out]
                            else:
                                self._transmit(eport, out, 0, now)
                        else:  # clones it makes are queued with the time of now
                            self._egress_result(out, 0, (mono() - t0) // 1000)
                        continue
                enqueue(res, (mono() - t0) // 1000)  # bmv2 stamps enq_timestamp at enqueue, after ingress
            elif res.to_tm:
                t = (mono() - t0) // 1000
                for item in res.to_tm:
                    enqueue(item, t)
            elif res.dropped:
                if _internal(res):
                    c.pipeline_errors += 1
                else:
                    c.ingress_drops += 1
        if txq:
            self._send_txq()

    def _drain_injected(self) -> None:
        inj = self._inject
        while inj:
            port, data = inj.popleft()
            self._ingress_batch(port, [data])

    def _drain_recirc(self) -> None:
        pipeline = self.pipeline
        rec = self._recirc
        c = self.counters
        enqueue = self.tm.enqueue
        for _ in range(len(rec)):
            data, preserved = rec.popleft()
            now = self.now_us()
            if pipeline is None:
                c.no_pipeline_drops += 1
                continue
            c.recirculated += 1
            try:
                res = pipeline.ingress_recirculated(data, preserved, now)
            except Exception:
                c.pipeline_errors += 1
                log.exception("ingress failed on a recirculated packet")
                continue
            if res.to_tm:
                now = self.now_us()  # enqueued after its ingress
                for item in res.to_tm:
                    enqueue(item, now)
            if res.dropped and not res.to_tm:
                if _internal(res):
                    c.pipeline_errors += 1
                else:
                    c.ingress_drops += 1

    def _service_tm(self) -> float | None:
        """Dequeue eligible items, run egress, transmit; returns the next rate-limited departure.

        The clock is read at dequeue (what rate-limited departures and links are checked against)
        and again when each packet's egress starts: that is v1model's ``egress_global_timestamp``,
        later than ``ingress_global_timestamp`` by the queueing delay, and the end of the packet's
        ``deq_timedelta`` (bmv2's egress thread reads its clock once, right after the pop, for both):
        a round hands out up to ``TM_BATCH`` packets, and the last of them waits for the egress of
        all before it (until 2026-12-06 every packet of a round had the round's dequeue time, up to
        a millisecond short for the last ones of a 256-packet round).
        """
        pipeline = self.pipeline
        tm = self.tm
        out: list = []
        now_us = self.now_us
        now = now_us()
        next_due = tm.dequeue(now, TM_BATCH, out)
        if not out:
            return next_due
        c = self.counters
        if pipeline is None:
            c.no_pipeline_drops += len(out)
            return next_due
        # softswitch.exec's fast entry point returns a single frame for item.egress_port as bytes
        fast = getattr(pipeline, "egress_frame", None)
        egress = fast or pipeline.egress
        transmit = self._transmit
        ports_get = self.ports.get
        cpu = self.cpu_port
        mono, t0 = self._mono, self._t0
        txq = self._txq
        txq_get = txq.get
        # the port queues of the last frame that joined its port's frames of this round, when that
        # port charges no bytes and has no delay (nothing to refund or hold back), and that list:
        # the next frame of the same port joins it at once (dequeue hands out a port's packets
        # together); the list stays txq's until ``_send_txq``
        last = None
        last_out: list = []
        restamp = getattr(pipeline, "reads_deq_time", True)
        for pq, item in out:
            now = (mono() - t0) // 1000
            if restamp:  # dequeued when its egress starts (bmv2: the pop, then egress at once)
                item.deq_timedelta_us = now - item.enq_timestamp_us
            try:
                res = egress(item, now)
            except Exception:
                c.pipeline_errors += 1
                log.exception("egress failed on a packet for port %d", item.egress_port)
                continue
            if res.__class__ is bytes:
                if pq is last:
                    last_out.append(res)
                    continue
                port = pq.port
                if pq.link_us_per_byte and len(res) < item.length:  # truncated in egress (a trimmed packet)
                    pq.refund(item.length, len(res))
                if not pq.link_delay_us:  # fast path: into the port's frames of this round
                    frames_out = txq_get(port)
                    if frames_out is None:
                        if port == cpu or ports_get(port) is None:
                            transmit(port, res, 0, now)
                            continue
                        frames_out = txq[port] = []
                    frames_out.append(res)
                    if not pq.link_us_per_byte:
                        last, last_out = pq, frames_out
                    continue
                transmit(port, res, pq.link_delay_us, now)
                continue
            if pq.link_us_per_byte:  # what egress put on this port's wire (nothing if it dropped the packet)
                pq.refund(item.length, sum(len(f.data) for f in res.frames if f.port == pq.port))
            self._egress_result(res, pq.link_delay_us, now)
        if txq:
            self._send_txq()
        return next_due

    def _send_txq(self) -> None:
        """Send the round's frames of each bound port: one ``send_many`` (tx ring, one system
        call) per port."""
        txq = self._txq
        ports = self.ports
        for port, frames in txq.items():
            ports[port].send_many(frames)
        txq.clear()

    def _egress_result(self, res, delay_us: int, now: int) -> None:
        """Frames, clones and recirculations of one packet's ``EgressResult``; frames for a bound
        port (not the CPU port) with no link delay join the round's frames for that port, sent by
        the caller (``_send_txq``)."""
        c = self.counters
        cpu = self.cpu_port
        for frame in res.frames:
            port = frame.port
            if port != cpu and not delay_us and self.ports.get(port) is not None:
                self._txq.setdefault(port, []).append(frame.data)
                continue
            self._transmit(port, frame.data, delay_us, now)
        if res.to_tm:
            t = self.now_us()  # enqueued after egress, as bmv2's egress thread does
            for clone in res.to_tm:
                self.tm.enqueue(clone, t)
        if res.recirculate:
            rec = self._recirc
            for entry in res.recirculate:
                if len(rec) < RECIRC_CAPACITY:
                    rec.append(entry)
                else:
                    c.recirc_drops += 1
        if res.dropped and not res.frames:
            if _internal(res):
                c.pipeline_errors += 1
            else:
                c.egress_drops += 1

    def _transmit(self, port: int, data: bytes, delay_us: int, now: int) -> None:
        if port == self.cpu_port:
            self.counters.packet_in += 1
            if self.on_packet_in is not None:
                try:
                    if self.on_packet_in(data) is False:
                        self.counters.packet_in_dropped += 1
                except Exception:
                    self.counters.packet_in_dropped += 1
                    log.exception("PacketIn delivery failed")
            return
        if delay_us:
            line = self._delay.get(port)
            if line is None:
                line = self._delay[port] = deque()
            line.append((now + delay_us, data))
            return
        self._send(self.ports.get(port), port, data)

    def _send(self, p, port: int, data: bytes) -> None:
        """Send on bound port ``p`` (``self.ports[port]`` or None), else the tx hook, else count a drop."""
        if p is not None:
            p.send(data)
        elif self._tx_hook is not None:
            self._tx_hook(port, data)
        else:
            self.counters.unbound_port_drops += 1

    def _service_delay(self, now: int) -> int | None:
        """Send delayed frames that are due; returns the next due time."""
        next_due = None
        for port, line in list(self._delay.items()):
            p = self.ports.get(port)
            while line and line[0][0] <= now:
                self._send(p, port, line.popleft()[1])
            if line:
                if next_due is None or line[0][0] < next_due:
                    next_due = line[0][0]
            else:
                del self._delay[port]
        return next_due

    def _check_links(self) -> None:
        changed = False
        for p in self.ports.values():
            was_up = p.up
            if p.refresh():
                changed = True
            if p.up != was_up:
                log.info("port %d (%s) is %s", p.number, p.ifname, "up" if p.up else "down")
        if changed:
            self._register_all()

    # ------------------------------------------------------------- introspection
    def port_stats(self) -> list[dict]:
        """Counters, link state and queue state of every bound port."""
        rows = []
        for num in sorted(self.ports):
            p = self.ports[num]
            c = p.counters
            queues = self.tm.stats(num)
            rows.append({
                "port": num, "ifname": p.ifname, "up": p.up,
                "rx_packets": c.rx_packets, "rx_bytes": c.rx_bytes,
                "tx_packets": c.tx_packets, "tx_bytes": c.tx_bytes, "tx_drops": c.tx_drops,
                "rx_kernel_drops": p.kernel_drops(),
                "rx_errors": c.rx_errors,
                "queue_drops": sum(q["dropped"] for q in queues),
                "link_delay_us": self.tm.port(num).link_delay_us,
                "queues": queues,
            })
        return rows
