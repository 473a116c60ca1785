"""How many rounds a parser loop that consumes nothing gets before ``error.ParserTimeout``:
``MAX_PARSER_STATES`` plus, per byte of the packet, one round per state the loop dispatches on
(``start`` and ``spin`` here).  The loop counts its rounds down where a state goes round again
(2026-12-06: it was a ``for`` over a range, built for every packet); the count must stay the
same, and a packet whose states are all copied into ``start`` must parse as before."""
from __future__ import annotations

import pytest
from exec_rig import Rig, through_api, through_loop

from softswitch.exec.exprgen import MAX_PARSER_STATES

SPIN = """
#include <core.p4>
#include <v1model.p4>
header o_t { bit<8> err; bit<32> rounds; }
header b_t { bit<8> v; }
struct H { o_t o; b_t b; }
struct M { bit<32> n; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        m.n = m.n + 1;
        transition select(pk.lookahead<bit<8>>()) { 0xFF: spin; default: one; }
    }
    state spin { m.n = m.n + 1; transition spin; }
    state one { pk.extract(h.b); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        h.o.setValid();
        h.o.err = sm.parser_error == error.ParserTimeout ? 8w5 : (sm.parser_error == error.NoError ? 8w0 : 8w1);
        h.o.rounds = m.n;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.o); pk.emit(h.b); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    src = tmp_path_factory.mktemp("rounds") / "spin.p4"
    src.write_text(SPIN)
    return Rig(src)


@pytest.mark.parametrize("through", [through_api, through_loop])
@pytest.mark.parametrize("size", [1, 4, 300])
def test_spin_gets_exactly_the_bound(rig, through, size):
    data = b"\xff" + bytes(size - 1)
    out = through(rig.pipeline, data)
    rounds = MAX_PARSER_STATES + 2 * size  # two dispatched states: start and spin
    assert out[:5] == b"\x05" + rounds.to_bytes(4, "big")  # every round ran once, then the timeout
    assert out[5:] == data  # nothing extracted: the whole packet is payload


@pytest.mark.parametrize("through", [through_api, through_loop])
def test_no_loop_taken(rig, through):
    assert through(rig.pipeline, b"\x07tail") == b"\x00" + (1).to_bytes(4, "big") + b"\x07tail"
