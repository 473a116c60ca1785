"""mrc-fabric's arguments: refused with one line before anything is built (no root needed)."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller import load_topology
from mrc_fabric.cli import main
from mrc_fabric.fabric import Fabric, FabricError


@pytest.mark.parametrize(("argv", "said"), [
    (["demo", "--view-port", "70000"], "--view-port must be 0 (none) .. 65535, got 70000"),  # OverflowError after bring-up
    (["demo", "--metrics-port", "-1"], "--metrics-port must be 0 (none) .. 65535, got -1"),
    (["demo", "--grpc-base-port", "0"], "--grpc-base-port must be 1 .. 65535, got 0"),
    (["scenario", "run", "examples/sim/small-link-down.yaml", "--grpc-base-port", "70000"],
     "--grpc-base-port must be 1 .. 65535, got 70000"),
])
def test_ports_out_of_range(argv, said, capsys):
    assert main([*argv, "--prefix", "nofab"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_out_that_is_a_file(tmp_path, capsys):
    """A FileExistsError traceback; the sim engine hit it only after the whole run."""
    f = tmp_path / "f"
    f.write_text("keep")
    for argv in (["demo"], ["scenario", "run", "examples/sim/small-link-down.yaml", "--engine", "sim"]):
        assert main([*argv, "--out", str(f)]) == 2
        assert f"--out {f}: exists and is not a directory" in capsys.readouterr().err
    assert f.read_text() == "keep"


def test_fabric_refuses_ports_past_65535_before_building():
    """`up --grpc-base-port 65000` built namespaces and veths, then a switch died on its run-time port 66000."""
    topo = load_topology("examples/small.yaml")
    for base, port in ((70000, "gRPC port 70000"), (65000, "run-time control port 66000")):
        with pytest.raises(FabricError, match=f"switch p1s1: {port} is not 1..65535 .*--grpc-base-port {base}"):
            Fabric(topo, prefix="nofab", target="softswitch", grpc_base_port=base)
    with pytest.raises(FabricError, match="--ready-timeout"):
        Fabric(topo, prefix="nofab", target="softswitch", ready_timeout_s=-1)
    Fabric(topo, prefix="nofab", target=None, grpc_base_port=70000)  # network only: no switch ports used


def test_out_that_cannot_be_made(tmp_path, capsys):
    """``--out`` under a file (or in /proc, or read-only) was a FileNotFoundError / NotADirectoryError
    traceback from deep in the engine (the demo had printed its banner); now one line, before anything."""
    f = tmp_path / "f"
    f.write_text("keep")
    for argv in (["demo", "--prefix", "nofab"], ["scenario", "run", "examples/sim/small-link-down.yaml", "--engine", "sim"]):
        assert main([*argv, "--out", str(f / "sub")]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"mrc-fabric: error: --out {f / 'sub'}: cannot create the directory: Not a directory\n"
    assert f.read_text() == "keep"


def test_demo_checks_its_prefix_and_deadline_before_the_banner(capsys):
    """A bad prefix printed the demo's whole introduction before the error, and --deadline -1 was
    named as "scenario.deadline_s", a field the user never typed."""
    assert main(["demo", "--prefix", "U15"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "prefix 'U15': must be a lowercase letter" in err
    for bad in ("-1", "0", "nan", "inf"):
        assert main(["demo", "--prefix", "nofab", "--deadline", bad]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("mrc-fabric: error: --deadline must be more than 0 seconds (and finite)")


def test_a_state_dir_that_cannot_hold_the_state_is_named_before_anything_is_built(tmp_path, capsys):
    """``up --state-dir`` under a file (or /proc/x, or /run without root) was an OSError traceback from
    the first save; it comes before any namespace, so it is bad input: one line, exit 2."""
    f = tmp_path / "f"
    f.write_text("keep")
    up = ["up", "--prefix", "nofab", "--target", "none", "-t", "examples/small.yaml", "--state-dir"]
    assert main([*up, str(f / "st")]) == 2  # found reading the state (is a fabric with this prefix up?)
    assert capsys.readouterr().err == (f"mrc-fabric: error: {f / 'st' / 'nofab.json'}: cannot read the fabric "
                                       "state: Not a directory (--state-dir)\n")
    assert main([*up, "/proc/nofab-state"]) == 2  # nothing to read there, and nothing can be made: the first save
    assert capsys.readouterr().err == ("mrc-fabric: error: cannot write the run state /proc/nofab-state/nofab.json "
                                       "(--state-dir): No such file or directory\n")
    assert f.read_text() == "keep"


@pytest.mark.parametrize("text", ['{"prefix": "nofab", "namesp', "{}", "[1]", '{"prefix": "nofab", "x": 1}'])
def test_a_state_file_that_cannot_be_read_is_named_and_kept(text, tmp_path, capsys):
    """A state file cut short (a killed `up`) or of another shape made `down` and `status` -- the
    commands that clean up and look -- end in a RuntimeError or TypeError traceback.  Now one line that
    says nothing was removed, exit 2, and the file stays for the user to look at."""
    st = tmp_path / "nofab.json"
    st.write_text(text)
    for cmd in ("down", "status"):
        assert main([cmd, "--prefix", "nofab", "--state-dir", str(tmp_path)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err.startswith(f"mrc-fabric: error: {st}: not a fabric state file (") and "nothing was touched" in err
    assert st.read_text() == text
    assert main(["status", "--prefix", "nofab", "--state-dir", str(st)]) == 2  # a --state-dir that is a file
    assert capsys.readouterr().err == (f"mrc-fabric: error: {st / 'nofab.json'}: cannot read the fabric state: "
                                       "Not a directory (--state-dir)\n")


def test_up_and_a_netns_scenario_refuse_more_spines_than_a_leafs_ecmp_group_holds(tmp_path, capsys):
    """mrc_switch.p4's ecmp_selector holds 64 members (one per spine of the plane); `topo gen/check` and
    `plan` refuse 65, but `up` built the whole fabric and the controller's converge then refused every
    leaf.  Both now refuse before anything is built (a state dir / --out that is a file stands in for the
    first step that would have run), --max-group-size 0 lets it through, and the simulator takes it."""
    from controller import p4contract as P4
    from controller.cli import main as ctl_main

    assert P4.MAX_GROUP_SIZE[P4.AP_INGRESS_ROUTING_ECMP_SELECTOR] == 64
    big = tmp_path / "s65.yaml"
    assert ctl_main(["topo", "gen", "--planes", "1", "--spines", "65", "--max-group-size", "0", "-o", str(big)]) == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("keep")
    said = "plane 1 has 65 spines, but a leaf's ECMP group (one member per spine) holds at most 64"
    up = ["up", "-t", str(big), "--prefix", "nofab", "--state-dir", str(blocker), "--target", "softswitch"]
    assert main(up) == 2
    err = capsys.readouterr().err
    assert said in err and "--max-group-size N for another program, 0 for none" in err and err.count("\n") == 1
    assert main([*up, "--max-group-size", "0"]) == 2  # on to the next check: the state dir
    assert said not in capsys.readouterr().err
    assert main([*up, "--max-group-size", "65"]) == 2
    assert said not in capsys.readouterr().err
    assert main([*up[:-2], "--target", "none"]) == 2  # network only: no switch, no selector
    assert said not in capsys.readouterr().err
    sc = tmp_path / "g65.yaml"
    sc.write_text("fabric: {generate: {planes: 1, spines: 65, leaves: 2, hosts_per_leaf: 2}}\n")
    run = ["scenario", "run", str(sc), "--out", str(blocker), "--prefix", "nofab"]
    assert main(run) == 2
    assert f"{sc}: fabric: {said}" in capsys.readouterr().err
    assert main([*run, "--max-group-size", "0"]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert main([*run, "--engine", "sim"]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert blocker.read_text() == "keep"


def test_fault_names_what_the_topology_lacks_in_one_form(tmp_path, capsys):
    """`mrc-fabric fault` on a running fabric worded a misspelt name by whichever primitive met it first:
    "link p1l1--p9s9: no such link in the topology", "fault: no host 'h9' ...", "unknown switch 'p9s9'".
    The fault and its undo are now looked up in the topology first, as a scenario file's are."""
    from mrc_fabric.state import FabricState

    FabricState(prefix="nofab", topology=str(Path("examples/small.yaml").resolve())).save(tmp_path)
    for argv, said in [
        (["link-down", "p1l1", "p9s9"], "fault link-down: no link between p1l1 and p9s9 in the topology"),
        (["link-up", "p1l1:7", "p1s1"], "fault link-up: no link between p1l1:7 and p1s1 in the topology"),
        (["nic-down", "h9", "1"], "fault nic-down: no host 'h9' with a NIC port 1 in the topology"),
        (["switch-stop", "p9s9"], "fault switch-stop: no switch 'p9s9' in the topology"),
        (["spine-loss", "p1l1"], "fault spine-loss: 'p1l1' is not a spine of this fabric"),
        (["shape", "p1l1", "9", "--delay-us", "5"], "fault shape: switch p1l1 has no connected port 9"),
    ]:
        assert main(["fault", *argv, "--prefix", "nofab", "--state-dir", str(tmp_path)]) == 2, argv
        assert capsys.readouterr().err == f"mrc-fabric: error: {said}\n", argv


