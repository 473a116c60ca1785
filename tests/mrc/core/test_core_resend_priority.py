"""Data resent after a loss verdict carries DSCP_RESEND, which mrc_switch.p4 queues ahead of the data
queue (issue 11: a resend that waited behind the full data queues took 1.4-2 srtt to be acknowledged,
most of the recovery time after a failure).  A trimmed packet's resend keeps the EV's DSCP: its trim
said that path's data queue is full, and congestion must stay where the switch can trim and mark it.

Frames are read off the simulated wire (every frame the requester sends, decoded)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from mrc.core import QpAttr
from mrc.sim import PathSpec, make_pair, transfer
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame, trim_packet


def _sent_data(paths: list[PathSpec], attr: QpAttr, size: int = 2 << 20,
               causes: dict[int, list[str]] | None = None, counters: dict | None = None) -> dict[int, list[int]]:
    """Run a ``size``-byte write; PSN -> the DSCP of each copy the requester sent, in order (and in
    ``causes``, PSN -> the cause of each resend: "rack", "timeout", "trim"; in ``counters``, the
    requester's counters at the end)."""
    p = make_pair(paths, attr=attr, buf_len=size)
    out: dict[int, list[int]] = {}
    send = p.net._send
    req = p.qa.requester
    count = req._count_retx

    def spy(side: int, port: int, data: bytes) -> None:
        if side == 0:
            fr = decode_frame(data)
            if fr.opcode in F.DATA_OPCODES:
                out.setdefault(fr.psn, []).append(fr.dscp)
        send(side, port, data)

    def spy_count(cause, pkt, now_ns):
        if causes is not None:
            causes.setdefault(pkt.seq & F.PSN_MASK, []).append(cause)
        count(cause, pkt, now_ns)

    p.net._send = spy
    req._count_retx = spy_count
    data = random.Random(7).randbytes(size)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[:size]) == data
    if counters is not None:
        counters.update(dataclasses.asdict(req.counters))
    return out


def _dead_path() -> list[PathSpec]:
    paths = [PathSpec(delay_ns=20_000, rate_bps=10e9) for _ in range(4)]
    paths[2].down = [(100_000, None)]
    return paths


def test_a_packet_found_lost_is_resent_with_dscp_resend():
    sent = _sent_data(_dead_path(), QpAttr(ack_timeout=12))
    resent = {psn: d for psn, d in sent.items() if len(d) > 1}
    assert resent, "the dead path lost nothing: the test needs losses"
    assert all(d[0] == F.DSCP_DATA for d in sent.values()), "a first transmission is data"
    assert all(x == F.DSCP_RESEND for d in resent.values() for x in d[1:])


def test_resend_dscp_none_keeps_the_evs_dscp():
    sent = _sent_data(_dead_path(), QpAttr(ack_timeout=12, resend_dscp=None))
    assert any(len(d) > 1 for d in sent.values())
    assert {x for d in sent.values() for x in d} == {F.DSCP_DATA}


def test_a_trimmed_packets_resend_keeps_the_data_dscp():
    """One slow path that trims above 2 full frames: trims are resent as data, and so are the packets RACK
    finds lost within an srtt of a trim the QP acted on (``retx_lost_as_data``: its packets are being
    trimmed, the "lost" one is most likely queued behind them); the other packets found lost with
    DSCP_RESEND."""
    paths = [PathSpec(delay_ns=20_000, rate_bps=10e9) for _ in range(4)]
    paths[1] = PathSpec(delay_ns=20_000, rate_bps=1e9, trim_bytes=2 * 4200)
    causes: dict[int, list[str]] = {}
    ctr: dict = {}
    sent = _sent_data(paths, QpAttr(ack_timeout=12, cc="none"), causes=causes, counters=ctr)
    by_cause: dict[str, list[int]] = {}
    for psn, cs in causes.items():
        for cause, dscp in zip(cs, sent[psn][1:], strict=True):
            by_cause.setdefault(cause, []).append(dscp)
    assert set(by_cause.get("trim", ())) == {F.DSCP_DATA}, by_cause
    assert by_cause.keys() <= {"trim", "rack", "timeout"}
    lost = [x for c in ("rack", "timeout") for x in by_cause.get(c, ())]
    assert set(lost) <= {F.DSCP_DATA, F.DSCP_RESEND}
    assert lost.count(F.DSCP_DATA) == ctr["retx_lost_as_data"] > 0, (lost, ctr["retx_lost_as_data"])


