"""``--pcap [DIR]``: IFNAME_in.pcap / IFNAME_out.pcap per interface, as bmv2 writes them, through
real veths; the files are read back with scapy and tshark (decoders that are not ours)."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from polling import wait_for
from tiny_pipeline import TinyPipeline

from softswitch.engine.loop import PacketLoop
from softswitch.engine.pcap import CapturingPort
from softswitch.engine.ports import ETH_P_ALL
from softswitch.engine.tm import TrafficManager

MARK = b"\x88\xb5PCAPTEST"
# TinyPipeline forwards by byte 0 of the frame: dst MAC 02:... goes to port 2
DST, SRC = bytes.fromhex("020000000001"), bytes.fromhex("0a0000000002")
PROGRAM = Path(__file__).parent / "p4" / "h4_port_fwd.p4"


def _read(path: Path) -> list[bytes]:
    from scapy.utils import rdpcap

    return [bytes(p) for p in rdpcap(str(path))]


def _marked(frames: list[bytes]) -> list[bytes]:
    return [f for f in frames if MARK in f]


@pytest.mark.root
@pytest.mark.parametrize("rings", [True, False], ids=["rings", "no-rings"])
def test_received_and_sent_frames_land_in_the_interface_files(veth_factory, tmp_path, rings):
    veth_factory("h16ps1", "h16ph1")
    veth_factory("h16ps2", "h16ph2")
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind(("h16ph1", 0))
    pipe = TinyPipeline()
    ports = [CapturingPort(n, f"h16ps{n}", use_ring=rings, use_tx_ring=rings, pcap_dir=str(tmp_path / "caps"))
             for n in (1, 2)]
    lp = PacketLoop(TrafficManager(), ports)
    lp.set_pipeline(pipe)
    lp.start()
    sent = [DST + SRC + MARK + bytes([i]) * 40 for i in range(5)]
    sent.append(DST + SRC + b"\x81\x00\x00\x64" + MARK + bytes(40))  # tagged: in the file as on the wire
    try:
        for data in sent:
            tx.send(data)
        wait_for(lambda: ports[1].counters.tx_packets >= len(sent), what="every frame sent on port 2")
    finally:
        lp.stop()
        tx.close()
    caps = tmp_path / "caps"
    assert sorted(p.name for p in caps.iterdir()) == ["h16ps1_in.pcap", "h16ps1_out.pcap",
                                                      "h16ps2_in.pcap", "h16ps2_out.pcap"]
    assert _marked(_read(caps / "h16ps1_in.pcap")) == sent
    assert _marked(_read(caps / "h16ps2_out.pcap")) == sent, "each sent frame once, in order"
    assert _marked(_read(caps / "h16ps2_in.pcap")) == [] and _marked(_read(caps / "h16ps1_out.pcap")) == []
    if shutil.which("tshark"):
        out = subprocess.run(["tshark", "-r", str(caps / "h16ps2_out.pcap"), "-T", "fields", "-e", "eth.dst",
                              "-e", "vlan.id"], capture_output=True, text=True, timeout=60, check=True).stdout
        rows = [r.split("\t") for r in out.splitlines() if r.startswith("02:00:00:00:00:01")]
        assert len(rows) == len(sent) and rows[-1][1] == "100", out


@pytest.mark.root
@pytest.mark.slow
def test_pcap_option_of_a_switch_process(veth_factory, tmp_path):
    """`softswitch --pcap DIR`: the files of a real switch process, closed when it stops."""
    from p4rt_client import Client

    from softswitch import SoftSwitch

    veth_factory("h16pe1", "h16pp1")
    veth_factory("h16pe2", "h16pp2")
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind(("h16pp1", 0))
    frame = bytes.fromhex("000000000002000000000001") + MARK + bytes(50)
    caps = tmp_path / "caps"
    sw = SoftSwitch(PROGRAM, interfaces={1: "h16pe1", 2: "h16pe2"}, cpu_port=255, subprocess=True,
                    extra_args=["--pcap", str(caps)])
    try:
        with sw:
            c = Client(sw.grpc_addr)
            try:
                c.insert_exact("I.fwd", {"sm.ingress_port": b"\x00\x01"}, "I.set_port", {"port": b"\x00\x02"})
            finally:
                c.close()
            for _ in range(3):
                tx.send(frame)
            # the files are flushed every quarter second while the switch runs
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(_marked(_read(caps / "h16pe2_out.pcap"))) < 3:
                time.sleep(0.1)
            assert _marked(_read(caps / "h16pe2_out.pcap")) == [frame] * 3
    finally:
        tx.close()
    assert sw.returncode == 0
    assert _marked(_read(caps / "h16pe1_in.pcap")) == [frame] * 3
