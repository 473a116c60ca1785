"""Wire codec: round trips in every encap, ICRC against scapy's RoCEv2 layer, trims, bad input."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.all import UDP, Ether, IPv6, Raw, raw
from scapy.contrib.roce import BTH

from mrc.wire import formats as F
from mrc.wire.codec import (
    AckInfo,
    Encap,
    PortStatusInfo,
    ProbeInfo,
    WireError,
    decode_frame,
    encode_ack,
    encode_cnp,
    encode_data,
    encode_port_status,
    encode_probe,
    mark_ce,
    priority_queue,
    trim_packet,
)
from mrc.wire.icrc import icrc_of

GA = ipaddress.IPv6Address("fd00::a").packed
GB = ipaddress.IPv6Address("fd00::b").packed
CARRIER = ipaddress.IPv6Address("fc00:0:1:102:2:12::").packed
SEGMENT = ipaddress.IPv6Address("fd00::b").packed

ENCAPS = [
    ("srv6", CARRIER, False), ("srv6", CARRIER + SEGMENT, True), ("srv6", CARRIER, True),
    ("stev", 0xBEEF1234, False), ("stev", 0xBEEF1234, True), ("udp", 0x1234, False),
]


def test_sizes_match_the_documented_layouts():
    assert F.HBH_TELEMETRY_LEN == 88 and F.HBH_TELEMETRY_EXT_LEN == 10
    assert F.TELEMETRY_OPT_DATA_LEN == 84
    assert F.SRH_ONE_SEG_LEN == 24 and F.SRH_ONE_SEG_EXT_LEN == 2
    e = Encap("srv6", GA, GB, CARRIER)
    pkt = encode_data(e, F.OP_WRITE_ONLY, 1, 2, 3, 4, 5, b"\0" * 5)
    assert len(pkt) == 14 + 40 + 40 + 8 + 12 + 16 + 5 + 4
    ack = encode_ack(e, 1, 2, sack=AckInfo(cum_psn=0, ecn_psns=[1, 2], trim_psns=[3]))
    assert len(ack) == 14 + 80 + 8 + 12 + 4 + F.SACK_FIXED_LEN + 12 + 4


@pytest.mark.parametrize("mode,ev,tel", ENCAPS)
def test_data_round_trip(mode, ev, tel):
    e = Encap(mode, GA, GB, ev, ev_index=5, telemetry=tel)
    pkt = encode_data(e, F.OP_WRITE_LAST_IMM, 0x123456, 0xFFFFFF, 0xDEAD0000, 0x77, 9000, b"hello", imm=0xCAFE,
                      ack_req=True)
    fr = decode_frame(pkt)
    assert (fr.opcode, fr.dest_qp, fr.psn, fr.ack_req) == (F.OP_WRITE_LAST_IMM, 0x123456, 0xFFFFFF, True)
    assert (fr.va, fr.rkey, fr.dma_len, fr.imm, bytes(fr.payload)) == (0xDEAD0000, 0x77, 9000, 0xCAFE, b"hello")
    assert fr.src_gid == GA and fr.dst_gid == GB and not fr.trimmed and not fr.ce
    if mode == "srv6":
        assert fr.outer_dst == CARRIER and fr.sport == F.SRV6_INNER_SPORT_BASE | 5
    elif mode == "stev":
        assert fr.entropy == 0xBEEF1234
    else:
        assert fr.sport == 0x1234
    assert (fr.telemetry_off >= 0) == tel
    if tel:
        assert fr.telemetry() == (0, [])


def test_icrc_matches_scapy_rocev2():
    """scapy's BTH computes the RoCEv2 ICRC independently (pseudo LRH, masked TC/FL/HL, UDP csum, resv8a)."""
    p = IPv6(src="fd00::a", dst="fd00::b", tc=0x6B, fl=0xABCDE, hlim=3) / UDP(sport=0x1234, dport=4791) / \
        BTH(opcode=0x0A, dqpn=0x42, psn=77, fecn=1, becn=1) / Raw(b"\x00" * 16 + b"payload!")
    b = raw(p)
    assert icrc_of(b[:40], b[40:60], b[60:-4]).to_bytes(4, "little") == b[-4:]
    e = Encap("stev", GA, GB, 0x12345678)
    ours = encode_data(e, F.OP_WRITE_ONLY, 7, 5, 0x1000, 0x55, 3, b"xyz")
    s = Ether(ours)
    s[BTH].icrc = None  # make scapy recompute it
    assert raw(s) == ours


