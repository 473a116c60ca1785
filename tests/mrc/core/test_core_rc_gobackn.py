"""The RC baseline's go-back-N: a sequence error NAK for a gap the requester is already resending
does not start a second go-back-N (Linux rxe, rxe_comp.c: no second retry sequence once one has
started, unless the timer fires)."""

from __future__ import annotations

import pytest

from mrc.core import QpAttr, WcStatus
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame

MTU = 1024
N = 64  # packets in the write


def _rc_pair(delay_ns: int = 1_000_000):
    # RTO 1.024 us x 2^12 = 4.2 ms, above the 2 ms RTT: the timer fires only on the lost packet
    attr = QpAttr(mode="rc", cc="none", mtu=MTU, ack_timeout=12)
    return make_pair([PathSpec(delay_ns=delay_ns)], mode="rc", attr=attr, buf_len=N * MTU)


def _hold_first_nak_and_drop(p, lost: set[int]):
    """Drop the first copy of each PSN in ``lost``; keep the responder's sequence error NAKs back."""
    send, seen, held = p.net._send, {}, []

    def hook(side, port, data):
        fr = decode_frame(data)
        if side == 0 and fr.opcode in F.DATA_OPCODES:
            seen[fr.psn] = seen.get(fr.psn, 0) + 1
            if fr.psn in lost and seen[fr.psn] == 1:
                return
        if side == 1 and fr.opcode == F.OP_ACK and fr.syndrome == F.AETH_NAK_PSN_SEQ_ERR:
            held.append((port, data))
            return
        send(side, port, data)

    p.net._send = hook
    return held


def test_a_nak_for_the_psn_the_rto_already_went_back_to_does_not_go_back_again():
    # PSN 5 is lost: the responder NAKs it once (at PSN 6) and drops 6..63.  That NAK is late (held
    # here): the RTO goes back to 5 first and resends 5..63.  When the NAK then arrives nothing has been
    # acknowledged since, and the NAK only says what the RTO already acted on: no third copy of 5..63
    p = _rc_pair()
    held = _hold_first_nak_and_drop(p, {5})
    data = bytes(range(256)) * (N * MTU // 256)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey)
    req = p.qa.requester
    p.net.run(until_ns=1_000_000_000, stop=lambda: p.qa.counters.timeouts >= 1 and req.snd_ptr == req.snd_nxt)
    assert len(held) == 1 and req.snd_una == 5
    assert p.qa.counters.data_packets_sent == N + (N - 5)  # the RTO resent 5..63, none acknowledged yet
    port, nak = held.pop()
    p.a.receive(nak, port, p.net.now)  # the late NAK, before the resent copies are acknowledged
    p.net.run(until_ns=1_000_000_000, stop=lambda: (p.pump(), bool(p.done))[1])
    assert [c.status for c in p.done] == [WcStatus.SUCCESS] and bytes(p.mr.buf) == data
    assert p.qa.counters.rc_naks_ignored == 1
    assert p.qa.counters.data_packets_sent == N + (N - 5)  # was N + 2 * (N - 5): 5..63 sent a third time


def test_a_nak_for_a_new_gap_goes_back_to_it():
    # after progress a NAK names a new gap: go-back-N from it, as before
    p = _rc_pair(delay_ns=5_000)
    send, seen = p.net._send, {}

    def hook(side, port, data):
        fr = decode_frame(data)
        if side == 0 and fr.opcode in F.DATA_OPCODES:
            seen[fr.psn] = seen.get(fr.psn, 0) + 1
            if (fr.psn, seen[fr.psn]) in ((5, 1), (30, 2)):  # 5, then 30's go-back-N copy
                return
        send(side, port, data)

    p.net._send = hook
    data = bytes(N * MTU)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey)
    p.net.run(until_ns=1_000_000_000, stop=lambda: (p.pump(), bool(p.done))[1])
    assert [c.status for c in p.done] == [WcStatus.SUCCESS]
    c = p.qa.counters
    assert c.timeouts == 0 and c.rc_naks_ignored == 0 and p.qb.counters.naks_sent == 2 and c.retx_nak > 0


@pytest.mark.parametrize("sq_psn", [0, F.PSN_MASK - 2])  # the second: PSN 5 of the write is 0x000002
def test_after_a_tail_loss_a_nak_for_the_rtos_lost_copy_waits_for_the_next_rto(sq_psn):
    # Every first copy from PSN 5 on is lost (a tail loss: nothing past the gap arrives, no NAK), so the
    # RTO goes back to 5; its copy of 5 is lost too, and the resent 6 draws the responder's one NAK of 5.
    # That NAK is news (it reports the RTO's copy lost), but the go-back-N from 5 has started and nothing
    # was acknowledged since: it is ignored, as rxe ignores any NAK once a retry has started unless the
    # timer fires (rxe_comp.c COMPST_ERROR_RETRY), and the next RTO resends 5.  Across the PSN wrap too.
    n = 16
    attr = QpAttr(mode="rc", cc="none", mtu=MTU, ack_timeout=12)
    p = make_pair([PathSpec(delay_ns=1_000_000)], mode="rc", attr=attr, buf_len=n * MTU, sq_psn=sq_psn)
    send, seen, naks = p.net._send, {}, []
    tail = {(sq_psn + k) & F.PSN_MASK for k in range(5, n)}
    p5 = (sq_psn + 5) & F.PSN_MASK

    def hook(side, port, data):
        fr = decode_frame(data)
        if side == 0 and fr.opcode in F.DATA_OPCODES:
            seen[fr.psn] = seen.get(fr.psn, 0) + 1
            if (fr.psn in tail and seen[fr.psn] == 1) or (fr.psn == p5 and seen[fr.psn] == 2):
                return
        if side == 1 and fr.opcode == F.OP_ACK and fr.syndrome == F.AETH_NAK_PSN_SEQ_ERR:
            naks.append(fr.psn)
        send(side, port, data)

    p.net._send = hook
    data = bytes(range(256)) * (n * MTU // 256)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey)
    p.net.run(until_ns=1_000_000_000, stop=lambda: (p.pump(), bool(p.done))[1])
    assert [c.status for c in p.done] == [WcStatus.SUCCESS] and bytes(p.mr.buf) == data
    c = p.qa.counters
    assert naks == [p5] and c.rc_naks_ignored == 1 and c.timeouts == 2
    assert seen[p5] == 3 and c.data_packets_sent == n + 2 * (n - 5)  # 5..15 resent by each RTO
