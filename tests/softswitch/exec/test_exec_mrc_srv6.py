"""p4src/mrc_switch.p4's SRv6 steps in process (softswitch's pipeline, no network): where a uSID
carrier ends (RFC 9800 4.1.1: the whole Argument, not only the next uSID), a uN shift past an SRH the
program cannot parse, and an SRH behind Hop-by-Hop / Destination Options headers (RFC 8200 4.1 order)."""
from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

import pytest
from exec_rig import INSERT, Rig
from p4.v1 import p4runtime_pb2
from scapy.layers.inet6 import (
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrSegmentRouting,
    PadN,
    RouterAlert,
)
from scapy.layers.l2 import Ether

from controller import p4contract as P4
from controller import usid as U
from mrc.wire import formats as F

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "ptf_tests"))
from base.mrc_packets import rewrite, srv6_packet, trimmed, with_ext, with_tlv

BLOCK = 0xFC000000
MY = 0x0101
SWITCH_MAC = 0x00AA00000001


def addr(v: int) -> str:
    return str(ipaddress.IPv6Address(v))


def mac(v: int) -> str:
    return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))


@pytest.fixture(scope="module")
def rig() -> Rig:
    r = Rig(REPO / "p4src" / "mrc_switch.p4")
    r.entry("usid_un", {"block_usid": ("exact", U.top_of(BLOCK, MY))}, r.action("un"))
    r.entry("my_sid", {"sid": ("exact", int(ipaddress.IPv6Address("fc00:ffff::1")))}, r.action("srv6_end"))
    for usid, port in ((0x0777, 3), (0x0202, 4)):
        route(r, U.compose(BLOCK, usid), 48, port)
    route(r, U.compose(BLOCK), 32, 5)  # the block with an empty active uSID: whatever a shift leaves
    route(r, int(ipaddress.IPv6Address("2001:db8::")), 32, 6)
    # the CPU port gets probes ending here: every packet leaving there is a PacketIn
    cs = p4runtime_pb2.CloneSessionEntry(session_id=P4.POSTCARD_SESSION_ID)
    cs.replicas.add(egress_port=P4.CPU_PORT, instance=1)
    r.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))
    return r


def route(r: Rig, prefix: int, plen: int, port: int) -> None:
    r.entry("route_v6", {"dst_addr": ("lpm", prefix, plen)},
            r.action("set_next_hop", port=port, dst_mac=0x00BB00000000 + port, src_mac=SWITCH_MAC))


def send(r: Rig, pkt, port: int = 1):
    """(egress port, frame) of the one frame ``pkt`` leaves with, or (None, drop reason index)."""
    drops = list(r.state.counter("drop_reasons").packets)
    res = r.pipeline.ingress(bytes(pkt), port, 0)
    if res.dropped or not res.to_tm:
        now = r.state.counter("drop_reasons").packets
        (reason,) = [i for i, n in enumerate(now) if n != drops[i]]
        return None, reason
    (out,) = r.pipeline.egress(res.to_tm[0], 1).frames
    return out.port, out.data


def forwarded(pkt, port: int, **kw):
    return port, bytes(rewrite(pkt, eth_dst=mac(0x00BB00000000 + port), eth_src=mac(SWITCH_MAC), **kw))


# ---- where the carrier ends -----------------------------------------------------------------------
@pytest.mark.parametrize("rest", [(0, 0x0202), (0, 0, 0, 0, 0x0202)])
def test_un_shifts_while_any_argument_bit_is_set(rig, rest):
    """block|ours|0|..|X: the next uSID is 0 but the Argument is not; RFC 9800 4.1.1 shifts (and looks
    the new DA up), it does not end the carrier here."""
    dst = U.compose(BLOCK, MY)
    for i, u in enumerate(rest):
        dst |= u << (128 - 48 - 16 * (i + 1))
    assert U.next_usid(dst) == 0 and U.argument(dst) != 0
    pkt = srv6_packet(addr(dst))
    assert send(rig, pkt) == forwarded(pkt, 5, ip_dst=addr(U.shift(dst)))


def test_carrier_ends_where_the_argument_is_zero(rig):
    data = srv6_packet(addr(U.compose(BLOCK, MY)))
    assert send(rig, data) == (None, P4.DROP_REASON_LOCAL_NOT_PROBE)
    probe = srv6_packet(addr(U.compose(BLOCK, MY)), opcode=F.OP_PROBE_REQ)
    port, _ = send(rig, probe)
    assert port == P4.CPU_PORT


