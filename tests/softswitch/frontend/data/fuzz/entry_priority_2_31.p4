#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; int<8> s; bit<8> c; }
header v_t { bit<8> len; varbit<32> data; }
struct H { h_t h; h_t[3] st; v_t v; }
enum bit<8> E { A = 1, B = 2 }
enum P { X, Y }
struct vs_t { bit<8> a; bit<8> b; }
struct M { bit<8> x; int<8> y; bool f; E e; P p; bit<128> z; error er; }
parser Pr(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    
    state start { pkt.extract(h.h); transition accept; }
    state s1 { m.x = 1; transition accept; }
    state s2 { m.x = 2; transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action a0() { m.x = 7; }
    action a1(bit<8> v) { m.x = v; }
    action a2(int<8> v, bool b) { m.y = v; m.f = b; }
    table t {
        key = { h.h.a : ternary; }
        actions = { a0; a1; a2; }
        default_action = a0();
        entries = { priority = 2147483648: 1 &&& 1 : a1(1); }
    }
    apply { sm.egress_spec = 1; t.apply();  }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.h); } }
V1Switch(Pr(), VC(), I(), Eg(), CC(), D()) main;
