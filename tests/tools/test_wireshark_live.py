"""tshark + tools/wireshark/mrc.lua on live fabric traffic.

The small fabric with slow, shallow host downlinks (so h1's leaves trim), an mrc-perf writer h3 -> h1
carrying the telemetry option (so every switch fills a hop record), a spine link taken down mid-run
(EVs go ASSUMED_BAD and are probed) and h3's plane-2 NIC taken down (h3 tells h1 with PORT_STATUS).
tshark captures h1's two leaf downlinks; every MRC frame's decoded fields must equal what
``mrc.wire.codec`` reads in the same bytes, every packet kind must be there, and ``-Y mrc.sack`` must
show exactly the frames that carry a SACK.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from scapy.utils import rdpcap
from tshark_mrc import REPO, TSHARK, codec_fields, compare, docs_capture, tshark_cmd, tshark_fields

from mrc_fabric.targets import selected_target

pytestmark = [pytest.mark.root, pytest.mark.slow]
TARGET = selected_target()
PREFIX, GRPC_BASE = "h15c", 27600


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _lines(stream, q: queue.Queue) -> None:
    try:
        for line in stream:
            q.put(line)
    except ValueError:  # the test closed the pipe on its way out
        return


def test_live_capture_decodes_like_the_codec(tmp_path: Path) -> None:
    if TSHARK is None:
        pytest.skip("tshark not installed (apt-get install tshark; scripts/setup.sh does)")
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET, capture)")
    from mrc_fabric.scenarios import FabricEnv, FabricSpec
    from mrc_fabric.switches import target_available

    why = target_available(TARGET)
    if why:
        pytest.skip(f"target {TARGET} not available: {why}")
    spec = FabricSpec(topology="examples/small.yaml", host_links={"rate_pps": 300, "queue_depth": 16})
    pcap = tmp_path / "live.pcapng"
    sock = tmp_path / "perf.sock"
    with FabricEnv(spec, prefix=PREFIX, grpc_base_port=GRPC_BASE, target=TARGET, workdir=tmp_path / "fab") as env:
        fab = env.fab
        assert fab is not None
        downlinks = []
        for plane in (1, 2):
            leaf, port = env.topo.host_leaf("h1", plane)
            downlinks.append(fab.switch_port_if(leaf.name, port))
        cap = subprocess.Popen(tshark_cmd(*[a for i in downlinks for a in ("-i", i)], "-w", str(pcap), "-q"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs = [cap]
        try:
            end = time.monotonic() + 30
            errq: queue.Queue = queue.Queue()
            threading.Thread(target=_lines, args=(cap.stderr, errq), daemon=True).start()
            while True:  # tshark says "Capturing on ..." once its capture is open
                try:
                    if "Capturing on" in errq.get(timeout=1.0):
                        break
                except queue.Empty:
                    pass
                assert cap.poll() is None and time.monotonic() < end, "tshark did not start capturing"
            perf = [sys.executable, "-m", "mrc"]
            common = ["--ifaces", "nic1,nic2", "--telemetry", "--rate-gbps", "0.03"]
            server = subprocess.Popen(["ip", "netns", "exec", fab.netns("h1"), *perf, "server", *common,
                                       "--plan", str(env.plan_dir / "h1.json"), "--bootstrap", f"unix:{sock}",
                                       "--accept-timeout", "60"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            procs.append(server)
            end = time.monotonic() + 30
            while not sock.exists():  # bounded wait for the server's bootstrap socket
                assert server.poll() is None and time.monotonic() < end, "mrc-perf server did not start"
                time.sleep(0.05)
            # --cc none: the point is a trimming queue; NSCC (the default) keeps queues below the trim mark
            client = subprocess.Popen(["ip", "netns", "exec", fab.netns("h3"), *perf, "client", *common,
                                       "--plan", str(env.plan_dir / "h3.json"), "--peer", f"unix:{sock}",
                                       "--size", "64K", "--duration", "4", "--cc", "none", "--tx-depth", "4", "--verify",
                                       "--json", "--progress", "0.2", "--timeout", "60"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            procs.append(client)
            progress: queue.Queue = queue.Queue()
            threading.Thread(target=_lines, args=(client.stderr, progress), daemon=True).start()
            end = time.monotonic() + 60
            while True:  # faults only once data flows
                try:
                    if "progress" in progress.get(timeout=1.0):
                        break
                except queue.Empty:
                    pass
                assert client.poll() is None and time.monotonic() < end, "client never made progress"
            fab.set_link("p1l2", "p1s1", False)  # h3's plane-1 uplink to spine 1: losses, probes
            fab.set_link("h3:2", "p2l2:3", False)  # h3's plane-2 NIC: PORT_STATUS to h1 on plane 1
            for _ in range(5):  # let both faults be noticed: a few progress reports (bounded)
                progress.get(timeout=10)
            fab.set_link("p1l2", "p1s1", True)
            fab.set_link("h3:2", "p2l2:3", True)
            out, _ = client.communicate(timeout=90)
            assert client.returncode == 0, out[-2000:]
            report = json.loads(out)
        finally:
            for p in reversed(procs):
                _stop(p, signal.SIGINT if p is cap else signal.SIGTERM)
    frames = [bytes(p) for p in rdpcap(str(pcap))]
    rows = tshark_fields(pcap)
    assert len(rows) == len(frames)
    kinds = compare(frames, rows)
    print(f"captured {len(frames)} frames on {downlinks}; MRC kinds {kinds}; client retransmissions "
          f"{report.get('retransmissions')}")
    mrc_rows = sum(1 for r in rows if r["mrc.bth.opcode"])
    assert mrc_rows == sum(1 for f in frames if codec_fields(f) is not None), "tshark and the codec disagree on which frames are MRC"
    for k in ("data", "telemetry", "sack", "trimmed", "probe", "port_status"):
        assert kinds.get(k), f"no {k} packet in the capture: {kinds}"
    sacks = subprocess.run(tshark_cmd("-r", str(pcap), "-Y", "mrc.sack", "-T", "fields", "-e", "frame.number"),
                           capture_output=True, text=True, timeout=120, check=True).stdout.split()
    want = [i for i, f in enumerate(frames, 1) if (c := codec_fields(f)) and c["mrc.sack.flags"]]
    assert [int(x) for x in sacks] == want
    hops = [r for r in rows if r["mrc.telemetry.hop_count"] and r["mrc.telemetry.hop_count"][0] >= 2]
    assert hops, "no packet with two or more filled hop records"
    if os.environ.get("MRC_DOCS_IMG") == "1":
        docs_capture(pcap, frames, REPO)
