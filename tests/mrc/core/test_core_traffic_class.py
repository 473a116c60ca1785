"""The control traffic class: the endpoint marks ACK/SACK/NACKs, CNPs, probes and PORT_STATUS with
DSCP_CONTROL and data with DSCP_DATA (mrc_switch.p4 queues the first above the second)."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from mrc.core import QpAttr
from mrc.sim import PathSpec, make_pair, transfer
from mrc.wire import formats as F
from mrc.wire.codec import Encap, decode_frame, encode_ack

GID_A, GID_B = bytes(15) + b"\1", bytes(15) + b"\2"


def _record(p) -> list[bytes]:
    """Every frame either endpoint puts on the simulated wire, as sent (before any loss or trim)."""
    log: list[bytes] = []
    send = p.net._send

    def spy(side: int, port: int, data: bytes) -> None:
        log.append(bytes(data))
        send(side, port, data)

    p.net._send = spy
    return log


def _classes(frames: list[bytes]) -> dict[int, set[tuple[int, int]]]:
    """opcode -> {(outer DSCP, inner DSCP)} (the same header twice outside SRv6)."""
    out: dict[int, set[tuple[int, int]]] = {}
    for raw in frames:
        fr = decode_frame(raw)
        # the inner IPv6 header (SRv6) sits just before UDP; decode_frame reports the outer DSCP
        udp = raw.index(F.ROCE_UDP_PORT.to_bytes(2, "big")) - 2
        ip = udp - F.IPV6_LEN
        inner = (((raw[ip] & 0x0F) << 4) | (raw[ip + 1] >> 4)) >> 2
        out.setdefault(fr.opcode, set()).add((fr.dscp, inner))
    return out


@pytest.mark.parametrize("encap", ["srv6", "stev"])
def test_mrc_marks_feedback_and_probes_control_and_data_data(encap):
    paths = [PathSpec(ecn_bytes=8_000, trim_bytes=60_000, rate_bps=10e9) for _ in range(4)]
    paths[2].down = [(30_000, 400_000)]  # a path down for a while: RACK verdicts, probes, answers
    p = make_pair(paths, encap=encap, attr=QpAttr(probe_min_ns=20_000), buf_len=4 << 20)
    frames = _record(p)
    rng = random.Random(5)
    transfer(p, [(1, rng.randbytes(3 << 20), p.mr.base_va, 7)])
    got = _classes(frames)
    ctl = (F.DSCP_CONTROL, F.DSCP_CONTROL)
    assert got[F.OP_ACK] == {ctl}
    assert got[F.OP_PROBE_REQ] == {ctl} and got[F.OP_PROBE_RESP] == {ctl}
    assert {op for op in got if op in F.DATA_OPCODES}, "no data sent"
    assert all(got[op] == {(F.DSCP_DATA, F.DSCP_DATA)} for op in got if op in F.DATA_OPCODES)
    c = p.qa.counters
    # the run had the feedback the class is for: ECN echoes and loss verdicts on the dead path
    assert c.ecn_echoes > 0 and c.retx_rack > 0 and c.probes_sent > 0


def test_rc_marks_acks_naks_and_cnps_control():
    paths = [PathSpec(ecn_bytes=4_000, rate_bps=10e9, loss=0.01)]
    p = make_pair(paths, mode="rc", buf_len=2 << 20)
    frames = _record(p)
    transfer(p, [(1, random.Random(6).randbytes(1 << 20), p.mr.base_va, None)])
    got = _classes(frames)
    ctl = (F.DSCP_CONTROL, F.DSCP_CONTROL)
    assert got[F.OP_CNP] == {ctl} and got[F.OP_ACK] == {ctl}
    assert p.qb.counters.cnps_sent > 0 and p.qb.counters.naks_sent > 0  # NAKs are ACK-opcode packets
    assert all(got[op] == {(F.DSCP_DATA, F.DSCP_DATA)} for op in got if op in F.DATA_OPCODES)


def test_port_status_is_control_and_the_class_is_per_encap():
    p = make_pair([PathSpec(), PathSpec()], buf_len=1 << 16)
    frames = _record(p)
    p.a.set_port_state(2, False, 1_000)
    p.net.run(until_ns=100_000)
    kinds = Counter(decode_frame(f).opcode for f in frames)
    assert kinds[F.OP_PORT_STATUS] >= 1
    assert all(decode_frame(f).dscp == F.DSCP_CONTROL for f in frames if decode_frame(f).opcode == F.OP_PORT_STATUS)
    # an encap's own classes (a controller request sets both to its req_tc)
    enc = Encap("stev", GID_A, GID_B, 0x12345678, dscp=10, ctl_dscp=34)
    assert decode_frame(encode_ack(enc, 5, 9)).dscp == 34
    with pytest.raises(ValueError, match="ctl_dscp 64 is not a DSCP"):
        Encap("stev", GID_A, GID_B, 1, ctl_dscp=64)
