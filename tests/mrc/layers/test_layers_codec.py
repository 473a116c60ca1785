"""Scapy layers decode what mrc.wire.codec encodes, field by field, and the codec decodes what they build."""

from __future__ import annotations

import ipaddress

import pytest
from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrHopByHop, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mrc.wire import codec as C
from mrc.wire import formats as F
from mrc.wire.layers import (
    RETH,
    HBHOptMrcTelemetry,
    ImmDt,
    MrcBTH,
    MrcPortStatus,
    MrcProbe,
    MrcSack,
    MrcTelemetryRecord,
    is_trimmed,
    telemetry_option,
)

SRC = ipaddress.IPv6Address("fd00::1").packed
DST = ipaddress.IPv6Address("fd00::2").packed
CARRIER = ipaddress.IPv6Address("fc00:0:101:201:301:2::").packed
SEGMENT = ipaddress.IPv6Address("fc00:0:9:1::").packed


def encaps() -> dict[str, C.Encap]:
    return {
        "srv6": C.Encap("srv6", SRC, DST, CARRIER, ev_index=7),
        "srv6_srh_tel": C.Encap("srv6", SRC, DST, CARRIER + SEGMENT, ev_index=9, telemetry=True),
        "stev": C.Encap("stev", SRC, DST, 0xBEEF1234),
        "stev_tel": C.Encap("stev", SRC, DST, 0x00010002, telemetry=True),
        "udp": C.Encap("udp", SRC, DST, 0x4321),
    }


@pytest.mark.parametrize("name", list(encaps()))
@pytest.mark.parametrize("opcode", sorted(F.DATA_OPCODES))
def test_data_packet_decodes_field_by_field(name: str, opcode: int) -> None:
    enc = encaps()[name]
    imm = 0xCAFEF00D if opcode in F.IMM_OPCODES else None
    raw = C.encode_data(enc, opcode, 0xABCDE, 0xFFFFFE, 0x7F00_0000_1000, 0x1234, 8192, b"\x5a" * 256,
                        imm=imm, ack_req=True)
    p = Ether(raw)
    assert bytes(p) == raw  # rebuilding the dissected packet gives the same bytes
    outer = p[IPv6]
    assert outer.src == "fd00::1" and outer.tc >> 2 == F.DSCP_DATA and outer.tc & 3 == F.ECN_ECT0
    if name.startswith("srv6"):
        assert outer.dst == str(ipaddress.IPv6Address(CARRIER))
        inner = p.getlayer(IPv6, 2)
        assert (inner.src, inner.dst) == ("fd00::1", "fd00::2")
        assert p[UDP].sport == F.SRV6_INNER_SPORT_BASE | enc.sport & 0x3FFF
        srh = p.getlayer(IPv6ExtHdrSegmentRouting)
        if name == "srv6_srh_tel":
            assert srh.addresses == [str(ipaddress.IPv6Address(SEGMENT))] and srh.segleft == 1 and srh.nh == 41
        else:
            assert srh is None and outer.nh == 41
    else:
        assert outer.dst == "fd00::2" and p.getlayer(IPv6, 2) is None
        if name.startswith("stev"):
            assert (p[UDP].sport << 16) | (outer.fl & 0xFFFF) == enc.sport << 16 | enc.flow_label
        else:
            assert p[UDP].sport == 0x4321
    assert p[UDP].dport == 4791
    bth = p[BTH]
    assert isinstance(bth, MrcBTH)
    assert (bth.opcode, bth.dqpn, bth.psn, bth.ackreq, bth.solicited) == (opcode, 0xABCDE, 0xFFFFFE, 1,
                                                                          int(imm is not None))
    assert bth.icrc_ok() is True
    assert (p[RETH].va, p[RETH].rkey, p[RETH].dma_len) == (0x7F00_0000_1000, 0x1234, 8192)
    if imm is None:
        assert p.getlayer(ImmDt) is None and p[RETH].payload.load == b"\x5a" * 256
    else:
        assert p[ImmDt].imm == imm and p[ImmDt].payload.load == b"\x5a" * 256
    tel = telemetry_option(p)
    assert (tel is not None) == name.endswith("tel")
    if tel is not None:
        assert (tel.otype, tel.optlen, tel.max_hops, tel.hop_count, len(tel.records)) == (0x3E, 84, 4, 0, 4)
        assert p[IPv6ExtHdrHopByHop].len == 10 and tel.filled() == []


