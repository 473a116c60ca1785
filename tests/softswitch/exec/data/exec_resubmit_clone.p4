/* cmd 1: an ingress clone and a resubmit asked for in one pass; cmd 2: resubmitted n times. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> cmd; bit<8> n; bit<8> res; }
struct hs_t { h_t h; }
struct m_t { @field_list(1) bit<8> count; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        if (h.h.cmd == 1 && s.instance_type == 0) {
            clone(CloneType.I2E, 5);
            resubmit_preserving_field_list(1);
        }
        if (h.h.cmd == 2) {
            if (m.count < h.h.n) {
                m.count = m.count + 1;
                resubmit_preserving_field_list(1);
            }
            h.h.res = m.count;
        }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { if (h.h.cmd == 1) { h.h.res = (bit<8>)s.instance_type; } }
}
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
