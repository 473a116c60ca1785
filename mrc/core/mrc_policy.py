"""MRC's loss and ack policy: spray every packet over the QP's EVs, SACKs with ECN and trim echoes,
RACK loss detection, EV retirement, and probes that bring an ASSUMED_BAD EV back.

A trimmed packet means congestion: resend it at once, keep its EV.  A lost packet (RACK: a later
packet on its EV was delivered, or the EV went quiet; or the RTO) makes its EV ASSUMED_BAD; what is
still in flight behind it on a dead path is resent on the GOOD EVs right away.  The rules and their
sources are in docs/protocol.md ("Transport rules").
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from mrc.core.ev import PENALTY_ECN, PENALTY_TIMEOUT, EvEntry
from mrc.core.psn import unwrap
from mrc.core.requester import Requester, _Pkt
from mrc.core.responder import Responder
from mrc.core.types import EvState, QpState
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, Encap, Frame, ProbeInfo, encode_ack, encode_data, encode_probe

if TYPE_CHECKING:
    from mrc.core.qp import QueuePair
    from mrc.core.types import WcStatus


class MrcRequester(Requester):
    """The MRC requester: spraying, SACK/trim/ECN, RACK, EV retirement, probes."""

    TRIMMING = True

    def __init__(self, qp: QueuePair):
        super().__init__(qp)
        n = len(self.evset.entries)
        self.sent_log: deque[tuple[int, int, int]] = deque()
        self.rack_ts = 0
        self.ev_rack_ts = [0] * n  # per EV: send time of the latest packet delivered on it
        self.ev_ack_ns = [0] * n  # per EV: when an ACK last reported a new delivery on it
        self.reo_mult = 1  # reordering window = reo_mult x min_rtt / 4 (RFC 8985 reo_wnd_mult)
        self.reo_persist = 0  # loss verdicts left before reo_mult falls back to 1
        self.reo_bump_ns = -(1 << 62)
        self._probe_pad: dict[int, int] = {}  # EV index -> frame length of a full-MTU data packet

    def start(self, sq_psn: int, now_ns: int) -> None:
        super().start(sq_psn, now_ns)
        self.ev_ack_ns = [now_ns] * len(self.ev_ack_ns)

    def _line_rate_bps(self) -> float:
        ports = {e.port for e in self.evset.entries}
        return len(ports) * self.host.port_rate_bps

    def flush(self, now_ns: int, status: WcStatus) -> None:
        super().flush(now_ns, status)
        self.sent_log.clear()

    def paths_changed(self) -> None:
        self._probe_pad.clear()

    # ------------------------------------------------------------------ sending
    def _resend_one(self, port_ok, now_ns: int) -> int:
        """Trimmed and lost packets first, each on the next EV the spray picks."""
        while self.retx:
            seq, cause = self.retx[0]
            pkt = self.pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.LOST:
                self.retx.popleft()
                continue
            if not self._cwnd_ok(pkt.length):
                return -1
            i = self._pick(port_ok)
            if i < 0:
                return -1
            self.retx.popleft()
            self._count_retx(cause)
            self._transmit(pkt, i, now_ns)
            return 1
        return 0

    def _pick(self, port_ok) -> int:
        es = self.evset
        i = es.pick(port_ok)
        if i < 0:
            # wake when a port of an EV we may use frees up: an idle port behind an ASSUMED_BAD EV
            # gave a wake time in the past and made the QP spin (1% loss took 20x the loss-free time)
            ports = [e.port for j, e in enumerate(es.entries) if es.usable(j)] or [e.port for e in es.entries]
            self.wake_ns = self.host.earliest_port_wake(ports)
        return i

    def _sent(self, now_ns: int, pkt: _Pkt) -> None:
        self.sent_log.append((now_ns, pkt.seq, pkt.xmits))

    # ------------------------------------------------------------------ ACKs
    def _on_ack(self, fr: Frame, now_ns: int) -> None:
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
                self.counters.ecn_echoes += 1
        for p in s.trim_psns:
            pkt = self.pkts.get(unwrap(p, self.snd_una))
            if pkt is not None and pkt.state == _Pkt.INFLIGHT:
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
            self.host.count("rx_bogus_ack")
            return
        progressed = False
        if cum > self.snd_una:
            self._cum_ack(cum, now_ns)
            progressed = True
        bm = s.bitmap
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

    def _delivered(self, pkt: _Pkt) -> None:
        self.rack_ts = max(self.rack_ts, pkt.sent_ns)
        ev = pkt.ev
        # per-EV evidence only from packets sent once (Karn's rule): a resent packet may have been
        # delivered by its first copy, on another EV, and would vouch for (or condemn) the wrong path
        if ev >= 0 and pkt.xmits == 1:
            self.ev_ack_ns[ev] = max(self.ev_ack_ns[ev], self.ack_now)
            self.ev_rack_ts[pkt.ev] = max(self.ev_rack_ts[pkt.ev], pkt.sent_ns)

    # ------------------------------------------------------------------ loss detection (RACK)
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

    def _quiet_ns(self, ev: int) -> int:
        """How long EV ``ev`` may go without a newly delivered packet before a RACK verdict on it
        counts as a path failure: an RTT, at least the reordering window.  A QP spreads its packets
        over all its EVs, so one EV's deliveries are several packet gaps apart ([ours]).  Waiting
        twice the EV's usual delivery gap as well cut fault-free retirements but slowed recovery
        after a failure from 2-3 to 4.1-4.4 RTTs in the demo (bench/README.md), so it is not done."""
        return max(self._reorder_window(), self.srtt)

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
        """Per-packet time limit (tail loss): twice the smoothed RTT plus reordering and ACK delay."""
        base = self.srtt if self.srtt else self.timeout_ns
        return 2 * base + self._reorder_window() + self.attr.ack_delay_ns

    def _detect_losses(self, now_ns: int, _ev_bad: set[int]) -> None:
        """RACK: a packet is lost once a packet sent more than the reordering window after it was
        delivered, or once it has been out longer than the PTO (tail loss)."""
        log = self.sent_log
        pkts = self.pkts
        reo = self._reorder_window()
        pto = self._pto()
        while log:
            sent, seq, xm = log[0]
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
                log.popleft()
                continue
            if sent + reo < self.rack_ts or now_ns - sent >= pto:
                log.popleft()
                if self.reo_mult > 1:  # a widened window lasts for 16 verdicts (not counting retirements)
                    self.reo_persist -= 1
                    if self.reo_persist <= 0:
                        self.reo_mult = 1
                self._lose(pkt, now_ns, "rack")
                continue
            break

    def _lose(self, pkt: _Pkt, now_ns: int, cause: str) -> None:
        pkt.state = _Pkt.LOST
        self.inflight -= pkt.length
        self.retx.append((pkt.seq, cause))
        retire = False
        ev = pkt.ev
        if ev >= 0:
            if cause == "timeout":
                self.evset.penalize(ev, PENALTY_TIMEOUT)
                self.evset.mark_bad(ev, now_ns, cause)
            elif self.ev_rack_ts[ev] >= pkt.sent_ns or now_ns - self.ev_ack_ns[ev] >= self._quiet_ns(ev):
                # the path lost this packet (a later one on it arrived: paths are FIFO), or it has
                # gone quiet (no new delivery for an RTT): ASSUMED_BAD.  Retire its other packets in
                # flight only in the second case (a path that delivered something sent after this
                # packet is alive: only this one was lost)
                retire = self.evset.mark_bad(ev, now_ns, cause) and self.ev_rack_ts[ev] < pkt.sent_ns
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

    def _rto_resend(self, now_ns: int) -> None:
        """Every packet in flight is lost (each one's EV takes the timeout verdict)."""
        for seq in range(self.snd_una, self.snd_nxt):
            pkt = self.pkts.get(seq)
            if pkt is not None and pkt.state == _Pkt.INFLIGHT:
                self._lose(pkt, now_ns, "timeout")

    # ------------------------------------------------------------------ timers
    def timer(self) -> int | None:
        """Also: the tail-loss PTO of the oldest packet, and the next probe of an ASSUMED_BAD EV."""
        t = super().timer()
        if self.sent_log and self.state is QpState.RTS:
            c = self.sent_log[0][0] + self._pto()
            if t is None or c < t:
                t = c
        if self.state is QpState.RTS:
            states = self.evset.prof.states
            bad = EvState.ASSUMED_BAD
            for i, e in enumerate(self.evset.entries):
                if states[i] is bad:
                    c = e.probe_next_ns
                    if t is None or c < t:
                        t = c
        return t

    def _on_timer(self, now_ns: int) -> None:
        self._detect_losses(now_ns, set())
        self._probe(now_ns)

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

    def _probe(self, now_ns: int) -> None:
        states = self.evset.prof.states
        for i, e in enumerate(self.evset.entries):
            if states[i] is not EvState.ASSUMED_BAD or now_ns < e.probe_next_ns:
                continue
            if e.probe_req_id >= 0:
                late = e.probe_sent_ns + self._probe_wait()
                if now_ns < late:  # still in flight: give it its time before sending the next
                    e.probe_next_ns = late
                    continue
                e.probe_streak = 0  # previous probe unanswered: the streak starts over
                self.host.forget_probe(e.probe_req_id)
            e.probe_next_ns = now_ns + self._probe_interval()
            if e.port in self.evset.ports_down:
                e.probe_req_id = -1
                continue
            rid = self.host.new_probe(self.qp, i)
            e.probe_req_id = rid
            e.probe_sent_ns = now_ns
            pkt = encode_probe(e.encap, F.OP_PROBE_REQ, ProbeInfo(rid, e.port, 0, now_ns, 0, 0))
            if self.attr.probe_pad_to_mtu and e.probe_streak == self.attr.probe_good_count - 1:
                # The probe that would bring the EV back is as large as a data frame (Ethernet
                # trailer after the IP packet: IP/UDP lengths stay those of the probe, so every
                # receiver parses it as is): a path that drops only large frames never completes a
                # streak.  Only that one: a dead path's probes stay small (padding every probe cost
                # a quarter of a slow port's bandwidth per ASSUMED_BAD EV in the emulated fabric).
                pkt += bytes(self._probe_frame_len(i, e) - len(pkt))
            self.counters.probes_sent += 1
            self.host.send_frame(e.port, pkt, now_ns)

    def on_probe_resp(self, ev_i: int, rid: int, now_ns: int) -> None:
        e = self.evset.entries[ev_i]
        if e.probe_req_id != rid:
            return
        e.probe_req_id = -1
        self.counters.probe_answers += 1
        e.probe_streak += 1
        if e.probe_streak >= self.attr.probe_good_count:
            self.evset.mark_good(ev_i, now_ns, "probe")
        else:
            e.probe_next_ns = now_ns  # answer came back: next probe right away


class MrcResponder(Responder):
    """The MRC responder: places out of order, echoes ECN marks and trims, answers with SACKs."""

    def _on_trimmed(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        self.ack_trim.append(seq)
        self.ack_trigger = (seq, now_ns, evi, fr.entropy)
        self._send_ack(now_ns, trim=True)

    def _on_ce(self, seq: int, evi: int, now_ns: int) -> None:
        self.ack_ecn.append(seq)

    def _ack_frame(self, encap: Encap, seq: int, arrived: int, entropy: int, now_ns: int, trim: bool,
                   force_ack: bool) -> bytes:
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
        info = AckInfo(self.rcv_nxt, base, bitmap, seq, flags, now_ns - arrived, self.rx_bytes,
                       entropy, ecn, trims)
        return encode_ack(encap, self.remote.qpn, seq, F.AETH_ACK, self.msn, info)
