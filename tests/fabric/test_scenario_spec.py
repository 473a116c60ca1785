"""Scenario files: bad values are refused when the file is read, naming the field, before any fabric."""
from __future__ import annotations

from pathlib import Path

import pytest

from mrc_fabric.scenarios import ScenarioError, load_scenario, parse_scenario
from mrc_fabric.scenarios.runner import topology_data

SMALL = "examples/small.yaml"


def _sc(**top):
    data = {"name": "t", "fabric": {"topology": SMALL}}
    data.update(top)
    return parse_scenario(data, "f.yaml")


@pytest.mark.parametrize(("traffic", "why"), [
    # each ran on, or was a traceback from the endpoints once the run was under way
    ({"count": 2.7}, r"f.yaml.traffic.count: expected a whole number, got 2.7"),
    ({"size": "100000000G"}, r"scenario.traffic.size: a message is at most 4294967295 bytes"),
    ({"rate_gbps": float("nan")}, r"scenario.traffic.rate_gbps: must be >= 0 and finite"),
    ({"rate_gbps": float("inf")}, r"scenario.traffic.rate_gbps: must be >= 0 and finite"),
    ({"ack_timeout": 99}, r"scenario.traffic.ack_timeout: must be 0..24"),
    ({"mtu": 10}, r"scenario.traffic.mtu: must be 0 .* or one of 256"),
    ({"reorder_ms": -1}, r"scenario.traffic.reorder_ms: must be >= 0 and finite"),
    ({"probe_interval_ms": float("nan")}, r"scenario.traffic.probe_interval_ms: must be >= 0 and finite"),
    ({"pattern": "incast", "senders": -1}, r"scenario.traffic.senders: must be >= 0"),
    ({"hosts": "h1"}, r"f.yaml.traffic.hosts: expected a list of host names, got 'h1'"),
    ({"hosts": 5}, r"f.yaml.traffic.hosts: expected a list of host names, got 5"),
])
def test_traffic_values_no_run_can_use_are_refused(traffic, why):
    with pytest.raises(ScenarioError, match=why):
        _sc(traffic=traffic)


def test_good_values_still_read():
    sc = _sc(traffic={"count": 2.0, "mtu": 4096, "ack_timeout": 24, "probe_interval_ms": 0, "hosts": ["h1", "h2"],
                      "size": "4M"}, modes="rc")
    assert (sc.traffic.count, sc.traffic.mtu, sc.traffic.hosts, sc.modes) == (2, 4096, ("h1", "h2"), ("rc",))


@pytest.mark.parametrize(("modes", "why"), [
    (5, r"f.yaml.modes: expected mrc, rc or a non-empty list of them, got 5"),  # was a TypeError traceback
    ([], r"f.yaml.modes: expected mrc, rc or a non-empty list of them, got \[\]"),  # ran nothing, exit 0
])
def test_modes(modes, why):
    with pytest.raises(ScenarioError, match=why):
        _sc(modes=modes)


