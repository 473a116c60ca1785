"""One queue pair: requester (segmentation, spraying, SACK/RACK/timeouts, NSCC) and responder
(placement, duplicate suppression, SACK generation, immediates in order), MRC or classic RC.

PSNs are handled as unwrapped 64-bit sequence numbers inside; the wire carries ``seq & 0xFFFFFF``
and received PSNs are unwrapped against the nearest reference, so 24-bit wrap-around is free.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mrc.core.cc import CongestionControl, DcqcnConfig, make_cc
from mrc.core.ev import PENALTY_ECN, PENALTY_TIMEOUT, EvEntry, EvSet
from mrc.core.nscc import NsccConfig
from mrc.core.types import Completion, EvState, QpCounters, QpState, WcOpcode, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, Encap, Frame, ProbeInfo, encode_ack, encode_cnp, encode_data, encode_probe

if TYPE_CHECKING:
    from mrc.core.endpoint import Endpoint

MODE_MRC = "mrc"
MODE_RC = "rc"
INFINITE_EXP_RETRIES = 25
TRIM_REPEATS = 2  # responder: SACKs after the first that report a trim again (_trims_again)
_HALF = 1 << 23


def unwrap(psn: int, ref: int) -> int:
    """The unwrapped sequence number nearest to ``ref`` whose low 24 bits are ``psn``."""
    d = (psn - ref) & F.PSN_MASK
    if d >= _HALF:
        d -= F.PSN_MOD
    return ref + d


@dataclass(slots=True)
class QpAttr:
    """QP attributes (mrc.h names where they exist)."""

    mode: str = MODE_MRC
    mtu: int = 4096
    mpr: int = 8  # window of PSNs tracked, in units of 128
    max_wimm: int = 64  # outstanding WRITE_WITH_IMM we send
    max_wimm_dest: int = 64  # un-polled immediate completions we accept
    ack_timeout: int = 10  # t: timeout = 1.024 us * 2^t (t <= 24)
    retry_cnt: int = 7  # linear retries (<= 7)
    exp_retry_cnt: int = 7  # exponential retries (<= 25; 25 = infinite)
    ev_min_active: int = 1  # the private profile's floor; a bound EV profile has its own
    probe_good_count: int = 3  # k answers in a row bring an ASSUMED_BAD EV back to GOOD
    probe_interval_ns: int = 0  # ASSUMED_BAD probe period; 0: max(4 x srtt, probe_min_ns), the ACK timeout before an RTT sample
    probe_min_ns: int = 1_000_000  # floor of the automatic probe period (an srtt of a few us must not flood the fabric)
    probe_pad_to_mtu: bool = True  # the streak's last probe is as large as a full-MTU data frame of its EV (docs/protocol.md)
    ack_every: int = 4  # responder coalesces this many packets per ACK
    ack_delay_ns: int = 2_000  # ...or acknowledges after this long
    reorder_min_ns: int = 2_000  # floor of the RACK reordering window
    reorder_adapt: bool = True  # widen the window when a loss verdict proves spurious (RFC 8985 6.2)
    # congestion control (mrc.core.cc): "nscc" | "dcqcn" | "none", a config object, or None (= "none")
    cc: str | NsccConfig | DcqcnConfig | CongestionControl | None = None
    cc_base_rtt_ns: int = 0  # the fabric's base RTT if known; 0: NSCC learns it from the smallest RTT sample
    cnp_interval_ns: int = 50_000  # responder: at most one CNP per this long per QP (RoCE NP default: 50 us)
    pkey: int = F.DEFAULT_PKEY
    ev_profile_id: int | None = None  # mrc.h MRC_EV_PROFILE_ID: an ONLINE mrc.ctl EV profile of the endpoint
    cc_profile_id: int | None = None  # mrc.h MRC_CC_PROFILE_ID: an ONLINE mrc.ctl CC profile of the endpoint

    def validate(self) -> None:
        """Raise ValueError on attributes outside what mrc.h allows."""
        if self.mode not in (MODE_MRC, MODE_RC):
            raise ValueError(f"mode must be 'mrc' or 'rc', not {self.mode!r}")
        if self.mtu not in (256, 512, 1024, 2048, 4096, 8192):
            raise ValueError("mtu must be one of 256, 512, 1024, 2048, 4096, 8192")
        if not 1 <= self.mpr <= 1024:
            raise ValueError("mpr must be 1..1024 (units of 128 PSNs)")
        if not 0 <= self.ack_timeout <= 24:
            raise ValueError("ack_timeout t must be 0..24")
        if not 0 <= self.retry_cnt <= 7:
            raise ValueError("retry_cnt must be 0..7")
        if not 0 <= self.exp_retry_cnt <= 25:
            raise ValueError("exp_retry_cnt must be 0..25 (25 = infinite)")
        if self.max_wimm < 1 or self.max_wimm_dest < 1:
            raise ValueError("max_wimm and max_wimm_dest must be >= 1")
        if self.probe_interval_ns < 0 or self.probe_min_ns < 0:
            raise ValueError("probe_interval_ns and probe_min_ns must be >= 0")
        if isinstance(self.cc, str) and self.cc not in ("nscc", "dcqcn", "none"):
            raise ValueError(f"cc must be nscc, dcqcn or none, not {self.cc!r}")


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
    __slots__ = ("ev", "first_ev", "first_sent_ns", "length", "off", "opcode", "sent_ns", "seq", "state", "trim_ns",
                 "wqe", "xmits")
    INFLIGHT, SACKED, LOST = 0, 1, 2

    def __init__(self, seq, wqe, off, length, opcode):
        self.seq, self.wqe, self.off, self.length, self.opcode = seq, wqe, off, length, opcode
        self.ev = self.first_ev = -1
        self.sent_ns = self.first_sent_ns = 0
        self.trim_ns = -(1 << 62)  # when a trim of this PSN was last acted on
        self.xmits = 0
        self.state = 0


def _opcode(i: int, n: int, imm: bool) -> int:
    if n == 1:
        return F.OP_WRITE_ONLY_IMM if imm else F.OP_WRITE_ONLY
    if i == 0:
        return F.OP_WRITE_FIRST
    if i == n - 1:
        return F.OP_WRITE_LAST_IMM if imm else F.OP_WRITE_LAST
    return F.OP_WRITE_MIDDLE


@dataclass(slots=True)
class _RxLast:
    imm: int | None
    dma_len: int


@dataclass(slots=True)
class _Remote:
    qpn: int = 0
    gid: bytes = b""
    entropy_index: dict = field(default_factory=dict)


class QueuePair:
    """A reliable-connection QP driven by its :class:`~mrc.core.endpoint.Endpoint`."""

    def __init__(self, ep: Endpoint, qpn: int, attr: QpAttr, evs: list[EvEntry], profile: Any = None):
        attr.validate()
        self.ep = ep
        self.qpn = qpn
        self.attr = attr
        self.rc = attr.mode == MODE_RC
        self.state = QpState.RST
        self.evset = EvSet(qpn, evs, attr.ev_min_active, profile)
        self.remote = _Remote()
        self.counters = QpCounters()
        self.window = attr.mpr * 128
        self.base_timeout_ns = 1024 << attr.ack_timeout  # 1.024 us x 2^t, in ns
        self.cc: CongestionControl | None = None  # built at RTS (mrc.core.cc); None until then
        self.pace_ns = 0.0  # the CC's pacing rate: the earliest time the next data packet may leave
        self.cnp_sent_ns = -(1 << 62)  # responder: last CNP we sent
        # requester
        self.wqes: deque[_Wqe] = deque()
        self.next_assign = 0
        self.snd_una = 0
        self.snd_nxt = 0
        self.snd_ptr = 0  # RC go-back-N send pointer
        self.send_wqe_i = 0  # index in wqes of the WQE being segmented
        self.pkts: dict[int, _Pkt] = {}
        self.inflight = 0
        self.retx: deque[tuple[int, str]] = deque()
        self.sent_log: deque[tuple[int, int, int]] = deque()
        self.rack_ts = 0
        self.ev_rack_ts = [-1] * len(evs)  # per EV: send time of the latest packet delivered on it (-1: none yet)
        self.ev_ack_ns = [0] * len(evs)  # per EV: when an ACK last reported a new delivery on it
        self.ack_now = 0  # time of the ACK being processed
        self.sack_blind = (0, 0)  # PSNs the latest SACK could not report on (between cum and its bitmap)
        self.reo_mult = 1  # reordering window = reo_mult x min_rtt / 4 (RFC 8985 reo_wnd_mult)
        self.reo_persist = 0  # loss verdicts left before reo_mult falls back to 1
        self.reo_bump_ns = -(1 << 62)
        self.srtt = 0
        self.rttvar = 0
        self.min_rtt = 0
        self.retries = 0
        self.timeout_ns = self.base_timeout_ns
        self.rto_at: int | None = None
        self.wimm_inflight = 0
        self.wake_ns: int | None = None
        # responder
        self.rcv_nxt = 0
        self.rx_bits = 0  # bit i: seq rcv_nxt + i arrived (bit 0 is always 0 between packets)
        self.rx_lasts: dict[int, _RxLast] = {}
        self.msn = 0
        self.rx_bytes = 0
        self.nak_pending = False
        self.ack_pending = 0
        self.ack_at: int | None = None
        self.ack_trigger: tuple[int, int, int, int] | None = None  # seq, arrival ns, ev index, entropy
        self.ack_ecn: list[int] = []
        self.ack_trim: list[int] = []
        self.trim_again: list[list[int]] = []  # [PSN, repeats left]: trims reported again in later SACKs
        self.wimm_unpolled = 0
        self._probe_pad: dict[int, int] = {}  # EV index -> frame length of a full-MTU data packet

    # ------------------------------------------------------------------ state machine
    def modify_to_init(self) -> None:
        self._expect(QpState.RST)
        self.state = QpState.INIT

    def modify_to_rtr(self, remote_qpn: int, remote_gid: bytes, rq_psn: int) -> None:
        """Learn the peer (QPN, GID) and the first PSN we expect; build the per-EV encapsulations."""
        self._expect(QpState.INIT)
        self.remote.qpn = remote_qpn & F.QPN_MASK
        self.remote.gid = bytes(remote_gid)
        self.rcv_nxt = rq_psn & F.PSN_MASK
        self._build_encaps()
        self.ep._register_peer(self)
        self.state = QpState.RTR

    def modify_to_rts(self, sq_psn: int, now_ns: int = 0) -> None:
        """Start sending at ``sq_psn``."""
        self._expect(QpState.RTR)
        self.snd_una = self.snd_nxt = self.snd_ptr = self.next_assign = sq_psn & F.PSN_MASK
        self.ev_ack_ns = [now_ns] * len(self.ev_ack_ns)
        ports = {e.port for e in self.evset.entries}
        line = len(ports) * self.ep.port_rate_bps if not self.rc else self.ep.port_rate_bps
        self.cc = make_cc(self.attr.cc, mtu=self.attr.mtu, rate_bps=line, now_ns=now_ns,
                          base_rtt_ns=self.attr.cc_base_rtt_ns, trimming=not self.rc)
        self.pace_ns = float(now_ns)
        self.state = QpState.RTS

    def _expect(self, st: QpState) -> None:
        if self.state is not st:
            raise ValueError(f"QP {self.qpn}: transition needs state {st.value}, QP is {self.state.value}")

    def _build_encaps(self) -> None:
        """One encapsulation per EV towards the peer, and the entropy -> EV index map of the responder."""
        self.remote.entropy_index = {}
        for i, e in enumerate(self.evset.entries):
            e.encap = self.ep.make_encap(self.remote.gid, e, i)
            self.remote.entropy_index[self._entropy_of(e.encap)] = i
        self._probe_pad.clear()

    def _sync_evs(self) -> None:
        """The profile replaced EV slots (REPLACE_EV on an ONLINE profile): take the new values."""
        evset = self.evset
        prof = evset.prof
        evset.gen = prof.generation
        self.ep.refresh_entries(self)
        if self.remote.gid:
            self._build_encaps()

    @staticmethod
    def _entropy_of(encap: Encap) -> int:
        return (encap.sport << 16) | (encap.flow_label & 0xFFFF)

    # ------------------------------------------------------------------ requester: posting
    def post_write(self, wr_id: int, data: bytes | memoryview, remote_va: int, rkey: int,
                   imm: int | None = None) -> None:
        """Queue an RDMA WRITE (with immediate if ``imm`` is not None)."""
        if self.state is not QpState.RTS:
            raise ValueError(f"QP {self.qpn} is {self.state.value}; post_write needs RTS")
        mtu = self.attr.mtu
        n = max(1, -(-len(data) // mtu))
        w = _Wqe(wr_id, memoryview(data), remote_va, rkey & 0xFFFFFFFF, imm, self.next_assign, n)
        self.next_assign += n
        self.wqes.append(w)

    def has_work(self) -> bool:
        return bool(self.retx) or self.snd_ptr < self.next_assign

    # ------------------------------------------------------------------ requester: sending
    def fill(self, now_ns: int, out: list, budget: int = 0) -> int:
        """Emit the data packets the window, the ports and the QP state allow now, at most ``budget``
        (0: no limit; the endpoint gives every QP one packet per turn so QPs share the ports fairly).
        Returns how many were emitted."""
        self.wake_ns = None
        if self.state is not QpState.RTS:
            return 0
        if self.evset.gen != self.evset.prof.generation:
            self._sync_evs()
        ep = self.ep
        port_ok = ep.port_ok_fn(now_ns)
        sent = 0
        paced = self.cc.rate_bps(now_ns) is not None
        while not budget or sent < budget:
            if paced and self.pace_ns > now_ns + ep.slack_ns:  # the CC's pacing rate (DCQCN)
                self.wake_ns = int(self.pace_ns - ep.slack_ns) + 1
                return sent
            if self.retx:
                seq, cause = self.retx[0]
                pkt = self.pkts.get(seq)
                if pkt is None or pkt.state != _Pkt.LOST:
                    self.retx.popleft()
                    continue
                if not self._cwnd_ok(pkt.length):
                    return sent
                i = self._pick(port_ok)
                if i < 0:
                    return sent
                self.retx.popleft()
                self._count_retx(cause)
                self._transmit(pkt, i, now_ns, out)
                sent += 1
                continue
            if self.rc and self.snd_ptr < self.snd_nxt:  # go-back-N resend
                pkt = self.pkts.get(self.snd_ptr)
                if pkt is None:
                    self.snd_ptr += 1
                    continue
                i = self._pick(port_ok)
                if i < 0:
                    return sent
                self.counters.retx_nak += 1
                self.snd_ptr += 1
                self._transmit(pkt, i, now_ns, out)
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
            self._transmit(pkt, i, now_ns, out)
            sent += 1
        return sent

    def _pick(self, port_ok) -> int:
        if self.rc:
            e = self.evset.entries[0]
            if e.port in self.evset.ports_down:
                return -1
            if not port_ok(e.port):
                self.wake_ns = self.ep.port_wake(e.port)
                return -1
            return 0
        es = self.evset
        i = es.pick(port_ok)
        if i < 0:
            # wake when a port of an EV we may use frees up: an idle port behind an ASSUMED_BAD EV
            # gave a wake time in the past and made the QP spin (1% loss took 20x the loss-free time)
            ports = [e.port for j, e in enumerate(es.entries) if es.usable(j)] or [e.port for e in es.entries]
            self.wake_ns = self.ep.earliest_port_wake(ports)
        return i

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

    def _transmit(self, pkt: _Pkt, ev_i: int, now_ns: int, out: list) -> None:
        e = self.evset.entries[ev_i]
        w = pkt.wqe
        last = pkt.opcode in F.LAST_OPCODES
        data = encode_data(e.encap, pkt.opcode, self.remote.qpn, pkt.seq, w.va + pkt.off, w.rkey, w.length,
                           w.data[pkt.off : pkt.off + pkt.length], imm=w.imm if last else None, ack_req=last)
        pkt.ev = ev_i
        pkt.sent_ns = now_ns
        if not pkt.xmits:
            pkt.first_ev, pkt.first_sent_ns = ev_i, now_ns
        pkt.xmits += 1
        if pkt.state != _Pkt.INFLIGHT:
            pkt.state = _Pkt.INFLIGHT
        self.inflight += pkt.length
        cc = self.cc
        cc.on_sent(now_ns, pkt.length)
        rate = cc.rate_bps(now_ns)
        if rate is not None:
            self.pace_ns = max(self.pace_ns, float(now_ns)) + len(data) * 8e9 / rate
        self.sent_log.append((now_ns, pkt.seq, pkt.xmits))
        self.counters.data_packets_sent += 1
        self.counters.data_bytes_sent += pkt.length
        self.ep.port_send(e.port, len(data), now_ns)
        out.append((e.port, data))
        if self.rto_at is None:
            self.rto_at = now_ns + self.timeout_ns

    def _count_retx(self, cause: str) -> None:
        c = self.counters
        if cause == "timeout":
            c.retx_timeout += 1
        elif cause == "trim":
            c.retx_trim += 1
        else:
            c.retx_rack += 1

    # ------------------------------------------------------------------ requester: ACKs
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
        if self.rc:
            before = self.inflight
            rtt = None
            if syn == F.AETH_NAK_PSN_SEQ_ERR:
                seq = unwrap(fr.psn, self.snd_una)
                if self.snd_una <= seq <= self.snd_nxt:
                    self._cum_ack(seq, now_ns)
                    self.snd_ptr = seq  # go back N
            elif syn >> 5 == 0:
                seq = unwrap(fr.psn, self.snd_una) + 1
                if self.snd_una < seq <= self.snd_nxt:
                    last = self.pkts.get(seq - 1)  # RTT sample: the newest packet acked, if sent once
                    if last is not None and last.xmits == 1:
                        rtt = now_ns - last.sent_ns
                    self._cum_ack(seq, now_ns)
            self.cc.on_ack(now_ns, max(0, before - self.inflight), rtt, False)
            self._after_ack(now_ns)
            return
        s = fr.sack
        if s is None:
            seq = unwrap(fr.psn, self.snd_una) + 1
            if self.snd_una < seq <= self.snd_nxt:
                self._cum_ack(seq, now_ns)
            self._after_ack(now_ns)
            return
        ev_bad: set[int] = set()
        # ECN marks and trims first: they need the packets' EVs, which a cumulative ACK may retire
        for p in s.ecn_psns:
            pkt = self.pkts.get(unwrap(p, self.snd_una))
            if pkt is not None and pkt.ev >= 0:
                self.evset.penalize(pkt.ev, PENALTY_ECN)
                self.evset.entries[pkt.ev].signal_ns = now_ns
                self.counters.ecn_echoes += 1
        for p in s.trim_psns:
            pkt = self.pkts.get(unwrap(p, self.snd_una))
            # a repeated trim (_trims_again) may name a copy already resent: a trim of the resent copy
            # cannot come back within a fraction of an RTT of its send, nor of the trim acted on before
            half = self.min_rtt >> 1
            if pkt is not None and pkt.state == _Pkt.INFLIGHT and now_ns - pkt.trim_ns >= half and \
                    (pkt.xmits == 1 or now_ns - pkt.sent_ns >= half):
                pkt.trim_ns = now_ns
                if pkt.ev >= 0:
                    self.evset.entries[pkt.ev].signal_ns = now_ns
                pkt.state = _Pkt.LOST
                self.inflight -= pkt.length
                self.retx.appendleft((pkt.seq, "trim"))  # at once, ahead of new data; no EV retired
                self.counters.trims_received += 1
                self.cc.on_trim(now_ns)
        if s.flags & F.SACK_FLAG_RETX_ECHO:
            self._spurious(now_ns)
        acked_before = self.inflight
        trig = self.pkts.get(unwrap(s.trigger_psn, self.snd_una))
        rtt_sample = None
        if trig is not None and trig.xmits == 1 and not s.flags & F.SACK_FLAG_RETX_ECHO \
                and trig.state == _Pkt.INFLIGHT:
            rtt_sample = max(0, now_ns - trig.sent_ns - s.service_time_ns)
        cum = unwrap(s.cum_psn, self.snd_una)
        if cum > self.snd_nxt:
            self.ep.counters.extra["rx_bogus_ack"] = self.ep.counters.extra.get("rx_bogus_ack", 0) + 1
            return
        progressed = False
        if cum > self.snd_una:
            self._cum_ack(cum, now_ns)
            progressed = True
        bm = s.bitmap
        # PSNs between the cumulative ACK and the bitmap's base: the responder moved the base up to
        # report its latest arrival (a bitmap is 64 bits), so it said nothing about these
        self.sack_blind = (self.snd_una + 1, unwrap(s.sack_base, self.snd_una))
        if bm:
            base = unwrap(s.sack_base, self.snd_una)
            pkts = self.pkts
            while bm:
                low = bm & -bm
                seq = base + low.bit_length() - 1
                bm ^= low
                pkt = pkts.get(seq)
                if pkt is not None and pkt.state != _Pkt.SACKED:
                    if pkt.state == _Pkt.INFLIGHT:
                        self.inflight -= pkt.length
                    pkt.state = _Pkt.SACKED
                    progressed = True
                    self._delivered(pkt)
        if rtt_sample is not None:
            self._rtt(rtt_sample)
        self.cc.on_ack(now_ns, max(0, acked_before - self.inflight), rtt_sample,
                       bool(s.flags & F.SACK_FLAG_ECN_ECHO))
        if progressed:
            self._progress(now_ns)
        self._detect_losses(now_ns, ev_bad)
        self._after_ack(now_ns)

    def on_cnp(self, now_ns: int) -> None:
        """A RoCEv2 CNP from the responder: congestion on the path (RC's ECN feedback)."""
        if self.state is QpState.RTS:
            self.counters.cnps_received += 1
            self.cc.on_cnp(now_ns)

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
        pkts = self.pkts
        for seq in range(self.snd_una, cum):
            pkt = pkts.pop(seq, None)
            if pkt is not None:
                if pkt.state == _Pkt.INFLIGHT:
                    self.inflight -= pkt.length
                self._delivered(pkt)
        if cum > self.snd_una:
            self.snd_una = cum
            self.snd_ptr = max(self.snd_ptr, cum)
            self._progress(now_ns)
            self._complete_wqes(now_ns)

    def _delivered(self, pkt: _Pkt) -> None:
        self.rack_ts = max(self.rack_ts, pkt.sent_ns)
        ev = pkt.ev
        if pkt.xmits > 1 and self.ack_now - pkt.sent_ns < self.min_rtt and pkt.first_ev >= 0:
            # reported sooner than any round trip after the resend: the first copy arrived (as Eifel
            # tells a spurious retransmission, RFC 3522) -- its path is alive and this slow
            e = self.evset.entries[pkt.first_ev]
            e.rtt_sample(self.ack_now - pkt.first_sent_ns)
            if e.suspect_ns and pkt.first_sent_ns >= e.suspect_sent_ns:
                e.suspect_ns = 0
        # per-EV evidence only from packets sent once (Karn's rule): a resent packet may have been
        # delivered by its first copy, on another EV, and would vouch for (or condemn) the wrong path
        if ev >= 0 and pkt.xmits == 1:
            self.ev_ack_ns[ev] = max(self.ev_ack_ns[ev], self.ack_now)
            self.ev_rack_ts[pkt.ev] = max(self.ev_rack_ts[pkt.ev], pkt.sent_ns)
            e = self.evset.entries[ev]
            # the path's delivery time: from the send to the ACK that reported it, whichever path
            # that ACK took (what RACK waits for; the trigger's RTT alone misses a slow path whose
            # packets faster paths' SACKs report first)
            e.rtt_sample(self.ack_now - pkt.sent_ns)
            if e.suspect_ns and pkt.sent_ns >= e.suspect_sent_ns:  # the suspect path delivers: alive
                e.suspect_ns = 0

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
            self.ep._complete(Completion(self.qpn, w.wr_id, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE,
                                         w.length, None, now_ns))

    def _after_ack(self, now_ns: int) -> None:
        if self.snd_una >= self.snd_nxt and not self.retx:
            self.rto_at = None

    def _reorder_window(self) -> int:
        """RACK's reordering window: min_rtt/4 (widened on spurious verdicts), at least the floor,
        and at least the queueing delay the QP sees now (srtt - min_rtt, [ours]): packets sprayed
        over paths whose queues differ arrive that much out of order, and a congested path must
        cost trims and ECN marks, not a loss verdict that retires a healthy EV."""
        w = (self.min_rtt >> 2) * self.reo_mult
        if self.reo_mult > 1 and self.srtt:
            w = min(w, self.srtt)
        if self.srtt > self.min_rtt:
            w = max(w, self.srtt - self.min_rtt)
        return max(w, self.attr.reorder_min_ns)

    def _ev_reorder_window(self, ev: int) -> int:
        """RACK's reordering window for a packet sent on EV ``ev``: the QP's window, widened to the
        extra delay this path shows over the fastest (its srtt + rttvar - min_rtt) [ours].  RACK
        compares a packet's send time with that of the latest one delivered, usually on the least
        queued path; a packet on a path whose queues hold it longer arrives that much later without
        being lost.  With one window for all paths, the fault-free all-to-all of bench/fabric_scenarios.py
        declared 25-53 packets lost that then arrived (every RACK resend a duplicate at the responder)
        and retired 2-6 healthy EVs per run (bench/README.md).  An EV without a sample yet uses srtt."""
        w = self._reorder_window()
        if ev < 0:
            return w
        e = self.evset.entries[ev]
        rtt = e.srtt + 2 * e.rttvar if e.srtt else self.srtt
        return max(w, rtt - self.min_rtt)

    def _quiet_ns(self, ev: int) -> int:
        """How long EV ``ev`` may go without a newly delivered packet before a RACK verdict on it
        counts as a path failure: an RTT, at least the reordering window.  A QP spreads its packets
        over all its EVs, so one EV's deliveries are several packet gaps apart ([ours]).  Waiting
        twice the EV's usual delivery gap as well cut fault-free retirements but slowed recovery
        after a failure from 2-3 to 4.1-4.4 RTTs in the demo (bench/README.md), so it is not done."""
        return max(self._ev_reorder_window(ev), self.srtt, self.evset.entries[ev].srtt)

    def _spurious(self, now_ns: int) -> None:
        """The responder echoed a duplicate: a packet we declared lost had arrived after all (or was
        still on its way).  As RACK does on a DSACK (RFC 8985 6.2): widen the reordering window by
        another min_rtt/4 (at most once per RTT, never beyond srtt) and keep it wide for the next 16
        loss verdicts."""
        if not self.attr.reorder_adapt or now_ns - self.reo_bump_ns < self.srtt:
            return
        self.reo_bump_ns = now_ns
        if self.reo_mult < 4:
            self.reo_mult += 1
            self.counters.reorder_widened += 1
        self.reo_persist = 16

    def _pto(self) -> int:
        """The least per-packet time limit (tail loss, ``_pkt_pto``): the smoothed RTT plus the reordering
        window and the ACK delay; before the first RTT sample twice the ACK timeout."""
        if not self.srtt:
            return 2 * self.timeout_ns + self._reorder_window() + self.attr.ack_delay_ns
        return self.srtt + self._reorder_window() + self.attr.ack_delay_ns

    def _pkt_pto(self, ev: int) -> int:
        """Tail-loss limit of a packet on EV ``ev``: its path's delivery time (or the QP's srtt, the larger)
        plus that path's reordering window and the ACK delay [ours].  A packet that nothing sent later has
        overtaken is lost once it is that late for its own path: a failed path's last packets (the QP
        blocked behind them) were found only at twice the QP's srtt plus a reordering window, and the
        demo's recovery after a link failure took 4-5 RTTs."""
        if not self.srtt or ev < 0:
            return self._pto()
        return max(self.srtt, self.evset.entries[ev].srtt) + self._ev_reorder_window(ev) + self.attr.ack_delay_ns

    def _pto_deadline(self) -> int | None:
        """When the first packet in flight reaches its tail-loss limit (its send time + ``_pkt_pto``); scans the send log only as far as a later send could still be first."""
        pto = self._pto()
        pkts = self.pkts
        t = None
        for sent, seq, xm in self.sent_log:
            if t is not None and sent + pto >= t:
                break
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
                continue  # settled (dropped from the log when it reaches the head)
            c = sent + self._pkt_pto(pkt.ev)
            if t is None or c < t:
                t = c
        return t

    def _detect_losses(self, now_ns: int, _ev_bad: set[int]) -> None:
        """RACK: a packet is lost once a packet sent more than the reordering window after it was
        delivered, or once it has been out longer than the PTO (tail loss)."""
        if self.rc:
            return
        log = self.sent_log
        pkts = self.pkts
        reo = self._reorder_window()  # every EV's window is at least this (_ev_reorder_window)
        pto = self._pto()
        while log:  # settled entries at the head go; lost packets are resent with a new entry
            sent, seq, xm = log[0]
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
                log.popleft()
                continue
            break
        # In send order, up to the first packet not even the QP's window could call lost: a packet on
        # a more queued EV waits its own window, and packets sent after it on other EVs are judged
        # meanwhile (a dead path's packets must not wait behind a slow path's).
        rack_ts = self.rack_ts
        for sent, seq, xm in log:  # _lose does not touch the log
            if sent + reo >= rack_ts and now_ns - sent < pto:
                break
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
                continue
            w = self._ev_reorder_window(pkt.ev)
            if sent + w < rack_ts or now_ns - sent >= self._pkt_pto(pkt.ev):
                if self.reo_mult > 1:  # a widened window lasts for 16 verdicts (not counting retirements)
                    self.reo_persist -= 1
                    if self.reo_persist <= 0:
                        self.reo_mult = 1
                self._lose(pkt, now_ns, "rack")

    def _lose(self, pkt: _Pkt, now_ns: int, cause: str) -> None:
        pkt.state = _Pkt.LOST
        self.inflight -= pkt.length
        self.retx.append((pkt.seq, cause))
        retire = False
        ev = pkt.ev
        if ev >= 0:
            if cause == "timeout":
                # nothing was acknowledged on any path for an RTO: which one failed is not known, so
                # each EV that carried a packet only gets the timeout penalty [ours].  A dead path's
                # packets reach their per-path tail-loss limit (_pkt_pto) well before the RTO and make
                # it suspect there; suspecting every EV here left the QP spraying over all of them,
                # the dead ones included, as the fallback (the demo's spine loss: 5.2 RTTs).
                self.evset.penalize(ev, PENALTY_TIMEOUT)
            elif self.ev_rack_ts[ev] >= pkt.sent_ns and not self.sack_blind[0] <= pkt.seq < self.sack_blind[1]:
                # the path lost this packet (a later one on it arrived: paths are FIFO) and is alive,
                # so its other packets in flight are left alone.  With congestion reported on it within
                # its RTT (CE echoes, trims), the loss is congestion's [ours]: most likely a trimmed
                # packet whose trim NACK a full queue dropped (switches trim data, not ACKs; in the
                # fabric bench such verdicts, none a duplicate, came in runs with 7-42 ACKs dropped
                # early), so the EV stays GOOD; otherwise the path drops packets that congestion does
                # not explain: ASSUMED_BAD.
                if now_ns - self.evset.entries[ev].signal_ns <= max(self.evset.entries[ev].srtt, self.srtt):
                    self.counters.rack_ev_kept += 1
                else:
                    self.evset.mark_bad(ev, now_ns, cause)
            elif now_ns - self.ev_ack_ns[ev] >= self._quiet_ns(ev):
                # it has gone quiet (no new delivery for an RTT): dead, or queued deeper than its
                # RTT estimate says -- suspect until a probe decides (_suspect)
                retire = self._suspect(ev, pkt.sent_ns, now_ns)
            else:
                # [ours] the path is still delivering (an ACK reported a new delivery on it within
                # the reordering window): the packet is more likely queued behind a congested hop,
                # which the switches signal with ECN and trims; resend it, keep the EV
                self.counters.rack_ev_kept += 1
        if cause == "timeout":
            self.cc.on_timeout(now_ns)
        else:
            self.cc.on_loss(now_ns)
        if retire:
            self._retire_ev(pkt.ev, now_ns)

    def _suspect(self, ev_i: int, sent_ns: int, now_ns: int) -> bool:
        """A RACK verdict found EV ``ev_i`` quiet: probe before retiring it [ours].  The QP stops
        spraying on it at once (``EvSet.pick`` takes a suspect EV only when nothing else can send) and
        sends it one probe; a probe answer, or the delivery of a packet sent on it no earlier than the
        missing one, clears it (the path was only slow); no such evidence within ``_confirm_ns`` makes
        it ASSUMED_BAD (cause ``rack``).  Recovery is the same as retiring at once -- new packets avoid
        the path from the verdict on, and what was in flight on it is resent now (True) -- but a path
        that is merely queued deeper than its RTT estimate costs a probe instead of an EV.  Measured on
        the fault-free all-to-all of bench/fabric_scenarios.py: every quiet-path verdict was followed
        by the 'lost' packet arriving (bench/README.md).  False if the EV was already suspect or not GOOD."""
        e = self.evset.entries[ev_i]
        if e.suspect_ns or self.evset.prof.states[ev_i] is not EvState.GOOD:
            return False
        e.suspect_ns = now_ns
        e.suspect_sent_ns = sent_ns
        e.probe_next_ns = now_ns
        e.probe_req_id = -1
        self.counters.rack_ev_suspect += 1
        return True

    def _confirm_ns(self, e: EvEntry) -> int:
        """How long a suspect EV has to show it is alive: two of its RTTs (srtt + 4 x rttvar), at least
        two of the QP's -- a probe waits behind the same queues as the data; an EV that has not had a
        sample yet, four of the QP's (nothing says how long its path is)."""
        if not e.srtt:
            return max(4 * self.srtt, self.attr.reorder_min_ns)
        return max(2 * (e.srtt + 4 * e.rttvar), 2 * self.srtt, self.attr.reorder_min_ns)

    def _check_suspects(self, now_ns: int) -> None:
        """Retire the suspect EVs whose time to show life is up."""
        for i, e in enumerate(self.evset.entries):
            if e.suspect_ns and now_ns >= e.suspect_ns + self._confirm_ns(e):
                e.suspect_ns = 0
                self.evset.mark_bad(i, now_ns, "rack")

    def _retire_ev(self, ev_i: int, now_ns: int) -> None:
        """EV ``ev_i`` just went ASSUMED_BAD on a loss, and nothing sent on it after the lost packet
        has been delivered: what is still in flight on it is behind the lost packet on the same path
        (a path is FIFO), so it is resent on the GOOD EVs now (counted as RACK retransmissions) instead
        of being found lost one reordering window after another.  On a dead path that saves a round
        of detection (RTT + reordering window) for every packet sent on it after the failure; a path
        that dropped one packet and still delivers is left alone (the check in ``_lose``)."""
        pkts = self.pkts
        for seq in range(self.snd_una, self.snd_nxt):
            p = pkts.get(seq)
            if p is not None and p.state == _Pkt.INFLIGHT and p.ev == ev_i:
                self._lose(p, now_ns, "rack")

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
        if self.rc:
            if self.snd_ptr > self.snd_una:
                self.snd_ptr = self.snd_una
                self.counters.retx_timeout += 1  # the rest counts as go-back-N resends
            return
        for seq in range(self.snd_una, self.snd_nxt):
            pkt = self.pkts.get(seq)
            if pkt is not None and pkt.state == _Pkt.INFLIGHT:
                self._lose(pkt, now_ns, "timeout")

    def _to_error(self, now_ns: int, status: WcStatus) -> None:
        """Move to ERR: the oldest WQE completes with ``status``, the rest are flushed."""
        if self.state is QpState.ERR:
            return
        self.state = QpState.ERR
        first = True
        while self.wqes:
            w = self.wqes.popleft()
            self.ep._complete(Completion(self.qpn, w.wr_id, status if first else WcStatus.WR_FLUSH_ERR,
                                         WcOpcode.RDMA_WRITE, 0, None, now_ns))
            first = False
        self.pkts.clear()
        self.retx.clear()
        self.sent_log.clear()
        self.inflight = 0
        self.rto_at = None
        self.ack_at = None

    # ------------------------------------------------------------------ timers
    def timer(self) -> int | None:
        """Earliest deadline this QP needs (RTO, tail-loss PTO, ACK coalescing, probes, port wake)."""
        t = None
        for c in (self.rto_at, self.ack_at, self.wake_ns if self.has_work() else None):
            if c is not None and (t is None or c < t):
                t = c
        if not self.rc and self.sent_log and self.state is QpState.RTS:
            c = self._pto_deadline()
            if c is not None and (t is None or c < t):
                t = c
        if self.state is QpState.RTS and not self.rc:
            states = self.evset.prof.states
            bad = EvState.ASSUMED_BAD
            for i, e in enumerate(self.evset.entries):
                if states[i] is bad:
                    c = e.probe_next_ns
                    if t is None or c < t:
                        t = c
                elif e.suspect_ns:
                    c = e.suspect_ns + self._confirm_ns(e)
                    if e.probe_req_id < 0 and e.probe_next_ns < c:
                        c = e.probe_next_ns
                    if t is None or c < t:
                        t = c
        return t

    def on_timer(self, now_ns: int, out: list) -> None:
        if self.evset.gen != self.evset.prof.generation:
            self._sync_evs()
        if self.ack_at is not None and now_ns >= self.ack_at:
            self._send_ack(now_ns, out)
        if self.state is not QpState.RTS:
            return
        if self.rto_at is not None and now_ns >= self.rto_at:
            self._on_rto(now_ns)
            if self.state is not QpState.RTS:
                return
        if not self.rc:
            self._detect_losses(now_ns, set())
            self._check_suspects(now_ns)
            self._probe(now_ns, out)

    # ------------------------------------------------------------------ probes
    def _probe_interval(self) -> int:
        """Probe period of an ASSUMED_BAD EV: the attribute if set, else 4 x srtt with a floor of
        ``probe_min_ns``; before the first RTT sample, the ACK timeout (with the same floor)."""
        a = self.attr
        if a.probe_interval_ns:
            return a.probe_interval_ns
        if self.srtt:
            return max(4 * self.srtt, a.probe_min_ns)
        return max(self.base_timeout_ns, a.probe_min_ns)

    def _probe_frame_len(self, i: int, e: EvEntry) -> int:
        """Length of a full-MTU data frame on EV ``i`` (what a probe is padded to)."""
        n = self._probe_pad.get(i)
        if n is None:
            mtu = self.attr.mtu
            n = self._probe_pad[i] = len(encode_data(e.encap, F.OP_WRITE_MIDDLE, self.remote.qpn, 0, 0, 0, mtu,
                                                     bytes(mtu)))
        return n

    def _probe_wait(self) -> int:
        """How long a probe may stay unanswered before it counts as lost: one probe period, and never
        less than twice the smoothed RTT (a period shorter than the RTT would give up on every probe
        before its answer could arrive, and no EV would ever come back)."""
        return max(self._probe_interval(), 2 * self.srtt)

    def _probe(self, now_ns: int, out: list) -> None:
        states = self.evset.prof.states
        for i, e in enumerate(self.evset.entries):
            if e.suspect_ns and states[i] is EvState.GOOD:  # one probe per suspicion (_suspect)
                if e.probe_req_id >= 0 or now_ns < e.probe_next_ns or e.port in self.evset.ports_down:
                    continue
                # as large as a data frame: a path that drops only large frames (a silent MTU
                # blackhole) must not clear itself with a small probe
                self._send_probe(i, e, now_ns, out, pad=self.attr.probe_pad_to_mtu)
                e.probe_next_ns = 1 << 62
                continue
            if states[i] is not EvState.ASSUMED_BAD or now_ns < e.probe_next_ns:
                continue
            if e.probe_req_id >= 0:
                late = e.probe_sent_ns + self._probe_wait()
                if now_ns < late:  # still in flight: give it its time before sending the next
                    e.probe_next_ns = late
                    continue
                e.probe_streak = 0  # previous probe unanswered: the streak starts over
                self.ep._forget_probe(e.probe_req_id)
            e.probe_next_ns = now_ns + self._probe_interval()
            if e.port in self.evset.ports_down:
                e.probe_req_id = -1
                continue
            self._send_probe(i, e, now_ns, out,
                             pad=self.attr.probe_pad_to_mtu and e.probe_streak == self.attr.probe_good_count - 1)

    def _send_probe(self, i: int, e: EvEntry, now_ns: int, out: list, pad: bool) -> None:
        """One PROBE_REQ on EV ``i``; ``pad``: as large as a full-MTU data frame of the EV."""
        rid = self.ep._new_probe(self, i)
        e.probe_req_id = rid
        e.probe_sent_ns = now_ns
        pkt = encode_probe(e.encap, F.OP_PROBE_REQ, ProbeInfo(rid, e.port, 0, now_ns, 0, 0))
        if pad:
            # The probe that would bring the EV back is as large as a data frame (Ethernet
            # trailer after the IP packet: IP/UDP lengths stay those of the probe, so every
            # receiver parses it as is): a path that drops only large frames never completes a
            # streak.  Only that one: a dead path's probes stay small (padding every probe cost
            # a quarter of a slow port's bandwidth per ASSUMED_BAD EV in the emulated fabric).
            pkt += bytes(self._probe_frame_len(i, e) - len(pkt))
        self.counters.probes_sent += 1
        self.ep.port_send(e.port, len(pkt), now_ns)
        out.append((e.port, pkt))

    def on_probe_resp(self, ev_i: int, rid: int, now_ns: int) -> None:
        e = self.evset.entries[ev_i]
        if e.probe_req_id != rid:
            return
        e.probe_req_id = -1
        self.counters.probe_answers += 1
        if e.suspect_ns:  # the suspect path answered: it was slow, not dead
            e.suspect_ns = 0
            return
        e.probe_streak += 1
        if e.probe_streak >= self.attr.probe_good_count:
            self.evset.mark_good(ev_i, now_ns, "probe")
        else:
            e.probe_next_ns = now_ns  # answer came back: next probe right away

    # ------------------------------------------------------------------ responder
    def ev_index_of(self, fr: Frame) -> int:
        """Which of our EVs mirrors the path a packet came on (SRv6: index in the inner sport)."""
        if fr.sport >= F.SRV6_INNER_SPORT_BASE and self.ep.encap_mode == "srv6":
            return fr.sport & 0x3FFF
        return self.remote.entropy_index.get(fr.entropy, -1)

    def on_data(self, fr: Frame, now_ns: int, out: list) -> None:
        """Place one RDMA WRITE packet, suppress duplicates, complete messages, schedule the (S)ACK."""
        if self.state is not QpState.RTS and self.state is not QpState.RTR:
            return
        c = self.counters
        seq = unwrap(fr.psn, self.rcv_nxt)
        d = seq - self.rcv_nxt
        evi = self.ev_index_of(fr)
        if d < 0 or (d > 0 and (self.rx_bits >> d) & 1):
            c.duplicates_received += 1
            self.ack_trigger = (seq, now_ns, evi, fr.entropy)
            self._send_ack(now_ns, out, force_ack=True)
            return
        if d >= self.window:
            c.out_of_window += 1
            return
        if fr.trimmed:
            c.trims_received += 1
            if not self.rc:
                self.ack_trim.append(seq)
                if len(self.trim_again) < 4 * F.SACK_MAX_LIST:
                    self.trim_again.append([seq, TRIM_REPEATS])
                self.ack_trigger = (seq, now_ns, evi, fr.entropy)
                self._send_ack(now_ns, out, trim=True)
            return
        if self.rc and d > 0:  # classic RC: only in-order packets are accepted
            if not self.nak_pending:
                self.nak_pending = True
                self._send_nak(F.AETH_NAK_PSN_SEQ_ERR, self.rcv_nxt, evi, now_ns, out)
            return
        # placement with bounds and rkey checks
        mr = self.ep.mrs.get(fr.rkey)
        plen = len(fr.payload)
        if mr is None or not mr.remote_write or not mr.contains(fr.va, plen) or plen > self.attr.mtu \
                or fr.dma_len < plen:
            c.bad_access += 1
            self._send_nak(F.AETH_NAK_REMOTE_ACCESS, seq, evi, now_ns, out)
            self._to_error(now_ns, WcStatus.REM_ACCESS_ERR)
            return
        last = fr.opcode in F.LAST_OPCODES
        if last and fr.imm is not None and self.wimm_unpolled >= self.attr.max_wimm_dest:
            c.wimm_overflow += 1
            return  # not acknowledged; the requester retransmits it later
        if plen:
            mr.write(fr.va, fr.payload)
        c.bytes_placed += plen
        self.rx_bytes += plen
        if last:
            self.rx_lasts[seq] = _RxLast(fr.imm, fr.dma_len)
            if fr.imm is not None:
                self.wimm_unpolled += 1
        self.rx_bits |= 1 << d
        if d == 0:
            self.nak_pending = False
            bits = self.rx_bits
            run = (~bits & (bits + 1)).bit_length() - 1
            old = self.rcv_nxt
            self.rcv_nxt = old + run
            self.rx_bits = bits >> run
            if self.rx_lasts:
                for s in range(old, self.rcv_nxt):
                    m = self.rx_lasts.pop(s, None)
                    if m is not None:
                        self.msn += 1
                        if m.imm is not None:
                            self.ep._complete(Completion(self.qpn, 0, WcStatus.SUCCESS,
                                                         WcOpcode.RECV_RDMA_WITH_IMM, m.dma_len, m.imm,
                                                         now_ns))
        self.ack_trigger = (seq, now_ns, evi, fr.entropy)
        if fr.ce and self.rc:  # RoCE's notification point: a CNP, at most one per cnp_interval_ns
            if now_ns - self.cnp_sent_ns >= self.attr.cnp_interval_ns:
                self.cnp_sent_ns = now_ns
                self._send_cnp(evi, now_ns, out)
        elif fr.ce:
            self.ack_ecn.append(seq)
        self.ack_pending += 1
        if fr.ce or d > 0 or fr.ack_req or self.ack_pending >= self.attr.ack_every:
            self._send_ack(now_ns, out)
        elif self.ack_at is None:
            self.ack_at = now_ns + self.attr.ack_delay_ns

    def _trims_again(self, trims: list[int]) -> list[int]:
        """``trims`` plus trims reported before whose data has not arrived, each in TRIM_REPEATS more
        SACKs [ours]: a trim NACK is an ACK, which a full queue drops (switches trim data, not ACKs),
        and a lost one left the packet to RACK, which saw a later packet of the same path arrive and
        retired a healthy EV (the fabric bench's fault-free and failure runs: such verdicts, none a
        duplicate, in runs with 7-42 ACKs dropped early)."""
        room = F.SACK_MAX_LIST - len(trims)
        keep, extra = [], []
        for ent in self.trim_again:
            seq, d = ent[0], ent[0] - self.rcv_nxt
            if d < 0 or (d > 0 and (self.rx_bits >> d) & 1):
                continue  # arrived
            if seq not in trims and len(extra) < room:
                extra.append(seq)
                ent[1] -= 1
            if ent[1] > 0:
                keep.append(ent)
        self.trim_again = keep
        return trims + extra

    def _send_cnp(self, evi: int, now_ns: int, out: list) -> None:
        e = self.evset.entries[self.evset.reply_index(evi)]
        pkt = encode_cnp(e.encap, self.remote.qpn)
        self.counters.cnps_sent += 1
        self.ep.port_send(e.port, len(pkt), now_ns)
        out.append((e.port, pkt))

    def _send_nak(self, syndrome: int, seq: int, evi: int, now_ns: int, out: list) -> None:
        e = self.evset.entries[self.evset.reply_index(evi)]
        pkt = encode_ack(e.encap, self.remote.qpn, seq, syndrome, self.msn)
        self.counters.naks_sent += 1
        self.ep.port_send(e.port, len(pkt), now_ns)
        out.append((e.port, pkt))

    def _send_ack(self, now_ns: int, out: list, trim: bool = False, force_ack: bool = False) -> None:
        self.ack_at = None
        self.ack_pending = 0
        trig = self.ack_trigger
        if trig is None:
            return
        seq, arrived, evi, entropy = trig
        e = self.evset.entries[self.evset.reply_index(evi)]
        if self.rc:
            # classic RC has no ECN/trim echo in its ACK: drop the marks (keeping them made the
            # "more marks than one SACK holds" loop below recurse for ever on a CE-marked packet)
            self.ack_ecn.clear()
            self.ack_trim.clear()
            pkt = encode_ack(e.encap, self.remote.qpn, self.rcv_nxt - 1, F.AETH_ACK, self.msn)
        else:
            base = self.rcv_nxt + 1
            if seq - base >= F.SACK_BITMAP_BITS:
                base = seq - F.SACK_BITMAP_BITS + 1
            bitmap = (self.rx_bits >> (base - self.rcv_nxt)) & ((1 << F.SACK_BITMAP_BITS) - 1)
            flags = F.SACK_FLAG_MRC
            if self.ack_ecn and self.ack_ecn[-1] == seq:
                flags |= F.SACK_FLAG_ECN_ECHO
            if trim:
                flags |= F.SACK_FLAG_TRIM
            if force_ack:
                flags |= F.SACK_FLAG_RETX_ECHO
            ecn, trims = self.ack_ecn[: F.SACK_MAX_LIST], self.ack_trim[: F.SACK_MAX_LIST]
            del self.ack_ecn[: F.SACK_MAX_LIST]
            del self.ack_trim[: F.SACK_MAX_LIST]
            if self.trim_again:
                trims = self._trims_again(trims)
            info = AckInfo(self.rcv_nxt, base, bitmap, seq, flags, now_ns - arrived, self.rx_bytes,
                           entropy, ecn, trims)
            pkt = encode_ack(e.encap, self.remote.qpn, seq, F.AETH_ACK, self.msn, info)
        self.counters.acks_sent += 1
        self.ep.port_send(e.port, len(pkt), now_ns)
        out.append((e.port, pkt))
        if self.ack_ecn or self.ack_trim:  # more than one SACK's worth of marks
            self._send_ack(now_ns, out)
