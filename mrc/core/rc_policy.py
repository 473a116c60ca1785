"""Classic RoCEv2 RC's loss and ack policy, the baseline MRC is measured against: one path, packets
accepted in order only, a PSN sequence error NAK on a gap, go-back-N resends, CNPs for ECN marks.

The QP's one path is its first EV slot, pinned as ECMP pins a flow: a loss, a timeout or a port
going down never moves it (that is the baseline's weakness MRC is measured against).  Only the
controller moves it: when the slot is DENIED (``mrc_ctl`` MODIFY_EV_STATE), the QP takes the next
slot in profile order that is not DENIED, from its next packet on; with every slot DENIED it sends
nothing (what it has in flight then times out, and after its retries the QP goes to ERR with
RETRY_EXC_ERR, as on a dead path).

A WRITE_WITH_IMM whose immediate the responder cannot take (``max_wimm_dest`` completions not polled)
gets an RNR NAK, as a RoCE NIC answers when no receive is posted: the requester goes back to that PSN
after the responder's ``min_rnr_timer``, for ever by default (``rnr_retry`` 7).
"""

from __future__ import annotations

from mrc.core.psn import INFINITE_RNR_RETRY, unwrap
from mrc.core.requester import Requester
from mrc.core.responder import Responder
from mrc.core.types import EvState, QpState, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import Encap, Frame, encode_ack, encode_cnp


class RcRequester(Requester):
    """The RC requester: every packet on one EV; a NAK or the RTO sends everything from the hole again."""

    def __init__(self, qp) -> None:
        super().__init__(qp)
        self.path = 0  # the EV slot every packet takes
        self.rnr_until = 0  # after an RNR NAK: nothing is sent before this time (ns)
        self.rnr_tries = 0  # RNR NAKs since the last progress (QpAttr.rnr_retry)
        # the PSN the last go-back-N (a sequence error NAK or the RTO) restarted from, until the next
        # progress: a NAK for that PSN then is the one NAK of a gap already being resent (see _on_ack)
        self.rewound_to: int | None = None

    def fill(self, now_ns: int, budget: int = 0) -> int:
        if now_ns < self.rnr_until:  # the responder asked for min_rnr_timer before the next try
            self.wake_ns = self.rnr_until
            return 0
        return super().fill(now_ns, budget)

    def _progress(self, now_ns: int) -> None:
        super()._progress(now_ns)
        self.rnr_tries = 0
        self.rewound_to = None

    def _receiver_not_ready(self, seq: int, code: int, now_ns: int) -> None:
        """An RNR NAK for PSN ``seq`` (InfiniBand RC): go back to it after the timer it carries.  It is an
        answer, so it resets the retry count of the retransmission timer; RNR NAKs in a row count
        against ``rnr_retry`` instead (7: for ever, as with verbs)."""
        self.counters.rnr_naks_received += 1
        self.rnr_tries += 1
        if self.attr.rnr_retry != INFINITE_RNR_RETRY and self.rnr_tries > self.attr.rnr_retry:
            self._to_error(now_ns, WcStatus.RNR_RETRY_EXC_ERR)
            return
        self.retries = 0
        self.snd_ptr = seq
        self.rnr_until = now_ns + F.RNR_TIMER_US[code] * 1000
        self.timeout_ns = self._rto()
        self.rto_at = self.rnr_until + self.timeout_ns

    def _resend_one(self, port_ok, now_ns: int) -> int:
        """Go-back-N: the packets from ``snd_ptr`` up to ``snd_nxt`` again, in order."""
        while self.snd_ptr < self.snd_nxt:
            pkt = self.pkts.get(self.snd_ptr)
            if pkt is None:
                self.snd_ptr += 1
                continue
            i = self._pick(port_ok)
            if i < 0:
                return -1
            self.counters.retx_nak += 1
            self.snd_ptr += 1
            self._transmit(pkt, i, now_ns)
            return 1
        return 0

    def _pick(self, port_ok) -> int:
        i = self.path
        states = self.evset.prof.states
        if states[i] is EvState.DENIED:  # the controller took our path away: the next one it allows
            n = len(states)
            i = next((j % n for j in range(i + 1, i + n) if states[j % n] is not EvState.DENIED), -1)
            if i < 0:
                return -1
            self.path = i
            self.counters.rc_path_moves += 1
        e = self.evset.entries[i]
        if e.port in self.evset.ports_down:
            return -1
        if not port_ok(e.port):
            self.wake_ns = self.host.port_wake(e.port)
            return -1
        return i

    def _on_ack(self, fr: Frame, now_ns: int) -> None:
        syn = fr.syndrome
        before = self.inflight
        rtt = None
        if syn == F.AETH_NAK_PSN_SEQ_ERR:
            seq = unwrap(fr.psn, self.snd_una)
            if self.snd_una <= seq <= self.snd_nxt:
                self._cum_ack(seq, now_ns)
                if seq == self.rewound_to:
                    # The responder NAKs a gap once, until the PSN it expects arrives, so a NAK for the
                    # PSN this QP already went back to, with no progress since, reports the gap that
                    # go-back-N is already resending (the RTO went back first, or the NAK was sent before
                    # the resent copies got there): going back again only sent every packet resent so
                    # far a third time.  A NIC starts no second retry for it (Linux rxe, rxe_comp.c
                    # COMPST_ERROR_RETRY: "if we've started a retry, don't start another retry sequence,
                    # unless this is a timeout"); if the resent copy is lost too, the RTO goes back.  That
                    # includes the one case where this NAK is news: after a tail loss (no NAK before the
                    # RTO) the RTO's own copy of the PSN was lost, and the NAK reports it -- as in rxe,
                    # it waits for the next RTO (test_core_rc_gobackn.py)
                    self.counters.rc_naks_ignored += 1
                else:
                    self.snd_ptr = seq  # go back N
                    self.rewound_to = seq
                    # a loss, told to the CC as MRC's RACK verdicts are (NSCC: a quick-adapt trigger); the
                    # responder NAKs a gap once.  Until 2026-12-06 an RC QP never told its CC of a loss
                    self.cc.on_loss(now_ns)
        elif syn & ~F.AETH_RNR_TIMER_MASK == F.AETH_RNR_NAK:  # what precedes its PSN arrived; that PSN after the timer
            seq = unwrap(fr.psn, self.snd_una)
            if self.snd_una <= seq < self.snd_nxt:
                self._cum_ack(seq, now_ns)
                self._receiver_not_ready(seq, syn & F.AETH_RNR_TIMER_MASK, now_ns)
                if self.state is not QpState.RTS:
                    return
        elif syn >> 5 == 0:
            seq = unwrap(fr.psn, self.snd_una) + 1
            if self.snd_una < seq <= self.snd_nxt:
                last = self.pkts.get(seq - 1)  # RTT sample: the newest packet acked, if sent once
                if last is not None and last.xmits == 1:
                    rtt = now_ns - last.sent_ns
                self._cum_ack(seq, now_ns)
        self.cc.on_ack(now_ns, max(0, before - self.inflight), rtt, False)
        self._after_ack(now_ns)

    def _rto_resend(self, now_ns: int) -> None:
        self.rewound_to = self.snd_una
        if self.snd_ptr > self.snd_una:
            self.snd_ptr = self.snd_una
            self.counters.retx_timeout += 1  # the rest counts as go-back-N resends
        # every packet outstanding is given up on and sent again, each a timeout for the CC as MRC's
        # (CongestionControl.on_timeout; NSCC: -1 MTU each); until 2026-12-06 an RC QP never told its CC
        for _ in range(self.snd_nxt - self.snd_una):
            self.cc.on_timeout(now_ns)


