"""Wireshark agrees with what we claim about our packets (skipped when tshark is not installed)."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

from mrc.wire import codec as C
from mrc.wire import formats as F

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed (apt-get install tshark)")

SRC = ipaddress.IPv6Address("fd00::1").packed
DST = ipaddress.IPv6Address("fd00::2").packed
CARRIER = "fc00:0:101:201:301:2::"
SEGMENT = "fc00:0:9:1::"
FIELDS = ["ipv6.dst", "ipv6.routing.srh.addr", "infiniband.bth.opcode", "infiniband.bth.destqp",
          "infiniband.bth.psn", "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
          "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.invariant.crc", "infiniband.immdt",
          "udp.srcport", "ipv6.flow", "ipv6.opt.type"]


def _tshark(pcap: Path) -> list[dict[str, str]]:
    cmd = [TSHARK, "-r", str(pcap), "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=|",
           *[a for f in FIELDS for a in ("-e", f)]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    return [dict(zip(FIELDS, line.split("|"))) for line in out.splitlines()]


def test_tshark_decodes_srv6_and_stev_packets(tmp_path: Path) -> None:
    srv6 = C.Encap("srv6", SRC, DST, ipaddress.IPv6Address(CARRIER).packed + ipaddress.IPv6Address(SEGMENT).packed,
                   ev_index=5, telemetry=True)
    stev = C.Encap("stev", SRC, DST, 0xBEEF1234)
    pkts = [
        C.encode_data(srv6, F.OP_WRITE_FIRST, 0x123, 0xABCDEF, 0x7F0000001000, 0x55, 8192, b"a" * 64),
        C.encode_data(stev, F.OP_WRITE_ONLY_IMM, 0x456, 7, 0x2000, 0x66, 4, b"abcd", imm=0xDEADBEEF),
        C.encode_ack(C.Encap("stev", DST, SRC, 1), 0x789, 9, syndrome=F.AETH_NAK_PSN_SEQ_ERR, msn=77),
    ]
    pcap = tmp_path / "mrc.pcap"
    wrpcap(str(pcap), [Ether(p) for p in pkts])
    rows = _tshark(pcap)
    assert len(rows) == 3
    a, b, c = rows
    # SRv6: outer destination = the EV's uSID carrier, inner = the peer GID, one SRH segment, telemetry option
    assert a["ipv6.dst"].split(",") == [CARRIER, "fd00::2"]
    assert a["ipv6.routing.srh.addr"] == SEGMENT
    assert a["ipv6.opt.type"] == "0x3e"
    assert (int(a["infiniband.bth.opcode"]), int(a["infiniband.bth.destqp"], 16), int(a["infiniband.bth.psn"])) \
        == (F.OP_WRITE_FIRST, 0x123, 0xABCDEF)
    assert (int(a["infiniband.reth.va"], 16), int(a["infiniband.reth.r_key"], 16),
            int(a["infiniband.reth.dmalen"])) == (0x7F0000001000, 0x55, 8192)
    assert int(a["udp.srcport"]) == F.SRV6_INNER_SPORT_BASE | 5
    # STEV: EV high 16 bits in the UDP source port, low 16 in the flow label
    assert b["ipv6.dst"] == "fd00::2" and int(b["udp.srcport"]) == 0xBEEF and int(b["ipv6.flow"], 16) == 0x1234
    assert (int(b["infiniband.bth.opcode"]), int(b["infiniband.bth.destqp"], 16), int(b["infiniband.bth.psn"])) \
        == (F.OP_WRITE_ONLY_IMM, 0x456, 7)
    assert b["infiniband.immdt"].split(",")[0].lower() == "deadbeef"
    # ACK/NAK: AETH syndrome and MSN
    assert int(c["infiniband.bth.opcode"]) == F.OP_ACK
    assert (int(c["infiniband.aeth.syndrome"]), int(c["infiniband.aeth.msn"])) == (0x60, 77)
    # ICRC: tshark (4.0) shows the 4 trailer bytes as a big-endian number and does not validate them; they
    # must be the last 4 bytes of the frame, and those bytes are the CRC-32 little-endian (as rxe and scapy
    # put it), which scapy's own RoCEv2 BTH recomputes independently (test_wire_codec.py)
    for row, raw in ((a, pkts[0]), (b, pkts[1])):
        assert int(row["infiniband.invariant.crc"], 16) == int.from_bytes(raw[-4:], "big")
