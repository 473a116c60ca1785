"""Fast bytes encoders/decoders for MRC packets (the data path; layouts in ``mrc.wire.formats``).

Encoding goes through an :class:`Encap` built once per (peer, EV): it holds the precomputed outer
headers so per-packet work is a few ``struct.pack`` calls and one CRC.  :func:`decode_frame` turns
any received frame into a flat :class:`Frame`; on malformed input it raises only :class:`WireError`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from mrc.wire import formats as F
from mrc.wire.icrc import icrc_of, verify_icrc


class WireError(ValueError):
    """A received frame is malformed, truncated, not RoCEv2, or fails its ICRC."""


_ETH = struct.Struct(">6s6sH")
_IP6 = struct.Struct(">IHBB16s16s")
_UDP = struct.Struct(">HHHH")
_BTH = struct.Struct(">BBHII")  # opcode, se/m/pad/tver, pkey, resv8a|dest_qp, ackreq|psn
_RETH = struct.Struct(">QII")
_U32 = struct.Struct(">I")
_AETH = struct.Struct(">I")
_SACK = struct.Struct(">IIIIQI32s")
_PROBE = struct.Struct(">IBBHQII")
_PORT_STATUS = struct.Struct(">IBB2xQ")
_TREC = struct.Struct(">IHHIII")

ENCAP_SRV6 = "srv6"
ENCAP_STEV = "stev"
ENCAP_UDP = "udp"
ENCAPS = (ENCAP_SRV6, ENCAP_STEV, ENCAP_UDP)


# ---------------------------------------------------------------------------------------------
# Plain records
# ---------------------------------------------------------------------------------------------
@dataclass(slots=True)
class AckInfo:
    """Contents of the MRC SACK header (see ``formats`` for the layout and semantics)."""

    cum_psn: int
    sack_base: int = 0
    bitmap: int = 0  # bit i = PSN sack_base + i arrived
    trigger_psn: int = 0
    flags: int = F.SACK_FLAG_MRC
    service_time_ns: int = 0
    received_bytes: int = 0
    ev_echo: int = 0
    ecn_psns: list[int] = field(default_factory=list)
    trim_psns: list[int] = field(default_factory=list)


@dataclass(slots=True)
class ProbeInfo:
    """Probe request/response payload [ours]."""

    req_id: int
    port: int = 0
    flags: int = 0
    sender_ts_ns: int = 0
    service_time_ns: int = 0
    ev_echo: int = 0


@dataclass(slots=True)
class PortStatusInfo:
    """PORT_STATUS payload [ours]: which of the sender's NIC ports (1-based) are up."""

    req_id: int
    n_ports: int
    up_mask: int
    flags: int = 0  # PORT_STATUS_FLAG_CTL: a controller request that wants an answer


@dataclass(slots=True)
class TelemetryRecord:
    """One per-hop record of the Hop-by-Hop telemetry option."""

    switch_id: int
    ingress_port: int
    egress_port: int
    ingress_ts_us: int
    hop_latency_us: int
    queue_depth: int
    queue_id: int


class Frame:
    """A decoded packet: the fields the transport needs, flat (one object per packet)."""

    __slots__ = (
        "ack_req",
        "ce",
        "dest_qp",
        "dma_len",
        "dscp",
        "dst_gid",
        "fecn",
        "flow_label",
        "imm",
        "msn",
        "opcode",
        "outer_dst",
        "payload",
        "pkey",
        "port_status",
        "probe",
        "psn",
        "raw",
        "rkey",
        "sack",
        "se",
        "sport",
        "src_gid",
        "syndrome",
        "telemetry_off",
        "trimmed",
        "va",
    )

    def __init__(self) -> None:
        self.imm = None
        self.sack = None
        self.probe = None
        self.port_status = None
        self.payload = b""
        self.va = self.rkey = self.dma_len = 0
        self.syndrome = self.msn = 0
        self.outer_dst = None
        self.telemetry_off = -1

    @property
    def entropy(self) -> int:
        """The 32-bit entropy the packet arrived with: ``sport << 16 | flow_label & 0xFFFF``."""
        return (self.sport << 16) | (self.flow_label & 0xFFFF)

    def telemetry(self) -> tuple[int, list[TelemetryRecord]]:
        """(hop_count, filled records) of the Hop-by-Hop telemetry option; (0, []) if absent."""
        if self.telemetry_off < 0:
            return 0, []
        return decode_telemetry(self.raw, self.telemetry_off)


