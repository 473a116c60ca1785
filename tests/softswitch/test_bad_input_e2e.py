"""Bad input through a running softswitch process (the command line, not the library):

* a flood of truncated and malformed frames does not crash it, the program's parser-error
  counter shows them, and it still forwards a good packet afterwards;
* syntax and type errors in ``softswitch PROG.p4`` exit 1 with ``file:line:col`` on stderr; an
  unsupported construct is named;
* p4runtime-shell, set up as ``python -m p4runtime_sh --grpc-addr ... --device-id 1 --election-id
  0,1 --config p4info.txtpb,<device config>`` with the files ``softswitch compile`` wrote, inserts
  entries into a CLI-started switch and reads them back.
"""
from __future__ import annotations

import os
import random
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from softswitch.api import SoftSwitch, free_tcp_port
from softswitch.engine.control import send_command

ROOT = Path(__file__).resolve().parents[2]
IPV4_P4 = ROOT / "ptf_tests" / "softswitch" / "p4" / "ipv4.p4"     # counts parser errors by kind
TABLES_P4 = ROOT / "ptf_tests" / "softswitch" / "p4" / "tables.p4"
ETH_P_ALL = 3
TOO_SHORT, NO_ERROR = 1, 0


def _softswitch(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "softswitch", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False)


# ----------------------------------------------------------------------------- packet flood
def _ipv4_frame(ttl: int = 64) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
                 / IP(src="192.0.2.1", dst="198.51.100.9", ttl=ttl) / UDP(sport=7, dport=9) / b"good")