def test_icrc_ignores_variant_fields_and_catches_corruption():
    e = Encap("stev", GA, GB, 0x12345678)
    pkt = bytearray(encode_data(e, F.OP_WRITE_ONLY, 7, 5, 0x1000, 0x55, 3, b"xyz"))
    pkt[14 + 7] = 1  # hop limit changes en route: still valid
    pkt[14 + 1] |= 0x30  # CE
    assert decode_frame(bytes(pkt)).ce
    pkt[-6] ^= 0xFF  # payload corruption
    with pytest.raises(WireError, match="ICRC"):
        decode_frame(bytes(pkt))


def test_srv6_icrc_covers_inner_only():
    e = Encap("srv6", GA, GB, CARRIER, telemetry=True)
    pkt = bytearray(encode_data(e, F.OP_WRITE_ONLY, 7, 5, 0x1000, 0x55, 3, b"xyz"))
    pkt[14 + 24 : 14 + 40] = ipaddress.IPv6Address("fc00:0:102:2:12::").packed  # uN shift
    pkt[14 + 7] -= 1
    tel = 14 + 40 + 4
    pkt[tel + 1] = 1  # a switch filled record 0
    pkt[tel + 4 : tel + 24] = (7).to_bytes(4, "big") + bytes(16)
    fr = decode_frame(bytes(pkt))
    assert fr.telemetry()[0] == 1 and fr.telemetry()[1][0].switch_id == 7


def test_sack_probe_port_status_round_trip():
    e = Encap("srv6", GA, GB, CARRIER)
    s = AckInfo(cum_psn=0xFFFFFE, sack_base=0xFFFFFF, bitmap=(1 << 255) | 5, trigger_psn=3,
                flags=F.SACK_FLAG_MRC | F.SACK_FLAG_ECN_ECHO, service_time_ns=1234, received_bytes=1 << 40,
                ev_echo=0xC0010000, ecn_psns=[1, 2, 3], trim_psns=[0xFFFFFF])
    fr = decode_frame(encode_ack(e, 9, 3, F.AETH_ACK, 17, s))
    assert fr.sack == s and fr.msn == 17 and fr.syndrome == 0
    nak = decode_frame(encode_ack(e, 9, 3, F.AETH_NAK_PSN_SEQ_ERR, 2))
    assert nak.sack is None and nak.syndrome == 0x60
    pr = ProbeInfo(req_id=5, port=3, flags=1, sender_ts_ns=1 << 50, service_time_ns=9, ev_echo=0xABCD)
    assert decode_frame(encode_probe(e, F.OP_PROBE_RESP, pr)).probe == pr
    ps = PortStatusInfo(req_id=1, n_ports=8, up_mask=0b1011_1111)
    assert decode_frame(encode_port_status(e, ps)).port_status == ps


@pytest.mark.parametrize("mode,ev,tel", ENCAPS)
def test_trim_and_ce(mode, ev, tel):
    e = Encap(mode, GA, GB, ev, telemetry=tel)
    pkt = encode_data(e, F.OP_WRITE_ONLY_IMM, 7, 5, 0x1000, 0x55, 4096, b"x" * 4096, imm=1)
    t = trim_packet(pkt)
    fr = decode_frame(t)
    assert fr.trimmed and fr.dscp == F.DSCP_TRIMMED and fr.imm == 1 and fr.psn == 5 and bytes(fr.payload) == b""
    assert len(t) == len(pkt) - 4096 - 4
    assert trim_packet(encode_ack(e, 1, 1)) is None
    assert decode_frame(mark_ce(pkt)).ce
    ack = encode_ack(e, 1, 1)
    assert mark_ce(ack) is ack  # not ECN-capable


