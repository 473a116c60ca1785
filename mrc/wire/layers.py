"""Scapy layers for every MRC header, so ``Ether(raw)`` shows a captured MRC packet field by field.

Reused from scapy: ``IPv6``, ``IPv6ExtHdrHopByHop``, ``IPv6ExtHdrSegmentRouting``, ``UDP`` and
``scapy.contrib.roce.BTH``/``AETH``.  Added here: RETH, ImmDt, the MRC SACK header, probe and
PORT_STATUS payloads, the telemetry Hop-by-Hop option with its 4 records, and ``MrcBTH`` — scapy's BTH
with MRC's opcode names and no ICRC trailer on trimmed packets (which have none).  Layouts are those
of ``mrc.wire.formats``.
"""

# ruff: noqa: RUF012  (scapy declares layers with class-level fields_desc lists)
from __future__ import annotations

from scapy.contrib.roce import AETH, BTH, _bth_opcodes
from scapy.fields import (
    BitField,
    ByteEnumField,
    ByteField,
    ConditionalField,
    FieldListField,
    FlagsField,
    IntField,
    LongField,
    PacketListField,
    ShortField,
    X3BytesField,
    XBitField,
    XByteField,
    XIntField,
    XLongField,
    XShortField,
)
from scapy.layers import inet6
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Packet, Raw, bind_layers, split_layers

from mrc.wire import formats as F
from mrc.wire.icrc import icrc_bytes

MRC_OPCODES = dict(_bth_opcodes) | {
    F.OP_PROBE_REQ: "MRC_PROBE_REQ",
    F.OP_PROBE_RESP: "MRC_PROBE_RESP",
    F.OP_PORT_STATUS: "MRC_PORT_STATUS",
}


def outermost_ipv6(pkt: Packet) -> IPv6 | None:
    """The first IPv6 header of the packet ``pkt`` belongs to (walking up from any layer)."""
    # Walk up (during dissection the upper layers are not yet linked to their parents' payload),
    # keeping the last IPv6 seen; from the top layer itself, search down instead.
    outer = None
    layer = pkt
    while layer is not None:
        if isinstance(layer, IPv6):
            outer = layer
        top, layer = layer, layer.underlayer
    return outer if outer is not None else top.getlayer(IPv6)


def is_trimmed(pkt: Packet) -> bool:
    """True if the outer (or only) IPv6 header carries DSCP TRIMMED (11) on an RDMA WRITE: a switch cut
    the payload.  Other packets (ACKs, probes, a controller request's ``req_tc``) may carry DSCP 11 whole."""
    ip = outermost_ipv6(pkt)
    if ip is None or (ip.tc >> 2) != F.DSCP_TRIMMED:
        return False
    bth = pkt if isinstance(pkt, BTH) else pkt.getlayer(BTH)
    return bth is None or bth.opcode in F.DATA_OPCODES


def _has_icrc(pkt: Packet) -> bool:
    return not is_trimmed(pkt)


class MrcBTH(BTH):
    """scapy's RoCEv2 BTH with MRC's opcodes named, and no ICRC on a trimmed packet."""

    name = "BTH"
    match_subclass = True  # pkt[BTH] finds it
    fields_desc = [ByteEnumField("opcode", 0, MRC_OPCODES)] + [
        ConditionalField(f, _has_icrc) if f.name == "icrc" else f for f in BTH.fields_desc[1:]
    ]

    def post_build(self, p: bytes, pay: bytes) -> bytes:
        """Append the computed ICRC (as scapy's BTH does) unless the packet is trimmed."""
        if is_trimmed(self):
            return p + pay
        return super().post_build(p, pay)

    def compute_icrc(self, p: bytes) -> bytes:
        """ICRC bytes for ``p`` (this BTH, its payload and 4 ICRC bytes), as ``mrc.wire.icrc`` defines it.

        Unlike scapy's BTH this also works when a Hop-by-Hop header sits between IPv6 and UDP: the
        ICRC covers the 40-byte IPv6 header that carries UDP (masked), UDP, BTH and the payload.
        """
        udp = self.underlayer
        ip = udp.underlayer if isinstance(udp, UDP) else None
        while ip is not None and not isinstance(ip, IPv6):
            ip = ip.underlayer
        if ip is None:
            raise ValueError("an MRC BTH needs IPv6 / ... / UDP under it to compute the ICRC")
        copy = ip.copy()
        copy[UDP].payload = Raw(p)
        data = bytes(copy)
        udp_off = len(data) - len(p) - F.UDP_LEN
        head = F.UDP_LEN + F.BTH_LEN
        return icrc_bytes(data[: F.IPV6_LEN], data[udp_off: udp_off + head], data[udp_off + head: -F.ICRC_LEN])

    def icrc_ok(self) -> bool | None:
        """Whether the ICRC matches the packet (None on a trimmed packet, which has none)."""
        if is_trimmed(self) or self.icrc is None:
            return None
        return self.compute_icrc(bytes(self)) == self.icrc.to_bytes(4, "big")


