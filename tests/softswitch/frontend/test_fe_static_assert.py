"""Front end: core.p4's static_assert (P4_16 1.2.5), checked at load time: true is the constant
true, false or not constant an error at the call's file:line:col."""
from __future__ import annotations

import pytest
from test_load import err, prog

from softswitch.frontend import P4TypeError, ir, load_source


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n"), 1) if needle in ln)


def test_static_assert_true_as_statement_and_constant():
    text = prog("apply { static_assert(true); static_assert(8 == 8, \"eight\"); if (ok) { m.x = 1; } }",
                "header e_t { bit<8> a; bit<16> b; }\nconst bool ok = static_assert(1 < 2);\n")
    p = load_source(text, "t.p4")
    # the statements leave nothing behind; the constant folds to true (the if is kept as written)
    assert not any(isinstance(s, ir.ExprStmt) for s in p.ingress.body.stmts)


def test_static_assert_false_reports_its_message_and_position():
    text = prog("apply {\n    static_assert(h.e.minSizeInBits() == 16, \"e_t is 24 bits\");\n}")
    e = err(text)
    assert isinstance(e, P4TypeError)
    assert str(e) == f"t.p4:{line_of(text, 'static_assert')}:5: error: static_assert failed: e_t is 24 bits"


def test_static_assert_false_without_message():
    text = prog("apply { }", "header e_t { bit<8> a; bit<16> b; }\nconst bool v = static_assert(false);\n")
    e = err(text)
    assert str(e) == f"t.p4:{line_of(text, 'const bool v')}:16: error: static_assert failed"


@pytest.mark.parametrize("call,msg", [
    ("static_assert(h.e.a == 1)", "static_assert: the condition is not a compile-time constant"),
    ("static_assert(true, \"a\", \"b\")", "static_assert takes 1 or 2 arguments, 3 given"),
    ("static_assert(1)", "type mismatch"),
])
def test_static_assert_bad_calls(call, msg):
    text = prog(f"apply {{ {call}; }}")
    e = err(text)
    assert str(e).startswith(f"t.p4:{line_of(text, 'static_assert')}:"), str(e)
    assert msg in str(e)