# ---------------------------------------------------------------------------------------------
# Encapsulation (precomputed per EV)
# ---------------------------------------------------------------------------------------------
def _hbh_telemetry() -> bytes:
    data = bytes((F.TELEMETRY_MAX_HOPS, 0, 0, 0)) + bytes(F.TELEMETRY_MAX_HOPS * F.TELEMETRY_RECORD_LEN)
    return bytes((0, F.HBH_TELEMETRY_EXT_LEN, F.HBH_OPT_TELEMETRY, F.TELEMETRY_OPT_DATA_LEN)) + data


class Encap:
    """Everything around the RoCE transport for one (peer, EV): Ethernet, outer/only IPv6, UDP entropy.

    ``ev`` is the EV value: bytes (SRv6: 16 B carrier [+ 16 B SRH segment]; STEV/UDP: an
    ``mrc_ctl_ev_t``, value from byte 0) or an int (STEV 32-bit, UDP 16-bit).  ``ev_index`` is echoed
    in SRv6 mode through the inner UDP source port.
    """

    __slots__ = (
        "_inner_nh",
        "_outer_ext",
        "_outer_nh",
        "dscp",
        "dst_gid",
        "eth",
        "flow_label",
        "hlim",
        "mode",
        "outer_dst",
        "segment",
        "sport",
        "src_gid",
        "telemetry",
    )

    def __init__(self, mode: str, src_gid: bytes, dst_gid: bytes, ev: bytes | int, *, ev_index: int = 0,
                 src_mac: bytes = b"\x02\0\0\0\0\1", dst_mac: bytes = b"\x02\0\0\0\0\2",
                 telemetry: bool = False, dscp: int = F.DSCP_DATA, hop_limit: int = F.DEFAULT_HOP_LIMIT):
        if mode not in ENCAPS:
            raise ValueError(f"encap mode must be one of {ENCAPS}, not {mode!r}")
        if len(src_gid) != 16 or len(dst_gid) != 16:
            raise ValueError("GIDs must be 16-byte IPv6 addresses")
        self.mode = mode
        self.eth = _ETH.pack(bytes(dst_mac), bytes(src_mac), F.ETHERTYPE_IPV6)
        self.src_gid, self.dst_gid = bytes(src_gid), bytes(dst_gid)
        self.dscp, self.hlim, self.telemetry = dscp, hop_limit, telemetry
        self.outer_dst = None
        self.segment = None
        hbh = _hbh_telemetry() if telemetry else b""
        if mode == ENCAP_SRV6:
            evb = bytes(ev) if not isinstance(ev, int) else ev.to_bytes(16, "big")
            if len(evb) not in (16, 32):
                raise ValueError("an SRv6 EV is 16 bytes (uSID carrier) or 32 (carrier + SRH segment)")
            self.outer_dst = evb[:16]
            self.sport = F.SRV6_INNER_SPORT_BASE | (ev_index & 0x3FFF)
            self.flow_label = ev_index & 0xFFFFF
            srh = b""
            if len(evb) == 32 and any(evb[16:]):
                self.segment = evb[16:]
                srh = bytes((F.NH_IPV6, F.SRH_ONE_SEG_EXT_LEN, F.SRH_TYPE, 1, 0, 0, 0, 0)) + self.segment
            if hbh:
                hbh = bytes((F.NH_ROUTING if srh else F.NH_IPV6,)) + hbh[1:]
            self._outer_ext = hbh + srh
            self._outer_nh = F.NH_HOP_BY_HOP if hbh else (F.NH_ROUTING if srh else F.NH_IPV6)
            self._inner_nh = F.NH_UDP
        else:
            # An int is the EV value itself (STEV 32 bits, UDP 16 bits).  Bytes are an mrc_ctl_ev_t as
            # mrc_ctl.h lays it out and mrc.ctl expands it: the value starts at byte 0 (STEV: bytes
            # 0-3; UDP: bytes 0-1, a 16-bit format's expansion), whatever the length.
            if isinstance(ev, int):
                v = ev if mode == ENCAP_STEV else ev << 16
            else:
                evb = bytes(ev)
                n = 4 if mode == ENCAP_STEV else 2
                if len(evb) < n:
                    raise ValueError(f"a {mode} EV given as bytes needs at least {n} bytes, got {len(evb)}")
                v = int.from_bytes(evb[:n], "big") << (32 - 8 * n)
            if mode == ENCAP_STEV:  # high 16 bits: UDP source port; low 16: flow label low bits
                self.sport, self.flow_label = (v >> 16) & 0xFFFF, v & 0xFFFF
            else:
                self.sport, self.flow_label = (v >> 16) & 0xFFFF, 0
            self._outer_ext = (bytes((F.NH_UDP,)) + hbh[1:]) if hbh else b""
            self._outer_nh = None
            self._inner_nh = F.NH_HOP_BY_HOP if hbh else F.NH_UDP

    def wrap(self, transport: bytes, ecn: int, dscp: int | None = None) -> bytes:
        """Frame a transport packet (BTH onwards, no ICRC): add UDP, IPv6(s), Ethernet and the ICRC;
        ``dscp``: this packet's DSCP, if not the encap's."""
        tc = ((self.dscp if dscp is None else dscp) << 2) | ecn
        udp_len = F.UDP_LEN + len(transport) + F.ICRC_LEN
        udp = _UDP.pack(self.sport, F.ROCE_UDP_PORT, udp_len, 0)
        if self._outer_nh is None:  # STEV / UDP: one IPv6 header, maybe with Hop-by-Hop telemetry
            ext = self._outer_ext
            ip6 = _IP6.pack((6 << 28) | (tc << 20) | self.flow_label, len(ext) + udp_len, self._inner_nh,
                            self.hlim, self.src_gid, self.dst_gid)
            crc = icrc_of(ip6, udp + transport[: F.BTH_LEN], transport[F.BTH_LEN:])
            return b"".join((self.eth, ip6, ext, udp, transport, crc.to_bytes(4, "little")))
        inner = _IP6.pack((6 << 28) | (tc << 20), udp_len, F.NH_UDP, self.hlim, self.src_gid, self.dst_gid)
        crc = icrc_of(inner, udp + transport[: F.BTH_LEN], transport[F.BTH_LEN:])
        ext = self._outer_ext
        outer = _IP6.pack((6 << 28) | (tc << 20) | self.flow_label, len(ext) + F.IPV6_LEN + udp_len,
                          self._outer_nh, self.hlim, self.src_gid, self.outer_dst)
        return b"".join((self.eth, outer, ext, inner, udp, transport, crc.to_bytes(4, "little")))