class RETH(Packet):
    """RDMA Extended Transport Header: on every MRC data packet (each packet carries its address)."""

    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dma_len", 0)]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """ImmDt follows on WRITE_LAST_WITH_IMM / WRITE_ONLY_WITH_IMM."""
        bth = self.underlayer
        if isinstance(bth, BTH) and bth.opcode in F.IMM_OPCODES:
            return ImmDt
        return Raw


class ImmDt(Packet):
    """Immediate data of a WRITE with immediate."""

    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """The payload that follows is data."""
        return Raw


_SACK_FLAGS = ["RETX_ECHO", "ECN_ECHO", "TRIM", "b3", "b4", "b5", "b6", "MRC"]


class MrcSack(Packet):
    """[ours] MRC SACK header after AETH: cumulative PSN, 256-PSN bitmap, ECN and trim PSN lists."""

    name = "MRC SACK"
    fields_desc = [
        FlagsField("flags", F.SACK_FLAG_MRC, 8, _SACK_FLAGS),
        X3BytesField("cum_psn", 0),
        ByteField("n_ecn", None),
        X3BytesField("sack_base", 0),
        ByteField("n_trim", None),
        X3BytesField("trigger_psn", 0),
        IntField("service_time_ns", 0),
        LongField("received_bytes", 0),
        XIntField("ev_echo", 0),
        XBitField("bitmap", 0, F.SACK_BITMAP_BITS),
        FieldListField("ecn_psns", [], XIntField("", 0), count_from=lambda p: p.n_ecn),
        FieldListField("trim_psns", [], XIntField("", 0), count_from=lambda p: p.n_trim),
    ]

    def post_build(self, p: bytes, pay: bytes) -> bytes:
        """Fill the list counts when left as None."""
        b = bytearray(p)
        if self.n_ecn is None:
            b[4] = len(self.ecn_psns)
        if self.n_trim is None:
            b[8] = len(self.trim_psns)
        return bytes(b) + pay

    def acked_psns(self) -> list[int]:
        """The PSNs the bitmap reports as arrived: sack_base + i for each set bit i of the integer.

        This is what ``mrc.wire.codec`` puts on the wire (bit 0 = the last bit of the 32 bytes).
        """
        return [(self.sack_base + i) & F.PSN_MASK for i in range(F.SACK_BITMAP_BITS) if self.bitmap >> i & 1]



class MrcProbe(Packet):
    """[ours] PROBE_REQ / PROBE_RESP payload."""

    name = "MRC Probe"
    fields_desc = [
        IntField("req_id", 0),
        FlagsField("flags", 0, 8, ["SERVICE_TIME", "CTL", "PORT_STATUS_ACK", "b3", "b4", "b5", "b6", "b7"]),
        ByteField("port", 0),
        XShortField("reserved", 0),
        LongField("sender_ts_ns", 0),
        IntField("service_time_ns", 0),
        XIntField("ev_echo", 0),
    ]


class MrcPortStatus(Packet):
    """[ours] PORT_STATUS payload: which of the sender's ports are up (bit p-1 = port p)."""

    name = "MRC Port Status"
    fields_desc = [
        IntField("req_id", 0),
        ByteField("n_ports", 0),
        FlagsField("flags", 0, 8, ["CTL", "b1", "b2", "b3", "b4", "b5", "b6", "b7"]),
        XShortField("reserved", 0),
        XLongField("up_mask", 0),
    ]

    def up_ports(self) -> list[int]:
        """1-based numbers of the ports reported up."""
        return [p + 1 for p in range(64) if self.up_mask >> p & 1]


