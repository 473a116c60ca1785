/* Headers written in every way but extract, for softswitch.exec.usage and the lazy header reset:
 * after a packet that extracted everything (ether type 0x9001), a packet that extracts nothing
 * reports what it reads of each header in `rep`; with fresh objects every field reads 0.
 * a, st: written only by extract (reset only while valid);  b: a field written while invalid;
 * c: setInvalid after extract;  d: register.read into a field;  e: hash result into a field;
 * f: inout argument of an action.  Packets from source MAC ...01 do the writes. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header one_t { bit<8> x; bit<8> y; }
header rep_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> s0; bit<8> s1; }

struct headers_t {
    eth_t eth; one_t a; one_t b; one_t c; one_t d; one_t e; one_t f; one_t[2] st; rep_t rep;
}
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9001: all; default: accept; }
    }
    state all {
        pkt.extract(h.a); pkt.extract(h.b); pkt.extract(h.c); pkt.extract(h.d); pkt.extract(h.e);
        pkt.extract(h.f); pkt.extract(h.st.next); pkt.extract(h.st.next);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(1) reg;
    action set_f(inout one_t hh) { hh.y = 3; }
    apply {
        sm.egress_spec = 1;
        h.c.setInvalid();
        if (h.eth.src == 1) {
            if (!h.b.isValid()) { h.b.y = 9; }
            reg.write(0, 5);
            reg.read(h.d.y, 0);
            hash(h.e.y, HashAlgorithm.identity, 8w0, { h.eth.dst[7:0] }, 16w255);
            set_f(h.f);
        }
        h.rep.setValid();
        h.rep.a = h.a.y;
        h.rep.b = h.b.y;
        h.rep.c = h.c.y;
        h.rep.d = h.d.y;
        h.rep.e = h.e.y;
        h.rep.f = h.f.y;
        h.rep.s0 = h.st[0].y;
        h.rep.s1 = h.st[1].y;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.rep); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
