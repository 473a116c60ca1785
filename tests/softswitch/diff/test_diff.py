"""The differential harness: softswitch against scripts' expectations now, against bmv2 where
simple_switch_grpc and p4c-bm2-ss are installed (skipped here with the reason otherwise)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from softswitch.diff import compare, run_softswitch
from softswitch.diff.__main__ import main
from softswitch.diff.bmv2side import bmv2_missing
from softswitch.diff.script import Packet, Script, check_order, parse_script
from softswitch.frontend import load_program

EXEC_DATA = Path(__file__).resolve().parents[1] / "exec" / "data"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


def _issue16_script() -> Script:
    """exec_issue16.p4: @priority const entries and exit copy-out, with what bmv2 must send."""
    def pkt(op, a=0, b=0, r=0, out_r=None, out_b=None):
        data = ETH + bytes([op, a, b, r])
        exp = ETH + bytes([op, a, b if out_b is None else out_b, r if out_r is None else out_r])
        return Packet(0, data, 0, [(1, exp)])
    s = Script()
    s.packets = [pkt(1, 0x11, out_r=1), pkt(2, 0x23, out_r=0), pkt(2, 0x22, out_r=1),
                 pkt(3, 0x31, out_r=0x30), pkt(4, b=1, r=7, out_r=8, out_b=0x55), pkt(5, b=1, r=7, out_r=8)]
    for i, p in enumerate(s.packets):
        p.time_us = i * 10
    return s


def test_softswitch_meets_the_expectations_and_cli_reports(tmp_path, capsys):
    prog = EXEC_DATA / "exec_issue16.p4"
    script = _issue16_script()
    got = run_softswitch(load_program(str(prog)), script)
    assert compare(got, [p.expect for p in script.packets]) == []
    f = tmp_path / "s.json"
    f.write_text(script.to_json())
    assert parse_script(json.loads(f.read_text())).packets[4].expect == script.packets[4].expect
    rc = main([str(prog), str(f), "--bmv2", "auto"])
    out = capsys.readouterr().out
    assert "0 differences in 6 packets" in out
    if bmv2_missing():
        assert rc == 0 and f"bmv2: skipped ({bmv2_missing()})" in out
    # a wrong expectation is reported, with the packet and the first differing byte
    script.packets[0].expect = [(1, ETH + bytes([1, 0x11, 0, 30]))]
    f.write_text(script.to_json())
    assert main([str(prog), str(f), "--bmv2", "off"]) == 1
    out = capsys.readouterr().out
    assert "packet #0" in out and "first difference at byte 17" in out


def test_require_bmv2_says_why_it_cannot_run(tmp_path, capsys):
    why = bmv2_missing()
    if why is None:
        pytest.skip("bmv2 is installed: the comparison tests below run instead")
    f = tmp_path / "s.json"
    f.write_text(_issue16_script().to_json())
    assert main([str(EXEC_DATA / "exec_issue16.p4"), str(f), "--bmv2", "require"]) == 2
    assert why in capsys.readouterr().out


@pytest.mark.parametrize("prog", ["exec_issue16.p4", "exec_functions.p4"])
def test_against_bmv2(tmp_path, prog):
    why = bmv2_missing()
    if why is not None:
        pytest.skip(f"bmv2 comparison: {why}")
    script = _issue16_script() if prog == "exec_issue16.p4" else Script(packets=[
        Packet(1, bytes([a, b, 0, 0]), i * 10) for i, (a, b) in enumerate([(150, 7), (50, 70), (0, 0)])])
    f = tmp_path / "s.json"
    f.write_text(script.to_json())
    assert main([str(EXEC_DATA / prog), str(f), "--bmv2", "require"]) == 0


def test_mrc_switch_random_traffic(tmp_path):
    """5,000 random and mutated MRC packets into leaf p1l1 with the controller's tables.  Here
    softswitch's side is checked against what bmv2 is known to do (BMV2_FACTS.md: tagged frames
    are dropped as not IP); with bmv2 installed the whole run is compared."""
    from mrc_script import BURST, BURST_PORT, BURSTS, build

    program, script, counts = build(5000)
    assert len(script.packets) == 5000 and counts["tagged"] > 50 and counts["burst"] == BURSTS * BURST
    check_order(script)  # listed in the order bmv2's pcap reader takes them, or the bmv2 run refuses it
    outs = run_softswitch(program, script)
    kinds = _kinds(script, counts)
    assert all(not outs[i] for i in kinds["tagged"]), "a tagged frame was forwarded"
    singles = [i for i in range(len(outs)) if i not in set(kinds["tagged"]) | set(kinds["burst"])]
    forwarded = sum(1 for i in singles if outs[i])
    # plane-2 carriers, hop limits 0/1 and mutations are dropped; the rest reaches every port
    assert forwarded > 0.2 * len(singles), (forwarded, len(singles))
    assert {p for i in singles for p, _ in outs[i]} == {1, 2, 4}  # never the bursts' port
    # the bursts reached every queue threshold of BURST_PORT: CE marks, trims and a full queue
    burst_outs = [outs[i] for i in kinds["burst"]]
    assert {p for o in burst_outs for p, _ in o} == {BURST_PORT}
    # what the switch did, not what the input already carried (a quarter of them arrive CE; hop limits
    # 0 and 1 are dropped whatever the queue)
    pairs = [(script.packets[i].data, outs[i][0][1] if outs[i] else None) for i in kinds["burst"]]
    assert any(o is not None and _tc(o) & 3 == 3 and _tc(i) & 3 not in (0, 3) and _tc(o) >> 2 != 11
               for i, o in pairs), "no CE mark made here"
    assert any(o is not None and _tc(o) >> 2 == 11 and _tc(i) >> 2 != 11 for i, o in pairs), "no trim made here"
    assert any(o is None and i[21] > 1 for i, o in pairs), "no drop of a packet with hop limit to spare"
    assert run_softswitch(program, script) == outs  # deterministic on the virtual clock
    if bmv2_missing() is None:
        f = tmp_path / "mrc.json"
        f.write_text(script.to_json())
        assert main([str(program.source_file), str(f), "--bmv2", "require", "--normalise", "mrc-telemetry"]) == 0


def test_mrc_telemetry_normaliser_masks_time_and_load_only():
    """What the bmv2 comparison masks: a record's timestamp, latency and queue depth (time and load,
    which a virtual clock and a pcap replay cannot share); never its switch, ports or queue id."""
    from scapy.layers.l2 import Ether

    from mrc.wire import formats as F
    from mrc.wire.codec import ENCAP_STEV, Encap, encode_data
    from mrc.wire.layers import telemetry_option
    from softswitch.diff.normalise import mrc_telemetry

    enc = Encap(ENCAP_STEV, bytes(16), bytes(15) + b"\x01", 7, telemetry=True)
    frame = bytearray(encode_data(enc, F.OP_WRITE_ONLY, 1, 2, 0x1000, 5, 64, b"x" * 64))
    rec = 14 + 40 + 8  # the first record: switch 9, ports 1 -> 3, ts, latency, depth 5, queue 7
    frame[rec:rec + 20] = bytes.fromhex("00000009" "0001" "0003" "00000123" "00000456" "000005" "07")
    out = mrc_telemetry(bytes(frame))
    r = telemetry_option(Ether(out)).records[0]
    assert (r.switch_id, r.ingress_port, r.egress_port, r.queue_id) == (9, 1, 3, 7)
    assert (r.ingress_ts_us, r.hop_latency_us, r.queue_depth) == (0, 0, 0)
    assert out[:rec] == frame[:rec] and out[rec + 20:] == frame[rec + 20:]
    plain = encode_data(Encap(ENCAP_STEV, bytes(16), bytes(16), 7), F.OP_WRITE_ONLY, 1, 2, 0x1000, 5, 8, b"y" * 8)
    assert mrc_telemetry(plain) == plain and mrc_telemetry(b"short") == b"short"


def _kinds(script: Script, counts: dict) -> dict[str, list[int]]:
    """Rebuild the kind of each packet from the generator's order (same seed, same rolls)."""
    import struct
    out: dict[str, list[int]] = {"tagged": [], "burst": []}
    times: dict[int, int] = {}
    for p in script.packets:
        times[p.time_us] = times.get(p.time_us, 0) + 1
    for i, p in enumerate(script.packets):
        if len(p.data) >= 14 and struct.unpack("!H", p.data[12:14])[0] in (0x8100, 0x88A8):
            out["tagged"].append(i)
        if times[p.time_us] > 1:
            out["burst"].append(i)
    return out


