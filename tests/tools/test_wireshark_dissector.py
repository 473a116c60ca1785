"""tools/wireshark/mrc.lua in tshark: every MRC packet kind the codec builds decodes to the codec's
values, trimmed packets are not malformed, filters work, and the documented install line works."""
from __future__ import annotations

import ipaddress
import os
import struct
import subprocess
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap
from tshark_mrc import LUA, TSHARK, compare, tshark_cmd, tshark_fields

from mrc.wire import codec as C
from mrc.wire import formats as F
from mrc.wire.layers import MrcBTH

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed (apt-get install tshark)")

SRC = ipaddress.IPv6Address("fd00::1").packed
DST = ipaddress.IPv6Address("fd00::2").packed
CARRIER = ipaddress.IPv6Address("fc00:0:101:201:301:2::").packed


def _with_hops(frame: bytes, hops: list[tuple[int, int, int, int, int, int, int]]) -> bytes:
    """Fill the telemetry option of an SRv6 frame as switches would (records, hop count)."""
    b = bytearray(frame)
    opt = F.ETH_LEN + F.IPV6_LEN + 2
    b[opt + 3] = len(hops)
    for i, (sw, ip, ep, ts, lat, qd, qid) in enumerate(hops):
        struct.pack_into(">IHHIII", b, opt + 6 + i * F.TELEMETRY_RECORD_LEN, sw, ip, ep, ts, lat, qd << 8 | qid)
    return bytes(b)


def sample_frames() -> list[bytes]:
    """One frame of every kind: data with telemetry, trimmed, SACK, plain ACK, probes, PORT_STATUS, STEV."""
    tel = C.Encap("srv6", SRC, DST, CARRIER, ev_index=5, telemetry=True)
    e = C.Encap("srv6", SRC, DST, CARRIER, ev_index=6)
    back = C.Encap("srv6", DST, SRC, ipaddress.IPv6Address("fc00:0:102:202:302:1::").packed, ev_index=1)
    data = C.encode_data(tel, F.OP_WRITE_FIRST, 0x123, 0xABCDEF, 0x7F0000001000, 0x55, 8192, b"a" * 64)
    sack = C.AckInfo(cum_psn=5, sack_base=3, bitmap=(1 << 255) | 0b1011, trigger_psn=9,
                     flags=F.SACK_FLAG_MRC | F.SACK_FLAG_TRIM | F.SACK_FLAG_ECN_ECHO, service_time_ns=1234,
                     received_bytes=(1 << 40) + 7, ev_echo=0xC0050005, ecn_psns=[4], trim_psns=[6, 7])
    return [
        _with_hops(data, [(3, 1, 2, 1000, 7, 5, 0), (1, 1, 2, 1009, 12, 70000, 7)]),
        C.trim_packet(C.encode_data(e, F.OP_WRITE_MIDDLE, 0x123, 17, 0x1000, 0x55, 8192, b"b" * 512)),
        C.trim_packet(C.encode_data(e, F.OP_WRITE_LAST_IMM, 0x123, 18, 0x1200, 0x55, 8192, b"c" * 9, imm=0xFEED)),
        C.encode_ack(back, 0x77, 9, msn=3, sack=sack),
        C.encode_ack(back, 0x77, 10, msn=4),
        C.encode_probe(e, F.OP_PROBE_REQ, C.ProbeInfo(42, 1, 0, 123456789012, 0, 0)),
        C.encode_probe(e, F.OP_PROBE_RESP, C.ProbeInfo(42, 2, F.PROBE_FLAG_SERVICE_TIME, 123456789012, 555,
                                                       0xC0060006)),
        C.encode_port_status(e, C.PortStatusInfo(43, 2, 0b10)),
        C.encode_data(C.Encap("stev", SRC, DST, 0xBEEF1234), F.OP_WRITE_ONLY_IMM, 0x456, 7, 0x2000, 0x66, 4,
                      b"abcd", imm=0xDEADBEEF),
    ]


@pytest.fixture
def pcap(tmp_path: Path) -> tuple[Path, list[bytes]]:
    frames = sample_frames()
    path = tmp_path / "mrc.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    return path, frames


