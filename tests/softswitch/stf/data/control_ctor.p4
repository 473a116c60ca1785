#include <core.p4>
#include <v1model.p4>
// Control instances passed as constructor arguments (one instance shared by the two controls
// given it: its register counts both applications) and direct application of a control type
// (Ctl.apply(...): an instance of its own at that call).
header h_t { bit<8> a; bit<8> c; }
struct H { h_t h; }
struct M { }

control Step(inout bit<8> x);

control Count(inout bit<8> x) {
    register<bit<8>>(1) r;
    apply {
        bit<8> v;
        r.read(v, 0);
        v = v + 1;
        r.write(0, v);
        x = v;
    }
}

control Twice(inout bit<8> x)(Step s) {
    apply {
        x = x + 0x10;
        s.apply(x);
    }
}

control Wrap(inout bit<8> a) {
    Count() k;
    Twice(k) t1;
    Twice(k) t2;
    apply {
        t1.apply(a);
        t2.apply(a);
    }
}

control Dbl(inout bit<8> x) { apply { x = x + x; } }

parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        Wrap.apply(h.h.a);
        Dbl.apply(h.h.c);
        Dbl.apply(h.h.c);
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
