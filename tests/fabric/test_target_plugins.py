"""The target plugins (fabric/targets): one registry, one interface, and no target-name branch
anywhere else in the code that starts switches, builds pipelines or runs the suites."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mrc_fabric import targets
from mrc_fabric.targets import TARGETS, Target, TargetError, get_target, load_pipeline

REPO = Path(__file__).resolve().parents[2]
# every Python file of the project (issue 12: no target-name branch outside the plugins); the
# plugins themselves are exempt
CHECKED = ("controller", "fabric", "ptf_tests", "tests", "bench", "mrc", "softswitch", "tools", "scripts")
EXEMPT = REPO / "fabric" / "targets"


def test_registry_matches_targets_tuple():
    assert tuple(targets._registry()) == TARGETS
    for name in TARGETS:
        t = get_target(name)
        assert isinstance(t, Target) and t.name == name
    with pytest.raises(TargetError, match="unknown target 'tofino'"):
        get_target("tofino")


def test_capabilities_are_declared():
    ss, bm = get_target("softswitch"), get_target("bmv2")
    assert (ss.has_link_delay, ss.can_write_registers, ss.shapes_at_start) == (True, True, True)
    assert (bm.has_link_delay, bm.can_write_registers, bm.shapes_at_start) == (False, False, False)
    with pytest.raises(TargetError, match="no link-delay model"):
        bm.shape(9090, 1, delay_us=5)
    assert (ss.can_truncate_clones, bm.can_truncate_clones) == (True, False)
    assert (ss.device_config_name, bm.device_config_name) == ("softswitch.json", "bmv2.json")


def test_what_a_run_needs_is_asked_of_the_plugin(tmp_path):
    """The suites skip with the plugin's reasons: its compiler, its run-time tools, its build outputs."""
    ss, bm = get_target("softswitch"), get_target("bmv2")
    assert ss.compiler_missing() is None and ss.tools_missing() is None and ss.build_missing(tmp_path) is None
    import shutil

    if shutil.which("p4c-bm2-ss") is None:  # no outputs and no compiler to make them
        assert str(tmp_path / "bmv2.json") in bm.build_missing(tmp_path)
    else:  # the pipeline is compiled when it is asked for
        assert bm.build_missing(tmp_path) is None
    (tmp_path / "bmv2.json").write_text("{}")
    assert bm.build_missing(tmp_path) is None

    if shutil.which("p4c-bm2-ss") is None:
        assert "p4c-bm2-ss is not on PATH" in bm.compiler_missing()
    if shutil.which("simple_switch_CLI") is None:
        assert "simple_switch_CLI is not on PATH" in bm.tools_missing()


def test_target_available_asks_for_everything_a_fabric_needs(tmp_path, monkeypatch):
    """bmv2's switch binary alone is not enough: without simple_switch_CLI, or without p4c and
    build/'s outputs, a bmv2-marked test must skip with that reason instead of erroring halfway."""
    import os

    if os.path.exists(targets.DEFAULT_BUILD / "bmv2.json"):
        pytest.skip(f"{targets.DEFAULT_BUILD} holds p4c's outputs: nothing can be shown missing")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))  # only what this test puts there
    assert "simple_switch_grpc is not on PATH" in targets.target_available("bmv2")
    for exe in ("simple_switch_grpc", "simple_switch_CLI"):
        (bindir / exe).write_text("#!/bin/sh\nexit 1\n")
        (bindir / exe).chmod(0o755)
        why = targets.target_available("bmv2")
        if exe == "simple_switch_grpc":
            assert "simple_switch_CLI is not on PATH" in why
    assert "run `make build` with p4c" in why
    (bindir / "p4c-bm2-ss").write_text("#!/bin/sh\nexit 1\n")
    (bindir / "p4c-bm2-ss").chmod(0o755)
    assert targets.target_available("bmv2") is None  # the pipeline is compiled when asked for
    assert targets.target_available("softswitch") is None


def test_runtime_command_failure_is_a_target_error():
    """A run-time command to a port nobody listens on fails with the plugin's error, not a crash."""
    from softswitch.api import free_tcp_port

    with pytest.raises(TargetError, match="set_queue_rate 20 4"):
        get_target("softswitch").runtime_command(f"127.0.0.1:{free_tcp_port()}", "set_queue_rate 20 4")


