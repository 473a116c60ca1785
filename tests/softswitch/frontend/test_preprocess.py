"""Preprocessor: macros, conditionals, -D, and the origin map."""
from __future__ import annotations

import pytest

from softswitch.frontend.errors import PreprocessorError
from softswitch.frontend.preprocess import preprocess_source


def test_macros_and_conditionals() -> None:
    src = """#define A 3
#define F(x, y) ((x) * (y))
#if A > 2 && defined(A) && !defined(B)
int v = F(A, 2);
#elif 1
wrong
#else
wrong2
#endif
#ifdef C
c_on
#endif
#undef A
#ifndef A
a_gone
#endif
"""
    pp = preprocess_source(src, "x.p4", {"C": "1"})
    lines = [ln for ln in pp.text.split("\n") if ln.strip()]
    assert lines == ["int v = ((3) * (2));", "c_on", "a_gone"]
    # origin of 'a_gone' is line 15 of x.p4
    out_line = pp.text.split("\n").index("a_gone") + 1
    assert str(pp.origins.loc(out_line, 1)) == "x.p4:15:1"


def test_columns_after_expansion_map_back() -> None:
    pp = preprocess_source("#define LONGNAME 1\nx = LONGNAME + bad;\n", "y.p4")
    line = pp.text.split("\n")[1]
    col = line.index("bad") + 1
    assert str(pp.origins.loc(2, col)) == "y.p4:2:16"


def test_unbalanced_if() -> None:
    with pytest.raises(PreprocessorError) as ei:
        preprocess_source("#if 1\nfoo\n", "z.p4")
    assert str(ei.value) == "z.p4:1:1: error: #if without #endif"


def test_error_directive() -> None:
    with pytest.raises(PreprocessorError) as ei:
        preprocess_source("\n#error stop here\n", "z.p4")
    assert str(ei.value).startswith("z.p4:2:1: error: #error stop here")
