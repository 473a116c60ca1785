"""Expression and parser semantics of the generated code, on hand-built IR (no front end)."""
from __future__ import annotations

import pytest
from exec_irb import BOOL, ETH, B, L, assign, binop, block, c, mem, program, state, var
from p4.config.v1 import p4info_pb2

from softswitch.exec import build_pipeline
from softswitch.frontend import ir
from softswitch.runtime import SwitchState

I = ir.IntT
IN = ir.HeaderT("in_t", (ir.Field("a", B(8)), ir.Field("b", B(8)), ir.Field("s", I(8)),
                         ir.Field("t", I(8)), ir.Field("w", B(16))))


def _run(result_t, expr_fn, data: bytes, extra_stmts=()):
    hdr = ir.StructT("headers_t", (ir.Field("x", IN),))
    meta = ir.StructT("meta_t", (ir.Field("r", result_t),))
    h = var("h", hdr)
    m = var("m", meta)
    x = mem(h, "x")
    body = block(*extra_stmts, assign(mem(m, "r"), expr_fn(x)), assign(mem(var("sm", _std()), "egress_spec"),
                                                                  c(1, B(9))))
    prog = program(hdr, meta, {"start": state("start", [ir.Extract(L, x)])}, ingress_body=body)
    pl = build_pipeline(prog, SwitchState(p4info_pb2.P4Info()), None)
    res = pl.ingress(data, 0, 0)
    return res.to_tm[0].meta.M.f_r


def _std():
    from exec_irb import STD
    return STD


PKT = bytes([250, 10, 100, 0x80, 0x12, 0x34])  # a=250 b=10 s=100 t=-128 w=0x1234


@pytest.mark.parametrize("rt,fn,expect", [
    (B(8), lambda x: binop("+", mem(x, "a"), mem(x, "b")), 4),
    (B(8), lambda x: binop("-", mem(x, "b"), mem(x, "a")), (10 - 250) & 0xFF),
    (B(8), lambda x: binop("*", mem(x, "a"), mem(x, "b")), (2500) & 0xFF),
    (I(8), lambda x: binop("+", mem(x, "s"), mem(x, "s")), -56),
    (I(8), lambda x: binop("-", mem(x, "t"), ir.Const(I(8), L, 1)), 127),
    (B(8), lambda x: binop("|+|", mem(x, "a"), mem(x, "b")), 255),
    (B(8), lambda x: binop("|-|", mem(x, "b"), mem(x, "a")), 0),
    (I(8), lambda x: binop("|+|", mem(x, "s"), mem(x, "s")), 127),
    (I(8), lambda x: binop("|-|", mem(x, "t"), mem(x, "s")), -128),
    (B(8), lambda x: binop("<<", mem(x, "a"), ir.Const(B(32), L, 9)), 0),
    (B(8), lambda x: binop("<<", mem(x, "a"), mem(x, "b")), 0),  # shift by 10 >= width
    (B(8), lambda x: binop("<<", mem(x, "a"), ir.Const(B(32), L, 1)), (250 << 1) & 0xFF),
    (I(8), lambda x: binop(">>", mem(x, "t"), ir.Const(B(32), L, 1)), -64),
    (I(8), lambda x: binop(">>", mem(x, "t"), ir.Const(B(32), L, 20)), -1),
    (B(8), lambda x: binop(">>", mem(x, "a"), ir.Const(B(32), L, 1)), 125),
    (B(8), lambda x: ir.Slice(B(8), L, mem(x, "w"), 11, 4), 0x23),
    (B(16), lambda x: ir.Concat(B(16), L, mem(x, "a"), mem(x, "b")), 0xFA0A),
    (B(8), lambda x: ir.Cast(B(8), L, mem(x, "t")), 0x80),
    (I(8), lambda x: ir.Cast(I(8), L, mem(x, "a")), 250 - 256),
    (B(8), lambda x: ir.Cast(B(8), L, mem(x, "w")), 0x34),
    (B(32), lambda x: ir.Cast(B(32), L, mem(x, "w")), 0x1234),
    (B(8), lambda x: ir.Unary(B(8), L, "~", mem(x, "b")), 0xF5),
    (B(8), lambda x: ir.Unary(B(8), L, "-", mem(x, "b")), 246),
    (I(8), lambda x: ir.Unary(I(8), L, "-", mem(x, "t")), -128),
    (BOOL, lambda x: binop("<", mem(x, "t"), mem(x, "s")), True),
    (BOOL, lambda x: binop(">", mem(x, "a"), mem(x, "b")), True),
    (B(8), lambda x: ir.Mux(B(8), L, binop("==", mem(x, "b"), ir.Const(B(8), L, 10)), mem(x, "a"),
                            mem(x, "b")), 250),
    (B(1), lambda x: ir.Cast(B(1), L, binop("==", mem(x, "b"), ir.Const(B(8), L, 10))), 1),
])
def test_arithmetic(rt, fn, expect):
    assert _run(rt, fn, PKT) == expect


def test_slice_assignment_keeps_other_bits():
    hdr = ir.StructT("headers_t", (ir.Field("x", IN),))
    x = mem(var("h", hdr), "x")
    stmt = assign(ir.Slice(B(8), L, mem(x, "w"), 11, 4), ir.Const(B(8), L, 0xAB))
    assert _run(B(16), lambda x: mem(x, "w"), PKT, [stmt]) == 0x1AB4


