"""RoCEv2 invariant CRC (ICRC): CRC-32 over a masked pseudo header plus the transport packet.

As the RoCEv2 annex defines it (and as Linux rxe and scapy compute it): CRC-32 (the Ethernet/zlib
polynomial, reflected, init and final xor all ones) over 8 bytes of 0xFF (the pseudo LRH), the IPv6
header with traffic class, flow label and hop limit set to all ones, the UDP header with the checksum
set to all ones, the BTH with its resv8a byte (FECN, BECN, reserved) set to all ones, then the rest
of the transport headers and payload.  The result is appended little-endian.

[ours] IPv6 extension headers between the IPv6 header and UDP (the Hop-by-Hop telemetry option,
which switches rewrite) are left out of the CRC; the payload length field is covered as sent.
In SRv6 mode the ICRC covers the inner packet only: switches rewrite the outer header.
"""

from __future__ import annotations

import struct
import zlib

from mrc.wire.formats import BTH_LEN, IPV6_LEN, UDP_LEN

_PSEUDO_LRH_CRC = zlib.crc32(b"\xff" * 8)
_IP6_MASK_HEAD = b"\x6f\xff\xff\xff"  # version 6, traffic class and flow label all ones
_MASKED_HDRS = struct.Struct(">4sHBB32s")  # ip6 word0, payload_len, next_header, hop_limit, addrs


def icrc_of(ip6: bytes | memoryview, udp_bth: bytes | memoryview, rest: bytes | memoryview) -> int:
    """ICRC of a RoCEv2 packet given its IPv6 header (40 B), UDP+BTH (20 B) and everything after."""
    masked = _MASKED_HDRS.pack(_IP6_MASK_HEAD, (ip6[4] << 8) | ip6[5], ip6[6], 0xFF, bytes(ip6[8:40]))
    ub = bytearray(udp_bth[: UDP_LEN + BTH_LEN])
    ub[6] = ub[7] = 0xFF  # UDP checksum
    ub[UDP_LEN + 4] = 0xFF  # BTH resv8a
    crc = zlib.crc32(masked, _PSEUDO_LRH_CRC)
    crc = zlib.crc32(ub, crc)
    return zlib.crc32(rest, crc)


def icrc_bytes(ip6: bytes | memoryview, udp_bth: bytes | memoryview, rest: bytes | memoryview) -> bytes:
    """The 4 ICRC bytes as they go on the wire (little-endian)."""
    return icrc_of(ip6, udp_bth, rest).to_bytes(4, "little")


def verify_icrc(pkt: bytes | memoryview, ip6_off: int, udp_off: int, end: int) -> bool:
    """True if the 4 bytes before ``end`` are the ICRC of the RoCEv2 packet at ``ip6_off``."""
    mv = memoryview(pkt)
    if end - udp_off < UDP_LEN + BTH_LEN + 4 or udp_off - ip6_off < IPV6_LEN:
        return False
    got = int.from_bytes(mv[end - 4 : end], "little")
    want = icrc_of(mv[ip6_off : ip6_off + IPV6_LEN], mv[udp_off : udp_off + UDP_LEN + BTH_LEN],
                   mv[udp_off + UDP_LEN + BTH_LEN : end - 4])
    return got == want
