"""RDMA WRITE semantics at the edges: a fatal NAK in MRC, zero-length WRITEs, post_write's limits."""

from __future__ import annotations

import random

import pytest

from mrc.core import QpAttr, QpState, WcStatus
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame


def _run(p, n: int) -> None:
    p.net.run(until_ns=100_000_000, stop=lambda: (p.pump(), len(p.done) >= n)[1])


@pytest.mark.parametrize("mode", ["mrc", "rc"])
def test_remote_access_nak_completes_no_undelivered_message(mode):
    # msg 1 is good but its 2nd packet is lost; msg 2 writes out of bounds.  MRC places msg 2's small
    # packet first (out of order) and NAKs it: that NAK must not acknowledge msg 1, whose data never
    # landed (it completed SUCCESS with 0 of its bytes placed)
    p = make_pair([PathSpec() for _ in range(4)], attr=QpAttr(mode=mode, mtu=1024), buf_len=64 << 10)
    send, seen = p.net._send, [0]

    def lossy(side, port, data):
        if side == 0 and decode_frame(data).opcode in F.DATA_OPCODES:
            seen[0] += 1
            if seen[0] == 2:
                return
        send(side, port, data)

    p.net._send = lossy
    d1 = random.Random(1).randbytes(3 * 1024)
    p.a.post_write(p.qa, 1, d1, p.mr.base_va, p.mr.rkey)
    p.a.post_write(p.qa, 2, b"x" * 100, p.mr.base_va + (1 << 30), p.mr.rkey)
    _run(p, 2)
    assert p.qb.state is QpState.ERR and p.qa.state is QpState.ERR
    st = {c.wr_id: c.status for c in p.done}
    assert sorted(st) == [1, 2] and st[2] is not WcStatus.SUCCESS
    if mode == "rc":  # in order: msg 1 was resent (go-back-N) and landed before msg 2 was NAKed
        assert st[1] is WcStatus.SUCCESS and p.mr.buf[: len(d1)] == d1
    else:  # msg 2 was NAKed first: msg 1 never landed, so it must not complete SUCCESS
        assert p.mr.buf[1024:2048] != d1[1024:2048]
        assert (st[1], st[2]) == (WcStatus.REM_ACCESS_ERR, WcStatus.WR_FLUSH_ERR)


def test_remote_access_nak_still_acknowledges_what_arrived():
    # without a hole, the messages before the bad one complete SUCCESS (the NAK acknowledges them)
    p = make_pair([PathSpec()], attr=QpAttr(mode="mrc", mtu=1024), buf_len=64 << 10)
    p.a.post_write(p.qa, 1, b"a" * 2048, p.mr.base_va, p.mr.rkey)
    p.a.post_write(p.qa, 2, b"b" * 2048, p.mr.base_va + (1 << 30), p.mr.rkey)
    _run(p, 2)
    assert [(c.wr_id, c.status) for c in p.done] == [(1, WcStatus.SUCCESS), (2, WcStatus.REM_ACCESS_ERR)]
    assert p.mr.buf[:2048] == b"a" * 2048


@pytest.mark.parametrize("mode", ["mrc", "rc"])
@pytest.mark.parametrize("imm", [None, 7])
def test_zero_length_write_needs_no_rkey_or_address(mode, imm):
    # IB C9-88 (Linux rxe check_rkey): a zero-length RDMA WRITE is not checked against any memory region
    p = make_pair([PathSpec() for _ in range(2)], attr=QpAttr(mode=mode), buf_len=4096)
    p.a.post_write(p.qa, 1, b"", 0, 0, imm)
    p.a.post_write(p.qa, 2, b"ok", p.mr.base_va, p.mr.rkey)
    _run(p, 2)
    assert [(c.wr_id, c.status) for c in p.done] == [(1, WcStatus.SUCCESS), (2, WcStatus.SUCCESS)]
    assert p.qb.state is QpState.RTS and p.qb.counters.bad_access == 0
    assert [(c.imm, c.byte_len) for c in p.rx] == ([] if imm is None else [(7, 0)])
    assert p.mr.buf[:2] == b"ok"


@pytest.mark.parametrize(("kw", "what"), [
    ({"imm": 1 << 32}, "imm"), ({"imm": -1}, "imm"),
    ({"va": -1}, "remote_va"), ({"va": 1 << 64}, "remote_va"), ({"va": (1 << 64) - 2}, "remote_va"),
])
def test_post_write_refuses_what_the_wire_cannot_carry(kw, what):
    # before: an immediate went out truncated to 32 bits, and a VA past 2^64 raised struct.error from
    # inside the endpoint's send path
    p = make_pair([PathSpec()], buf_len=4096)
    with pytest.raises(ValueError, match=what):
        p.a.post_write(p.qa, 1, b"abc", kw.get("va", p.mr.base_va), p.mr.rkey, kw.get("imm"))
    p.a.post_write(p.qa, 2, b"abc", (1 << 64) - 3, p.mr.rkey, 0xFFFFFFFF)  # the largest legal ones
    assert len(p.qa.requester.wqes) == 1
