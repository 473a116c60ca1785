"""Packets/s through softswitch running the conformance program bench4.p4 (four tables + SRH stack).

Two drivers, both with pre-built frames so the generator is not the bottleneck:
  * inject: frames handed straight to the packet loop's ingress (in-process, no sockets);
  * veth:   a raw-socket generator (pinned to CPU 1) sends on a veth into the switch subprocess
            (pinned to CPU 0, "one core"); delivered packets are counted by the kernel on the sink
            veth.  The same generator then drives a bare Python AF_PACKET forwarder (recv → send, no
            P4) on the same core: the ratio softswitch/bare is printed, and softswitch/bmv2 when
            ``simple_switch_grpc`` is on PATH.

``--program mrc`` runs ``p4src/mrc_switch.p4`` instead, as leaf p1l1 of ``examples/small.yaml`` with
every entity the controller writes there (host port 3 in, spine port 1 out; 64-byte frames are plain
UDP since a RoCE BTH does not fit, larger ones RoCE v2), the frames of ``bench/softswitch_pipeline.py``.

    sudo python bench/softswitch_pps.py [--mode inject|veth|both] [--program bench4|mrc|both]
                                        [--sizes 64,1500] [--seconds 3] [--rx ring|both] [--tx ring|both]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# every program here gets the CPU port the target plugins give bmv2 (the contract's)
from controller.p4contract import CPU_PORT
from mrc_fabric.targets import DEFAULT_PROGRAM

MRC_PROGRAM = DEFAULT_PROGRAM
PROGRAM = Path(os.environ.get("BENCH4_P4", str(Path(__file__).resolve().parents[1] / "tests/softswitch/data/conformance/bench4.p4")))
SW_MAC, NEXT_MAC = bytes.fromhex("000000000001"), bytes.fromhex("000000000002")
ETH_P_ALL = 3


# ----------------------------------------------------------------------------- packets
def bench_frame(size: int) -> bytes:
    """Ethernet / IPv6 (dst = uSID carrier fc00:0:1:2::) / SRH with 2 segments / UDP 4791 / payload."""
    udp_len = 8
    srh = bytes([17, 4, 4, 1, 1, 0, 0, 0]) + bytes(16) * 2  # next UDP, ext len 4, type 4, SL 1, LE 1
    fixed = 14 + 40 + len(srh) + udp_len
    payload = bytes(max(0, size - fixed))
    udp = (4791).to_bytes(2, "big") + (4791).to_bytes(2, "big") + (udp_len + len(payload)).to_bytes(2, "big") \
        + b"\x00\x00"
    dst = bytes.fromhex("fc000000000100020000000000000000")
    src = bytes.fromhex("fc000000000000000000000000000001")
    plen = len(srh) + len(udp) + len(payload)
    ip6 = bytes([0x60, 0, 0, 0]) + plen.to_bytes(2, "big") + bytes([43, 64]) + src + dst
    return SW_MAC + bytes.fromhex("000000000099") + b"\x86\xdd" + ip6 + srh + udp + payload


# ----------------------------------------------------------------------------- P4Runtime
def _prefix(hex_bits: str, width_bytes: int = 16) -> bytes:
    """An LPM value: the prefix's bytes padded with zeros to the field width (128-bit IPv6).

    P4Runtime reads a bytestring as a big-endian number, so the bare 6 prefix bytes would be the
    *low* bits of the address: targets reject it ("bits set beyond the /48 prefix").
    """
    raw = bytes.fromhex(hex_bits)
    return raw + bytes(width_bytes - len(raw))


def configure_tables(grpc_addr: str, device_id: int = 1, egress_port: int = 2,
                     pipeline: tuple[Path, Path] | None = None) -> None:
    """Write one entry in each of bench4's four tables with the project's P4Runtime client (any target).

    ``pipeline`` = (P4Info text file, device config) is pushed first with SetForwardingPipelineConfig:
    bmv2 started with a JSON on its command line still has no P4Info in its P4Runtime server and
    answers every Write with "No forwarding pipeline config set for this device"."""
    from controller.p4rt import P4RuntimeClient

    client = P4RuntimeClient(grpc_addr, device_id, election_id=1)
    try:
        if pipeline is not None:
            from google.protobuf import text_format
            from p4.config.v1 import p4info_pb2

            info = text_format.Parse(pipeline[0].read_text(), p4info_pb2.P4Info())
            client.set_pipeline(info, pipeline[1].read_bytes())
        else:
            info = client.get_p4info()
            if info is None:
                raise SystemExit(f"{grpc_addr}: the switch runs no pipeline")
        _write_bench_entries(client, info, egress_port)
    finally:
        client.close()


def _write_bench_entries(client, info, egress_port: int) -> None:
    from p4.v1 import p4runtime_pb2 as pb

    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}

    def entry(table: str, action: str, params: dict, matches: list, priority: int = 0):
        t = tables[table]
        fields = {f.name: f for f in t.match_fields}
        e = pb.TableEntry(table_id=t.preamble.id, priority=priority)
        for name, kind, *vals in matches:
            m = e.match.add(field_id=fields[name].id)
            if kind == "exact":
                m.exact.value = vals[0]
            elif kind == "lpm":
                m.lpm.value, m.lpm.prefix_len = vals
            else:
                m.ternary.value, m.ternary.mask = vals
        a = actions[action]
        e.action.action.action_id = a.preamble.id
        pids = {p.name: p.id for p in a.params}
        for pname, value in params.items():
            e.action.action.params.add(param_id=pids[pname], value=value)
        return e

    entries = [
        entry("I.my_mac", "I.nop", {}, [("h.eth.dst", "exact", SW_MAC)]),
        entry("I.usid_un", "I.usid_shift", {}, [("h.ipv6.dst", "lpm", _prefix("fc0000000001"), 48)]),
        entry("I.route_v6", "I.fwd", {"port": egress_port.to_bytes(2, "big").lstrip(b"\x00") or b"\x00",
                                      "dmac": NEXT_MAC},
              [("h.ipv6.dst", "lpm", _prefix("fc0000000002"), 48)]),
        entry("I.acl", "I.nop", {}, [("h.ipv6.next_hdr", "ternary", b"\x2b", b"\xff"),
                                     ("h.udp.dport", "ternary", b"\x12\xb7", b"\xff\xff")], priority=10),
    ]
    client.write_updates([pb.Update(type=pb.Update.INSERT, entity=pb.Entity(table_entry=e)) for e in entries])


class Case:
    """What differs between the two bench programs: source, ports, frames, table writes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.mrc = name == "mrc"
        self.program = MRC_PROGRAM if self.mrc else PROGRAM
        self.include_dirs = [str(MRC_PROGRAM.parent)] if self.mrc else []
        self.in_port, self.out_port = (3, 1) if self.mrc else (1, 2)

    def frame(self, size: int) -> bytes:
        if self.mrc:
            from softswitch_pipeline import mrc_frame
            return mrc_frame(size)
        return bench_frame(size)

    def configure(self, grpc_addr: str) -> None:
        if not self.mrc:
            configure_tables(grpc_addr, egress_port=self.out_port)
            return
        from p4.v1 import p4runtime_pb2 as pb

        from controller import build_plan, load_topology
        from controller.mapping import P4Names, desired_state
        from controller.p4rt import P4RuntimeClient

        client = P4RuntimeClient(grpc_addr, 1, election_id=1)
        try:
            info = client.get_p4info()
            plan = build_plan(load_topology(str(ROOT / "examples" / "small.yaml")))
            d = desired_state(P4Names.from_p4info(info), plan.switches["p1l1"])
            client.write_updates([pb.Update(type=pb.Update.MODIFY if e in d.defaults else pb.Update.INSERT,
                                            entity=e) for e in d.all()])
        finally:
            client.close()