@pytest.mark.parametrize(("fabric", "why"), [
    # each was a TypeError/ValueError/AttributeError traceback from topology_data
    ({"topology": 5}, r"f.yaml.fabric.topology: expected a file name, got 5"),
    ({"generate": 5}, r"f.yaml.fabric.generate: expected a mapping, got 5"),
    ({"generate": {"planes": 2, "spines": 2, "leaves": 2, "hosts_per_leaf": 2, "racks": 3}},
     r"f.yaml.fabric.generate: unknown key\(s\) racks"),
    ({"generate": {"planes": "two", "spines": 2, "leaves": 2, "hosts_per_leaf": 2}},
     r"f.yaml.fabric.generate.planes: expected a whole number, got 'two'"),
    ({"generate": {"planes": 2}}, r"f.yaml.fabric.generate: give spines, leaves, hosts_per_leaf"),
    # what is there before what is not, in file order: this was "give spines, leaves, hosts_per_leaf"
    ({"generate": {"planes": "two"}}, r"f.yaml.fabric.generate.planes: expected a whole number, got 'two'"),
    ({"generate": {"spines": 2, "planes": 0}}, r"f.yaml.fabric.generate.planes: must be 1..15, got 0"),
    ({"generate": {"leaves": 300, "planes": "x"}}, r"f.yaml.fabric.generate.leaves: must be 1..254 .*, got 300"),
    ({"generate": {"hosts_per_leaf": 0, "planes": 1, "spines": 1, "leaves": 1}},
     r"f.yaml.fabric.generate.hosts_per_leaf: must be 1..200, got 0"),
    ({"topology": SMALL, "link_defaults": 5}, r"f.yaml.fabric.link_defaults: expected a mapping, got 5"),
    ({"topology": SMALL, "host_links": [1]}, r"f.yaml.fabric.host_links: expected a mapping, got \[1\]"),
])
def test_fabric_section_types(fabric, why):
    with pytest.raises(ScenarioError, match=why):
        _sc(fabric=fabric)


@pytest.mark.parametrize("key", ["generate", "link_defaults", "host_links"])
def test_an_empty_fabric_key_is_its_default(key):
    """`link_defaults:` with its entries commented out (YAML null) was read as no overrides, and
    `generate:` beside a topology file as no generator; b229300 refused both ('expected a mapping, got
    None'), although a topology file's own empty `link_defaults:` is still read."""
    sc = _sc(fabric={"topology": SMALL, key: None})
    assert getattr(sc.fabric, key) is None
    assert topology_data(sc.fabric)["planes"] == 2


def test_a_bad_topology_names_the_scenario_field_and_the_file(tmp_path):
    """A topology error was only 'switch p1s1: duplicate switch name' (which file?), or a traceback when
    the file was no mapping and the scenario had link_defaults."""
    t = tmp_path / "dup.yaml"
    t.write_text(Path(SMALL).read_text().replace("{name: p1s2,", "{name: p1s1,"))
    with pytest.raises(ScenarioError, match=rf"^scenario.fabric.topology: {t}: switch p1s1: duplicate switch name"):
        topology_data(_sc(fabric={"topology": str(t)}).fabric)
    lst = tmp_path / "list.yaml"
    lst.write_text("- a\n")
    with pytest.raises(ScenarioError, match=rf"^scenario.fabric.topology: {lst}: topology must be a mapping"):
        topology_data(_sc(fabric={"topology": str(lst), "link_defaults": {"delay_us": 1}}).fabric)
    with pytest.raises(ScenarioError, match=r"with scenario.fabric's link_defaults/host_links: link_defaults: "
                       r"delay_us: must be an integer 0..10000000, got -5"):
        topology_data(_sc(fabric={"topology": SMALL, "link_defaults": {"delay_us": -5}}).fabric)
    with pytest.raises(ScenarioError, match=r"^scenario.fabric.generate: spines \+ hosts-per-leaf: must be at most"):
        topology_data(_sc(fabric={"generate": {"planes": 1, "spines": 200, "leaves": 1, "hosts_per_leaf": 60}}).fabric)


@pytest.mark.parametrize("traffic", [
    {"hosts": ["h1", "h9"]}, {"pattern": "incast", "incast_dst": "h9"}, {"pattern": "permutation", "shift": 4}])
def test_who_writes_to_whom_is_checked_before_the_fabric_is_built(tmp_path, traffic):
    """On the emulated fabric a misspelt host was refused by run_traffic, after bring-up and convergence
    (11 s on 2 cores), and the refused scenario left its output directory (topology.yaml) behind."""
    from mrc_fabric.scenarios import run_scenario
    from mrc_fabric.scenarios.run import NetnsEngine

    class NoFabric:  # any use of the fabric means the run started
        def __getattr__(self, name):
            raise AssertionError(f"the run started (env.{name})")

    sc = _sc(traffic=traffic)
    for engine in ("netns", "sim"):
        with pytest.raises(ScenarioError, match=r"^scenario\.traffic\."):
            run_scenario(sc, engine=engine, workdir=tmp_path / engine,
                         env=NoFabric() if engine == "netns" else None)
    out = tmp_path / "out"
    eng = NetnsEngine(sc, prefix="x", grpc_base_port=1, workdir=out, target="softswitch")
    with pytest.raises(ScenarioError):
        eng.check(sc)
    assert not out.exists()