def test_every_kind_decodes_to_the_codec_values(pcap) -> None:
    path, frames = pcap
    rows = tshark_fields(path)
    assert len(rows) == len(frames)
    kinds = compare(frames, rows)
    assert kinds == {"data": 2, "telemetry": 1, "trimmed": 2, "sack": 1, "ack": 1, "probe": 2, "port_status": 1}
    assert rows[0]["mrc.telemetry.hop.queue_depth"] == [5, 70000]  # 24-bit field, not cut to 16
    assert rows[0]["mrc.usid.id"] == [0x101, 0x201, 0x301, 0x2]


def _shown(path: Path, flt: str) -> list[int]:
    out = subprocess.run(tshark_cmd("-r", str(path), "-Y", flt, "-T", "fields", "-e", "frame.number"),
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return [int(x) for x in out.split()]


def test_display_filters(pcap) -> None:
    path, _ = pcap
    assert _shown(path, "mrc.sack") == [4]
    assert _shown(path, "mrc.sack.trim_psn == 7") == [4]
    assert _shown(path, "mrc.trimmed") == [2, 3]  # the field is on trimmed packets only
    assert _shown(path, "mrc.trimmed == 1") == [2, 3]
    assert _shown(path, "mrc.probe") == [6, 7]
    assert _shown(path, "mrc.probe.response == 1") == [7]
    assert _shown(path, "mrc.port_status.up_mask == 2") == [8]
    assert _shown(path, "mrc.telemetry.hop.switch_id == 1") == [1]
    assert _shown(path, "mrc.usid.id == 0x0301") == [1, 2, 3, 6, 7, 8]
    assert _shown(path, "mrc") == list(range(1, 10))


def test_trimmed_packet_is_not_malformed(pcap) -> None:
    path, _ = pcap
    assert _shown(path, "_ws.malformed") == []
    text = subprocess.run(tshark_cmd("-r", str(path), "-Y", "frame.number == 2", "-V"), capture_output=True,
                          text=True, timeout=60, check=True).stdout
    assert "Malformed" not in text and "Invariant CRC" not in text  # no ICRC invented from RETH bytes
    assert "TRIMMED RDMA WRITE Middle" in text and "Payload trimmed by a switch" in text


def test_summary_lines(pcap) -> None:
    path, _ = pcap
    out = subprocess.run(tshark_cmd("-r", str(path), "-T", "fields", "-e", "_ws.col.Protocol", "-e", "_ws.col.Info"),
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    assert all(line.startswith("MRC\t") for line in out)
    assert "SACK QP=0x000077 cum=5 trigger=9" in out[3]
    assert "PORT_STATUS id=43 up=[2] of 2" in out[7]


def test_documented_install_line(tmp_path: Path, pcap) -> None:
    """docs/visualize.md's one-liner puts the plugin where tshark looks for personal plugins."""
    path, _ = pcap
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    line = next(x for x in (Path(__file__).resolve().parents[2] / "docs" / "visualize.md").read_text().splitlines()
                if "cp tools/wireshark/mrc.lua" in x)
    subprocess.run(["bash", "-c", line.strip().strip("`")], cwd=LUA.parents[2], env=env, check=True, timeout=30)
    assert (home / ".local/lib/wireshark/plugins/mrc.lua").is_file()
    out = subprocess.run([str(TSHARK), "-r", str(path), "-Y", "mrc.sack", "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, timeout=60, env=env, check=True).stdout
    assert out.split() == ["4"]


def test_resend_dscp_as_wireshark_decodes_it(tmp_path: Path) -> None:
    """A packet resent after a loss verdict (``encode_data(..., dscp=F.DSCP_RESEND)``): Wireshark's own
    IPv6 dissector reads DSCP 34 on the outer header (and the inner one in SRv6 mode), its InfiniBand
    dissector reads the BTH, and mrc.lua marks it mrc.resend; the first transmission has the data DSCP
    and no mrc.resend.  The ICRC stays valid (RoCEv2 masks the traffic class out of it)."""
    e = C.Encap("srv6", SRC, DST, CARRIER, ev_index=6)
    s = C.Encap("stev", SRC, DST, 0xBEEF1234)
    frames = [C.encode_data(e, F.OP_WRITE_MIDDLE, 0x123, 17, 0x1000, 0x55, 8192, b"b" * 512),
              C.encode_data(e, F.OP_WRITE_MIDDLE, 0x123, 17, 0x1000, 0x55, 8192, b"b" * 512, dscp=F.DSCP_RESEND),
              C.encode_data(s, F.OP_WRITE_ONLY, 0x456, 7, 0x2000, 0x66, 4, b"abcd", dscp=F.DSCP_RESEND)]
    path = tmp_path / "resend.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    out = subprocess.run(tshark_cmd("-r", str(path), "-T", "fields", "-E", "separator=;", "-e", "ipv6.tclass.dscp",
                                    "-e", "infiniband.bth.psn", "-e", "mrc.resend"),
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    rows = [line.split(";") for line in out]
    assert [r[0] for r in rows] == [f"{F.DSCP_DATA},{F.DSCP_DATA}", f"{F.DSCP_RESEND},{F.DSCP_RESEND}",
                                    str(F.DSCP_RESEND)]
    assert [r[1] for r in rows] == ["17", "17", "7"]
    assert [r[2] for r in rows] == ["", "1", "1"]
    assert _shown(path, "mrc.resend") == [2, 3] and _shown(path, "_ws.malformed") == []
    assert all(Ether(f)[MrcBTH].icrc_ok() for f in frames)


def test_infiniband_fields_of_writes_without_an_iba_reth(tmp_path: Path) -> None:
    """MRC puts a RETH on every data packet; the InfiniBand layout of WRITE Middle, Last and Last with
    Immediate has none.  With mrc.lua loaded, Wireshark's own ``infiniband.*`` fields of those packets
    must still be right: the immediate (not the RETH's first 4 bytes), the payload (without the RETH)
    and the ICRC; the RETH stays under ``mrc.reth.*``.  A CNP (RC baseline) is named."""
    e = C.Encap("srv6", SRC, DST, CARRIER, ev_index=6)
    s = C.Encap("stev", SRC, DST, 0xBEEF1234)
    payload = bytes(range(48))
    frames = [C.encode_data(e, F.OP_WRITE_MIDDLE, 0x123, 17, 0x7F0000001000, 0x55, 8192, payload),
              C.encode_data(e, F.OP_WRITE_LAST, 0x123, 18, 0x7F0000001030, 0x55, 8192, payload),
              C.encode_data(e, F.OP_WRITE_LAST_IMM, 0x123, 19, 0x7F0000001060, 0x55, 8192, payload, imm=0xFEEDF00D),
              C.encode_data(s, F.OP_WRITE_LAST_IMM, 0x456, 7, 0x2000, 0x66, 4, b"abcd", imm=0x01020304),
              C.encode_cnp(e, 0x123)]
    path = tmp_path / "writes.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    fields = ["infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.immdt", "data.len",
              "infiniband.invariant.crc", "mrc.reth.va", "mrc.immdt", "_ws.col.Info"]
    out = subprocess.run(tshark_cmd("-r", str(path), "-T", "fields", "-E", "separator=;", "-E", "occurrence=f",
                                    *[a for f in fields for a in ("-e", f)]),
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    rows = [dict(zip(fields, line.split(";"), strict=True)) for line in out]
    for row, raw, (op, psn, imm, n, va) in zip(rows[:4], frames[:4], [
            (F.OP_WRITE_MIDDLE, 17, None, 48, 0x7F0000001000), (F.OP_WRITE_LAST, 18, None, 48, 0x7F0000001030),
            (F.OP_WRITE_LAST_IMM, 19, 0xFEEDF00D, 48, 0x7F0000001060), (F.OP_WRITE_LAST_IMM, 7, 0x01020304, 4, 0x2000)],
            strict=True):
        assert (int(row["infiniband.bth.opcode"]), int(row["infiniband.bth.psn"])) == (op, psn)
        assert (int(row["infiniband.immdt"], 16) if row["infiniband.immdt"] else None) == imm
        assert int(row["data.len"]) == n  # the payload alone, not the RETH
        assert int(row["infiniband.invariant.crc"], 16) == int.from_bytes(raw[-4:], "big")
        assert int(row["mrc.reth.va"], 16) == va
        assert (int(row["mrc.immdt"], 16) if row["mrc.immdt"] else None) == imm
    assert rows[4]["_ws.col.Info"] == "MRC CNP"
    assert _shown(path, "_ws.malformed") == []
    # the preference for captures of other RoCEv2 traffic: the InfiniBand layout as Wireshark reads it
    out = subprocess.run(tshark_cmd("-o", "mrc_roce.mrc_reth:FALSE", "-r", str(path), "-Y", "frame.number == 3",
                                    "-T", "fields", "-E", "occurrence=f", "-e", "infiniband.immdt", "-e", "data.len"),
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out == ["00007f00", str(16 + 48)]  # the RETH's first 4 bytes as the immediate, the rest as payload


def test_rnr_nak_sack_and_pkey(tmp_path: Path) -> None:
    """MRC's RNR NAK (a SACK whose AETH syndrome is 001 + the timer code) says so in the summary, and the
    BTH's P_Key (the QP's, on the wire since 2026-12-06) is mrc.bth.pkey, trimmed packets included."""
    back = C.Encap("stev", DST, SRC, 0xBEEF1234)
    e = C.Encap("srv6", SRC, DST, CARRIER, ev_index=6)
    sack = C.AckInfo(cum_psn=5, sack_base=6, bitmap=0b101, trigger_psn=5, flags=F.SACK_FLAG_MRC)
    frames = [C.encode_ack(back, 0x77, 5, F.AETH_RNR_NAK | 12, 3, sack, pkey=0x8001),
              C.encode_ack(back, 0x77, 7, msn=3, sack=sack, pkey=0x8001),
              C.trim_packet(C.encode_data(e, F.OP_WRITE_MIDDLE, 0x123, 17, 0x1000, 0x55, 8192, b"b" * 512,
                                          pkey=0x8002))]
    path = tmp_path / "rnr.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    out = subprocess.run(tshark_cmd("-r", str(path), "-T", "fields", "-e", "mrc.bth.pkey", "-e", "mrc.aeth.syndrome",
                                    "-e", "_ws.col.Info"),
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    rows = [line.split("\t") for line in out]
    assert [int(r[0], 0) for r in rows] == [0x8001, 0x8001, 0x8002]
    assert int(rows[0][1], 0) == 0x2C and "RNR NAK (timer 12) SACK QP=0x000077 cum=5 trigger=5" in rows[0][2]
    assert "RNR" not in rows[1][2] and "SACK QP=0x000077" in rows[1][2]


def test_a_carrier_ends_at_its_last_non_zero_usid(tmp_path: Path) -> None:
    """fc00:0:101:0:202:: still has a uSID after the zero one: the switches shift it on (the carrier
    ends only where the whole Argument is zero, RFC 9800 4.1.1), so the dissector shows 3 uSIDs, the
    zero one included, not 1 (it stopped at the first zero until 2026-12-06)."""
    carrier = ipaddress.IPv6Address("fc00:0:101:0:202::").packed
    frame = C.encode_data(C.Encap("srv6", SRC, DST, carrier, ev_index=1), F.OP_WRITE_ONLY, 0x123, 1, 0x1000,
                          0x55, 4, b"abcd")
    path = tmp_path / "carrier.pcap"
    wrpcap(str(path), [Ether(frame)])
    out = subprocess.run(tshark_cmd("-r", str(path), "-T", "fields", "-E", "aggregator=,", "-e", "mrc.usid.id",
                                    "-e", "mrc.usid.count", "-e", "mrc.usid.active"),
                         capture_output=True, text=True, timeout=60, check=True).stdout.split("\t")
    assert [int(x, 0) for x in out[0].split(",")] == [0x101, 0, 0x202]
    assert int(out[1]) == 3 and int(out[2], 0) == 0x101
