"""MRC's loss and ack policy: spray every packet over the QP's EVs, SACKs with ECN and trim echoes,
RACK loss detection, EV retirement, and probes that bring an ASSUMED_BAD EV back.

A trimmed packet means congestion: resend it at once, keep its EV (the responder repeats each trim in
its next SACKs).  RACK judges each packet against its own path's delivery time and reordering window.
A lost packet makes its EV ASSUMED_BAD when a later packet on that EV arrived and no congestion was
signalled on it; an EV gone quiet becomes suspect (no spraying on it, one probe) and is retired only
if it shows no life in time, and what was in flight on it is resent on the other EVs right away; an
RTO only penalizes the EVs.  The rules and their
sources are in docs/protocol.md ("Transport rules").
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from mrc.core.ev import PENALTY_ECN, PENALTY_TIMEOUT, PENALTY_TRIM, PROBE_LATE_KEEP, EvEntry
from mrc.core.psn import INFINITE_RNR_RETRY, unwrap
from mrc.core.requester import Requester, _Pkt
from mrc.core.responder import Responder
from mrc.core.types import EvState, QpState, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, Encap, Frame, ProbeInfo, encode_ack, encode_data, encode_probe

if TYPE_CHECKING:
    from mrc.core.qp import QueuePair

TRIM_REPEATS = 2  # responder: SACKs after the first that report a trim again (_trims_again)
RESENT_KEEP = 256  # requester: resent packets kept for a late first copy's duplicate (_dup_echo)
# requester: a path not sent on for this many srtts has its delivery-time record forgotten (_sent)
IDLE_FORGET_SRTTS = 4
VERDICT_LOG_MAX = 64  # requester: EV retirements kept with their evidence (MrcRequester.verdicts)
# requester: an EV's own probe wait (from a late answer) is at most 16x the QP's; the answers of that
# many given-up probes are kept to learn it
PROBE_WAIT_MAX_X = PROBE_LATE_KEEP
RX_LOG_MAX = 1024  # responder: trimmed and duplicate arrivals kept (MrcResponder.rx_log)


_LOSS_KEYS = (("psn", "psn"), ("xmits", "xmits"), ("later_acked", "later_acked"),
              ("later_acked_evs", "later_acked_evs"), ("ev_delivered_ago_ns", "since_ev_delivery_ns"),
              ("late_limit_ns", "late_limit_ns"), ("pto_ns", "pto_ns"), ("reorder_ns", "reorder_ns"),
              ("ev_reorder_ns", "ev_reorder_ns"), ("quiet_ns", "quiet_ns"), ("srtt_ns", "srtt_ns"),
              ("rttvar_ns", "rttvar_ns"), ("min_rtt_ns", "min_rtt_ns"), ("ev_srtt_ns", "ev_srtt_ns"),
              ("ev_rttvar_ns", "ev_rttvar_ns"), ("ev_last_rtt_ns", "ev_last_rtt_ns"),
              ("peer_heard_ago_ns", "since_peer_heard_ns"), ("in_flight_pkts", "in_flight_pkts"),
              ("by_time", "by_time"))


def _loss_evidence(rule: str, full: dict) -> dict:
    """The ``EvEvent.evidence`` of a RACK verdict from its full record (``MrcRequester._evidence``): the
    packet judged lost, what was delivered after it and the limits it was judged by, every time as a
    duration before the verdict (docs/protocol.md, "Evidence of an EV change")."""
    d = {"rule": rule, "sent_ago_ns": full["age_ns"]}
    for k, src in _LOSS_KEYS:
        d[k] = full.get(src)
    later = full["ev_rack_ts_ns"]
    d["later_on_ev_sent_after_ns"] = later - full["sent_ns"] if later >= full["sent_ns"] else None
    sig = full["since_ev_signal_ns"]
    d["congestion_signal_ago_ns"] = sig if sig < 1 << 60 else None
    return d


class MrcRequester(Requester):
    """The MRC requester: spraying, SACK/trim/ECN, RACK, EV retirement, probes."""

    TRIMMING = True

    def __init__(self, qp: QueuePair):
        super().__init__(qp)
        n = len(self.evset.entries)
        self.sent_log: deque[tuple[int, int, int]] = deque()
        self.rack_ts = 0
        self.ev_rack_ts = [-1] * n  # per EV: send time of the latest packet delivered on it (-1: none yet)
        self.ev_rack_seq = [-1] * n  # ...and its PSN (unwrapped): packets of one burst share a send time
        self.ev_trim_ts = [-1] * n  # per EV: send time of the latest packet sent once whose trim came back
        self.ev_ack_ns = [0] * n  # per EV: when an ACK last reported a new delivery on it
        # per EV slot: copies sent at or before this time took the EV the slot held before a REPLACE_EV
        # (paths_replaced): they are no evidence about the slot's path now, nor it about them
        self.ev_replaced_ns = [-(1 << 62)] * n
        # suspect EV index -> when the peer first answered at all (an ACK or a probe answer, on any path)
        # since the EV became suspect (_peer_heard; absent: not yet), for _check_suspects
        self._heard_since: dict[int, int] = {}
        self._unheard: set[int] = set()  # suspect EVs not in _heard_since yet
        self.sack_blind = (0, 0)  # PSNs the latest SACK could not report on (between cum and its bitmap)
        self.reo_mult = 1  # reordering window = reo_mult x min_rtt / 4 (RFC 8985 reo_wnd_mult)
        self.reo_persist = 0  # loss verdicts left before reo_mult falls back to 1
        self.reo_bump_ns = -(1 << 62)
        self._probe_pad: dict[int, int] = {}  # EV index -> frame length of a full-MTU data packet
        # EV index -> when a small probe's answer last lifted its suspicion: until a packet sent on it
        # since then is delivered, its next suspicion's probe is padded (``_suspect_probe_padded``)
        self._lifted_small: dict[int, int] = {}
        self._padded_suspect: set[int] = set()  # suspect EVs whose probe in flight is padded
        self._flushing = False  # _retire_ev is resending an EV's packets in flight
        # EV retirements this QP decided, each with the evidence it had (_evidence), at most
        # VERDICT_LOG_MAX; built only when an EV changes state, never per packet
        self.verdicts: list[dict] = []
        self._suspicion: dict[int, dict] = {}  # EV index -> evidence of the verdict that made it suspect
        self._silent_holds: dict[int, int] = {}  # suspect EV index -> times it was held for a silent peer
        self._probe_heard_ns = 0  # when a probe answer (any EV) last came back
        # EV indexes made suspect (``_suspect``) and perhaps cleared since: every suspect EV is in it, so
        # the timer looks at these instead of every EV (256 at scale) on every event
        self._suspects: set[int] = set()
        # the least max(srtt, last_rtt) over the EVs with a sample, and its EV (-1: none; None: to be
        # found again), kept as samples come (_path_delivered) and go (_sent) for _min_late_ns
        self._late_min: int | None = None
        self._late_arg = -1
        self._pto_key: tuple | None = None  # _pto_deadline's memo: its key and answer
        # PSNs (unwrapped) a SACK bitmap already made SACKED, as bits from _sacked_base: a SACK repeats
        # its predecessors' bits, and SACKED is final until the cumulative ACK takes the packet out of
        # ``pkts``, so _on_ack looks only at the bits not in here
        self._sacked_base = 0
        self._sacked_bits = 0
        self._pto_val: int | None = None
        self._echo_seq = -1  # the ACK being processed: its trigger's PSN (unwrapped; -1: none) ...
        self._echo_ev = -1  # ...and the EV that trigger arrived on, from the ACK's ev_echo (-1: unknown)
        # resent packets acknowledged by their resend, PSN -> (first EV, first send, last EV, xmits): the
        # first copy may still arrive as a duplicate (_dup_echo); at most RESENT_KEEP
        self._resent_done: dict[int, tuple[int, int, int, int]] = {}
        self._trim_seen_ns = -(1 << 62)  # when a trim of one of our packets was last acted on
        # receiver not ready (RNR NAKs): PSN -> when it may be sent again, and PSN -> RNR NAKs for it so
        # far (QpAttr.rnr_retry); only a LAST_WITH_IMM is refused, so both hold at most max_wimm PSNs
        self._rnr_wait: dict[int, int] = {}
        self._rnr_tries: dict[int, int] = {}

    def start(self, sq_psn: int, now_ns: int) -> None:
        super().start(sq_psn, now_ns)
        self.ev_ack_ns = [now_ns] * len(self.ev_ack_ns)
        self._sacked_bits = 0

    def _line_rate_bps(self) -> float:
        return len(self.evset.ports) * self.host.port_rate_bps

    def flush(self, now_ns: int, status: WcStatus) -> None:
        super().flush(now_ns, status)
        self.sent_log.clear()
        self._sacked_bits = 0  # the packets are gone
        self._rnr_wait.clear()
        self._rnr_tries.clear()
        self.mut += 1

    def paths_changed(self) -> None:
        self._probe_pad.clear()
        self._lifted_small.clear()
        self._padded_suspect.clear()

    def paths_replaced(self, slots: list[int]) -> None:
        """The bound profile put new EVs into ``slots`` (REPLACE_EV on an ONLINE profile): each is a new
        path to this QP [ours].  Its per-path record starts again (delivery times, RACK's latest delivered
        send, trims, suspicion, penalty, probe), and the copies sent on the slot before -- on the old EV --
        count neither for nor against it.  Until 2026-12-06 the slot kept the old path's record: when the
        controller moved a slot off a path that had just died, the new path's first deliveries were
        taken as proof that "this path" had lost the old path's packets (RACK's FIFO rule) and the new,
        healthy EV went ASSUMED_BAD at once (repro/replace_ev_inherits_rack.py of the docs review)."""
        # the newest send still in the log (sends are logged in time order), else -- nothing in flight --
        # the latest ACK, which came after every send it settled
        cut = self.sent_log[-1][0] if self.sent_log else self.ack_now
        for i in slots:
            self.ev_replaced_ns[i] = cut
            self.ev_rack_ts[i] = self.ev_rack_seq[i] = self.ev_trim_ts[i] = -1
            self.ev_ack_ns[i] = max(self.ev_ack_ns[i], cut)
            e = self.evset.entries[i]
            e.forget_rtt()
            e.penalty = 0
            e.signal_ns = e.last_sent_ns = -(1 << 62)
            e.suspect_ns = e.suspect_sent_ns = 0
            e.probe_streak = 0
            if e.probe_req_id >= 0:
                self.host.forget_probe(e.probe_req_id)
                e.probe_req_id = -1
            for rid, _ in e.probe_late:  # the old path's late answers say nothing of the new one
                self.host.forget_probe(rid)
            e.probe_late.clear()
            e.probe_wait_ns = 0
            for d in (self._suspicion, self._heard_since, self._silent_holds, self._lifted_small, self._probe_pad):
                d.pop(i, None)
            self._unheard.discard(i)
            self._padded_suspect.discard(i)
        self._late_min = None
        self.mut += 1

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
            j = self._proven_ev(pkt, i, port_ok) if cause != "trim" and cause != "rnr" else -1
            if j >= 0:
                i = j
            elif i == pkt.ev and cause == "trim":
                j = self._other_ev(pkt.ev, port_ok)
                if j == -2:
                    return -1  # another path can take it once its port has room (wake_ns set)
                if j >= 0:
                    i = j
            elif i == pkt.ev:
                # [ours] not on the path that lost it when another can take it: a path found lossy
                # only by this verdict is not suspect yet (_lose), and a resend on a dead path is
                # lost again a detection round later (seen in the demo: +1 RTT for that QP).  (A trimmed
                # packet takes _other_ev above instead, which can also wait for another path's port.)
                j = self.evset.pick(port_ok)
                if j >= 0 and j != pkt.ev:
                    i = j
            if pkt.hist:
                i = self._not_lost_on(pkt, i, cause, port_ok)
            self.retx.popleft()
            self._count_retx(cause, pkt, now_ns)
            # a packet found lost goes ahead of the data queues (QpAttr.resend_dscp); a trimmed one
            # goes back as data: its trim said the path's data queue is full [ours] -- unless it holds
            # the cumulative ACK and was trimmed before (_trim_ahead); and so does a lost one while the
            # QP's packets are being trimmed (_lost_under_trims)
            dscp = self.attr.resend_dscp
            if cause == "rnr":  # not lost: the responder asked for it again later, it goes as data
                dscp = None
            elif cause == "trim":
                if self._trim_ahead(pkt):
                    self.counters.retx_trim_ahead += 1
                else:
                    dscp = None
            elif self._lost_under_trims(now_ns):
                dscp = None
                self.counters.retx_lost_as_data += 1
            self._transmit(pkt, i, now_ns, dscp)
            return 1
        return 0

    def _lost_under_trims(self, now_ns: int) -> bool:
        """Whether a packet found lost (RACK, timeout) now is resent as data rather than ahead of the data
        queues: yes while a trim of one of this QP's packets was acted on within its srtt [ours].  Its
        packets are being trimmed, so a queue its paths share sits at its trim threshold and the "lost"
        packet is most likely queued behind it, its trimmed header or the packet itself still on the
        way; a resend ahead of that queue is never trimmed and only adds to it.  In a simulated 127 -> 1
        incast the resend queue at the receiver's downlink held up to 3 ms of such resends, 11,430 of
        them duplicates, and every QP's verdicts fed it.  As data the resend meets the trim threshold
        and ECN like the rest; a packet lost on a dead path that is resent this way and trimmed goes
        ahead from its second trim if it holds the cumulative ACK (``_trim_ahead``)."""
        return self.attr.resend_dscp is not None and now_ns - self._trim_seen_ns < max(self.srtt, 1)

    def _trim_ahead(self, pkt: _Pkt) -> bool:
        """Whether the resend of the trimmed ``pkt`` goes ahead of the data queues (the resend DSCP)
        rather than back as data: only when it holds the QP's cumulative ACK (the oldest PSN not
        acknowledged) while the QP has other packets not acknowledged (it holds them back), and this
        is at least its ``QpAttr.trim_ahead_after``-th trim (0: never) [ours].
        Congestion that all of a QP's paths share -- incast at the receiver's downlink, a fabric a
        failure has halved -- keeps that queue at its trim threshold, and a resend that goes back as
        data is trimmed there again and again while the packets behind it arrive: the QP's cumulative
        ACK, and with it every message's completion (RDMA completes in order), waits on one packet's
        luck.  In the simulated demo without congestion control (examples/sim/demo-timescale.yaml,
        12 seeds) one PSN was trimmed six times in a row and its flow stalled 1.2 s; with this rule
        the longest flow stall fell from 830 to 401 ms (mean of the seeds), message p99 from 1,437 to
        1,218 ms, the QPs' srtt unchanged (103 vs 107 ms).  With NSCC it rarely fires, but in a simulated
        63 -> 1 incast, whose downlink queue stays at its threshold, it fired ~2,100 times a run and
        cost 2.4% of FCT and 7% of srtt (2026-12-05; gated as below, 2026-12-06: 221 times, FCT +3.5%,
        srtt -1%).  Sending every packet trimmed twice ahead (not only the
        one holding the ACK) cut p99 further (956 ms) but raised every QP's srtt by 58%: that much
        data outside the queue estimate lengthens everyone's queues.  At most one packet of a QP
        qualifies at a time, and it is still sent within the congestion window (docs/protocol.md,
        "Resent data")."""
        after = self.attr.trim_ahead_after
        if not after or pkt.seq != self.snd_una or not pkt.hist:
            return False
        if sum(1 for h in pkt.hist if h[1] == "trim") < after:
            return False
        # ... and only while other packets of the QP were sent after it and are not yet covered by the
        # cumulative ACK (in flight, delivered or waiting to be resent).  With a window at its floor of
        # one packet, as in a 127 -> 1 incast, the QP's only packet in flight is nearly always "the one
        # holding the cumulative ACK": the rule sent 5,472 a run ahead there, the variant "every packet
        # trimmed twice ahead" measured and not kept (above), with srtt +11%, message p99 +14% and 57%
        # more trims than without the rule.  Gated, 578 went ahead, srtt and completion were those
        # without the rule, and the congested demo timescale gave the same figures seed by seed
        # (docs/simulation.md, "127 -> 1") [ours, 2026-12-06].  A measured trade-off: such a packet does
        # hold back the rest of its message, which the window keeps unsent (99.8% of the resends this
        # gate keeps as data in the simulated incasts), and nothing bounds how often it is trimmed (a
        # trim is progress: no RTO; up to 16+ trims of one packet at 127 -> 1, 6 with the rule ungated)
        return len(self.pkts) > 1

    def _not_lost_on(self, pkt: _Pkt, i: int, cause: str, port_ok) -> int:
        """EV ``i`` for this resend of ``pkt`` unless an earlier copy of the packet was lost on it (not
        trimmed: a trim proves the path alive); then the next EV in spray order on which no copy was
        lost (nor, for a trim, the one that just trimmed it) that can send now; ``i`` if none [ours].
        A loss of the packet on a path that evidence excused (a trim of a later packet on it, from
        before the path died) leaves the EV GOOD and unsuspected: in the demo of 2026-12-04 a packet
        whose first copy died with a link had its trimmed second copy resent on that same EV, lost
        again, and its flow held 6.4 RTTs."""
        lost = {ev for _, c, ev in pkt.hist if c != "trim" and c != "rnr"}
        if i not in lost:
            return i
        barred = pkt.ev if cause == "trim" else -1
        j = self._next_ev(i, lambda j: j not in lost and j != barred, port_ok)
        return j if j >= 0 else i

    def _next_ev(self, i: int, ok, port_ok) -> int:
        """The first EV after ``i`` in spray order (``i`` itself excluded) with ``ok(index)`` that is GOOD
        on an up port, not suspect, and whose port can send now (``port_ok``); -1 if none."""
        es = self.evset
        ents = es.entries
        n = len(ents)
        for k in range(1, n):
            j = i + k
            if j >= n:
                j -= n
            if ok(j) and es.usable(j) and not ents[j].suspect_ns and (port_ok is None or port_ok(ents[j].port)):
                return j
        return -1

    def _other_ev(self, ev: int, port_ok) -> int:
        """For the resend of a packet trimmed on EV ``ev`` when the spray picked ``ev`` again: the GOOD,
        not suspect EV other than ``ev`` whose port has room now, the least penalized first; -2 (and
        ``wake_ns`` set) if there are such EVs but their ports are busy; -1 if there is none [ours].  The
        spray falls back to a penalized EV when the others' ports are busy, and a trimmed packet resent
        into the queue that trimmed it was trimmed again (the fabric bench: twice in a row on one EV
        with the trim penalty alone); waiting for another port costs a frame's time, a second trim a
        round trip."""
        es = self.evset
        best, busy = -1, []
        for j, e in enumerate(es.entries):
            if j == ev or not es.usable(j) or e.suspect_ns:
                continue
            if port_ok is not None and not port_ok(e.port):
                busy.append(e.port)
            elif best < 0 or e.penalty < es.entries[best].penalty:
                best = j
        if best >= 0 or not busy:
            return best
        self.wake_ns = self.host.earliest_port_wake(busy)
        return -2 if self.wake_ns is not None else -1

    def _proven_ev(self, pkt: _Pkt, i: int, port_ok) -> int:
        """For the resend of a packet found lost (not trimmed): EV ``i`` (the spray's pick) if a packet
        sent on it after ``pkt``'s last copy has been delivered, else the next such EV in spray order
        that can send now; -1 if none.  A path that delivered something sent after the loss was alive
        after it; any other may have died with the lost packet's path (a spine takes a quarter of a
        plane's EVs with it), and a resend lost again costs another detection round [ours]."""
        after = pkt.sent_ns
        ts = self.ev_rack_ts
        if ts[i] > after:
            return i
        return self._next_ev(i, lambda j: ts[j] > after, port_ok)

    def _pick(self, port_ok) -> int:
        es = self.evset
        i = es.pick(port_ok)
        if i < 0:
            # wake when a port of an EV we may use frees up: an idle port behind an ASSUMED_BAD EV
            # gave a wake time in the past and made the QP spin (1% loss took 20x the loss-free time)
            # (a suspect EV is used only when no other is left: its free port is no reason to wake)
            states, good, down = es.prof.states, EvState.GOOD, es.ports_down
            if not down and not self._suspects and states.count(good) == len(states):
                ports = list(es.ports)  # the usual case, found without a pass over the EVs
            else:
                ports = list({e.port: None for j, e in enumerate(es.entries)
                              if states[j] is good and e.port not in down and not e.suspect_ns}) or \
                    list({e.port: None for j, e in enumerate(es.entries) if states[j] is good and e.port not in down}) \
                    or list(es.ports)
            self.wake_ns = self.host.earliest_port_wake(ports)
        return i

    def _sent(self, now_ns: int, pkt: _Pkt) -> None:
        log = self.sent_log
        # the copy leaves into a silence of the peer (_owed_silence_ns) longer than a tail-loss limit:
        # every path is dark or the peer stalled; RACK's FIFO rule does not judge a path by such a copy
        # (_lose)
        silent = self._owed_silence_ns(now_ns)
        pkt.dark = silent >= 0 and silent > self._pto()
        log.append((now_ns, pkt.seq, pkt.xmits))
        self.mut += 1
        e = self.evset.entries[pkt.ev]
        if e.srtt and now_ns - e.last_sent_ns > IDLE_FORGET_SRTTS * self.srtt:
            # [ours] the path's delivery times are from before a pause (penalty skips after ECN echoes,
            # a QP idle between messages): they say nothing of its queues now, and RACK waits a path's
            # own delivery time before a verdict.  Start it again from the QP's, as a new path.  In the
            # fabric bench, QPs that came back to a path after 200-360 ms found it dead only 222-276 ms
            # (4-5 srtts) after their first packet on it, with that path's 230 ms sample from before.
            e.forget_rtt()
            if self._late_arg == pkt.ev:
                self._late_min = None
        e.last_sent_ns = now_ns

    # ------------------------------------------------------------------ ACKs
    def _on_ack(self, fr: Frame, now_ns: int) -> None:
        self.mut += 1
        if self._unheard:
            self._peer_heard(now_ns)
        s = fr.sack
        if s is None:
            self._echo_seq = -1
            seq = unwrap(fr.psn, self.snd_una) + 1
            # a plain AETH: only an ACK (syndrome 000xxxxx) acknowledges its PSN; a NAK's PSN names one
            # not received (an RNR or sequence-error NAK taken as an ACK completed a message unsent)
            if fr.syndrome >> 5 == 0 and self.snd_una < seq <= self.snd_nxt:
                self._cum_ack(seq, now_ns)
            self._after_ack(now_ns)
            return
        ev_bad: set[int] = set()
        trimmed = False
        # ECN marks and trims first: they need the packets' EVs, which a cumulative ACK may retire
        replaced = self.ev_replaced_ns
        for p in s.ecn_psns:
            pkt = self.pkts.get(unwrap(p, self.snd_una))
            if pkt is not None and pkt.ev >= 0:
                self.counters.ecn_echoes += 1
                if (ev := self._ecn_path(pkt)) >= 0:
                    self.evset.penalize(ev, PENALTY_ECN)
                    self.evset.entries[ev].signal_ns = now_ns
        for p in s.trim_psns:
            pkt = self.pkts.get(unwrap(p, self.snd_una))
            # a repeated trim (_trims_again) may name a copy already resent: a trim of the resent copy
            # cannot come back within a fraction of an RTT of its send, nor of the trim acted on before
            # -- unless this ACK is the resent copy's own trim (_trim_of_this_copy)
            half = self.min_rtt >> 1
            if pkt is not None and pkt.state == _Pkt.INFLIGHT and (
                    (now_ns - pkt.trim_ns >= half and (pkt.xmits == 1 or now_ns - pkt.sent_ns >= half))
                    or (p == s.trigger_psn and pkt.xmits > 1 and self._trim_of_this_copy(pkt, s.ev_echo))):
                pkt.trim_ns = now_ns
                self._trim_seen_ns = now_ns
                # a copy sent on a slot's EV before REPLACE_EV (paths_replaced) was trimmed on the old path,
                # not the new EV's [review h-rev5]
                if pkt.ev >= 0 and pkt.sent_ns > replaced[pkt.ev]:
                    self.evset.entries[pkt.ev].signal_ns = now_ns
                    # the path's queue is at its trim threshold: the spray skips it once, as for an ECN echo
                    self.evset.penalize(pkt.ev, PENALTY_TRIM)
                    if pkt.xmits == 1:
                        self._trimmed_on_path(pkt, now_ns)
                pkt.state = _Pkt.LOST
                self.inflight -= pkt.length
                self.retx.appendleft((pkt.seq, "trim"))  # at once, ahead of new data; no EV retired
                self.counters.trims_received += 1
                # the trimmed packet's size: NSCC takes that much off the window (the UEC reference's
                # NACKed bytes); until 2026-12-06 a trimmed 100-byte packet cost a whole MTU
                self.cc.on_trim(now_ns, pkt.length)
                # the peer answered for the packet: a sign of life for the retransmission timer, as
                # an RNR NAK is for RC's.  Before, a responder that kept refusing a LAST_WITH_IMM
                # (its application not polling; reported as a trim) made the RTO exhaust its retries
                # and put the QP in ERR within 0.3 s, although the refused packet went back each RTT
                trimmed = True
        acked_before = self.inflight
        trig_seq = unwrap(s.trigger_psn, self.snd_una)
        trig = self.pkts.get(trig_seq)
        # the copy of the trigger that arrived: the EV its entropy names (resent packets: _delivered, _dup_echo)
        self._echo_seq = trig_seq
        self._echo_ev = self.qp.ev_index_of_entropy(s.ev_echo) \
            if (trig is not None and trig.xmits > 1) or trig_seq in self._resent_done else -1
        if s.flags & F.SACK_FLAG_RETX_ECHO:
            self._spurious(now_ns)
            self._dup_echo(trig_seq)
        rtt_sample = None
        if trig is not None and trig.xmits == 1 and not s.flags & F.SACK_FLAG_RETX_ECHO \
                and trig.state == _Pkt.INFLIGHT:
            rtt = now_ns - trig.sent_ns
            # a service time as long as the whole round trip says the two ends' stamps disagree (the
            # responder held the ACK no longer than the round trip took): no sample, rather than a 0
            # that the learning NSCC would take as its base RTT [ours]
            rtt_sample = rtt - s.service_time_ns if 0 <= s.service_time_ns < rtt else None
        elif trig is not None and trig.xmits > 1 and not s.flags & (F.SACK_FLAG_RETX_ECHO | F.SACK_FLAG_TRIM) \
                and trig.state != _Pkt.SACKED and self._echo_is_first_copy(trig):
            # (not the first copy's *trim*: a trimmed header skips the queue that cut it, so its round
            # trip is shorter than the data's, and a packet sent once gets no sample from its trim either;
            # taken, each pulled srtt toward the header's 5 us under 12-18 us of queueing [review h-rev9])
            # the ACK of a resent packet's *first* copy, its ev_echo naming the EV that copy alone took: a
            # sample from the first send, as Eifel's timestamps tell the original's ACK (RFC 3522) [ours].
            # Karn's rule alone froze srtt wherever every first copy was declared lost before its ACK
            # could come: on a 1 Gb/s port a full 8 KiB frame takes 67 us to leave, against an srtt of
            # 5-7 us learnt from small writes; every large packet was resent, no sample was ever taken,
            # and on a network that lost nothing 30-100 spurious resends per 40 packets retired an EV
            # (h-fuzz8, repro/spurious_rack_sweep.py)
            rtt = now_ns - trig.first_sent_ns
            rtt_sample = rtt - s.service_time_ns if 0 <= s.service_time_ns < rtt else None
        cum = unwrap(s.cum_psn, self.snd_una)
        if cum > self.snd_nxt:
            self.host.count("rx_bogus_ack")
            return
        progressed = trimmed
        if cum > self.snd_una:
            self._cum_ack(cum, now_ns)
            progressed = True
        bm = s.bitmap
        # PSNs between the cumulative ACK and the bitmap's base: the responder moved the base up to
        # report its latest arrival (a bitmap is F.SACK_BITMAP_BITS wide), so it said nothing about these
        self.sack_blind = (self.snd_una + 1, unwrap(s.sack_base, self.snd_una))
        if bm:
            base = unwrap(s.sack_base, self.snd_una)
            pkts = self.pkts
            # the bits an earlier SACK made SACKED (or whose packets the cumulative ACK took since): each
            # was a lookup and nothing more, and a SACK repeats up to 256 of them (a tenth of the
            # simulator's CPU at scale, bench/README.md stop 62)
            d = base - self._sacked_base
            # (a base below the last one: its bits start that far above this bitmap's, none at all if
            # it is a bitmap's width or more below)
            known = self._sacked_bits >> d if d >= 0 else \
                self._sacked_bits << -d if d > -F.SACK_BITMAP_BITS else 0
            done = bm & known
            bm &= ~known
            while bm:
                low = bm & -bm
                seq = base + low.bit_length() - 1
                bm ^= low
                pkt = pkts.get(seq)
                if pkt is not None:
                    if pkt.state != _Pkt.SACKED:
                        if pkt.state == _Pkt.INFLIGHT:
                            self.inflight -= pkt.length
                        pkt.state = _Pkt.SACKED
                        progressed = True
                        self._delivered(pkt)
                    done |= low
            self._sacked_base, self._sacked_bits = base, done
        if self._rnr_tries:
            for k in [k for k in self._rnr_tries if k not in self.pkts]:  # acknowledged since
                del self._rnr_tries[k]
                self._rnr_wait.pop(k, None)
        if fr.syndrome & ~F.AETH_RNR_TIMER_MASK == F.AETH_RNR_NAK and trig is not None:
            if self._receiver_not_ready(trig, fr.syndrome & F.AETH_RNR_TIMER_MASK, now_ns, s.service_time_ns):
                progressed = True
                acked_before -= trig.length  # out of flight, not acknowledged: no acked bytes for the CC
            elif self.state is not QpState.RTS:
                return
        if rtt_sample is not None:
            self._rtt(rtt_sample)
        self.cc.on_ack(now_ns, max(0, acked_before - self.inflight), rtt_sample,
                       bool(s.flags & F.SACK_FLAG_ECN_ECHO))
        if progressed:
            self._progress(now_ns)
            if self._rnr_wait and self.rto_at is not None:  # no timeout before a waiting packet could go
                self.rto_at = max(self.rto_at, min(self._rnr_wait.values()) + self.timeout_ns)
        self._detect_losses(now_ns, ev_bad)
        self._after_ack(now_ns)

    def _receiver_not_ready(self, pkt: _Pkt, code: int, now_ns: int, service_ns: int = 0) -> bool:
        """An RNR NAK for ``pkt`` (a SACK with AETH syndrome 001 and the responder's timer ``code``): the
        responder refused it, its application has not polled ``max_wimm_dest`` immediates.  As for RC
        (InfiniBand's RNR NAK): the packet goes again once the timer has run, and RNR NAKs for it without
        it getting through count against ``QpAttr.rnr_retry`` (7: for ever), then RNR_RETRY_EXC_ERR.  It
        is an answer, so it resets the retransmission timer's retries; it is not congestion (the window
        is not cut) nor a loss (no EV pays for it, the resend goes as data, on any EV): the packet
        crossed its path whole.  Returns whether it was taken (False for a copy already answered).
        ``service_ns``: the SACK's service time, how long before sending it the responder refused the
        copy it names."""
        refused = now_ns - max(0, service_ns)
        if pkt.state != _Pkt.INFLIGHT:
            return False
        if pkt.xmits > 1 and refused - pkt.sent_ns < self.min_rtt >> 1 \
                and not self._names_latest_copy(pkt, self._echo_ev):
            # a repeat (MrcResponder._rnr_repeats) for a copy before this one: the refusal it reports came
            # less than a round trip after this copy left, or before.  Judged by the send time alone (until
            # 2026-12-06), a repeat that a later SACK carried past the resend counted as the resend's
            # refusal: one more rnr_retry count -- with rnr_retry 1, RNR_RETRY_EXC_ERR and the QP in ERR
            # while the responder placed the resend and completed the message (repro/rnr_stale_repeat.py
            # of the review) -- and a wait and a resend for nothing.  Unless the NAK's ev_echo names the
            # EV this copy alone took: then it is this copy's refusal, however soon it came.  The QP's
            # minimum RTT is learnt under load, and a resend on an idle path came back refused in 1.2 us
            # against half of 14 us: taken for a repeat, the refused copy stayed in flight, and RACK
            # retired its healthy EV when a later packet on it got through (fuzzer seed 120519, 2026-12-07)
            return False
        self.counters.rnr_naks_received += 1
        tries = self._rnr_tries.get(pkt.seq, 0) + 1
        if self.attr.rnr_retry != INFINITE_RNR_RETRY and tries > self.attr.rnr_retry:
            self._to_error(now_ns, WcStatus.RNR_RETRY_EXC_ERR)
            return False
        self._rnr_tries[pkt.seq] = tries
        self.mut += 1
        if pkt.xmits == 1:  # a delivery on its path, as far as path evidence goes
            self._delivered(pkt)
        elif pkt.ev >= 0 and self._names_latest_copy(pkt, self._echo_ev) and pkt.sent_ns > self.ev_replaced_ns[pkt.ev]:
            # a resent copy, and the ACK's ev_echo says this very copy (on pkt.ev, which no copy before it
            # took) arrived: its path is alive (a packet refused again and again is resent, and would
            # otherwise never vouch for it).  An echo of an EV an earlier copy took too may be that copy's
            # repeated refusal: timed from this copy's send, it gave a 20 us path a 5 us RTT sample, and its
            # next packets' tail-loss limit, shorter than the path's round trip, retired it (fuzzer seed
            # 510251, 2026-12-08, a packet refused 31 times over 8 EVs)
            self.ev_ack_ns[pkt.ev] = max(self.ev_ack_ns[pkt.ev], self.ack_now)
            self._path_delivered(pkt.ev, pkt.sent_ns)
        pkt.state = _Pkt.LOST
        self.inflight -= pkt.length
        self._rnr_wait[pkt.seq] = now_ns + F.RNR_TIMER_US[code] * 1000
        return True

    def _on_rto(self, now_ns: int) -> None:
        if self.inflight == 0 and self._rnr_wait and not self.retx:
            # nothing is in flight: the packets not acknowledged wait out an RNR timer, which is no loss
            self.rto_at = min(self._rnr_wait.values()) + self.timeout_ns
            return
        super()._on_rto(now_ns)

    def _trim_of_this_copy(self, pkt: _Pkt, ev_echo: int) -> bool:
        """The ACK being processed was triggered by resent ``pkt`` arriving trimmed, on the EV (``ev_echo``)
        its latest copy took, which no copy before it took: the trim of the latest copy, however
        soon it came back and however soon after the trim before it [ours].  The time rules alone (half
        the minimum RTT, learnt under load) took such a trim for a repeat of the earlier one: in the
        simulated 63 -> 1 incast a resend trimmed at the receiver's downlink came back 10-12 us after its
        send (11 us after the first copy's trim) against a 34 us minimum RTT, was ignored, and RACK later
        retired the healthy EV it was sent on (every one of the 1-4 retirements of a run)."""
        return self._names_latest_copy(pkt, self.qp.ev_index_of_entropy(ev_echo))

    @staticmethod
    def _names_latest_copy(pkt: _Pkt, ev_i: int) -> bool:
        """Whether an answer about resent ``pkt`` whose ev_echo names EV ``ev_i`` can only be about its
        latest copy: that copy took ``ev_i`` and no copy before it did (all of them known: the history is
        not full).  A repeat the responder sends for an earlier copy (trim or RNR NAK again) names that
        copy's EV."""
        h = pkt.hist
        if ev_i != pkt.ev or not h or len(h) != pkt.xmits - 1:
            return False
        return all(x[2] != ev_i for x in h)

    def _delivered(self, pkt: _Pkt) -> None:
        self.rack_ts = max(self.rack_ts, pkt.sent_ns)
        ev = pkt.ev
        if pkt.xmits > 1 and pkt.first_ev >= 0:
            if self._first_copy_arrived(pkt):  # its path is alive and this slow
                self._path_delivered(pkt.first_ev, pkt.first_sent_ns)
            else:  # kept for the duplicate the first copy may still make (_dup_echo), the newest RESENT_KEEP
                done = self._resent_done
                if len(done) >= RESENT_KEEP:
                    del done[next(iter(done))]
                done[pkt.seq] = (pkt.first_ev, pkt.first_sent_ns, pkt.ev, pkt.xmits)
        # per-EV evidence only from packets sent once (Karn's rule): a resent packet may have been
        # delivered by its first copy, on another EV, and would vouch for (or condemn) the wrong path
        if ev >= 0 and pkt.xmits == 1 and pkt.sent_ns > self.ev_replaced_ns[ev]:
            self.ev_ack_ns[ev] = max(self.ev_ack_ns[ev], self.ack_now)
            ts = self.ev_rack_ts[ev]
            if pkt.sent_ns >= ts and (pkt.sent_ns > ts or pkt.seq > self.ev_rack_seq[ev]):
                self.ev_rack_ts[ev] = pkt.sent_ns
                self.ev_rack_seq[ev] = pkt.seq
            self._path_delivered(ev, pkt.sent_ns)

    def _path_delivered(self, ev: int, sent_ns: int) -> None:
        """A copy sent on EV ``ev`` at ``sent_ns`` is reported delivered (a packet sent once, or the first
        copy of a resent one): the path's delivery time is a sample -- from the send to the ACK that
        reported it, whichever path that ACK took (what RACK waits for; the trigger's RTT alone misses a
        slow path whose packets faster paths' SACKs report first) -- and a suspicion this copy postdates
        is lifted (the path is alive)."""
        if sent_ns <= self.ev_replaced_ns[ev]:  # sent on the EV the slot held before (paths_replaced)
            return
        e = self.evset.entries[ev]
        e.rtt_sample(self.ack_now - sent_ns)
        self.mut += 1
        m = self._late_min
        if m is not None:
            v = (e.srtt if e.srtt > e.last_rtt else e.last_rtt) if e.srtt else 1 << 62  # noqa: FURB136 (hot path: no max() call)
            if v <= m:
                self._late_min, self._late_arg = v, ev
            elif self._late_arg == ev:  # the least one grew: find it again
                self._late_min = None
        if e.suspect_ns and sent_ns >= e.suspect_sent_ns:
            e.suspect_ns = 0

    def _dup_echo(self, seq: int) -> None:
        """The responder echoed a duplicate of PSN ``seq`` (unwrapped), on the EV the ACK's ``ev_echo``
        names (``self._echo_ev``).  Two copies of the packet arrived: if it was sent on two EVs, or the
        duplicate came on the first one, the first copy arrived, late [ours].  Without this a path
        slower than RACK's limit stayed suspect: its first copies arrive after their resends, as
        duplicates, when the resend's ACK had already removed the packet."""
        rec = self._resent_done.pop(seq, None)
        if rec is None:
            pkt = self.pkts.get(seq)
            if pkt is None or pkt.xmits < 2 or pkt.first_ev < 0:
                return
            rec = (pkt.first_ev, pkt.first_sent_ns, pkt.ev, pkt.xmits)
        first_ev, first_sent, last_ev, xmits = rec
        if (xmits == 2 and first_ev != last_ev) or (self._echo_ev == first_ev and self._echo_ev != last_ev):
            self._path_delivered(first_ev, first_sent)

    def _ecn_path(self, pkt: _Pkt) -> int:
        """The slot whose path CE-marked the copy of ``pkt`` an ECN echo names, or -1 when that is not
        known.  An echo names a PSN, not a copy: a resent packet's mark may be any copy's, so only when
        every copy took the EV the packet holds now is it that path's queue [ours].  And a copy sent on the
        slot before a REPLACE_EV (paths_replaced) crossed the old path: its mark says nothing of the new
        EV.  Both were charged to the latest copy's slot until 2026-12-06 (review h-rev5): the new EV of a
        replaced slot took the old path's marks as its own, a penalty (skipped by the spray) and a
        congestion signal that excuses a proven loss on it for an RTT."""
        ev = pkt.ev
        if ev < 0:
            return -1
        if pkt.xmits > 1:
            h = pkt.hist
            if (pkt.first_ev != ev or pkt.first_sent_ns <= self.ev_replaced_ns[ev] or h is None
                    or len(h) != pkt.xmits - 1 or any(x[2] != ev for x in h)):
                return -1
        elif pkt.sent_ns <= self.ev_replaced_ns[ev]:
            return -1
        return ev

    def _echo_is_first_copy(self, pkt: _Pkt) -> bool:
        """Whether the ACK now processed, triggered by the resent ``pkt``, was triggered by its first copy:
        its ``ev_echo`` names the first copy's EV and no later copy took that EV (``hist`` holds the EV of
        every copy but the latest, which is ``pkt.ev``, when it is complete)."""
        first = pkt.first_ev
        if first < 0 or self._echo_ev != first or pkt.ev == first:
            return False
        h = pkt.hist
        return h is not None and len(h) == pkt.xmits - 1 and all(x[2] != first for x in h[1:])

    def _first_copy_arrived(self, pkt: _Pkt) -> bool:
        """Whether the ACK now processed reports the *first* copy of the resent ``pkt``.  When ``pkt`` is
        its trigger, the ACK's ``ev_echo`` names the EV the copy that arrived took: the answer, if the two
        copies took different EVs.  Otherwise by time, as Eifel tells a spurious retransmission (RFC
        3522): reported within half the QP's minimum RTT of the resend, sooner than the resend's own
        round trip could be.  The whole minimum RTT was the limit before; learnt under load it exceeds
        the fabric's base RTT, and in simulation resends made once the fabric had drained (acked in the
        base RTT, 11.4 us, under a learnt 13.5 us) cleared the suspicion of the dead path their first
        copies were lost on: with 512 KiB flows no dead EV was ever retired (docs/simulation.md) [ours]."""
        if pkt.seq == self._echo_seq and self._echo_ev >= 0 and pkt.first_ev != pkt.ev:
            return self._echo_ev == pkt.first_ev
        if self.ack_now - pkt.sent_ns >= self.min_rtt >> 1:
            return False
        # too soon for the latest copy: an earlier one arrived, which is the first only if there were two
        # copies, or every earlier copy took the first one's EV [ours, 2026-12-06].  With more copies the
        # time test credited the first copy's path with whichever arrived: a stalled receiver answered for
        # a PSN's third copy (EV 0) 22 us after its sixth left, the first copy's dead path (EV 2) had its
        # suspicion lifted and was retired 12 ms after a 2 ms stall instead of 0.5 ms
        # (tests/mrc/core/test_core_peer_silent.py; found from the retirement's evidence)
        if pkt.xmits == 2:
            return True
        h = pkt.hist
        return h is not None and len(h) == pkt.xmits - 1 and all(x[2] == pkt.first_ev for x in h)

    def _trimmed_on_path(self, pkt: _Pkt, now_ns: int) -> None:
        """A packet sent once on EV ``pkt.ev`` came back trimmed: its header crossed the whole path, so
        the path is alive and congested [ours], evidence as good as a delivery for RACK's path verdicts
        (``_lose``: a packet sent on it before this one was lost to congestion, not to a failed path),
        for the quiet clock and for a suspicion this packet postdates.  Only deliveries counted before:
        once a queue stayed above its trim threshold every packet on that path came back trimmed, none
        was delivered, the path's one probe (never trimmed) was most likely dropped early there, and healthy
        EVs went ASSUMED_BAD (cause rack) within 40-250 ms of the first transfer on the emulated
        fabric (bench/README.md, mrc-perf defaults)."""
        ev = pkt.ev
        if pkt.sent_ns <= self.ev_replaced_ns[ev]:  # sent on the EV the slot held before (paths_replaced)
            return
        self.ev_trim_ts[ev] = max(self.ev_trim_ts[ev], pkt.sent_ns)
        self.ev_ack_ns[ev] = max(self.ev_ack_ns[ev], now_ns)
        e = self.evset.entries[ev]
        if e.suspect_ns and pkt.sent_ns >= e.suspect_sent_ns:
            e.suspect_ns = 0
            if e.probe_req_id >= 0:  # its probe is no longer waited for
                self.host.forget_probe(e.probe_req_id)
                e.probe_req_id = -1

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

    def _ev_reorder_window(self, ev: int, qp_window: int | None = None) -> int:
        """RACK's reordering window for a packet sent on EV ``ev``: the QP's window, widened to the
        extra delay this path shows over the fastest (its srtt + rttvar - min_rtt) [ours].  RACK
        compares a packet's send time with that of the latest one delivered, usually on the least
        queued path; a packet on a path whose queues hold it longer arrives that much later without
        being lost.  With one window for all paths, the fault-free all-to-all of bench/fabric_scenarios.py
        declared 25-53 packets lost that then arrived (every RACK resend a duplicate at the responder)
        and retired 2-6 healthy EVs per run (bench/README.md).  An EV without a sample yet uses srtt.
        ``qp_window``: ``_reorder_window()`` if the caller has it already."""
        w = self._reorder_window() if qp_window is None else qp_window
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

    def _pkt_pto(self, ev: int, qp_window: int | None = None) -> int:
        """Tail-loss limit of a packet on EV ``ev``: its path's delivery time (or the QP's srtt, the larger)
        plus that path's reordering window and the ACK delay [ours].  A packet that nothing sent later has
        overtaken is lost once it is that late for its own path: a failed path's last packets (the QP
        blocked behind them) were found only at twice the QP's srtt plus a reordering window, and the
        demo's recovery after a link failure took 4-5 RTTs."""
        if not self.srtt or ev < 0:
            return self._pto()
        return max(self.srtt, self.evset.entries[ev].srtt) + self._ev_reorder_window(ev, qp_window) + \
            self.attr.ack_delay_ns

    def _ev_late_ns(self, ev: int, qp_window: int) -> int:
        """RACK's time limit for a packet on EV ``ev`` once a packet sent after it was delivered: the
        path's own delivery time (srtt_ev; the QP's srtt without a sample) plus the reordering window,
        at least two of the path's mean deviations (RFC 8985 6.2 with the path's RTT in place of the
        latest delivered packet's) [ours].  A packet is late for its own path, whatever the other paths
        deliver: comparing its send time with the latest delivered packet's (the rule before) waited
        the path's delivery time plus a window that was itself a delivery time, and found a dead path's
        packets 2-4 RTTs after they were sent (the demo's recovery: 4-4.5 RTTs).  The path's latest delivery
        time, when longer than its smoothed one, is used instead (RFC 8985's rack.rtt is the latest): a
        queue that is growing outruns the average (in the incast bench: 3-5 verdicts on packets that then
        arrived), while a dead path's latest sample is from before it died."""
        if ev < 0:
            return self.srtt + qp_window
        e = self.evset.entries[ev]
        if not e.srtt:
            return self.srtt + qp_window
        return max(e.srtt, e.last_rtt) + max(qp_window, 2 * e.rttvar)

    def _pto_deadline(self) -> int | None:
        """When the first packet in flight reaches its tail-loss limit (its send time + ``_pkt_pto``);
        scans the send log only as far as a later send could still be first.  The QP's reordering
        window and each EV's limit are computed once per call (nothing here changes them): the QP's
        timer asks on every event, and computing them per packet was a third of the wall time of
        bench/mrc_sim.py's 1%-loss run.  Memoised: the answer depends only on the packets in flight, the
        paths' delivery times (both counted by ``mut``) and the QP's RTT scalars and attributes in
        ``key``; the timer asks after every event of the endpoint, most of which changed none of them
        (a third of the simulator's time at 1,024 hosts before)."""
        a = self.attr
        key = (self.mut, self.rack_ts, self.srtt, self.min_rtt, self.reo_mult, self.timeout_ns,
               a.reorder_min_ns, a.ack_delay_ns, self.ack_now, self._probe_heard_ns)
        if key == self._pto_key:
            return self._pto_val
        t = self._pto_scan()
        self._pto_key, self._pto_val = key, t
        return t

    def _pto_scan(self) -> int | None:
        """``_pto_deadline``'s pass over the send log.  Each packet's limits are ``_pkt_pto`` and
        ``_ev_late_ns`` written out here (the same arithmetic, with the QP's scalars read once): a QP
        sprays its window over as many EVs as it has packets in flight, so a per-EV cache of the two saved
        nothing, and the two calls per packet were most of this pass's time (a third of the simulator's
        CPU at scale before, bench/README.md stop 62)."""
        w = self._reorder_window()
        pto = self._pto()
        srtt = self.srtt
        first = min(pto, self._min_late_ns(w)) if srtt else pto
        rack_ts = self.rack_ts
        pkts = self.pkts
        heard = max(self.ack_now, self._probe_heard_ns)
        inflight = _Pkt.INFLIGHT
        ents = self.evset.entries
        min_rtt = self.min_rtt
        ack_delay = self.attr.ack_delay_ns
        t = None
        for sent, seq, xm in self.sent_log:
            # a packet sent at or after rack_ts has only its tail-loss limit, never below ``pto``; the
            # ones before may be late sooner (``first``); sends are in time order, so the first packet
            # that cannot beat ``t`` ends the scan
            if t is not None and sent + (pto if sent >= rack_ts else first) >= t:
                break
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != inflight or pkt.xmits != xm:
                continue  # settled (dropped from the log when it reaches the head)
            if xm > 1 and heard < sent and sent >= rack_ts:
                continue  # resent into the peer's silence: the RTO's (_detect_losses)
            ev = pkt.ev
            if not srtt:
                c = sent + pto  # _pkt_pto without an RTT; no RACK timer either
            elif ev < 0:
                c = sent + pto  # _pkt_pto; _ev_late_ns is srtt + w
                if sent < rack_ts:  # RACK's own timer (RFC 8985 6.3): late for its path
                    c = min(c, sent + (srtt + w))
            else:
                e = ents[ev]
                es = e.srtt
                if es:  # _pkt_pto (its _ev_reorder_window with the path's srtt + 2 rttvar) and _ev_late_ns
                    c = sent + (max(srtt, es) + max(w, es + 2 * e.rttvar - min_rtt) + ack_delay)
                    if sent < rack_ts:
                        c = min(c, sent + (max(es, e.last_rtt) + max(w, 2 * e.rttvar)))
                else:  # no sample on the path yet: both limits from the QP's srtt
                    c = sent + (max(srtt, es) + max(w, srtt - min_rtt) + ack_delay)
                    if sent < rack_ts:
                        c = min(c, sent + (srtt + w))
            if t is None or c < t:
                t = c
        return t

    def _min_late_ns(self, qp_window: int) -> int:
        """The least of the EVs' ``_ev_late_ns``: no packet younger than this can be late yet."""
        m = self._late_min
        if m is None:
            m, arg = 1 << 62, -1
            for i, e in enumerate(self.evset.entries):
                if e.srtt:
                    v = e.srtt if e.srtt > e.last_rtt else e.last_rtt  # noqa: FURB136 (hot path)
                    if v < m:
                        m, arg = v, i
            self._late_min, self._late_arg = m, arg
        return min(self.srtt, m) + qp_window

    def _detect_losses(self, now_ns: int, _ev_bad: set[int]) -> None:
        """RACK: once a packet sent after it was delivered, a packet is lost when it has been out its
        path's time limit (``_ev_late_ns``); in any case once it has been out its tail-loss limit
        (``_pkt_pto``) -- but a resent copy that left after the peer last answered (no ACK, no probe
        answer since) is left to the retransmission timeout, which backs off: one tail-loss resend per
        silence, as TCP's tail-loss probe is one before the RTO (RFC 8985 7) [ours].  When every path
        went dark, each packet in flight was resent every tail-loss limit (a few microseconds) for as
        long as the outage lasted: fuzzer seed 161564, all four paths down 13 ms, 14,600-25,300 resends
        per QP in its first 5 ms and 190 us of CPU per event."""
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
        # In send order, up to the first packet no limit could call lost yet: a packet on a more queued
        # EV waits its own limit, and packets sent after it on other EVs are judged meanwhile (a dead
        # path's packets must not wait behind a slow path's).
        rack_ts = self.rack_ts
        if not self.srtt:  # no RTT yet: RACK's send-time comparison, with the QP's window
            for sent, seq, xm in log:
                if sent + reo >= rack_ts and now_ns - sent < pto:
                    break
                pkt = pkts.get(seq)
                if pkt is not None and pkt.state == _Pkt.INFLIGHT and pkt.xmits == xm:
                    self._lose(pkt, now_ns, "rack")
            return
        young = self._min_late_ns(reo)
        limits: dict[int, tuple[int, int]] = {}
        heard = max(self.ack_now, self._probe_heard_ns)
        for sent, seq, xm in log:  # _lose does not touch the log
            age = now_ns - sent
            if age < pto and (sent >= rack_ts or age < young):
                break
            pkt = pkts.get(seq)
            if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
                continue
            if xm > 1 and heard < sent and sent >= rack_ts:
                continue  # resent into the peer's silence: the RTO's (_detect_losses)
            lim = limits.get(pkt.ev)
            if lim is None:
                lim = limits[pkt.ev] = (self._pkt_pto(pkt.ev, reo), self._ev_late_ns(pkt.ev, reo))
            if (sent < rack_ts and age >= lim[1]) or age >= lim[0]:
                if self.reo_mult > 1:  # a widened window lasts for 16 verdicts (not counting retirements)
                    self.reo_persist -= 1
                    if self.reo_persist <= 0:
                        self.reo_mult = 1
                self._lose(pkt, now_ns, "rack")

    def _lose(self, pkt: _Pkt, now_ns: int, cause: str) -> None:
        self.mut += 1
        pkt.state = _Pkt.LOST
        self.inflight -= pkt.length
        self.retx.append((pkt.seq, cause))
        retire = False
        congestion = False  # the verdict found congestion behind the loss (trims or CE on its path): NSCC hears of it
        ev = pkt.ev
        if ev >= 0 and pkt.sent_ns > self.ev_replaced_ns[ev]:  # (a copy on a replaced EV: no verdict on the slot)
            if cause == "timeout":
                # nothing was acknowledged on any path for an RTO: which one failed is not known, so
                # each EV that carried a packet only gets the timeout penalty [ours].  A dead path's
                # packets reach their per-path tail-loss limit (_pkt_pto) well before the RTO and make
                # it suspect there; suspecting every EV here left the QP spraying over all of them,
                # the dead ones included, as the fallback (the demo's spine loss: 5.2 RTTs).
                self.evset.penalize(ev, PENALTY_TIMEOUT)
            elif self.ev_rack_ts[ev] >= pkt.sent_ns and self.sack_blind[0] <= pkt.seq < self.sack_blind[1]:
                # a later packet on the path arrived, so the path is alive; the latest SACK could not
                # report on this one (it may have arrived too): resend it, keep the EV
                self.counters.rack_ev_kept += 1
            elif self.ev_trim_ts[ev] >= pkt.sent_ns:
                # a packet sent on the path after this one came back trimmed (_trimmed_on_path): the path
                # is alive and its queue was at the trim threshold behind this packet, which is queued
                # (trimmed headers overtake data) or was trimmed with its NACK dropped: congestion, the
                # EV stays GOOD [ours]
                self.counters.rack_ev_kept += 1
                congestion = True
            elif pkt.dark and self._sent_after_on_ev(ev, pkt):
                # this copy left into a silence of the peer (``_sent``): every path was dark or the peer
                # silent, and it was lost in that silence; the later delivery says the path is alive
                # now, not that it dropped this copy while alive.  Resend it, keep the EV [ours: with the
                # copies resent into a 10 ms outage of every path waiting for the RTO (_detect_losses),
                # the first ACKs after the outage, for packets sent on the same EVs after it, retired
                # healthy EVs]
                self.counters.rack_ev_kept += 1
            elif (pkt.opcode == F.OP_WRITE_LAST_IMM or pkt.opcode == F.OP_WRITE_ONLY_IMM) \
                    and self._sent_after_on_ev(ev, pkt):
                # an immediate, the only packet a responder refuses (RNR): its path may have carried it
                # whole to a refusal whose NAK, sent back on this EV, is slower than the later packet's
                # ACK on a faster path, or was taken for a repeat of an earlier copy's.  Resend it, keep
                # the EV [ours, 2026-12-07: fuzzer seed 300212, paths of 2-20 us one way: the copy's RNR
                # NAK, on the 20 us path, came 3.6 us after the ACK of a later packet on the EV, on a 2 us
                # one; seed 162661: a copy's RNR NAK, back 1.1 us after it left, was taken for a repeat of
                # the copy before it on the same EV (the ev_echo cannot tell two copies on one EV apart).
                # Until 2026-12-08 only when the peer had refused an immediate after this copy left;
                # seed 501997: the verdict came before the first refusal's NAK, on the 20 us path, and
                # retired the healthy EV.]  A path that drops an immediate and passes later packets is
                # retired by its next loss of any other packet
                self.counters.rack_ev_kept += 1
            elif self._sent_after_on_ev(ev, pkt):
                # the path lost this packet (a later one on it arrived: paths are FIFO) and is alive,
                # so its other packets in flight are left alone.  With congestion reported on it within
                # its RTT (CE echoes, trims), the loss is congestion's [ours]: most likely a trimmed
                # packet whose trim NACK a full queue dropped (switches trim data, not ACKs; in the
                # fabric bench such verdicts, none a duplicate, came in runs with 7-42 ACKs dropped
                # early), so the EV stays GOOD; otherwise the path drops packets that congestion does
                # not explain: ASSUMED_BAD.
                if now_ns - self.evset.entries[ev].signal_ns <= max(self.evset.entries[ev].srtt, self.srtt):
                    self.counters.rack_ev_kept += 1
                    congestion = True
                elif self.evset.prof.states[ev] is EvState.GOOD:
                    full = self._evidence(pkt, now_ns, cause)  # a verdict: built before the change it explains
                    if self.evset.mark_bad(ev, now_ns, cause, evidence=_loss_evidence("fifo", full)):
                        self._log_verdict("fifo", full)
            else:
                # nothing sent on the path at or after this packet has been delivered: dead, or queued
                # deeper than its delivery time says -- suspect until a probe or a later delivery on it
                # decides (_suspect): no new packets go on it meanwhile [ours; before, a path that had
                # delivered within its quiet time kept getting new packets, each found lost a
                # detection round later].  When it has gone quiet as well (no new delivery for an RTT),
                # what else is in flight on it is behind this packet and is resent now (_retire_ev).
                if self._suspect(ev, pkt.sent_ns, now_ns):
                    self._suspicion[ev] = self._evidence(pkt, now_ns, cause)  # its by_time: _confirm_ns
                retire = not self._flushing and now_ns - self.ev_ack_ns[ev] >= self._quiet_ns(ev)
        if cause == "timeout":
            self.cc.on_timeout(now_ns)
        elif congestion:
            # only a loss congestion explains (trims or CE on its path within an RTT) is a congestion
            # signal [ours]: MRC takes a loss for a failed path, which the EV verdicts above deal with
            # (or for one the SACKs could not report on, or on an EV replaced since: no verdict).
            # Until 2026-12-07 every RACK loss was one: the losses of a spine's failure set NSCC's
            # quick-adapt trigger, which later cut the windows of an all-reduce's QPs to what a period
            # had delivered (8-107 KB against ~194 KB) and held its steps 1.3-1.44x slow for the whole
            # 500 us outage (bench/fabric_sim.py --cases allreduce: job 1.278x against 1.064x without
            # congestion control; docs/protocol.md "Congestion control")
            self.cc.on_loss(now_ns)
        else:
            self.counters.loss_not_congestion += 1
        if retire:
            self._retire_ev(pkt.ev, now_ns)

    def _evidence(self, pkt: _Pkt, now_ns: int, cause: str) -> dict:
        """What a RACK verdict on ``pkt`` (sent once or more, on EV ``pkt.ev``) knew when it was made: the
        packet, its path's delivery record and the time limits it was judged by.  Built only for a
        verdict that changes an EV's state (rare), for :attr:`verdicts`."""
        ev = pkt.ev
        e = self.evset.entries[ev]
        w = self._reorder_window()
        # packets sent after this one that the peer acknowledged (SACKed above the cumulative ACK, which
        # cannot have passed this one), and the other EVs whose latest delivered packet left after it
        sent = pkt.sent_ns
        later = sum(1 for p in self.pkts.values() if p.state == _Pkt.SACKED and p.sent_ns > sent)
        later_evs = sum(1 for j, t in enumerate(self.ev_rack_ts) if j != ev and t > sent)
        heard = self._last_heard_ns()
        return {"t_ns": now_ns, "cause": cause, "ev": ev, "port": e.port, "psn": pkt.seq & F.PSN_MASK,
                "sent_ns": pkt.sent_ns, "age_ns": now_ns - pkt.sent_ns, "xmits": pkt.xmits,
                "first_ev": pkt.first_ev, "since_ev_delivery_ns": now_ns - self.ev_ack_ns[ev],
                "ev_rack_ts_ns": self.ev_rack_ts[ev], "ev_trim_ts_ns": self.ev_trim_ts[ev],
                "since_ev_signal_ns": now_ns - e.signal_ns, "rack_ts_ns": self.rack_ts,
                "srtt_ns": self.srtt, "rttvar_ns": self.rttvar, "min_rtt_ns": self.min_rtt,
                "ev_srtt_ns": e.srtt, "ev_rttvar_ns": e.rttvar, "ev_last_rtt_ns": e.last_rtt,
                "reorder_ns": w, "ev_reorder_ns": self._ev_reorder_window(ev, w),
                "late_limit_ns": self._ev_late_ns(ev, w), "pto_ns": self._pkt_pto(ev, w),
                "quiet_ns": self._quiet_ns(ev), "in_flight_pkts": self.snd_nxt - self.snd_una,
                "inflight_bytes": self.inflight, "sack_blind": [self.sack_blind[0] & F.PSN_MASK,
                                                                self.sack_blind[1] & F.PSN_MASK],
                "cwnd": getattr(getattr(self.cc, "nscc", None), "cwnd", None),
                "later_acked": later, "later_acked_evs": later_evs, "by_time": sent >= self.rack_ts,
                "since_peer_heard_ns": None if heard is None else now_ns - heard}

    def _owed_silence_ns(self, now_ns: int) -> int:
        """How long the peer has answered on no path (no ACK, no probe answer) while it owed an answer --
        the retransmission timer has fired since the last progress, or the oldest packet in flight (the
        send log's head, or an older settled one not yet popped) left after its last answer; -1 when it
        owes none (a QP that was idle is not met with silence)."""
        heard = max(self.ack_now, self._probe_heard_ns)
        log = self.sent_log
        return now_ns - heard if self.retries or (log and heard < log[0][0]) else -1

    def _peer_silent_now(self, now_ns: int, span_ns: int) -> bool:
        """The peer has been silent for ``span_ns`` up to now while it owed an answer
        (``_owed_silence_ns``, as ``_sent`` judges a silence) [ours, 2026-12-08: a receiver
        that answered once after a suspicion and then stalled again for most of the EV's time to show
        life had healthy EVs retired -- the suspicion's first answer was long enough ago, so the hold for
        a silent peer did not apply; in the demo through the bmv2 stand-ins on a loaded machine, one EV
        with its probe unanswered while the peer had been silent 182 ms of its 282 ms;
        tests/mrc/core/test_core_peer_silent.py]."""
        return self._owed_silence_ns(now_ns) >= span_ns

    def _last_heard_ns(self) -> int | None:
        """When the peer last answered this QP on any path (an ACK or a probe answer); None: never."""
        t = max(self.ack_now, self._probe_heard_ns)
        return t if t > 0 else None

    def _log_verdict(self, kind: str, detail: dict) -> None:
        """Keep an EV retirement with its evidence: ``kind`` "fifo" (a later packet on the path was
        delivered, this one not, no congestion signal on it within its RTT) or "quiet" (a suspect path
        showed no life within ``_confirm_ns``)."""
        if len(self.verdicts) < VERDICT_LOG_MAX:
            detail["kind"] = kind
            self.verdicts.append(detail)

    def _sent_after_on_ev(self, ev: int, pkt: _Pkt) -> bool:
        """True if the latest packet delivered on EV ``ev`` (a first transmission) left after ``pkt``: a
        later send time or, at the same time, a higher PSN with ``pkt`` a first transmission too (new data
        leaves in PSN order; RFC 8985's RACK_sent_after orders by time, then sequence).  A resend sent in
        the same instant as new data is not ordered against it: no evidence either way.  The requester
        stamps a whole burst (one ``fill``) with one time, and a burst longer than the EV count puts two
        packets on one EV; comparing times alone (``>=``) took the delivery of the *earlier* packet of
        such a pair as proof that the path had lost the later one, which was only late: in the fault-free
        all-to-all of bench/fabric_scenarios.py that retired a healthy EV in 3 of 65 runs
        (bench/fabric_ev_verdicts.py; docs/demo.md)."""
        ts = self.ev_rack_ts[ev]
        if ts != pkt.sent_ns:
            return ts > pkt.sent_ns
        return pkt.xmits == 1 and self.ev_rack_seq[ev] > pkt.seq

    def _suspect(self, ev_i: int, sent_ns: int, now_ns: int) -> bool:
        """A RACK verdict found nothing delivered on EV ``ev_i`` since the lost packet: probe before
        retiring it [ours].  The QP stops
        spraying on it at once (``EvSet.pick`` takes a suspect EV only when no other GOOD EV is left) and
        sends it one probe; a probe answer, or the delivery of a packet sent on it no earlier than the
        missing one, clears it (the path was only slow); no such evidence within ``_confirm_ns`` makes
        it ASSUMED_BAD (cause ``rack``).  Recovery is the same as retiring at once -- new packets avoid
        the path from the verdict on, and once it has gone quiet what was in flight on it is resent
        (``_lose``) -- but a path
        that is merely queued deeper than its RTT estimate costs a probe instead of an EV.  Measured on
        the fault-free all-to-all of bench/fabric_scenarios.py: every quiet-path verdict was followed
        by the 'lost' packet arriving (bench/README.md).  False if the EV was already suspect or not GOOD."""
        e = self.evset.entries[ev_i]
        if e.suspect_ns or self.evset.prof.states[ev_i] is not EvState.GOOD:
            return False
        e.suspect_ns = now_ns
        e.suspect_sent_ns = sent_ns
        self._suspects.add(ev_i)
        self._heard_since.pop(ev_i, None)
        self._silent_holds.pop(ev_i, None)  # a new suspicion: holds of an earlier one (lifted since) do not count
        self._unheard.add(ev_i)
        e.probe_next_ns = now_ns
        e.probe_req_id = -1
        self.counters.rack_ev_suspect += 1
        return True

    def _confirm_ns(self, e: EvEntry) -> int:
        """How long a suspect EV has to show it is alive: two of its RTTs (srtt + 4 x rttvar), at least
        two of the QP's -- a probe waits behind the same queues as the data; an EV that has not had a
        sample yet, four of the QP's (nothing says how long its path is) -- and the QP's retransmission
        timeout if the QP acted on a trim within an srtt of the suspicion or since; before the QP's
        first RTT sample, the ACK timeout, the one bound on a round trip it has (as ``_pto``), and so for
        an EV without a sample whose missing packet the tail-loss limit alone found (nothing sent after
        it delivered on any path: the QP's srtt is its other paths', and a new path 40x as long lost the
        tail of a write that way before its first round trip, h-fuzz16) [ours: it
        was the reordering floor, 4 us, and in a simulated 63 -> 1 incast, whose first ACKs are all for
        trimmed packets and carry no sample, ~50 healthy EVs a run were retired within 40 us of the
        start].  The timeout under trims [ours, 2026-12-05]: the QP's packets are being trimmed, so a
        queue its paths share is full and the probe waits behind its headers; in a 127 -> 1 incast the
        QP's srtt was its first sample (later ACKs report trims, which carry none), 12-17 us, and the
        probes of EVs without a sample of their own waited behind the headers at the receiver's
        downlink and the SACKs on its uplink past 4 x that: 41 healthy EVs retired in the first 100 us,
        none with this.  A suspect EV is out of the spray from the verdict on and what it had in flight
        is resent when it goes quiet (``_lose``), so a longer wait delays the retirement, not the
        recovery."""
        if not e.srtt:
            if not self.srtt:
                return max(self.timeout_ns, self.attr.reorder_min_ns)
            if e.suspect_ns and (self._trim_seen_ns >= e.suspect_ns - self.srtt
                                 or self._suspicion.get(e.index, {}).get("by_time")):
                return max(4 * self.srtt, self.timeout_ns, self.attr.reorder_min_ns)
            return max(4 * self.srtt, self.attr.reorder_min_ns)
        return max(2 * (e.srtt + 4 * e.rttvar), 2 * self.srtt, self.attr.reorder_min_ns)

    def _check_suspects(self, now_ns: int) -> None:
        """Retire the suspect EVs whose time to show life is up.  One that an ACK reported a new delivery
        on since it became suspect is alive (a packet sent on it before the missing one arrived after
        the verdict: the path is slow or dropped that one packet) and goes back to the spray instead
        [ours: in the demo, 1-2 healthy EVs per run were retired after the failures this way, their
        one probe unanswered in a congested queue]."""
        ents = self.evset.entries
        for i in self._watched_evs():
            e = ents[i]
            if e.suspect_ns and now_ns >= e.suspect_ns + (conf := self._confirm_ns(e)):
                alive = self.ev_ack_ns[i] > e.suspect_ns
                heard = self._heard_since.get(i)
                # its probe left while the peer was silent on every path (held before: the probe may have
                # been lost in that silence, as everything sent then was) and the peer answers again:
                # not a probe the path failed, so one more hold with a new probe [ours, review h-rev5]
                stale = (i in self._silent_holds and e.probe_req_id >= 0 and heard is not None
                         and e.probe_sent_ns < heard)
                if not alive and (heard is None or now_ns - heard < conf >> 1 or stale
                                  or self._peer_silent_now(now_ns, conf >> 1)):
                    # the peer answered on no path for most of the time this EV had to show life (no ACK,
                    # no probe answer): its silence says nothing of this path, as for the ACK timeout
                    # (_lose) [ours].  Held suspect -- out of the spray, its probe still awaited -- for
                    # another such time, counted from now (nothing delivered on it since the suspicion:
                    # nothing is missed), by then with the peer's answers to judge by.  A receiver
                    # stalled 24-30 ms (its process not scheduled, the emulated fabric) had every EV quiet
                    # at once and retired all but ev_min_active of them, each answering its probes right
                    # after; holding only until the first answer left a race: the EVs whose answers
                    # were a few frames further back in the peer's backlog were still retired (the
                    # h-evbad review, repro/evbad_row.py --stall server:24:6:1:0.4)
                    e.suspect_ns = now_ns
                    self.counters.rack_ev_peer_silent += 1
                    self._silent_holds[i] = self._silent_holds.get(i, 0) + 1
                    if e.probe_req_id >= 0 and (e.probe_sent_ns < heard if heard is not None
                                                else now_ns - e.probe_sent_ns >= self._rto()):
                        # the suspicion's one probe left before the peer answered again: lost in the
                        # silence as likely as not, and a suspect EV is out of the spray, so nothing else
                        # can show it alive -- send a new one (_probe) [ours, review h-rev5: when every
                        # path went dark for 3 ms, the probes sent then were lost and 3 of 4 healthy EVs
                        # were retired 0.5 ms after the paths came back, their probes never sent again].
                        # While the peer has not answered at all since the suspicion, the probe is given
                        # the QP's ACK timeout (unbacked-off), the one bound on a round trip it has,
                        # before it is replaced: replaced at every hold (until 2026-12-07), a probe whose
                        # round trip was longer than the hold -- one padded to a full frame on a slow
                        # port: 8 KiB take 67 us at 1 Gb/s, against a hold of 2 srtt of small packets --
                        # was given up each time before its answer came, and its answer, the only thing
                        # the peer sent back, was dropped as an unknown probe id: the EV was held for
                        # ever, a padded probe per hold, more than the port could carry, and the lost
                        # packet's resend never got a slot: a QP whose EVs were all suspect never
                        # completed its write (h-fuzz8, repro/padded_probe_livelock.py)
                        self.host.forget_probe(e.probe_req_id)
                        e.probe_req_id = -1
                        e.probe_next_ns = now_ns
                    continue
                heard_first = self._heard_since.pop(i, None)
                self._unheard.discard(i)
                holds = self._silent_holds.pop(i, 0)
                suspect_ns, probe_rid = e.suspect_ns, e.probe_req_id
                e.suspect_ns = 0
                if not alive:
                    sus = self._suspicion.get(i)
                    heard = self._last_heard_ns()
                    # the suspicion's start: suspect_ns moved on at each hold for a silent peer
                    first = sus["t_ns"] if sus is not None else suspect_ns
                    probe_sent = e.probe_sent_ns if e.probe_sent_ns >= first else None
                    evidence = {"rule": "quiet", "suspect_for_ns": now_ns - first, "confirm_ns": conf,
                                "ev_delivered_ago_ns": now_ns - self.ev_ack_ns[i],
                                "probe_sent_ago_ns": None if probe_sent is None else now_ns - probe_sent,
                                "probe_unanswered": probe_rid >= 0,
                                "peer_heard_ago_ns": None if heard is None else now_ns - heard,
                                "peer_heard_after_suspect_ns": None if heard_first is None else heard_first - first,
                                "peer_silent_holds": holds,
                                "suspicion": None if sus is None else _loss_evidence("loss", sus)}
                    if self.evset.mark_bad(i, now_ns, "rack", evidence=evidence):
                        d = self._suspicion.pop(i, None) or {"ev": i, "port": e.port}
                        d.update(retired_ns=now_ns, suspect_ns=first, confirm_ns=conf, peer_silent_holds=holds,
                                 since_ev_delivery_at_retire_ns=now_ns - self.ev_ack_ns[i],
                                 probe_sent_ns=probe_sent,
                                 probe_unanswered=probe_rid >= 0)
                        self._log_verdict("quiet", d)
                elif e.probe_req_id >= 0:  # its probe is no longer waited for
                    self.host.forget_probe(e.probe_req_id)
                    e.probe_req_id = -1

    def _peer_heard(self, now_ns: int) -> None:
        """The peer answered (an ACK or a probe answer): the first answer since each suspect EV's suspicion."""
        hs = self._heard_since
        for i in self._unheard:
            hs[i] = now_ns
        self._unheard.clear()

    def _retire_ev(self, ev_i: int, now_ns: int) -> None:
        """EV ``ev_i`` just went ASSUMED_BAD on a loss, and nothing sent on it after the lost packet
        has been delivered: what is still in flight on it is behind the lost packet on the same path
        (a path is FIFO), so it is resent on the GOOD EVs now (counted as RACK retransmissions) instead
        of being found lost one reordering window after another.  On a dead path that saves a round
        of detection (RTT + reordering window) for every packet sent on it after the failure; a path
        that dropped one packet and still delivers is left alone (the check in ``_lose``)."""
        pkts = self.pkts
        self._flushing = True
        heard = max(self.ack_now, self._probe_heard_ns)
        rack_ts = self.rack_ts
        try:
            for seq in range(self.snd_una, self.snd_nxt):
                p = pkts.get(seq)
                if p is not None and p.state == _Pkt.INFLIGHT and p.ev == ev_i:
                    if p.xmits > 1 and heard < p.sent_ns and p.sent_ns >= rack_ts:
                        continue  # resent into the peer's silence: the RTO's (_detect_losses)
                    self._lose(p, now_ns, "rack")
        finally:
            self._flushing = False

    def _rto_resend(self, now_ns: int) -> None:
        """Every packet in flight is lost (each one's EV takes the timeout verdict)."""
        for seq in range(self.snd_una, self.snd_nxt):
            pkt = self.pkts.get(seq)
            if pkt is not None and pkt.state == _Pkt.INFLIGHT:
                self._lose(pkt, now_ns, "timeout")

    # ------------------------------------------------------------------ timers
    def timer(self) -> int | None:
        """Also: the first tail-loss deadline in flight (``_pto_deadline``), the next probe of an
        ASSUMED_BAD EV, a suspect EV's probe or the end of its time to show life, and the end of an RNR
        wait."""
        t = super().timer()
        if self._rnr_wait and self.state is QpState.RTS:
            c = min(self._rnr_wait.values())
            if t is None or c < t:
                t = c
        if self.sent_log and self.state is QpState.RTS:
            c = self._pto_deadline()
            if c is not None and (t is None or c < t):
                t = c
        if self.state is QpState.RTS:
            states = self.evset.prof.states
            bad = EvState.ASSUMED_BAD
            ents = self.evset.entries
            for i in self._watched_evs():
                e = ents[i]
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

    def _watched_evs(self) -> range | list[int]:
        """The EV indexes, in order, that can have a probe or suspicion deadline: all of them while some
        EV is ASSUMED_BAD, else the suspect ones only (``_suspects``, pruned here) -- the timer, the
        suspicion check and the prober ask on every event or timer, and a pass over 256 EVs each time
        was most of the simulator's CPU at scale."""
        ents = self.evset.entries
        if EvState.ASSUMED_BAD in self.evset.prof.states:  # (a C-speed scan)
            return range(len(ents))
        sus = self._suspects
        for i in [i for i in sus if not ents[i].suspect_ns]:
            sus.discard(i)
        return sorted(sus)

    def _on_timer(self, now_ns: int) -> None:
        if self._rnr_wait:
            for seq in [k for k, t in self._rnr_wait.items() if t <= now_ns]:
                del self._rnr_wait[seq]
                pkt = self.pkts.get(seq)
                if pkt is not None and pkt.state == _Pkt.LOST:
                    self.retx.append((seq, "rnr"))
        self._detect_losses(now_ns, set())
        self._check_suspects(now_ns)
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

    def _probe_wait(self, e: EvEntry | None = None) -> int:
        """How long a probe may stay unanswered before it counts as lost: one probe period, and never
        less than twice the smoothed RTT (a period shorter than the RTT would give up on every probe
        before its answer could arrive, and no EV would ever come back) -- before the first RTT sample,
        never less than the ACK timeout, as for the period itself [ours].  A QP that only receives has
        no RTT sample; bound to a profile shared with the QPs that send (an EV's state is the
        profile's), it probes the same ASSUMED_BAD EVs, and with a set period of 20 ms it gave up on
        each probe after 20 ms where its peers wait 2 srtt: in the demo, ~55 probes a second into each
        dead path from one receiving QP (review h-new2, 2026-12-06).  With ``e``: that EV's own wait
        when longer, learned from a late answer (``_late_probe_answer``)."""
        w = max(self._probe_interval(), 2 * self.srtt if self.srtt else self.base_timeout_ns)
        return w if e is None or e.probe_wait_ns <= w else e.probe_wait_ns

    def _probe(self, now_ns: int) -> None:
        states = self.evset.prof.states
        ents = self.evset.entries
        for i in self._watched_evs():
            e = ents[i]
            if e.suspect_ns and states[i] is EvState.GOOD:  # one probe per suspicion (_suspect)
                if e.probe_req_id >= 0 or now_ns < e.probe_next_ns or e.port in self.evset.ports_down:
                    continue
                pad = self._suspect_probe_padded(i)
                self._send_probe(i, e, now_ns, pad=pad)
                if pad:
                    self._padded_suspect.add(i)
                else:
                    self._padded_suspect.discard(i)
                e.probe_next_ns = 1 << 62
                continue
            if states[i] is not EvState.ASSUMED_BAD or now_ns < e.probe_next_ns:
                continue
            if e.probe_req_id >= 0:
                late = e.probe_sent_ns + self._probe_wait(e)
                if now_ns < late:  # still in flight: give it its time before sending the next
                    e.probe_next_ns = late
                    continue
                e.probe_streak = 0  # previous probe unanswered: the streak starts over
                e.probes_bad_lost += 1
                # a wait learned from a late answer halves with each probe given up: a path that was slow
                # once and has died since is back at the QP's cadence within a few probes (kept, it
                # probed the dead path, and saw it come back, once per learned wait -- up to 16x later
                # [review h-rev10, repro/learned_wait_sticks.py]); a path still slow answers the next
                # probes late and so learns its wait again (_late_probe_answer)
                e.probe_wait_ns >>= 1
                # its answer is still taken, late, as a measure of the path's round trip (on_probe_resp):
                # the host routes the last PROBE_LATE_KEEP given-up ids of an EV beside its current one
                self.host.keep_late_probe(e.probe_req_id)
                e.probe_late.append((e.probe_req_id, e.probe_sent_ns))
                del e.probe_late[:-PROBE_LATE_KEEP]
                e.probe_req_id = -1
            e.probe_next_ns = now_ns + self._probe_interval()
            # only our own port being down stops the probes: a port the peer reported down is probed
            # too, since its answer is how we learn it is back when the PORT_STATUS saying so was lost
            # (it is sent once per change, unacknowledged) or overtaken by an older one [ours]
            if e.port in self.host.ports_down:
                e.probe_req_id = -1
                continue
            e.probes_bad += 1
            self._send_probe(i, e, now_ns,
                             pad=self.attr.probe_pad_to_mtu and e.probe_streak == self.attr.probe_good_count - 1)

    def _late_probe_answer(self, e: EvEntry, rtt_ns: int) -> None:
        """The answer to a probe given up as unanswered [ours]: the path works but its round trip is longer
        than the QP's probe wait, which the QP's other paths set (``_probe_wait``).  Given up on every
        time, such a path never completed a streak and stayed ASSUMED_BAD while it answered every probe
        (h-fuzz8, 2026-12-07: RTTs of 0.2 and 2.4 ms, 293 of 300 answers dropped as late).  The EV's own
        wait becomes twice that round trip, at most ``PROBE_WAIT_MAX_X`` times the QP's wait, so its next
        probes are waited for; a dead path sends no late answers and keeps the QP's cadence.  The answers
        of an EV's last ``PROBE_LATE_KEEP`` (= ``PROBE_WAIT_MAX_X``) given-up probes are taken, so any round
        trip up to the cap is learned (one probe goes out per wait while none is answered)."""
        self.counters.probe_late_answers += 1
        cap = PROBE_WAIT_MAX_X * self._probe_wait()
        e.probe_wait_ns = min(cap, max(e.probe_wait_ns, 2 * rtt_ns))

    def _suspect_probe_padded(self, i: int) -> bool:
        """Whether suspect EV ``i``'s probe is padded to a full data frame [ours]: only when a small probe's
        answer lifted its previous suspicion and no packet sent on it since has been delivered -- the
        signature of a path that passes small frames and drops large ones (an MTU mismatch), which then
        goes ASSUMED_BAD at its second suspicion instead of flapping.  The first suspicion's probe is
        small: probes ride the top queue with trimmed headers and ACKs, and in a 63 -> 1 incast the
        padded suspect probes (4 KiB each, one per suspicion) filled that queue at the receiver's
        downlink, so trims and probe answers came back 100-150 us late, after more verdicts: 785
        healthy EVs retired in one simulated run, 69 with small ones (docs/simulation.md)."""
        if not self.attr.probe_pad_to_mtu:
            return False
        t = self._lifted_small.get(i)
        if t is None:
            return False
        if self.ev_rack_ts[i] >= t:  # delivered data since: the path carries full frames
            del self._lifted_small[i]
            return False
        return True

    def _send_probe(self, i: int, e: EvEntry, now_ns: int, pad: bool) -> None:
        """One PROBE_REQ on EV ``i``; ``pad``: as large as a full-MTU data frame of the EV."""
        rid = self.host.new_probe(self.qp, i)
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
        self.host.send_frame(e.port, pkt, now_ns)

    def on_probe_resp(self, ev_i: int, rid: int, now_ns: int) -> None:
        self._probe_heard_ns = now_ns
        if self._unheard:  # the peer is answering, whichever probe this is
            self._peer_heard(now_ns)
        e = self.evset.entries[ev_i]
        if e.probe_req_id != rid:
            for k, (late_id, sent_ns) in enumerate(e.probe_late):
                if late_id == rid:
                    del e.probe_late[k]
                    self._late_probe_answer(e, now_ns - sent_ns)
                    break
            return
        e.probe_req_id = -1
        self.counters.probe_answers += 1
        if e.probe_wait_ns:  # follow the path's round trip down as well as up
            e.probe_wait_ns = min(e.probe_wait_ns, 2 * (now_ns - e.probe_sent_ns))
        if e.port in self.qp.peer_down:  # the peer took our probe in on that port (it drops frames on a down one)
            self.qp.set_peer_down(self.qp.peer_down - {e.port})
        if e.suspect_ns:  # the suspect path answered: it was slow, not dead
            e.suspect_ns = 0
            if ev_i in self._padded_suspect:  # a full frame crossed it
                self._padded_suspect.discard(ev_i)
                self._lifted_small.pop(ev_i, None)
            else:
                self._lifted_small[ev_i] = now_ns
            return
        e.probe_streak += 1
        if e.probe_streak >= self.attr.probe_good_count:
            if self.evset.prof.states[ev_i] is EvState.ASSUMED_BAD:
                # the streak's last probe was padded when probe_pad_to_mtu (_probe: sent at good_count - 1)
                self.evset.mark_good(ev_i, now_ns, "probe", evidence={
                    "rule": "probe", "answers_in_a_row": e.probe_streak,
                    "probe_good_count": self.attr.probe_good_count, "probe_rtt_ns": now_ns - e.probe_sent_ns,
                    "last_probe_padded": bool(self.attr.probe_pad_to_mtu), "bad_for_ns": now_ns - e.last_change_ns,
                    "probes_sent": e.probes_bad, "probes_lost": e.probes_bad_lost})
            self._lifted_small.pop(ev_i, None)  # its streak ended with a padded probe (probe_pad_to_mtu)
        else:
            e.probe_next_ns = now_ns  # answer came back: next probe right away


class MrcResponder(Responder):
    """The MRC responder: places out of order, echoes ECN marks and trims, answers with SACKs."""

    def __init__(self, qp: QueuePair):
        super().__init__(qp)
        self.trim_again: list[list[int]] = []  # [PSN, repeats left]: trims reported again in later SACKs
        # [PSN, repeats left, arrival ns, EV index, entropy]: RNR NAKs sent again after later SACKs
        self.rnr_again: list[list[int]] = []
        self._repeating = False
        # (time, "trim" | "dup", PSN, EV index) of trimmed and duplicate arrivals, at most RX_LOG_MAX:
        # set beside the requester's verdicts it tells a lost packet from a late one
        self.rx_log: list[tuple[int, str, int, int]] = []

    def _on_duplicate(self, seq: int, evi: int, now_ns: int) -> None:
        if len(self.rx_log) < RX_LOG_MAX:
            self.rx_log.append((now_ns, "dup", seq & F.PSN_MASK, evi))

    def _on_trimmed(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        if len(self.rx_log) < RX_LOG_MAX:
            self.rx_log.append((now_ns, "trim", seq & F.PSN_MASK, evi))
        self.ack_trim.append(seq)
        if len(self.trim_again) < 4 * F.SACK_MAX_LIST:
            self.trim_again.append([seq, TRIM_REPEATS])
        self.ack_trigger = (seq, now_ns, evi, fr.entropy)
        self._send_ack(now_ns, trim=True)

    def _on_not_ready(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        # InfiniBand's RNR NAK (AETH syndrome 001 + the min_rnr_timer code), in a SACK whose trigger is the
        # refused PSN: the requester tries it again after the timer, without taking it for congestion
        # or a loss.  Until 2026-12-06 it was reported as a trim, and the requester resent it once an RTT
        # for as long as the application did not poll (nearly 10,000 resends in 20 ms at a 4 us RTT, half
        # of them ahead of the data queues), cut its congestion window for it and ignored rnr_retry
        # (_send_ack counts it in naks_sent, as its repeats).  It goes again after the next SACKs until
        # the packet is placed, as a trim does (_trims_again): an RNR NAK is an ACK, which a full queue
        # may drop, and the requester's RACK then took the refused packet for lost on a path that
        # delivered the ones after it, and retired a healthy EV
        self.rnr_again = [e for e in self.rnr_again if e[0] != seq]
        self.ack_trigger = (seq, now_ns, evi, fr.entropy)
        self._send_ack(now_ns, syndrome=F.AETH_RNR_NAK | self.attr.min_rnr_timer)
        if len(self.rnr_again) < 4 * F.SACK_MAX_LIST:
            self.rnr_again.append([seq, TRIM_REPEATS, now_ns, evi, fr.entropy])

    def _send_ack(self, now_ns: int, trim: bool = False, force_ack: bool = False,
                  syndrome: int = F.AETH_ACK) -> None:
        super()._send_ack(now_ns, trim, force_ack, syndrome)
        if self.rnr_again and not self._repeating:
            self._rnr_repeats(now_ns)

    def _rnr_repeats(self, now_ns: int) -> None:
        """After a SACK, an RNR NAK again for each refused PSN not placed since, each at most
        TRIM_REPEATS times (``_on_not_ready``)."""
        self._repeating = True
        saved = self.ack_trigger
        keep = []
        try:
            for ent in self.rnr_again:
                seq, d = ent[0], ent[0] - self.rcv_nxt
                if d < 0 or (d > 0 and (self.rx_bits >> d) & 1):
                    continue  # placed
                self.ack_trigger = (seq, ent[2], ent[3], ent[4])
                super()._send_ack(now_ns, syndrome=F.AETH_RNR_NAK | self.attr.min_rnr_timer)
                ent[1] -= 1
                if ent[1] > 0:
                    keep.append(ent)
        finally:
            self.rnr_again = keep
            self.ack_trigger = saved
            self._repeating = False

    def _on_ce(self, seq: int, evi: int, now_ns: int) -> None:
        self.ack_ecn.append(seq)

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

    def _ack_frame(self, encap: Encap, seq: int, arrived: int, entropy: int, now_ns: int, trim: bool,
                   force_ack: bool, syndrome: int = F.AETH_ACK) -> bytes:
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
        return encode_ack(encap, self.remote.qpn, seq, syndrome, self.msn, info, pkey=self.attr.pkey)
