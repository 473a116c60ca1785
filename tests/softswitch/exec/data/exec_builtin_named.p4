/* Named arguments of built-in functions and methods (v1model.p4/core.p4 parameter names),
   written in an order other than the declared one. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<16> x; bit<8> r; bit<16> ck; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }
parser P(packet_in pkt, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { pkt.extract(hdr = h.h); transition accept; }
}
control V(inout hs_t h, inout m_t m) {
    apply {
        verify_checksum(data = {h.h.a, h.h.b}, algo = HashAlgorithm.csum16, checksum = h.h.ck,
                        condition = h.h.op == 7);
    }
}
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    register<bit<8>>(size = 4) rg;
    counter(type = CounterType.packets, size = 4) c;
    apply {
        s.egress_spec = 1;
        hash(max = 16w1000, data = {h.h.a, h.h.b}, base = 16w3, algo = HashAlgorithm.identity,
             result = h.h.x);
        c.count(index = 3);
        if (h.h.op == 1) {
            rg.write(value = h.h.b, index = 2);
            rg.read(index = 2, result = h.h.r);
        } else if (h.h.op == 2) {
            mark_to_drop(standard_metadata = s);
        } else if (h.h.op == 3) {
            clone_preserving_field_list(session = 5, index = 1, type = CloneType.I2E);
        } else if (h.h.op == 4) {
            random(lo = 8w4, hi = 8w4, result = h.h.r);
        } else if (h.h.op == 6) {
            truncate(length = 32w3);
        } else if (h.h.op == 7) {
            h.h.r = (bit<8>) s.checksum_error;
        }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) {
    apply {
        update_checksum(checksum = h.h.ck, algo = HashAlgorithm.csum16, condition = h.h.op == 5,
                        data = {h.h.a, h.h.b});
    }
}
control D(packet_out p, in hs_t h) { apply { p.emit(hdr = h.h); } }
V1Switch(p = P(), vr = V(), ig = I(), eg = E(), ck = C(), dep = D()) main;
