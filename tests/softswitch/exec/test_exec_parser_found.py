"""Parser behaviours a differential fuzzer (random parsers against a reference written from the
spec and bmv2's parser.cpp, 2026-12-05) found wrong:
- a select range on a signed key that crosses zero (``-5 .. 5`` on an ``int<8>``) matched nothing,
  and an inverted one (``5 .. -5``) matched almost every value: the bounds were compared as the
  key's unsigned bits (p4c splits such a range at zero, and takes an inverted one as empty);
- a two-argument ``extract`` checked the varbit maximum first; bmv2 (and the spec's pseudocode)
  check a size that is no whole byte, then the packet's length, then the maximum;
- a chain of 98 or more parser states did not compile (Python's 100 indentation levels: every
  state on no loop was copied into the one before it)."""
from __future__ import annotations

import pytest
from exec_rig import through_api, through_loop

from softswitch.exec import build_pipeline
from softswitch.frontend import load_source
from softswitch.p4info import build_p4info
from softswitch.runtime import SwitchState

PROG = """
#include <core.p4>
#include <v1model.p4>
header o_t { bit<8> r; }
header s_t { int<8> s; }
header a_t { bit<8> n; }
header v_t { bit<8> len; varbit<24> v; }
struct headers { o_t o; s_t s; a_t a; v_t v; }
struct metadata { bit<8> st; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    STATES
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.r = meta.st;
        if (sm.parser_error == error.PacketTooShort) { hdr.o.r = 0xe1; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.o.r = 0xe4; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.o.r = 0xe6; }
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def pipeline(states: str):
    prog = load_source(PROG.replace("STATES", states), "parser_found.p4")
    return build_pipeline(prog, SwitchState(build_p4info(prog)), None)


def result(pl, data: bytes, path: str) -> int:
    out = through_api(pl, data) if path == "api" else through_loop(pl, data)
    return out[0]


@pytest.mark.parametrize("path", ["api", "loop"])
def test_signed_select_ranges(path):
    pl = pipeline("""
        state start { pkt.extract(hdr.s); transition select(hdr.s.s) { -5 .. 5: s1; 7 .. 3: s2; default: accept; } }
        state s1 { meta.st = 1; transition accept; }
        state s2 { meta.st = 2; transition accept; }""")
    for v in range(256):
        signed = v - 256 if v >= 128 else v
        assert result(pl, bytes([v]), path) == (1 if -5 <= signed <= 5 else 0), v


@pytest.mark.parametrize("path", ["api", "loop"])
@pytest.mark.parametrize("n, data_after, want", [
    (32, bytes(4), 0xE1),   # 4 bytes needed after len, 3 there: PacketTooShort, though past the maximum
    (36, bytes(8), 0xE6),   # not a whole byte: ParserInvalidArgument first
    (32, bytes(8), 0xE4),   # enough data, past the 24-bit maximum: HeaderTooShort
    (16, bytes(8), 0),      # fine
])
def test_varbit_extract_error_order(path, n, data_after, want):
    pl = pipeline("state start { pkt.extract(hdr.a); pkt.extract(hdr.v, (bit<32>)hdr.a.n); transition accept; }")
    assert result(pl, bytes([n]) + data_after, path) == want


@pytest.mark.parametrize("n", [98, 150])
def test_long_chain_of_states(n):
    states = []
    for i in range(n):
        name, nxt = ("start" if i == 0 else f"s{i}"), (f"s{i + 1}" if i + 1 < n else "accept")
        states.append(f"state {name} {{ pkt.advance(8); meta.st = meta.st + 1; "
                      f"transition select(pkt.lookahead<bit<8>>()) {{ 0: {nxt}; default: accept; }} }}")
    pl = pipeline("\n".join(states))
    assert result(pl, bytes(n + 2), "api") == n
    assert result(pl, bytes([0, 0, 0, 1]) + bytes(n), "loop") == 3
