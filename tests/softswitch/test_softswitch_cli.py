"""Command line: simple_switch_grpc shape, compatibility flags, queue options, `softswitch cli`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from softswitch.cli import build_parser, main, parse_args
from softswitch.engine.control import ControlError, ControlHandler, ControlServer, send_command
from softswitch.engine.loop import PacketLoop
from softswitch.engine.tm import TrafficManager

ROOT = Path(__file__).resolve().parents[2]


def test_help_exits_zero_and_names_the_shape():
    out = subprocess.run([sys.executable, "-m", "softswitch", "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0
    for word in ("--grpc-server-addr", "--cpu-port", "--no-p4", "--queue-depth", "--queue-rate",
                 "--link-delay", "--runtime-addr", "-i PORT@IFNAME", "--thrift-port"):
        assert word in out.stdout


@pytest.mark.parametrize("source, said", [
    (None, "softswitch: error: cannot read "),
    ("control c() { apply { } }\n", "softswitch: {path}:1:1: error: "),
])
def test_a_program_that_does_not_load_is_named_once(tmp_path, source, said):
    """The switch printed "softswitch: error: error: cannot read ..." (the P4 error's own "error:" after its
    prefix); now the program's error as `softswitch compile` prints it, after "softswitch: "."""
    prog = tmp_path / "p.p4"
    if source is not None:
        prog.write_text(source)
    out = subprocess.run([sys.executable, "-m", "softswitch", str(prog), "--", "--grpc-server-addr",
                          "127.0.0.1:0"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1
    assert out.stderr.startswith(said.format(path=prog)), out.stderr
    assert "error: error:" not in out.stderr


def test_simple_switch_grpc_command_line():
    cfg, _ns, warnings = parse_args(
        ["--device-id", "3", "-i", "1@h4x1", "-i", "2@h4x2", "--log-console", "--log-level", "info",
         "prog.p4", "-D", "FOO=1", "-I", "inc", "--", "--grpc-server-addr", "127.0.0.1:50001",
         "--cpu-port", "255"])
    assert (cfg.device_id, cfg.interfaces, cfg.program) == (3, [(1, "h4x1"), (2, "h4x2")], "prog.p4")
    assert (cfg.defines, cfg.include_dirs) == (["FOO=1"], ["inc"])
    assert (cfg.grpc_addr, cfg.cpu_port) == ("127.0.0.1:50001", 255)
    assert not cfg.trace  # log level info hides the per-packet trace
    assert warnings == []


def test_bmv2_only_flags_are_accepted_with_warnings():
    cfg, _ns, warnings = parse_args(
        ["--thrift-port", "9091", "--nanolog", "ipc:///tmp/x", "--debugger", "--no-p4",
         "--", "--grpc-server-addr", "0.0.0.0:9559", "--enable-swap", "--drop-port", "100",
         "--priority-queues", "2", "--made-up"])
    text = "\n".join(warnings)
    for flag in ("--thrift-port", "--nanolog", "--debugger", "--enable-swap",
                 "--drop-port 100: softswitch's drop port is always 511", "--priority-queues 2", "'--made-up'"):
        assert flag in text
    assert cfg.program is None and cfg.grpc_addr == "0.0.0.0:9559"
    # bmv2's default drop port is what softswitch does: nothing to warn about (it was "not supported")
    assert parse_args(["--no-p4", "--", "--drop-port", "511"])[2] == []


def test_target_help_prints_the_help_instead_of_starting(capsys):
    """`softswitch --no-p4 -- --help` (bmv2 prints its target options for `--help` before `--`) was warned about as an unknown
    target option, and the switch started."""
    with pytest.raises(SystemExit) as e:
        parse_args(["--no-p4", "--", "--help"])
    assert e.value.code == 0
    assert "--grpc-server-addr HOST:PORT" in capsys.readouterr().out


def test_pcap_directory_is_optional_as_in_bmv2():
    assert parse_args(["--no-p4"])[0].pcap_dir is None
    assert parse_args(["--pcap", "--no-p4"])[0].pcap_dir == "."
    assert parse_args(["--pcap", "caps", "--no-p4"])[0].pcap_dir == "caps"
    assert parse_args(["--pcap=caps", "prog.p4"])[0].pcap_dir == "caps"
    # the directory is optional: `--pcap PROG.p4` is the program, not a directory
    cfg, _ns, warnings = parse_args(["-i", "1@a", "--pcap", "prog.p4", "--", "--cpu-port", "255"])
    assert (cfg.pcap_dir, cfg.program, warnings) == (".", "prog.p4", [])


def test_queue_and_delay_specs():
    cfg, _ns, _w = parse_args(["--queue-depth", "16", "--queue-depth", "2:8", "--queue-depth", "2/7:4",
                               "--queue-rate", "3:1000", "--link-delay", "500", "--link-delay", "4:20",
                               "--link-rate", "300", "--link-rate", "5:200", "--no-p4"])
    assert cfg.queue_depths == [(None, None, 16), (2, None, 8), (2, 7, 4)]
    assert cfg.queue_rates == [(3, None, 1000)]
    assert cfg.link_delays == [(None, 500), (4, 20)]
    assert cfg.link_rates == [(None, 300), (5, 200)]


@pytest.mark.parametrize("argv, message", [
    ([], "PROG.p4 or --no-p4"),
    (["a.p4", "--no-p4"], "not both"),
    (["x.json"], "not a bmv2 JSON"),
    (["-i", "eth0", "--no-p4"], "PORT@IFNAME"),
    (["-i", "511@h4x", "--no-p4"], "drop port"),
    (["-i", "1@h4a", "-i", "1@h4b", "--no-p4"], "bound twice"),
    (["--queue-depth", "2/9:4", "--no-p4"], "'2/9:4': priorities are 0..7"),
    # a negative delay was "values must be >= 0 and priorities 0..7": a delay has no priority
    (["--link-delay", "-5", "--no-p4"], "argument --link-delay: '-5': value -5 is out of range 0..4294967295\n"),
    (["--queue-rate=-1:5", "--no-p4"], "'-1:5': port -1 is out of range 0..510"),
    # every number in its range, ASCII digits only (until 2026-12-08 a port 600 made a queue no frame
    # reaches, int() took '1_000' and a delay of 10**25 us)
    (["--queue-depth", "600:4", "--no-p4"], "argument --queue-depth: '600:4': port 600 is out of range 0..510\n"),
    (["--link-delay", "1_000", "--no-p4"], "'1_000': expected N, PORT:N or PORT/PRIORITY:N"),
    (["--link-delay", "10000000000000000000000000", "--no-p4"], "value 10000000000000000000000000 is out of range"),
    (["--queue-depth", "2147483648", "--no-p4"], "value 2147483648 is out of range 0..2147483647"),
    (["--link-bps", "511:1000", "--no-p4"], "port 511 is out of range 0..510"),
    (["--device-id", "18446744073709551616", "--no-p4"], "must be 0..18446744073709551615"),
    (["-i", "\u00b2@veth1", "--no-p4"], "expected PORT@IFNAME"),
    (["--no-p4", "--", "--cpu-port", "1_0"], "argument --cpu-port: invalid int value: '1_0'"),
    # an option on the wrong side of '--' (before '--' simple_switch_grpc refuses it too): a device id after it was
    # warned about and dropped (the switch ran as device 1); an address before it became the program
    (["--no-p4", "--", "--device-id", "0", "--cpu-port", "255"],
     "softswitch: error: --device-id is a switch option: give it before '--'"),
    (["--no-p4", "--", "-i", "1@veth1"], "-i is a switch option: give it before '--'"),
    (["--no-p4", "--grpc-server-addr", "0.0.0.0:50051"], "--grpc-server-addr is a target option: give it after '--'"),
    (["--no-p4", "--cpu-port=64"], "--cpu-port is a target option: give it after '--'"),
    # abbreviated, as argparse (and bmv2's parser) take them: these were still warned about and dropped
    # after '--' (device 1 again), and before it the address was the program ("not both")
    (["--no-p4", "--", "--device", "0"], "--device (--device-id) is a switch option: give it before '--'"),
    (["--no-p4", "--", "--log-cons"], "--log-cons (--log-console) is a switch option"),
    (["--grpc-server-a", "127.0.0.1:5", "--no-p4"], "--grpc-server-a (--grpc-server-addr) is a target option"),
    (["--no-p4", "--cpu=5"], "--cpu (--cpu-port) is a target option: give it after '--'"),
    (["--grpc-server-c", "x", "--no-p4"], "--grpc-server-c (--grpc-server-cacert, --grpc-server-cert) is a target"),
    (["--no-p4", "--", "-i1@veth1"], "-i1@veth1 (-i) is a switch option: give it before '--'"),
    # the target options after a second '--' were each warned about as unknown and dropped
    (["--no-p4", "--", "--", "--cpu-port", "5"], "softswitch: error: '--' given twice"),
    (["build/softswitch.json"], "not a bmv2 JSON file or a device config"),
    (["--link-delay", "1/2:3", "--no-p4"], "per port"),
    (["--link-rate", "1/2:3", "--no-p4"], "per port"),
    (["--no-p4", "--", "--cpu-port", "511"], "1..510"),
    # the port wrapped (99999 -> 34463: the switch served where nobody looked); a uint64 device id
    (["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:99999"], "--grpc-server-addr 127.0.0.1:99999: port must be"),
    (["--no-p4", "--runtime-addr", "127.0.0.1:70000"], "--runtime-addr 127.0.0.1:70000: port must be"),
    # no port: these exited 1 when the switch started (the same input with a port too big exited 2)
    (["--no-p4", "--runtime-addr", "127.0.0.1"], "softswitch: error: --runtime-addr 127.0.0.1: expected HOST:PORT\n"),
    (["--no-p4", "--runtime-addr", "127.0.0.1:x"], "--runtime-addr 127.0.0.1:x: expected HOST:PORT\n"),
    (["--no-p4", "--", "--grpc-server-addr", "127.0.0.1"],
     "--grpc-server-addr 127.0.0.1: expected HOST:PORT (or unix:PATH)\n"),
    (["--no-p4", "--", "--grpc-server-addr", "localhost:http"], "--grpc-server-addr localhost:http: expected HOST:PORT"),
    # one parser (softswitch.engine.control.split_addr) for every address: a non-ASCII digit passed
    # str.isdigit() and int() raised a ValueError traceback (until 2026-12-07)
    (["--no-p4", "--runtime-addr", "127.0.0.1:\u00b2"], "softswitch: error: --runtime-addr 127.0.0.1:\u00b2: expected HOST:PORT\n"),
    (["--no-p4", "--", "--grpc-server-addr", "[::1]:\u00b2"],
     "--grpc-server-addr [::1]:\u00b2: expected HOST:PORT (or unix:PATH)\n"),
    (["--no-p4", "--", "--grpc-server-addr", "[]:9559"], "--grpc-server-addr []:9559: expected HOST:PORT (or unix:PATH)\n"),
    (["--no-p4", "--device-id", "-1"], "argument --device-id: -1: must be 0..18446744073709551615"),
    # bmv2's pcap-file ports: ignored, the switch waited for interfaces named by file paths, for ever
    (["--use-files", "8", "-i", "0@/tmp/run/p0", "--no-p4"], "--use-files (bmv2's pcap-file ports) is not supported"),
    # the form softswitch.diff's bmv2 side gives (paths longer than an interface name may be): the
    # reason, not "interface names are at most 15 characters"
    (["--use-files", "8", "-i", "0@/tmp/tmpk2j4x9qz/p0", "-i", "1@/tmp/tmpk2j4x9qz/p1", "--no-p4"],
     "--use-files (bmv2's pcap-file ports) is not supported"),
    (["--use-files=8", "-i", "0@/tmp/tmpk2j4x9qz/p0", "--no-p4"], "--use-files (bmv2's pcap-file ports) is not supported"),
])
def test_bad_command_lines_exit_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_runtime_control_round_trip(capsys):
    loop = PacketLoop(TrafficManager(), [])
    server = ControlServer(ControlHandler(loop), "127.0.0.1", 0)
    server.start()
    addr = f"127.0.0.1:{server.address[1]}"
    try:
        assert main(["cli", "--addr", addr, "set_queue_depth", "16", "2"]) == 0
        assert main(["cli", "--addr", addr, "set_queue_rate", "500", "2", "7"]) == 0
        assert main(["cli", "--addr", addr, "set_link_delay", "250", "2"]) == 0
        assert main(["cli", "--addr", addr, "set_link_rate", "300", "2"]) == 0
        stats = loop.tm.stats(2)
        assert stats[0]["depth"] == 16 and stats[7]["rate_pps"] == 500 and stats[0]["rate_pps"] == 0
        assert loop.tm.port(2).link_delay_us == 250 and stats[0]["link_rate_pps"] == 300
        capsys.readouterr()
        assert main(["cli", "--addr", addr, "--json", "switch_stats"]) == 0
        assert '"ingress_packets": 0' in capsys.readouterr().out
        assert main(["cli", "--addr", addr, "set_queue_depth", "x"]) == 2
        assert "usage: set_queue_depth" in capsys.readouterr().err
        assert main(["cli", "--addr", addr, "frobnicate"]) == 2
        assert "unknown command" in capsys.readouterr().err
        # the client knows the commands itself: a typo is named also when no switch answers there (it said
        # only "cannot reach the runtime control"), in the server's words
        want = f"unknown command 'show_port'; known: {', '.join(sorted(ControlHandler(loop).commands))}"
        assert main(["cli", "--addr", "127.0.0.1:1", "show_port"]) == 2
        assert capsys.readouterr().err == f"softswitch cli: error: {want}\n"
        assert main(["cli", "--addr", addr, "show_port"]) == 2
        assert capsys.readouterr().err == f"softswitch cli: error: {want}\n"
        assert main(["cli", "--addr", addr, "set_queue_rate", "10", "1", "9"]) == 2
        assert "PRIORITY 9 is out of range 0..7" in capsys.readouterr().err
        assert main(["cli", "--addr", addr, "port_stats", "7"]) == 1  # printed nothing and exit 0 before
        assert "no port 7 on this switch (ports: none)" in capsys.readouterr().err
    finally:
        server.stop()
        loop.stop()


@pytest.mark.parametrize("args, said", [
    # `set_link_delay 1 -5` set a delay on a port -5 (and 600 on one v1model cannot have), exit 0
    (["set_link_delay", "1", "-5"], "set_link_delay: PORT -5 is out of range 0..510 (usage: set_link_delay DELAY_US [PORT])"),
    (["set_queue_depth", "4", "600"], "set_queue_depth: PORT 600 is out of range 0..510"),
    (["set_queue_rate", "-1"], "set_queue_rate: RATE_PPS -1 is out of range 0..9223372036854775807"),
    (["set_queue_depth", "2147483648"], "DEPTH_PKTS 2147483648 is out of range 0..2147483647"),
    (["set_link_bps", "1_000"], "set_link_bps: BITS_PER_S '1_000' is not an integer"),
    (["set_link_rate", "\u0663"], "set_link_rate: RATE_PPS '\u0663' is not an integer"),
    (["set_link_delay", "1.5"], "DELAY_US '1.5' is not an integer"),
    (["port_stats", "1", "2"], "port_stats: takes 0 to 1 argument, got 2 (usage: port_stats [PORT])"),
    (["set_queue_depth"], "set_queue_depth: takes 1 to 3 arguments, got 0 (usage: set_queue_depth DEPTH_PKTS [PORT [PRIORITY]])"),
])
def test_runtime_numbers_are_range_checked_by_client_and_switch(args, said, capsys):
    """One line and exit 2 from `softswitch cli` before it connects (no switch at port 1); the switch
    refuses the same request from any other client, and makes no port of it."""
    assert main(["cli", "--addr", "127.0.0.1:1", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("softswitch cli: error: ") and said in err and err.count("\n") == 1
    loop = PacketLoop(TrafficManager(), [])
    server = ControlServer(ControlHandler(loop), "127.0.0.1", 0)
    server.start()
    try:
        with pytest.raises(ControlError) as e:
            send_command(f"127.0.0.1:{server.address[1]}", args[0], args[1:])
        assert said in str(e.value)
        # a JSON client's number that is not an integer is refused, not truncated (1.9 was port 1)
        with pytest.raises(ControlError, match="PORT 1.9 is not an integer"):
            send_command(f"127.0.0.1:{server.address[1]}", "set_link_delay", [5, 1.9])
        assert loop.tm.ports == {}
    finally:
        server.stop()
        loop.stop()


def test_runtime_control_reads_at_most_one_max_line_per_request():
    """A request line is read at most MAX_LINE bytes at a time: one without a newline used to be read
    whole first (200 MiB sent, 206 MB more RSS), then refused.  Now the client gets an error and the
    connection closes after MAX_LINE bytes; a good request on the same connection before it works."""
    import json
    import resource
    import socket

    from softswitch.engine.control import MAX_LINE

    loop = PacketLoop(TrafficManager(), [])
    server = ControlServer(ControlHandler(loop), "127.0.0.1", 0)
    server.start()
    try:
        peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with socket.create_connection(("127.0.0.1", server.address[1]), timeout=10) as s:
            f = s.makefile("rb")
            s.sendall(b'{"cmd": "switch_stats"}\n')
            assert json.loads(f.readline())["ok"] is True
            sent = 0
            try:
                while sent < 64 * MAX_LINE:  # 4 MiB, never a newline
                    s.sendall(b"x" * MAX_LINE)
                    sent += MAX_LINE
            except OSError:  # the server closed the connection: what it read is bounded
                pass
            reply = json.loads(f.readline())
            assert reply == {"ok": False, "error": f"request longer than {MAX_LINE} bytes"}
            assert f.readline() == b""  # closed
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak0
        assert grown_kib < 2048, grown_kib
    finally:
        server.stop()
        loop.stop()


def test_cli_reports_unreachable_switch(capsys):
    from softswitch.api import free_tcp_port
    port = free_tcp_port()
    assert main(["cli", "--addr", f"127.0.0.1:{port}", "show_ports"]) == 1
    assert f"cannot reach the runtime control at 127.0.0.1:{port}: Connection refused" in capsys.readouterr().err


def test_help_does_not_call_use_files_ignored():
    """--use-files is refused (6131a3d), so --help must not list it among the bmv2 options that are
    'accepted ... and ignored'."""
    text = build_parser().format_help()
    ignored = text[text.index("accepted for simple_switch_grpc compatibility and ignored"):]
    assert "--use-files" not in ignored
    assert "--use-files WAIT" in text and "refused" in text


def test_unwritable_outputs_are_named_and_a_failed_compile_leaves_no_folder(tmp_path):
    """--log-file into a missing directory and `compile -o` naming a file were tracebacks; a compile that
    failed still made its -o folder."""
    run = lambda *a: subprocess.run([sys.executable, "-m", "softswitch", *a], cwd=ROOT, capture_output=True,
                                    text=True, timeout=120, check=False)
    r = run("--no-p4", "--log-file", str(tmp_path / "no" / "log"), "--", "--grpc-server-addr", "127.0.0.1:1")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"--log-file {tmp_path / 'no' / 'log'}: No such file or directory" in r.stderr
    r = run("compile", str(tmp_path / "missing.p4"), "-o", str(tmp_path / "out"))
    assert r.returncode == 1 and not (tmp_path / "out").exists()
    f = tmp_path / "file"
    f.write_text("")
    r = run("compile", str(ROOT / "p4src" / "mrc_switch.p4"), "-o", str(f))
    assert r.returncode == 1 and "Traceback" not in r.stderr and "cannot write output" in r.stderr


def test_cli_pointed_at_a_port_that_is_not_runtime_control(capsys):
    """`softswitch cli --addr` given the gRPC port by mistake: the HTTP/2 bytes it answers were read as
    JSON and printed as "'utf-32-be' codec can't decode bytes in position 12-15"; a port above 65535
    was tried modulo 65536 and reported "Connection refused"."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def answer_like_grpc() -> None:  # an HTTP/2 server's first bytes: an empty SETTINGS frame
        conn, _ = srv.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00\x40\x00")

    t = threading.Thread(target=answer_like_grpc, daemon=True)
    t.start()
    try:
        assert main(["cli", "--addr", f"127.0.0.1:{port}", "show_ports"]) == 1
    finally:
        t.join(10)
        srv.close()
    err = capsys.readouterr().err
    assert err == (f"softswitch cli: error: 127.0.0.1:{port} answered something other than softswitch runtime "
                   "control (JSON lines): is it the switch's --runtime-addr, not its gRPC port?\n"), err
    for addr, why in (("127.0.0.1:99999", "port must be 0..65535"), ("127.0.0.1", "expected HOST:PORT"),
                      ("127.0.0.1:\u00b2", "expected HOST:PORT")):
        # a usage error: exit 2 as argparse's, like the switch's --runtime-addr (until 2026-12-07: 1),
        # and worded as it is ("--addr ADDR: why"; it was "--addr: bad address 'ADDR': why" while the
        # command line had its own parser, and the '\u00b2' case said "invalid literal for int()")
        with pytest.raises(SystemExit) as e:
            main(["cli", "--addr", addr, "show_ports"])
        assert e.value.code == 2
        assert capsys.readouterr().err.endswith(f"softswitch cli: error: --addr {addr}: {why}\n")


def test_the_command_line_parses_addresses_with_split_addr_only():
    """cli.py once parsed --runtime-addr and --grpc-server-addr by hand beside split_addr; whatever
    split_addr accepts the command line accepts (and the switch then binds), and nothing else."""
    import inspect

    from softswitch import cli
    from softswitch.engine.control import split_addr

    assert "rpartition(\":\")" not in inspect.getsource(cli.parse_args)
    for addr in ("127.0.0.1:9090", "[::1]:9090", ":9090", "0.0.0.0:0", "localhost:65535"):
        split_addr(addr)
        _, ns, _ = parse_args(["--no-p4", "--runtime-addr", addr])
        assert ns.runtime_addr == addr
    assert split_addr(":9090") == ("0.0.0.0", 9090) and split_addr("[::1]:9090") == ("::1", 9090)


def test_compile_names_a_file_it_cannot_read_or_write_once(tmp_path, capsys):
    """`softswitch compile` said "cannot read /x.p4: [Errno 2] No such file or directory: '/x.p4'" (the
    path twice, an errno), "'utf-8' codec can't decode byte 0xb3 in position 0: ..." for a binary file,
    and "[Errno 17] File exists: 'F'" for `-o F` naming a file."""
    from softswitch.compile_cmd import main as compile_main

    missing, binary, f = tmp_path / "missing.p4", tmp_path / "bin.p4", tmp_path / "file"
    binary.write_bytes(b"control \xb3")
    f.write_text("")
    prog = str(ROOT / "p4src" / "mrc_switch.p4")
    for argv, said in (([str(missing)], f"error: cannot read {missing}: No such file or directory"),
                       ([str(binary)], f"error: cannot read {binary}: not UTF-8 text (byte 0xb3 at offset 8)"),
                       ([prog, "-o", str(f)], f"error: cannot write output: -o {f}: exists and is not a directory"),
                       ([prog, "-o", str(f / "sub")], f"error: cannot write output: {f / 'sub'}: Not a directory")):
        assert compile_main(argv) == 1
        assert capsys.readouterr().err == said + "\n"


def test_a_pcap_directory_that_cannot_be_made_is_refused_without_ports(tmp_path):
    """``--pcap DIR`` is made if missing, but only when a port opened its files: with no -i one that
    cannot be made (under a file, in /proc) went unnoticed and the switch ran on.  Now it is made, or
    refused with exit 1 (a start failure), before the switch starts.  The subprocess is bounded:
    without the check it would serve until killed."""
    f = tmp_path / "file"
    f.write_text("")
    r = subprocess.run([sys.executable, "-m", "softswitch", "--no-p4", "--pcap", str(f / "pcaps"), "--",
                        "--grpc-server-addr", "127.0.0.1:0"], cwd=ROOT, capture_output=True, text=True,
                       timeout=30, check=False)
    assert r.returncode == 1
    assert r.stderr == f"softswitch: error: --pcap {f / 'pcaps'}: cannot create the directory: Not a directory\n"


def test_cli_without_a_command_asks_for_the_command_only(capsys):
    """It said "the following arguments are required: command, args" though show_ports takes none."""
    with pytest.raises(SystemExit) as e:
        main(["cli"])
    assert e.value.code == 2
    assert capsys.readouterr().err.endswith("softswitch cli: error: the following arguments are required: command\n")


@pytest.mark.parametrize("sub", ["compile", "p4info-diff", "stf"])
def test_ctrl_c_while_a_subcommand_compiles_is_one_line(tmp_path, sub):
    """Ctrl-C during `softswitch compile` (or p4info-diff / stf of a .p4) was a KeyboardInterrupt traceback
    out of the front end.  The program is a FIFO, so the compile waits in its read until the signal."""
    import os
    import sys

    from sigint_helper import interrupt_while_reading

    fifo = tmp_path / "prog.p4"
    os.mkfifo(fifo)
    args = {"compile": [str(fifo)], "p4info-diff": [str(fifo), str(fifo)], "stf": [str(fifo), str(tmp_path / "t.stf")]}
    rc, err = interrupt_while_reading([sys.executable, "-m", "softswitch", sub, *args[sub]], fifo)
    assert "Traceback" not in err, err
    assert rc == 130 and err == f"softswitch {sub}: interrupted\n", (rc, err)


def test_every_runtime_command_has_its_argument_table():
    """`softswitch cli` checks a command and its arguments against COMMAND_ARGS before it connects;
    the switch runs ControlHandler's table: the two name the same commands."""
    from softswitch.engine.control import COMMAND_ARGS, ControlHandler

    assert set(ControlHandler(None).commands) == set(COMMAND_ARGS)
