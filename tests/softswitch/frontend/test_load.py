"""Front end: the subset programs load, and bad input gives located, named errors."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from softswitch.frontend import (
    P4Error,
    P4SyntaxError,
    P4TypeError,
    P4Unsupported,
    PreprocessorError,
    ir,
    load_program,
    load_source,
)

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
CONF = str(Path(__file__).resolve().parents[1] / "data" / "conformance")

HEAD = "#include <core.p4>\n#include <v1model.p4>\n"
TAIL = """
struct h_t { e_t e; }
struct m_t { bit<8> x; }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.e); transition accept; } }
control VC(inout h_t h, inout m_t m) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { p.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def prog(ingress_body: str, decls: str = "header e_t { bit<8> a; bit<16> b; }\n") -> str:
    return HEAD + decls + TAIL.replace("control E(", "control I(inout h_t h, inout m_t m, inout "
                                      "standard_metadata_t sm) {\n" + ingress_body + "\n}\ncontrol E(")


def err(text: str) -> P4Error:
    with pytest.raises(P4Error) as ei:
        load_source(text, "t.p4")
    return ei.value


def test_subset_program_loads() -> None:
    p = load_program(os.path.join(DATA, "subset_all.p4"))
    ig = p.ingress
    assert list(ig.tables) == ["Ig.t_exact", "Ig.t_lpm", "Ig.t_tern", "Ig.t_sel", "Ig.t_prof"]
    assert [k.match_kind for k in ig.tables["Ig.t_tern"].keys] == ["ternary", "range", "optional"]
    lpm = ig.tables["Ig.t_lpm"].const_entries
    assert lpm is not None and lpm[0].keys[0].kind == "lpm" and lpm[0].keys[0].prefix_len == 32
    tern = ig.tables["Ig.t_tern"].const_entries
    assert tern[0].keys[1].kind == "range" and tern[0].keys[1].hi == 100
    assert tern[0].priority > tern[1].priority
    assert ig.tables["Ig.t_sel"].implementation == "Ig.sel"
    assert ig.externs["Ig.sel"].algorithm == "crc32" and ig.externs["Ig.sel"].width == 16
    assert ig.externs["Ig.dm"].tables == ["Ig.t_tern"]
    assert p.errors[:3] == ["NoError", "PacketTooShort", "NoMatch"] and "BadVersion" in p.errors
    assert p.parser.states["segs"].transition.keys[0].type == ir.BoolT()
    assert p.digests[0].name == "digest_t"
    meta = p.parser.params[2].type
    assert p.field_list(meta, 1) == [("nsegs",), ("port",)]
    assert p.field_list(meta, 2) == [("port",)]
    # emit of a struct is expanded per header, stacks per element
    assert len(p.deparser.body.stmts) == 3 + 4 + 1
    names = {type(s).__name__ for s in ig.body.stmts}
    assert {"SwitchActionRun", "SwitchValue", "If", "VarDecl", "ExprStmt", "Assign"} <= names


def test_constants_folded_and_typed() -> None:
    p = load_source(prog("apply { m.x = 2 + 3 * 4; h.e.b = 8w255 ++ 8w1; }"), "t.p4")
    a, b = p.ingress.body.stmts
    assert isinstance(a.rhs, ir.Const) and a.rhs.value == 14 and a.rhs.type == ir.BitT(8)
    assert isinstance(b.rhs, ir.Const) and b.rhs.type == ir.BitT(16) and b.rhs.value == 0xFF01


def test_srv6_fabric_inlines_sub_controls() -> None:
    p = load_program(os.path.join(DATA, "srv6_fabric.p4"))
    ig = p.ingress
    assert list(ig.tables) == ["FabricIngress.srv6.my_sid", "FabricIngress.routing.route_usid",
                               "FabricIngress.routing.my_station"]
    st = ig.tables["FabricIngress.routing.my_station"]
    assert st.default_action.const and st.entries_const and len(st.const_entries) == 2
    assert ig.tables["FabricIngress.srv6.my_sid"].keys[0].name == "ipv6_dst"
    assert "FabricIngress.routing.set_port" in p.actions
    assert p.actions["FabricIngress.routing.set_port"].owner == "FabricIngress"


def test_conformance_programs_load() -> None:
    for f in ("p4info_features.p4", "bench4.p4"):
        p = load_program(os.path.join(CONF, f))
        assert p.ingress.tables


def test_large_program_loads_fast() -> None:
    with open(os.path.join(DATA, "srv6_fabric.p4")) as f:
        src = f.read()
    body = "\n".join(f"    action a{i}(bit<9> p) {{ sm.egress_spec = p; m.x = m.x + {i % 200}; }}\n"
                     f"    table t{i} {{ key = {{ h.e.a: exact; h.e.b: ternary; }} actions = {{ a{i}; }} }}"
                     for i in range(150))
    apply = " ".join(f"t{i}.apply();" for i in range(150))
    text = prog(body + f"\n    apply {{ {apply} }}")
    assert text.count("\n") + src.count("\n") > 400
    load_source(text, "big.p4")  # warm the grammar
    t0 = time.perf_counter()
    p = load_source(text, "big.p4")
    dt = time.perf_counter() - t0
    assert len(p.ingress.tables) == 150
    print(f"loaded {text.count(chr(10))} lines in {dt:.3f}s")


@pytest.mark.parametrize("text,cls,where,msg", [
    (prog("apply { m.x = ; }"), P4SyntaxError, "t.p4:{line}:", "syntax error"),
    (prog("apply { m.x = h.e.b; }"), P4TypeError, "t.p4:{line}:", "type mismatch: expected bit<8>, got bit<16>"),
    (prog("apply { m.y = 1; }"), P4TypeError, "t.p4:{line}:", "m_t has no field 'y'"),
    (prog("apply { zz = 1; }"), P4TypeError, "t.p4:{line}:", "'zz' is not declared"),
    (prog("apply { m.x = h.e.a + h.e.b; }"), P4TypeError, "t.p4:{line}:",
     "cannot apply '+' to bit<8> and bit<16>"),
    (prog("apply { }", "struct e_t { varbit<8> a; }\n"), P4Unsupported, "t.p4:3:",
     "unsupported: varbit outside a header"),
    (prog("apply { }", "header e_t { bit<8> a; }\nheader_union u_t { e_t a; }\nstruct s_t { u_t[2] us; }\n"
                       "struct z_t { s_t[2] zs; }\n"),
     P4TypeError, "t.p4:6:", "header stack element must be a header"),
])
def test_errors_are_located(text: str, cls: type, where: str, msg: str) -> None:
    e = err(text)
    assert isinstance(e, cls), e
    line = next(i for i, ln in enumerate(text.split("\n"), 1) if "apply { " in ln and "control I" not in ln
                and ("m." in ln or "zz" in ln)) if "{line}" in where else None
    assert str(e).startswith(where.format(line=line)), str(e)
    assert msg in str(e)
    assert ": error: " in str(e)


def test_error_column_exact() -> None:
    text = prog("apply {\n  m.x = h.e.b;\n}")
    e = err(text)
    line = text.split("\n").index("  m.x = h.e.b;") + 1
    assert str(e).startswith(f"t.p4:{line}:9: error: type mismatch")


def test_unsupported_value_set() -> None:
    """Value sets of bit<W> and of structs of bit<W> run (tests/softswitch/exec/test_exec_value_set.py);
    other element types are rejected by name at the declaration."""
    text = prog("apply { }", "header e_t { bit<8> a; bit<16> b; }\n").replace(
        "    state start { p.extract(h.e);", "    value_set<bool>(4) vs;\n    state start { p.extract(h.e);")
    e = err(text)
    assert isinstance(e, P4Unsupported)
    assert str(e) == ("t.p4:8:5: error: unsupported: value_set of type bool (only bit<W> or a struct of bit<W> "
                      "fields) at t.p4:8:5")


def test_include_not_found_points_at_directive(tmp_path) -> None:
    f = tmp_path / "main.p4"
    f.write_text('#include <core.p4>\n\n  #include "missing.p4"\n')
    with pytest.raises(PreprocessorError) as ei:
        load_program(str(f))
    assert str(ei.value) == f"{f}:3:3: error: cannot find include file 'missing.p4'"


def test_errors_in_included_file_point_at_it(tmp_path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "hdr.p4").write_text("// header file\nstruct e_t { bit<8> a; varbit<16> v; }\n")
    f = tmp_path / "main.p4"
    f.write_text('#include <core.p4>\n#include "hdr.p4"\n')
    with pytest.raises(P4Unsupported) as ei:
        load_program(str(f), include_dirs=[str(tmp_path / "inc")])
    assert str(ei.value).startswith(f"{tmp_path / 'inc' / 'hdr.p4'}:2:24: error: unsupported: varbit outside")


def test_control_named_like_v1model_type() -> None:
    e = err(prog("apply { }").replace("control I(", "control Ingress(").replace("I(), E()", "Ingress(), E()"))
    assert isinstance(e, P4TypeError) and "v1model type name" in str(e)


def test_shared_selector_with_different_inputs() -> None:
    body = """action_selector(HashAlgorithm.crc16, 64, 10) s;
    action a(bit<9> p) { sm.egress_spec = p; }
    table t1 { key = { h.e.a: exact; h.e.b: selector; } actions = { a; } implementation = s; }
    table t2 { key = { h.e.b: exact; h.e.a: selector; } actions = { a; } implementation = s; }
    apply { t1.apply(); t2.apply(); }"""
    e = err(prog(body))
    assert "shared by tables with different selector inputs" in str(e)


def test_default_action_with_profile_warns() -> None:
    body = """action_profile(64) ap;
    action a(bit<9> p) { sm.egress_spec = p; }
    table t { key = { h.e.a: exact; } actions = { a; NoAction; } implementation = ap;
              default_action = NoAction(); }
    apply { t.apply(); }"""
    p = load_source(prog(body), "t.p4")
    assert any("warning" in w and "default_action" in w for w in p.warnings)


def test_unused_constant_warns_like_p4c() -> None:
    """A top-level constant nothing refers to gets p4c's `[--Wwarn=unused]` warning; a used one (in an
    expression, or in another constant) does not, and neither do the built-in includes' own."""
    body = """apply { sm.egress_spec = (bit<9>) USED; }"""
    src = ("const bit<8> USED = 1;\nconst bit<8> VIA = 2;\nconst bit<8> TWICE = VIA + 1;\n"
           "const bit<8> UNUSED_ONE = 3;\n" + prog(body))
    p = load_source(src, "t.p4")
    unused = [w for w in p.warnings if "[--Wwarn=unused]" in w]
    assert {w.split("'")[1] for w in unused} == {"UNUSED_ONE", "TWICE"}, p.warnings
    assert all(w.startswith("t.p4:") for w in unused), unused


def test_mrc_switch_compiles_without_warnings() -> None:
    """p4src/mrc_switch.p4 has no top-level `const` (its constants are typed macros: p4c 1.2.5.x
    warned about every const) and no default_action on its selector table."""
    from softswitch.frontend.load import load_program

    repo = Path(__file__).resolve().parents[3]
    assert load_program(str(repo / "p4src" / "mrc_switch.p4")).warnings == []
