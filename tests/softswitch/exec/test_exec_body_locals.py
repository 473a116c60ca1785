"""A control's locals that nothing but its apply body names are Python locals of the block
function (issue 16, ninth round; ``usage.body_only_locals``); a local an action or a table names
stays an attribute of the locals object, which the generated action and table functions are
handed.  Frames are checked on the loop's and the API's paths over several packets, so a value a
local kept from the packet before would show; and the same program with every local taken for a
body-only one (the analysis without its exclusions) does not run."""
from __future__ import annotations

import re

import pytest
from exec_rig import Rig, through_api, through_loop

from softswitch.exec import codegen
from softswitch.exec.usage import body_only_locals

PROG = """
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> kind; bit<8> v; }
header o_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct H { e_t e; o_t o; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.e); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    bit<8> acc;                        // only the body names it: a Python local, zeroed on entry
    bit<8> k;                          // a table's key: the locals object
    bit<8> byact;                      // an action writes it: the locals object
    action put(bit<8> x) { h.o.c = x; }
    action bump() { byact = byact + h.e.v; }
    table t {
        key = { k : exact; }
        actions = { put; NoAction; }
        default_action = NoAction();
        const entries = { 3 : put(33); }
    }
    apply {
        sm.egress_spec = 2;
        h.o.setValid();
        acc = acc + h.e.v;             // a value kept from the packet before would add up
        h.o.a = acc;
        k = h.e.kind;
        t.apply();
        bump();
        h.o.b = byact;
        e_t hl;                        // declared in the body: set by its declaration
        if (h.e.kind == 1) {
            hl.setValid();
            hl.v = 5;
        }
        h.o.d = hl.isValid() ? hl.v : 8w9;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.e); pk.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

PACKETS = [(1, 5), (3, 9), (0, 255), (1, 7), (3, 0), (2, 4)]


def _expected(kind: int, v: int) -> bytes:
    return bytes([kind, v, v, v, 33 if kind == 3 else 0, 5 if kind == 1 else 9])


def _rig(tmp_path) -> Rig:
    src = tmp_path / "body_locals.p4"
    src.write_text(PROG)
    return Rig(src)


def test_only_locals_no_action_or_table_names_are_python_locals(tmp_path):
    rig = _rig(tmp_path)
    ctl = rig.program.ingress
    names = {n.split("$")[0]: n for n in ctl.locals}
    assert body_only_locals(ctl, list(rig.program.actions.values())) == {names["acc"], names["hl"]}
    body = rig.pipeline.blocks.source.split("def blk_ingress(H, M, S, C):\n", 1)[1].split("\ndef ", 1)[0]
    # the locals object holds k and byact; acc and hl are Python locals, each set by its
    # declaration (the front end declares a control-level local at the top of the body) before
    # anything reads it, so neither is zeroed on entry as well (``declared_before_use``)
    entry = body.split("    try:\n", 1)[0]
    assert re.fullmatch(r"    L = _onew\(Loc\d+\)\n    L\.l\d+ = L\.l\d+ = 0\n", entry), entry
    assert re.search(r"    try:\n        _cl\d+ = 0\n", body)
    assert len(set(re.findall(r"_cl\d+", body))) == 2
    assert len(set(re.findall(r"L\.l\d+", body))) == 2


def test_frames_over_several_packets_on_both_paths(tmp_path):
    pl = _rig(tmp_path).pipeline
    for kind, v in PACKETS:
        frame = bytes([kind, v])
        assert through_loop(pl, frame) == _expected(kind, v)
        assert through_api(pl, frame) == _expected(kind, v)


def test_without_the_exclusions_the_program_does_not_run(tmp_path, monkeypatch):
    """The check above has teeth: with the locals an action or a table names made Python locals
    too, the generated action and table functions no longer reach them."""
    monkeypatch.setattr(codegen, "body_only_locals", lambda ctl, _actions: frozenset(ctl.locals))
    pl = _rig(tmp_path).pipeline
    with pytest.raises(Exception):  # noqa: B017 - any failure will do: the table's key is unbound
        for kind, v in PACKETS:
            assert through_api(pl, bytes([kind, v])) == _expected(kind, v)