def bth(opcode: int, dest_qp: int, psn: int, ack_req: bool = False, se: bool = False,
        pkey: int = F.DEFAULT_PKEY) -> bytes:
    """Pack a BTH (transport version 0, no padding, resv8a zero)."""
    return _BTH.pack(opcode, 0x80 if se else 0, pkey, dest_qp & F.QPN_MASK,
                     (0x80000000 if ack_req else 0) | (psn & F.PSN_MASK))


def encode_data(encap: Encap, opcode: int, dest_qp: int, psn: int, va: int, rkey: int, dma_len: int,
                payload: bytes | memoryview, imm: int | None = None, ack_req: bool = False,
                ecn: int = F.ECN_ECT0, dscp: int | None = None, pkey: int = F.DEFAULT_PKEY) -> bytes:
    """An RDMA WRITE packet: BTH + RETH (every packet, so it can be placed alone) [+ ImmDt] + payload;
    ``dscp``: the packet's DSCP if not the encap's (a resend after a loss: ``F.DSCP_RESEND``);
    ``pkey``: the QP's P_Key (``QpAttr.pkey``)."""
    parts = [bth(opcode, dest_qp, psn, ack_req, se=imm is not None, pkey=pkey), _RETH.pack(va, rkey, dma_len)]
    if opcode in F.IMM_OPCODES:
        parts.append(_U32.pack((imm or 0) & 0xFFFFFFFF))
    parts.append(payload)
    return encap.wrap(b"".join(parts), ecn, dscp)