# ---- a uN shift does not need the SRH ---------------------------------------------------------------
def _unparsable_srhs(dst: str):
    five = srv6_packet(dst, segments=[f"2001:db8::{i}" for i in range(5)])
    long_tlv = with_tlv(srv6_packet(dst, segments=["2001:db8::9"]), 128)  # TLVs over 120 bytes
    other_type = srv6_packet(dst, segments=["2001:db8::9"])
    other_type[IPv6ExtHdrSegmentRouting].type = 3
    bad_sl = srv6_packet(dst, segments=["2001:db8::9"], segments_left=2)
    return [Ether(bytes(p)) for p in (five, long_tlv, other_type, bad_sl)]


def test_un_shift_forwards_past_an_srh_the_parser_cannot_take(rig):
    """RFC 9800 4.1.1 shifts before any of the SRH's own checks (RFC 8986 4.1 S02-S09): an SRH with
    5 segments, over-long TLVs or segments left beyond its list does not stop a shift; the SRH leaves
    untouched."""
    dst = U.compose(BLOCK, MY, 0x0202)
    five, long_tlv, _, bad_sl = _unparsable_srhs(addr(dst))
    for pkt in (five, long_tlv, bad_sl):
        assert send(rig, pkt) == forwarded(pkt, 4, ip_dst=addr(U.shift(dst)))


@pytest.mark.parametrize("segments_left", [0, 1])
def test_un_shift_forwards_past_a_routing_header_of_another_type(rig, segments_left):
    """RFC 9800 4.1.1 shifts before any extension header but Hop-by-Hop and Destination Options is
    processed: a routing header of another type is never processed at a shift, so RFC 8200 4.4's
    discard (segments left != 0) is not reached; the packet is shifted on, that header untouched.
    (Stop 50 briefly dropped it with segments left; Linux's NEXT-C-SID End shifts too.)"""
    dst = U.compose(BLOCK, MY, 0x0202)
    _, _, other_type, _ = _unparsable_srhs(addr(dst))
    raw = bytearray(bytes(other_type))
    assert raw[14 + 6] == 43 and raw[14 + 40 + 2:14 + 40 + 4] == b"\x03\x01"  # type 3, SL 1, after IPv6
    raw[14 + 40 + 3] = segments_left
    pkt = Ether(bytes(raw))
    assert send(rig, pkt) == forwarded(pkt, 4, ip_dst=addr(U.shift(dst)))


def test_end_with_an_srh_the_parser_cannot_take_is_a_parser_error(rig):
    for pkt in _unparsable_srhs(addr(U.compose(BLOCK, MY))) + _unparsable_srhs("fc00:ffff::1"):
        assert send(rig, pkt) == (None, P4.DROP_REASON_PARSER_ERROR)


@pytest.mark.parametrize("pad", [8, 40, 120])
@pytest.mark.parametrize("sid", ["usid", "full"])
def test_end_with_srh_tlvs(rig, pad, sid):
    """RFC 8754 2.1: TLVs may follow the segment list (hdr_ext_len > 2 * (last_entry + 1)); End reads
    the segment list, leaves the TLVs as they are (up to 120 bytes of them are parsed)."""
    nxt = U.compose(BLOCK, 0x0777, 0x0888)
    dst = addr(U.compose(BLOCK, MY)) if sid == "usid" else "fc00:ffff::1"
    pkt = with_tlv(srv6_packet(dst, segments=[addr(nxt), "2001:db8::5"], segments_left=1), pad)
    assert pkt[IPv6ExtHdrSegmentRouting].len == 4 + pad // 8
    assert send(rig, pkt) == forwarded(pkt, 3, ip_dst=addr(nxt), segments_left=0)


def test_trim_behind_an_srh_with_tlvs(rig):
    r = Rig(REPO / "p4src" / "mrc_switch.p4")
    r.entry("usid_un", {"block_usid": ("exact", U.top_of(BLOCK, MY))}, r.action("un"))
    route(r, U.compose(BLOCK, 0x0202), 48, 4)
    r.entry("queue_thresholds", {"port": ("exact", 4)},
            r.action("set_queue_thresholds", trim_threshold=0, drop_threshold=P4.QDEPTH_ESTIMATE_MAX))
    dst = U.compose(BLOCK, MY, 0x0202)
    pkt = with_tlv(srv6_packet(addr(dst), segments=["2001:db8::9"], segments_left=1, payload_len=512), 16)
    port, out = send(r, pkt)
    assert port == 4
    exp = trimmed(rewrite(pkt, eth_dst=mac(0x00BB00000004), eth_src=mac(SWITCH_MAC), ip_dst=addr(U.shift(dst))))
    assert out == bytes(exp)


# ---- SRH behind Hop-by-Hop / Destination Options ------------------------------------------------------
def _hbh():
    return IPv6ExtHdrHopByHop(options=[RouterAlert()])  # 8 bytes


def _dest(n: int = 4):
    """Destination Options of 4 + n bytes (one PadN)."""
    return IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * n)])


