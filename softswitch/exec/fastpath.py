"""The packet loop's entry points, generated for one compiled program (issue 16).

``V1Pipeline.ingress_item`` / ``egress_frame`` run the v1model flow around the generated blocks
for every packet the loop forwards.  Written once for every program, they test at run time for
what most programs never do (a trace, a verifyChecksum or egress control with no statements,
clones, digests, truncation) and reset every context field per packet.  ``build`` writes the
two functions for one program instead, leaving out what its generated code can never do (it is
the only writer of those context fields, so a field no statement of the source assigns stays as
it was set up), writes the header reset's stores (``recycle.make_reset``) into ``ingress_item``
instead of calling it, and keeps the packet's ``PacketState`` with its header objects for the next
packet (the item itself is recycled, not only its headers).

The generated functions handle the plain unicast packet themselves and hand every other case to
the general path at the point where it branches off, with the state it has reached:

* ingress: a clone or digest asked for (``_ingress`` with ``first``), multicast
  (``_multicast``), a drop, an assertion failure, an exception;
* egress: an egress clone, a drop or an assertion failure (``_egress_tail`` / ``_drop``),
  truncation (cut as the general path does), an exception.

Programs that can resubmit or recirculate (loops back into ingress) keep the general methods.
With a tracer, or when the header objects cannot be reset for reuse, nothing is generated.

``egress_frame`` writes only the standard-metadata fields the program can read
(``std_fields_used``): v1model hands ``standard_metadata`` to no block after egress (compute
checksum and the deparser take headers and user metadata), so a field no statement names is dead
once the traffic manager's figures are on the item.  Likewise the reset of a recycled packet's
standard metadata leaves out the fields nothing reads (``std_reset_skip``), and ``ingress_item``
sets ``ingress_port``, ``packet_length`` and ``ingress_global_timestamp`` only when named.
"""
from __future__ import annotations

from softswitch.contract import (
    CLOCK_NOW,
    CLOCK_RX,
    DROP_PORT,
    EGRESS_SPEC_IN_EGRESS,
    EgressResult,
    IngressResult,
)
from softswitch.exec.recycle import Mismatch, make_reset
from softswitch.exec.support import AssertionFailed
from softswitch.exec.usage import tracks_length
from softswitch.runtime.counters import ONE_PACKET

_M48 = (1 << 48) - 1
_M32 = (1 << 32) - 1
_M19 = (1 << 19) - 1


# standard-metadata fields the pipeline's own code reads on the loop's path (the end of ingress,
# the drop test after egress), and those ``ingress_item`` writes before any statement runs
_STD_READ_BY_PIPELINE = frozenset(("f_egress_spec", "f_mcast_grp", "f_priority"))
_STD_WRITTEN_FIRST = frozenset(("f_ingress_port", "f_packet_length", "f_ingress_global_timestamp"))


def std_reset_skip(std_cls: type, std_used: frozenset[str] | None) -> frozenset[str]:
    """The standard-metadata attributes ``ingress_item`` need not reset for a recycled packet:
    those it writes before the parser runs, and those no statement names (``std_used``; None:
    the struct is used whole) and the pipeline's code does not read.  What a packet leaves in
    such a field is read by nothing: the general path writes the egress figures before egress
    runs, a replica or clone gets its own ``egress_rid`` and ``instance_type``, and an unnamed
    field is read by no statement of the program."""
    slots = frozenset(std_cls.__slots__)
    keep = slots if std_used is None else frozenset(f"f_{n}" for n in std_used) | _STD_READ_BY_PIPELINE
    return (slots - keep) | (slots & _STD_WRITTEN_FIRST)


def features(source: str) -> set[str]:
    """The context fields (``C.<name>``) the generated source ever assigns."""
    return {name for name in ("clone", "digest", "resubmit", "recirculate", "truncate", "checksum_error")
            if f"C.{name} = " in source}


