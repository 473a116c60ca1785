/* 'return' in the apply block of a control that another control applies: it leaves that
 * control only, and the caller goes on (P4_16: return ends the enclosing control's apply).
 * SONiC DASH's pipeline needs it: do_action_nat46 returns early, routing_action_apply goes on. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control early(inout h_t x) {
    apply {
        if (x.a == 1) {
            return;
        }
        x.b = x.b + 1;
    }
}

control in_loop(inout h_t x) {
    apply {
        for (bit<8> i = 0; i < 4; i = i + 1) {
            if (i == x.a) {
                return;  // leaves the loop and the control
            }
            x.b = x.b + 1;
        }
        x.c = 0xCC;
    }
}

control in_switch(inout h_t x) {
    action pick() { }
    table t {
        key = { x.a: exact; }
        actions = { pick; NoAction; }
        const entries = { 5: pick(); }
        default_action = NoAction();
    }
    apply {
        switch (t.apply().action_run) {
            pick: { return; }
        }
        x.c = 0x5C;
    }
}

control outer(inout h_t x) {
    early() e;
    apply {
        e.apply(x);
        x.d = x.d + 0x10;  // runs although early returned
        if (x.a == 2) {
            return;
        }
        x.d = x.d + 1;
    }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    early() e;
    apply {
        sm.egress_spec = 1;
        if (h.h.op == 1) {
            e.apply(h.h);
            e.apply(h.h);         // the same instance again: its return is its own too
            h.h.d = 0xDD;
        } else if (h.h.op == 2) {
            in_loop.apply(h.h);
            h.h.d = 0xDD;
        } else if (h.h.op == 3) {
            in_switch.apply(h.h);
            h.h.d = 0xDD;
        } else if (h.h.op == 4) {
            outer.apply(h.h);
            h.h.c = 0xC4;
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
