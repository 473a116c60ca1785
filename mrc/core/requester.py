"""The requester state machine common to MRC and RC: work requests in, data packets out, ACKs in,
completions out.

It segments posted RDMA WRITEs into MTU packets, keeps the PSN window, asks the congestion control
(:mod:`mrc.core.cc`) for its window and pacing rate, retires acknowledged PSNs, completes work
requests in order, and runs the retransmission timer (RTO with linear then exponential retries).
How a packet is given a path, how an ACK is read and what is resent on a loss is the mode's loss/ack
policy: :class:`mrc.core.mrc_policy.MrcRequester` (spraying, SACK, trims, RACK, EV retirement,
probes) or :class:`mrc.core.rc_policy.RcRequester` (one path, go-back-N).  Every frame leaves through
the QP's :class:`~mrc.core.host.QpHost`.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from mrc.core.cc import CongestionControl, make_cc
from mrc.core.memory import PayloadSource
from mrc.core.psn import INFINITE_EXP_RETRIES, unwrap
from mrc.core.side import QpSide
from mrc.core.types import Completion, QpState, WcOpcode, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import Frame, encode_data

HIST_MAX = 16  # resends kept per packet (_Pkt.hist)
LATE_LOG_MAX = 64  # late deliveries kept per QP (Requester.late)

if TYPE_CHECKING:
    from mrc.core.qp import QueuePair


class _Wqe:
    __slots__ = ("data", "first_seq", "imm", "length", "npkts", "rkey", "started", "va", "wr_id")

    def __init__(self, wr_id, data, va, rkey, imm, first_seq, npkts):
        self.wr_id, self.data, self.va, self.rkey, self.imm = wr_id, data, va, rkey, imm
        self.first_seq, self.npkts, self.length = first_seq, npkts, len(data)
        self.started = False

    @property
    def last_seq(self) -> int:
        return self.first_seq + self.npkts - 1


class _Pkt:
    __slots__ = ("dark", "ev", "first_ev", "first_sent_ns", "hist", "length", "off", "opcode", "sent_ns", "seq",
                 "state", "trim_ns", "wqe", "xmits")
    INFLIGHT, SACKED, LOST = 0, 1, 2

    def __init__(self, seq, wqe, off, length, opcode):
        self.seq, self.wqe, self.off, self.length, self.opcode = seq, wqe, off, length, opcode
        self.ev = self.first_ev = -1
        self.sent_ns = self.first_sent_ns = 0
        self.trim_ns = -(1 << 62)  # when a trim of this PSN was last acted on
        self.xmits = 0
        self.state = 0
        self.dark = False  # this copy left into a silence of the peer (MRC: mrc_policy._sent)
        self.hist: list | None = None  # resends: [ns since the first send, cause, EV of the copy resent]


def _opcode(i: int, n: int, imm: bool) -> int:
    if n == 1:
        return F.OP_WRITE_ONLY_IMM if imm else F.OP_WRITE_ONLY
    if i == 0:
        return F.OP_WRITE_FIRST
    if i == n - 1:
        return F.OP_WRITE_LAST_IMM if imm else F.OP_WRITE_LAST
    return F.OP_WRITE_MIDDLE


class Requester(QpSide):
    """Send side of one QP; subclasses are the mode's loss/ack policy (see the module docstring)."""

    TRIMMING = False  # the fabric trims this mode's packets (NSCC reads trims as congestion)
    LATE_SRTTS = 4  # a packet first delivered this many srtts after its first send goes to ``late``

    def __init__(self, qp: QueuePair):
        super().__init__(qp)
        self.base_timeout_ns = 1024 << qp.attr.ack_timeout  # 1.024 us x 2^t, in ns
        self.cc: CongestionControl | None = None  # built at RTS (mrc.core.cc); None until then
        self.pace_ns = 0.0  # the CC's pacing rate: the earliest time the next data packet may leave
        self.wqes: deque[_Wqe] = deque()
        self.next_assign = 0
        self.snd_una = 0
        self.snd_nxt = 0
        self.snd_ptr = 0  # RC go-back-N send pointer
        self.send_wqe_i = 0  # index in wqes of the WQE being segmented
        self.pkts: dict[int, _Pkt] = {}
        # bumped whenever a packet in flight changes (sent, acknowledged, lost) or a path's delivery
        # time does: with the RTT scalars it keys the policy's memo of its deadlines
        self.mut = 0
        self.inflight = 0
        self.retx: deque[tuple[int, str]] = deque()
        self.ack_now = 0  # time of the ACK being processed
        self.srtt = 0
        self.rttvar = 0
        self.min_rtt = 0
        self.retries = 0
        self.timeout_ns = self.base_timeout_ns
        self.rto_at: int | None = None
        self.err_ns = 0  # when the QP went to ERR (the time of the flush completions of later posts)
        self.wimm_inflight = 0
        self.wake_ns: int | None = None
        # packets whose delivery took LATE_SRTTS srtts or more from their first send, with their resend
        # history: what held a flow's cumulative ACK in a long stall (the agent logs them)
        self.late: list[dict] = []

    @property
    def state(self) -> QpState:
        """The QP's state (RST/INIT/RTR/RTS/ERR), kept by the QP."""
        return self.qp.state

    def _to_error(self, now_ns: int, status: WcStatus) -> None:
        self.qp.to_error(now_ns, status)

    # ------------------------------------------------------------------ start and stop
    def start(self, sq_psn: int, now_ns: int) -> None:
        """RTS: send from ``sq_psn``; build the congestion control for the mode's line rate."""
        self.snd_una = self.snd_nxt = self.snd_ptr = self.next_assign = sq_psn & F.PSN_MASK
        self.cc = self._make_cc(now_ns)
        self.pace_ns = float(now_ns)

    def _make_cc(self, now_ns: int) -> CongestionControl:
        cc = make_cc(self.attr.cc, mtu=self.attr.mtu, rate_bps=self._line_rate_bps(), now_ns=now_ns,
                     base_rtt_ns=self.attr.cc_base_rtt_ns, trimming=self.TRIMMING,
                     learn_base_rtt=self.attr.cc_learn_base_rtt,
                     tx_ns=int(self.attr.mtu * 8e9 / self.host.port_rate_bps))
        cc.inflight_fn = self._inflight_bytes
        return cc

    def _inflight_bytes(self) -> int:
        return self.inflight

    def reconfigure_cc(self, spec: object, now_ns: int) -> None:
        """The bound CC profile changed: run on with ``spec`` (kept in place by the algorithm if it
        can, else a new instance from now on); before RTS it is what :meth:`start` will build."""
        self.attr.cc = spec
        self.attr.cc_learn_base_rtt = False  # a config given at run time is taken as given
        if self.cc is not None and not self.cc.reconfigure(spec):
            self.cc = self._make_cc(now_ns)

    def _line_rate_bps(self) -> float:
        return self.host.port_rate_bps

    def flush(self, now_ns: int, status: WcStatus) -> None:
        """The QP went to ERR: the oldest WQE completes with ``status``, the rest are flushed."""
        self.err_ns = now_ns
        first = True
        while self.wqes:
            w = self.wqes.popleft()
            self.host.complete(Completion(self.qpn, w.wr_id, status if first else WcStatus.WR_FLUSH_ERR,
                                          WcOpcode.RDMA_WRITE, 0, None, now_ns))
            first = False
        self.pkts.clear()
        self.retx.clear()
        self.inflight = 0
        self.rto_at = None

    def paths_changed(self) -> None:
        """The EVs' encapsulations were rebuilt (the peer was learned, or a profile replaced an EV)."""

    def paths_replaced(self, slots: list[int]) -> None:
        """Policy: the profile put new EVs (new paths) into these slots (REPLACE_EV while ONLINE)."""

    # ------------------------------------------------------------------ posting
    def post_write(self, wr_id: int, data: bytes | memoryview | PayloadSource, remote_va: int, rkey: int,
                   imm: int | None = None) -> None:
        """Queue an RDMA WRITE (with immediate if ``imm`` is not None) of ``data`` (a buffer, or a
        :class:`~mrc.core.memory.PayloadSource` read a packet at a time).  On a QP in ERR the request
        completes at once with WR_FLUSH_ERR, as verbs flushes what is posted to a QP in the error
        state; before RTS (RST, INIT, RTR) it is refused, as ``ibv_post_send`` refuses it."""
        if self.state is not QpState.RTS and self.state is not QpState.ERR:
            raise ValueError(f"QP {self.qpn} is {self.state.value}; post_write needs RTS")
        # what the wire cannot carry is refused here: an immediate is 32 bits (a larger one went out
        # truncated), a RETH VA 64 bits and its DMA length 32 (an address past 2^64 raised inside
        # the endpoint's send path, mid-transfer, instead of here)
        if imm is not None and not 0 <= imm <= 0xFFFFFFFF:
            raise ValueError(f"imm {imm!r} is not a 32-bit value")
        if len(data) > 0xFFFFFFFF:
            raise ValueError(f"a message is at most 2^32 - 1 bytes (RETH DMA length), not {len(data)}")
        if not 0 <= remote_va <= (1 << 64) - max(1, len(data)):
            raise ValueError(f"remote_va {remote_va:#x} + {len(data)} bytes does not fit a 64-bit address")
        if self.state is QpState.ERR:
            self.host.complete(Completion(self.qpn, wr_id, WcStatus.WR_FLUSH_ERR, WcOpcode.RDMA_WRITE, 0, None,
                                          self.err_ns))
            return
        mtu = self.attr.mtu
        n = max(1, -(-len(data) // mtu))
        w = _Wqe(wr_id, data if isinstance(data, PayloadSource) else memoryview(data), remote_va, rkey & 0xFFFFFFFF,
                 imm, self.next_assign, n)
        self.next_assign += n
        self.wqes.append(w)

    def has_work(self) -> bool:
        # nothing to send outside RTS: a QP in ERR keeps the PSNs its flushed requests had taken
        return (bool(self.retx) or self.snd_ptr < self.next_assign) and self.state is QpState.RTS

    # ------------------------------------------------------------------ sending
    def fill(self, now_ns: int, budget: int = 0) -> int:
        """Emit the data packets the window, the ports and the QP state allow now, at most ``budget``
        (0: no limit; the endpoint gives every QP one packet per turn so QPs share the ports fairly).
        Resends (the policy's) go ahead of new data.  Returns how many were emitted."""
        self.wake_ns = None
        if self.state is not QpState.RTS:
            return 0
        host = self.host
        port_ok = host.port_ok_fn(now_ns)
        sent = 0
        paced = self.cc.rate_bps(now_ns) is not None
        while not budget or sent < budget:
            if paced and self.pace_ns > now_ns + host.slack_ns:  # the CC's pacing rate (DCQCN)
                self.wake_ns = int(self.pace_ns - host.slack_ns) + 1
                return sent
            r = self._resend_one(port_ok, now_ns)
            if r < 0:
                return sent
            if r:
                sent += 1
                continue
            if self.snd_nxt >= self.next_assign or self.snd_nxt - self.snd_una >= self.window:
                return sent
            pkt = self._new_packet()
            if pkt is None:
                return sent
            if not self._cwnd_ok(pkt.length):
                return sent
            i = self._pick(port_ok)
            if i < 0:
                return sent
            self._commit_new(pkt)
            self._transmit(pkt, i, now_ns)
            sent += 1
        return sent

    def _resend_one(self, port_ok, now_ns: int) -> int:
        """Policy: send one packet the policy must resend: 1 sent, 0 none to resend, -1 blocked."""
        return 0

    def _pick(self, port_ok) -> int:
        """Policy: the EV index the next data packet takes, or -1 (and ``wake_ns`` set) if none now."""
        raise NotImplementedError

    def _cwnd_ok(self, length: int) -> bool:
        w = self.cc.window()
        return w is None or self.inflight == 0 or self.inflight + length <= w

    def _new_packet(self) -> _Pkt | None:
        seq = self.snd_nxt
        while self.send_wqe_i < len(self.wqes) and self.wqes[self.send_wqe_i].last_seq < seq:
            self.send_wqe_i += 1
        if self.send_wqe_i >= len(self.wqes):
            return None
        w = self.wqes[self.send_wqe_i]
        k = seq - w.first_seq
        if k == 0 and w.imm is not None and not w.started and self.wimm_inflight >= self.attr.max_wimm:
            return None
        mtu = self.attr.mtu
        off = k * mtu
        return _Pkt(seq, w, off, min(mtu, w.length - off), _opcode(k, w.npkts, w.imm is not None))

    def _commit_new(self, pkt: _Pkt) -> None:
        w = pkt.wqe
        if not w.started:
            w.started = True
            if w.imm is not None:
                self.wimm_inflight += 1
        self.pkts[pkt.seq] = pkt
        self.snd_nxt += 1
        self.snd_ptr = max(self.snd_ptr, self.snd_nxt)

    def _transmit(self, pkt: _Pkt, ev_i: int, now_ns: int, dscp: int | None = None) -> None:
        """Send ``pkt`` on EV ``ev_i``; ``dscp``: its DSCP if not the EV's (``QpAttr.resend_dscp``)."""
        e = self.evset.entries[ev_i]
        w = pkt.wqe
        last = pkt.opcode in F.LAST_OPCODES
        data = encode_data(e.encap, pkt.opcode, self.remote.qpn, pkt.seq, w.va + pkt.off, w.rkey, w.length,
                           w.data[pkt.off : pkt.off + pkt.length], imm=w.imm if last else None,
                           ack_req=last or self._fills_window(pkt), dscp=dscp, pkey=self.attr.pkey)
        pkt.ev = ev_i
        pkt.sent_ns = now_ns
        # bytes in flight count each packet once: a first send, or a resend of a packet taken out of
        # flight (MRC: lost, trimmed, refused).  RC's go-back-N resends packets still in flight; adding
        # them again (until 2026-12-06) grew ``inflight`` by a packet per resend, and with a window
        # (NSCC) the QP found no room for ever: nothing unacknowledged, so no RTO either
        if not pkt.xmits or pkt.state != _Pkt.INFLIGHT:
            self.inflight += pkt.length
        if not pkt.xmits:
            pkt.first_ev, pkt.first_sent_ns = ev_i, now_ns
        pkt.xmits += 1
        if pkt.state != _Pkt.INFLIGHT:
            pkt.state = _Pkt.INFLIGHT
        cc = self.cc
        cc.on_sent(now_ns, pkt.length)
        rate = cc.rate_bps(now_ns)
        if rate is not None:
            self.pace_ns = max(self.pace_ns, float(now_ns)) + len(data) * 8e9 / rate
        self._sent(now_ns, pkt)
        self.counters.data_packets_sent += 1
        self.counters.data_bytes_sent += pkt.length
        self.host.send_frame(e.port, data, now_ns)
        if self.rto_at is None:
            self.rto_at = now_ns + self.timeout_ns

    def _fills_window(self, pkt: _Pkt) -> bool:
        """After ``pkt`` the congestion window has no room for another full packet: ask the responder
        to acknowledge it at once (BTH AckReq) instead of holding the ACK for ``ack_every`` packets or
        ``ack_delay_ns``, which no further packet will come to end -- UET's sender sets its ACK-request
        flag on the packet that fills the window for the same reason."""
        w = self.cc.window()
        if w is None:
            return False
        return self.inflight + pkt.length + self.attr.mtu > w  # _transmit adds pkt.length to inflight

    def _sent(self, now_ns: int, pkt: _Pkt) -> None:
        """Policy: a data packet just left (loss detection bookkeeping)."""

    def _count_retx(self, cause: str, pkt: _Pkt, now_ns: int) -> None:
        """Count a resend of ``pkt`` by its cause and keep it in the packet's history (before the resend
        goes out, so the EV kept is the one of the copy that was trimmed or lost)."""
        if pkt.hist is None:
            pkt.hist = []
        if len(pkt.hist) < HIST_MAX:
            pkt.hist.append([now_ns - pkt.first_sent_ns, cause, pkt.ev])
        c = self.counters
        if cause == "timeout":
            c.retx_timeout += 1
        elif cause == "trim":
            c.retx_trim += 1
        elif cause == "rnr":
            c.retx_rnr += 1
        else:
            c.retx_rack += 1

    # ------------------------------------------------------------------ ACKs
    def on_ack(self, fr: Frame, now_ns: int) -> None:
        """Process an ACK/NAK/SACK addressed to this QP."""
        if self.state is not QpState.RTS:
            return
        self.counters.acks_received += 1
        self.ack_now = now_ns
        syn = fr.syndrome
        if syn == F.AETH_NAK_REMOTE_ACCESS or syn == F.AETH_NAK_INVALID_REQ or syn == F.AETH_NAK_REMOTE_OP:
            seq = unwrap(fr.psn, self.snd_una)
            self._cum_ack(seq, now_ns)
            self._to_error(now_ns, WcStatus.REM_ACCESS_ERR)
            return
        self._on_ack(fr, now_ns)

    def _on_ack(self, fr: Frame, now_ns: int) -> None:
        """Policy: an ACK that is not a fatal NAK."""
        raise NotImplementedError

    def on_cnp(self, now_ns: int) -> None:
        """A RoCEv2 CNP from the responder: congestion on the path (RC's ECN feedback)."""
        if self.state is QpState.RTS:
            self.counters.cnps_received += 1
            self.cc.on_cnp(now_ns)

    def on_probe_resp(self, ev_i: int, rid: int, now_ns: int) -> None:
        """Policy: the answer to a probe this QP sent (only MRC probes)."""

    def _rtt(self, sample: int) -> None:
        if self.srtt == 0:
            self.srtt = sample
            self.min_rtt = sample
            self.rttvar = sample >> 1
        else:
            self.rttvar = (3 * self.rttvar + abs(self.srtt - sample)) >> 2
            self.srtt = (7 * self.srtt + sample) >> 3
            self.min_rtt = min(self.min_rtt, sample)

    def _rto(self) -> int:
        """The ACK timeout before backoff: ``1.024 us x 2^ack_timeout``, and at least srtt + 4 x rttvar
        (RFC 6298) [ours]: RTTs that swing past the configured timeout (Python switches on a loaded
        2-core machine: srtt 70 -> 190 ms within a second against 268 ms) must not read as no progress."""
        return max(self.base_timeout_ns, self.srtt + 4 * self.rttvar)

    def _cum_ack(self, cum: int, now_ns: int) -> None:
        self.mut += 1
        pkts = self.pkts
        late = now_ns - self.LATE_SRTTS * self.srtt if self.srtt else -1
        for seq in range(self.snd_una, cum):
            pkt = pkts.pop(seq, None)
            if pkt is not None and pkt.state != _Pkt.SACKED:
                if pkt.first_sent_ns < late:
                    self._note_late(pkt, now_ns)
                # newly known delivered; a SACKed packet was reported when its SACK came, and reporting
                # it again here gave its path a delivery time as long as the hole before it took to fill
                # (460 ms samples in the demo after a failure: every path's RACK limit grew by that)
                if pkt.state == _Pkt.INFLIGHT:
                    self.inflight -= pkt.length
                self._delivered(pkt)
        if cum > self.snd_una:
            self.snd_una = cum
            self.snd_ptr = max(self.snd_ptr, cum)
            self._progress(now_ns)
            self._complete_wqes(now_ns)

    def _note_late(self, pkt: _Pkt, now_ns: int) -> None:
        """``pkt`` is known delivered, ``LATE_SRTTS`` srtts or more after its first send: keep what happened
        to it (first copy, resends with their causes and the EVs of the copies resent) in ``late``."""
        if len(self.late) < LATE_LOG_MAX:
            self.late.append({"psn": pkt.seq & F.PSN_MASK, "first_sent_ns": pkt.first_sent_ns, "t_ns": now_ns,
                              "delivery_ns": now_ns - pkt.first_sent_ns, "srtt_ns": self.srtt, "xmits": pkt.xmits,
                              "first_ev": pkt.first_ev, "last_ev": pkt.ev, "resends": pkt.hist or [],
                              "held_cum_ack": pkt.seq == self.snd_una})

    def _delivered(self, pkt: _Pkt) -> None:
        """Policy: ``pkt`` is known delivered (evidence for loss detection)."""

    def _progress(self, now_ns: int) -> None:
        self.retries = 0
        self.timeout_ns = self._rto()
        self.rto_at = now_ns + self.timeout_ns if self.snd_una < self.snd_nxt else None

    def _complete_wqes(self, now_ns: int) -> None:
        while self.wqes and self.wqes[0].last_seq < self.snd_una:
            w = self.wqes.popleft()
            self.send_wqe_i = max(0, self.send_wqe_i - 1)
            if w.imm is not None:
                self.wimm_inflight -= 1
            self.host.complete(Completion(self.qpn, w.wr_id, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE,
                                          w.length, None, now_ns))

    def _after_ack(self, now_ns: int) -> None:
        if self.snd_una >= self.snd_nxt and not self.retx:
            self.rto_at = None

    # ------------------------------------------------------------------ timers
    def _on_rto(self, now_ns: int) -> None:
        self.counters.timeouts += 1
        self.retries += 1
        a = self.attr
        extra = self.retries - a.retry_cnt
        if extra > 0 and a.exp_retry_cnt != INFINITE_EXP_RETRIES and extra > a.exp_retry_cnt:
            self._to_error(now_ns, WcStatus.RETRY_EXC_ERR)
            return
        self.timeout_ns = self._rto() << min(max(extra, 0), 20)
        self.rto_at = now_ns + self.timeout_ns
        self._rto_resend(now_ns)

    def _rto_resend(self, now_ns: int) -> None:
        """Policy: the retransmission timer fired (and the QP survives it): what to resend."""
        raise NotImplementedError

    def timer(self) -> int | None:
        """Earliest deadline of the send side (RTO, port or pacing wake, and the policy's)."""
        t = None
        for c in (self.rto_at, self.wake_ns if self.has_work() else None):
            if c is not None and (t is None or c < t):
                t = c
        return t

    def on_timer(self, now_ns: int) -> None:
        """Run the send side's deadlines that have passed."""
        if self.state is not QpState.RTS:
            return
        if self.rto_at is not None and now_ns >= self.rto_at:
            self._on_rto(now_ns)
            if self.state is not QpState.RTS:
                return
        self._on_timer(now_ns)

    def _on_timer(self, now_ns: int) -> None:
        """Policy: periodic work after the RTO check (loss detection, probes)."""
