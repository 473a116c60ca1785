#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> ia; bit<8> ib; bit<8> q; bit<8> ta; bit<8> tb; }
struct inner_t { bit<8> a; @field_list(2) bit<8> b; }
@field_list(3) struct tagged_t { bit<8> a; bit<8> b; }
struct M {
  @field_list(1) inner_t in1;
  @field_list(1) @field_list(2) bit<8> q;
  tagged_t t;
}
struct H { h_t h; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.instance_type == 0) {
            m.in1.a = 4; m.in1.b = 5; m.q = 6; m.t.a = 7; m.t.b = 8;
            if (h.h.op == 1) { resubmit_preserving_field_list(1); }
            else if (h.h.op == 2) { resubmit_preserving_field_list(2); }
            else if (h.h.op == 3) { resubmit_preserving_field_list(3); }
        } else {
            h.h.ia = m.in1.a; h.h.ib = m.in1.b; h.h.q = m.q; h.h.ta = m.t.a; h.h.tb = m.t.b;
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
