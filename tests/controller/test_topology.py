"""Topology model: the examples load, and every kind of bad input fails naming the element."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from controller.topogen import clos_data
from controller.topology import TopologyError, load_topology, parse_topology, topology_to_data

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def small() -> dict:
    return clos_data(2, 2, 2, 2, name="small")


def test_examples_load():
    t = load_topology(EXAMPLES / "small.yaml")
    assert (t.planes, len(t.spines()), len(t.leaves()), len(t.hosts)) == (2, 4, 4, 4)
    big = load_topology(EXAMPLES / "large.yaml")
    assert (big.planes, len(big.spines(1)), len(big.leaves(1)), len(big.hosts)) == (4, 4, 4, 8)


def test_queries():
    t = parse_topology(small())
    leaf, port = t.host_leaf("h3", 2)
    assert (leaf.name, port) == ("p2l2", 3)
    assert t.peer("p1l1", 2).node == "p1s2"
    assert t.ports_of("p1l1") == [1, 2, 3, 4]
    assert [h for h, _, _ in t.hosts_of_leaf("p1l2")] == ["h3", "h4"]
    assert t.link_at("p1l1", 99) is None


def test_roundtrip_data():
    t = parse_topology(small())
    again = parse_topology(topology_to_data(t))
    assert again.links == t.links and again.switches == t.switches


def test_natural_order():
    t = parse_topology(clos_data(1, 10, 1, 1))
    assert [s.name for s in t.spines(1)][:3] == ["p1s1", "p1s2", "p1s3"]
    assert t.spines(1)[-1].name == "p1s10"


def test_gen_limits_are_the_ports_below_the_cpu_port():
    """topo gen numbers ports 1.. with no gap: 254 leaves (spine ports) and 253 spines (a leaf also
    needs a host port) is the most it builds; until 2026-12-07 it offered 254 spines and then refused
    them with a second message."""
    big = parse_topology(clos_data(1, 253, 254, 1))
    assert len(big.spines(1)) == 253 and len(big.leaves(1)) == 254
    for args, msg in (((1, 254, 1, 1), (r"^spines: must be 1\.\.253 \(a leaf needs a host port below the CPU port\), "
                                       r"got 254$")),
                      ((1, 2, 255, 1), r"^leaves: must be 1\.\.254 \(spine port I goes to leaf I; 255 is the CPU port\)"),
                      ((1, 250, 1, 5), r"^spines \+ hosts-per-leaf: must be at most 254 .*got 255$")):
        with pytest.raises(TopologyError, match=msg):
            clos_data(*args)


def _bad(mutate, *needles: str) -> str:
    d = small()
    mutate(d)
    with pytest.raises(TopologyError) as ei:
        parse_topology(d)
    msg = str(ei.value)
    for n in needles:
        assert n in msg, msg
    return msg


def test_dangling_link():
    _bad(lambda d: d["links"].append(["p1l1:9", "p1s9:1"]), "p1s9", "dangling")


def test_duplicate_port():
    _bad(lambda d: d["links"].append(["p1l1:1", "p1s2:7"]), "duplicate port", "p1l1:1")


def test_reserved_ports():
    _bad(lambda d: d["links"].append(["p1l1:255", "p1s1:9"]), "p1l1:255", "reserved", "CPU")
    _bad(lambda d: d["links"].append(["p1l1:9", "p1s1:511"]), "p1s1:511", "reserved", "drop")
    _bad(lambda d: d["links"].append(["p1l1:600", "p1s1:9"]), "p1l1:600", "out of range")
    _bad(lambda d: d["links"].append(["p1l1:x", "p1s1:9"]), "p1l1:x", "not a number")


def test_host_port_beyond_planes():
    _bad(lambda d: d["links"].append(["h1:3", "p1l1:9"]), "h1:3", "planes")


def test_host_missing_plane():
    def drop(d):
        d["links"] = [lk for lk in d["links"] if lk[0] != "h2:2"]
    _bad(drop, "host h2", "ports do not match the planes", "2")


def test_host_port_on_wrong_plane():
    def swap(d):
        for lk in d["links"]:
            if lk[0] == "h1:1":
                lk[1] = "p2l1:9"
            if lk[0] == "h1:2":
                lk[1] = "p1l1:9"
    _bad(swap, "h1:1", "plane 2", "p2l1")


def test_host_on_spine():
    _bad(lambda d: d.update(hosts=d["hosts"] + ["h9"], links=d["links"] + [["h9:1", "p1s1:9"]]),
         "h9", "spine p1s1")


def test_cross_plane_link():
    _bad(lambda d: d["links"].append(["p1l1:9", "p2s1:9"]), "p1l1:9--p2s1:9", "plane")


def test_leaf_leaf_link():
    _bad(lambda d: d["links"].append(["p1l1:9", "p1l2:9"]), "two leafs", "p1l1:9--p1l2:9")


def test_unknown_switch_in_links_and_keys():
    _bad(lambda d: d["links"].append(["nosuch:1", "p1s1:9"]), "nosuch")
    _bad(lambda d: d["switches"][0].update(colour="red"), "switch p1s1", "colour")


def test_switch_fields():
    _bad(lambda d: d["switches"][0].update(role="core"), "switch p1s1", "role")
    _bad(lambda d: d["switches"][0].update(plane=3), "switch p1s1", "plane")
    _bad(lambda d: d["switches"].append(copy.deepcopy(d["switches"][0])), "switch p1s1", "duplicate")
    _bad(lambda d: d["switches"][1].update(grpc_port=d["switches"][0]["grpc_port"]),
         "switch p1s2", "grpc_port", "p1s1")
    _bad(lambda d: d["switches"][1].update(device_id=1), "switch p1s2", "device_id", "p1s1")
    _bad(lambda d: d["switches"][1].update(name="1bad"), "'1bad'")


def test_leaf_missing_spine_and_parallel_links():
    def drop(d):
        d["links"] = [lk for lk in d["links"] if lk != ["p1l2:2", "p1s2:2"]]
    _bad(drop, "switch p1l2", "p1s2")
    _bad(lambda d: d["links"].append(["p1l1:9", "p1s1:9"]), "parallel", "p1l1")


def test_link_props_and_bad_values():
    d = small()
    d["link_defaults"] = {"queue_depth": 32}
    d["links"][0] = {"a": "p1l1:1", "b": "p1s1:1", "delay_us": 10, "rate_pps": 1000}
    t = parse_topology(d)
    assert t.link_at("p1l1", 1).props.delay_us == 10
    assert t.link_at("p1l1", 1).props.queue_depth == 32
    assert t.link_at("p1l1", 2).props.queue_depth == 32
    _bad(lambda d: d["links"].__setitem__(0, {"a": "p1l1:1", "b": "p1s1:1", "delay_us": -1}),
         "links[0]", "delay_us")


def test_planes_and_shape():
    _bad(lambda d: d.update(planes=0), "planes")
    with pytest.raises(TopologyError, match="mapping"):
        parse_topology([1, 2])


def test_load_errors(tmp_path):
    with pytest.raises(TopologyError, match="cannot read"):
        load_topology(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: [\n")
    with pytest.raises(TopologyError, match=r"bad.yaml:2:1: not valid YAML"):
        load_topology(bad)


def test_yaml_errors_are_one_line_with_file_and_line(tmp_path):
    """A syntax error names FILE:LINE:COL on one line (PyYAML's own text spans lines and names
    '<unicode string>'); a key given twice is refused at its line instead of the last one winning."""
    text = (EXAMPLES / "small.yaml").read_text().splitlines()
    i = next(n for n, line in enumerate(text) if line.startswith("- {name: p1s1"))
    broken = list(text)
    broken[i] = broken[i].rstrip("}")  # an unclosed flow mapping
    f = tmp_path / "syntax.yaml"
    f.write_text("\n".join(broken) + "\n")
    with pytest.raises(TopologyError) as ei:
        load_topology(f)
    msg = str(ei.value)
    assert "\n" not in msg and "<unicode string>" not in msg
    assert msg.startswith(f"{f}:{i + 2}:3: not valid YAML: expected ',' or '}}'"), msg
    assert f"at line {i + 1}" in msg

    j = next(n for n, line in enumerate(text) if line.startswith("planes:"))
    dup = text[: j + 1] + ["planes: 1"] + text[j + 1:]
    f = tmp_path / "dup.yaml"
    f.write_text("\n".join(dup) + "\n")
    with pytest.raises(TopologyError, match=rf"dup.yaml:{j + 2}:1: not valid YAML: duplicate key 'planes' "
                       rf"\(first at line {j + 1}\)"):
        load_topology(f)
    # and the same file named by a scenario's fabric.topology (it was read with yaml.safe_load: the last
    # 'planes' won without a word, and a syntax error was a traceback)
    from mrc_fabric.scenarios import ScenarioError
    from mrc_fabric.scenarios.runner import topology_data
    from mrc_fabric.scenarios.spec import FabricSpec

    with pytest.raises(ScenarioError, match=rf"scenario.fabric.topology: .*dup.yaml:{j + 2}:1: not valid YAML: "
                       rf"duplicate key 'planes'"):
        topology_data(FabricSpec(topology=str(f)))
    # the same key in two different mappings is no duplicate
    assert load_topology(EXAMPLES / "small.yaml").planes == 2


def test_file_that_is_not_utf8_text_names_file_and_place(tmp_path):
    """A byte that is not UTF-8 was a UnicodeDecodeError traceback (mrc-controller, mrc-fabric up and a
    scenario's fabric.topology alike); it is now one line FILE:LINE:COL.  A byte-order mark (UTF-8 or
    UTF-16, as YAML allows) still reads."""
    text = (EXAMPLES / "small.yaml").read_text()
    f = tmp_path / "latin1.yaml"
    f.write_bytes(text.replace("name: small", "name: sm\xe4ll").encode("latin-1"))
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if ln.startswith("name: small"))
    with pytest.raises(TopologyError, match=rf"latin1.yaml:{line}:9: not UTF-8 text \(byte 0xe4"):
        load_topology(f)
    from mrc_fabric.scenarios import ScenarioError
    from mrc_fabric.scenarios.runner import topology_data
    from mrc_fabric.scenarios.spec import FabricSpec

    with pytest.raises(ScenarioError, match=rf"scenario.fabric.topology: .*latin1.yaml:{line}:9: not UTF-8"):
        topology_data(FabricSpec(topology=str(f)))
    for enc in ("utf-8-sig", "utf-16"):
        g = tmp_path / f"{enc}.yaml"
        g.write_bytes(text.encode(enc))
        assert load_topology(g).name == "small"


def test_nesting_too_deep_is_an_error_not_a_recursion_traceback(tmp_path):
    f = tmp_path / "deep.yaml"
    f.write_text("planes: " + "[" * 20000 + "]" * 20000 + "\n")
    with pytest.raises(TopologyError, match=r"deep.yaml: not valid YAML: nested too deeply"):
        load_topology(f)


def test_usid_collisions_and_name_are_checked_when_the_file_is_read(tmp_path):
    """`topo check` said ok for a topology whose pinned uSIDs collide; every other command refused it
    with 'switch p1s2: uSID 0100 already allocated ...' and no file name.  A name that is a list was
    taken as the text "['a', 'b']"."""
    text = (EXAMPLES / "small.yaml").read_text()
    f = tmp_path / "t.yaml"
    f.write_text(text.replace("grpc_port: 9559}", "grpc_port: 9559, usid: 0x2101}"))  # p1l1's automatic uSID
    with pytest.raises(TopologyError, match=rf"^{f}: switch p1l1: uSID 2101 already allocated to switch p1s1"):
        load_topology(f)
    f.write_text(text.replace("name: small", "name: [a, b]"))
    with pytest.raises(TopologyError, match=rf"^{f}:3:7: name: must be a string, got \['a', 'b'\]"):
        load_topology(f)


def test_ports_of_is_indexed_and_matches_the_links():
    """ports_of scanned every link end per call (validation quadratic in the fabric: 6 s for 2,016 hosts,
    minutes for the generator's largest shapes); it is an index now, equal to the scan it replaced."""
    t = load_topology(EXAMPLES / "large.yaml")
    for node in [*t.switches, *t.hosts, "nosuch"]:
        assert t.ports_of(node) == sorted(e.port for e in t.iter_ends() if e.node == node)
    t.ports_of("p1l1").append(999)  # a copy: the caller cannot change the index
    assert 999 not in t.ports_of("p1l1")


def test_a_number_key_beside_a_text_key_is_an_error_not_a_traceback(tmp_path):
    """Unknown keys ``1`` and ``zz`` were sorted together: a TypeError traceback (int < str)."""
    f = tmp_path / "t.yaml"
    f.write_text("name: t\nplanes: 1\n1: x\nzz: y\n")
    with pytest.raises(TopologyError, match=rf"^{f}:3:1: topology: unknown key\(s\) 1, zz \(allowed: "):
        load_topology(f)