def test_resend_dscp_is_validated():
    with pytest.raises(ValueError, match="resend_dscp"):
        QpAttr(resend_dscp=64).validate()
    # DSCP 11 on a WRITE is the trimmed mark: every resend would arrive as a trimmed packet (never placed)
    with pytest.raises(ValueError, match="trimmed"):
        QpAttr(resend_dscp=F.DSCP_TRIMMED).validate()
    QpAttr(resend_dscp=None).validate()
    with pytest.raises(ValueError, match="trim_ahead_after"):
        QpAttr(trim_ahead_after=-1).validate()



@pytest.mark.parametrize("after", [2, 0])
def test_the_packet_holding_the_cumulative_ack_goes_ahead_from_its_second_trim(after):
    """Every path trims (a bottleneck all of them share, as incast at the receiver's downlink): a trimmed
    packet goes back as data, except the one holding the cumulative ACK, with other packets of the QP
    behind it, once it was trimmed before -- resent as data it would be trimmed there again and again
    while the packets behind it arrive
    (docs/protocol.md, "Resent data").  ``trim_ahead_after=0``: every trim's resend is data.  Each trim
    resend is checked on the wire."""
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9, trim_bytes=6000) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(ack_timeout=12, cc="nscc", trim_ahead_after=after), buf_len=2 << 20)
    req = p.qa.requester
    decided: list[tuple[bool, int, int]] = []  # per trim resend: (held the ACK, trims so far, DSCP on the wire)
    pending: dict[int, tuple[bool, int]] = {}  # PSN -> its trim resend decided, not on the wire yet
    send, count = p.net._send, req._count_retx

    def spy_count(cause, pkt, now_ns):
        count(cause, pkt, now_ns)  # the resend is queued right after (_resend_one)
        psn = pkt.seq & F.PSN_MASK
        assert psn not in pending
        if cause == "trim":
            # held: it holds the cumulative ACK, and other packets of the QP behind it (not acknowledged)
            held = pkt.seq == req.snd_una and len(req.pkts) > 1
            pending[psn] = (held, sum(1 for h in pkt.hist if h[1] == "trim"))

    def spy_send(side: int, port: int, data: bytes) -> None:
        if side == 0 and pending:
            fr = decode_frame(data)
            if fr.opcode in F.DATA_OPCODES and fr.psn in pending:
                decided.append((*pending.pop(fr.psn), fr.dscp))
        send(side, port, data)

    req._count_retx, p.net._send = spy_count, spy_send
    data = random.Random(3).randbytes(2 << 20)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[:2 << 20]) == data
    assert not pending
    assert any(hol and n >= 2 for hol, n, _ in decided), \
        f"no packet holding the ACK was trimmed twice: the test needs one ({len(decided)} trim resends)"
    ahead = [d for d in decided if after and d[0] and d[1] >= after]
    others = [d for d in decided if not (after and d[0] and d[1] >= after)]
    assert all(dscp == F.DSCP_RESEND for _, _, dscp in ahead)
    assert all(dscp == F.DSCP_DATA for _, _, dscp in others)
    assert any(not hol for hol, _, _ in others) and any(hol and n == 1 for hol, n, _ in others)
    assert p.qa.counters.retx_trim_ahead == len(ahead)