def test_command_lines():
    ss = get_target("softswitch").switch_argv(2, {1: "a"}, 50001, runtime_port=50002, queue_rate={1: 100},
                                              program="p.p4")
    assert "--queue-rate" in ss and "--link-rate" not in ss and "--runtime-addr" in ss and "p.p4" in ss and "--no-p4" not in ss
    bm = get_target("bmv2").switch_argv(2, {1: "a"}, 50001, runtime_port=50002, queue_rate={1: 100},
                                        program="p.p4")
    assert bm[0] == "simple_switch_grpc" and "--queue-rate" not in bm and "--no-p4" in bm
    assert bm[bm.index("--thrift-port") + 1] == "50002" and bm[-2:] == ["--priority-queues", "8"]
    # bmv2 logs nothing without a log target: warnings and errors go to the switch's log
    assert bm[bm.index("--log-console") + 1: bm.index("--log-console") + 3] == ["-L", "warn"]
    logged = get_target("bmv2").switch_argv(2, {1: "a"}, 50001, log_file="s.log")
    assert "--log-console" not in logged and logged[logged.index("--log-file") + 1] == "s.log"


def test_bmv2_options_stand_on_their_side_of_the_double_dash():
    """bmv2 parses its own options before ``--`` and hands the rest to the target (simple_switch_grpc's
    parser): a target option before it (``--priority-queues``) is a parse error that ends the switch,
    one of bmv2's after it is not seen.  Checked for the fabric's command line and the differential
    harness's (which adds ``--use-files``, and may have no CPU port)."""
    from softswitch.diff.bmv2side import bmv2_argv

    main_opts = {"--device-id", "-i", "--thrift-port", "--log-console", "-L", "--log-file", "--no-p4", "--use-files"}
    target_opts = {"--grpc-server-addr", "--cpu-port", "--priority-queues"}
    for argv in (get_target("bmv2").switch_argv(2, {1: "a", 2: "b"}, 50001, runtime_port=50002),
                 bmv2_argv({1: "/w/p1", 2: "/w/p2"}, 50001, 50002, cpu_port=None),
                 bmv2_argv({1: "/w/p1"}, 50001, 50002, cpu_port=64)):
        split = argv.index("--")
        before = {a for a in argv[:split] if a.startswith("-")}
        after = {a for a in argv[split + 1:] if a.startswith("-")}
        assert before <= main_opts and after <= target_opts, argv
        assert "--priority-queues" in after and "--notifications-addr" not in argv
    harness = bmv2_argv({1: "/w/p1"}, 50001, 50002, cpu_port=None)
    assert harness[harness.index("--use-files") + 1].isdigit() and "--cpu-port" not in harness
    assert harness[harness.index("--device-id") + 1] == "0" and "1@/w/p1" in harness
    assert bmv2_argv({1: "/w/p1"}, 50001, 50002, cpu_port=64)[-4:-2] == ["--cpu-port", "64"]


@pytest.mark.parametrize("line, refused", [
    ("RuntimeCmd: Error: Invalid number of args", True),
    ("Invalid table operation (BAD_MATCH_KEY)", True),
    ("RuntimeCmd: *** Unknown syntax: set_link_bps 1000 1", True),
    ("*** Unknown syntax: frobnicate", True),
    ("RuntimeCmd: ", False),
    ("Obtaining JSON from switch...", False),
    ("Done", False),
    ("Control utility for runtime P4 table manipulation", False),
])
def test_bmv2_cli_output_that_reports_a_refused_command(line, refused):
    """simple_switch_CLI exits 0 after a command it refused; the plugin reads its output for the
    three ways it says so (runtime_CLI's "Error:" and "Invalid ...", cmd's "*** Unknown syntax")."""
    from mrc_fabric.targets.bmv2 import _cli_refused

    assert _cli_refused(line) is refused


