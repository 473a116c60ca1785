"""Property tests: generated arithmetic equals the P4 definition for random widths and values."""
from __future__ import annotations

import pytest
from exec_irb import STD, B, L, assign, binop, block, c, mem, program, state, var
from hypothesis import given, settings
from hypothesis import strategies as st
from p4.config.v1 import p4info_pb2

from softswitch.exec import build_pipeline
from softswitch.frontend import ir
from softswitch.runtime import SwitchState

OPS = ["+", "-", "*", "&", "|", "^", "<<", ">>", "|+|", "|-|"]
WIDTHS = [1, 5, 8, 13, 32, 64, 128]


def _signed(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def reference(op, a, b, w, signed):
    """The P4_16 spec's definition, written independently of the code generator."""
    m = (1 << w) - 1
    if op in ("<<", ">>"):
        amount = b & m  # the shift amount is read as unsigned
        if op == "<<":
            r = 0 if amount >= w else a << amount
        else:
            r = a >> min(amount, w)  # arithmetic for int<W> (Python ints are signed)
        return _signed(r, w) if signed else r & m
    if op == "|+|" or op == "|-|":
        r = a + b if op == "|+|" else a - b
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, m)
        return max(lo, min(hi, r))
    r = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
    return _signed(r, w) if signed else r & m


_cache: dict = {}


def _pipeline(op, w, signed):
    key = (op, w, signed)
    if key in _cache:
        return _cache[key]
    T = ir.IntT(w) if signed else B(w)
    pad = (-2 * w) % 8
    fields = [ir.Field("a", T), ir.Field("b", T if op not in ("<<", ">>") else B(w))]
    if pad:
        fields.append(ir.Field("pad", B(pad)))
    hdr_t = ir.HeaderT("in_t", tuple(fields))
    hdr = ir.StructT("headers_t", (ir.Field("x", hdr_t),))
    meta = ir.StructT("meta_t", (ir.Field("r", T),))
    x = mem(var("h", hdr), "x")
    body = block(assign(mem(var("m", meta), "r"), binop(op, mem(x, "a"), mem(x, "b"), T)),
                 assign(mem(var("sm", STD), "egress_spec"), c(1, B(9))))
    prog = program(hdr, meta, {"start": state("start", [ir.Extract(L, x)])}, ingress_body=body)
    pl = build_pipeline(prog, SwitchState(p4info_pb2.P4Info()), None)
    _cache[key] = (pl, pad)
    return _cache[key]


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("op", OPS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_binary_ops_match_the_spec(op, signed, data):
    w = data.draw(st.sampled_from(WIDTHS if not signed else [w for w in WIDTHS if w > 1]))
    a = data.draw(st.integers(0, (1 << w) - 1))
    b = data.draw(st.integers(0, (1 << w) - 1))
    pl, pad = _pipeline(op, w, signed)
    raw = (((a << w) | b) << pad).to_bytes((2 * w + pad) // 8, "big")
    got = pl.ingress(raw, 0, 0).to_tm[0].meta.M.f_r
    sa = _signed(a, w) if signed else a
    sb = _signed(b, w) if signed and op not in ("<<", ">>") else b
    assert got == reference(op, sa, sb, w, signed)
