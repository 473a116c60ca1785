"""Clone, resubmit and recirculate calls where p4c's bmv2 back end refuses them
(``simpleSwitch.cpp``: ``ExternConverter_clone`` / ``_clone_preserving_field_list`` "not invoked in
ingress/egress", ``_resubmit_preserving_field_list`` only in ingress,
``_recirculate_preserving_field_list`` only in egress, a constant clone type and field-list index).
Until 2026-12-06 softswitch loaded each: ``clone(CloneType.E2E, s)`` in ingress cloned the ingress
packet, a resubmit in egress was dropped silently, a recirculate in ingress ran after egress."""
from __future__ import annotations

import pytest

from softswitch.frontend import load_program
from softswitch.frontend.errors import P4TypeError

SRC = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> v; }
struct M { @field_list(1) bit<8> x; }
struct H { h_t h; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action unused_e2e() { clone(CloneType.E2E, 5); }
    action a() { ING_ACT }
    table t { key = { h.h.op : exact; } actions = { a; NoAction; } }
    apply { sm.egress_spec = 1; t.apply(); ING }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { EG }
}
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _load(tmp_path, ing="", eg="", ing_act=""):
    p = tmp_path / "p.p4"
    p.write_text(SRC.replace("ING_ACT", ing_act).replace("ING", ing).replace("EG", eg))
    return load_program(str(p), {}, [])


@pytest.mark.parametrize("ing, eg, ing_act, msg", [
    ("clone(CloneType.E2E, 5);", "", "", r"clone\(CloneType.E2E, ...\) called in ingress"),
    ("", "clone(CloneType.I2E, 5);", "", r"clone\(CloneType.I2E, ...\) called in egress"),
    ("", "", "clone_preserving_field_list(CloneType.E2E, 5, 1);", "called in ingress"),
    ("", "clone3(CloneType.I2E, 5, {m.x});", "", "called in egress"),
    ("recirculate_preserving_field_list(1);", "", "", "recirculate_preserving_field_list called in ingress"),
    ("", "resubmit_preserving_field_list(1);", "", "resubmit_preserving_field_list called in egress"),
    ("", "recirculate(m);", "resubmit(m);", None),  # the deprecated forms where they belong
    ("", "", "recirculate(m);", "called in ingress"),
    ("clone_preserving_field_list(CloneType.I2E, 5, h.h.v);", "", "", "field list index .* constant"),
    ("resubmit_preserving_field_list(h.h.v);", "", "", "field list index .* constant"),
    ("", "recirculate_preserving_field_list(h.h.v);", "", "field list index .* constant"),
    ("clone(CloneType.I2E, 5); resubmit_preserving_field_list(9);",
     "clone(CloneType.E2E, 5); recirculate_preserving_field_list(1);", "", None),
])
def test_where_p4c_allows_them(tmp_path, ing, eg, ing_act, msg):
    if msg is None:
        _load(tmp_path, ing, eg, ing_act)  # an unused action with E2E in ingress is fine (p4c drops it)
        return
    with pytest.raises(P4TypeError, match=msg):
        _load(tmp_path, ing, eg, ing_act)


UNAPPLIED = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> v; }
struct M { }
struct H { h_t h; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout H h, inout M m, inout standard_metadata_t sm) {
    action a_clone() { clone(CloneType.I2E, 5); }
    action a_resubmit() { resubmit_preserving_field_list(0); }
    table t { key = { h.h.op : exact; } actions = { a_clone; a_resubmit; NoAction; } }
    table t2 { key = { h.h.v : exact; } actions = { NoAction; } }
    apply { APPLY }
}
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize("apply, msg", [
    ("", None),  # p4c's front end removes t (nothing applies it), then its actions: bmv2 never sees them
    ("t2.apply();", None),
    ("t.apply();", r"clone\(CloneType.I2E, ...\) called in egress"),
    ("if (t.apply().hit) { t2.apply(); }", "called in egress"),
    ("switch (t.apply().action_run) { default: { } }", "called in egress"),
])
def test_a_table_nothing_applies_is_not_checked(tmp_path, apply, msg):
    p = tmp_path / "p.p4"
    p.write_text(UNAPPLIED.replace("APPLY", apply))
    if msg is None:
        load_program(str(p), {}, [])
        return
    with pytest.raises(P4TypeError, match=msg):
        load_program(str(p), {}, [])
