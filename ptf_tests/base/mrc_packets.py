"""Packets of the MRC fabric for PTF tests, built and decoded with the scapy layers of ``mrc.wire.layers``:
SRv6-mode and STEV-mode RoCEv2 with the telemetry Hop-by-Hop option, UDP-mode RoCEv2 over IPv4 (what
``route_v4`` carries), and what a switch makes of them (forwarded, uSID-shifted, SRH End, trimmed).

Importing this module registers MRC's layers with scapy, so ``Ether(received_bytes)`` shows BTH, RETH,
ImmDt, AETH, probes and the telemetry records field by field, and ``is_trimmed`` tells a trimmed one.
"""
from __future__ import annotations

import ipaddress
import itertools

from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import (
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrSegmentRouting,
    IPv6ExtHdrSegmentRoutingTLVPadN,
)
from scapy.layers.l2 import Ether
from scapy.packet import NoPayload, Packet, Raw
from scapy.utils import checksum

from controller import usid as U
from mrc.wire import formats as F
from mrc.wire.layers import (
    RETH,
    HBHOptMrcTelemetry,
    ImmDt,
    MrcBTH,
    MrcPortStatus,
    MrcProbe,
    MrcTelemetryRecord,
    telemetry_option,
)

TC_DATA = F.DSCP_DATA << 2 | F.ECN_ECT0  # 0x6a: DSCP 26 (AF31), ECT(0)
ICRC_LEN = 4
DEFAULT_DEST_QP = 0x12


def carrier(block: int, *usids: int) -> str:
    """uSID carrier: the block, then the uSIDs, zero-filled, as an IPv6 address string."""
    return str(ipaddress.IPv6Address(U.compose(block, *usids)))


def transport(opcode: int, payload_len: int = 64, dest_qp: int = DEFAULT_DEST_QP, psn: int = 0) -> Packet:
    """BTH and what MRC puts after it for ``opcode``: RETH [/ ImmDt] / payload for data, AETH for an ACK,
    the probe or PORT_STATUS body for those; the ICRC is computed when the frame is built."""
    bth = MrcBTH(opcode=opcode, dqpn=dest_qp & F.QPN_MASK, psn=psn & F.PSN_MASK)
    if opcode in F.DATA_OPCODES:
        hdrs = bth / RETH(va=0x1000_0000 + psn * 4096, rkey=0x1234, dma_len=payload_len)
        if opcode in F.IMM_OPCODES:
            hdrs = hdrs / ImmDt(imm=0xCAFE0001)
        return hdrs / Raw(bytes(i & 0xFF for i in range(payload_len))) if payload_len else hdrs
    if opcode == F.OP_ACK:
        return bth / AETH(syndrome=F.AETH_ACK, msn=psn & F.AETH_MSN_MASK)
    if opcode == F.OP_CNP:  # RoCEv2 CNP: BTH + 16 reserved bytes
        return bth / Raw(bytes(F.CNP_LEN))
    bth.dqpn = F.PROBE_QPN  # probes and PORT_STATUS are connectionless
    if opcode in (F.OP_PROBE_REQ, F.OP_PROBE_RESP):
        return bth / MrcProbe(req_id=psn, port=1)
    if opcode == F.OP_PORT_STATUS:
        return bth / MrcPortStatus(req_id=psn, n_ports=1, up_mask=1)
    raise ValueError(f"no MRC packet with BTH opcode {opcode:#x}")


def udp(sport: int, l4: Packet, dport: int = F.ROCE_UDP_PORT) -> Packet:
    """UDP with checksum 0, as RoCEv2 senders send it (and as a trimming switch leaves it)."""
    return UDP(sport=sport, dport=dport, chksum=0) / l4


def hbh(option: HBHOptMrcTelemetry, next_hdr: int) -> Packet:
    """Hop-by-Hop header holding only the telemetry option: 88 bytes, hdr_ext_len 10, no padding."""
    return IPv6ExtHdrHopByHop(nh=next_hdr, options=[option.copy()])


def srh(segments: list[str], segments_left: int, next_hdr: int = F.NH_IPV6) -> Packet:
    """SRH type 4 with ``segments`` in wire order (List[0] first = the last segment)."""
    return IPv6ExtHdrSegmentRouting(nh=next_hdr, addresses=list(segments), segleft=segments_left)


def stev_packet(src: str, dst: str, *, sport: int = 0xC000, flow_label: int = 0, opcode: int = F.OP_WRITE_ONLY,
                payload_len: int = 64, tc: int = TC_DATA, hop_limit: int = 64,
                telemetry: HBHOptMrcTelemetry | None = None, dest_qp: int = DEFAULT_DEST_QP, psn: int = 0,
                eth_dst: str = "00:00:00:00:00:01", eth_src: str = "00:00:00:00:00:02") -> Packet:
    """STEV/UDP mode: Ethernet / IPv6 [/ telemetry HBH] / UDP / BTH / ..."""
    l4 = udp(sport, transport(opcode, payload_len, dest_qp, psn))
    first = F.NH_UDP
    if telemetry is not None:
        l4 = hbh(telemetry, F.NH_UDP) / l4
        first = F.NH_HOP_BY_HOP
    return (Ether(dst=eth_dst, src=eth_src)
            / IPv6(src=src, dst=dst, nh=first, tc=tc, fl=flow_label, hlim=hop_limit) / l4)


