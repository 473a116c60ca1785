/* packet_length and ingress_global_timestamp across a header made valid by an initializer and
 * across a recirculation that preserves packet_length. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> cmd; bit<8> pass; bit<32> plen; bit<48> ts; }
header e_t { bit<32> v; }
struct hs_t { h_t h; e_t e; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        if (s.instance_type == 4) {
            h.h.plen = s.packet_length;
            h.h.ts = s.ingress_global_timestamp;
            h.h.pass = 2;
        }
        if (h.h.cmd == 3) { h.e = { v = 7 }; }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        if (h.h.cmd == 3) { h.h.plen = s.packet_length; }
        if (h.h.cmd == 4 && h.h.pass == 0) {
            h.h.pass = 1;
            h.e.setValid();
            h.e.v = 7;
            recirculate({ s.packet_length });
        }
    }
}
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); p.emit(h.e); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
