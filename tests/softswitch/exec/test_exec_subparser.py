"""Sub-parser instances applied from parser states, inlined as p4c inlines them."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_subparser.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, data: bytes) -> bytes:
    res = rig.pipeline.ingress(data, 1, 0)
    return rig.pipeline.egress(res.to_tm[0], 0).frames[0].data


@pytest.mark.parametrize("data,out", [
    (bytes([1, 0, 5]), bytes([2, 0, 5])),                # accept at once; the caller's rest runs
    (bytes([1, 1, 5]), bytes([7, 1, 5])),                # inout count: 1 + 5, then + 1
    (bytes([2, 1, 5, 1, 3]), bytes([10, 1, 5, 1, 3])),   # applied again from another state
    # verify fails in the second apply: no copy-out (o2 stays invalid, count stays 7), NoMatch
    (bytes([2, 1, 5, 1, 30]), bytes([0xEE, 1, 5])),
])
def test_sub_parser(rig, data, out):
    assert run(rig, data) == out


def test_states_are_copied_per_apply(rig):
    assert list(rig.program.parser.states) == [
        "start", "start$opt1.start", "start$opt1.more", "start$after1",
        "second", "second$opt1.start", "second$opt1.more", "second$after1"]


def test_instance_of_something_else_in_a_parser_is_rejected():
    src = PROG.read_text().replace("    Opt() opt;\n", "    Opt() opt;\n    register<bit<8>>(2) r;\n")
    with pytest.raises(P4Error) as ei:
        load_source(src, "sp.p4")
    assert "unsupported: instance of 'register' in a parser" in str(ei.value) and "sp.p4:" in str(ei.value)
