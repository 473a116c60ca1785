// Function calls in select keys and table keys, which p4c accepts: its DoSimplifyExpressions
// moves a call in a select into the state (before the select), its KeySideEffect computes the
// keys of a table into temporaries before the lookup when one key calls a function.
#include <core.p4>
#include <v1model.p4>
header in_t { bit<8> a; bit<8> b; bit<8> c; }
header x_t { bit<8> v; }
struct H { in_t i; x_t x; }
struct M { bit<8> cnt; }
bit<8> low(in bit<8> v) { return v & 0x0F; }
bit<8> count(inout bit<8> c, in bit<8> v) { c = c + 1; return v >> 4; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.i);
        // m.cnt is read after count() ran: p4c leaves a key without a call in place
        transition select(m.cnt, count(m.cnt, h.i.a), low(h.i.a) + 1) {
            (1, 0xA, 2): with_x;
            default: accept;
        }
    }
    state with_x { pk.extract(h.x); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.i.c = v; }
    table t {
        key = { low(h.i.b): exact @name("lowb"); h.x.v: ternary; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 2;
        if (h.x.isValid()) { h.x.setInvalid(); }   // keeps its value; a field key reads 0
        t.apply();
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.i); pk.emit(h.x); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
