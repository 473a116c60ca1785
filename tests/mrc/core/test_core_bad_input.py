"""Bad input at the responder: counted and dropped or NAKed, never a crash, never a corrupt write."""

from __future__ import annotations

import pytest

from mrc.core import QpState
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import Encap, encode_data


@pytest.fixture
def pair():
    return make_pair([PathSpec()], buf_len=64 * 1024)


def _pkt(p, *, psn=0, va=None, rkey=None, qpn=None, payload=b"abcd", src=None):
    e = p.qa.evset.entries[0].encap
    if src is not None:
        e = Encap(p.a.encap_mode, src, p.b.gid, p.qa.evset.entries[0].ev)
    return encode_data(e, F.OP_WRITE_ONLY, p.qb.qpn if qpn is None else qpn, psn,
                       p.mr.base_va if va is None else va, p.mr.rkey if rkey is None else rkey, len(payload),
                       payload)


def test_malformed_truncated_and_bad_icrc_are_counted(pair):
    p = pair
    good = _pkt(p)
    p.b.receive(b"\x00" * 10, 1, 0)
    p.b.receive(good[:60], 1, 0)
    bad = bytearray(good)
    bad[-5] ^= 1
    p.b.receive(bytes(bad), 1, 0)
    c = p.b.counters
    assert (c.rx_malformed, c.rx_bad_icrc) == (2, 1)
    assert not any(p.mr.buf) and p.qb.state is QpState.RTS


def test_unknown_qp_and_wrong_peer_are_dropped(pair):
    p = pair
    p.b.receive(_pkt(p, qpn=0x999), 1, 0)
    p.b.receive(_pkt(p, src=bytes(15) + b"\x09"), 1, 0)
    assert p.b.counters.rx_unknown_qp == 2 and not any(p.mr.buf)


def test_out_of_window_psn_is_dropped(pair):
    p = pair
    p.b.receive(_pkt(p, psn=p.qb.window + 5), 1, 0)
    assert p.qb.counters.out_of_window == 1 and not any(p.mr.buf)
    assert p.b.datagrams_to_send(0) == []


@pytest.mark.parametrize("what", ["rkey", "below", "above"])
def test_bad_rkey_or_bounds_is_naked_and_errors_the_qp(pair, what):
    p = pair
    kw = {"rkey": 0xBAD} if what == "rkey" else {"va": p.mr.base_va - 1} if what == "below" else \
        {"va": p.mr.base_va + len(p.mr.buf) - 2}
    p.b.receive(_pkt(p, **kw), 1, 0)
    assert p.qb.counters.bad_access == 1 and p.qb.state is QpState.ERR
    assert not any(p.mr.buf)  # nothing written, not even the part that would have fitted
    out = p.b.datagrams_to_send(0)
    assert len(out) == 1
    p.a.receive(out[0][1], out[0][0], 0)  # the NAK reaches the requester
    assert p.qa.state is QpState.ERR


def test_remote_access_nak_fails_the_posted_write():
    p = make_pair([PathSpec()], buf_len=4096)
    p.a.post_write(p.qa, 1, b"x" * 10_000, p.mr.base_va, p.mr.rkey)  # longer than the region
    p.net.run(stop=lambda: (p.pump(), bool(p.done))[1])
    assert p.done[0].status.value == "REM_ACCESS_ERR"
    assert p.qb.state is QpState.ERR and p.qa.state is QpState.ERR
    assert bytes(p.mr.buf) == b"x" * 4096  # in-bounds packets landed, the rest never did


def test_duplicate_is_not_written_twice(pair):
    p = pair
    pk = _pkt(p, payload=b"ZZZZ")
    p.b.receive(pk, 1, 0)
    p.mr.buf[0:4] = b"...."  # if the duplicate were placed again, this would be overwritten
    p.b.receive(pk, 1, 10)
    assert p.qb.counters.duplicates_received == 1 and bytes(p.mr.buf[:4]) == b"...."


def test_rc_notification_point_answers_the_marks_of_packets_it_does_not_place():
    """RoCE's notification point sends a CNP for a CE-marked packet of the QP whether or not the
    transport places it: past a gap (refused by go-back-N) or a repeat.  Ignoring those marks starved
    DCQCN of CNPs in exactly the go-back-N storms that fill the queues."""
    from mrc.wire.codec import mark_ce

    p = make_pair([PathSpec()], mode="rc", buf_len=64 * 1024)
    gap = p.qb.attr.cnp_interval_ns
    ce = mark_ce(_pkt(p, psn=2))
    assert ce != _pkt(p, psn=2), "data packets are ECN-capable"
    p.b.receive(ce, 1, 0)  # past a gap: refused, NAKed
    assert p.qb.counters.cnps_sent == 1 and p.qb.rcv_nxt == 0
    p.b.receive(mark_ce(_pkt(p, psn=3)), 1, gap // 2)  # within the CNP interval: no second one
    assert p.qb.counters.cnps_sent == 1
    p.b.receive(_pkt(p, psn=0), 1, gap)  # placed, unmarked
    p.b.receive(mark_ce(_pkt(p, psn=0)), 1, 2 * gap)  # a repeat, marked
    assert p.qb.counters.cnps_sent == 2 and p.qb.counters.duplicates_received == 1