def build(pl) -> tuple | None:
    """(ingress_item, egress_frame) specialised for pipeline ``pl``, or None to keep the
    general methods."""
    b = pl.blocks
    if pl.trace is not None or pl._reset is None:
        return None
    used = features(b.source)
    if used & {"resubmit", "recirculate"}:
        return None
    std_used = pl._std_used
    from softswitch.exec.pipeline import POOL_MAX, PacketState

    reset = make_reset(pl._H, pl._M, pl._S, lazy=pl._lazy, skip=std_reset_skip(pl._S, std_used),
                       tracked=pl._tracked, next_only=pl._next_only) or pl._reset
    # a program that names ingress_global_timestamp and runs meters sees two times in ingress: the
    # receive time and the time its meters run (``V1Pipeline.ingress_clock``, set before this)
    two_clocks = pl.ingress_clock == CLOCK_RX | CLOCK_NOW
    lines = _ingress_source(b, used, reset.body, std_used, two_clocks) + _egress_source(b, used, std_used)

    pool = pl._pool
    ns = {
        "pool": pool, "pool_pop": pool.pop, "pool_append": pool.append, "POOL_MAX": POOL_MAX,
        "Mismatch": Mismatch, "_Mismatch": Mismatch, "AssertionFailed": AssertionFailed,
        "new_h": pl._H, "new_m": pl._M, "new_s": pl._S, "H_cls": pl._H, "PS": PacketState,
        "ctx_in": pl._ctx_in, "ctx_eg": pl._ctx_eg, "pl": pl,
        "parse": b.parser, "verify": b.verify_checksum, "run_ingress": b.ingress,
        "run_egress": b.egress, "compute": b.compute_checksum, "deparse": b.deparser,
        "IngressResult": IngressResult, "EgressResult": EgressResult, "DROP_PORT": DROP_PORT,
        "EGRESS_SPEC_IN_EGRESS": EGRESS_SPEC_IN_EGRESS,
        "M48": _M48, "ONE_PACKET": ONE_PACKET, "M32": _M32, "M19": _M19, "join": b"".join,
        "DROP_REASON": "egress_spec is the drop port (mark_to_drop) at the end of ingress",
    }
    src = "\n".join(lines) + "\n"
    exec(compile(src, f"<fastpath:{pl.program.source_file}>", "exec"), ns)  # noqa: S102 - generated here
    pl.fast_source = src  # kept for debugging and per-line counts, as ``CompiledBlocks.source``
    return ns["ingress_item"], ns["egress_frame"]


def _ingress_source(b, used: set[str], reset_body: list[str], std_used: frozenset[str] | None = None,
                    two_clocks: bool = False) -> list[str]:
    """``std_used``: the standard-metadata fields the program names (None: all); the three set
    from the packet are written only when named (nothing else reads them).  ``two_clocks``: the
    function takes ``rx`` as well, the receive time for ``ingress_global_timestamp`` (``now``,
    when it is None or not given, is the time for meters and, then, for the timestamp too)."""
    ctx_none = [f"C.{n} = " for n in ("clone", "digest") if n in used]
    track_len = tracks_length(std_used)
    cut = "C.truncate" if "truncate" in used else "-1"
    plen = "n + C.dlen" if track_len else "n"
    std_in = [f"        S.f_{name} = {expr}" for name, expr in (
        ("ingress_port", "port"), ("packet_length", "n & M32"),
        ("ingress_global_timestamp", "(now if rx is None else rx) & M48" if two_clocks else "now & M48"))
        if std_used is None or name in std_used]
    src = [
        "def ingress_item(data, port, now, rx=None):" if two_clocks else "def ingress_item(data, port, now):",
        "    try:",
        "        if pool:",
        "            item = pool_pop()",
        "            a0 = H = item.H",
        "            a1 = M = item.M",
        "            a2 = S = item.S",
        "            try:",
        *["            " + line for line in reset_body],  # the reset's stores, written out here
        "            except Mismatch:",
        "                item = None",
        "                H = new_h()",
        "                M = new_m()",
        "                S = new_s()",
        "        else:",
        "            item = None",
        "            H = new_h()",
        "            M = new_m()",
        "            S = new_s()",
        "        n = len(data)",
        *std_in,  # instance_type: 0 (normal) after reset
        "        C = ctx_in",
        "        C.data = data",
        "        C.nbytes = n",
        *(["        C.ncount = n + ONE_PACKET"] if "C.ncount" in b.source else []),  # counter updates only
        *(["        C.now = now"] if "C.now" in b.source else []),  # read by meters only
        "        C.off = 0",
    ]
    if ctx_none:
        src.append("        " + "".join(ctx_none) + "None")
    if "truncate" in used:
        src.append("        C.truncate = -1")
    if track_len:
        src.append("        C.dlen = 0")
    if "checksum_error" in used:
        src.append("        C.checksum_error = 0")
    src += [
        "        try:",  # an assert/assume may fail in the parser too (bmv2 takes them there)
        "            S.f_parser_error = parse(H, M, S, C)",
        "            C.payload = payload = data[C.off:]",
    ]
    if b.verify_checksum is not None:
        guard = b.guards.get("blk_verify")  # false: the control would do nothing (C.checksum_error stays 0)
        src += [f"            if {guard}:", "                verify(H, M, S, C)"] if guard else \
            ["            verify(H, M, S, C)"]
        src.append("            S.f_checksum_error = C.checksum_error")
    elif std_used is None or "checksum_error" in std_used:
        # bmv2 writes it after every parse: 0 without a checksum to verify, whatever the parser stored
        src.append("            S.f_checksum_error = 0")
    src += [
        "            run_ingress(H, M, S, C)",
        "        except AssertionFailed as e:",
        "            return pl._drop(IngressResult(), f'assertion failed: {e}')",
    ]
    if ctx_none:
        cond = " or ".join(f"C.{n} is not None" for n in ("clone", "digest") if n in used)
        src += [f"        if {cond}:",
                "            return pl._ingress(data, port, now, 0, None, True, (H, M, S, C)"
                + (", rx)" if two_clocks else ")")]
    src += [
        "        mgid = S.f_mcast_grp",
        "        if mgid:",
        "            return pl._multicast(IngressResult(), H, M, S, C, mgid, n)",
        "        espec = S.f_egress_spec",
        "        if espec == DROP_PORT:",
        "            if len(pool) < POOL_MAX:",
        "                pool_append(item if item is not None else PS(0, 0, H, M, S, b'', 0, -1, 0))",
        "            return pl._drop(IngressResult(), DROP_REASON)",
        "        S.f_instance_type = 0",
        "        prio = S.f_priority & 7",
        "        if item is None:",
        f"            return PS(espec, prio, H, M, S, payload, n, {cut}, 0, {plen})",
        "        item.egress_port = espec",
        "        item.priority = prio",
        "        item.length = item.nbytes = n",
        f"        item.plen = {plen}",
        "        item.payload = payload",
        f"        item.truncate = {cut}",
        "        item.clone_truncate = 0",
        "        return item",
        "    except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch",
        "        return pl._internal_error(IngressResult(), e)",
        "",
    ]
    return src


