"""Tiny builders of checked IR for execution tests that must not depend on the front end."""
from __future__ import annotations

from softswitch.frontend import ir

L = ir.Loc("t.p4", 1, 1)
B = ir.BitT
BOOL = ir.BoolT()
STD_FIELDS = [("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9), ("instance_type", 32),
              ("packet_length", 32), ("enq_timestamp", 32), ("enq_qdepth", 19), ("deq_timedelta", 32),
              ("deq_qdepth", 19), ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48),
              ("mcast_grp", 16), ("egress_rid", 16), ("checksum_error", 1)]
STD = ir.StructT("standard_metadata_t", tuple(ir.Field(n, B(w)) for n, w in STD_FIELDS)
                 + (ir.Field("parser_error", ir.ErrorT()), ir.Field("priority", B(3))))
ETH = ir.HeaderT("ethernet_t", (ir.Field("dst", B(48)), ir.Field("src", B(48)), ir.Field("type", B(16))))
ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
          "ParserTimeout", "ParserInvalidArgument"]


def c(v, t=None):
    if t is None:
        t = BOOL if isinstance(v, bool) else B(32)
    return ir.Const(t, L, v)


def var(name, t):
    return ir.Var(t, L, name)


def mem(e, f):
    t = e.type.field_type(f)
    return ir.Member(t, L, e, f)


def binop(op, a, b, t=None):
    if t is None:
        t = BOOL if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||") else a.type
    return ir.Binary(t, L, op, a, b)


def assign(lhs, rhs):
    return ir.Assign(L, lhs, rhs)


def block(*stmts):
    return ir.Block(L, list(stmts))


def param(name, t, d="inout"):
    return ir.Param(name, t, d, (), L)


def control(name, params, body, locals_=None, tables=None, externs=None, actions=()):
    return ir.Control(name, params, dict(locals_ or {}), dict(externs or {}), dict(tables or {}),
                      list(actions), body, (), L)


def program(hdr_t, meta_t, states, ingress_body=None, egress_body=None, deparse=None,
            ingress_locals=None, actions=None, tables=None, externs=None, egress_locals=None):
    ext = ir.ExternT("packet_in")
    parser = ir.Parser("P", [param("pkt", ext, ""), param("h", hdr_t, "out"), param("m", meta_t),
                             param("sm", STD)], {}, states, (), L)
    hm = [param("h", hdr_t), param("m", meta_t)]
    hms = hm + [param("sm", STD)]
    dep = control("D", [param("pkt", ir.ExternT("packet_out"), ""), param("h", hdr_t, "in")],
                  deparse or block())
    return ir.Program(
        source_file="t.p4", errors=list(ERRORS), match_kinds=["exact", "ternary", "lpm"], types={},
        parser=parser, verify_checksum=control("VC", hm, block()),
        ingress=control("I", hms, ingress_body or block(), ingress_locals, tables, externs),
        egress=control("E", hms, egress_body or block(), egress_locals),
        compute_checksum=control("CC", hm, block()), deparser=dep,
        actions=dict(actions or {}), controller_headers=[], digests=[])


def state(name, stmts, next_state="accept", keys=None, cases=None):
    tr = ir.Transition(L, next_state if keys is None else None, keys or [], cases or [])
    return ir.ParserState(name, list(stmts), tr, (), L)
