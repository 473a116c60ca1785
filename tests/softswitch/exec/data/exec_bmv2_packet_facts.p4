// What bmv2 does with a packet's length and checksums that a program can observe (docs/p4_subset.md,
// "Packet length, truncation and checksums"): selector h.a.t
//   1: multicast to group 5 after truncate(3)   (copies are new packets: not truncated)
//   2: truncate(3); truncate(5)                  (the smallest length wins)
//   3: truncate(0)                               (no bytes left)
//   4: h.o made valid, h.x made invalid in ingress: egress's packet_length counts both
//   5: h.o made valid only
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> t; bit<8> v; }
header o_t { bit<32> plen; bit<16> espec; bit<16> itype; }
header x_t { bit<16> y; }
struct hs_t { a_t a; o_t o; x_t x; }
struct m_t { bit<8> z; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.a);
        transition select(h.a.t) { 4: px; default: accept; }
    }
    state px { p.extract(h.x); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        if (h.a.t == 1) { s.mcast_grp = 5; truncate(3); }
        else if (h.a.t == 2) { truncate(3); truncate(5); }
        else if (h.a.t == 3) { truncate(0); }
        else if (h.a.t == 4) { h.o.setValid(); h.x.setInvalid(); h.o.setValid(); }
        else if (h.a.t == 5) { h.o.setValid(); }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        if (h.o.isValid()) {
            h.o.plen = s.packet_length;
            h.o.espec = (bit<16>)s.egress_spec;
            h.o.itype = (bit<16>)s.instance_type;
        }
    }
}
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); p.emit(h.o); p.emit(h.x); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