def encode_ack(encap: Encap, dest_qp: int, psn: int, syndrome: int = F.AETH_ACK, msn: int = 0,
               sack: AckInfo | None = None, pkey: int = F.DEFAULT_PKEY) -> bytes:
    """An ACK/NAK: BTH ACK + AETH [+ MRC SACK header]; ``psn`` is the PSN being acknowledged."""
    parts = [bth(F.OP_ACK, dest_qp, psn, pkey=pkey), _AETH.pack((syndrome << 24) | (msn & F.AETH_MSN_MASK))]
    if sack is not None:
        parts.append(encode_sack(sack))
    return encap.wrap(b"".join(parts), F.ECN_NOT_ECT)


def encode_cnp(encap: Encap, dest_qp: int, pkey: int = F.DEFAULT_PKEY) -> bytes:
    """A RoCEv2 CNP to the requester's QP ``dest_qp``: BTH opcode 0x81 with BECN set, PSN 0, 16
    reserved bytes; not ECN-capable (a notification must not itself be marked)."""
    head = _BTH.pack(F.OP_CNP, 0, pkey, F.BTH_BECN | (dest_qp & F.QPN_MASK), 0)
    return encap.wrap(head + bytes(F.CNP_LEN), F.ECN_NOT_ECT)


def encode_sack(s: AckInfo) -> bytes:
    """The MRC SACK header bytes."""
    ecn = s.ecn_psns[: F.SACK_MAX_LIST]
    trim = s.trim_psns[: F.SACK_MAX_LIST]
    head = _SACK.pack(((s.flags | F.SACK_FLAG_MRC) << 24) | (s.cum_psn & F.PSN_MASK),
                      (len(ecn) << 24) | (s.sack_base & F.PSN_MASK),
                      (len(trim) << 24) | (s.trigger_psn & F.PSN_MASK),
                      s.service_time_ns & 0xFFFFFFFF, s.received_bytes & 0xFFFFFFFFFFFFFFFF,
                      s.ev_echo & 0xFFFFFFFF, (s.bitmap & ((1 << F.SACK_BITMAP_BITS) - 1)).to_bytes(32, "big"))
    lst = [p & F.PSN_MASK for p in ecn] + [p & F.PSN_MASK for p in trim]
    return head + struct.pack(f">{len(lst)}I", *lst)


def encode_probe(encap: Encap, opcode: int, probe: ProbeInfo) -> bytes:
    """PROBE_REQ (0xC0) or PROBE_RESP (0xC1) [ours]."""
    if opcode not in (F.OP_PROBE_REQ, F.OP_PROBE_RESP):
        raise ValueError("probe opcode must be PROBE_REQ or PROBE_RESP")
    body = _PROBE.pack(probe.req_id & 0xFFFFFFFF, probe.flags, probe.port, 0, probe.sender_ts_ns,
                       probe.service_time_ns & 0xFFFFFFFF, probe.ev_echo & 0xFFFFFFFF)
    return encap.wrap(bth(opcode, F.PROBE_QPN, 0) + body, F.ECN_NOT_ECT)


