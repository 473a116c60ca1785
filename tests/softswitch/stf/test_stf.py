"""The STF runner (softswitch.stf): the script grammar, p4c's judging rules, the command line
and the corpus tally, on small programs of this project (tests/softswitch/stf/data)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from softswitch.frontend import load_program
from softswitch.stf import StfError, parse_stf, pattern_matches, run_stf
from softswitch.stf.__main__ import main as stf_main
from softswitch.stf.script import parse_wildcard
from softswitch.stf.tally import main as tally_main

DATA = Path(__file__).parent / "data"


def _run(program: str, stf_text: str):
    return run_stf(load_program(str(DATA / program), {}, []), parse_stf(stf_text))


def test_parse_commands_and_comments():
    cmds = parse_stf("# c\nadd t 7 a.b:0x1 k:0x**01 act(p:2, q:0b11) = H1  # tail\n"
                     "setdefault t drop()\npacket 3 00 01\nexpect 4 0* 1$\nexpect 5\nwait\n")
    add = cmds[0]
    assert (add.kind, add.line, add.args["table"], add.args["priority"]) == ("add", 2, "t", 7)
    assert add.args["keys"] == [("a.b", "0x1"), ("k", "0x**01")]
    assert (add.args["action"], add.args["params"]) == ("act", [("p", "2"), ("q", "0b11")])
    assert cmds[1].args == {"table": "t", "action": "drop", "params": []}
    assert cmds[2].args == {"port": 3, "data": b"\x00\x01"}
    assert cmds[3].args == {"port": 4, "pattern": "0*1$"}
    assert cmds[4].args == {"port": 5, "pattern": None}
    assert cmds[5].kind == "ignored"
    assert parse_stf("packet 1 012")[0].args["data"] == b"\x01\x02"  # as p4c's HexToByte


@pytest.mark.parametrize("bad", ["frobnicate 1", "packet 1 0g", "add t k:1", "expect 1 0$0",
                                 "add t k:1 a(p)", "packet"])
def test_malformed_lines_name_the_line(bad):
    with pytest.raises(StfError, match=r"stf:2"):
        parse_stf("\n" + bad)


def test_wildcards_and_patterns():
    assert parse_wildcard("0x**01") == (0x0001, 0x00FF, 16)
    assert parse_wildcard("0b1*") == (0b10, 0b10, 2)
    assert parse_wildcard("12")[:2] == (12, -1)
    assert pattern_matches("0A**", bytes.fromhex("0AFF"))
    assert pattern_matches("0A", bytes.fromhex("0AFF"))  # longer frame: fine without '$'
    assert not pattern_matches("0A$", bytes.fromhex("0AFF"))
    assert pattern_matches("0AFF$", bytes.fromhex("0AFF"))
    assert not pattern_matches("0AFF00", bytes.fromhex("0AFF"))  # shorter frame
    assert not pattern_matches("0B**", bytes.fromhex("0AFF"))


def test_tables_program_passes():
    res = _run("tables.p4", (DATA / "tables.stf").read_text())
    assert res.passed and len(res.checks) == 4 and res.packets_in == 5


def test_ternary_priority_larger_wins():
    base = ("add t_tern 10 dst:0x**********01 valid:1 fwd(port:3, src:1)\n"
            "add t_tern 20 dst:0x00000000000* valid:1 fwd(port:4, src:2)\n"
            "packet 1 000000000001 111111111111 0800\n")
    assert _run("tables.p4", base + "expect 4 000000000001\n").passed
    assert not _run("tables.p4", base + "expect 3 000000000001\n").passed


def test_mismatch_extra_and_missing_frames_fail():
    add = "add t_exact etype:0x0800 fwd(port:2, src:0)\n"
    res = _run("tables.p4", add + "packet 1 000000000099 111111111111 0800\nexpect 2 0000000000AA\n")
    assert not res.passed and "expected 0000000000AA" in res.checks[0].describe()
    # a frame on an observed port nobody expected
    res = _run("tables.p4", add + "packet 1 000000000099 111111111111 0800\nexpect 1\n"
               "packet 2 000000000099 111111111111 0800\n")
    assert not res.passed and "unexpected frame" in res.checks[0].describe()
    # an expected frame that never came
    res = _run("tables.p4", add + "packet 1 000000000099 111111111111 0801\nexpect 2 00\n")
    assert not res.passed and "got nothing" in res.checks[0].describe()


def test_unobserved_ports_and_dataless_expect():
    add = "add t_exact etype:0x0800 fwd(port:2, src:0)\npacket 1 000000000099 111111111111 0800\n"
    assert _run("tables.p4", add).passed  # port 2 is named nowhere: bmv2 has no interface there
    assert _run("tables.p4", add + "expect 2\n").passed


def test_names_resolve_like_p4c_and_errors_are_clear():
    with pytest.raises(StfError, match="no table 'nope'"):
        _run("tables.p4", "add nope k:1 a()\n")
    with pytest.raises(StfError, match="parameter 'src' not given"):
        _run("tables.p4", "add t_exact etype:1 fwd(port:2)\n")
    with pytest.raises(StfError, match="does not fit 9 bits"):
        _run("tables.p4", "add t_exact etype:1 fwd(port:600, src:0)\n")
    assert _run("tables.p4", "add I.t_exact h.eth.etype:1 I.fwd(port:2, src:0)\n").passed


def test_clone_multicast_and_registers():
    res = _run("clone_mcast.p4", (DATA / "clone_mcast.stf").read_text())
    assert res.passed and len(res.checks) == 6


def test_command_line_exit_codes(tmp_path, capsys):
    assert stf_main([str(DATA / "tables.p4")]) == 0
    out = capsys.readouterr().out
    assert "PASS port 2 frame 1" in out and out.strip().endswith("5 packets sent")
    bad = tmp_path / "bad.stf"
    bad.write_text("packet 1 000000000099 111111111111 0800\nexpect 1 00\n")
    assert stf_main([str(DATA / "tables.p4"), str(bad)]) == 1
    assert "FAIL port 1 frame 1" in capsys.readouterr().out
    assert stf_main([str(DATA / "rejected.p4"), str(bad)]) == 2
    assert "unsupported:" in capsys.readouterr().out
    bad.write_text("add t_exact etype:1 nosuch()\n")
    assert stf_main([str(DATA / "tables.p4"), str(bad)]) == 3


def test_a_script_that_cannot_be_read_is_an_stf_error_not_a_crash(tmp_path, capsys):
    """A binary script was a CRASH (a softswitch bug, by the exit codes' meaning) with its bytes and a
    traceback; a missing one said "[Errno 2] No such file or directory: 'X.stf'", and not that the name
    was the default taken from the program's."""
    import subprocess
    import sys

    binary = tmp_path / "bin.stf"
    binary.write_bytes(b"\xe7\xb4\xd8packet 1 00\n")
    assert stf_main([str(DATA / "tables.p4"), str(binary)]) == 3
    out = capsys.readouterr()
    assert out.out == f"STF-ERROR: tables.p4: {binary}: not a text file (invalid continuation byte at byte 0)\n"
    assert out.err == ""
    prog = tmp_path / "p.p4"
    prog.write_text((DATA / "tables.p4").read_text())
    assert stf_main([str(prog)]) == 3
    assert capsys.readouterr().out == (f"STF-ERROR: p.p4: {tmp_path / 'p.stf'}: No such file or directory (no "
                                       "TEST.stf given: the default is the program's name with .stf)\n")
    assert stf_main([str(prog), str(tmp_path)]) == 3
    assert capsys.readouterr().out == f"STF-ERROR: p.p4: {tmp_path}: Is a directory\n"
    # `softswitch stf` is the same command (it was taken for a program file named "stf")
    r = subprocess.run([sys.executable, "-m", "softswitch", "stf", str(DATA / "tables.p4")], capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0 and r.stdout.strip().endswith("5 packets sent"), r
    r = subprocess.run([sys.executable, "-m", "softswitch", "stf", "--help"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 0 and r.stdout.startswith("usage: softswitch stf ") and "``" not in r.stdout


def test_tally_over_a_small_corpus(tmp_path, capsys):
    for name, stf in (("tables", "tables.stf"), ("clone_mcast", "clone_mcast.stf"),
                      ("rejected", "tables.stf")):
        shutil.copy(DATA / f"{name}.p4", tmp_path / f"{name}.p4")
        shutil.copy(DATA / stf, tmp_path / f"{name}.stf")
    (tmp_path / "misrun.p4").write_text((DATA / "tables.p4").read_text())
    (tmp_path / "misrun.stf").write_text("packet 1 000000000099 111111111111 0800\nexpect 1 00\n")
    (tmp_path / "no_stf.p4").write_text("")
    assert tally_main([str(tmp_path), "-j", "2"]) == 1  # the misrun fails the tally
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("4 programs: 2 pass, 1 fail, 1 rejected, 0 error")
    assert "rejected, by feature:" in out and "rejected.p4" in out
    assert "fail:\n  misrun.p4: FAIL port 1 frame 1" in out


def test_for_loops():
    """for loops with break, continue, nesting, several init/update items and a function call
    in the condition (re-run before every test)."""
    res = _run("loops.p4", (DATA / "loops.stf").read_text())
    assert res.passed and len(res.checks) == 6


@pytest.mark.parametrize("loop_path", [False, True])
def test_for_in_loops_and_static_assert(loop_path):
    """for-in loops over ranges (inclusive, bounds read once, empty when lo > hi, ending at the
    type's largest value, signed), over a header stack (every element, copies) and over a list;
    break, continue, return in a function, nesting, a written loop variable; static_assert as
    statement and constant.  On the API's path and on the packet loop's."""
    res = run_stf(load_program(str(DATA / "forin.p4"), {}, []),
                  parse_stf((DATA / "forin.stf").read_text()), loop_path=loop_path)
    assert res.passed and len(res.checks) == 15


def test_failing_static_assert_names_its_message_and_position(tmp_path):
    from softswitch.frontend import P4Error

    src = (DATA / "forin.p4").read_text().replace("static_assert(true);",
                                                  'static_assert(false, "not yet");', 1)
    (tmp_path / "x.p4").write_text(src)
    line = next(i for i, ln in enumerate(src.split("\n"), 1) if "not yet" in ln)
    with pytest.raises(P4Error, match=rf"x\.p4:{line}:9: error: static_assert failed: not yet$"):
        load_program(str(tmp_path / "x.p4"), {}, [])


def test_break_outside_a_loop_is_an_error(tmp_path):
    from softswitch.frontend import P4Error

    src = (DATA / "loops.p4").read_text().replace("h.h.r = 0;\n        for", "break;\n        for", 1)
    (tmp_path / "x.p4").write_text(src)
    with pytest.raises(P4Error, match=r"x\.p4:17:\d+: error: break outside a for loop"):
        load_program(str(tmp_path / "x.p4"), {}, [])


def test_varbit_header_stack_and_stack_equality():
    """A stack of headers with a varbit field: two-argument extract into ``next`` (overflow is
    StackOutOfBounds), emit at the parsed widths, ``==`` on headers and on whole stacks."""
    res = _run("varbit_stack.p4", (DATA / "varbit_stack.stf").read_text())
    assert res.passed and len(res.checks) == 4


def test_const_entry_priority_annotation_after_the_action():
    """'KEY : a(1) @priority(3);' -- the annotation after the action counts (it was ignored,
    so the entries ran in textual order: a silent misrun found by p4c's
    table-entries-priority-bmv2)."""
    res = _run("const_priority.p4", (DATA / "const_priority.stf").read_text())
    assert res.passed and len(res.checks) == 3


def test_serializable_enum_key_takes_underlying_values_in_const_entries(tmp_path):
    """'(bit<16>) E.B &&& 0xff00' in the const entries of a table keyed by an enum bit<16> value,
    as p4c accepts (its table-entries-ser-enum-bmv2)."""
    src = (DATA / "const_priority.p4").read_text()
    src = src.replace("struct H {", "enum bit<16> En { A = 0x1100, B = 0x2200 }\nstruct H {")
    # p4c requires a @name on a cast key (its TableKeyNames names only paths, members, slices, ...)
    src = src.replace("key = { h.h.t: ternary; }", 'key = { (En) h.h.t: ternary @name("h.h.t"); }')
    src = src.replace("0x1111 &&& 0x000F : set(1) @priority(3);", "(bit<16>) En.B &&& 0xff00 : set(7);")
    src = src.replace("0x1181            : set(2);", "En.A : set(8);")
    src = src.replace("0x1181 &&& 0xF00F : set(3) @priority(1);", "")
    (tmp_path / "e.p4").write_text(src)
    res = run_stf(load_program(str(tmp_path / "e.p4"), {}, []),
                  parse_stf("packet 0 2233 00\nexpect 1 2233 07 $\npacket 0 1100 00\nexpect 1 1100 08 $\n"))
    assert res.passed and len(res.checks) == 2


def test_a_softswitch_exception_is_a_crash_not_a_drop(monkeypatch):
    """The pipeline turns an exception into a dropped packet; the runner must not count that as
    the program's drop (an expectation of 'no frame' would pass)."""
    from softswitch.contract import IngressResult
    from softswitch.stf.__main__ import classify
    from softswitch.stf.runner import StfSwitch

    def boom(self, data, port, now):
        return IngressResult(dropped=True, drop_reason="internal error: ValueError: x")

    real_init = StfSwitch.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        monkeypatch.setattr(type(self.pipeline), "ingress", boom)

    monkeypatch.setattr(StfSwitch, "__init__", init)
    r = classify(DATA / "tables.p4", DATA / "tables.stf", verbose=False)
    assert r["status"] == "crash" and "internal error" in r["message"]


def test_lookahead_as_a_statement_still_needs_the_bytes(tmp_path):
    src = (DATA / "tables.p4").read_text().replace(
        "state start { pk.extract(h.eth); transition accept; }",
        "state start { pk.lookahead<bit<160>>(); pk.extract(h.eth); transition accept; }")
    (tmp_path / "la.p4").write_text(src)
    prog = load_program(str(tmp_path / "la.p4"), {}, [])
    stf = "add t_exact etype:0x0800 fwd(port:2, src:0)\n"
    # 20 bytes: parsed, forwarded; 14 bytes: PacketTooShort before the extract, etype reads 0
    assert _run_prog(prog, stf + "packet 1 000000000099 111111111111 0800 000000000000\n"
                     "expect 2 000000000099 000000000000 0800\n").passed
    assert _run_prog(prog, stf + "packet 1 000000000099 111111111111 0800\nexpect 2\n").outputs == {}


def _run_prog(prog, text: str):
    return run_stf(prog, parse_stf(text))


def test_header_union_stack_indexed():
    res = _run("union_stack.p4", (DATA / "union_stack.stf").read_text())
    assert res.passed and len(res.checks) == 3


@pytest.mark.parametrize("name", ["tables", "clone_mcast", "const_priority", "loops", "union_stack", "varbit_stack"])
def test_the_switch_loops_path_with_recycled_headers_gives_the_same_frames(name):
    """``--loop-path`` runs packets through ``ingress_item``/``egress_frame`` as the packet loop
    does (header objects recycled from one packet to the next); every script must judge the same
    and produce the same frames as on the API's path."""
    prog = load_program(str(DATA / f"{name}.p4"), {}, [])
    cmds = parse_stf((DATA / f"{name}.stf").read_text())
    api, loop = run_stf(prog, cmds), run_stf(prog, cmds, loop_path=True)
    assert api.passed and loop.passed and api.checks
    assert loop.outputs == api.outputs and len(loop.checks) == len(api.checks)


@pytest.mark.root
@pytest.mark.slow
def test_process_path_runs_the_script_over_p4runtime_and_veths(capsys):
    """``--process``: a softswitch process, the program pushed over P4Runtime, the script's
    multicast group, clone session and register commands as P4Runtime writes, packets on veths.
    A frame shorter than an Ethernet header cannot go on a veth: reported, not judged a misrun."""
    import os

    if os.geteuid() != 0:
        pytest.skip("needs root (veth, AF_PACKET)")
    assert stf_main([str(DATA / "clone_mcast.p4"), "--process"]) == 0
    out = capsys.readouterr().out
    assert "PASS: clone_mcast.p4: 6 of 6 expected frames matched, 4 packets sent" in out, out
    assert stf_main([str(DATA / "const_priority.p4"), "--process"]) == 3
    out = capsys.readouterr().out
    assert "a frame of 3 bytes on port 0 could not be sent on a veth" in out, out
    assert "UNSENDABLE: const_priority.p4" in out and "0 of 3 packets sent" in out, out
    # meter rates as P4Runtime MeterEntry writes (colours that do not depend on the switch's clock)
    assert stf_main([str(DATA / "meters.p4"), str(DATA / "meters_yellow.stf"), "--process"]) == 0
    assert "PASS: meters.p4: 3 of 3 expected frames matched" in capsys.readouterr().out
    assert not [ln for ln in os.popen("ip -br link").read().splitlines() if ln.startswith("sf")]


def test_process_switch_waits_for_frames_the_expects_still_name():
    """After the last packet the process runner listens on while the expects name more frames
    than a port has received: a frame that leaves the switch's side of a real veth 0.5 s later
    (past the 150 ms quiet time between packets) is judged, not missed; with nothing owed it
    returns after the quiet time."""
    import os
    import threading
    import time

    from p4.config.v1 import p4info_pb2

    from mrc_fabric.netbuild import delete_interface
    from softswitch.engine.ports import LinuxPort
    from softswitch.stf import process

    if os.geteuid() != 0:
        pytest.skip("needs root (veth, AF_PACKET)")
    port = 7
    sw_if, host_if = process._ifnames(port)
    ends: list[LinuxPort] = []
    try:
        process._add_veth(port)
        for name in (host_if, sw_if):
            ends.append(LinuxPort(port, name))
            assert ends[-1].open(), name
        host, switch_side = ends
        sw = process.ProcessStfSwitch(p4info_pb2.P4Info(), None, {port: host})
        frame = bytes.fromhex("025e00000007025f0000000788b5") + b"late" * 4
        t = threading.Timer(0.5, switch_side.send, (frame,))
        t0 = time.monotonic()
        t.start()
        try:
            got = sw.settle({port: 1})
        finally:
            t.join()
        assert got == [(port, frame)], got
        assert 0.45 < time.monotonic() - t0 < process.MAX_WAIT_S
        t0 = time.monotonic()
        assert sw.settle({}) == [] and time.monotonic() - t0 < 0.05  # nothing owed: no wait at all
        assert sw._collect({}) == [] and time.monotonic() - t0 < 1.0  # the quiet time, no more
    finally:
        for e in ends:
            e.close()
        delete_interface(sw_if)


@pytest.mark.root
@pytest.mark.bmv2
@pytest.mark.slow
def test_process_path_on_bmv2(capsys):
    """``--process --target bmv2``: the same script compiled by p4c-bm2-ss and run on
    simple_switch_grpc over P4Runtime and veths, judged the same way (where bmv2 is installed)."""
    import os

    from softswitch.diff.bmv2side import bmv2_missing

    if bmv2_missing() or os.geteuid() != 0:
        pytest.skip(f"bmv2 STF run: {bmv2_missing() or 'needs root (veth, AF_PACKET)'}")
    assert stf_main([str(DATA / "tables.p4"), "--process", "--target", "bmv2"]) == 0
    assert "PASS: tables.p4: 4 of 4 expected frames matched, 5 packets sent" in capsys.readouterr().out


def test_process_path_refuses_defines_it_would_not_pass(capsys):
    """The target's compiler runs as the fabric runs it, with no -D or -I: a run that asks for
    them is refused by name instead of running the program without them."""
    assert stf_main([str(DATA / "tables.p4"), "--process", "-D", "X=1"]) == 3
    assert "without -D or -I" in capsys.readouterr().out


def test_call_with_inout_in_a_for_condition_is_an_error(tmp_path):
    """p4c's side-effect ordering refuses a for condition whose call writes an argument ("Side
    effects in for condition not supported"); softswitch ran it before each round until
    2026-12-06, accepting a program p4c and bmv2 never run.  A pure call stays accepted."""
    from softswitch.frontend import P4Error

    src = (DATA / "effect_calls.p4").read_text().replace(
        "for (bit<8> i = inc(h.h.b); i < 15;", "for (bit<8> i = 0; i < inc(h.h.b);", 1)
    assert src != (DATA / "effect_calls.p4").read_text()
    (tmp_path / "x.p4").write_text(src)
    line = next(i for i, ln in enumerate(src.split("\n"), 1) if "i < inc(h.h.b)" in ln)
    with pytest.raises(P4Error, match=rf"x\.p4:{line}:\d+: error: Side effects in for condition"):
        load_program(str(tmp_path / "x.p4"), {}, [])
    # loops.p4 calls a function with only `in` parameters in a condition: no side effect
    load_program(str(DATA / "loops.p4"), {}, [])


def test_softswitch_stf_into_a_pipe_that_closes_gets_no_traceback():
    """`softswitch stf X.p4 | head -1`: a BrokenPipeError traceback (p4info-diff already ended with 141)."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "softswitch", "stf", str(DATA / "tables.p4")], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