def _tc(frame: bytes) -> int:
    """The outer IPv6 traffic class (DSCP << 2 | ECN)."""
    return ((frame[14] & 0x0F) << 4) | (frame[15] >> 4)


def test_bmv2_pcap_plumbing(tmp_path, monkeypatch):
    """The file side of the bmv2 runner, without bmv2: input pcaps carry the script's frames and
    timestamps, and output pcaps -- written as bmv2's PcapFileOut writes them, link type 0 and
    snaplen 0 (src/bm_sim/pcap_file.cpp) -- are read back per port, byte for byte, once they stop
    growing (a zero-length frame and one shorter than an Ethernet header included)."""
    import struct

    from scapy.utils import PcapReader, PcapWriter

    from softswitch.diff import bmv2side
    monkeypatch.setattr(bmv2side, "WAIT_S", 0)
    frames = [bytes([i]) * 20 for i in range(3)] + [b"", b"\x01\x02"]
    w = PcapWriter(str(tmp_path / "p2_in.pcap"), linktype=1, sync=True)
    for i, f in enumerate(frames[:3]):
        w.write(bmv2side._pcap_pkt(f, 1000 * i))
    w.close()
    with PcapReader(str(tmp_path / "p2_in.pcap")) as r:
        assert [round(float(p.time) * 1e6) for p in r] == [0, 1000, 2000]
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 0, 0)  # bmv2: pcap_open_dead(0, 0)
    for f in frames:
        out += struct.pack("<IIII", 1, 0, len(f), len(f)) + f
    (tmp_path / "p2_out.pcap").write_bytes(out)
    got = bmv2side._collect(tmp_path, [1, 2], timeout_s=10)
    assert got == {2: frames}


def test_bmv2_pcap_files_are_named_absolute_from_a_relative_workdir(tmp_path, monkeypatch):
    """bmv2 runs in the work folder and is given its pcap files' paths: a relative ``--workdir out``
    named out/out/p1_in.pcap for it."""
    from softswitch.diff import bmv2side

    monkeypatch.chdir(tmp_path)
    argv = bmv2side.bmv2_argv(bmv2side.pcap_prefixes(Path("out"), [1, 2]), 9559, 9090, None)
    want = {f"{n}@{tmp_path.resolve() / 'out' / f'p{n}'}" for n in (1, 2)}
    assert want <= set(argv), argv