def encode_port_status(encap: Encap, ps: PortStatusInfo) -> bytes:
    """PORT_STATUS (0xC2) [ours]: tells the peer which of our NIC ports are up."""
    body = _PORT_STATUS.pack(ps.req_id & 0xFFFFFFFF, ps.n_ports, ps.flags & 0xFF, ps.up_mask)
    return encap.wrap(bth(F.OP_PORT_STATUS, F.PROBE_QPN, 0) + body, F.ECN_NOT_ECT)


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------
def _walk(data: bytes | memoryview) -> tuple[list[int], int, int, int]:
    """Find (IPv6 header offsets, telemetry option offset or -1, UDP offset, end of IP packet)."""
    n = len(data)
    if n < F.ETH_LEN + F.IPV6_LEN:
        raise WireError("truncated: shorter than Ethernet + IPv6")
    if (data[12] << 8 | data[13]) != F.ETHERTYPE_IPV6:
        raise WireError("not IPv6 (ethertype)")
    ips: list[int] = []
    tel = -1
    off = F.ETH_LEN
    end = n
    nh = F.NH_IPV6
    for _ in range(8):  # bounded header chain
        if nh == F.NH_IPV6:
            if off + F.IPV6_LEN > end:
                raise WireError("truncated IPv6 header")
            if data[off] >> 4 != 6:
                raise WireError("IP version is not 6")
            plen = data[off + 4] << 8 | data[off + 5]
            if off + F.IPV6_LEN + plen > end:
                raise WireError("IPv6 payload length exceeds the frame")
            end = off + F.IPV6_LEN + plen
            ips.append(off)
            nh = data[off + 6]
            off += F.IPV6_LEN
        elif nh == F.NH_HOP_BY_HOP or nh == F.NH_ROUTING:
            if off + 8 > end:
                raise WireError("truncated extension header")
            hlen = (data[off + 1] + 1) * 8
            if off + hlen > end:
                raise WireError("extension header exceeds the packet")
            if nh == F.NH_HOP_BY_HOP and hlen >= F.HBH_TELEMETRY_LEN and data[off + 2] == F.HBH_OPT_TELEMETRY \
                    and data[off + 3] == F.TELEMETRY_OPT_DATA_LEN:
                tel = off
            nh = data[off]
            off += hlen
        elif nh == F.NH_UDP:
            if off + F.UDP_LEN + F.BTH_LEN > end:
                raise WireError("truncated UDP/BTH")
            if (data[off + 2] << 8 | data[off + 3]) != F.ROCE_UDP_PORT:
                raise WireError("UDP destination port is not 4791")
            return ips, tel, off, end
        else:
            raise WireError(f"unexpected next header {nh}")
    raise WireError("IPv6 header chain too long")


def decode_frame(data: bytes) -> Frame:
    """Decode an Ethernet frame carrying an MRC/RoCEv2 packet; raise :class:`WireError` if malformed."""
    try:
        return _decode(data)
    except WireError:
        raise
    except (struct.error, IndexError, ValueError) as exc:  # defensive: never anything else
        raise WireError(f"malformed packet: {exc}") from None


