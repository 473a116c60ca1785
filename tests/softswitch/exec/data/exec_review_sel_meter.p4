// From a review of the 2026-12-05 changes (tests: test_exec_review_fixes.py).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> o; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    direct_meter<bit<32>>(MeterType.bytes) dm;
    action set(bit<8> v) { h.h.o = v; dm.read(m.x); }
    action_selector(HashAlgorithm.crc16, 32w16, 32w14) sel;
    table t {
        key = { h.h.k : exact; h.h.o : selector; }
        actions = { set; NoAction; }
        implementation = sel;
        meters = dm;
    }
    apply { s.egress_spec = 1; t.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