def test_icrc_detects_corruption() -> None:
    raw = bytearray(C.encode_data(encaps()["stev"], F.OP_WRITE_ONLY, 1, 2, 3, 4, 5, b"hello"))
    raw[-6] ^= 1
    assert Ether(bytes(raw))[MrcBTH].icrc_ok() is False


def test_ack_with_sack_decodes() -> None:
    sack = C.AckInfo(cum_psn=0xFFFFF0, sack_base=0xFFFFF0, bitmap=(1 << 255) | (1 << 200), trigger_psn=0xFFFFF0,
                     flags=F.SACK_FLAG_ECN_ECHO | F.SACK_FLAG_TRIM, service_time_ns=1500, received_bytes=1 << 40,
                     ev_echo=0xBEEF1234, ecn_psns=[0xFFFFF0, 3], trim_psns=[5])
    raw = C.encode_ack(encaps()["stev"], 0x42, 0xFFFFF0, syndrome=F.AETH_NAK_PSN_SEQ_ERR, msn=99, sack=sack)
    p = Ether(raw)
    assert bytes(p) == raw and p[MrcBTH].icrc_ok() is True
    assert (p[BTH].opcode, p[BTH].dqpn, p[BTH].psn) == (F.OP_ACK, 0x42, 0xFFFFF0)
    assert (p[AETH].syndrome, p[AETH].msn) == (0x60, 99)
    s = p[MrcSack]
    assert (s.cum_psn, s.sack_base, s.trigger_psn, s.service_time_ns, s.received_bytes, s.ev_echo) == (
        0xFFFFF0, 0xFFFFF0, 0xFFFFF0, 1500, 1 << 40, 0xBEEF1234)
    assert int(s.flags) == F.SACK_FLAG_MRC | F.SACK_FLAG_ECN_ECHO | F.SACK_FLAG_TRIM
    assert s.bitmap == sack.bitmap and (s.n_ecn, s.n_trim) == (2, 1)
    assert s.ecn_psns == [0xFFFFF0, 3] and s.trim_psns == [5]
    # bit i of the codec bitmap = PSN sack_base + i
    assert s.acked_psns() == [(0xFFFFF0 + 200) & F.PSN_MASK, (0xFFFFF0 + 255) & F.PSN_MASK]  # wraps past 2^24


def test_bare_ack_has_no_sack_layer() -> None:
    p = Ether(C.encode_ack(encaps()["udp"], 7, 100))
    assert p[AETH].syndrome == 0 and p.getlayer(MrcSack) is None and p[MrcBTH].icrc_ok()


@pytest.mark.parametrize("opcode", [F.OP_PROBE_REQ, F.OP_PROBE_RESP])
def test_probe_decodes(opcode: int) -> None:
    info = C.ProbeInfo(req_id=0xFFFF0001, port=3, flags=F.PROBE_FLAG_SERVICE_TIME, sender_ts_ns=123456789012,
                       service_time_ns=700, ev_echo=0xBEEF1234)
    p = Ether(C.encode_probe(encaps()["srv6_srh_tel"], opcode, info))
    assert p[BTH].opcode == opcode and p[BTH].dqpn == F.PROBE_QPN and p[MrcBTH].icrc_ok()
    m = p[MrcProbe]
    assert (m.req_id, m.port, int(m.flags), m.sender_ts_ns, m.service_time_ns, m.ev_echo) == (
        0xFFFF0001, 3, 1, 123456789012, 700, 0xBEEF1234)


