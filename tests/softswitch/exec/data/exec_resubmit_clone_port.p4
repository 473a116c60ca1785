/* An ingress clone made in a resubmitted pass is parsed with the port that received the packet
 * (bmv2 re-parses it with the packet's own port; the resubmitted pass's standard_metadata has 0). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> seen_port; bit<8> x_valid; }
header x_t { bit<8> v; }
struct hs_t { h_t h; x_t x; }
struct m_t { bit<8> z; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition select(s.ingress_port) { 7: with_x; default: accept; } }
    state with_x { p.extract(h.x); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        if (s.instance_type == 0) { resubmit_preserving_field_list(0); }
        if (s.instance_type == 6) { clone(CloneType.I2E, 5); }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { h.h.x_valid = h.x.isValid() ? 8w1 : 8w0; h.h.seen_port = (bit<8>)s.instance_type; }
}
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); p.emit(h.x); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