def _raw(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    return s


def _recv_matching(s: socket.socket, want, timeout: float) -> bytes | None:
    """The first frame on ``s`` for which ``want(frame)`` holds, within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([s], [], [], left)[0]:
            return None
        frame = s.recv(65535)
        if want(frame):
            return frame
    return None


def _counter(addr: str, name: str, index: int) -> int:
    with grpc.insecure_channel(addr) as ch:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
        cfg = stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=1, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE))
        cid = next(c.preamble.id for c in cfg.config.p4info.counters if c.preamble.name.endswith(name))
        req = p4runtime_pb2.ReadRequest(device_id=1)
        entry = req.entities.add().counter_entry
        entry.counter_id, entry.index.index = cid, index
        return sum(e.counter_entry.data.packet_count for r in stub.Read(req, timeout=10) for e in r.entities)


@pytest.fixture
def flood_switch(veth_factory, tmp_path) -> Iterator[tuple[SoftSwitch, str, str]]:
    veth_factory("w3cbs1", "w3cbt1")
    veth_factory("w3cbs2", "w3cbt2")
    sw = SoftSwitch(IPV4_P4, interfaces={1: "w3cbs1", 2: "w3cbs2"}, subprocess=True,
                    runtime_addr=f"127.0.0.1:{free_tcp_port()}", log_file=str(tmp_path / "switch.log"))
    sw.start()
    try:
        yield sw, "w3cbt1", "w3cbt2"
    finally:
        sw.stop()


@pytest.mark.root
@pytest.mark.timeout(180)
def test_malformed_flood_counted_no_crash_still_forwards(flood_switch):
    sw, tx_if, rx_if = flood_switch
    good = _ipv4_frame()
    rng = random.Random(7)
    eth = good[:14]
    flood = [eth + good[14:14 + n] for n in range(20)]                          # every truncation
    flood += [eth + bytes(rng.randrange(256) for _ in range(rng.randrange(20))) for _ in range(300)]
    flood += [bytes(rng.randrange(256) for _ in range(rng.randrange(14, 80))) for _ in range(300)]
    # (frames under 14 bytes cannot be sent: the kernel refuses them on an Ethernet device)
    expected_short = sum(1 for f in flood if len(f) >= 14 and f[12:14] == b"\x08\x00" and len(f) < 34)
    before = _counter(sw.grpc_addr, "parse_result", TOO_SHORT)
    with _raw(tx_if) as tx, _raw(rx_if) as rx:
        for frame in flood:
            tx.send(frame)
        # the switch is alive and forwards a good packet after the flood
        tx.send(good)
        out = _recv_matching(rx, lambda f: f.endswith(b"good") and len(f) == len(good), timeout=10)
    assert sw.process is not None and sw.process.poll() is None, "the switch died during the flood"
    assert out is not None, "no good packet forwarded after the flood"
    assert out[14 + 8] == 63, "TTL not decremented: the good packet did not go through the program"
    deadline = time.monotonic() + 10
    while (after := _counter(sw.grpc_addr, "parse_result", TOO_SHORT)) - before < expected_short \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert after - before == expected_short, "PacketTooShort count (program counter over P4Runtime)"
    # every bad frame went through the program and was dropped by it: none hit an internal error
    stats = send_command(sw.runtime_addr, "switch_stats", [])
    assert stats["pipeline_errors"] == 0, stats
    assert stats["ingress_drops"] >= len(flood), stats


# ----------------------------------------------------------------------------- P4 errors
_HEAD = "#include <core.p4>\n#include <v1model.p4>\n"
_TAIL = """
struct m_t { }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.e); transition accept; } }
control VC(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { %s } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { p.emit(h.e); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _program(body: str, headers: str = "header e_t { bit<48> a; bit<16> t; }\nstruct h_t { e_t e; }\n") -> str:
    return _HEAD + headers + _TAIL % body


_I_LINE = _program("").splitlines().index(next(ln for ln in _program("").splitlines()
                                                if ln.startswith("control I("))) + 1
CASES = {
    # name: (source, line of the error, what stderr must say besides the position)
    "syntax": (_program("sm.egress_spec = 1"), _I_LINE, r"syntax error|expected|unexpected"),
    "type": (_program("bool b = h.e.t;"), _I_LINE, r"type|bool|bit<16>"),
    "undeclared": (_program("sm.egress_spec = nosuchthing;"), _I_LINE, r"nosuchthing"),
    "unsupported": (_program("", "header e_t { bit<48> a; bit<16> t; }\nstruct h_t { e_t e; varbit<64> v; }\n"),
                    4, r"unsupported.*varbit|varbit.*unsupported"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_program_exits_1_with_position(case, tmp_path):
    source, line, say = CASES[case]
    prog = tmp_path / f"bad_{case}.p4"
    prog.write_text(source)
    res = _softswitch(str(prog), "--", "--grpc-server-addr", "127.0.0.1:0")
    assert res.returncode == 1, res.stdout + res.stderr
    pos = re.search(rf"{re.escape(str(prog))}:(\d+):(\d+):", res.stderr)
    assert pos, f"no {prog}:line:col in stderr: {res.stderr!r}"
    assert int(pos.group(1)) == line, res.stderr
    assert re.search(say, res.stderr, re.IGNORECASE), res.stderr
    assert "Traceback" not in res.stderr
    # the compiler gives the same answer
    comp = _softswitch("compile", str(prog), "-o", str(tmp_path / "out"))
    assert comp.returncode == 1 and pos.group(0) in comp.stderr, comp.stderr


# ----------------------------------------------------------------------------- p4runtime-shell
@pytest.mark.timeout(300)
def test_p4runtime_shell_against_cli_switch(tmp_path):
    from p4runtime_sh import shell as sh

    out = tmp_path / "build"
    comp = _softswitch("compile", str(TABLES_P4), "--p4runtime-files", str(out / "p4info.txtpb"),
                       "--device-config", str(out / "softswitch.json"), "-o", str(out))
    assert comp.returncode == 0, comp.stderr
    with SoftSwitch(None, subprocess=True, log_file=str(tmp_path / "switch.log")) as sw:
        args = sh.get_arg_parser().parse_args([
            "--grpc-addr", sw.grpc_addr, "--device-id", "1", "--election-id", "0,1",
            "--config", f"{out / 'p4info.txtpb'},{out / 'softswitch.json'}"])
        sh.setup(args.device_id, args.grpc_addr, args.election_id, args.role_name, args.config,
                 verbose=False)
        try:
            te = sh.TableEntry("I.t_exact")(action="I.set_exact")
            te.match["h.t.addr"] = "10.1.2.3"
            te.action["v"] = "9"
            te.insert()
            lpm = sh.TableEntry("I.t_lpm")(action="I.set_lpm")
            lpm.match["h.t.addr"] = "10.1.0.0/16"
            lpm.action["v"] = "2"
            lpm.insert()
            rng = sh.TableEntry("I.t_range")(action="I.set_range")
            rng.match["h.t.port"] = "80..90"
            rng.priority = 5
            rng.action["v"] = "3"
            rng.insert()

            got = list(sh.TableEntry("I.t_exact").read())
            assert len(got) == 1
            assert int.from_bytes(got[0].match["h.t.addr"].exact.value, "big") == 0x0A010203
            assert got[0].action["v"].value == b"\x09"
            (l1,) = list(sh.TableEntry("I.t_lpm").read())
            assert (l1.match["h.t.addr"].lpm.prefix_len, l1.action["v"].value) == (16, b"\x02")
            (r1,) = list(sh.TableEntry("I.t_range").read())
            assert r1.priority == 5 and r1.match["h.t.port"].range.high == b"\x5a"

            te.action["v"] = "10"
            te.modify()
            (modified,) = list(sh.TableEntry("I.t_exact").read())
            assert modified.action["v"].value == b"\x0a"
            te.delete()
            assert list(sh.TableEntry("I.t_exact").read()) == []
        finally:
            sh.teardown()
        assert sw.process is not None and sw.process.poll() is None
    assert os.path.exists(out / "softswitch.json")
