"""Front end: for-in loops (P4_16 1.2.5) -- what they lower to, and their
errors at file:line:col."""
from __future__ import annotations

import pytest
from test_load import err, prog

from softswitch.frontend import P4SyntaxError, P4TypeError, P4Unsupported, ir, load_source


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n"), 1) if needle in ln)


def loops(b: ir.Block) -> list[ir.For]:
    out = []
    for s in b.stmts:
        if isinstance(s, ir.For):
            out.append(s)
            out += loops(s.body)
        elif isinstance(s, ir.Block):
            out += loops(s)
    return out


def test_for_in_range_lowers_to_a_bounded_loop_with_a_fresh_variable():
    text = prog("apply { for (bit<8> i in 1 .. h.e.a) { if (i == 3) { continue; } m.x = m.x + i; } }")
    p = load_source(text, "t.p4")
    (f,) = loops(p.ingress.body)
    # bounds and counter set up once before the first round, the variable declared in the body
    assert [type(s).__name__ for s in f.init] == ["VarDecl"] * 4
    assert f.cond is not None and f.update
    assert isinstance(f.body.stmts[0], ir.VarDecl) and f.body.stmts[0].init is f.init[2].var


def test_for_in_variable_is_scoped_to_the_loop():
    text = prog("apply { for (bit<8> i in 1 .. 2) { } m.x = i; }")
    e = err(text)
    assert isinstance(e, P4TypeError) and "'i' is not declared" in str(e)


def test_break_and_continue_in_nested_for_in_loops_load():
    text = prog("apply { for (bit<8> i in 0 .. 3) { for (bit<8> j in {1, 2}) { if (j == i) { break; } "
                "continue; } } }")
    assert len(loops(load_source(text, "t.p4").ingress.body)) == 2


@pytest.mark.parametrize("body,cls,needle,msg", [
    ("apply { for (bool b in true .. false) { } }", P4TypeError, "for (bool",
     "a for-in range needs a bit<W> or int<W> loop variable, not bool"),
    ("apply { for (bit<8> i in 1 .. h.e.b) { } }", P4TypeError, "for (bit",
     "type mismatch: expected bit<8>, got bit<16>"),
    ("apply { for (bit<8> i in h.e) { } }", P4Unsupported, "for (bit",
     "unsupported: for-in loop over a value of type e_t (only ranges, header stacks and lists)"),
    ("apply { for (bit<8> i in {1, 16w2}) { } }", P4TypeError, "for (bit",
     "type mismatch: expected bit<8>, got bit<16>"),
    ("apply { for (bit<8> i in {}) { } }", P4Unsupported, "for (bit",
     "unsupported: for-in loop over an empty list"),
])
def test_for_in_errors_are_located(body, cls, needle, msg):
    text = prog(body)
    e = err(text)
    assert isinstance(e, cls), e
    assert str(e).startswith(f"t.p4:{line_of(text, needle)}:"), str(e)
    assert msg in str(e)


def test_for_in_over_a_stack_of_another_type_is_an_error():
    text = prog("apply { for (e_t x in h.s) { } }", "header e_t { bit<8> a; bit<16> b; }\n"
                "header f_t { bit<8> a; }\n").replace("struct h_t { e_t e; }", "struct h_t { e_t e; f_t[2] s; }")
    e = err(text)
    assert isinstance(e, P4TypeError) and "loop variable of type e_t over a stack of f_t" in str(e)


def test_for_loops_are_not_parser_statements():
    # P4_16 1.2.5's parserStatement has no for: rejected at its position
    text = prog("apply { }").replace("state start { p.extract(h.e);",
                                      "state start { p.extract(h.e); for (bit<8> i in 0 .. 1) { }")
    e = err(text)
    assert isinstance(e, P4SyntaxError)
    assert str(e).startswith(f"t.p4:{line_of(text, 'for (bit')}:")


def test_annotated_loops_load():
    # P4_16 1.2.5 allows annotations before a for (p4c's @unroll / @nounroll hints): accepted,
    # they do not change what the loop does
    text = prog("apply { @unroll for (bit<8> i in 0 .. 1) { m.x = i; } "
                "@nounroll for (bit<8> j = 0; j < 2; j = j + 1) { m.x = j; } }")
    assert len(loops(load_source(text, "t.p4").ingress.body)) == 2
