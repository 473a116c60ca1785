"""A control's locals are zeroed when the control is entered only where that can be seen.

A local declared in the apply body is (re)initialised by its declaration, and P4's scoping puts
every use after it, so zeroing it on entry as well was work thrown away -- for a header local (the
telemetry record of mrc_switch.p4's egress) a header object made for every packet and never used
(``usage.declared_before_use``).  A local an action names, one declared at control level, one used
before a declaration on some path keeps its entry zeroing.  Frames are checked on the loop's and
the API's paths over several packets, so a value left from the packet before would show."""
from __future__ import annotations

import dataclasses
import re

from exec_rig import Rig, through_api, through_loop

from softswitch.exec.usage import declared_before_use
from softswitch.frontend import ir

LOC = ir.Loc("test", 1, 1)

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
    bit<8> seen;                       // control level, an action writes it: zeroed on entry
    action note() { seen = seen + h.e.v; }
    apply {
        sm.egress_spec = 2;
        h.o.setValid();
        note();
        h.o.a = seen;                  // v: a stale entry value would add up over packets
        if (h.e.kind == 1) {
            e_t rec;                   // declared in a branch: only its declaration sets it
            h.o.b = rec.isValid() ? 8w1 : 8w0;
            rec.setValid();
            rec.v = h.e.v + 1;
            h.o.c = rec.v;
        }
        bit<8> late = 7;               // declared after the if, with an initialiser
        late = late + h.e.kind;
        h.o.d = late;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.e); pk.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _expected(kind: int, v: int) -> bytes:
    c = (v + 1) & 0xFF if kind == 1 else 0
    return bytes([kind, v, v, 0, c, (7 + kind) & 0xFF])


def test_only_the_locals_declared_before_use_skip_the_entry_zeroing(tmp_path):
    src = tmp_path / "locals.p4"
    src.write_text(PROG)
    rig = Rig(src)
    ctl = rig.program.ingress
    late = declared_before_use(ctl, [rig.program.actions[a] for a in ctl.actions])
    names = {n.split("$")[0]: n for n in ctl.locals}
    assert late == {names["rec"], names["late"]}
    # the generated ingress makes no header object on entry: only ``seen`` is zeroed there
    body = rig.pipeline.blocks.source.split("def blk_ingress(H, M, S, C):\n", 1)[1]
    entry = body.split("    try:\n", 1)[0]
    assert re.fullmatch(r"    L = _onew\(Loc\d+\)\n    L\.l\d+ = 0\n", entry), entry


def test_frames_over_several_packets_on_both_paths(tmp_path):
    src = tmp_path / "locals.p4"
    src.write_text(PROG)
    pl = Rig(src).pipeline
    for kind, v in [(1, 5), (0, 9), (1, 255), (2, 3), (1, 0)]:
        frame = bytes([kind, v])
        assert through_loop(pl, frame) == _expected(kind, v)
        assert through_api(pl, frame) == _expected(kind, v)


def _ctl_with_body(rig, *stmts):
    """The program's ingress control with its apply body replaced by ``stmts`` (no actions)."""
    return dataclasses.replace(rig.program.ingress, body=ir.Block(LOC, list(stmts)), actions=[], tables={})


def test_the_walk_follows_branches_and_loops(tmp_path):
    """Statements a P4 source cannot put in this order (its scoping forbids a use outside the
    declaration's block), as the front end's own rewrites could: the walk keeps the entry zeroing
    wherever a path reaches a use without passing the declaration."""
    src = tmp_path / "locals.p4"
    src.write_text(PROG)
    rig = Rig(src)
    names = {n.split("$")[0]: n for n in rig.program.ingress.locals}
    x = names["late"]
    t = rig.program.ingress.locals[x]
    var, cond = ir.Var(t, LOC, x), ir.Const(ir.BoolT(), LOC, True)

    def decl():
        return ir.VarDecl(LOC, ir.Var(t, LOC, x), None)

    def use():
        return ir.Assign(LOC, ir.Var(t, LOC, x), ir.Binary(t, LOC, "+", var, ir.Const(t, LOC, 1)))

    one_branch = _ctl_with_body(rig, ir.If(LOC, cond, ir.Block(LOC, [decl()]), None), use())
    assert x not in declared_before_use(one_branch, [])
    both = _ctl_with_body(rig, ir.If(LOC, cond, ir.Block(LOC, [decl()]), ir.Block(LOC, [decl()])), use())
    assert x in declared_before_use(both, [])
    use_first = _ctl_with_body(rig, use(), decl(), use())
    assert x not in declared_before_use(use_first, [])
    in_own_init = _ctl_with_body(rig, ir.VarDecl(LOC, ir.Var(t, LOC, x), var))
    assert x not in declared_before_use(in_own_init, [])
    loop = ir.For(LOC, [], [], cond, [use()], ir.Block(LOC, [decl()]))
    assert x not in declared_before_use(_ctl_with_body(rig, loop), [])  # update after a ``continue``
    assert x in declared_before_use(_ctl_with_body(rig, decl(), loop), [])
