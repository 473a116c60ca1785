"""A byte-aligned unsigned field wider than 64 bits that fills its struct segment alone (an IPv6
address) is read with ``int.from_bytes`` (bound once as ``_ifb``) and written with ``to_bytes`` (issue 16, tenth round;
``layout._close``), and ``x ++ 0`` is a shift alone (``exprgen.ex_Concat``).  Each form is
checked value by value against the bits computed here: widths 72 and 128, a signed 128-bit
field and a 100-bit field that share their segments (the word path), a stack of 128-bit
elements, values with the top bit set, all ones and zero, on the loop's and the API's paths."""
from __future__ import annotations

import random

from exec_rig import Rig, through_api, through_loop

from softswitch.exec import layout

PROG = """
#include <core.p4>
#include <v1model.p4>
header w_t { bit<128> a; bit<72> b; int<128> s; bit<100> c; bit<4> d; bit<8> k; }
header e_t { bit<128> v; }
header o_t { bit<128> sh; bit<72> sb; bit<128> cz; int<136> iz; }
struct H { w_t w; e_t[2] st; o_t o; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.w); pk.extract(h.st.next); pk.extract(h.st.next); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.o.setValid();
        h.o.sh = h.w.a >> 3;                       // the value read, as a number
        h.o.sb = h.w.b + 1;
        h.o.cz = h.w.a[119:0] ++ 8w0;              // x ++ 0: a shift alone
        h.o.iz = h.w.s ++ 8w0;                     // signed, likewise
        h.w.a = h.w.a ^ h.st[1].v;                 // written: emitted from the fields
        h.st[0].v = h.st[0].v + 1;
        h.w.k = h.w.k + 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.w); pk.emit(h.st); pk.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

M = {w: (1 << w) - 1 for w in (72, 100, 120, 128, 136)}


def _frame(a: int, b: int, s: int, c: int, d: int, k: int, v0: int, v1: int) -> bytes:
    w = (((((a << 72 | b) << 128 | (s & M[128])) << 100 | c) << 4 | d) << 8) | k
    return w.to_bytes(55, "big") + v0.to_bytes(16, "big") + v1.to_bytes(16, "big")


def _expected(a: int, b: int, s: int, c: int, d: int, k: int, v0: int, v1: int) -> bytes:
    out = _frame(a ^ v1, b, s, c, d, (k + 1) & 0xff, (v0 + 1) & M[128], v1)
    sv = s - (1 << 128) if s >> 127 else s
    iz = (sv << 8) & M[136]
    o = (((a >> 3) << 72 | ((b + 1) & M[72])) << 128 | ((a & M[120]) << 8)) << 136 | iz
    return out + o.to_bytes(58, "big")


def _values(seed: int) -> list[tuple[int, ...]]:
    rnd = random.Random(seed)
    edge = [(0, 0, 0, 0, 0, 0, 0, 0), (M[128], M[72], M[128], M[100], 15, 255, M[128], M[128]),
            (1 << 127, 1 << 71, 1 << 127, 1 << 99, 8, 128, 1 << 127, 1)]
    return edge + [(rnd.getrandbits(128), rnd.getrandbits(72), rnd.getrandbits(128), rnd.getrandbits(100),
                    rnd.getrandbits(4), rnd.getrandbits(8), rnd.getrandbits(128), rnd.getrandbits(128))
                   for _ in range(40)]


def test_wide_fields_read_and_written_as_bytes(tmp_path):
    src = tmp_path / "wide.p4"
    src.write_text(PROG)
    rig = Rig(src)
    code = rig.pipeline.blocks.source
    # a (128), b (72) and the stack's v: bytes; s (signed) and c (shares a segment): words
    assert code.count(" = _ifb(_xw") == 4, code
    assert ".f_a.to_bytes(16)" in code and ".f_b.to_bytes(9)" in code
    assert ".f_s.to_bytes(" not in code and ".f_c.to_bytes(" not in code
    assert "<< 8) | 0)" not in code
    pl = rig.pipeline
    for vals in _values(17):
        frame = _frame(*vals)
        assert through_loop(pl, frame) == _expected(*vals), vals
        assert through_api(pl, frame) == _expected(*vals), vals


def test_the_segments_of_a_wide_field():
    ir = layout.ir
    h = ir.HeaderT("t", tuple(ir.Field(n, ir.BitT(w)) for n, w in (("a", 128), ("b", 64), ("c", 65), ("d", 7))))
    assert [s.codes for s in layout._segments(h)] == [[(16, "16s")], [(8, "Q")], [(8, "Q"), (1, "B")]]