def _decode(data: bytes) -> Frame:
    ips, tel, udp, end = _walk(data)
    fr = Frame()
    fr.raw = data
    fr.telemetry_off = tel
    o = ips[0]
    fr.dscp = _outer_dscp(data, o)
    ce = False
    for ip in ips:
        if (data[ip + 1] >> 4) & 3 == F.ECN_CE:
            ce = True
    fr.ce = ce
    inner = ips[-1]
    if len(ips) > 1:
        fr.outer_dst = bytes(data[o + 24 : o + 40])
    fr.src_gid = bytes(data[inner + 8 : inner + 24])
    fr.dst_gid = bytes(data[inner + 24 : inner + 40])
    fr.flow_label = _U32.unpack_from(data, inner)[0] & 0xFFFFF
    fr.sport = data[udp] << 8 | data[udp + 1]
    udp_len = data[udp + 4] << 8 | data[udp + 5]
    if udp + udp_len != end:
        raise WireError("UDP length does not match the IPv6 payload length")
    b = udp + F.UDP_LEN
    op, flags, fr.pkey, qp, apsn = _BTH.unpack_from(data, b)
    if op not in F.KNOWN_OPCODES:
        raise WireError(f"unsupported BTH opcode 0x{op:02x}")
    if flags & 0x0F:
        raise WireError("unsupported BTH transport version")
    fr.opcode, fr.se = op, bool(flags & 0x80)
    fr.fecn = bool(qp & 0x80000000)
    fr.dest_qp, fr.ack_req, fr.psn = qp & F.QPN_MASK, bool(apsn & 0x80000000), apsn & F.PSN_MASK
    h = b + F.BTH_LEN
    # DSCP 11 marks a trimmed packet only on RDMA WRITEs, the only packets a switch trims
    # (congestion.p4); any other packet may carry it (a controller request's req_tc is any DSCP)
    fr.trimmed = fr.dscp == F.DSCP_TRIMMED and op in F.DATA_OPCODES
    if fr.trimmed:
        body_end = end
    else:
        if not verify_icrc(data, inner, udp, end):
            raise WireError("bad ICRC")
        body_end = end - F.ICRC_LEN
    if op in F.DATA_OPCODES:
        if h + F.RETH_LEN > body_end:
            raise WireError("truncated RETH")
        fr.va, fr.rkey, fr.dma_len = _RETH.unpack_from(data, h)
        h += F.RETH_LEN
        if op in F.IMM_OPCODES:
            if h + F.IMMDT_LEN > body_end:
                raise WireError("truncated ImmDt")
            fr.imm = _U32.unpack_from(data, h)[0]
            h += F.IMMDT_LEN
        fr.payload = memoryview(data)[h:body_end] if not fr.trimmed else b""
    elif op == F.OP_ACK:
        if h + F.AETH_LEN > body_end:
            raise WireError("truncated AETH")
        a = _AETH.unpack_from(data, h)[0]
        fr.syndrome, fr.msn = a >> 24, a & F.AETH_MSN_MASK
        h += F.AETH_LEN
        if body_end - h >= F.SACK_FIXED_LEN and data[h] & F.SACK_FLAG_MRC:
            fr.sack = _decode_sack(data, h, body_end)
        elif h != body_end:
            raise WireError("trailing bytes after AETH")
    elif op == F.OP_CNP:
        if body_end - h != F.CNP_LEN:
            raise WireError("CNP payload has the wrong length")
    elif op in (F.OP_PROBE_REQ, F.OP_PROBE_RESP):
        if body_end - h != F.PROBE_LEN:
            raise WireError("probe payload has the wrong length")
        rid, pfl, port, _r, ts, svc, echo = _PROBE.unpack_from(data, h)
        fr.probe = ProbeInfo(rid, port, pfl, ts, svc, echo)
    else:  # PORT_STATUS
        if body_end - h != F.PORT_STATUS_LEN:
            raise WireError("PORT_STATUS payload has the wrong length")
        rid, n_ports, pflags, mask = _PORT_STATUS.unpack_from(data, h)
        fr.port_status = PortStatusInfo(rid, n_ports, mask, pflags)
    return fr


def _decode_sack(data: bytes, h: int, end: int) -> AckInfo:
    w0, w1, w2, svc, rx, echo, bm = _SACK.unpack_from(data, h)
    n_ecn, n_trim = w1 >> 24, w2 >> 24
    if n_ecn > F.SACK_MAX_LIST or n_trim > F.SACK_MAX_LIST:
        raise WireError("SACK list count too large")
    lst_off = h + F.SACK_FIXED_LEN
    if lst_off + 4 * (n_ecn + n_trim) != end:
        raise WireError("SACK list length does not match the packet")
    lst = struct.unpack_from(f">{n_ecn + n_trim}I", data, lst_off)
    return AckInfo(cum_psn=w0 & F.PSN_MASK, sack_base=w1 & F.PSN_MASK, bitmap=int.from_bytes(bm, "big"),
                   trigger_psn=w2 & F.PSN_MASK, flags=w0 >> 24, service_time_ns=svc, received_bytes=rx,
                   ev_echo=echo, ecn_psns=[p & F.PSN_MASK for p in lst[:n_ecn]],
                   trim_psns=[p & F.PSN_MASK for p in lst[n_ecn:]])


def decode_telemetry_record(data: bytes, off: int = 0) -> TelemetryRecord:
    """One 20-byte hop record at ``off`` (in the Hop-by-Hop option, or a postcard's payload)."""
    if len(data) - off < F.TELEMETRY_RECORD_LEN:
        raise WireError(f"telemetry record: {len(data) - off} bytes, need {F.TELEMETRY_RECORD_LEN}")
    sw, ip, ep, ts, lat, qd = _TREC.unpack_from(data, off)
    return TelemetryRecord(sw, ip, ep, ts, lat, qd >> 8, qd & 0xFF)


