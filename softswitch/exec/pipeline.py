"""The v1model pipeline with bmv2 ``simple_switch`` semantics around the compiled blocks.

After ingress, in bmv2's order: ingress clone (the *original* packet re-parsed, metadata reset
but the preserved field list), digest, resubmit (wins over everything below), multicast (the
original is discarded), drop on ``egress_spec == 511``, else unicast.  After egress: egress
clone (the egress-modified headers, metadata reset but the preserved fields), drop on
``egress_spec == 511``, computeChecksum + deparse, then recirculate or transmit.

Choices where bmv2 is unspecified or would abort, kept here so they can be documented:

* A parser error stops parsing; the packet still runs ingress with ``parser_error`` set, the
  headers extracted so far valid and everything not parsed kept as payload (re-emitted after
  the valid headers).  ``transition reject`` ends parsing like ``accept`` with no error.
  ``advance`` by a non-multiple of 8 bits is ParserInvalidArgument; a parser loop still going
  1000 passes after the packet's bytes' worth is ParserTimeout (bmv2 has no bound).
* Fields of a header that was never extracted read as 0; ``setValid()`` on an invalid header
  zeroes its fields (bmv2's ``add_header``); ``setInvalid()`` keeps the stale values.
* Out-of-range register/counter/meter indices are ignored (the destination is left unchanged);
  out-of-range run-time stack indices read a fresh invalid header and writes to them are lost;
  ``/`` and ``%`` by zero give 0; ``hash`` with ``max == 0`` gives ``base``.
* ``assert``/``assume`` failures drop the packet (bmv2 aborts the whole switch).
* Hash and checksum inputs skip fields of invalid headers and are packed MSB-first with the
  last byte zero-padded at the end, as bmv2's field-list builder does.
* Ingress clones re-parse the original packet and, like every copy bmv2 makes with
  ``reset_metadata``, start with all standard_metadata zero except ``instance_type``,
  ``egress_rid`` (the replica's instance), what egress sets and the fields a deprecated call's
  list preserves (``clone3(I2E, s, {standard_metadata.ingress_port})``, as ONOS fabric.p4 keeps
  the port of its CPU clones); recirculated packets enter with
  ``ingress_port`` 0 for the same reason.  Resubmitted packets too: bmv2 1.15 builds the
  resubmitted pass on reset metadata, so ``ingress_port`` and ``ingress_global_timestamp`` read 0
  there (measured on bmv2; keep the port in a preserved user field to see it).
* ``digest`` values are taken when ``digest()`` runs; like bmv2, only the last call of a pass
  is delivered.  The I2E clone, digest, resubmit, multicast and drop checks run in that order.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from softswitch.contract import (
    CLOCK_NOW,
    CLOCK_RX,
    DROP_PORT,
    EGRESS_SPEC_IN_EGRESS,
    INTERNAL_ERROR,
    PKT_INSTANCE_EGRESS_CLONE,
    PKT_INSTANCE_INGRESS_CLONE,
    PKT_INSTANCE_NORMAL,
    PKT_INSTANCE_RECIRC,
    PKT_INSTANCE_REPLICATION,
    PKT_INSTANCE_RESUBMIT,
    EgressResult,
    Frame,
    IngressResult,
    TmItem,
)
from softswitch.exec import fastpath
from softswitch.exec.codegen import CompiledBlocks
from softswitch.exec.recycle import Mismatch, make_reset
from softswitch.exec.support import AssertionFailed, format_log
from softswitch.exec.usage import QUEUE_FIELDS, extract_only_headers, next_only_stacks, std_fields_used
from softswitch.frontend import ir
from softswitch.runtime.counters import ONE_PACKET

log = logging.getLogger("softswitch.p4")


def _log_msg(fmt: str, args: tuple) -> None:
    """``log_msg`` without a tracer: format only when the logger would emit (hot path)."""
    if log.isEnabledFor(logging.INFO):
        log.info(format_log(fmt, args))


def _trace_log(trace: Callable[[str], None]) -> Callable[[str, tuple], None]:
    """``log_msg`` to the tracer, formatted."""
    return lambda fmt, args: trace(format_log(fmt, args))

POOL_MAX = 1024  # recycled PacketState items (with their H, M, S trees) kept for reuse
# ingress passes per received packet (resubmissions + 1) before it is dropped: bmv2 has no limit
# (a program that always resubmits loops there for ever); this bound only stops such a loop
MAX_INGRESS_PASSES = 1024
# the bits of a clone session id bmv2 keeps (primitives.cpp marks the id with 0x8000, the clone
# code masks it with 0x7FFF)
CLONE_SESSION_MASK = 0x7FFF
_M48 = (1 << 48) - 1
_M32 = (1 << 32) - 1
_M19 = (1 << 19) - 1


class Ctx:
    """Per-packet, per-pass context the generated code reads and writes (``C``)."""

    __slots__ = (
        "checksum_error",
        "clone",
        "data",
        "digest",
        "dlen",
        "log",
        "mcol",
        "nbytes",
        "ncount",
        "now",
        "off",
        "payload",
        "recirculate",
        "resubmit",
        "truncate",
    )

    def __init__(self, data: bytes, nbytes: int, now: int, logf: Callable[[str, tuple], None]) -> None:
        self.data = data
        self.payload = b""
        self.nbytes = nbytes
        # ncount: what one packet of nbytes adds to a counter cell (runtime.counters: packets in the
        # high bits), set with nbytes, so the generated code's counter updates are one addition
        self.ncount = nbytes + ONE_PACKET
        self.now = now
        # clone: (session, field list index or -1); resubmit/recirculate: field list index;
        # digest: (digest id, values); truncate: bytes, -1 = none (the smallest truncate() wins;
        # 0 is no bytes, as bmv2); dlen: the bytes setValid/setInvalid added to the packet (bmv2's
        # packet-length register, read into egress's packet_length).  Chained: built per packet.
        self.clone = self.resubmit = self.recirculate = self.digest = None
        self.off = self.checksum_error = self.dlen = 0
        # mcol: the colour of the last direct meter a table ran for this packet, for an action-local
        # variable its action reads it into (codegen: bmv2 writes it at the hit, before the action)
        self.mcol = 0
        self.truncate = -1
        self.log = logf


class PacketState(TmItem):
    """What travels through the traffic manager: the ``TmItem`` itself, with the packet's
    headers, metadata and payload (one object per packet instead of two; ``meta`` is the
    item itself, as the contract's readers expect)."""

    __slots__ = ("H", "M", "S", "clone_truncate", "nbytes", "payload", "plen", "recirc", "truncate")

    def __init__(self, egress_port: int, priority: int, H, M, S, payload: bytes, nbytes: int,
                 truncate: int, clone_truncate: int, plen: int | None = None, recirc: int | None = None) -> None:
        """``nbytes``: the length the packet came in with (counters, meters, the queue's bytes);
        ``plen``: egress's ``packet_length`` (``nbytes`` and the headers ingress made valid or
        invalid); ``truncate``: -1 or the bytes egress keeps; ``recirc``: the field list of a
        ``recirculate_preserving_field_list`` called in ingress (bmv2 keeps the flag on the packet; the
        front end refuses such a call, as p4c does)."""
        self.egress_port = egress_port
        self.priority = priority
        self.length = nbytes
        self.enq_timestamp_us = self.enq_qdepth = self.deq_timedelta_us = self.deq_qdepth = self.qid = 0
        self.H = H
        self.M = M
        self.S = S
        self.payload = payload
        self.nbytes = nbytes
        self.truncate = truncate
        self.clone_truncate = clone_truncate
        self.plen = nbytes if plen is None else plen
        self.recirc = recirc

    __eq__ = object.__eq__  # identity: the dataclass's field-wise eq would recurse through meta
    __hash__ = object.__hash__

    @property
    def meta(self) -> PacketState:  # shadows TmItem's slot: no self-reference cycle for the GC
        return self

    def __repr__(self) -> str:
        return (f"PacketState(port={self.egress_port}, priority={self.priority}, H={self.H!r}, "
                f"M={self.M!r}, S={self.S!r}, payload={len(self.payload)}B)")


class FieldLists:
    """Getters/setters for the fields of each ``@field_list(index)``: user-metadata fields, and
    for a deprecated call's data list also ``standard_metadata`` fields (paths rooted at
    ``ir.STD_META_ROOT``), which bmv2 copies into the new packet's standard_metadata like any
    field of p4c's field list.  ``get(M, S)`` -> values; ``put(M, S, v)``."""

    def __init__(self, program: ir.Program, meta_t: ir.StructT) -> None:
        self.program = program
        self.meta_t = meta_t
        self._cache: dict[int, tuple[Callable, Callable]] = {}

    def get(self, index: int) -> tuple[Callable, Callable]:
        fl = self._cache.get(index)
        if fl is None:
            paths = self.program.field_list(self.meta_t, index)
            attrs = [f"S.f_{path[1]}" if path[0] == ir.STD_META_ROOT
                     else "M." + ".".join("f_" + p for p in path) for path in paths]
            # a header, union or stack in the metadata is preserved by value, as bmv2 copies its
            # fields into the new packet's: the clone's own object, each replica's too (by
            # reference, the clone's egress wrote the original's header, and two packets the loop
            # later recycled shared it)
            whole = [path[0] != ir.STD_META_ROOT and self._aggregate(path) for path in paths]
            getter = "def get(M, S):\n    return (" + "".join(
                f"{a}.copy(), " if w else f"{a}, " for a, w in zip(attrs, whole)) + ")\n"
            setter = "def put(M, S, v):\n" + "".join(
                f"    {a} = v[{i}].copy()\n" if w else f"    {a} = v[{i}]\n" for i, (a, w) in enumerate(zip(attrs, whole)))
            if not attrs:
                setter += "    pass\n"
            ns: dict = {}
            exec(compile(getter + setter, f"<field_list {index}>", "exec"), ns)  # noqa: S102
            fl = (ns["get"], ns["put"])
            self._cache[index] = fl
        return fl

    def _aggregate(self, path: tuple[str, ...]) -> bool:
        """True if the user-metadata member at ``path`` is an object (header, union, stack)."""
        t: ir.Type = self.meta_t
        for name in path:
            t = next(f.type for f in t.fields if f.name == name)  # type: ignore[union-attr]
        return isinstance(t, (ir.HeaderT, ir.StackT))


class V1Pipeline:
    """``contract.Pipeline`` for one compiled program and its runtime state."""

    def __init__(self, program: ir.Program, blocks: CompiledBlocks, state, cpu_port: int | None,
                 trace: Callable[[str], None] | None = None) -> None:
        self.program = program
        self.blocks = blocks
        self.state = state
        self.cpu_port = cpu_port
        self.trace = trace
        self._log = _trace_log(trace) if trace is not None else _log_msg
        self.field_lists = FieldLists(program, program.ingress.params[1].type)
        self._H, self._M, self._S = blocks.header_cls, blocks.meta_cls, blocks.std_cls
        # items of packets the loop has finished with (see ``egress_frame``), their (H, M, S)
        # trees put back to their initial values on reuse; reset is None when the classes cannot
        # be reset by stores
        # headers only ``extract`` writes are reset only when valid (all-zero while invalid)
        self._lazy = frozenset(f"f_{n}" for n in extract_only_headers(program))
        # and headers only field stores and setInvalid write, when valid or marked dirty by them
        self._tracked = frozenset(f"f_{n}" for n in blocks.dirty_tracked)
        # and stacks of them whose elements only extract(stack.next) makes valid: skipped whole
        # while their nextIndex is 0
        self._next_only = frozenset(f"f_{n}" for n in next_only_stacks(program))
        self._reset = make_reset(self._H, self._M, self._S, lazy=self._lazy, tracked=self._tracked,
                                 next_only=self._next_only)
        self._pool: list[PacketState] = []
        self.internal_errors = 0  # packets dropped because the generated code raised (_internal_error)
        # one context per stage for the loop's path (ingress_item / egress_frame run on the loop
        # thread only, one packet at a time); the other entry points build their own
        self._ctx_in = Ctx(b"", 0, 0, self._log)
        self._ctx_eg = Ctx(b"", 0, 0, self._log)
        # the loop's entry points written for this program (``fastpath``), else the methods below
        # the standard-metadata fields the program names (None: all), for the fast path and below
        self._std_used = std_used = std_fields_used(program)
        # the times ingress can observe (``softswitch.contract``): the receive time when
        # ``ingress_global_timestamp`` is named, the time a statement runs when a meter reads it
        self.ingress_clock = ((CLOCK_RX if std_used is None or "ingress_global_timestamp" in std_used else 0)
                              | (CLOCK_NOW if "C.now" in blocks.source else 0))
        self.fast_source: str | None = None  # the generated entry points' source (``fastpath``)
        fast = fastpath.build(self)
        if fast is not None:
            self.ingress_item, self.egress_frame = fast
        # True: no statement names a field the traffic manager fills in, so the loop may hand a
        # packet for an idle port with no rate or delay straight to ``egress_frame`` (it would
        # leave the queue at once; the queue figures it would get are read by nothing)
        self.queue_blind = fast is not None and std_used is not None and std_used.isdisjoint(QUEUE_FIELDS)
        # True: a statement names ``deq_timedelta``, so the loop sets it when the packet's egress
        # starts, as bmv2's egress thread does right after its pop (not when the traffic manager
        # handed out the round of up to ``TM_BATCH`` packets the packet was in)
        self.reads_deq_time = std_used is None or "deq_timedelta" in std_used
        # True: besides, no statement can observe the time (no global timestamp named, no meter),
        # so the loop need not read the clock for a packet the traffic manager does not hold
        self.clock_free = (self.queue_blind and "C.now" not in blocks.source
                           and std_used.isdisjoint(("ingress_global_timestamp", "egress_global_timestamp")))

    # ------------------------------------------------------------------ ingress

    def ingress(self, data: bytes, ingress_port: int, now_us: int, rx_us: int | None = None) -> IngressResult:
        """Parser, verifyChecksum, ingress (with resubmit loops), clone I2E, PRE replication.
        ``rx_us``: when the frame was received, for ``ingress_global_timestamp`` (default ``now_us``,
        the time ingress runs: what meters see)."""
        try:
            res = self._ingress(data, ingress_port, now_us, PKT_INSTANCE_NORMAL, None, False, None, rx_us)
        except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch
            return self._internal_error(IngressResult(), e)
        return IngressResult([res]) if res.__class__ is PacketState else res

    def ingress_item(self, data: bytes, ingress_port: int, now_us: int,
                     rx_us: int | None = None) -> PacketState | IngressResult:
        """``ingress`` for the packet loop: the one ``TmItem`` itself when the packet is plain
        unicast (no result object to build), else the ``IngressResult``.  Its headers may come
        from objects ``egress_frame`` recycled."""
        try:
            return self._ingress(data, ingress_port, now_us, PKT_INSTANCE_NORMAL, None, True, None, rx_us)
        except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch
            return self._internal_error(IngressResult(), e)

    def ingress_recirculated(self, data: bytes, preserved: object, now_us: int) -> IngressResult:
        """Re-enter ingress after ``recirculate_preserving_field_list`` (ingress_port 0, as bmv2
        resets all metadata but the preserved fields)."""
        try:
            res = self._ingress(data, 0, now_us, PKT_INSTANCE_RECIRC, preserved, False)
        except Exception as e:  # noqa: BLE001
            return self._internal_error(IngressResult(), e)
        return IngressResult([res]) if res.__class__ is PacketState else res

    def _internal_error(self, res, e: Exception):
        """Drop a packet the generated code raised on (the loop counts it in ``pipeline_errors``).
        The traceback is logged for the 1st, 10th, 100th and 1000th, then every 10,000th: one
        per packet flooded the log (a pipeline swap with packets queued, a bug a packet triggers)."""
        self.internal_errors += 1
        n = self.internal_errors
        if n in (1, 10, 100, 1000) or n % 10000 == 0:
            log.exception("internal error while processing a packet (dropped; %d so far in this pipeline)", n)
        return self._drop(res, f"{INTERNAL_ERROR}: {type(e).__name__}: {e}")

    def _parse(self, data: bytes, port: int, now: int, itype: int, preserved):
        """One parse + verifyChecksum pass; returns (H, M, S, C)."""
        b = self.blocks
        H, M, S = self._H(), self._M(), self._S()
        S.f_ingress_port = port
        S.f_instance_type = itype
        S.f_ingress_global_timestamp = now & _M48
        if preserved is not None:
            self.field_lists.get(preserved[0])[1](M, S, preserved[1])
            S.f_instance_type = itype
        S.f_packet_length = len(data) & _M32  # after the preserved fields, as in _ingress
        C = Ctx(data, len(data), now, self._log)
        if self.trace:
            self.trace(f"packet in: port {port}, {len(data)} bytes, instance_type {itype}")
        S.f_parser_error = b.parser(H, M, S, C)
        C.payload = data[C.off:]
        if b.verify_checksum is not None:
            b.verify_checksum(H, M, S, C)
        # bmv2 writes both after every parse: what the parser itself stored in them is lost
        S.f_checksum_error = C.checksum_error
        return H, M, S, C

    def _ingress(self, data: bytes, port: int, now: int, itype: int, preserved,
                 pooled: bool, first: tuple | None = None, rx: int | None = None) -> PacketState | IngressResult:
        """One packet's ingress; the plain unicast case returns the ``TmItem`` alone.  With
        ``pooled`` the header objects may be recycled ones (the loop's path, see ``egress_frame``).
        ``first``: (H, M, S, C) of a first pass whose parser and ingress control already ran (the
        generated fast path hands over here when the packet asked for a clone or a digest).
        ``rx``: the receive time for ``ingress_global_timestamp`` when it differs from ``now``."""
        trace = self.trace
        run_ingress = self.blocks.ingress
        n = len(data)
        b = self.blocks
        parse, verify = b.parser, b.verify_checksum
        new_h, new_m, new_s, logf = self._H, self._M, self._S, self._log
        pool = self._pool if pooled else None
        # bmv2 stamps a packet when a port receives it: a recirculated copy (metadata reset) has 0
        ts = 0 if itype == PKT_INSTANCE_RECIRC else now if rx is None else rx
        # ingress clones of passes that then resubmitted: bmv2 queues them before it resubmits
        carried: IngressResult | None = None
        # the port that received the packet: bmv2 re-parses an ingress clone with it (the packet
        # object keeps it) also in a resubmitted pass, whose standard_metadata says 0
        rx_port = port
        for _ in range(MAX_INGRESS_PASSES):
            if first is not None:
                H, M, S, C = first
                first = None
            else:
                # parser + verifyChecksum (same as _parse, inlined on the per-packet path)
                if pool:
                    st = pool.pop()
                    H, M, S = st.H, st.M, st.S
                    try:
                        self._reset(H, M, S)
                    except Mismatch:
                        H, M, S = new_h(), new_m(), new_s()
                else:
                    H, M, S = new_h(), new_m(), new_s()
                S.f_ingress_port = port
                S.f_instance_type = itype
                S.f_ingress_global_timestamp = ts & _M48
                if preserved is not None:
                    self.field_lists.get(preserved[0])[1](M, S, preserved[1])
                    S.f_instance_type = itype
                # after the preserved fields: bmv2 sets the new copy's length once it has copied
                # the field list (a preserved packet_length is the old packet's)
                S.f_packet_length = n & _M32
                if pool is not None:
                    C = self._ctx_in
                    C.data = data
                    C.nbytes = n
                    C.ncount = n + ONE_PACKET
                    C.now = now
                    C.clone = C.resubmit = C.recirculate = C.digest = None
                    C.off = C.checksum_error = C.dlen = 0
                    C.truncate = -1
                else:
                    C = Ctx(data, n, now, logf)
                if trace:
                    trace(f"packet in: port {port}, {n} bytes, instance_type {itype}")
                try:  # an assert/assume may fail in the parser too (bmv2 takes them there)
                    S.f_parser_error = parse(H, M, S, C)
                    C.payload = data[C.off:]
                    if verify is not None:
                        verify(H, M, S, C)
                    # bmv2 writes both after every parse (a preserved or parser-stored value is lost)
                    S.f_checksum_error = C.checksum_error
                    run_ingress(H, M, S, C)
                except AssertionFailed as e:
                    return self._drop(IngressResult(), f"assertion failed: {e}")
            if C.clone is not None or C.digest is not None or C.resubmit is not None:
                res = carried or IngressResult()
                if C.clone is not None:
                    self._clone_ingress(res, data, rx_port, now, C, M, S)
                if C.digest is not None:
                    self.state.digests.emit(C.digest[0], C.digest[1])
                if C.resubmit is not None:
                    idx = C.resubmit
                    preserved = (idx, self.field_lists.get(idx)[0](M, S))
                    itype = PKT_INSTANCE_RESUBMIT
                    port = ts = 0  # bmv2 resets standard_metadata on the resubmitted copy
                    if trace:
                        trace("resubmit")
                    carried = res if res.to_tm else None
                    continue
            else:
                res = carried
            mgid = S.f_mcast_grp
            if mgid:
                return self._multicast(res or IngressResult(), H, M, S, C, mgid, n)
            espec = S.f_egress_spec
            if espec == DROP_PORT:
                if res is None and pool is not None and self._reset is not None and len(pool) < POOL_MAX:
                    # nothing else holds them: no clone, digest or copy
                    pool.append(PacketState(0, 0, H, M, S, b"", 0, -1, 0))
                return self._drop(res or IngressResult(),
                                  "egress_spec is the drop port (mark_to_drop) at the end of ingress")
            S.f_instance_type = PKT_INSTANCE_NORMAL
            prio = S.f_priority & 7
            item = PacketState(espec, prio, H, M, S, C.payload, n, C.truncate, 0, n + C.dlen, C.recirculate)
            if trace:
                trace(f"to egress port {espec} priority {prio}")
            if res is None:
                return item
            res.to_tm.append(item)
            return res
        return self._drop(carried or IngressResult(), f"more than {MAX_INGRESS_PASSES - 1} resubmissions")

    def _multicast(self, res: IngressResult, H, M, S, C: Ctx, mgid: int, n: int) -> IngressResult:
        S.f_instance_type = PKT_INSTANCE_REPLICATION
        replicas = self.state.pre.multicast_group(mgid)
        if not replicas:
            return self._drop(res, f"multicast group {mgid} has no replicas")
        for eport, rid in replicas:
            S2 = S.copy()
            S2.f_egress_rid = rid
            # each copy is a new packet in bmv2: not truncated, no recirculate flag; its length
            # register is the original's
            res.to_tm.append(PacketState(eport, S.f_priority & 7, H.copy(), M.copy(), S2, C.payload, n,
                                         -1, 0, n + C.dlen))
        if self.trace:
            self.trace(f"multicast group {mgid}: {len(replicas)} replicas")
        return res

    def _drop(self, res, reason: str):
        res.dropped = True
        res.drop_reason = reason
        if self.trace:
            self.trace(f"drop: {reason}")
        return res

    def _preserved(self, M, S, index: int) -> tuple | None:
        """(index, values) of the preserved fields of ``M`` and ``S``, or None (nothing)."""
        return (index, self.field_lists.get(index)[0](M, S)) if index >= 0 else None

    def _clone_ingress(self, res: IngressResult, data: bytes, port: int, now: int, C: Ctx, M, S) -> None:
        sid, index = C.clone
        sid &= CLONE_SESSION_MASK  # bmv2's 15 bits: clone(..., 32773) is session 5
        sess = self.state.pre.clone_session(sid)
        if sess is None:
            if self.trace:
                self.trace(f"clone session {sid} not configured: no ingress clone")
            return
        # bmv2 re-parses the original packet for the clone, then resets the metadata
        try:
            H2, _, _, C2 = self._parse(data, port, now, PKT_INSTANCE_INGRESS_CLONE, None)
        except AssertionFailed as e:  # bmv2 would stop; the clone is dropped, the packet goes on
            if self.trace:
                self.trace(f"ingress clone dropped: assertion failed: {e}")
            return
        self._clone_copies(res, sess, PKT_INSTANCE_INGRESS_CLONE, H2, self._preserved(M, S, index),
                           C2.payload, len(data), len(data))
        if self.trace:
            self.trace(f"ingress clone to session {sid}: {len(sess.replicas)} copies")

    def _clone_copies(self, res, sess, itype: int, H, preserved, payload: bytes, nbytes: int, plen: int) -> None:
        """Queue one clone per replica of ``sess``: copied H, fresh metadata holding only the
        ``preserved`` fields, then ``instance_type`` and ``egress_rid`` (set after the copy);
        ``plen``: their ``packet_length`` in egress."""
        put = self.field_lists.get(preserved[0])[1] if preserved is not None else None
        for eport, rid in sess.replicas:
            M2, S2 = self._M(), self._S()
            if put is not None:
                put(M2, S2, preserved[1])
            S2.f_instance_type = itype
            S2.f_egress_rid = rid
            # bmv2 queues a copy by its own standard_metadata.priority: 0, or what the field list
            # preserved (class_of_service, which would set it, is refused over P4Runtime)
            res.to_tm.append(PacketState(eport, S2.f_priority & 7, H.copy(), M2, S2, payload,
                                         nbytes, -1, sess.packet_length_bytes, plen))

    # ------------------------------------------------------------------ egress

    def egress(self, item: TmItem, now_us: int) -> EgressResult:
        """Egress, clone E2E, recirculate, computeChecksum, deparser."""
        try:
            res = self._egress(item, now_us, False)
        except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch
            return self._internal_error(EgressResult(), e)
        return EgressResult([Frame(item.egress_port, res)]) if res.__class__ is bytes else res

    def egress_frame(self, item: TmItem, now_us: int) -> bytes | EgressResult:
        """``egress`` for the packet loop: the frame's bytes when the result is exactly one frame on
        ``item.egress_port`` (no clone, no recirculation), else the ``EgressResult``.  In the bytes
        case the packet's header objects are finished with and are kept for reuse by
        ``ingress_item``: the caller must not read ``item``'s headers afterwards."""
        try:
            return self._egress(item, now_us, True)
        except Exception as e:  # noqa: BLE001 - one bad packet must never stop the switch
            return self._internal_error(EgressResult(), e)

    def _egress(self, item: TmItem, now_us: int, recycle: bool) -> bytes | EgressResult:
        st: PacketState = item.meta
        H, M, S = st.H, st.M, st.S
        S.f_egress_port = item.egress_port
        S.f_egress_spec = EGRESS_SPEC_IN_EGRESS
        S.f_packet_length = st.plen & _M32
        S.f_egress_global_timestamp = now_us & _M48
        S.f_enq_timestamp = item.enq_timestamp_us & _M32
        S.f_enq_qdepth = item.enq_qdepth & _M19
        S.f_deq_timedelta = item.deq_timedelta_us & _M32
        S.f_deq_qdepth = item.deq_qdepth & _M19
        if recycle:
            C = self._ctx_eg
            C.nbytes = st.nbytes
            C.ncount = st.nbytes + ONE_PACKET
            C.now = now_us
            C.clone = C.resubmit = C.digest = None
            C.off = C.checksum_error = C.dlen = 0
        else:
            C = Ctx(b"", st.nbytes, now_us, self._log)
        C.payload = st.payload
        C.truncate = st.truncate
        C.recirculate = st.recirc  # set in ingress: bmv2 recirculates after egress (the flag stays)
        trace = self.trace
        if trace:
            trace(f"egress: port {item.egress_port}, instance_type {S.f_instance_type}, rid {S.f_egress_rid}")
        b = self.blocks
        if b.egress is not None:
            try:
                b.egress(H, M, S, C)
            except AssertionFailed as e:
                return self._drop(EgressResult(), f"assertion failed: {e}")
        return self._egress_tail(item, st, H, M, S, C, recycle)

    def _egress_tail(self, item: TmItem, st: PacketState, H, M, S, C: Ctx, recycle: bool) -> bytes | EgressResult:
        """What follows the egress control: clone E2E, drop, computeChecksum, deparser, recirculate,
        truncation (the generated fast path hands over here for a clone or a drop)."""
        trace = self.trace
        b = self.blocks
        res = None
        if C.clone is not None:
            res = EgressResult()
            self._clone_egress(res, st, C, H, M, S)
        if S.f_egress_spec == DROP_PORT:
            return self._drop(res or EgressResult(), "mark_to_drop in egress")
        try:  # an assert/assume may fail in computeChecksum or the deparser too
            if b.compute_checksum is not None:
                b.compute_checksum(H, M, S, C)
            parts = b.deparser(H, M, S, C)
        except AssertionFailed as e:
            return self._drop(res or EgressResult(), f"assertion failed: {e}")
        if parts.__class__ is list:
            parts.append(st.payload)  # one join, no second copy of the frame
            out = b"".join(parts)
        else:
            out = b"".join(parts) + st.payload
        if C.recirculate is not None:
            idx = C.recirculate
            res = res or EgressResult()
            res.recirculate.append((out, (idx, self.field_lists.get(idx)[0](M, S))))
            if trace:
                trace(f"recirculate ({len(out)} bytes)")
            return res
        cut = C.truncate
        if st.clone_truncate and (cut < 0 or st.clone_truncate < cut):
            cut = st.clone_truncate
        if 0 <= cut < len(out):
            if not cut:  # bmv2 hands its port a frame of no bytes; there is nothing to put on a wire
                return self._drop(res or EgressResult(), "truncate(0): no bytes left to send")
            out = out[:cut]
        if trace:
            trace(f"transmit on port {item.egress_port}: {len(out)} bytes")
        if res is not None:
            res.frames.append(Frame(item.egress_port, out))
            return res
        if recycle and self._reset is not None and H.__class__ is self._H:
            # (an item queued before a pipeline swap holds the old program's classes: not reused)
            pool = self._pool
            if len(pool) < POOL_MAX:
                pool.append(st)  # the item itself, with its headers: ingress_item reuses both
        return out

    def _clone_egress(self, res: EgressResult, st: PacketState, C: Ctx, H, M, S) -> None:
        sid, index = C.clone
        sid &= CLONE_SESSION_MASK  # bmv2's 15 bits: clone(..., 32773) is session 5
        sess = self.state.pre.clone_session(sid)
        if sess is None:
            if self.trace:
                self.trace(f"clone session {sid} not configured: no egress clone")
            return
        self._clone_copies(res, sess, PKT_INSTANCE_EGRESS_CLONE, H, self._preserved(M, S, index),
                           st.payload, st.nbytes, st.plen + C.dlen)
        if self.trace:
            self.trace(f"egress clone to session {sid}: {len(sess.replicas)} copies")
