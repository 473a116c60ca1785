"""The fault registry: one vocabulary for scenario files, the CLI and every engine."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrc_fabric import faults
from mrc_fabric.cli import build_parser
from mrc_fabric.scenarios import ScenarioError, parse_scenario
from mrc_fabric.scenarios.runner import NetnsFaults
from mrc_fabric.scenarios.spec import FaultSpec


class Recorder:
    """A FaultTarget that records the primitive calls (the engines' own tests check what they do)."""

    fault_primitives = frozenset({"set_link", "host_link", "spine_links", "switch_stop", "switch_start",
                                  "port_admin", "link_loss", "link_rate"})

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append((name, *args))
            if name == "host_link":
                return (f"{args[0]}:{args[1]}", "p1l1:3")
            if name == "spine_links":
                return [("p1l1:1", f"{args[0]}:1"), ("p1l2:1", f"{args[0]}:2")]
            return None
        return call


def test_every_kind_is_a_cli_subcommand_and_a_scenario_kind():
    ap = build_parser()
    sub = next(a for a in ap._subparsers._group_actions if a.dest == "cmd").choices["fault"]
    cli = set(next(a for a in sub._subparsers._group_actions).choices)
    assert cli == {k.cli_name for k in faults.REGISTRY.values()}
    assert {"link-down", "link-up", "switch-stop", "switch-start", "port-down", "port-up", "shape"} <= cli
    for k in faults.REGISTRY.values():  # each kind parses from a scenario file with its parameters
        raw = {"at": 1, "kind": k.name}
        for p in k.params:
            raw[p.name] = {str: "p1s1", int: 1, float: 0.5, bool: False}[p.type]
        if k.name in ("spine_loss", "spine_restore"):
            raw["method"] = "links"
        if k.name == "flap":  # down and up again: it needs its duration
            raw["duration"] = 1.0
        sc = parse_scenario({"faults": [raw]})
        assert sc.faults[0].label().startswith(k.name)


def test_cli_kebab_case_and_scenario_snake_case_name_the_same_kind():
    assert faults.get("link-down") is faults.get("link_down")
    ns = build_parser().parse_args(["fault", "nic-down", "h1", "2", "--duration", "2"])
    assert (ns.fault, ns.host, ns.plane, ns.duration) == ("nic-down", "h1", 2, 2.0)


def test_bad_faults_name_the_field():
    with pytest.raises(ScenarioError, match=r"faults\[0\]: link_down needs a, b \(b is missing\)"):
        parse_scenario({"faults": [{"at": 1, "kind": "link_down", "a": "p1l1"}]})
    with pytest.raises(ScenarioError, match=r"faults\[0\].kind: 'melt' is not one of"):
        parse_scenario({"faults": [{"at": 1, "kind": "melt"}]})
    with pytest.raises(ScenarioError, match=r"unknown key\(s\) spine for link_down"):
        parse_scenario({"faults": [{"at": 1, "kind": "link_down", "a": "x", "b": "y", "spine": "z"}]})
    with pytest.raises(ScenarioError, match="loss must be in"):
        parse_scenario({"faults": [{"at": 1, "kind": "link_loss", "a": "x", "b": "y", "loss": 2}]})
    with pytest.raises(ScenarioError, match="method"):
        parse_scenario({"faults": [{"at": 1, "kind": "spine_loss", "spine": "p1s1", "method": "melt"}]})


def test_apply_and_undo_go_through_the_primitives():
    t = Recorder()
    f = FaultSpec(at=0, kind="spine_loss", spine="p1s2", method="links")
    assert f.spec.apply(t, f, False) == "spine p1s2 lost (links)"
    f.spec.apply(t, f, True)
    assert t.calls == [("spine_links", "p1s2"), ("set_link", "p1l1:1", "p1s2:1", False),
                       ("set_link", "p1l2:1", "p1s2:2", False), ("spine_links", "p1s2"),
                       ("set_link", "p1l1:1", "p1s2:1", True), ("set_link", "p1l2:1", "p1s2:2", True)]
    t.calls.clear()
    f = FaultSpec(at=0, kind="spine_loss", spine="p1s2")  # default method: stop the switch
    f.spec.apply(t, f, False)
    f.spec.apply(t, f, True)
    assert t.calls == [("spine_links", "p1s2"), ("switch_stop", "p1s2"), ("spine_links", "p1s2"),
                       ("switch_start", "p1s2")]
    t.calls.clear()
    g = FaultSpec(at=0, kind="link_slow", a="p1l1", b="p1s1", rate=0.1)
    g.spec.apply(t, g, False)
    g.spec.apply(t, g, True)
    assert t.calls == [("link_rate", "p1l1", "p1s1", 0.1), ("link_rate", "p1l1", "p1s1", 1.0)]
    t.calls.clear()
    fl = FaultSpec(at=0, kind="flap", a="p1l1", b="p1s1", duration=1.0)
    assert fl.spec.apply(t, fl, False) == "link p1l1-p1s1 down"
    assert fl.spec.apply(t, fl, True) == "link p1l1-p1s1 up"
    assert t.calls == [("set_link", "p1l1", "p1s1", False), ("set_link", "p1l1", "p1s1", True)]
    n = FaultSpec(at=0, kind="nic_down", host="h1", plane=2)
    assert n.spec.apply(t, n, False) == "NIC h1 plane 2 down"
    assert n.spec.is_failure(n, False) and not n.spec.is_failure(n, True)
    up = FaultSpec(at=0, kind="link_up", a="x", b="y")
    assert not up.spec.is_failure(up, False)


def test_an_engine_refuses_a_kind_it_cannot_do():
    k = faults.get("link_loss")
    with pytest.raises(faults.FaultError, match="not supported by the netns engine.*link_loss"):
        faults.check_engine(k, NetnsFaults.fault_primitives, "netns", "scenario.faults[0]")
    faults.check_engine(faults.get("link_down"), NetnsFaults.fault_primitives, "netns", "x")


def test_a_kind_registered_once_reaches_parser_and_cli():
    kind = faults.FaultKind("test_melt", "melt a switch", (faults.SWITCH,), frozenset({"switch_stop"}),
                            lambda t, f, undo: f"melted {f.switch}")
    faults.register(kind)
    try:
        sc = parse_scenario({"faults": [{"at": 0.5, "kind": "test_melt", "switch": "p1s1"}]})
        assert sc.faults[0].spec.apply(Recorder(), sc.faults[0], False) == "melted p1s1"
        ns = build_parser().parse_args(["fault", "test-melt", "p1s1"])
        assert ns.switch == "p1s1"
        with pytest.raises(ValueError, match="twice"):
            faults.register(kind)
    finally:
        del faults.REGISTRY["test_melt"]


def test_whether_a_fault_is_a_failure_is_the_kinds_own_answer():
    """port_admin down is a failure, up is not; a new kind says the same through ``restores`` alone
    (no kind name is tested anywhere)."""
    down = FaultSpec(at=0, kind="port_admin", switch="p1l1", port=1, up=False)
    up = FaultSpec(at=0, kind="port_admin", switch="p1l1", port=1, up=True)
    assert down.spec.is_failure(down, False) and not up.spec.is_failure(up, False)
    assert not down.spec.is_failure(down, True)
    kind = faults.FaultKind("test_gate", "open or close a gate", (faults.SWITCH, faults.UP),
                            frozenset({"port_admin"}), lambda t, f, undo: "", restores=lambda f: bool(f.up))
    faults.register(kind)
    try:
        shut = FaultSpec(at=0, kind="test_gate", switch="p1s1", up=False)
        opened = FaultSpec(at=0, kind="test_gate", switch="p1s1", up=True)
        assert kind.is_failure(shut, False) and not kind.is_failure(opened, False)
    finally:
        del faults.REGISTRY["test_gate"]


def test_primitives_are_named_alike_by_kinds_protocol_and_engines():
    """A kind's ``needs`` and an engine's ``fault_primitives`` name methods of ``FaultTarget``, and an
    engine has every method it lists: a misspelt primitive would otherwise make every engine refuse
    a new kind, or accept one it cannot carry out."""
    from mrc_fabric.sim.engine import SimFaults

    protocol = {n for n in vars(faults.FaultTarget) if not n.startswith("_")} - {"fault_primitives"}
    for k in faults.REGISTRY.values():
        assert k.needs <= protocol, (k.name, k.needs - protocol)
    for engine in (NetnsFaults, SimFaults):
        assert engine.fault_primitives <= protocol, (engine.__name__, engine.fault_primitives - protocol)
        missing = {p for p in engine.fault_primitives if not callable(getattr(engine, p, None))}
        assert not missing, (engine.__name__, missing)


def test_spine_faults_refuse_a_switch_that_is_no_spine_whatever_the_method():
    """`mrc-fabric fault spine-loss p1l1` stopped the leaf p1l1 (method stop checked no role)."""
    from types import SimpleNamespace

    from controller import load_topology

    class NoFabric:  # any call into the fabric would be a fault applied to the wrong switch
        def __getattr__(self, name):
            raise AssertionError(f"fabric.{name} called")

    fab = SimpleNamespace(topo=load_topology(Path(__file__).resolve().parents[2] / "examples" / "small.yaml"))
    t = NetnsFaults(fab)
    t.fab = NoFabric()
    for kind in ("spine_loss", "spine_restore"):
        for method in ("stop", "links"):
            f = FaultSpec(at=0, kind=kind, spine="p1l1", method=method)
            with pytest.raises(ScenarioError, match="'p1l1' is not a spine of this fabric"):
                f.spec.apply(t, f, False)


def test_a_positional_number_below_one_is_named_as_such_not_as_missing():
    f = FaultSpec(at=0, kind="nic_down", host="h1", plane=0)
    with pytest.raises(faults.FaultError, match="^fault nic-down: plane must be 1 or more, got 0$"):
        f.spec.validate(f, "fault nic-down")  # the kind once (it said "fault nic-down: nic_down: ...")
    with pytest.raises(faults.FaultError, match=r"^scenario\.faults\[0\]: nic_down: plane must be 1"):
        f.spec.validate(f, "scenario.faults[0]")


def test_cli_switch_start_of_a_running_switch_says_so():
    """`mrc-fabric fault switch-start p1s2` on a running switch printed "switch p1s2 started" (and
    spine-restore "restored") though nothing happened; `switch-stop` of a stopped one was an error."""
    from types import SimpleNamespace

    from controller import load_topology
    from mrc_fabric.fabric import FabricError

    fab = SimpleNamespace(topo=load_topology(Path(__file__).resolve().parents[2] / "examples" / "small.yaml"),
                          switch_running=lambda name: True)
    f = FaultSpec(at=0, kind="switch_start", switch="p1s2")
    with pytest.raises(FabricError, match="switch p1s2 is already running"):
        f.spec.apply(NetnsFaults(fab), f, False)


def test_cli_refuses_a_negative_duration(capsys):
    """`--duration -1` took the link down and never brought it back (the undo waits only for > 0)."""
    from mrc_fabric.cli import main

    assert main(["fault", "flap", "p1l1", "p1s1", "--duration", "-1", "--prefix", "nofab"]) == 2
    assert "fault flap: --duration must be 0 (keep the fault) or more seconds, got -1" in capsys.readouterr().err


def test_a_flap_needs_a_duration(capsys):
    """`mrc-fabric fault flap A B` without --duration (and a scenario's flap without one) took the link down
    for good and said only "link A-B down": a flap is down *and up again*."""
    from mrc_fabric.cli import main
    from mrc_fabric.scenarios.spec import ScenarioError, parse_scenario

    assert main(["fault", "flap", "p1l1", "p1s1", "--prefix", "nofab"]) == 2
    assert "fault flap: a duration > 0 is required" in capsys.readouterr().err
    raw = {"name": "f", "fabric": {"topology": "examples/small.yaml"},
           "faults": [{"at": 1.0, "kind": "flap", "a": "p1l1", "b": "p1s1"}]}
    with pytest.raises(ScenarioError, match=r"scenario.faults\[0\]: flap: a duration > 0 is required"):
        parse_scenario(raw)
    raw["faults"][0]["duration"] = 0.5
    assert parse_scenario(raw).faults[0].duration == 0.5


def test_cli_port_admin_kinds_say_where_they_work(capsys):
    """port-admin/port-down/port-up are listed by `mrc-fabric fault --help` but can never run there
    (no controller); the error gave Python API advice (`fabric.port_admin_hook = ...`)."""
    from mrc_fabric.cli import main

    for kind in ("port-down", "port-up"):
        assert main(["fault", kind, "p1l1", "3", "--prefix", "nofab"]) == 2
        err = capsys.readouterr().err
        assert f"fault {kind}: a P4Runtime write the fabric's controller makes" in err
        assert "mrc-fabric scenario run" in err and "port_admin_hook" not in err
    fault = next(a for a in build_parser()._subparsers._group_actions if a.dest == "cmd").choices["fault"]
    helps = {c.dest: c.help for c in next(a for a in fault._subparsers._group_actions)._choices_actions}
    assert "only in `mrc-fabric scenario run`" in helps["port-down"]
    assert "--engine sim" in helps["link-loss"] and "--engine sim" in helps["link-slow"]
    assert "scenario" not in helps["link-down"]


def test_cli_kinds_it_never_runs_say_so_before_asking_for_arguments(capsys):
    """`mrc-fabric fault link-loss` (sim only) answered "the following arguments are required: a, b,
    loss"; given them, "not supported by the netns engine (it has no link_loss)".  Every kind the command
    cannot run now says where it runs first, whatever else is on the line, exit 2."""
    import subprocess
    import sys

    from mrc_fabric.cli import main
    from mrc_fabric.scenarios.runner import NetnsFaults

    sim_only = {k.cli_name for k in faults.REGISTRY.values() if k.needs - NetnsFaults.fault_primitives}
    ctl_only = {k.cli_name for k in faults.REGISTRY.values() if k.needs & NetnsFaults.controller_primitives}
    assert {"link-loss", "link-slow"} <= sim_only and {"port-admin", "port-down", "port-up"} <= ctl_only
    for kind in sorted(sim_only | ctl_only):
        name = faults.get(kind).name
        for extra in ([], ["p1l1"], ["p1l1", "p1s1", "abc", "--fraction", "3", "--duration", "x", "--up", "no"]):
            assert main(["fault", kind, *extra, "--prefix", "nofab"]) == 2, (kind, extra)
            cap = capsys.readouterr()
            assert cap.out == "" and cap.err.count("\n") == 1 and "usage:" not in cap.err, (kind, extra, cap.err)
            assert cap.err.startswith(f"mrc-fabric: error: fault {kind}: "), cap.err
            assert f"kind: {name}" in cap.err, cap.err
            assert ("--engine sim" in cap.err) == (kind in sim_only), cap.err
    r = subprocess.run([sys.executable, "-m", "mrc_fabric", "fault", "link-loss"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 2 and "only the simulated fabric has this fault" in r.stderr, r.stderr
    assert "required" not in r.stderr
    # a kind it runs still asks for its arguments, and a word too many is still refused
    with pytest.raises(SystemExit) as ex:
        main(["fault", "link-down", "p1l1"])
    assert ex.value.code == 2 and "required: b" in capsys.readouterr().err
    with pytest.raises(SystemExit) as ex:
        main(["fault", "link-down", "p1l1", "p1s1", "extra", "--prefix", "nofab"])
    assert ex.value.code == 2 and "unrecognized arguments: extra" in capsys.readouterr().err


def test_a_duration_or_time_that_is_not_finite_is_refused(capsys):
    """A scenario's `duration: .inf` (or `at: .inf`) passed the ">= 0" check and the simulator's scheduler
    died on it with an OverflowError traceback; `nan` passed too (a fault never undone, or never applied).
    `mrc-fabric fault ... --duration inf` took the link down, then died in its wait, the link still down."""
    from mrc_fabric.cli import main

    for key, value in (("duration", float("inf")), ("duration", float("nan")), ("at", float("inf")),
                       ("at", float("nan"))):
        raw = {"name": "f", "fabric": {"topology": "examples/small.yaml"},
               "faults": [{"at": 1.0, "kind": "link_down", "a": "p1l1", "b": "p1s1", key: value}]}
        with pytest.raises(ScenarioError, match=r"scenario.faults\[0\]: at and duration must be >= 0 \(and finite\)"):
            parse_scenario(raw)
    with pytest.raises(ScenarioError, match="deadline_s: must be positive"):
        parse_scenario({"name": "f", "fabric": {"topology": "examples/small.yaml"}, "deadline_s": float("inf")})
    for bad in ("inf", "nan"):  # refused before any fabric is looked up
        assert main(["fault", "link-down", "p1l1", "p1s1", "--duration", bad, "--prefix", "nofab"]) == 2
        assert f"--duration must be 0 (keep the fault) or more seconds, got {bad}" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["sim", "netns"])
@pytest.mark.parametrize(("fault", "why"), [
    ({"kind": "link_down", "a": "p1l1", "b": "p9s9"}, "link_down: no link between p1l1 and p9s9"),
    ({"kind": "link_down", "a": "p1l1:2", "b": "p1s1"}, "link_down: no link between p1l1:2 and p1s1"),
    ({"kind": "spine_loss", "spine": "p1l1"}, "spine_loss: 'p1l1' is not a spine"),
    ({"kind": "nic_down", "host": "h9", "plane": 1}, "nic_down: no host 'h9'"),
    ({"kind": "switch_stop", "switch": "p3s1"}, "switch_stop: no switch 'p3s1'"),
    ({"kind": "port_down", "switch": "p1l1", "port": 9}, "port_down: switch p1l1 has no connected port 9"),
])
def test_a_fault_naming_what_the_topology_lacks_is_refused_before_the_run(tmp_path, engine, fault, why):
    """`link_down p1l1-p9s9` (a typo) used to run: the fault was logged with an error nobody printed, the
    timeline showed it as applied, and the run looked like a perfect recovery (exit 0)."""
    from mrc_fabric.scenarios import run_scenario

    class NoFabric:  # the netns engine's fabric: any use of it means the run started (nothing is built)
        def __getattr__(self, name):
            raise AssertionError(f"the run started (env.{name})")

    sc = parse_scenario({"fabric": {"topology": "examples/small.yaml"}, "faults": [{"at": 0.001, **fault}]})
    with pytest.raises(ScenarioError, match=r"^scenario\.faults\[0\]: " + why.replace("(", r"\(")):
        run_scenario(sc, engine=engine, workdir=tmp_path, env=NoFabric() if engine == "netns" else None)
    assert not (tmp_path / "result.json").exists()


def test_the_timeline_shows_a_fault_that_could_not_be_applied():
    from mrc_fabric.scenarios.report import timeline_lines

    m = {"mode": "mrc", "elapsed_s": 3.0, "ev_events": [], "retransmissions": {}, "ev_changes": {},
         "goodput_bins": [[t / 10, 9.0] for t in range(30)], "switch_drops": {}, "trims_received": 0,
         "ecn_echoes": 0, "faults": [{"t_s": 1.2, "fault": "switch_start p1s1", "undo": False,
                                          "error": "switch p1s1 did not answer", "down": False}]}
    text = "\n".join(timeline_lines(m))
    assert "switch_start p1s1 NOT APPLIED @" in text and ": switch p1s1 did not answer" in text


def test_the_topology_check_has_every_primitive():
    """A primitive added to ``FaultTarget`` needs its name check too, or the pre-run check of a kind
    using it would fail with an AttributeError instead of checking it."""
    protocol = {n for n in vars(faults.FaultTarget) if not n.startswith("_")} - {"fault_primitives"}
    assert faults.TopologyCheck.fault_primitives == protocol
    assert all(callable(getattr(faults.TopologyCheck, p, None)) for p in protocol)


@pytest.mark.parametrize(("params", "why"), [
    ({"delay_us": -5}, r"shape: delay_us must be 0 \(leave it\) .. 10000000, got -5"),
    ({"rate_pps": 10**9}, r"shape: rate_pps must be 0 \(leave it\) .. 100000000"),
    ({}, r"shape: give delay_us, rate_pps or queue_depth"),
])
def test_a_shape_fault_with_nothing_or_a_negative_value_is_refused_before_the_run(params, why, capsys):
    """A negative value was accepted and failed when the fault came due (mid-run, logged as not applied);
    all three 0 was a fault that shaped nothing."""
    with pytest.raises(ScenarioError, match=r"^scenario\.faults\[0\]: " + why):
        parse_scenario({"fabric": {"topology": "examples/small.yaml"},
                        "faults": [{"at": 0, "kind": "shape", "switch": "p1l1", "port": 1, **params}]})
    from mrc_fabric.cli import main

    argv = [f"--{k.replace('_', '-')}={v}" for k, v in params.items()]
    assert main(["fault", "shape", "p1l1", "1", *argv, "--prefix", "nofab"]) == 2  # before any fabric is looked up
    err = capsys.readouterr().err
    typed = re.sub(r"\b(delay_us|rate_pps|queue_depth)\b", lambda m: "--" + m.group(1).replace("_", "-"), why)
    assert "fault shape: " + typed.replace("\\", "")[len("shape: "):][:20] in err, err  # the kind named once, flags as typed