def srv6_packet(outer_dst: str, *, outer_src: str = "fc00::1", inner_src: str = "2001:db8::1",
                inner_dst: str = "2001:db8::2", segments: list[str] | None = None,
                segments_left: int | None = None, telemetry: HBHOptMrcTelemetry | None = None,
                opcode: int = F.OP_WRITE_ONLY, payload_len: int = 64, sport: int = 0xC000,
                flow_label: int = 0, tc: int = TC_DATA, hop_limit: int = 64, dest_qp: int = DEFAULT_DEST_QP,
                psn: int = 0, eth_dst: str = "00:00:00:00:00:01",
                eth_src: str = "00:00:00:00:00:02") -> Packet:
    """SRv6 mode: Ethernet / outer IPv6 [/ telemetry HBH] [/ SRH] / inner IPv6 / UDP / BTH / ..."""
    ext = (IPv6(src=inner_src, dst=inner_dst, nh=F.NH_UDP, tc=tc, fl=flow_label)
           / udp(sport, transport(opcode, payload_len, dest_qp, psn)))
    first = F.NH_IPV6
    if segments is not None:
        ext = srh(segments, len(segments) if segments_left is None else segments_left) / ext
        first = F.NH_ROUTING
    if telemetry is not None:
        ext = hbh(telemetry, first) / ext
        first = F.NH_HOP_BY_HOP
    return (Ether(dst=eth_dst, src=eth_src)
            / IPv6(src=outer_src, dst=outer_dst, nh=first, tc=tc, fl=flow_label, hlim=hop_limit) / ext)


def ipv4_packet(src: str, dst: str, *, sport: int = 0xC000, opcode: int = F.OP_WRITE_ONLY,
                payload_len: int = 64, tos: int = TC_DATA, ttl: int = 64, ip_id: int = 0x4D52,
                dest_qp: int = DEFAULT_DEST_QP, psn: int = 0, eth_dst: str = "00:00:00:00:00:01",
                eth_src: str = "00:00:00:00:00:02") -> Packet:
    """UDP-mode RoCEv2 over IPv4: Ethernet / IPv4 / UDP / BTH / ..., with a correct IPv4 header checksum
    and the RoCEv2 ICRC as defined for IPv4 (TTL, TOS and header checksum masked)."""
    pkt = (Ether(dst=eth_dst, src=eth_src)
           / IP(src=src, dst=dst, tos=tos, ttl=ttl, id=ip_id) / udp(sport, transport(opcode, payload_len, dest_qp, psn)))
    pkt[MrcBTH].icrc = 0  # MrcBTH computes IPv6 ICRCs only; the IPv4 one is spliced in below
    frame = bytes(pkt)
    return Ether(frame[:-ICRC_LEN] + ipv4_icrc(Ether(frame)))


def ipv4_icrc(pkt: Packet) -> bytes:
    """The RoCEv2 ICRC of an IPv4 packet as it should be on the wire (scapy's RoCEv2 definition)."""
    if not pkt.haslayer(IP):
        raise ValueError("ipv4_icrc needs an IPv4 packet")
    return BTH.compute_icrc(pkt[MrcBTH], b"")


def ipv4_checksum_ok(pkt: Packet) -> bool:
    """Whether the IPv4 header checksum of ``pkt`` is valid: scapy's Internet checksum over the whole
    header as on the wire (checksum field included) is zero."""
    ip = pkt[IP]
    return checksum(bytes(ip)[: ip.ihl * 4]) == 0


def with_ext(pkt: Packet, *exts: Packet) -> Packet:
    """``pkt`` with IPv6 extension headers ``exts`` (Hop-by-Hop, Destination Options) put right after its
    outer IPv6 header, next-header values chained, the bytes rebuilt."""
    ip = pkt[IPv6]
    codes = {IPv6ExtHdrHopByHop: 0, IPv6ExtHdrDestOpt: 60}
    chain = list(exts)
    for e, nxt in itertools.pairwise(chain):
        e.nh = codes[type(nxt)]
    chain[-1].nh = ip.nh
    out = IPv6(src=ip.src, dst=ip.dst, tc=ip.tc, fl=ip.fl, hlim=ip.hlim, nh=codes[type(chain[0])])
    for e in chain:
        out = out / e
    return Ether(bytes(Ether(dst=pkt[Ether].dst, src=pkt[Ether].src) / out / ip.payload.copy()))


