// P4Info order and annotations as p4c gives them (tests/softswitch/p4info/test_p4info_order.py).
// p4c writes P4Info after its front end, which inlines every control instance (Inline) and then
// copies the top-level actions a control uses to the front of its locals (LocalizeAllActions):
// so everything of I (its sub-controls' too) comes before E's; a declared instance's tables,
// externs and actions take its place among I's locals, a directly applied control's come last
// (InstantiateDirectCalls appends the instance it makes).  A direct counter is listed with its
// table.  @hidden on a key or an action parameter is kept in P4Info.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct H { h_t h; }
struct M { bit<8> x; }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
action top_only_in_sub() { }
control Sub(inout H h, inout M m) {
    direct_counter(CounterType.packets) sdc;
    counter(32w4, CounterType.packets) sc;
    action sa() { sdc.count(); }
    table st { key = { m.x : exact; } actions = { sa; top_only_in_sub; } counters = sdc; }
    apply { st.apply(); sc.count(32w0); }
}
control Direct(inout H h) {
    action da(@hidden bit<8> v) { h.h.x = v; }
    table dt { key = { h.h.x : exact @hidden; } actions = { da; } }
    apply { dt.apply(); }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets) dc2;
    direct_counter(CounterType.packets) dc1;
    counter(32w4, CounterType.packets) ic;
    Sub() sub;
    action a1() { dc1.count(); }
    action a2() { dc2.count(); }
    table t1 { key = { h.h.x : exact; } actions = { a1; } counters = dc1; }
    table t2 { key = { h.h.x : exact; } actions = { a2; } counters = dc2; }
    apply { sub.apply(h, m); t1.apply(); Direct.apply(h); t2.apply(); ic.count(32w0); }
}
control E(inout H h, inout M m, inout standard_metadata_t s) {
    counter(32w4, CounterType.packets) ec;
    action ea() { }
    table et { key = { h.h.x : exact; } actions = { ea; } }
    apply { et.apply(); ec.count(32w0); }
}
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