def test_load_scenario_file_errors(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_bytes(b"name: t\xfe\n")
    with pytest.raises(ScenarioError, match=rf"^{f}:1:8: not UTF-8 text"):
        load_scenario(f)


def test_an_error_in_a_scenario_file_names_its_line_and_column(tmp_path):
    """A scenario file's errors named the place two ways, neither with a line: 'scenario.traffic.pattern:
    ...' (which file?) or '/x/s.yaml.faults[0].kind: ...'.  Each is now FILE:LINE:COL: key.path: ..., as
    the file's YAML errors and the P4 front end's are, also for what is found only when it is run."""
    f = tmp_path / "s.yaml"

    def refused(text: str, run: bool = False) -> str:
        f.write_text(text)
        with pytest.raises(ScenarioError) as e:
            sc = load_scenario(f)
            if run:
                from mrc_fabric.scenarios import run_scenario
                run_scenario(sc, engine="sim", workdir=tmp_path / "out")
        return str(e.value)

    fab = f"fabric: {{topology: {SMALL}}}\n"
    assert refused(fab + "traffic:\n  count: 4\n  pattern: ring\n") == \
        f"{f}:4:12: traffic.pattern: 'ring' is not one of permutation, all-to-all, incast, allreduce"
    assert refused(fab + "traffic: {qps: 0}\n") == f"{f}:2:16: traffic.qps: must be >= 1, got 0"
    assert refused(fab + "faults:\n- {at: 1, kind: melt}\n").startswith(f"{f}:3:17: faults[0].kind: 'melt' is not one of")
    assert refused(fab + "sim:\n  link_gbps: 1\n  colour: red\n").startswith(f"{f}:4:3: sim: unknown key(s) colour")
    assert refused(fab + "scenario: {}\n") == (f"{f}:2:1: unknown key(s) scenario (known: deadline_s, fabric, "
                                               "faults, measure, modes, name, seed, sim, traffic)")
    # a topology file given as the scenario listed its keys as unknown and said no more
    topo = Path(SMALL).read_text()
    assert refused(topo).endswith("unknown key(s) grpc_base_port, hosts, links, planes, switches (known: deadline_s, "
                                  "fabric, faults, measure, modes, name, seed, sim, traffic); this looks like a "
                                  "topology file: a scenario names one as fabric: {topology: FILE}")
    # found when it is run (the topology is read then): still placed in the file
    assert refused(fab + "traffic:\n  hosts: [h1, h9]\n", run=True) == f"{f}:3:10: traffic.hosts: unknown host(s) h9"
    assert refused(fab + "faults:\n- {at: 1, kind: link_down, a: p1l1, b: p9s9}\n", run=True) == \
        f"{f}:3:3: faults[0]: link_down: no link between p1l1 and p9s9 in the topology"
    assert not (tmp_path / "out").exists()
    # a value the file does not hold (a default) names the file alone; a document from memory keeps its names
    with pytest.raises(ScenarioError, match=r"^scenario\.traffic\.pattern: 'ring'"):
        parse_scenario({"traffic": {"pattern": "ring"}})


def test_a_key_that_is_not_text_is_an_error_naming_it(tmp_path):
    """YAML keys may be numbers, booleans or null (``1: x``, ``true: x``, ``~: x``): such an unknown key
    was a TypeError traceback (``', '.join`` of an int, or ``sorted`` of an int beside a text key); it
    is now the usual one-line error, placed in the file."""
    f = tmp_path / "s.yaml"
    for text, want in (("name: t\n1: x\n", f"{f}:2:1: unknown key(s) 1"),
                       ("name: t\n1: x\nzz: y\n", f"{f}:2:1: unknown key(s) 1, zz"),
                       ("name: t\n~: x\n", f"{f}: unknown key(s) None"),
                       ("traffic: {pattern: all-to-all, 5: 3}\n", f"{f}:1:32: traffic: unknown key(s) 5 (known:"),
                       ("faults:\n- {at: 1, kind: link_down, a: x, b: y, 2: z}\n", f"{f}:2:40: faults[0]: unknown key(s) 2"),
                       ("fabric: {generate: {planes: 1, 3: 4}}\n", f"{f}:1:32: fabric.generate: unknown key(s) 3")):
        f.write_text(text)
        with pytest.raises(ScenarioError) as e:
            load_scenario(f)
        assert str(e.value).startswith(want), (text, str(e.value))


def test_a_scenario_changed_after_loading_is_not_placed_in_its_file(tmp_path):
    """A scenario changed in code after it was loaded (``dataclasses.replace``, as bench/fabric_sim.py
    does) kept its file as ``source``, and run_scenario placed its errors there: ``count=0`` set in code
    came out as ``FILE:3:22: traffic.count: must be >= 1, got 0``, pointing at a line that says
    ``count: 4``.  Such errors name the field alone, as for a scenario built in code."""
    import dataclasses

    from mrc_fabric.scenarios import run_scenario

    f = tmp_path / "s.yaml"
    f.write_text(f"fabric: {{topology: {SMALL}}}\ntraffic:\n  count: 4\n")
    sc = load_scenario(f)
    for bad, want in ((dataclasses.replace(sc, traffic=dataclasses.replace(sc.traffic, count=0)),
                       "scenario.traffic.count: must be >= 1, got 0"),
                      (dataclasses.replace(sc, traffic=dataclasses.replace(sc.traffic, hosts=("h1", "h9"))),
                       "scenario.traffic.hosts: unknown host(s) h9")):
        with pytest.raises(ScenarioError) as e:
            run_scenario(bad, engine="sim", workdir=tmp_path / "out")
        assert str(e.value) == want
    assert not (tmp_path / "out").exists()


def test_one_problem_at_a_time_unknown_keys_then_values_in_file_order():
    """The top level checked its sections in a fixed order (fabric, traffic, faults, modes, measure, sim)
    and its unknown keys after all of them: `sim:` at line 1 with a bad value was reported only after a
    bad `fabric:` further down, and a misspelt key only once every section's values were right."""
    bad_sim, bad_fabric = {"link_gbps": "fast"}, {"generate": 5}
    with pytest.raises(ScenarioError, match=r"^scenario.sim.link_gbps: expected a number, got 'fast'"):
        parse_scenario({"sim": bad_sim, "fabric": bad_fabric})
    with pytest.raises(ScenarioError, match=r"^scenario.fabric.generate: expected a mapping, got 5"):
        parse_scenario({"fabric": bad_fabric, "sim": bad_sim})
    with pytest.raises(ScenarioError, match=r"^scenario.faults: expected a list"):
        parse_scenario({"faults": {"at": 1}, "traffic": {"count": "x"}})
    with pytest.raises(ScenarioError, match=r"^scenario: unknown key\(s\) trafic "):
        parse_scenario({"traffic": {"count": "x"}, "trafic": {}})
    # absent sections keep their defaults; ranges follow once every value has its type
    sc = parse_scenario({"fabric": {"topology": SMALL}, "deadline_s": 5})
    assert sc.modes == ("mrc",) and sc.faults == () and sc.deadline_s == 5
    with pytest.raises(ScenarioError, match=r"^scenario.deadline_s: must be positive"):
        parse_scenario({"deadline_s": -1, "fabric": {"topology": SMALL}})


def test_a_faults_values_are_checked_in_file_order():
    """A fault's parameters were checked before its at and duration, whatever their lines."""
    with pytest.raises(ScenarioError, match=r"^scenario.faults\[0\].at: expected a number, got 'soon'"):
        parse_scenario({"faults": [{"at": "soon", "kind": "shape", "switch": "p1l1", "port": "x"}]})
    with pytest.raises(ScenarioError, match=r"^scenario.faults\[0\].port: expected a whole number, got 'x'"):
        parse_scenario({"faults": [{"kind": "shape", "port": "x", "at": "soon"}]})
    with pytest.raises(ScenarioError, match=r"^scenario.faults\[0\].port: expected a whole number"):
        parse_scenario({"faults": [{"kind": "shape", "port": "x"}]})  # a value before a missing key
    with pytest.raises(ScenarioError, match=r"^scenario.faults\[0\]: needs at and kind"):
        parse_scenario({"faults": [{"kind": "shape", "port": 1}]})
    sc = parse_scenario({"faults": [{"port": 2, "kind": "shape", "switch": "p1l1", "at": 1, "delay_us": 5}]})
    assert sc.faults[0].params == {"switch": "p1l1", "port": 2, "delay_us": 5} and sc.faults[0].at == 1.0


@pytest.mark.parametrize(("section", "key", "value", "said"), [
    # each was a ValueError / OverflowError traceback from the simulator or the report, after the run
    ("sim", "link_gbps", float("nan"), r"scenario.sim.link_gbps: must be >= 0 and finite \(0: traffic.rate_gbps\), got nan"),
    ("sim", "linger_s", float("inf"), r"scenario.sim.linger_s: must be >= 0 and finite \(0: none\), got inf"),
    ("sim", "queue_packets", -1, r"scenario.sim.queue_packets: must be >= 0 and finite"),
    ("sim", "delay_ns", -1, r"scenario.sim.delay_ns: must be >= 0 and finite, got -1"),
    ("measure", "bin_ms", float("nan"), r"scenario.measure.bin_ms: must be positive and finite, got nan"),
    ("measure", "sample_ms", float("inf"), r"scenario.measure.sample_ms: must be positive and finite, got inf"),
    ("measure", "congestion_ms", 0, r"scenario.measure.congestion_ms: must be positive and finite, got 0"),
])
def test_sim_and_measure_numbers_must_be_finite(section, key, value, said):
    with pytest.raises(ScenarioError, match=said):
        _sc(**{section: {key: value}})


def test_the_emulated_fabric_refuses_receive_buffers_larger_than_the_machine(tmp_path):
    """Each agent holds size x count bytes per incoming flow and all run on this machine: `size: 1G,
    count: 100` was a MemoryError in the agents after bring-up and convergence.  The check is the
    engine's, before anything is built; the simulator holds no buffers."""
    from mrc_fabric.scenarios.run import NetnsEngine, SimEngine, _check_buffers

    sc = _sc(traffic={"pattern": "all-to-all", "size": "1G", "count": 100})
    eng = NetnsEngine(sc, prefix="nofab", grpc_base_port=27400, workdir=tmp_path / "out", target="softswitch")
    with pytest.raises(ScenarioError, match=r"^scenario.traffic: 12 flow\(s\) x size 1073741824 x count 100 is "
                       r"1200.0 GiB of receive buffers, .* which has [0-9.]+ GiB; make size or count smaller"):
        eng.check(sc)
    assert not (tmp_path / "out").exists()
    SimEngine(sc, prefix="nofab", grpc_base_port=27400, workdir=tmp_path / "out", target="softswitch").check(sc)
    small = _sc(traffic={"pattern": "all-to-all", "size": "1M", "count": 2})
    _check_buffers(small, mem_total=24 << 20)  # 12 x 2 MiB = 24 MiB: fits, just
    with pytest.raises(ScenarioError, match=r"is 24.0 MiB of receive buffers, .* which has 24.0 MiB"):
        _check_buffers(small, mem_total=(24 << 20) - 1)