def test_link_model_command_lines():
    """The fabric's link model: on softswitch one link of ``rate`` full frames/s in bits/s shared by the
    port's queues, and a control queue of its own depth; bmv2 takes both over Thrift once it runs."""
    from mrc_fabric.targets import FULL_FRAME_BYTES, control_depth
    from softswitch.engine.tm import WIRE_OVERHEAD

    ss = get_target("softswitch").switch_argv(2, {1: "a"}, 50001, link_rate={1: 300}, queue_depth={1: 16},
                                              control_queue_depth={1: control_depth(16)})
    s = " ".join(ss)
    assert f"--link-bps 1:{300 * (FULL_FRAME_BYTES + WIRE_OVERHEAD) * 8}" in s and "--queue-rate" not in s
    assert "--queue-depth 1:16" in s and f"--queue-depth 1/0:{control_depth(16)}" in s and control_depth(16) > 16
    # the hosts' NICs charge a frame the same wire bytes as softswitch's links (mrc never imports softswitch)
    from mrc.wire.formats import ETH_WIRE_OVERHEAD
    assert ETH_WIRE_OVERHEAD == WIRE_OVERHEAD
    assert get_target("softswitch").shares_link_rate and not get_target("bmv2").shares_link_rate
    bm = get_target("bmv2").switch_argv(2, {1: "a"}, 50001, link_rate={1: 300}, control_queue_depth={1: 64})
    assert "--link-bps" not in bm and "--queue-depth" not in bm


def test_pipelines():
    p = load_pipeline("softswitch")
    assert p.source.startswith("softswitch:") and p.device_config and p.p4info.tables
    from controller.session import SessionError

    if get_target("bmv2").compiler_missing():  # (with p4c it would compile there: tests/test_targets.py)
        with pytest.raises(SessionError, match="missing"):
            get_target("bmv2").pipeline(build_dir=REPO / "no-such-build")
    with pytest.raises(SessionError, match="unknown target"):
        load_pipeline("tofino")


def _sources() -> list[Path]:
    out: list[Path] = []
    for c in CHECKED:
        p = REPO / c
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return [p for p in out if EXEMPT not in p.parents]


