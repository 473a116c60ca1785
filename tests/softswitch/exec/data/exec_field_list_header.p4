/* A header in user metadata preserved into an ingress clone by @field_list: by value, so the
 * clone's egress writing it leaves the original's alone. */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { eth_t eth; }
struct meta_t { @field_list(1) h_t mh; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.mh.setValid();
        m.mh.a = hdr.eth.src[7:0];
        if (hdr.eth.src[7:0] == 1) { clone_preserving_field_list(CloneType.I2E, 5, 1); }
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) { m.mh.a = 9; }
        hdr.eth.dst[7:0] = m.mh.a;
    }
}
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
