"""The QP's P_Key (``QpAttr.pkey``): in the BTH of everything the QP sends, and checked on receipt.

InfiniBand checks a packet's BTH P_Key against the destination QP's and drops a packet of another
partition silently, counting it (PortInfo P_KeyViolations; Linux rxe: ``check_keys`` in
rxe_recv.c, ``pkey_match`` in rxe_verbs.h).  Until 2026-12-06 the attribute reached neither the wire
(every packet carried 0xFFFF) nor the receive path (a WRITE of any partition was placed).
"""

from __future__ import annotations

import struct

import pytest

from mrc.core import QpAttr, QpState
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import bth, decode_frame, encode_ack


@pytest.mark.parametrize(("a", "b", "match"), [
    (0xFFFF, 0xFFFF, True), (0x8123, 0x8123, True), (0x8123, 0x0123, True), (0x0123, 0x8123, True),
    (0x0123, 0x0123, False),  # two limited members of one partition
    (0x8123, 0x8124, False), (0xFFFF, 0x8001, False),
    (0x8000, 0x8000, False), (0x0000, 0x8000, False),  # partition 0 is the invalid key
])
def test_pkey_match(a, b, match):
    assert F.pkey_match(a, b) is match


@pytest.mark.parametrize("pkey", [-1, 0, 0x8000, 0x10000])
def test_attr_refuses_an_invalid_pkey(pkey):
    with pytest.raises(ValueError, match="pkey"):
        QpAttr(pkey=pkey).validate()


def _spy(p, seen: list) -> None:
    send = p.net._send

    def spy(side, port, data):
        seen.append((side, decode_frame(data)))
        send(side, port, data)

    p.net._send = spy


@pytest.mark.parametrize("mode", ["mrc", "rc"])
def test_the_qp_pkey_is_on_the_wire(mode):
    p = make_pair([PathSpec(ecn_bytes=0)], attr=QpAttr(mode=mode, pkey=0x8123), buf_len=1 << 16)
    seen: list = []
    _spy(p, seen)
    p.a.post_write(p.qa, 1, b"x" * 20_000, p.mr.base_va, p.mr.rkey, imm=5)
    p.net.run(stop=lambda: (p.pump(), bool(p.done))[1], until_ns=10_000_000)
    assert p.done and p.rx and p.mr.buf[:20_000] == b"x" * 20_000
    qp_frames = [fr for _, fr in seen if fr.opcode in F.DATA_OPCODES or fr.opcode in (F.OP_ACK, F.OP_CNP)]
    assert {fr.opcode for fr in qp_frames} >= {F.OP_ACK} | ({F.OP_CNP} if mode == "rc" else set())
    assert {fr.pkey for fr in qp_frames} == {0x8123}
    assert p.a.counters.pkey_violations == p.b.counters.pkey_violations == 0


def test_a_limited_member_talks_to_a_full_member():
    p = make_pair([PathSpec()], attr=QpAttr(pkey=0x8123), buf_len=4096)
    p.qb.attr.pkey = 0x0123  # the responder is a limited member of the same partition
    p.a.post_write(p.qa, 1, b"abcd", p.mr.base_va, p.mr.rkey)
    p.net.run(stop=lambda: (p.pump(), bool(p.done))[1], until_ns=10_000_000)
    assert p.done and p.mr.buf[:4] == b"abcd" and p.b.counters.pkey_violations == 0


def _foreign_write(p, pkey: int, payload: bytes) -> bytes:
    enc = p.qa.evset.entries[0].encap
    return enc.wrap(bth(F.OP_WRITE_ONLY, p.qb.qpn, 0, pkey=pkey)
                    + struct.pack(">QII", p.mr.base_va, p.mr.rkey, len(payload)) + payload, F.ECN_ECT0)


def test_a_write_of_another_partition_is_dropped_and_counted():
    p = make_pair([PathSpec()], buf_len=4096)
    p.b.receive(_foreign_write(p, 0x8001, b"EVIL"), 1, 0)
    assert p.b.counters.pkey_violations == 1
    assert p.qb.counters.bytes_placed == 0 and p.mr.buf[:4] == bytes(4)
    assert p.qb.counters.acks_sent == 0 and p.qb.rcv_nxt == 0  # silently: no ACK, no NAK, PSN not consumed
    p.b.receive(_foreign_write(p, 0xFFFF, b"good"), 1, 1)  # the QP's own partition is taken
    assert p.mr.buf[:4] == b"good" and p.b.counters.pkey_violations == 1


def test_an_ack_of_another_partition_acknowledges_nothing():
    p = make_pair([PathSpec(down=[(0, None)])], buf_len=4096)  # nothing gets through: we forge the ACK
    p.a.post_write(p.qa, 1, b"abcd", p.mr.base_va, p.mr.rkey)
    p.net.run(until_ns=1_000)
    assert p.qa.snd_nxt == 1
    ack = encode_ack(p.qb.evset.entries[0].encap, p.qa.qpn, 0, F.AETH_ACK, 1, pkey=0x8002)
    p.a.receive(ack, 1, 2_000)
    assert p.a.counters.pkey_violations == 1 and p.qa.snd_una == 0 and not p.a.poll_completions()


def test_qps_of_two_limited_members_never_deliver():
    p = make_pair([PathSpec()], attr=QpAttr(pkey=0x0123, ack_timeout=4, retry_cnt=1, exp_retry_cnt=0),
                  buf_len=4096)
    p.a.post_write(p.qa, 1, b"abcd", p.mr.base_va, p.mr.rkey)
    p.net.run(stop=lambda: (p.pump(), bool(p.done))[1], until_ns=100_000_000)
    assert p.b.counters.pkey_violations >= 1 and p.qb.counters.bytes_placed == 0
    assert p.qa.state is QpState.ERR


def test_packets_for_a_qp_in_err_are_counted_as_wrong_state():
    # EndpointCounters.rx_wrong_state existed and was printed by the driver's stats but nothing counted it:
    # data and ACKs for a QP in ERR were dropped without a trace
    from mrc.core import WcStatus

    p = make_pair([PathSpec()], buf_len=4096)
    p.qb.to_error(0, WcStatus.WR_FLUSH_ERR)
    p.b.receive(_foreign_write(p, 0xFFFF, b"late"), 1, 1)
    assert p.b.counters.rx_wrong_state == 1 and p.mr.buf[:4] == bytes(4)
    p.qa.to_error(0, WcStatus.WR_FLUSH_ERR)
    p.a.receive(encode_ack(p.qb.evset.entries[0].encap, p.qa.qpn, 0, F.AETH_ACK, 1), 1, 2)
    assert p.a.counters.rx_wrong_state == 1