def test_setvalid_zeroes_and_invalid_header_reads_zero():
    def fn(x):
        return mem(x, "a")
    hdr = ir.StructT("headers_t", (ir.Field("x", IN),))
    x = mem(var("h", hdr), "x")
    stmts = [ir.ExprStmt(L, ir.SetInvalid(ir.VoidT(), L, x)), ir.ExprStmt(L, ir.SetValid(ir.VoidT(), L, x))]
    assert _run(B(8), fn, PKT, stmts) == 0


def _stack_program(select_cases, verify=None):
    seg = ir.HeaderT("seg_t", (ir.Field("v", B(8)),))
    stack = ir.StackT(seg, 3)
    hdr = ir.StructT("headers_t", (ir.Field("eth", ETH), ir.Field("segs", stack)))
    meta = ir.StructT("meta_t", (ir.Field("n", B(8)),))
    h = var("h", hdr)
    segs = mem(h, "segs")
    last_v = ir.Member(B(8), L, ir.StackLast(seg, L, segs), "v")
    seg_stmts = [ir.Extract(L, ir.StackNext(seg, L, segs))]
    if verify is not None:
        seg_stmts.append(verify(last_v))
    states = {
        "start": state("start", [ir.Extract(L, mem(h, "eth"))], keys=[mem(mem(h, "eth"), "type")],
                       cases=select_cases),
        "segs": state("segs", seg_stmts, keys=[last_v], cases=[
            ir.SelectCase([ir.KeySet("value", 0)], "accept", L),
            ir.SelectCase([ir.KeySet("default")], "segs", L)]),
    }
    sm = var("sm", _std())
    prog = program(hdr, meta, states, ingress_body=block(assign(mem(sm, "egress_spec"), c(3, B(9)))),
                   deparse=block(ir.Emit(L, mem(h, "eth")),
                                 *[ir.Emit(L, ir.StackIndex(seg, L, segs, c(i))) for i in range(3)]))
    return build_pipeline(prog, SwitchState(p4info_pb2.P4Info()), None)


CASES = [ir.SelectCase([ir.KeySet("mask", 0x8800, 0xFF00)], "segs", L),
         ir.SelectCase([ir.KeySet("range", 0x0600, hi=0x06FF)], "accept", L)]
ETHB = bytes(12)


def _sm(res):
    return res.to_tm[0].meta.S


def test_stack_loop_and_deparse():
    pl = _stack_program(CASES)
    data = ETHB + b"\x88\x47" + b"\x05\x06\x00" + b"tail"
    res = pl.ingress(data, 1, 0)
    st = res.to_tm[0].meta
    assert st.S.f_parser_error == 0
    assert [e.f_v for e in st.H.f_segs.arr] == [5, 6, 0] and st.H.f_segs.nxt == 3
    out = pl.egress(res.to_tm[0], 5)
    assert out.frames[0].data == data


@pytest.mark.parametrize("data,err", [
    (ETHB + b"\x88\x47" + b"\x05\x06\x07\x08", 3),  # StackOutOfBounds on the 4th element
    (ETHB + b"\x88\x47" + b"\x05", 1),  # PacketTooShort inside the loop
    (ETHB + b"\x99\x00", 2),  # NoMatch in select
    (b"\x00" * 5, 1),  # shorter than ethernet
])
def test_parser_errors_reach_ingress(data, err):
    pl = _stack_program(CASES)
    res = pl.ingress(data, 1, 0)
    assert not res.dropped
    st = res.to_tm[0].meta
    assert st.S.f_parser_error == err
    # what was not parsed is kept as payload and re-emitted after the valid headers
    out = pl.egress(res.to_tm[0], 0).frames[0].data
    assert out == data


def test_range_select_accepts():
    pl = _stack_program(CASES)
    res = pl.ingress(ETHB + b"\x06\x42xyz", 1, 0)
    assert _sm(res).f_parser_error == 0


def test_verify_sets_user_error():
    def verify(last_v):
        return ir.Verify(L, binop("!=", last_v, ir.Const(B(8), L, 9)), ir.Const(ir.ErrorT(), L, 7))
    pl = _stack_program(CASES, verify)
    assert _sm(pl.ingress(ETHB + b"\x88\x47\x01\x09\x00", 1, 0)).f_parser_error == 7
    assert _sm(pl.ingress(ETHB + b"\x88\x47\x01\x02\x00", 1, 0)).f_parser_error == 0


def test_internal_errors_become_drops_not_exceptions():
    pl = _stack_program(CASES)

    def boom(*_):
        raise RuntimeError("bug")
    pl.blocks.ingress = boom
    res = pl.ingress(ETHB + b"\x06\x00", 1, 0)
    assert res.dropped and "internal error" in res.drop_reason


def test_signed_fields_round_trip_through_extract_and_emit():
    hdr = ir.StructT("headers_t", (ir.Field("x", IN),))
    meta = ir.StructT("meta_t", (ir.Field("r", B(8)),))
    x = mem(var("h", hdr), "x")
    body = block(assign(mem(var("sm", _std()), "egress_spec"), c(1, B(9))),
                 assign(mem(x, "s"), binop("-", mem(x, "s"), ir.Const(I(8), L, 1))))
    prog = program(hdr, meta, {"start": state("start", [ir.Extract(L, x)])}, ingress_body=body,
                   deparse=block(ir.Emit(L, x)))
    pl = build_pipeline(prog, SwitchState(p4info_pb2.P4Info()), None)
    data = bytes([1, 2, 0x80, 0xFF, 5, 6]) + b"rest"
    res = pl.ingress(data, 0, 0)
    assert res.to_tm[0].meta.H.f_x.f_t == -1
    out = pl.egress(res.to_tm[0], 0).frames[0].data
    assert out == bytes([1, 2, 0x7F, 0xFF, 5, 6]) + b"rest"  # -128 - 1 wraps to 127