def test_down_of_a_prefix_no_fabric_can_have_is_an_error(tmp_path, capsys):
    """`down --prefix Lab` (up refuses capitals) said "nothing recorded for prefix Lab", exit 0: a cleanup
    script with a typo went on as if the fabric were gone.  A valid prefix with no state is still
    "nothing recorded", exit 0, and a state file under any name is still torn down."""
    from mrc_fabric.state import FabricState

    assert main(["down", "--prefix", "Lab", "--state-dir", str(tmp_path)]) == 2
    assert "prefix 'Lab': must be a lowercase letter" in capsys.readouterr().err
    assert main(["down", "--prefix", "lab", "--state-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "nothing recorded for prefix lab\n"
    FabricState(prefix="Old").save(tmp_path)  # a name an older rule may have allowed: its state is honoured
    assert main(["down", "--prefix", "Old", "--state-dir", str(tmp_path)]) == 0
    assert not FabricState.path("Old", tmp_path).exists()


def test_fault_options_are_named_as_typed(capsys):
    """`fault shape ... --delay-us -5` said "delay_us must be ...", the scenario file's key, not the flag typed;
    a scenario file still gets its keys."""
    from mrc_fabric.scenarios import ScenarioError, parse_scenario

    for argv, said in [
        (["shape", "p1l1", "1", "--delay-us", "-5"], "fault shape: --delay-us must be 0 (leave it) .. 10000000, got -5"),
        (["shape", "p1l1", "1"], "fault shape: give --delay-us, --rate-pps or --queue-depth (all 0 shapes nothing)"),
        (["spine-loss", "p1s1", "--method", "bogus"], "fault spine-loss: --method: 'bogus' is not stop or links"),
        (["shape", "p1l1", "0", "--delay-us", "5"], "fault shape: port must be 1 or more, got 0"),  # positional: as is
    ]:
        assert main(["fault", *argv, "--prefix", "nofab"]) == 2, argv
        assert capsys.readouterr().err == f"mrc-fabric: error: {said}\n", argv
    with pytest.raises(ScenarioError, match=r"shape: delay_us must be 0 \(leave it\)"):
        parse_scenario({"faults": [{"at": 1, "kind": "shape", "switch": "p1l1", "port": 1, "delay_us": -5}]})


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_ctrl_c_while_the_commands_import_is_one_line(tmp_path, how):
    """Ctrl-C in mrc-fabric's first second (its imports: the controller, gRPC, the scenario runner)
    was a KeyboardInterrupt traceback from the script's `from mrc_fabric.cli import main`."""
    import sys

    from sigint_helper import interrupt_while_importing

    script = Path(sys.executable).parent / "mrc-fabric"
    if how == "console script" and not script.exists():
        pytest.skip(f"no console script {script} (package not installed)")
    cmd = [str(script)] if how == "console script" else [sys.executable, "-m", "mrc_fabric"]
    rc, err = interrupt_while_importing([*cmd, "status", "--prefix", "nofab"], tmp_path)
    assert (rc, err) == (130, "mrc-fabric: interrupted\n")


@pytest.mark.parametrize(("argv", "said"), [
    (["--prefix", "Lab"], "prefix 'Lab': must be a lowercase letter"),
    (["--grpc-base-port", "65530"], "run-time control port 66530 is not 1..65535"),
    (["--engine", "sim", "--prefix", "nofab", "--grpc-base-port", "27400", "--max-group-size", "1"], None),
])
def test_a_refused_scenario_run_creates_no_out_folder(tmp_path, capsys, argv, said):
    """The netns engine wrote topology.yaml into --out before the fabric refused the prefix or port, and
    the CLI had made --out (with its parents) already: an empty-but-for-that folder was left behind.
    A refusal now creates nothing; an --out that existed before stays as it was."""
    out = tmp_path / "a" / "b" / "out"
    if said is None:  # a scenario its engine refuses (several steps on the emulated fabric)
        sc = tmp_path / "steps.yaml"
        sc.write_text(Path("examples/sim/allreduce-spine-loss.yaml").read_text())
        argv, said = ["--prefix", "nofab"], "traffic.steps: jobs of several steps need --engine sim"
    else:
        sc = Path("examples/sim/small-link-down.yaml")
    assert main(["scenario", "run", str(sc), "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert said in err[-1] and all(e.startswith("note: ") for e in err[:-1])  # (a sim: section is noted)
    assert list(tmp_path.iterdir()) == ([sc] if sc.parent == tmp_path else [])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "keep").write_text("x")
    assert main(["scenario", "run", str(sc), "--out", str(out), *argv]) == 2
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["keep"]


def test_a_refused_demo_creates_no_out_folder(tmp_path, capsys):
    """The demo's --out was made before FabricEnv refused the ports its base gives (exit 2, empty folder)."""
    out = tmp_path / "demo-out"
    assert main(["demo", "--prefix", "nofab", "--grpc-base-port", "65000", "--out", str(out)]) == 2
    assert "run-time control port 66000 is not 1..65535" in capsys.readouterr().err
    assert not out.exists()
