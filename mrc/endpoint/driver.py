"""The MRC endpoint driver: the sans-IO core (:mod:`mrc.core`) over one AF_PACKET socket per NIC port.

Single-threaded: :meth:`Endpoint.progress` receives everything queued (round robin over the ports,
one frame each, so arrival order across planes is kept; at most ``rx_cap`` rounds) before it runs
due timers -- so a late wake-up never turns ACKs waiting in a socket into timeouts -- sends what the core emits,
and otherwise sleeps in ``select`` until a socket is readable or the core's next deadline (µs
resolution).  Time is ``time.monotonic_ns()``.  Link state is read by ioctl when a netlink link event
arrives and every ``link_poll_ms``; a port going down or up is reported to the core, which marks that
port's EVs ASSUMED_BAD and tells the peers with PORT_STATUS.

``tx_delay_us`` puts every frame the core emits (already paced) on a delay line before its socket: a
propagation delay on the host's side of the link, for fabrics whose switches cannot delay (bmv2 where
the kernel has no netem; docs/fabric.md "Link delay at the hosts").

Frames that are not ours are ignored and counted (other ethertypes, another destination MAC, IPv6
that is not RoCEv2 such as ND); RoCEv2 frames that fail to decode are counted by the core.
"""

from __future__ import annotations

import errno
import secrets
import select
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Self

from mrc import core
from mrc.core import Completion, EvEvent, MemoryRegion, QpAttr, QueuePair
from mrc.endpoint import netif

_ETH_IPV6 = b"\x86\xdd"
_ROCE_PORT = b"\x12\xb7"  # 4791
_PASS_NH = (41, 43)  # IPv6-in-IPv6 (SRv6 outer), routing header
_TX_DOWN_ERRNOS = (errno.ENETDOWN, errno.ENXIO, errno.ENODEV, errno.EMSGSIZE, errno.ENOBUFS)
_STUCK_TIMER_NS = 50_000
SUPPORTED_MTUS = (256, 512, 1024, 2048, 4096, 8192)


class EndpointError(RuntimeError):
    """The endpoint cannot be built or used as asked (bad ports, closed, unknown port)."""


@dataclass(frozen=True, slots=True)
class PortConfig:
    """One NIC port: its interface, 1-based port number (= plane) and Ethernet addressing.

    ``mac`` None: the interface's own MAC.  ``next_hop_mac``: the leaf switch port's MAC, or the
    peer host's MAC on a direct link; it may be set later with :meth:`Endpoint.set_next_hop`.
    """

    ifname: str
    port: int
    mac: bytes | None = None
    next_hop_mac: bytes | None = None


@dataclass(slots=True)
class DriverCounters:
    """What the driver saw below the transport core."""

    rx_frames: int = 0
    rx_bytes: int = 0
    rx_ignored_ethertype: int = 0
    rx_ignored_dst_mac: int = 0
    rx_ignored_not_roce: int = 0
    tx_frames: int = 0
    tx_bytes: int = 0
    tx_blocked: int = 0  # the socket was full: the frame waited in our queue
    tx_errors: int = 0  # the kernel refused the frame (port down): it is lost, the transport recovers
    link_changes: int = 0
    wakeups: int = 0

    def as_dict(self) -> dict[str, int]:
        """Counters as a plain dict (for --json)."""
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """A NIC port changed operational state."""

    time_ns: int
    port: int
    ifname: str
    up: bool


class _Port:
    __slots__ = ("cfg", "fix_mac", "ifname", "mac", "mtu", "port", "rx_frames", "sock", "tx_frames", "txq", "up")

    def __init__(self, cfg: PortConfig, sock: socket.socket):
        self.cfg = cfg
        self.port = cfg.port
        self.ifname = cfg.ifname
        self.sock = sock
        self.mac = cfg.mac or netif.if_mac(sock, cfg.ifname)
        self.mtu = netif.if_mtu(sock, cfg.ifname)
        self.up = netif.if_running(sock, cfg.ifname)
        self.txq: deque[bytes] = deque()
        self.fix_mac: bytes | None = None
        self.rx_frames = 0
        self.tx_frames = 0


def qp_overhead(encap: str, telemetry: bool = False) -> int:
    """IP bytes around an MTU-sized payload (outer/inner IPv6, SRH, UDP, BTH, RETH, ImmDt, ICRC)."""
    n = 40 + 8 + 12 + 16 + 4 + 4
    if encap == "srv6":
        n += 40 + 24
    if telemetry:
        n += 88
    return n


