// v1model's deprecated calls: mark_to_drop() with no argument, resubmit({}), recirculate({})
// and clone3(type, session, {}) -- the empty-list forms preserve no field.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> n; bit<8> tag; }
struct H { h_t h; }
struct M { bit<8> seen; }

parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}

action drop_it() { mark_to_drop(); }

control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action again() { resubmit({}); }
    action copy() { clone3(CloneType.I2E, 3, {}); }
    apply {
        sm.egress_spec = 2;
        h.h.n = h.h.n + 1;
        if (h.h.op == 1) { drop_it(); }
        else if (h.h.op == 2 && sm.instance_type == 0) { m.seen = 9; again(); }
        else if (h.h.op == 3) { copy(); }
        h.h.tag = m.seen;   // a resubmitted pass sees m.seen reset: nothing was preserved
    }
}

control E(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        if (h.h.op == 4 && h.h.n == 1) { recirculate({}); }  // instance_type reads 0 in egress (bmv2)
        if (sm.instance_type == 1) { h.h.tag = 0xc1; }
    }
}

control D(packet_out b, in H h) { apply { b.emit(h.h); } }
control V(inout H h, inout M m) { apply { } }
control U(inout H h, inout M m) { apply { } }

V1Switch(P(), V(), I(), E(), U(), D()) main;
