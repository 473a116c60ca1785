/* hash() with a result, base or max past 64 bits: bmv2 computes h % max + base in 64 bits. */
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<64> y; bit<72> base; }
header out_t { bit<128> wrap; bit<32> big_base; bit<64> big_max; bit<128> big_base_rt; }
struct headers_t { a_t a; out_t o; }
struct meta_t { }
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t s) {
    state start { pk.extract(h.a); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        h.o.setValid();
        hash(h.o.wrap, HashAlgorithm.crc32, 64w0xffffffffffffffff, { h.a.x }, 32w0xffffffff);
        hash(h.o.big_base, HashAlgorithm.crc16, 72w0x100000000000000005, { h.a.x }, 32w0x10000);
        hash(h.o.big_max, HashAlgorithm.identity, 64w0, { h.a.y }, 65w0x10000000000000000);
        hash(h.o.big_base_rt, HashAlgorithm.crc16, h.a.base, { h.a.x }, 32w0x10000);
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t s) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.a); pk.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