# what egress_frame puts in standard_metadata before the egress control runs (v1model's egress view)
_EGRESS_STD = (
    ("egress_port", "item.egress_port"),
    ("packet_length", "item.plen & M32"),
    ("egress_global_timestamp", "now & M48"),
    ("enq_timestamp", "item.enq_timestamp_us & M32"),
    ("enq_qdepth", "item.enq_qdepth & M19"),
    ("deq_timedelta", "item.deq_timedelta_us & M32"),
    ("deq_qdepth", "item.deq_qdepth & M19"),
)


def _egress_source(b, used: set[str], std_used: frozenset[str] | None = None) -> list[str]:
    """``std_used``: the standard-metadata fields the program names (None: all of them); the
    others are not written (nothing after this function reads them; ``egress_spec`` is always
    set, the drop test below reads it)."""
    src = [
        "def egress_frame(item, now):",
        "    try:",
        "        H = item.H",
        "        M = item.M",
        "        S = item.S",
        "        nbytes = item.nbytes",
        "        S.f_egress_spec = EGRESS_SPEC_IN_EGRESS",
        *[f"        S.f_{name} = {expr}" for name, expr in _EGRESS_STD
          if std_used is None or name in std_used],
        "        C = ctx_eg",
        "        C.nbytes = nbytes",
        *(["        C.ncount = nbytes + ONE_PACKET"] if "C.ncount" in b.source else []),
        *(["        C.now = now"] if "C.now" in b.source else []),
        "        C.payload = payload = item.payload",
        "        C.truncate = item.truncate",
    ]
    if "clone" in used:
        src.append("        C.clone = None")
    if tracks_length(std_used):
        src.append("        C.dlen = 0")
    if "checksum_error" in used:
        src.append("        C.checksum_error = 0")
    if b.egress is not None:
        src += [
            "        try:",
            "            run_egress(H, M, S, C)",
            "        except AssertionFailed as e:",
            "            return pl._drop(EgressResult(), f'assertion failed: {e}')",
        ]
    cond = "C.clone is not None or S.f_egress_spec == DROP_PORT" if "clone" in used else \
        "S.f_egress_spec == DROP_PORT"
    src += [
        f"        if {cond}:",
        "            return pl._egress_tail(item, item, H, M, S, C, True)",
    ]
    src.append("        try:")  # an assert/assume may fail in computeChecksum or the deparser too
    if b.compute_checksum is not None:
        guard = b.guards.get("blk_compute")  # false: the control would do nothing
        src += [f"            if {guard}:", "                compute(H, M, S, C)"] if guard else \
            ["            compute(H, M, S, C)"]
    src += [
        "            parts = deparse(H, M, S, C)",
        "        except AssertionFailed as e:",
        "            return pl._drop(EgressResult(), f'assertion failed: {e}')",
        "        parts.append(payload)",
        "        out = join(parts)",
        "        cut = C.truncate",
        "        ct = item.clone_truncate",
        "        if cut >= 0 or ct:",
        "            if ct and (cut < 0 or ct < cut):",
        "                cut = ct",
        "            if cut < len(out):",
        "                if not cut:",
        "                    return pl._drop(EgressResult(), 'truncate(0): no bytes left to send')",
        "                out = out[:cut]",
        "        if H.__class__ is H_cls and len(pool) < POOL_MAX:",
        "            pool_append(item)",
        "        return out",
        "    except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch",
        "        return pl._internal_error(EgressResult(), e)",
        "",
    ]
    return src
