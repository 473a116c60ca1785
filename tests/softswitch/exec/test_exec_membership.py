"""``x == c1 || x == c2 ...`` and ``x != c1 && x != c2 ...`` on one side-effect-free integer
``x`` are generated as one set test (``exprgen._membership``, issue 16, tenth round); chains of
any other form keep their terms.  Every value of the tested fields is run through the loop's and
the API's paths and checked against the terms evaluated here, so a wrong rewrite (a constant
lost, a term of another field folded in, ``in`` for ``not in``) shows as a wrong output byte.
A one-field exact lookup passes its key to the dict's ``get`` directly (no ``_kv`` temporary)."""
from __future__ import annotations

import re

from exec_rig import Rig, through_api, through_loop

PROG = """
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> a; bit<8> b; int<8> s; bit<8> r1; bit<8> r2; bit<8> r3; bit<8> r4; bit<8> r5; }
struct H { e_t e; }
struct M { }
bit<8> bump(inout bit<8> calls, in bit<8> v) { calls = calls + 1; return v; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.e); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    bit<8> calls;
    action put(bit<8> x) { h.e.b = x; }
    table t {
        key = { h.e.a : exact; }
        actions = { put; NoAction; }
        default_action = NoAction();
        const entries = { 4 : put(44); 200 : put(99); }
    }
    apply {
        sm.egress_spec = 1;
        calls = 0;
        // one field, three constants (one of them written in hex): a set test
        h.e.r1 = (h.e.a == 3 || h.e.a == 0x10 || 7 == h.e.a) ? 8w1 : 8w0;
        // all != under &&: a 'not in' test
        h.e.r2 = (h.e.a != 0 && h.e.a != 255) ? 8w1 : 8w0;
        // a signed field with a negative constant
        h.e.r3 = (h.e.s == -1 || h.e.s == 5) ? 8w1 : 8w0;
        // two fields in one chain: kept as it is
        h.e.r4 = (h.e.a == 1 || h.e.b == 2) ? 8w1 : 8w0;
        // a call in a term (a side effect per evaluation): kept as it is
        h.e.r5 = (bump(calls, h.e.a) == 9 || bump(calls, h.e.a) == 10) ? calls : 8w100;
        t.apply();                             // a one-field exact lookup: the key as the argument
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.e); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _expected(a: int, b: int, s: int) -> bytes:
    sv = s - 256 if s > 127 else s
    r5 = (1 if a == 9 else 2 if a == 10 else 100)
    b = 44 if a == 4 else 99 if a == 200 else b
    return bytes([a, b, s, int(a in (3, 16, 7)), int(a not in (0, 255)), int(sv in (-1, 5)),
                  int(a == 1 or b == 2), r5])


def test_chains_on_one_field_are_set_tests_others_are_kept(tmp_path):
    src = tmp_path / "membership.p4"
    src.write_text(PROG)
    body = Rig(src).pipeline.blocks.source.split("def blk_ingress(H, M, S, C):\n", 1)[1].split("\ndef ", 1)[0]
    assert re.search(r"\(H\.f_e\.f_a in \{3, 16, 7\}\)", body), body
    assert re.search(r"\(H\.f_e\.f_a not in \{0, 255\}\)", body), body
    assert re.search(r" in \{-1, 5\}\)", body), body
    assert body.count(" in {") == 3  # not r4 (two fields) nor r5 (a call per term)
    assert "(H.f_e.f_a == 1) or (H.f_e.f_b == 2)" in body
    assert re.search(r"_ke = TD\d+\(\(H\.f_e\.f_a if H\.f_e\.valid else 0\)\)\n", body), body


def test_every_value_on_both_paths(tmp_path):
    src = tmp_path / "membership.p4"
    src.write_text(PROG)
    pl = Rig(src).pipeline
    for a in range(256):
        b = (a * 7) & 0xff if a % 3 else 2
        s = (a * 13 + 1) & 0xff if a % 5 else (255 if a % 2 else 5)
        frame = bytes([a, b, s, 0, 0, 0, 0, 0])
        want = _expected(a, b, s)
        assert through_loop(pl, frame) == want, a
        assert through_api(pl, frame) == want, a