class MrcTelemetryRecord(Packet):
    """[ours] One per-hop record of the telemetry option (20 bytes)."""

    name = "MRC Telemetry Record"
    fields_desc = [
        XIntField("switch_id", 0),
        ShortField("ingress_port", 0),
        ShortField("egress_port", 0),
        IntField("ingress_ts_us", 0),
        IntField("hop_latency_us", 0),
        BitField("queue_depth", 0, 24),
        ByteField("queue_id", 0),
    ]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """Records are back to back: nothing of the rest belongs to this one."""
        return b"", s


def _empty_records() -> list[MrcTelemetryRecord]:
    return [MrcTelemetryRecord() for _ in range(F.TELEMETRY_MAX_HOPS)]


class HBHOptMrcTelemetry(inet6.HBHOptUnknown):
    """[ours] Telemetry Hop-by-Hop option 0x3E: max_hops, hop_count, flags and 4 pre-allocated records."""

    name = "MRC Telemetry Option"
    fields_desc = [
        XByteField("otype", F.HBH_OPT_TELEMETRY),
        ByteField("optlen", F.TELEMETRY_OPT_DATA_LEN),
        ByteField("max_hops", F.TELEMETRY_MAX_HOPS),
        ByteField("hop_count", 0),
        XByteField("flags", 0),
        XByteField("reserved", 0),
        PacketListField("records", None, MrcTelemetryRecord,
                        length_from=lambda p: p.optlen - 4),
    ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.records is None or (not args and "records" not in kwargs):
            self.records = _empty_records()

    def filled(self) -> list[MrcTelemetryRecord]:
        """The records switches have written (the first ``min(hop_count, max_hops)``)."""
        return list(self.records[: min(self.hop_count, self.max_hops, len(self.records))])


def telemetry_option(pkt: Packet) -> HBHOptMrcTelemetry | None:
    """The telemetry option of the packet's Hop-by-Hop header, if any."""
    hbh = pkt.getlayer(inet6.IPv6ExtHdrHopByHop)
    if hbh is None:
        return None
    for opt in hbh.options:
        if isinstance(opt, HBHOptMrcTelemetry):
            return opt
    return None


# ---- registration with scapy (what bind_layers is for) -------------------------------------------
inet6._hbhopts[F.HBH_OPT_TELEMETRY] = "MRC Telemetry"
inet6._hbhoptcls[F.HBH_OPT_TELEMETRY] = HBHOptMrcTelemetry
split_layers(UDP, BTH, dport=F.ROCE_UDP_PORT)
bind_layers(UDP, MrcBTH, dport=F.ROCE_UDP_PORT)
for _op in sorted(F.DATA_OPCODES):
    bind_layers(MrcBTH, RETH, opcode=_op)
bind_layers(MrcBTH, AETH, opcode=F.OP_ACK)
bind_layers(MrcBTH, MrcProbe, opcode=F.OP_PROBE_REQ)
bind_layers(MrcBTH, MrcProbe, opcode=F.OP_PROBE_RESP)
bind_layers(MrcBTH, MrcPortStatus, opcode=F.OP_PORT_STATUS)
bind_layers(AETH, MrcSack)

__all__ = [
    "MRC_OPCODES",
    "RETH",
    "HBHOptMrcTelemetry",
    "ImmDt",
    "MrcBTH",
    "MrcPortStatus",
    "MrcProbe",
    "MrcSack",
    "MrcTelemetryRecord",
    "is_trimmed",
    "outermost_ipv6",
    "telemetry_option",
]