def test_no_target_name_branch_outside_the_plugins():
    """No comparison with, or membership test against, a target's name outside fabric/targets (an
    ``assert`` stating a value is a check, not a branch)."""
    found = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        asserted = {id(n) for a in ast.walk(tree) if isinstance(a, ast.Assert) for n in ast.walk(a)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or id(node) in asserted:
                continue
            for operand in (node.left, *node.comparators):
                vals = [operand] if isinstance(operand, ast.Constant) else (
                    list(operand.elts) if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [])
                if any(isinstance(v, ast.Constant) and v.value in TARGETS for v in vals):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, "target-name branches outside fabric/targets:\n" + "\n".join(found)


def test_no_default_target_typed_outside_the_plugins():
    """The default target is ``DEFAULT_TARGET`` / ``selected_target()`` of fabric/targets: no parameter
    default, ``default=``, ``.get(key, <target>)`` fallback or ``x or <target>`` names a target again."""
    fallbacks = ("get", "getenv", "test_param_get", "param")
    found = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.arguments):
                vals = [*node.defaults, *(d for d in node.kw_defaults if d is not None)]
            elif isinstance(node, ast.keyword) and node.arg == "default":
                vals = [node.value]
            elif isinstance(node, ast.Call) and len(node.args) >= 2 and (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")) in fallbacks:
                vals = node.args[1:]
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                vals = node.values[1:]
            else:
                continue
            for v in vals:
                if isinstance(v, ast.Constant) and v.value in TARGETS:
                    found.append(f"{path.relative_to(REPO)}:{v.lineno}: {v.value!r}")
    assert not found, "a default target typed outside fabric/targets (use selected_target()):\n" + "\n".join(found)


def test_every_target_option_follows_the_environment():
    """docs/targets.md: ``TARGET`` chooses the target "for everything at once" (the Docker image sets
    it).  Every ``--target`` command-line option of the project -- commands, runners and benches --
    therefore defaults to ``selected_target()`` (or to nothing, resolved through it later), never to
    ``DEFAULT_TARGET``, which ignores ``$TARGET`` (the fabric benches did: ``TARGET=bmv2 python
    bench/fabric_scenarios.py`` measured softswitch)."""
    found, seen = [], 0
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--target"):
                continue
            seen += 1
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if default is not None and not (isinstance(default, ast.Call)
                                            and getattr(default.func, "id", "") == "selected_target"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: default={ast.unparse(default)}")
    assert seen >= 8, seen  # the scan sees the commands, runners and benches
    assert not found, "--target options that ignore $TARGET:\n" + "\n".join(found)


def test_selected_target(monkeypatch):
    monkeypatch.delenv("TARGET", raising=False)
    assert targets.selected_target() == targets.DEFAULT_TARGET == TARGETS[0]
    monkeypatch.setenv("TARGET", "bmv2")
    assert targets.selected_target() == "bmv2"


# ids that are not a target's name: that keyword would skip the case where the target is not installed,
# and this needs nothing installed
@pytest.mark.parametrize("name", TARGETS, ids=lambda n: f"plugin-{n}")
def test_restarted_switch_is_reshaped_where_the_target_forgets_its_links(name, tmp_path):
    """A target that takes link properties only at run time (bmv2's queues over Thrift) loses them
    when a switch restarts: the supervisor is told to run ``mrc-fabric reshape <switch>`` after a
    restart; a target that takes them on its command line keeps them and gets no such command."""
    import json

    import yaml

    from controller.topology import parse_topology
    from mrc_fabric.fabric import Fabric

    data = yaml.safe_load((REPO / "examples" / "small.yaml").read_text())
    fab = Fabric(parse_topology(data), prefix="t", target=name, state_dir=tmp_path)
    assert "--after-restart" not in fab._proc_record("p1l1").argv  # nothing shaped: nothing to restore
    data["link_defaults"] = {"rate_pps": 500, "queue_depth": 16}
    fab = Fabric(parse_topology(data), prefix="t", target=name, state_dir=tmp_path)
    argv = fab._proc_record("p1l1").argv
    if get_target(name).shapes_at_start:
        assert "--after-restart" not in argv
        return
    cmd = json.loads(argv[argv.index("--after-restart") + 1])
    assert cmd[1:] == ["-m", "mrc_fabric", "reshape", "--prefix", "t", "--state-dir", str(tmp_path), "p1l1"]


def test_bmv2_shapes_every_port_of_a_switch_in_one_cli_run(tmp_path, monkeypatch):
    """Each simple_switch_CLI run starts Python and downloads the switch's JSON over Thrift, so the
    fabric gives it all of a switch's ports at once (bring-up of examples/small.yaml: 8 runs, not 32).
    A stand-in CLI on PATH records its runs (the real one runs in the Docker image)."""
    import os
    import stat

    from controller import p4contract as P4

    fake = tmp_path / "bin" / "simple_switch_CLI"
    fake.parent.mkdir()
    log = tmp_path / "runs"
    fake.write_text(f"#!/bin/sh\necho \"run $*\" >> {log}\ncat >> {log}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    get_target("bmv2").shape_ports(9191, {2: {"link_rate_pps": 300, "queue_depth": 16, "control_queue_depth": 64},
                                          1: {"rate_pps": 50}})
    lines = log.read_text().splitlines()
    # a link rate leaves the top queue unlimited (its small frames would cost full ones: docs/demo.md);
    # a plain queue rate (port 1) limits every queue
    assert lines == ["run --thrift-port 9191", "set_queue_rate 50 1", "set_queue_rate 300 2",
                     f"set_queue_rate 0 2 {P4.PRIORITY_TRIMMED}", "set_queue_depth 16 2",
                     f"set_queue_depth 64 2 {P4.PRIORITY_TRIMMED}"]


def test_no_cpu_port_on_either_target():
    """``cpu_port=None`` starts a switch without a CPU port on both targets (the STF process
    runner's programs have no packet I/O): no ``--cpu-port`` on the command line."""
    for name in ("softswitch", "bmv2"):
        argv = get_target(name).switch_argv(1, {1: "a"}, 50001, runtime_port=50002, cpu_port=None)
        assert "--cpu-port" not in argv and "None" not in argv, (name, argv)
        assert "--cpu-port" in get_target(name).switch_argv(1, {1: "a"}, 50001, runtime_port=50002)