def decode_telemetry(data: bytes, off: int) -> tuple[int, list[TelemetryRecord]]:
    """Decode the telemetry option of the Hop-by-Hop header at ``off``: (hop_count, filled records)."""
    d = off + 4
    max_hops, hop_count = data[d], data[d + 1]
    n = min(hop_count, max_hops, F.TELEMETRY_MAX_HOPS)
    return hop_count, [decode_telemetry_record(data, d + 4 + i * F.TELEMETRY_RECORD_LEN) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# What the network does to packets (used by the simulator and switch tests)
# ---------------------------------------------------------------------------------------------
def mark_ce(data: bytes) -> bytes:
    """Set ECN CE in the outermost IPv6 header if it is ECN-capable; return the packet unchanged if not."""
    o = F.ETH_LEN + 1
    if len(data) <= o or (data[o] >> 4) & 3 == F.ECN_NOT_ECT:
        return data
    b = bytearray(data)
    b[o] |= 0x30
    return bytes(b)


CONTROL_OPCODES = frozenset({F.OP_ACK, F.OP_CNP, F.OP_PROBE_REQ, F.OP_PROBE_RESP, F.OP_PORT_STATUS})


def _outer_dscp(data: bytes | memoryview, o: int) -> int:
    """The DSCP of the IPv6 header at offset ``o`` (traffic class bits 4-9 of the header)."""
    return ((data[o] & 0x0F) << 2) | (data[o + 1] >> 6)


def priority_queue(data: bytes) -> int:
    """The v1model priority ``mrc_switch.p4`` gives ``data`` at a switch port (``congestion.p4``):
    ``F.TRIM_PRIORITY`` (the top queue) for control packets (ACK/NAK, CNP, MRC probes and port status;
    trimmed headers share that queue), ``F.RESEND_PRIORITY`` for MRC data resent after a loss verdict
    (outer DSCP ``F.DSCP_RESEND``), ``F.DATA_PRIORITY`` for other data and malformed packets.  One
    parse, for the simulator's per-packet path (a trimmed header is made and queued by the simulated
    switch itself)."""
    try:
        ips, _tel, udp, _end = _walk(data)
    except WireError:
        return F.DATA_PRIORITY
    b = udp + F.UDP_LEN
    if b >= len(data):
        return F.DATA_PRIORITY
    op = data[b]
    if op in CONTROL_OPCODES:
        return F.TRIM_PRIORITY
    if op in F.DATA_OPCODES and _outer_dscp(data, ips[0]) == F.DSCP_RESEND:
        return F.RESEND_PRIORITY
    return F.DATA_PRIORITY


def trim_packet(data: bytes) -> bytes | None:
    """Cut an RDMA WRITE packet after its transport headers, fix the lengths, set DSCP TRIMMED.

    Returns None for packets that are not trimmable (non-data opcodes, malformed packets).
    """
    try:
        ips, _tel, udp, _end = _walk(data)
    except WireError:
        return None
    b = udp + F.UDP_LEN
    op = data[b]
    if op not in F.DATA_OPCODES:
        return None
    cut = b + F.BTH_LEN + F.RETH_LEN + (F.IMMDT_LEN if op in F.IMM_OPCODES else 0)
    if cut > len(data):
        return None
    out = bytearray(data[:cut])
    for ip in ips:
        plen = cut - ip - F.IPV6_LEN
        out[ip + 4], out[ip + 5] = plen >> 8, plen & 0xFF
    ulen = cut - udp
    out[udp + 4], out[udp + 5] = ulen >> 8, ulen & 0xFF
    o = ips[0]
    tc = (((out[o] & 0x0F) << 4) | (out[o + 1] >> 4)) & 0x03 | (F.DSCP_TRIMMED << 2)
    out[o] = (out[o] & 0xF0) | (tc >> 4)
    out[o + 1] = ((tc & 0x0F) << 4) | (out[o + 1] & 0x0F)
    return bytes(out)