@pytest.mark.parametrize("exts", [("hbh",), ("dest",), ("hbh", "dest"), ("dest_long",)])
@pytest.mark.parametrize("sid", ["usid", "full"])
def test_end_finds_the_srh_behind_options_headers(rig, exts, sid):
    """End (carrier ends at our uSID, or a full SID of my_sid) with SL 1 behind Hop-by-Hop and/or
    Destination Options: SL -> 0, DA = Segment List[0] (RFC 8754 4.3.1.1); the options untouched."""
    make = {"hbh": _hbh, "dest": _dest, "dest_long": lambda: _dest(8 * 16 - 4)}  # 128 bytes, the most parsed
    nxt = U.compose(BLOCK, 0x0777, 0x0888)
    dst = addr(U.compose(BLOCK, MY)) if sid == "usid" else "fc00:ffff::1"
    pkt = with_ext(srv6_packet(dst, segments=[addr(nxt)], segments_left=1), *(make[e]() for e in exts))
    assert send(rig, pkt) == forwarded(pkt, 3, ip_dst=addr(nxt), segments_left=0)


def test_end_with_telemetry_then_destination_options(rig):
    from mrc.wire.layers import HBHOptMrcTelemetry

    nxt = U.compose(BLOCK, 0x0777, 0x0888)
    base = srv6_packet(addr(U.compose(BLOCK, MY)), segments=[addr(nxt)], segments_left=1,
                       telemetry=HBHOptMrcTelemetry(max_hops=4))
    hbh = base[IPv6ExtHdrHopByHop]
    srh = hbh.payload.copy()
    pkt = Ether(bytes(Ether(dst=base.dst, src=base.src)
                      / IPv6(src=base[IPv6].src, dst=base[IPv6].dst, tc=base[IPv6].tc, hlim=64, nh=0)
                      / IPv6ExtHdrHopByHop(nh=60, options=hbh.options) / _dest() / srh))
    port, out = send(rig, pkt)
    assert port == 3
    got = Ether(out)
    assert (got[IPv6].dst, got[IPv6ExtHdrSegmentRouting].segleft) == (addr(nxt), 0)
    assert got[IPv6ExtHdrHopByHop].options[0].hop_count == 1  # the telemetry record was filled
    assert bytes(got[IPv6ExtHdrDestOpt])[:8] == bytes(pkt[IPv6ExtHdrDestOpt])[:8]


def test_options_header_too_long_to_parse(rig):
    """A Destination Options header beyond the 128 bytes parsed: a parser error only where the packet
    ends at our SID; transit and a uN shift forward it unchanged."""
    nxt = addr(U.compose(BLOCK, 0x0777, 0x0888))
    long = _dest(8 * 17 - 4)  # 136 bytes, hdr_ext_len 16
    end = with_ext(srv6_packet(addr(U.compose(BLOCK, MY)), segments=[nxt], segments_left=1), long)
    assert send(rig, end) == (None, P4.DROP_REASON_PARSER_ERROR)
    shift = with_ext(srv6_packet(addr(U.compose(BLOCK, MY, 0x0202))), long)
    assert send(rig, shift) == forwarded(shift, 4, ip_dst=addr(U.compose(BLOCK, 0x0202)))
    transit = with_ext(srv6_packet("2001:db8::7", segments=[nxt], segments_left=1), long)
    assert send(rig, transit) == forwarded(transit, 6)


def test_trim_counts_options_headers_in_the_payload_length(rig):
    """A data packet trimmed behind Hop-by-Hop and Destination Options: the outer payload length
    covers them (and the SRH, the inner IPv6 and the 36 bytes of UDP+BTH+RETH)."""
    r = Rig(REPO / "p4src" / "mrc_switch.p4")
    r.entry("usid_un", {"block_usid": ("exact", U.top_of(BLOCK, MY))}, r.action("un"))
    route(r, U.compose(BLOCK, 0x0202), 48, 4)
    r.entry("queue_thresholds", {"port": ("exact", 4)},
            r.action("set_queue_thresholds", trim_threshold=0, drop_threshold=P4.QDEPTH_ESTIMATE_MAX))
    dst = U.compose(BLOCK, MY, 0x0202)
    pkt = with_ext(srv6_packet(addr(dst), segments=["2001:db8::9"], segments_left=1, payload_len=512),
                   _hbh(), _dest(12))
    port, out = send(r, pkt)
    assert port == 4
    exp = trimmed(rewrite(pkt, eth_dst=mac(0x00BB00000004), eth_src=mac(SWITCH_MAC), ip_dst=addr(U.shift(dst))))
    assert out == bytes(exp)
    assert Ether(out)[IPv6].plen == len(out) - 14 - 40 == 8 + 16 + 24 + 40 + 36
