"""Run a script on bmv2 (``p4c-bm2-ss`` + ``simple_switch_grpc``) through pcap files.

bmv2's ``--use-files WAIT`` reads ``<iface>_in.pcap`` and writes ``<iface>_out.pcap`` per port
after WAIT seconds, which is enough to push the pipeline and the script's entities over
P4Runtime first.  No interfaces, namespaces or root are needed.  Outputs are per port: a pcap
keeps no link between an input and what it produced, so the comparison matches each port's frames
with softswitch's, as a multiset and in order within each priority queue
(``softswitch.diff.__main__.port_differences``).  bmv2 replays the files as fast as it reads
them, in timestamp order across the ports but without waiting for the timestamps (its ``DevMgr``
makes the pcap reader with real-time replay off), so a script's ``time_us`` orders the input and
drives softswitch's virtual clock only: what a program decides from time or queue occupancy agrees
only where the script keeps it independent of the replay speed (``tests/softswitch/diff/mrc_script.py``),
and values it copies into packets are masked (``--normalise``, ``softswitch.diff.normalise``).
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from softswitch.diff.script import Script

if TYPE_CHECKING:
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2

WAIT_S = 8  # --use-files delay: time to configure the switch (pipeline, entities, queues) before it reads the inputs


def bmv2_missing() -> str | None:
    """Why bmv2 cannot run here, or None."""
    for exe in ("simple_switch_grpc", "p4c-bm2-ss"):
        if shutil.which(exe) is None:
            return f"{exe} is not on PATH"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compile_bmv2(program: Path, workdir: Path, defines: dict[str, str] | None = None,
                 includes: list[str] | None = None) -> tuple[Path, Path]:
    """``p4c-bm2-ss`` → (bmv2.json, p4info.txtpb) in ``workdir``."""
    out, info = workdir / "bmv2.json", workdir / "p4info.txtpb"
    cmd = ["p4c-bm2-ss", "--arch", "v1model", "--p4runtime-files", str(info), "-o", str(out)]
    cmd += [f"-D{k}={v}" if v else f"-D{k}" for k, v in (defines or {}).items()]
    cmd += [f"-I{d}" for d in includes or []]
    r = subprocess.run(cmd + [str(program)], check=False, capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError(f"p4c-bm2-ss failed:\n{r.stderr}")
    return out, info


def run_bmv2(program: Path, script: Script, workdir: Path, *, cpu_port: int | None = None,
             defines: dict[str, str] | None = None, includes: list[str] | None = None,
             ports: set[int] | None = None, timeout_s: float = 120.0) -> dict[int, list[bytes]]:
    """Frames bmv2 sent, per port, in order.  The switch is started as the fabric's bmv2 target
    starts it (``mrc_fabric.targets.bmv2``: options bmv2 takes before ``--``, target options after
    it) with ``--use-files``; the pipeline and the script's entities go over one P4Runtime session
    whose stream stays open (PI drops a client's primacy when its stream ends), queue settings
    through ``simple_switch_CLI`` as the fabric runs it (system Python, output checked).  ``ports``:
    more ports to give a file (every port softswitch sent to: bmv2 drops a frame to a port without
    one, ``PcapFilesWriter::send_packet``).  bmv2's wait starts once the pipeline is committed
    (``SwitchWContexts::start_and_return``); entities and queue settings that took longer than
    ``WAIT_S`` - 1 s after that raise instead of racing the replay.  With ``cpu_port``, what bmv2
    sends to the CPU port arrives as PacketIns on the session's stream and is returned as that
    port's frames, the controller header rebuilt (``packet_in_frames``)."""
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2
    from scapy.utils import PcapWriter

    from controller.p4rt import P4RuntimeClient
    from mrc_fabric.targets.bmv2 import cli
    from softswitch.api import stop_process

    # absolute: bmv2 runs in it and is given its pcap files' paths (``--workdir out`` named out/out/p1_in.pcap)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    bjson, binfo = compile_bmv2(program, workdir, defines, includes)
    ports = sorted({p.port for p in script.packets} | {int(q["port"]) for q in script.queues}
                   | set(range(1, 9)) | set(ports or ()))
    for port in ports:
        w = PcapWriter(str(workdir / f"p{port}_in.pcap"), linktype=1, sync=True)
        for p in script.packets:
            if p.port == port:
                w.write(_pcap_pkt(p.data, p.time_us))
        w.close()
    grpc_port, thrift_port = _free_port(), _free_port()
    cmd = bmv2_argv(pcap_prefixes(workdir, ports), grpc_port, thrift_port, cpu_port)
    log = open(workdir / "bmv2.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    client = None
    try:
        client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=0, election_id=1, timeout_s=30.0)
        p4info = text_format.Parse(binfo.read_text(), p4info_pb2.P4Info())
        client.set_pipeline(p4info, bjson.read_bytes())
        committed = time.monotonic()
        ups = []
        for ent in script.entities:
            up = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY if ent.HasField("table_entry")
                                      and ent.table_entry.is_default_action else p4runtime_pb2.Update.INSERT)
            up.entity.CopyFrom(ent)
            ups.append(up)
        client.write_updates(ups)  # raises P4RuntimeError naming every failed update
        cli(thrift_port, queue_commands(script.queues))
        took = time.monotonic() - committed
        if took > WAIT_S - 1:
            raise RuntimeError(f"bmv2 took {took:.1f} s after the pipeline to take the script's entities and "
                               f"queue settings; its replay starts {WAIT_S} s after the pipeline and may have "
                               "begun without them (raise WAIT_S)")
        out = _collect(workdir, ports, timeout_s)
        if cpu_port is not None:  # the CPU port's frames came as PacketIns on the stream meanwhile
            pins = []
            while not client.packet_ins.empty():
                pins.append(client.packet_ins.get_nowait())
            if pins:
                out[cpu_port] = packet_in_frames(p4info, pins)
        return out
    finally:
        if client is not None:
            client.close()
        stop_process(proc)
        log.close()


