#include <core.p4>
#include <v1model.p4>
// A header stack of header_unions with next, last, lastIndex, push_front and pop_front: the
// parser loops, extracting into the next union's member a (tag 0xa?) or b (tag 0xb?) until a
// tag 0x00; a fourth union is StackOutOfBounds.
header t_t { bit<8> tag; }
header a_t { bit<8> tag; bit<8> v; }
header b_t { bit<8> tag; bit<16> w; }
header_union ab_t { a_t a; b_t b; }
header r_t { bit<8> last_tag; bit<8> last_index; bit<8> err; }
struct H { r_t r; ab_t[3] us; t_t end; }
struct M { bit<8> last_tag; bit<8> last_index; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        transition select(pk.lookahead<bit<8>>()) {
            0x00: stop;
            0xa0 &&& 0xf0: one_a;
            0xb0 &&& 0xf0: one_b;
        }
    }
    state one_a { pk.extract(h.us.next.a); transition start; }
    state one_b { pk.extract(h.us.next.b); transition check; }
    state check {
        // last: the union just filled; its b member is the valid one
        transition select(h.us.last.b.tag) { 0xbf: stop; default: start; }
    }
    state stop {
        pk.extract(h.end);
        // last and lastIndex are parser-only forms (p4c): read here, written out in ingress
        m.last_index = (bit<8>)h.us.lastIndex;
        m.last_tag = h.us.last.a.isValid() ? h.us.last.a.tag : (h.us.last.b.isValid() ? h.us.last.b.tag : 8w0);
        transition accept;
    }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.r.setValid();
        h.r.err = (bit<8>)(sm.parser_error == error.StackOutOfBounds ? 1w1 : 1w0);
        if (h.end.isValid()) {
            h.r.last_index = m.last_index;
            h.r.last_tag = m.last_tag;
            if (h.end.tag == 0 && h.us[0].b.isValid()) { h.us.pop_front(1); }
            else if (h.end.tag == 0) { h.us.push_front(1); h.us[0].a.setValid(); h.us[0].a.tag = 0xee; }
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.r); pk.emit(h.us); pk.emit(h.end); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
