#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> f; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    @name(".output") action output(bit<9> port) { sm.egress_spec = port; }
    @name(".output") table output_0 {
        actions = { output(); }
        default_action = output(9w1);
    }
    apply { output_0.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
