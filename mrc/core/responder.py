"""The responder state machine common to MRC and RC: data packets in, placed bytes, ACKs and
immediate completions out.

Every packet is checked (PSN window, rkey, bounds, MTU) and placed at its RETH address, in any order;
duplicates are suppressed with a bitmap of the PSNs past ``rcv_nxt``; messages complete in PSN order
(an immediate raises a completion only when every earlier PSN has arrived); ACKs are coalesced
(``ack_every`` packets or ``ack_delay_ns``).  What the mode does with a trimmed, out-of-order or
CE-marked packet and what its ACK carries is its policy: :class:`mrc.core.mrc_policy.MrcResponder`
(SACK bitmap, ECN and trim echoes) or :class:`mrc.core.rc_policy.RcResponder` (in order only, NAK on a
gap, CNPs, plain AETH ACKs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mrc.core.psn import unwrap
from mrc.core.side import QpSide
from mrc.core.types import Completion, QpState, WcOpcode, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import Encap, Frame, encode_ack

if TYPE_CHECKING:
    from mrc.core.qp import QueuePair


@dataclass(slots=True)
class _RxLast:
    imm: int | None
    dma_len: int


class Responder(QpSide):
    """Receive side of one QP; subclasses are the mode's ack policy (see the module docstring)."""

    def __init__(self, qp: QueuePair):
        super().__init__(qp)
        self.cnp_sent_ns = -(1 << 62)  # last CNP we sent
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
        self.wimm_unpolled = 0

    @property
    def state(self) -> QpState:
        """The QP's state, kept by the QP."""
        return self.qp.state

    def _to_error(self, now_ns: int, status: WcStatus) -> None:
        self.qp.to_error(now_ns, status)

    def start(self, rq_psn: int) -> None:
        """RTR: the first PSN we expect."""
        self.rcv_nxt = rq_psn & F.PSN_MASK

    def stop(self) -> None:
        """The QP went to ERR: no ACK is due any more."""
        self.ack_at = None

    def imm_polled(self) -> None:
        """The application polled one immediate completion: one more may be accepted."""
        if self.wimm_unpolled > 0:
            self.wimm_unpolled -= 1

    def timer(self) -> int | None:
        """When the coalesced ACK is due, or None."""
        return self.ack_at

    def on_timer(self, now_ns: int) -> None:
        """Send the coalesced ACK if it is due."""
        if self.ack_at is not None and now_ns >= self.ack_at:
            self._send_ack(now_ns)

    # ------------------------------------------------------------------ data
    def on_data(self, fr: Frame, now_ns: int) -> None:
        """Place one RDMA WRITE packet, suppress duplicates, complete messages, schedule the (S)ACK."""
        if self.state is not QpState.RTS and self.state is not QpState.RTR:
            return
        c = self.counters
        seq = unwrap(fr.psn, self.rcv_nxt)
        d = seq - self.rcv_nxt
        evi = self.qp.ev_index_of(fr)
        if d < 0 or (d > 0 and (self.rx_bits >> d) & 1):
            c.duplicates_received += 1
            if fr.ce:
                self._on_ce_unplaced(seq, evi, now_ns)
            self._on_duplicate(seq, evi, now_ns)
            self.ack_trigger = (seq, now_ns, evi, fr.entropy)
            self._send_ack(now_ns, force_ack=True)
            return
        if d >= self.window:
            c.out_of_window += 1
            return
        if fr.trimmed:
            c.trims_received += 1
            self._on_trimmed(fr, seq, evi, now_ns)
            return
        if d > 0 and self._refuse_out_of_order(evi, now_ns):
            if fr.ce:
                self._on_ce_unplaced(seq, evi, now_ns)
            return
        # placement with bounds and rkey checks; a zero-length WRITE names no memory and is not checked
        # (IB C9-88, as Linux rxe's check_rkey does): a zero-length WRITE_WITH_IMM with rkey 0 is a
        # common notification and must not put the QP in ERR
        mr = self.host.memory_region(fr.rkey)
        plen = len(fr.payload)
        if (fr.dma_len or plen) and (mr is None or not mr.remote_write or not mr.contains(fr.va, plen)
                                     or plen > self.attr.mtu or fr.dma_len < plen):
            c.bad_access += 1
            # the NAK's PSN acknowledges every PSN before it (IB: a NAK implies the ACK of the packets
            # before it), so it carries the first PSN not received, which is this one in order (RC)
            # but may be lower when MRC placed this packet past a hole: naming this packet completed
            # the messages in the hole as SUCCESS although their data never landed
            self._send_nak(F.AETH_NAK_REMOTE_ACCESS, self.rcv_nxt, evi, now_ns)
            self._to_error(now_ns, WcStatus.REM_ACCESS_ERR)
            return
        last = fr.opcode in F.LAST_OPCODES
        if last and fr.imm is not None and self.wimm_unpolled >= self.attr.max_wimm_dest \
                and self._wimm_before(seq) >= self.attr.max_wimm_dest:
            # receiver not ready (its application has not polled the immediate completions): the
            # payload is not placed and the policy tells the sender (an RNR NAK; MRC's rides in a
            # SACK); a silent drop made the packets behind it look like a path loss (MRC retired a
            # healthy EV) and, after its retries, put the sender's QP in ERR (RC)
            c.wimm_overflow += 1
            if fr.ce:  # a valid packet of the QP, not placed: its mark still counts (RC: a CNP)
                self._on_ce_unplaced(seq, evi, now_ns)
            self._on_not_ready(fr, seq, evi, now_ns)
            return
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
                            self.host.complete(Completion(self.qpn, 0, WcStatus.SUCCESS,
                                                          WcOpcode.RECV_RDMA_WITH_IMM, m.dma_len, m.imm,
                                                          now_ns))
        self.ack_trigger = (seq, now_ns, evi, fr.entropy)
        if fr.ce:
            self._on_ce(seq, evi, now_ns)
        self.ack_pending += 1
        if fr.ce or d > 0 or fr.ack_req or self.ack_pending >= self.attr.ack_every:
            self._send_ack(now_ns)
        elif self.ack_at is None:
            self.ack_at = now_ns + self.attr.ack_delay_ns

    def _wimm_before(self, seq: int) -> int:
        """Immediate completions not polled yet that come before PSN ``seq``: those delivered to the
        application and those placed out of order at a lower PSN.  A LAST_WITH_IMM placed at a higher
        PSN does not count: it cannot complete before this one, and counting it refused this one for
        ever (max_wimm_dest 1, the next message's LAST placed first: no completion, no credit)."""
        held = [k for k, m in self.rx_lasts.items() if m.imm is not None]
        return self.wimm_unpolled - len(held) + sum(1 for k in held if k < seq)

    def _on_trimmed(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        """Policy: a trimmed packet (header only) with PSN ``seq`` arrived."""

    def _on_not_ready(self, fr: Frame, seq: int, evi: int, now_ns: int) -> None:
        """Policy: the LAST_WITH_IMM ``seq`` was refused (``max_wimm_dest`` immediates not polled): tell
        the sender to try it again after ``min_rnr_timer`` (an RNR NAK; MRC's rides in a SACK)."""
        raise NotImplementedError

    def _on_duplicate(self, seq: int, evi: int, now_ns: int) -> None:
        """Policy: a packet with PSN ``seq`` arrived again (its first copy was placed)."""

    def _refuse_out_of_order(self, evi: int, now_ns: int) -> bool:
        """Policy: True to drop a packet past a gap (classic RC), False to place it (MRC)."""
        return False

    def _on_ce(self, seq: int, evi: int, now_ns: int) -> None:
        """Policy: the placed packet ``seq`` carried an ECN CE mark."""

    def _on_ce_unplaced(self, seq: int, evi: int, now_ns: int) -> None:
        """Policy: a valid packet ``seq`` that is not placed (a duplicate, or refused past a gap)
        carried an ECN CE mark."""

    # ------------------------------------------------------------------ ACKs
    def _reply_entry(self, evi: int):
        return self.evset.entries[self.evset.reply_index(evi)]

    def _send_nak(self, syndrome: int, seq: int, evi: int, now_ns: int) -> None:
        e = self._reply_entry(evi)
        pkt = encode_ack(e.encap, self.remote.qpn, seq, syndrome, self.msn, pkey=self.attr.pkey)
        self.counters.naks_sent += 1
        self.host.send_frame(e.port, pkt, now_ns)

    def _send_ack(self, now_ns: int, trim: bool = False, force_ack: bool = False,
                  syndrome: int = F.AETH_ACK) -> None:
        self.ack_at = None
        self.ack_pending = 0
        trig = self.ack_trigger
        if trig is None:
            return
        seq, arrived, evi, entropy = trig
        e = self._reply_entry(evi)
        pkt = self._ack_frame(e.encap, seq, arrived, entropy, now_ns, trim, force_ack, syndrome)
        # every frame counted once: an MRC RNR NAK (in a SACK), the first and each repeat, in naks_sent
        # only, as RC's
        if syndrome == F.AETH_ACK:
            self.counters.acks_sent += 1
        else:
            self.counters.naks_sent += 1
        self.host.send_frame(e.port, pkt, now_ns)
        if self.ack_ecn or self.ack_trim:  # more than one SACK's worth of marks
            self._send_ack(now_ns)

    def _ack_frame(self, encap: Encap, seq: int, arrived: int, entropy: int, now_ns: int, trim: bool,
                   force_ack: bool, syndrome: int = F.AETH_ACK) -> bytes:
        """Policy: the ACK frame for the packet ``seq`` that triggered it (``syndrome``: its AETH's)."""
        raise NotImplementedError