def test_port_status_decodes() -> None:
    p = Ether(C.encode_port_status(encaps()["stev"], C.PortStatusInfo(req_id=5, n_ports=8, up_mask=0b1011_0111)))
    m = p[MrcPortStatus]
    assert (p[BTH].opcode, m.req_id, m.n_ports, m.up_mask) == (F.OP_PORT_STATUS, 5, 8, 0b1011_0111)
    assert m.up_ports() == [1, 2, 3, 5, 6, 8]


@pytest.mark.parametrize("name", ["srv6_srh_tel", "stev"])
def test_trimmed_packets(name: str) -> None:
    raw = C.encode_data(encaps()[name], F.OP_WRITE_LAST_IMM, 9, 10, 0x1000, 0x77, 4096, b"x" * 1000, imm=0xABCD)
    trimmed = C.trim_packet(raw)
    assert trimmed is not None
    p = Ether(trimmed)
    assert is_trimmed(p) and not is_trimmed(Ether(raw))
    assert p[BTH].psn == 10 and p[RETH].dma_len == 4096 and p[ImmDt].imm == 0xABCD
    assert p[MrcBTH].icrc is None and p[MrcBTH].icrc_ok() is None and p[ImmDt].payload.name == "NoPayload"
    assert bytes(p) == trimmed
    fr = C.decode_frame(trimmed)
    assert fr.trimmed and fr.imm == 0xABCD


# ---------------------------------------------------------------- the other direction: scapy -> codec
def test_scapy_built_srv6_packet_decodes_with_codec() -> None:
    records = [MrcTelemetryRecord(switch_id=0x0A000001 + i, ingress_port=i + 1, egress_port=i + 2,
                                  ingress_ts_us=1000 * i, hop_latency_us=3 + i, queue_depth=0x012345 + i,
                                  queue_id=i) for i in range(4)]
    tel = HBHOptMrcTelemetry(hop_count=2, records=records)
    pkt = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
           / IPv6(src="fd00::1", dst="fc00:0:101:201:301:2::", tc=F.DSCP_DATA << 2 | F.ECN_CE, fl=3)
           / IPv6ExtHdrHopByHop(options=[tel])
           / IPv6ExtHdrSegmentRouting(addresses=["fc00:0:9:1::"], segleft=1, nh=41)
           / IPv6(src="fd00::1", dst="fd00::2", tc=F.DSCP_DATA << 2)
           / UDP(sport=0xC003, dport=4791, chksum=0)
           / MrcBTH(opcode=F.OP_WRITE_MIDDLE, dqpn=0x55, psn=0x123456, ackreq=1)
           / RETH(va=0x2000, rkey=0x99, dma_len=65536) / Raw(b"q" * 100))
    raw = bytes(pkt)
    assert raw[F.ETH_LEN + F.IPV6_LEN + 1] == F.HBH_TELEMETRY_EXT_LEN  # 88-byte HBH, no padding
    fr = C.decode_frame(raw)  # verifies the ICRC scapy computed
    assert (fr.opcode, fr.dest_qp, fr.psn, fr.ack_req) == (F.OP_WRITE_MIDDLE, 0x55, 0x123456, True)
    assert (fr.va, fr.rkey, fr.dma_len, bytes(fr.payload)) == (0x2000, 0x99, 65536, b"q" * 100)
    assert fr.ce and fr.outer_dst == CARRIER and fr.dst_gid == DST and fr.sport == 0xC003
    hops, recs = fr.telemetry()
    assert hops == 2 and len(recs) == 2
    assert (recs[1].switch_id, recs[1].ingress_port, recs[1].egress_port, recs[1].ingress_ts_us,
            recs[1].hop_latency_us, recs[1].queue_depth, recs[1].queue_id) == (0x0A000002, 2, 3, 1000, 4,
                                                                                0x012346, 1)
    again = Ether(raw)
    assert [r.switch_id for r in telemetry_option(again).filled()] == [0x0A000001, 0x0A000002]


