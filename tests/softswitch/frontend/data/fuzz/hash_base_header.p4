#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; int<8> s; bit<8> c; }
header g_t { bit<16> x; }
header_union u_t { h_t h; g_t g; }
struct H { h_t h; h_t[3] st; u_t u; }
enum bit<8> E { A = 1, B = 2 }
enum P { X, Y }
struct M { bit<8> x; int<8> y; bool f; bit<64> w; bit<128> z; E e; P p; bit<1> one; }

parser Pr(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h);  transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    
    apply { sm.egress_spec = 1; hash(m.x, HashAlgorithm.crc16, h.h, {h.h.a}, 8w4); }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.h); } }
V1Switch(Pr(), VC(), I(), Eg(), CC(), D()) main;
