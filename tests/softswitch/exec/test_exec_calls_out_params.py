"""Calls a differential fuzzer of statement semantics (copy-in/copy-out against a reference
interpreter, 2026-12-05) found wrong:
- a function calling a value-returning function (``return g(x);``, ``y = g(x);``, also inside an
  action declared outside any control) dropped every packet as an internal error: the callee's
  hidden result variable was read, unset, as the value of its out argument;
- an ``out`` parameter of header type (a header, a stack, in a function, an action, or a
  sub-control bound in place) started as the caller's header instead of an invalid one (P4_16
  "Calling conventions": out parameters are initialised, headers invalid), so a callee that did
  not write it left the caller's header valid with its old contents."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_calls_out_params.p4")


@pytest.mark.parametrize("path", ["api", "loop"])
@pytest.mark.parametrize("a", [7, 0xFF])
def test_calls_and_out_headers(rig, path, a):
    out = rig.output(bytes([a])) if path == "api" else rig.loop_output(bytes([a]))
    a1 = (a + 1) & 0xFF
    # i, then r: r1 = f(a), r2 = top(a), and every out header invalid; o, s and p are not emitted
    assert out == bytes([a, a1, a1, 0, 0, 0, 0, 0]), out.hex()