def packet_in_frames(p4info: p4info_pb2.P4Info, packet_ins: list[p4runtime_pb2.PacketIn]) -> list[bytes]:
    """PacketIns as the frames the program sent to the CPU port: the ``packet_in`` controller header
    rebuilt from their metadata (P4Info order, MSB first, as ``softswitch.p4rt.packet_io`` packs it),
    then the payload -- what softswitch's run gives for the CPU port, so both compare as one port."""
    from softswitch.p4rt.packet_io import controller_headers

    pin, _ = controller_headers(p4info)
    return [(pin.encode(p.metadata) if pin is not None else b"") + p.payload for p in packet_ins]


def queue_commands(queues: list[dict]) -> list[str]:
    """The script's queue settings as ``simple_switch_CLI`` commands (a queue's priority, when it
    names one, as the CLI's third argument: ``set_queue_rate PPS PORT PRIORITY``), rates first."""
    def pri(q: dict) -> str:
        return f" {q['priority']}" if q.get("priority") is not None else ""
    lines = [f"set_queue_rate {q['rate_pps']} {q['port']}{pri(q)}" for q in queues if "rate_pps" in q]
    return lines + [f"set_queue_depth {q['depth']} {q['port']}{pri(q)}" for q in queues if "depth" in q]


def pcap_prefixes(workdir: Path, ports) -> dict[int, str]:
    """Each port's pcap file prefix for ``--use-files`` (``<prefix>_in.pcap`` / ``_out.pcap``): absolute
    paths in ``workdir``, which is also bmv2's working directory."""
    workdir = Path(workdir).resolve()
    return {port: str(workdir / f"p{port}") for port in ports}


def bmv2_argv(ports: dict[int, str], grpc_port: int, thrift_port: int, cpu_port: int | None) -> list[str]:
    """``simple_switch_grpc`` reading and writing pcap files (``<prefix>_in.pcap`` / ``_out.pcap`` per
    port) after ``WAIT_S``: the fabric target's command line, device id 0, plus ``--use-files`` (an
    option of bmv2's own, so before the ``--`` that starts the target's options)."""
    from mrc_fabric.targets.bmv2 import Bmv2

    argv = Bmv2().switch_argv(0, ports, grpc_port, runtime_port=thrift_port, cpu_port=cpu_port)
    return argv[:1] + ["--use-files", str(WAIT_S)] + argv[1:]


def _pcap_pkt(data: bytes, time_us: int):
    from scapy.packet import Raw
    pkt = Raw(data)
    pkt.time = time_us / 1e6
    return pkt


def _collect(workdir: Path, ports: list[int], timeout_s: float) -> dict[int, list[bytes]]:
    """Wait (bounded) until the output pcaps stop growing for 2 s, then read them (raw records:
    bmv2 writes link type 0, which a decoding reader would take for BSD loopback)."""
    from scapy.utils import RawPcapReader
    start = time.monotonic()
    deadline = start + timeout_s
    last, stable_since = None, start
    while time.monotonic() < deadline:
        sizes = tuple((workdir / f"p{p}_out.pcap").stat().st_size
                      if (workdir / f"p{p}_out.pcap").exists() else -1 for p in ports)
        if sizes != last:
            last, stable_since = sizes, time.monotonic()
        elif time.monotonic() - stable_since >= 2.0 and time.monotonic() - start >= WAIT_S + 2:
            break
        time.sleep(0.2)  # polling a file bmv2 writes; no event to wait on
    out: dict[int, list[bytes]] = {}
    for p in ports:
        f = workdir / f"p{p}_out.pcap"
        if f.exists() and f.stat().st_size > 24:
            with RawPcapReader(str(f)) as r:
                out[p] = [bytes(data) for data, _meta in r]
    return out