class RcResponder(Responder):
    """The RC responder: in order only (NAK once per gap), CNPs, plain AETH ACKs."""

    def _on_not_ready(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        # IB's RNR NAK: this PSN again after min_rnr_timer; what follows it is dropped as past a gap,
        # with no PSN sequence error NAK (that would make the requester resend at once)
        self.nak_pending = True
        self._send_nak(F.AETH_RNR_NAK | self.attr.min_rnr_timer, seq, evi, now_ns)

    def _refuse_out_of_order(self, evi: int, now_ns: int) -> bool:
        if not self.nak_pending:
            self.nak_pending = True
            self._send_nak(F.AETH_NAK_PSN_SEQ_ERR, self.rcv_nxt, evi, now_ns)
        return True

    def _on_ce(self, seq: int, evi: int, now_ns: int) -> None:
        # RoCE's notification point: a CNP, at most one per cnp_interval_ns
        if now_ns - self.cnp_sent_ns >= self.attr.cnp_interval_ns:
            self.cnp_sent_ns = now_ns
            self._send_cnp(evi, now_ns)

    def _on_ce_unplaced(self, seq: int, evi: int, now_ns: int) -> None:
        # The notification point reacts to the mark of any valid packet of the QP, not only of the one
        # the transport places: in a go-back-N storm most arrivals are past a gap or repeats, and
        # ignoring their marks (as this model did until 2026-12-04) starved DCQCN of CNPs exactly when
        # the queues were full (docs/demo.md, "What the RC baseline is")
        self._on_ce(seq, evi, now_ns)

    def _send_cnp(self, evi: int, now_ns: int) -> None:
        e = self._reply_entry(evi)
        pkt = encode_cnp(e.encap, self.remote.qpn, self.attr.pkey)
        self.counters.cnps_sent += 1
        self.host.send_frame(e.port, pkt, now_ns)

    def _ack_frame(self, encap: Encap, seq: int, arrived: int, entropy: int, now_ns: int, trim: bool,
                   force_ack: bool, syndrome: int = F.AETH_ACK) -> bytes:
        # classic RC has no ECN/trim echo in its ACK: drop the marks (keeping them made the
        # "more marks than one SACK holds" loop in _send_ack recurse for ever on a CE-marked packet)
        self.ack_ecn.clear()
        self.ack_trim.clear()
        return encode_ack(encap, self.remote.qpn, self.rcv_nxt - 1, F.AETH_ACK, self.msn, pkey=self.attr.pkey)