# ----------------------------------------------------------------------------- in-process injection
def run_inject(case: Case, size: int, packets: int) -> tuple[float, float]:
    """(pps, CPU µs of the loop thread per packet) of ingress → TM → egress on frames injected
    in-process (the loop thread does the work)."""
    from softswitch.api import SoftSwitch

    frame = case.frame(size)
    with SoftSwitch(case.program, cpu_port=CPU_PORT, include_dirs=case.include_dirs) as sw:
        case.configure(sw.grpc_addr)
        loop = sw.switch.loop
        sent = [0]
        loop.set_tx_hook(lambda port, data: sent.__setitem__(0, sent[0] + 1))
        batch = [frame] * 64

        def work() -> tuple[float, float]:
            t0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(packets // 64):
                loop._ingress_batch(case.in_port, batch)
                while loop.tm.total:
                    loop._service_tm()
            return time.perf_counter() - t0, time.thread_time() - c0

        elapsed, cpu = loop.call(work, timeout=600)
        done = (packets // 64) * 64
        if sent[0] != done:
            raise SystemExit(f"inject: only {sent[0]} of {done} frames forwarded: tables not hit?")
        return done / elapsed, cpu * 1e6 / done


# ----------------------------------------------------------------------------- veth driver
def _pin(cpu: int) -> None:
    try:
        os.sched_setaffinity(0, {cpu % os.cpu_count()})
    except OSError:
        pass


def _generator(ifname: str, frame: bytes, seconds: float, out: mp.Value) -> None:
    _pin(1)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    send = s.send
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(256):
            try:
                send(frame)
                n += 1
            except OSError:
                pass
    out.value = n


def _bare_forwarder(in_if: str, out_if: str) -> None:
    """Baseline: the least a Python AF_PACKET switch can do — receive and send, nothing else."""
    _pin(0)
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.bind((in_if, ETH_P_ALL))
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind((out_if, 0))
    recv, send = rx.recv, tx.send
    while True:
        frame = recv(65536)
        try:
            send(frame)
        except OSError:  # e.g. a stray oversized frame (EMSGSIZE): skip it, as a switch would
            pass


def _rx_count(ifname: str) -> int:
    return int(Path(f"/sys/class/net/{ifname}/statistics/rx_packets").read_text())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads), from /proc."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU time of process ``pid`` (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


LAST_SPLIT_US: dict = {}  # pid -> (user µs, system µs) per delivered packet of its last measurement


def measure_veth(gen_if: str, sink_if: str, frame: bytes, seconds: float,
                 pid: int | None = None) -> tuple[float, float, float]:
    """(delivered pps, offered pps, CPU µs of process ``pid`` per delivered packet) while the
    generator runs for ``seconds``.  The CPU cost per packet does not depend on how much of the
    core other work took, so it is the figure to compare on a shared machine."""
    gen_count = mp.Value("q", 0)
    warm = mp.Process(target=_generator, args=(gen_if, frame, 0.3, mp.Value("q", 0)))
    warm.start()
    warm.join()
    before = _rx_count(sink_if)
    cpu0 = cpu_seconds(pid) if pid else 0.0
    split0 = cpu_split(pid) if pid else (0.0, 0.0)
    t0 = time.monotonic()
    g = mp.Process(target=_generator, args=(gen_if, frame, seconds, gen_count))
    g.start()
    g.join()
    elapsed = time.monotonic() - t0
    cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
    split = cpu_split(pid) if pid else (0.0, 0.0)
    delivered = _rx_count(sink_if) - before
    if delivered:  # user / system share of the CPU per packet, for the report (kernel vs Python)
        LAST_SPLIT_US[pid] = ((split[0] - split0[0]) * 1e6 / delivered, (split[1] - split0[1]) * 1e6 / delivered)
    return delivered / elapsed, gen_count.value / elapsed, (cpu * 1e6 / delivered if delivered else 0.0)


def _veths():
    from pyroute2 import IPRoute

    from mrc_fabric.netbuild import disable_offloads

    pairs = [("h4bs1", "h4bg1"), ("h4bs2", "h4bg2")]
    with IPRoute() as ipr:
        for a, b in pairs:
            if ipr.link_lookup(ifname=a):
                ipr.link("del", ifname=a)
            ipr.link("add", ifname=a, kind="veth", peer={"ifname": b})
            for name in (a, b):
                Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
                ipr.link("set", index=ipr.link_lookup(ifname=name)[0], state="up")
            # the switch's ends as a fabric's switch ports are: bmv2's libpcap ring holds 32 frames
            # with the offloads on (netbuild.disable_offloads); softswitch turns them off itself
            disable_offloads(a)
    return pairs


def _del_veths(pairs) -> None:
    from pyroute2 import IPRoute

    with IPRoute() as ipr:
        for a, _b in pairs:
            if ipr.link_lookup(ifname=a):
                ipr.link("del", ifname=a)


def run_veth(cases: list[Case], sizes: list[int], seconds: float, rx: str = "ring", tx: str = "ring") -> dict:
    from softswitch.api import SoftSwitch

    pairs = _veths()
    results: dict = {}
    try:
        # bare Python forwarder baseline
        fwd = mp.Process(target=_bare_forwarder, args=("h4bs1", "h4bs2"), daemon=True)
        fwd.start()
        try:
            for size in sizes:
                results[("bare", size)] = measure_veth("h4bg1", "h4bg2", bench_frame(size), seconds, fwd.pid)
                results[("split", "bare", size)] = LAST_SPLIT_US.get(fwd.pid)
        finally:
            fwd.terminate()
            fwd.join()
        # softswitch, pinned to CPU 0; with --rx both also with the rx ring off (recvmsg per frame)
        for case in cases:
            for label, ring, txring in (("softswitch", "1", "1"), ("softswitch-recvmsg", "0", "1"),
                                        ("softswitch-send", "1", "0")):
                if (label == "softswitch-recvmsg" and rx != "both") or (label == "softswitch-send" and tx != "both"):
                    continue
                os.environ["SOFTSWITCH_RX_RING"] = ring
                os.environ["SOFTSWITCH_TX_RING"] = txring
                sw = SoftSwitch(case.program, interfaces={case.in_port: "h4bs1", case.out_port: "h4bs2"},
                                cpu_port=CPU_PORT, include_dirs=case.include_dirs, subprocess=True)
                with sw:
                    subprocess.run(["taskset", "-a", "-p", "-c", "0", str(sw.process.pid)], capture_output=True,
                                   check=False)
                    case.configure(sw.grpc_addr)
                    for size in sizes:
                        results[(label, case.name, size)] = measure_veth("h4bg1", "h4bg2", case.frame(size),
                                                                         seconds, sw.process.pid)
                        results[("split", label, case.name, size)] = LAST_SPLIT_US.get(sw.process.pid)
        os.environ.pop("SOFTSWITCH_RX_RING", None)
        os.environ.pop("SOFTSWITCH_TX_RING", None)
        from mrc_fabric.targets import target_available

        why = target_available("bmv2")  # None: it can run here
        if not any(not c.mrc for c in cases):
            print("bmv2: measured with bench4.p4 only (--program bench4 or both)")
        elif why is not None:
            print(f"{why}; ratio to bmv2 skipped")
        else:
            bmv2_json = ROOT / "build" / "bench4" / "bmv2.json"
            if not (bmv2_json.exists() and bmv2_json.with_name("p4info.txtpb").exists()):
                print(f"bmv2: {bmv2_json} or p4info.txtpb beside it missing (build them with p4c-bm2-ss "
                      f"--p4runtime-files); skipped")
            else:
                results.update(_run_bmv2(bmv2_json, sizes, seconds))
    finally:
        _del_veths(pairs)
    return results


def _run_bmv2(bmv2_json: Path, sizes: list[int], seconds: float) -> dict:
    """Same measurement with bmv2 (P4Info pushed from build/bench4/p4info.txtpb)."""
    from softswitch.api import free_tcp_port, grpc_ready

    port = free_tcp_port()
    addr = f"127.0.0.1:{port}"
    from mrc_fabric.targets import get_target

    # the bmv2 plugin's command line (starts empty: the pipeline is pushed below, as a controller does)
    argv = get_target("bmv2").switch_argv(1, {1: "h4bs1", 2: "h4bs2"}, port, runtime_port=free_tcp_port())
    proc = subprocess.Popen(["taskset", "-c", "0", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    try:
        deadline = time.monotonic() + 30
        while not grpc_ready(addr) and time.monotonic() < deadline:
            time.sleep(0.1)
        configure_tables(addr, pipeline=(bmv2_json.with_name("p4info.txtpb"), bmv2_json))
        for size in sizes:
            out[("bmv2", size)] = measure_veth("h4bg1", "h4bg2", bench_frame(size), seconds, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["inject", "veth", "both"], default="both")
    ap.add_argument("--program", choices=["bench4", "mrc", "both"], default="bench4",
                    help="bench4.p4 (default), p4src/mrc_switch.p4 with the controller's tables, or both")
    ap.add_argument("--sizes", default="64,1500")
    ap.add_argument("--packets", type=int, default=50_000, help="packets per size for inject mode")
    ap.add_argument("--seconds", type=float, default=3.0, help="generator run time per size for veth mode")
    ap.add_argument("--rx", choices=["ring", "both"], default="ring",
                    help="veth mode: 'both' also runs softswitch receiving with recvmsg (rx ring off)")
    ap.add_argument("--tx", choices=["ring", "both"], default="ring",
                    help="veth mode: 'both' also runs softswitch sending one frame per send (tx ring off)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [Case(n) for n in (("bench4", "mrc") if args.program == "both" else (args.program,))]
    for case in cases:
        if not case.program.exists():
            print(f"{case.program} not found (set BENCH4_P4)")
            return 1
        print(f"program {case.name}: {case.program}")
    if args.mode in ("inject", "both"):
        for case in cases:
            for size in sizes:
                pps, us = run_inject(case, size, args.packets)
                print(f"inject  {case.name:6s} {size:5d} B: softswitch {pps:10.0f} pps, {us:6.2f} us CPU per packet "
                      f"(in-process injection, no sockets)")
    if args.mode in ("veth", "both"):
        if os.geteuid() != 0:
            print("veth mode needs root; skipped")
            return 0
        res = run_veth(cases, sizes, args.seconds, args.rx, args.tx)
        for case in cases:
            for size in sizes:
                _report_veth(res, case.name, size)
    return 0


def _report_veth(res: dict, name: str, size: int) -> None:
    bare, offered, bare_us = res[("bare", size)]
    sw, sw_offered, sw_us = res[("softswitch", name, size)]
    line = (f"veth    {name:6s} {size:5d} B: softswitch {sw:10.0f} pps | bare AF_PACKET loop {bare:10.0f} pps "
            f"| ratio {sw / bare if bare else 0:.2f} | generator offered {sw_offered:.0f} pps")
    bm = res.get(("bmv2", size)) if name == "bench4" else None
    if bm is not None:
        line += f" | bmv2 {bm[0]:.0f} pps, ratio {sw / bm[0] if bm[0] else 0:.2f}"
    print(line)
    line = (f"        CPU per forwarded packet: softswitch {sw_us:.2f} us | bare loop {bare_us:.2f} us "
            f"| ratio {bare_us / sw_us if sw_us else 0:.2f}")
    if bm is not None:
        line += f" | bmv2 {bm[2]:.2f} us, ratio {bm[2] / sw_us if sw_us else 0:.2f}"
    print(line + f" | one full core: softswitch {1e6 / sw_us if sw_us else 0:.0f} pps")
    sp, bp = res.get(("split", "softswitch", name, size)), res.get(("split", "bare", size))
    if sp and bp:  # clock-tick resolution (10 ms over the run): a few hundredths of a µs
        print(f"        of it user / system (kernel) time: softswitch {sp[0]:.2f} / {sp[1]:.2f} us "
              f"| bare loop {bp[0]:.2f} / {bp[1]:.2f} us")
    if ("softswitch-recvmsg", name, size) in res:
        rm, _o, rm_us = res[("softswitch-recvmsg", name, size)]
        print(f"        softswitch without the rx ring (recvmsg per frame) {rm:10.0f} pps, "
              f"{rm_us:.2f} us CPU per packet | rx ring gain {rm_us / sw_us if sw_us else 0:.2f}x")
    if ("softswitch-send", name, size) in res:
        sn, _o, sn_us = res[("softswitch-send", name, size)]
        print(f"        softswitch without the tx ring (send per frame)    {sn:10.0f} pps, "
              f"{sn_us:.2f} us CPU per packet | tx ring gain {sn_us / sw_us if sw_us else 0:.2f}x")
    if offered < bare * 1.2:
        print(f"        note: the generator ({offered:.0f} pps) may limit the bare loop")


if __name__ == "__main__":
    sys.exit(main())
