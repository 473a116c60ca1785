"""mrc-controller CLI: topo gen/check, sid, plan, ev gen/check, and error exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from controller.cli import main
from controller.topology import load_topology

ROOT = Path(__file__).resolve().parents[2]


def test_topo_gen_and_check(tmp_path, capsys):
    out = tmp_path / "t.yaml"
    assert main(["topo", "gen", "--planes", "2", "--spines", "2", "--leaves", "2", "--hosts-per-leaf", "2",
                 "-o", str(out)]) == 0
    t = load_topology(out)
    assert len(t.switches) == 8 and len(t.hosts) == 4
    for h in t.hosts:  # each host on leaf i of every plane
        assert {t.host_leaf(h, p)[0].name[2:] for p in (1, 2)} in ({"l1"}, {"l2"})
    assert main(["topo", "check", str(out)]) == 0
    assert "ok" in capsys.readouterr().out


def test_bad_topology_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    d = {"planes": 1, "switches": [{"name": "s", "role": "spine", "plane": 1}], "hosts": [],
         "links": [["s:1", "ghost:1"]]}
    bad.write_text(yaml.safe_dump(d))
    assert main(["topo", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "ghost" in err


def test_sid_plan_ev(tmp_path, capsys):
    t = tmp_path / "t.yaml"
    main(["topo", "gen", "-o", str(t)])
    assert main(["sid", "-t", str(t), "--format", "json"]) == 0
    sid = json.loads(capsys.readouterr().out)
    assert sid["switches"]["p1l1"]["usid"] == "2101"
    assert main(["plan", "-t", str(t), "--switch", "p1s1"]) == 0
    assert list(yaml.safe_load(capsys.readouterr().out)) == ["p1s1"]
    assert main(["plan", "-t", str(t), "--switch", "zz"]) == 2
    capsys.readouterr()
    assert main(["ev", "gen", "-t", str(t), "-o", str(tmp_path / "ev"), "--evs-per-path", "2"]) == 0
    assert (tmp_path / "ev" / "h3.yaml").exists()
    assert main(["ev", "check", "-t", str(t), "--evs-per-path", "2"]) == 0
    assert "ok: 192 EVs" in capsys.readouterr().out  # 12 pairs x 8 paths x 2 x (srv6 + stev)


def test_run_rejects_bad_numbers_before_touching_a_switch(capsys):
    """Each was taken as given: a negative election id crashed the arbitration, --watch-qp 0x1000000
    watched QP 0 (24-bit key), --retries 0 reported every switch unconverged without trying one, and
    a 0 interval/timeout silently meant the default.  Now exit 2 naming the flag, nothing connected."""
    import os

    topo = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small.yaml")
    cases = [(["--election-id", "-3"], "--election-id must be 1"), (["--election-id", "0"], "--election-id"),
             (["--retries", "0"], "--retries must be 1 or more"), (["--interval", "-5"], "--interval must be more"),
             (["--wiring-timeout", "0"], "--wiring-timeout"), (["--counters-interval", "0"], "--counters-interval"),
             (["--watch-qp", "0x1000000"], "24-bit QP number"), (["--grpc-base-port", "70000"], "--grpc-base-port"),
             # an infinite period was an OverflowError in the daemon's thread; a port past 65535 a bind()
             # traceback after the sessions had opened
             (["--wiring-interval", "inf"], "--wiring-interval must be more than 0 seconds (and finite)"),
             (["--interval", "nan"], "--interval must be more"), (["--counters-interval", "1e300"], "(and finite)"),
             (["--metrics-port", "70000"], "--metrics-port must be 0 (none) .. 65535"),
             (["--view-port", "-1"], "--view-port must be 0"),
             # with the view a wiring round may wait twice the timeout: Options refused that past
             # threading.TIMEOUT_MAX with a ValueError traceback, after the pipeline had loaded
             (["--view-port", "18080", "--wiring-timeout", "5e9"], "--wiring-timeout must be at most")]
    for extra, msg in cases:
        assert main(["run", "-t", topo, "--once", "--grpc-base-port", "1", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err, (extra, err)


def test_outputs_that_cannot_be_written_are_named_not_tracebacks(tmp_path, capsys):
    """`-o` into a missing directory, onto a directory, or `ev gen -o` naming a file were OSError
    tracebacks; an --ev-format that selects nothing wrote plans without a single EV."""
    small = "examples/small.yaml"
    a_file = tmp_path / "f.yaml"
    a_file.write_text("x: 1\n")
    for argv, said in [
        (["sid", "-t", small, "-o", str(tmp_path / "no" / "sid.yaml")], "cannot write: No such file or directory"),
        (["plan", "-t", small, "-o", str(tmp_path)], "cannot write: Is a directory"),
        (["topo", "gen", "-o", str(tmp_path / "no" / "t.yaml")], "cannot write: No such file or directory"),
        (["ev", "gen", "-t", small, "-o", str(a_file)], "exists and is not a directory"),
        (["ev", "gen", "-t", small, "--host", "h1", "--ev-format", ","], "--ev-format ',': give srv6, stev or both"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (argv, err)
    assert a_file.read_text() == "x: 1\n"


def test_status_and_run_refuse_what_they_cannot_read(tmp_path, capsys):
    assert main(["status", "--watch", "-1"]) == 2  # a ValueError from sleep() after the first view
    assert "--watch must be 0 (once) or more seconds" in capsys.readouterr().err
    assert main(["status", "--url", "garbage"]) == 2  # a ValueError traceback from urllib
    assert "--url garbage: give an http:// or https:// URL" in capsys.readouterr().err
    junk = tmp_path / "p4info.txtpb"
    junk.write_text("- a\n")
    # a text_format.ParseError traceback, before any switch was touched
    assert main(["run", "-t", "examples/small.yaml", "--once", "--p4info", str(junk), "--device-config", str(junk),
                 "--grpc-base-port", "1"]) == 2
    assert f"{junk}: not a P4Info text file: 1:1" in capsys.readouterr().err


def test_status_reads_no_local_file(tmp_path):
    """`status --url file:///etc/shadow` opened the file (urllib takes file://) and the parse error quoted
    its first line on stderr; a scheme other than http/https is now refused before anything is read."""
    import subprocess
    import sys

    secret = tmp_path / "secret.txt"
    secret.write_text("root:TOPSECRET-hash:20228:0:99999:7:::\n")
    for url in (secret.as_uri(), f"FILE://{secret}", f"ftp://127.0.0.1{secret}", "data:,TOPSECRET-hash"):
        r = subprocess.run([sys.executable, "-m", "controller", "status", "--url", url], capture_output=True,
                           text=True, timeout=60, check=False)
        assert r.returncode == 2 and r.stdout == "", (url, r)
        assert "TOPSECRET" not in r.stderr.replace(url, ""), r.stderr
        assert r.stderr == (f"mrc-controller status: error: --url {url}: give an http:// or https:// URL (the "
                            "metrics endpoint of `mrc-controller run --metrics-port`)\n")


def test_a_watch_qp_that_is_not_a_number_is_named(capsys):
    """argparse named the converter: "argument --watch-qp: invalid <lambda> value: 'abc'"."""
    import os

    import pytest

    topo = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small.yaml")
    with pytest.raises(SystemExit) as e:
        main(["run", "-t", topo, "--once", "--watch-qp", "abc"])
    assert e.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == ("mrc-controller run: error: argument --watch-qp: 'abc' is not a QP number "
                   "(decimal or 0x hex, 0 .. 0xFFFFFF)"), err
    assert main(["run", "-t", topo, "--once", "--grpc-base-port", "1", "--watch-qp", "0x1000000"]) == 2  # hex still read
    assert "got 0x1000000" in capsys.readouterr().err


def test_ev_check_offers_no_output_options_it_would_ignore(tmp_path, capsys):
    """`ev check --help` listed --format and -o ("output file") from the plan commands' options, and
    `ev check -o report.json` wrote nothing and said nothing. It prints one line: the options are gone,
    so argparse names them."""
    import os

    import pytest

    from controller.cli import build_parser

    topo = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small.yaml")
    help_text = build_parser()._subparsers._group_actions[0].choices["ev"]._subparsers._group_actions[0] \
        .choices["check"].format_help()
    assert "--format" not in help_text and "--output" not in help_text
    with pytest.raises(SystemExit) as e:
        main(["ev", "check", "-t", topo, "-o", str(tmp_path / "report.json")])
    assert e.value.code == 2 and "unrecognized arguments: -o" in capsys.readouterr().err
    assert main(["ev", "check", "-t", topo]) == 0
    assert capsys.readouterr().out == "ok: 96 EVs walked hop by hop to their destination port\n"


def test_a_plane_with_more_spines_than_the_ecmp_selector_holds_is_refused_offline(tmp_path, capsys):
    """A leaf's ECMP group has one member per spine and mrc_switch.p4's ecmp_selector holds at most 64
    (the contract's MAX_GROUP_SIZE): converge refuses 65 on every attempt, so topo gen/check and plan
    refuse it up front, in one line naming the plane, the count and the limit.  --max-group-size sets
    another program's limit, 0 none (the simulator takes any number of spines)."""
    from controller import p4contract as P4

    assert P4.MAX_GROUP_SIZE[P4.AP_INGRESS_ROUTING_ECMP_SELECTOR] == 64
    t = tmp_path / "t.yaml"
    gen = ["topo", "gen", "--planes", "2", "--leaves", "1", "--hosts-per-leaf", "1", "-o", str(t)]
    assert main(gen + ["--spines", "64"]) == 0 and main(["topo", "check", str(t)]) == 0  # the largest that fits
    capsys.readouterr()
    assert main(gen + ["--spines", "65"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "plane 1 has 65 spines" in err and "at most 64" in err
    assert main(gen + ["--spines", "65", "--max-group-size", "0"]) == 0
    for argv in (["topo", "check", str(t)], ["plan", "-t", str(t), "--switch", "p1s1"]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == ("mrc-controller: error: plane 1 has 65 spines, but a leaf's ECMP group (one "
                                     "member per spine) holds at most 64 (mrc_switch.p4's ecmp_selector "
                                     "@max_group_size; --max-group-size N for another program, 0 for none)\n")
        assert main(argv + ["--max-group-size", "128"]) == 0  # a program with a larger selector
        assert main(argv + ["--max-group-size", "0"]) == 0
        capsys.readouterr()
        assert main(argv + ["--max-group-size", "32"]) == 2
        assert "holds at most 32 (--max-group-size)" in capsys.readouterr().err


def test_ev_format_and_grpc_host_errors_name_what_was_typed(tmp_path, capsys):
    """``--ev-format srv6,foo`` said "unknown EV format 'FOO' (SRV6, STEV)", upper case the user never
    typed; ``run --grpc-host`` with a name that does not resolve tried every switch and reported "no
    P4Runtime server at nosuchhost.invalid:9559" for each.  Both are now one line before anything runs."""
    import socket

    topo = "examples/small.yaml"
    assert main(["ev", "gen", "-t", topo, "--host", "h1", "--ev-format", "srv6,foo"]) == 2
    assert capsys.readouterr().err == ("mrc-controller: error: --ev-format 'srv6,foo': unknown format 'foo': "
                                       "give srv6, stev or both\n")
    assert main(["ev", "gen", "-t", topo, "--host", "h1", "--ev-format", " Stev "]) == 0  # case and spaces
    capsys.readouterr()
    try:
        socket.getaddrinfo("mrc-no-such-host.invalid", None)
    except socket.gaierror as e:
        if e.errno == socket.EAI_AGAIN:
            pytest.skip("the resolver is down: the name cannot be told apart from one that is not known")
    assert main(["run", "-t", topo, "--once", "--grpc-host", "mrc-no-such-host.invalid"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--grpc-host mrc-no-such-host.invalid: the name does not resolve" in err


def test_ctrl_c_during_run_once_exits_130_without_a_traceback():
    """Ctrl-C while `run --once` retried unreachable switches was a KeyboardInterrupt traceback, and the
    process then waited out every switch's retry backoff in close() (a second Ctrl-C: a second traceback)."""
    import signal
    import subprocess
    import sys
    import time

    p = subprocess.Popen([sys.executable, "-m", "controller", "run", "-t", "examples/small.yaml", "--once",
                          "--grpc-base-port", "1", "--retries", "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        for line in p.stderr:  # bounded: the first retry is logged within a second or two
            if "will retry" in line or time.monotonic() - t0 > 30:
                break
        p.send_signal(signal.SIGINT)
        t_int = time.monotonic()
        _, err = p.communicate(timeout=30)
        took = time.monotonic() - t_int
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert "Traceback" not in err, err
    assert p.returncode == 130, err
    assert "mrc-controller run: interrupted" in err
    assert took < 5, took  # not the retries' backoff


def test_run_reads_p4cs_p4info_forms_and_refuses_an_empty_one(tmp_path, capsys):
    """`run --p4info X.json` (p4c --p4runtime-files writes JSON for .json, binary for .bin) was "not a
    P4Info text file"; an empty P4Info file was taken and every switch refused the push in turn; a
    directory "does not exist (run `make build`)"."""
    from controller.session import PipelineConfig
    from softswitch.compile_cmd import main as compile_main

    outs = [tmp_path / n for n in ("p.txtpb", "p.json", "p.bin")]
    dev = tmp_path / "dev.json"
    assert compile_main(["p4src/mrc_switch.p4", "--p4runtime-files", ",".join(map(str, outs)),
                         "--device-config", str(dev)]) == 0
    loaded = [PipelineConfig.from_files(p, dev) for p in outs]
    assert loaded[0].p4info.tables and loaded[0].p4info == loaded[1].p4info == loaded[2].p4info
    run = ["run", "-t", "examples/small.yaml", "--once", "--grpc-base-port", "1", "--device-config", str(dev)]
    empty = tmp_path / "empty.txtpb"
    empty.write_text("")
    dev_txt = tmp_path / "dev.txt"  # the device config given as the P4Info: its one long line was all quoted
    dev_txt.write_bytes(dev.read_bytes())
    for p4info, said in ((empty, f"{empty}: holds no P4Info (empty)"),
                         (dev_txt, f"{dev_txt}: not a P4Info text file: 1:1 : "),
                         (tmp_path, f"pipeline file {tmp_path} is a directory, not a file"),
                         (dev, f"{dev}: not a P4Info JSON file: ")):
        assert main([*run, "--p4info", str(p4info)]) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1 and len(err) < 400, err[:600]


def test_an_unknown_switch_or_host_lists_the_ones_there_are(tmp_path, capsys):
    """`plan --switch nope` said "unknown switch 'nope'" (which ones are there? in which file?)."""
    small = "examples/small.yaml"
    assert main(["plan", "-t", small, "--switch", "p1s9"]) == 2
    assert capsys.readouterr().err == (f"mrc-controller: error: --switch p1s9: no such switch in {small} (switches: "
                                       "p1l1, p1l2, p1s1, p1s2, p2l1, p2l2, p2s1, p2s2)\n")
    big = tmp_path / "big.yaml"
    assert main(["topo", "gen", "--leaves", "5", "--hosts-per-leaf", "4", "-o", str(big)]) == 0
    assert main(["ev", "gen", "-t", str(big), "--host", "h99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mrc-controller: error: --host h99: no such host in {big} (hosts: h1, h10, ")
    assert err.endswith(", ... (20 in all))\n")


def test_an_empty_switch_or_host_name_is_no_such_one(tmp_path, capsys):
    """`plan --switch ""` (a script's unset $SW) printed every switch's plan, exit 0, and
    `ev gen --host "" -o DIR` wrote every host's: read as "no --switch" / "no --host"."""
    small = "examples/small.yaml"
    assert main(["plan", "-t", small, "--switch", ""]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("mrc-controller: error: --switch '': no such switch in ")
    assert main(["ev", "gen", "-t", small, "--host", "", "-o", str(tmp_path / "ev")]) == 2
    assert capsys.readouterr().err.startswith("mrc-controller: error: --host '': no such host in ")
    assert not (tmp_path / "ev").exists()


def test_ctrl_c_while_run_builds_its_pipeline_exits_130_without_a_traceback(tmp_path):
    """Ctrl-C during `run`'s pipeline compile (softswitch: a second or two; p4c for bmv2: longer) was a
    KeyboardInterrupt traceback out of the compiler.  The program is a FIFO here, so the compile is
    held in its read for as long as the test needs."""
    import os
    import sys

    from sigint_helper import interrupt_while_reading

    fifo = tmp_path / "prog.p4"
    os.mkfifo(fifo)
    rc, err = interrupt_while_reading([sys.executable, "-m", "controller", "run", "-t", "examples/small.yaml",
                                       "--once", "--grpc-base-port", "1", "--program", str(fifo)], fifo)
    assert "Traceback" not in err, err
    assert rc == 130 and err.endswith("mrc-controller run: interrupted\n"), (rc, err)


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_ctrl_c_while_the_commands_import_is_one_line(tmp_path, how):
    """Ctrl-C in mrc-controller's first half second (yaml, gRPC, the telemetry) was a KeyboardInterrupt
    traceback from the script's `from controller.cli import main` (or from `import controller`)."""
    import sys

    from sigint_helper import interrupt_while_importing

    script = Path(sys.executable).parent / "mrc-controller"
    if how == "console script" and not script.exists():
        pytest.skip(f"no console script {script} (package not installed)")
    cmd = [str(script)] if how == "console script" else [sys.executable, "-m", "controller"]
    rc, err = interrupt_while_importing([*cmd, "topo", "check", "examples/small.yaml"], tmp_path)
    assert (rc, err) == (130, "mrc-controller: interrupted\n")


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`mrc-controller plan -t big.yaml | head`: a BrokenPipeError traceback (and another at exit)."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line
    try:
        p = subprocess.run([sys.executable, "-m", "controller", "plan", "-t", "examples/large.yaml"], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    finally:
        os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr


def test_bare_import_controller_reaches_submodules_and_lists_lazy_names():
    """`import controller` then `controller.plan.thresholds` / `controller.evplan.ev_nodes` (the dotted
    names docs/ use) worked while controller/__init__.py imported its plan modules eagerly; the lazy
    __init__ made them an AttributeError.  Run in a fresh interpreter: pytest has loaded them here."""
    code = ("import controller, sys\n"
            "assert 'controller.plan' not in sys.modules\n"
            "assert callable(controller.plan.thresholds) and callable(controller.evplan.ev_nodes)\n"
            "assert controller.topology.load_topology is controller.load_topology\n"
            "assert controller.reconcile.__name__ == 'controller.reconcile'\n"
            "assert {'Controller', 'load_topology', 'build_plan'} <= set(dir(controller))\n"
            "try:\n    controller.no_such_name\nexcept AttributeError as e:\n    print('AE', e)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "AE module 'controller' has no attribute 'no_such_name'"