@pytest.mark.parametrize("mode,ev,tel", ENCAPS)
def test_priority_queue_is_where_the_switch_queues_each_packet(mode, ev, tel):
    """ACK/NAK, CNP, probes and port status (congestion.p4's control packets) the top queue (0), data with
    DSCP_RESEND the resend queue (1); plain data, a trimmed header (that one the switch makes and queues
    itself) and garbage the data queue (7).
    The DSCP is on every IPv6 header the encap writes and the ICRC stays valid (RoCEv2 masks the
    traffic class)."""
    e = Encap(mode, GA, GB, ev, telemetry=tel)
    data = encode_data(e, F.OP_WRITE_ONLY, 7, 5, 0x1000, 0x55, 64, b"x" * 64)
    resend = encode_data(e, F.OP_WRITE_ONLY, 7, 5, 0x1000, 0x55, 64, b"x" * 64, dscp=F.DSCP_RESEND)
    assert priority_queue(data) == priority_queue(trim_packet(data)) == priority_queue(b"\0" * 40) == F.DATA_PRIORITY
    assert F.DATA_PRIORITY == 7
    assert priority_queue(resend) == F.RESEND_PRIORITY == 1
    top = [encode_ack(e, 1, 1), encode_ack(e, 1, 1, F.AETH_NAK_PSN_SEQ_ERR, 2), encode_cnp(e, 9),
           encode_probe(e, F.OP_PROBE_REQ, ProbeInfo(req_id=1, port=1)),
           encode_port_status(e, PortStatusInfo(req_id=1, n_ports=2, up_mask=1))]
    assert [priority_queue(x) for x in top] == [F.TRIM_PRIORITY] * 5 and F.TRIM_PRIORITY == 0
    fr = decode_frame(resend)
    assert fr.dscp == F.DSCP_RESEND and not fr.trimmed and bytes(fr.payload) == b"x" * 64
    assert e.dscp == F.DSCP_DATA  # the encap's own DSCP is untouched
    assert len(resend) == len(data) and resend[-4:] == data[-4:]  # same ICRC


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_garbage_only_raises_wire_error(data):
    try:
        decode_frame(data)
    except WireError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=200), st.integers(0, 255), st.integers(0, 7))
def test_truncated_or_bit_flipped_packets_only_raise_wire_error(cut, pos, bit):
    e = Encap("srv6", GA, GB, CARRIER + SEGMENT, telemetry=True)
    pkt = encode_ack(e, 1, 1, sack=AckInfo(cum_psn=3, ecn_psns=[4]))
    b = bytearray(pkt[: max(0, len(pkt) - cut)])
    if b:
        b[pos % len(b)] ^= 1 << bit
    try:
        decode_frame(bytes(b))
    except WireError:
        pass


@pytest.mark.parametrize("mode,ev,tel", ENCAPS)
def test_dscp_11_marks_only_writes_trimmed(mode, ev, tel):
    """DSCP 11 says "trimmed" on an RDMA WRITE only (the only packets a switch trims, congestion.p4): a
    probe, PORT_STATUS or ACK sent whole with DSCP 11 (a controller request's ``req_tc`` is any DSCP,
    mrc_ctl_ep_batch_send_wait) decodes whole, ICRC checked, and scapy's layer reads its ICRC too."""
    from mrc.wire.layers import MrcBTH, is_trimmed

    e = Encap(mode, GA, GB, ev, telemetry=tel, dscp=F.DSCP_TRIMMED)
    probe = ProbeInfo(req_id=5, port=1, flags=F.PROBE_FLAG_CTL, sender_ts_ns=99)
    ps = PortStatusInfo(req_id=6, n_ports=2, up_mask=0b11, flags=F.PORT_STATUS_FLAG_CTL)
    for pkt, check in ((encode_probe(e, F.OP_PROBE_REQ, probe), lambda fr: fr.probe == probe),
                       (encode_port_status(e, ps), lambda fr: fr.port_status == ps),
                       (encode_ack(e, 7, 3, msn=2), lambda fr: fr.msn == 2)):
        fr = decode_frame(pkt)
        assert not fr.trimmed and fr.dscp == F.DSCP_TRIMMED and check(fr)
        s = Ether(pkt)
        assert not is_trimmed(s) and s[MrcBTH].icrc_ok() and raw(s) == pkt
        bad = bytearray(pkt)
        bad[-1] ^= 1
        with pytest.raises(WireError, match="ICRC"):
            decode_frame(bytes(bad))
    t = trim_packet(encode_data(e, F.OP_WRITE_MIDDLE, 7, 5, 0x1000, 0x55, 64, b"x" * 64))
    assert decode_frame(t).trimmed and is_trimmed(Ether(t)) and Ether(t)[MrcBTH].icrc_ok() is None
