#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action fwd(bit<9> port, bit<48> src) { sm.egress_spec = port; h.eth.src = src; }
    action drop() { mark_to_drop(sm); }
    table t_exact { key = { h.eth.etype: exact; } actions = { fwd; drop; } default_action = drop(); }
    table t_tern { key = { h.eth.dst: ternary; h.eth.isValid(): exact; } actions = { fwd; drop; NoAction; } default_action = NoAction(); }
    table t_lpm { key = { h.eth.src: lpm; } actions = { fwd; NoAction; } default_action = NoAction(); }
    apply {
        if (t_tern.apply().hit) { return; }
        if (t_lpm.apply().hit) { return; }
        t_exact.apply();
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