def _trim_first_copies(psn_trims: dict[int, int], npkts: int, mtu_payload: int = 4096, cc: object = "nscc",
                       pair: list | None = None) -> list[tuple[int, int]]:
    """A write of ``npkts`` packets on 4 clean paths where the network trims the first ``psn_trims[psn]``
    copies of the given PSNs (as a switch at its trim threshold would: ``codec.trim_packet``); returns,
    per copy of those PSNs the requester sent, (PSN, DSCP) in order.  ``pair``, if given, gets the pair and
    then, per such copy, (packets sent and not yet acknowledged, PSNs posted and not yet sent)."""
    p = make_pair([PathSpec(delay_ns=20_000, rate_bps=10e9) for _ in range(4)],
                  attr=QpAttr(ack_timeout=12, cc=cc, trim_ahead_after=2), buf_len=1 << 20)
    if pair is not None:
        pair.append(p)
    req = p.qa.requester
    send = p.net._send
    left = dict(psn_trims)
    copies: list[tuple[int, int]] = []

    def spy(side: int, port: int, data: bytes) -> None:
        if side == 0:
            fr = decode_frame(data)
            if fr.opcode in F.DATA_OPCODES and fr.psn in left:
                copies.append((fr.psn, fr.dscp))
                if pair is not None:
                    pair.append((len(req.pkts), req.next_assign - req.snd_nxt))
                if left[fr.psn]:
                    left[fr.psn] -= 1
                    data = trim_packet(data)
        send(side, port, data)

    p.net._send = spy
    size = npkts * mtu_payload
    data = random.Random(5).randbytes(size)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[:size]) == data
    return copies


def test_the_rule_needs_other_packets_behind_the_one_holding_the_ack():
    """The trim-ahead rule is for a packet that holds the QP's other packets back (sent after it, not yet
    acknowledged): as the QP's only packet -- as with a window at its one-packet floor in a 127 -> 1
    incast, where every packet is the one holding the cumulative ACK -- its resends stay data however
    often it is trimmed.  Before, such resends went ahead from the second trim: 5,472 a run in the
    simulated 127 -> 1 incast, srtt +11%, message p99 +14% and 57% more trims than without the rule
    (docs/simulation.md, "127 -> 1")."""
    copies = _trim_first_copies({0: 3}, npkts=1)
    assert [d for _, d in copies] == [F.DSCP_DATA] * 4, copies
    # the same trims with later packets of the QP behind it: from the second trim on it goes ahead
    copies = _trim_first_copies({0: 3}, npkts=8)
    assert [d for _, d in copies] == [F.DSCP_DATA, F.DSCP_DATA, F.DSCP_RESEND, F.DSCP_RESEND], copies


def test_at_the_window_floor_the_ack_holder_goes_as_data_although_the_message_waits_behind_it():
    """What the gate above really covers: with the window at its floor of one packet (as in a 127 -> 1
    incast) the packet holding the cumulative ACK is the QP's only packet in flight, yet the rest of its
    message waits unsent behind it (the window has no room) -- it is not a packet that holds nothing
    back.  Its resends stay data however often it is trimmed: nothing but the network bounds its trims.
    A trim is progress, so the QP takes no timeout, and no EV pays for trims (review of 2026-12-06;
    docs/protocol.md, "Resent data")."""
    from mrc.core.nscc import NsccConfig
    from mrc.core.types import EvState

    floor = dataclasses.replace(NsccConfig.defaults(60_000, 40e9, 4096), max_cwnd=4096)
    pair: list = []
    copies = _trim_first_copies({0: 20}, npkts=8, cc=floor, pair=pair)
    assert [d for _, d in copies] == [F.DSCP_DATA] * 21, copies
    assert all(sent == 1 and unsent == 7 for sent, unsent in pair[2:]), pair[1:]  # every resend: 7 wait behind
    c = pair[0].qa.counters
    assert c.retx_trim == 20 and c.retx_trim_ahead == 0 and c.timeouts == 0
    assert all(s is EvState.GOOD for s in pair[0].qa.evset.prof.states)