def test_scapy_built_ack_sack_decodes_with_codec() -> None:
    pkt = (Ether() / IPv6(src="fd00::2", dst="fd00::1", fl=0x1234) / UDP(sport=0x9999, dport=4791, chksum=0)
           / MrcBTH(opcode=F.OP_ACK, dqpn=0x77, psn=300) / AETH(syndrome=0, msn=12)
           / MrcSack(flags=F.SACK_FLAG_MRC | F.SACK_FLAG_RETX_ECHO, cum_psn=290, sack_base=290,
                     bitmap=(1 << 255) | 1, trigger_psn=300, service_time_ns=42, received_bytes=4096,
                     ev_echo=7, ecn_psns=[291], trim_psns=[292, 293]))
    fr = C.decode_frame(bytes(pkt))
    s = fr.sack
    assert (fr.opcode, fr.dest_qp, fr.psn, fr.msn) == (F.OP_ACK, 0x77, 300, 12)
    assert (s.cum_psn, s.sack_base, s.trigger_psn, s.service_time_ns, s.received_bytes, s.ev_echo) == (
        290, 290, 300, 42, 4096, 7)
    assert s.flags & F.SACK_FLAG_RETX_ECHO and s.ecn_psns == [291] and s.trim_psns == [292, 293]
    assert s.bitmap == (1 << 255) | 1


def test_scapy_built_probe_and_port_status_decode_with_codec() -> None:
    base = Ether() / IPv6(src="fd00::2", dst="fd00::1") / UDP(sport=1, dport=4791, chksum=0)
    fr = C.decode_frame(bytes(base / MrcBTH(opcode=F.OP_PROBE_RESP, dqpn=F.PROBE_QPN)
                              / MrcProbe(req_id=17, flags=1, port=2, sender_ts_ns=5, service_time_ns=6,
                                         ev_echo=8)))
    assert (fr.probe.req_id, fr.probe.port, fr.probe.flags, fr.probe.sender_ts_ns, fr.probe.service_time_ns,
            fr.probe.ev_echo) == (17, 2, 1, 5, 6, 8)
    fr = C.decode_frame(bytes(base / MrcBTH(opcode=F.OP_PORT_STATUS, dqpn=F.PROBE_QPN)
                              / MrcPortStatus(req_id=3, n_ports=4, up_mask=0b1101)))
    assert (fr.port_status.req_id, fr.port_status.n_ports, fr.port_status.up_mask) == (3, 4, 0b1101)


@pytest.mark.parametrize("cut", [20, 54, 62, 70, 90])
def test_truncated_packets_never_crash_the_layers(cut: int) -> None:
    raw = C.encode_data(encaps()["srv6_srh_tel"], F.OP_WRITE_ONLY_IMM, 1, 2, 3, 4, 5, b"abc", imm=1)
    p = Ether(raw[:cut])  # scapy keeps what it cannot parse as Raw
    assert bytes(p) == raw[:cut]


def test_controller_flags_decode_by_name() -> None:
    """The controller's flags as the codec writes them: PORT_STATUS's flags byte (CTL) and the
    probe's CTL and PORT_STATUS_ACK bits (until 2026-12-05 the layer read PORT_STATUS's flags as
    part of a 24-bit reserved field and named neither probe bit)."""
    ps = Ether(C.encode_port_status(encaps()["stev"], C.PortStatusInfo(req_id=7, n_ports=2, up_mask=0b11,
                                                                       flags=F.PORT_STATUS_FLAG_CTL)))[MrcPortStatus]
    assert int(ps.flags) == F.PORT_STATUS_FLAG_CTL and ps.flags.CTL and ps.reserved == 0 and ps.up_mask == 0b11
    flags = F.PROBE_FLAG_CTL | F.PROBE_FLAG_PORT_STATUS_ACK | F.PROBE_FLAG_SERVICE_TIME
    pr = Ether(C.encode_probe(encaps()["stev"], F.OP_PROBE_RESP, C.ProbeInfo(req_id=7, flags=flags)))[MrcProbe]
    assert pr.flags.CTL and pr.flags.PORT_STATUS_ACK and pr.flags.SERVICE_TIME and int(pr.flags) == flags