def with_tlv(pkt: Packet, pad: int) -> Packet:
    """``pkt`` with one PadN TLV of ``pad`` bytes in all (2 + data) after its SRH's segment list
    (RFC 8754 2.1), the SRH's length recomputed."""
    pkt = pkt.copy()
    pkt[IPv6ExtHdrSegmentRouting].tlv_objects = [
        IPv6ExtHdrSegmentRoutingTLVPadN(len=pad - 2, padding=b"\0" * (pad - 2))]
    pkt[IPv6ExtHdrSegmentRouting].len = None
    return Ether(bytes(pkt))


def rewrite(pkt: Packet, *, eth_dst: str | None = None, eth_src: str | None = None,
            ip_dst: str | None = None, hop_limit_delta: int = -1, tc: int | None = None,
            segments_left: int | None = None) -> Packet:
    """The packet as the switch should send it: MACs, outer DA, hop limit (IPv4: TTL, with the header
    checksum recomputed), traffic class (IPv4: TOS), SRH segments left; every other byte (the ICRC
    included) as sent."""
    out = Ether(bytes(pkt))  # dissected: the ICRC stays the sender's, as the switch leaves it
    if eth_dst is not None:
        out[Ether].dst = eth_dst
    if eth_src is not None:
        out[Ether].src = eth_src
    if not out.haslayer(IPv6) and out.haslayer(IP):
        ip4 = out[IP]
        if ip_dst is not None:
            ip4.dst = ip_dst
        ip4.ttl = ip4.ttl + hop_limit_delta
        if tc is not None:
            ip4.tos = tc
        ip4.chksum = None  # the switch recomputes it after changing the header
        return Ether(bytes(out))
    if ip_dst is not None:
        out[IPv6].dst = ip_dst
    out[IPv6].hlim = out[IPv6].hlim + hop_limit_delta
    if tc is not None:
        out[IPv6].tc = tc
    if segments_left is not None:
        out[IPv6ExtHdrSegmentRouting].segleft = segments_left
    return out


def last_transport_header(pkt: Packet) -> Packet:
    """The last of BTH / RETH / ImmDt in ``pkt`` (where a switch trims)."""
    for layer in (ImmDt, RETH, MrcBTH):
        if pkt.haslayer(layer):
            return pkt[layer]
    raise ValueError("no BTH in the packet")


def trimmed(pkt: Packet) -> Packet:
    """``pkt`` as a trimming switch leaves it: cut after its last transport header, no ICRC, IPv6 and
    UDP lengths fixed, outer DSCP TRIMMED with the ECN bits kept (forwarding rewrites not applied)."""
    out = Ether(bytes(pkt))
    last_transport_header(out).remove_payload()
    outer = out[IPv6]
    outer.tc = F.DSCP_TRIMMED << 2 | outer.tc & 0b11
    for ip in _layers(out, IPv6):
        ip.plen = None
    out[UDP].len = None
    out[UDP].chksum = 0
    out[MrcBTH].icrc = None
    return Ether(bytes(out))


def _layers(pkt: Packet, cls: type[Packet]) -> list[Packet]:
    found, layer = [], pkt
    while not isinstance(layer, NoPayload):
        if isinstance(layer, cls):
            found.append(layer)
        layer = layer.payload
    return found


def transport_fields(pkt: Packet) -> tuple:
    """What a switch must never change in BTH / RETH / ImmDt: compare sent and received with it."""
    bth = pkt[MrcBTH]
    fields: tuple = (bth.opcode, bth.pkey, bth.dqpn, bth.psn, bth.ackreq)
    if pkt.haslayer(RETH):
        fields += (pkt[RETH].va, pkt[RETH].rkey, pkt[RETH].dma_len)
    if pkt.haslayer(ImmDt):
        fields += (pkt[ImmDt].imm,)
    return fields


def fill_hop(pkt: Packet, record: MrcTelemetryRecord) -> Packet:
    """``pkt`` after a switch wrote ``record`` into its telemetry option: record[hop_count] filled and
    hop_count incremented (tests take the record's measured values from the packet they received)."""
    out = Ether(bytes(pkt))
    opt = telemetry_option(out)
    if opt is None:
        raise ValueError("the packet has no telemetry option")
    if opt.hop_count >= min(opt.max_hops, len(opt.records)):
        raise ValueError("the telemetry option is full: a switch writes nothing")
    records = [r.copy() for r in opt.records]
    records[opt.hop_count] = record.copy()
    opt.records = records
    opt.hop_count += 1
    return out


def explain(got: bytes, exp: Packet) -> str:
    """A failure message for two frames that should be equal: both decoded, field by field."""
    return (f"\nexpected:\n{Ether(bytes(exp)).show2(dump=True)}\n"
            f"received:\n{Ether(got).show2(dump=True)}")