class Endpoint:
    """An MRC host endpoint on real interfaces: memory regions, QPs, writes, completions, EV events.

    Use as a context manager (sockets are closed on exit).  All calls are from one thread; the
    transport only runs inside :meth:`progress` / :meth:`run_until` / :meth:`wait_completions`.
    """

    def __init__(self, ports: Sequence[PortConfig], gid: bytes, *, encap: str = "srv6",
                 port_rate_gbps: float = 10.0, telemetry: bool = False, rx_cap: int = 1024,
                 link_poll_ms: int = 20, rcvbuf: int = 32 << 20, tx_delay_us: int = 0):
        if not ports:
            raise EndpointError("an endpoint needs at least one port")
        nums = [p.port for p in ports]
        if len(set(nums)) != len(nums) or min(nums) < 1:
            raise EndpointError(f"port numbers must be distinct and 1-based, got {nums}")
        if encap not in ("srv6", "stev", "udp"):
            raise EndpointError(f"encap must be srv6, stev or udp, not {encap!r}")
        if port_rate_gbps <= 0:
            raise EndpointError("port rate must be positive")
        if tx_delay_us < 0:
            raise EndpointError(f"tx delay must be >= 0 us, got {tx_delay_us}")
        # frames the core sent, each with the time it reaches the wire (sent + the delay): in that order,
        # since the delay is one constant
        self._delay_ns = int(tx_delay_us) * 1000
        self._line: deque[tuple[int, int, bytes]] = deque()
        self.encap = encap
        self.telemetry = telemetry
        self.rx_cap = max(1, rx_cap)
        self.link_poll_ns = max(1, link_poll_ms) * 1_000_000
        self.counters = DriverCounters()
        self.link_events: list[LinkEvent] = []
        self._closed = False
        self._ports: dict[int, _Port] = {}
        self._watch: socket.socket | None = None
        try:
            for cfg in sorted(ports, key=lambda c: c.port):
                sock = netif.open_port_socket(cfg.ifname, rcvbuf=rcvbuf)
                try:
                    self._ports[cfg.port] = _Port(cfg, sock)
                except BaseException:
                    sock.close()
                    raise
            self._watch = netif.open_link_watch()
        except BaseException:
            self.close()
            raise
        first = self._ports[min(self._ports)]
        self.core = core.Endpoint(gid, sorted(self._ports), encap=encap, port_rate_bps=port_rate_gbps * 1e9,
                                  telemetry=telemetry, mac=first.mac,
                                  peer_macs={p.port: p.next_hop_mac for p in ports if p.next_hop_mac},
                                  first_qpn=0x100 + secrets.randbelow(0xF00000),
                                  first_rkey=0x1000 + secrets.randbelow(0xF0000000))
        if self.core.ctl.clock is None:  # the control API's own EV changes on the transport's time base
            self.core.ctl.clock = time.monotonic_ns
        # random first QP numbers and memory keys, as NICs hand them out: with fixed ones every new
        # endpoint (mrc-perf server opens one per session, at the same buffer address) took the last
        # one's numbers, and a late packet of the previous session whose PSN fell in the new window
        # was placed; the real packet was then dropped as its duplicate (the random first PSN was the
        # only guard: about 1 in 16,000 per stale packet at mpr 8)
        for p in self._ports.values():
            p.fix_mac = None if p.mac == first.mac else p.mac
        self._by_fd = {p.sock.fileno(): p for p in self._ports.values()}
        self._rfds = [p.sock for p in self._ports.values()] + ([self._watch] if self._watch else [])
        self._bufsize = max(p.mtu for p in self._ports.values()) + 64
        self._link_at = 0
        now = time.monotonic_ns()
        for p in self._ports.values():
            if not p.up:
                self.core.set_port_state(p.port, False, now)
                self.link_events.append(LinkEvent(now, p.port, p.ifname, False))

    # ------------------------------------------------------------------ facts
    @property
    def gid(self) -> bytes:
        return self.core.gid

    @property
    def ports(self) -> list[int]:
        return sorted(self._ports)

    def port_mac(self, port: int) -> bytes:
        """The source MAC this endpoint uses on ``port``."""
        return self._port(port).mac

    def port_up(self, port: int) -> bool:
        """The port's operational state as last seen."""
        return self._port(port).up

    def max_mtu(self) -> int:
        """The largest QP MTU (256..8192) that fits every port's interface MTU with our headers."""
        room = min(p.mtu for p in self._ports.values()) - qp_overhead(self.encap, self.telemetry)
        fits = [m for m in SUPPORTED_MTUS if m <= room]
        if not fits:
            raise EndpointError(f"interface MTU {room + qp_overhead(self.encap, self.telemetry)} is too small")
        return fits[-1]

    def qp_attr(self, mode: str = "mrc", **overrides: Any) -> QpAttr:
        """QP attributes suited to this driver (software endpoints on veth: ms-scale scheduling noise).

        MTU: :meth:`max_mtu`; ACK timeout t=16 (67 ms); RACK reordering floor 10 ms (a process moving
        between CPUs spreads veth planes over two softirq backlogs: ms of reordering); ACK coalescing
        delay 100 µs; congestion control NSCC for MRC and DCQCN for RC (``cc``, :mod:`mrc.core.cc`;
        ``cc=None`` or ``"none"`` turns it off).  Anything can be overridden by keyword.
        """
        kw: dict[str, Any] = {"mode": mode, "mtu": self.max_mtu(), "ack_timeout": 16,
                              "reorder_min_ns": 10_000_000, "ack_delay_ns": 100_000,
                              "cc": "nscc" if mode == "mrc" else "dcqcn"}
        kw.update(overrides)
        return QpAttr(**kw)

    def _port(self, port: int) -> _Port:
        p = self._ports.get(port)
        if p is None:
            raise EndpointError(f"no port {port} (ports: {self.ports})")
        return p

    # ------------------------------------------------------------------ setup
    def set_next_hop(self, port: int, mac: bytes) -> None:
        """Set the next hop's MAC for ``port`` (takes effect for QPs connected afterwards)."""
        self._port(port)
        if len(mac) != 6:
            raise EndpointError("a MAC address is 6 bytes")
        self.core.peer_macs[port] = bytes(mac)

    def reg_mr(self, buf: bytearray, base_va: int = 0, rkey: int | None = None) -> MemoryRegion:
        """Register ``buf`` for remote writes at ``base_va``."""
        return self.core.reg_mr(buf, base_va, rkey)

    def dereg_mr(self, mr: MemoryRegion) -> None:
        self.core.dereg_mr(mr)

    @property
    def ctl(self) -> Any:
        """This NIC's ``mrc.ctl.MrcCtlContext`` (format, EV and CC profiles QPs bind to by id)."""
        return self.core.ctl

    def ep_batch_send_wait(self, req_tc: int, op_type: Any, reqs: list[Any], rsp_timeout: int) -> list[Any]:
        """mrc_ctl_ep_batch_send_wait through this driver's sockets: EV probes / PORT_STATUS_UPDATE
        requests (``mrc.ctl.EpReq``) go out on their EV's port, the peer's endpoint answers, and the
        responses (``mrc.ctl.EpRsp``, RTT on ``time.monotonic_ns``) come back in arrival order.  The
        transport keeps running meanwhile.  MrcCtlError ETIMEDOUT (with ``.responses``) if any is missing
        after ``rsp_timeout`` ns."""
        self._check_open()
        return self.ctl.ep_batch_send_wait(_DriverEpTransport(self), req_tc, op_type, reqs, rsp_timeout)

    def create_qp(self, evs: Iterable[Any] | None = None, attr: QpAttr | None = None) -> QueuePair:
        """A QP bound to ``attr.ev_profile_id`` (a profile of :attr:`ctl`), or spraying over its own
        ``evs`` (``(ev, port)`` tuples, EvEntry or mrc.ctl EVs)."""
        self._check_open()
        return self.core.create_qp(evs, attr or self.qp_attr())

    def connect(self, qp: QueuePair, remote_qpn: int, remote_gid: bytes, rq_psn: int, sq_psn: int) -> None:
        """RST -> RTS; every port the QP uses needs a next-hop MAC by now."""
        missing = sorted({e.port for e in qp.evset.entries} - set(self.core.peer_macs))
        if missing:
            raise EndpointError(f"no next-hop MAC for port(s) {missing}: give it in the plan or set_next_hop")
        self.core.connect(qp, remote_qpn, remote_gid, rq_psn, sq_psn, time.monotonic_ns())

    def post_write(self, qp: QueuePair, wr_id: int, data: bytes | bytearray | memoryview, remote_va: int,
                   rkey: int, imm: int | None = None) -> None:
        """Post an RDMA WRITE (WRITE_WITH_IMM when ``imm`` is given); the data must stay unchanged
        until its completion."""
        self._check_open()
        self.core.post_write(qp, wr_id, memoryview(data), remote_va, rkey, imm)

    def poll_completions(self) -> list[Completion]:
        """Completions since the last call (requester writes and received immediates), in order."""
        return self.core.poll_completions()

    def poll_events(self) -> list[EvEvent]:
        """EV state changes since the last call (GOOD / ASSUMED_BAD)."""
        return self.core.poll_events()

    def stats(self) -> dict[str, Any]:
        """Driver, core and per-QP counters plus per-port state, as plain data."""
        return {
            "driver": self.counters.as_dict(),
            "core": self.core.counters.as_dict(),
            "ports": {p.port: {"ifname": p.ifname, "up": p.up, "rx_frames": p.rx_frames, "tx_frames": p.tx_frames,
                               "mac": netif.format_mac(p.mac),
                               "next_hop_mac": netif.format_mac(self.core.peer_macs[p.port])
                               if p.port in self.core.peer_macs else None}
                      for p in self._ports.values()},
            "qps": {qp.qpn: {"state": qp.state.value, **qp.counters.as_dict(),
                             "cc": qp.cc.state() if qp.cc is not None else None,
                             "ev_states": [s.name for s in self.core.ev_states(qp)]}
                    for qp in self.core.qps.values()},
        }

    # ------------------------------------------------------------------ the loop
    def progress(self, timeout_s: float = 0.0) -> int:
        """Run the transport until something happens or ``timeout_s`` passes; returns frames handled."""
        self._check_open()
        deadline = time.monotonic_ns() + int(timeout_s * 1e9)
        c = self.core
        while True:
            work = self._rx()
            # read after the receive batch: a batch of hundreds of frames takes tens of ms in Python,
            # and timers and sends stamped with the time before it made RTT samples that short
            now = time.monotonic_ns()
            if now >= self._link_at:
                self._check_links(now)
            t = c.get_timer()
            if t is not None and t <= now:
                c.handle_timer(now)
            work += self._tx(now)
            if work or now >= deadline:
                return work
            t = c.get_timer()
            wake = min(deadline, self._link_at) if t is None else min(deadline, self._link_at, t)
            if self._line:
                wake = min(wake, self._line[0][0])
            wait = wake - time.monotonic_ns()
            if wait <= 0 and t is not None and t <= now:  # a deadline that ran and stayed due: don't spin
                wait = min(_STUCK_TIMER_NS, deadline - now)
            if wait > 0:
                wfds = [p.sock for p in self._ports.values() if p.txq]
                self.counters.wakeups += 1
                try:
                    r, _, _ = select.select(self._rfds, wfds, [], wait / 1e9)
                except InterruptedError:
                    continue
                if self._watch is not None and self._watch in r:
                    netif.drain(self._watch)
                    self._link_at = 0

    def run_until(self, pred: Callable[[], bool], timeout_s: float) -> bool:
        """Run until ``pred()`` is true (checked after every burst of work); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.progress(min(left, 0.05))
        return True

    def wait_completions(self, n: int, timeout_s: float) -> list[Completion]:
        """Run until ``n`` completions arrived (or the timeout); returns what arrived."""
        got: list[Completion] = []

        def enough() -> bool:
            got.extend(self.core.poll_completions())
            return len(got) >= n

        self.run_until(enough, timeout_s)
        return got

    def _rx(self) -> int:
        """Receive what the sockets hold (at most ``rx_cap`` rounds), each frame stamped with the
        time it is read [ours].  One time for the whole batch made a frame read late in a long batch
        look older than it is: an ACK read 100 ms into a batch gave the RTT sample of its packet
        100 ms too short, the learning NSCC took a 1 ns base RTT from it and held that QP at its
        minimum window for the rest of the run (bench/fabric_scenarios.py: one flow at 13 s where
        the others ended by 6 s), and a responder's service time grew by as much."""
        c = self.counters
        clock = time.monotonic_ns
        recv_core = self.core.receive
        bufsize = self._bufsize
        active = list(self._ports.values())
        n = 0
        for _ in range(self.rx_cap):
            if not active:
                break
            for p in list(active):
                try:
                    data = p.sock.recv(bufsize)
                except (BlockingIOError, InterruptedError):
                    active.remove(p)
                    continue
                except OSError:  # e.g. ENETDOWN while the interface goes away
                    active.remove(p)
                    continue
                n += 1
                p.rx_frames += 1
                c.rx_frames += 1
                c.rx_bytes += len(data)
                if len(data) >= 14:
                    if data[12:14] != _ETH_IPV6:
                        c.rx_ignored_ethertype += 1
                        continue
                    if data[:6] != p.mac:
                        c.rx_ignored_dst_mac += 1
                        continue
                    if len(data) >= 58:
                        nh = data[20]
                        u = 54
                        if nh == 0:  # Hop-by-Hop: look at what follows it
                            nh = data[54]
                            u = 54 + (data[55] + 1) * 8
                        if nh == 17:
                            if data[u + 2 : u + 4] != _ROCE_PORT:
                                c.rx_ignored_not_roce += 1
                                continue
                        elif nh not in _PASS_NH:
                            c.rx_ignored_not_roce += 1
                            continue
                recv_core(data, p.port, clock())
        return n

    def _send(self, p: _Port, frame: bytes) -> bool:
        """Send one frame; False if the socket is full (the caller queues it)."""
        try:
            if p.fix_mac is None:
                p.sock.send(frame)
            else:
                mv = memoryview(frame)
                p.sock.sendmsg([mv[:6], p.fix_mac, mv[12:]])
        except (BlockingIOError, InterruptedError):
            self.counters.tx_blocked += 1
            return False
        except OSError as exc:
            if exc.errno not in _TX_DOWN_ERRNOS:
                raise
            self.counters.tx_errors += 1
            return True
        p.tx_frames += 1
        self.counters.tx_frames += 1
        self.counters.tx_bytes += len(frame)
        return True

    def transmit(self, now: int | None = None) -> int:
        """Put on the wire what the transport has to send now (frames queued for full socket
        buffers first); returns how many frames were handled.  :meth:`progress` does this too."""
        self._check_open()
        return self._tx(time.monotonic_ns() if now is None else now)

    def _tx(self, now: int) -> int:
        n = 0
        for p in self._ports.values():
            q = p.txq
            while q and self._send(p, q[0]):
                q.popleft()
                n += 1
        ports = self._ports
        if self._delay_ns:
            line = self._line
            due = now + self._delay_ns
            for port, frame in self.core.datagrams_to_send(now):
                line.append((due, port, frame))
                n += 1
            out = []
            while line and line[0][0] <= now:
                out.append(line.popleft()[1:])
        else:
            out = self.core.datagrams_to_send(now)
        for port, frame in out:
            p = ports[port]
            if p.txq or not self._send(p, frame):
                p.txq.append(frame)
            n += 1
        return n

    def _check_links(self, now: int) -> None:
        self._link_at = now + self.link_poll_ns
        for p in self._ports.values():
            try:
                up = netif.if_running(p.sock, p.ifname)
            except OSError:
                up = False
            if up != p.up:
                p.up = up
                self.counters.link_changes += 1
                self.link_events.append(LinkEvent(now, p.port, p.ifname, up))
                if not up:
                    p.txq.clear()
                self.core.set_port_state(p.port, up, now)

    # ------------------------------------------------------------------ lifetime
    def _check_open(self) -> None:
        if self._closed:
            raise EndpointError("the endpoint is closed")

    def close(self) -> None:
        """Close every socket (idempotent)."""
        self._closed = True
        for p in self._ports.values():
            p.sock.close()
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _DriverEpTransport:
    """``mrc.ctl.EpTransport`` over a driver: the core encodes the requests, the loop carries them."""

    def __init__(self, ep: Endpoint):
        self.ep = ep
        self.sent: dict[tuple[int, int], int] = {}  # (op type, req_id) -> send time
        ep.core.ctl_responses.clear()  # answers to an earlier batch are not this batch's

    @staticmethod
    def now_ns() -> int:
        return time.monotonic_ns()

    def send(self, request: Any) -> None:
        self.sent[(int(request.op_type), request.req_id)] = request.sender_ts_ns
        self.ep.core.send_ctl_request(request, time.monotonic_ns())
        self.ep.transmit()

    def wait(self, deadline_ns: int) -> list[Any]:
        from mrc.ctl import EpOpType, EpWireResponse

        core = self.ep.core
        while not core.ctl_responses:
            left = deadline_ns - time.monotonic_ns()
            if left <= 0:
                break
            self.ep.progress(min(left / 1e9, 0.01))
        got, core.ctl_responses[:] = list(core.ctl_responses), []
        # a PORT_STATUS acknowledgement carries no timestamp (PORT_STATUS has none): use our send time
        return [EpWireResponse(EpOpType(op), rid, ts if op == 0 else self.sent.get((op, rid), ts), port, rx, svc)
                for op, rid, ts, port, rx, svc in got]
