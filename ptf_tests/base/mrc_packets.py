"""Packets of the MRC fabric for PTF tests: SRv6-mode and STEV-mode RoCEv2, the telemetry
Hop-by-Hop option and the trimmed form, built byte-exact from the formats in docs/dataplane.md.

Until mrc/wire's scapy layers are used here, the transport headers are explicit bytes after a
scapy Ether/IPv6 so PTF can still print the packets it compares.
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field

from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

ROCEV2_PORT = 4791
NH_HOPOPT, NH_UDP, NH_IPV6, NH_ROUTING = 0, 17, 41, 43
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = range(0x06, 0x0C)
ACK, PROBE_REQ, PROBE_RESP, PORT_STATUS = 0x11, 0xC0, 0xC1, 0xC2
DSCP_TRIMMED = 11
TELEMETRY_OPT_TYPE, TELEMETRY_OPT_LEN, TELEMETRY_RECORDS = 0x3E, 84, 4
HBH_LEN = 88
RECORD = struct.Struct("!IHHIII")  # queue_depth(24)|queue_id(8) packed in the last word


def ip6(addr: str) -> bytes:
    return ipaddress.IPv6Address(addr).packed


def carrier(block: int, *usids: int) -> str:
    """uSID carrier: 32-bit block then 16-bit uSIDs, zero-filled, as an IPv6 address string."""
    if len(usids) > 6:
        raise ValueError("a 128-bit carrier holds at most 6 uSIDs after a 32-bit block")
    value = block << 96
    for i, u in enumerate(usids):
        value |= u << (80 - 16 * i)
    return str(ipaddress.IPv6Address(value))


@dataclass
class TelemetryRecord:
    switch_id: int = 0
    ingress_port: int = 0
    egress_port: int = 0
    ingress_ts_us: int = 0
    hop_latency_us: int = 0
    queue_depth: int = 0
    queue_id: int = 0

    def pack(self) -> bytes:
        return RECORD.pack(self.switch_id, self.ingress_port, self.egress_port, self.ingress_ts_us,
                           self.hop_latency_us, (self.queue_depth << 8) | self.queue_id)

    @classmethod
    def unpack(cls, data: bytes) -> TelemetryRecord:
        sw, ip, ep, ts, lat, last = RECORD.unpack(data[:20])
        return cls(sw, ip, ep, ts, lat, last >> 8, last & 0xFF)


@dataclass
class Telemetry:
    max_hops: int = 4
    hop_count: int = 0
    flags: int = 0
    records: list[TelemetryRecord] = field(default_factory=lambda: [TelemetryRecord()] * 4)

    def pack(self, next_hdr: int) -> bytes:
        body = struct.pack("!BBBBBBBB", next_hdr, 10, TELEMETRY_OPT_TYPE, TELEMETRY_OPT_LEN,
                           self.max_hops, self.hop_count, self.flags, 0)
        return body + b"".join(r.pack() for r in self.records)

    @classmethod
    def unpack(cls, data: bytes) -> Telemetry:
        if len(data) < HBH_LEN or data[2] != TELEMETRY_OPT_TYPE:
            raise ValueError("not a telemetry Hop-by-Hop header")
        recs = [TelemetryRecord.unpack(data[8 + 20 * i: 28 + 20 * i]) for i in range(4)]
        return cls(data[4], data[5], data[6], recs)


def bth(opcode: int, dest_qp: int = 0x12, psn: int = 0, pkey: int = 0xFFFF) -> bytes:
    return struct.pack("!BBHII", opcode, 0, pkey, dest_qp & 0xFFFFFF, psn & 0xFFFFFF)


def transport(opcode: int, payload_len: int = 64, dest_qp: int = 0x12, psn: int = 0) -> bytes:
    """BTH and the headers MRC puts after it for ``opcode``, then payload and a dummy ICRC."""
    hdrs = bth(opcode, dest_qp, psn)
    if WRITE_FIRST <= opcode <= WRITE_ONLY_IMM:
        hdrs += struct.pack("!QII", 0x1000_0000 + psn * 4096, 0x1234, payload_len)  # RETH
        if opcode in (WRITE_LAST_IMM, WRITE_ONLY_IMM):
            hdrs += struct.pack("!I", 0xCAFE0001)  # ImmDt
    elif opcode == ACK:
        hdrs += struct.pack("!I", psn & 0xFFFFFF)  # AETH: syndrome 0 (ACK), MSN
        payload_len = 0
    return hdrs + bytes(i & 0xFF for i in range(payload_len)) + b"\xde\xad\xbe\xef"


def udp(sport: int, l4: bytes, dport: int = ROCEV2_PORT) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + len(l4), 0) + l4


def ipv6_bytes(src: str, dst: str, next_hdr: int, payload: bytes, tc: int = 0, flow_label: int = 0,
               hop_limit: int = 64) -> bytes:
    word = (6 << 28) | (tc << 20) | flow_label
    return struct.pack("!IHBB", word, len(payload), next_hdr, hop_limit) + ip6(src) + ip6(dst) + payload


def srh(next_hdr: int, segments: list[str], segments_left: int) -> bytes:
    """SRH type 4 with ``segments`` in wire order (List[0] first = the last segment)."""
    n = len(segments)
    return struct.pack("!BBBBBBH", next_hdr, 2 * n, 4, segments_left, n - 1, 0, 0) + \
        b"".join(ip6(s) for s in segments)


def frame(ip_src: str, ip_dst: str, next_hdr: int, ext: bytes, *, tc: int = 0, flow_label: int = 0,
          hop_limit: int = 64, eth_dst: str = "00:00:00:00:00:01",
          eth_src: str = "00:00:00:00:00:02") -> Packet:
    """Ethernet / IPv6 (scapy, for readable diffs) / everything after it as bytes."""
    return (Ether(dst=eth_dst, src=eth_src, type=0x86DD)
            / IPv6(src=ip_src, dst=ip_dst, nh=next_hdr, tc=tc, fl=flow_label, hlim=hop_limit,
                   plen=len(ext))
            / Raw(ext))


def stev_packet(src: str, dst: str, *, sport: int = 0xC000, flow_label: int = 0, opcode: int = WRITE_ONLY,
                payload_len: int = 64, tc: int = 0x6A, hop_limit: int = 64,
                telemetry: Telemetry | None = None, dest_qp: int = 0x12, **eth) -> Packet:
    """STEV/UDP mode: Ethernet / IPv6 [/ telemetry HBH] / UDP / BTH / ... (tc 0x6a = DSCP 26, ECT(0))."""
    l4 = udp(sport, transport(opcode, payload_len, dest_qp))
    if telemetry is not None:
        return frame(src, dst, NH_HOPOPT, telemetry.pack(NH_UDP) + l4, tc=tc, flow_label=flow_label,
                     hop_limit=hop_limit, **eth)
    return frame(src, dst, NH_UDP, l4, tc=tc, flow_label=flow_label, hop_limit=hop_limit, **eth)


def srv6_packet(outer_dst: str, *, outer_src: str = "fc00::1", inner_src: str = "2001:db8::1",
                inner_dst: str = "2001:db8::2", segments: list[str] | None = None,
                segments_left: int | None = None, telemetry: Telemetry | None = None,
                opcode: int = WRITE_ONLY, payload_len: int = 64, sport: int = 0xC000,
                flow_label: int = 0, tc: int = 0x6A, hop_limit: int = 64, **eth) -> Packet:
    """SRv6 mode: Ethernet / outer IPv6 [/ telemetry HBH] [/ SRH] / inner IPv6 / UDP / BTH / ..."""
    inner = ipv6_bytes(inner_src, inner_dst, NH_UDP, udp(sport, transport(opcode, payload_len)), tc=tc,
                       flow_label=flow_label)
    ext = inner
    first = NH_IPV6
    if segments is not None:
        sl = len(segments) if segments_left is None else segments_left
        ext = srh(NH_IPV6, segments, sl) + ext
        first = NH_ROUTING
    if telemetry is not None:
        ext = telemetry.pack(first) + ext
        first = NH_HOPOPT
    return frame(outer_src, outer_dst, first, ext, tc=tc, flow_label=flow_label, hop_limit=hop_limit, **eth)


def rewrite(pkt: Packet, *, eth_dst: str | None = None, eth_src: str | None = None,
            ip_dst: str | None = None, hop_limit_delta: int = -1, tc: int | None = None,
            raw: bytes | None = None) -> Packet:
    """The packet as the switch should send it: MACs, DA, hop limit, traffic class, tail bytes."""
    out = pkt.copy()
    if eth_dst is not None:
        out[Ether].dst = eth_dst
    if eth_src is not None:
        out[Ether].src = eth_src
    if ip_dst is not None:
        out[IPv6].dst = ip_dst
    out[IPv6].hlim = out[IPv6].hlim + hop_limit_delta
    if tc is not None:
        out[IPv6].tc = tc
    if raw is not None:
        out[Raw].load = raw
        out[IPv6].plen = len(raw)
    return out


def ext_bytes(pkt: Packet) -> bytes:
    """Everything after the outer IPv6 header."""
    return bytes(pkt[Raw].load)


def parse_frame(data: bytes) -> dict:
    """Split a received Ethernet/IPv6 MRC frame into the parts tests look at."""
    out: dict = {"eth": data[:14], "ipv6": data[14:54]}
    word, plen, nh, hlim = struct.unpack("!IHBB", data[14:22])
    out.update(tc=(word >> 20) & 0xFF, flow_label=word & 0xFFFFF, payload_len=plen, next_hdr=nh,
               hop_limit=hlim, dst=str(ipaddress.IPv6Address(data[38:54])))
    rest = data[54:]
    if nh == NH_HOPOPT and len(rest) >= HBH_LEN and rest[2] == TELEMETRY_OPT_TYPE:
        out["telemetry"] = Telemetry.unpack(rest)
        nh, rest = rest[0], rest[HBH_LEN:]
    if nh == NH_ROUTING:
        n = (rest[1] // 2)
        out["srh_segments_left"] = rest[3]
        nh, rest = rest[0], rest[8 + 16 * n:]
    if nh == NH_IPV6:
        out["inner_payload_len"] = struct.unpack("!H", rest[4:6])[0]
        nh, rest = rest[6], rest[40:]
    if nh == NH_UDP:
        out["udp_len"] = struct.unpack("!H", rest[4:6])[0]
        out["opcode"] = rest[8] if len(rest) > 8 else None
        out["l4"] = rest
    return out
