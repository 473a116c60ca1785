/* A parser whose states are reached from several others (copied into each caller by softswitch's
 * code generator, or given a branch each when the copies are too many): selects on fields, on a
 * lookahead and on two keys, so every copy evaluates temporaries of its own.  Ingress sends the
 * packet back out of port 1 with the parser error in the first byte of the trailer header. */
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; bit<8> len; }
header b_t { bit<16> v; }
header c_t { bit<8> x; bit<8> y; }
header r_t { bit<8> err; bit<8> path; }
struct headers_t { a_t a; b_t b1; b_t b2; c_t c; r_t r; }
struct meta_t { bit<8> path; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.a);
        transition select(h.a.kind, h.a.len) {
            (1, _): one;
            (2, 0 &&& 0xF0): two;
            (3, 4 .. 8): shared_c;
            default: accept;
        }
    }
    state one {
        m.path = m.path + 1;
        pkt.extract(h.b1);
        transition select(pkt.lookahead<bit<8>>()) { 0xAA: shared_b; 0xBB: shared_c; default: accept; }
    }
    state two {
        m.path = m.path + 2;
        transition select(h.a.len[3:0] ++ 4w0) { 0x10: shared_b; 0x20: shared_c; default: reject; }
    }
    state shared_b {
        m.path = m.path + 16;
        pkt.extract(h.b2);
        transition select(h.b2.v[15:8], h.b2.v[7:0]) { (0xAA, 1): shared_c; (_, 2): accept; default: reject; }
    }
    state shared_c {
        m.path = m.path + 64;
        pkt.extract(h.c);
        verify(h.c.x != 0, error.ParserInvalidArgument);
        transition accept;
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.r.setValid();
        h.r.err = sm.parser_error == error.NoError ? 8w0 : (sm.parser_error == error.PacketTooShort ? 8w1 :
                  (sm.parser_error == error.ParserInvalidArgument ? 8w2 : 8w3));
        h.r.path = m.path;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.r); pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
