"""Digests: the data plane emits learned tuples; they are batched into DigestList messages.

Semantics follow P4Runtime's ``DigestEntry.Config``: nothing is sent for a digest until the
controller inserts its config; a list is sent when it holds ``max_list_size`` distinct tuples (1
means every tuple is sent at once, 0 means no size limit) or when its oldest tuple is
``max_timeout_ns`` old (0: at once, as the spec's "max_timeout_ns set to 0"); a tuple already
pending or sent but not yet acknowledged is not queued again, until its list is acked
(``DigestListAck``) or ``ack_timeout_ns`` passes.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from . import bytestrings
from .errors import P4InfoError, exists, invalid, not_found


@dataclass(slots=True)
class DigestListOut:
    """One list ready for the stream: values are tuples of ints in the digest type's order."""

    digest_id: int
    list_id: int
    values: list[tuple[int, ...]]
    timestamp_ns: int


@dataclass(slots=True)
class _Digest:
    id: int
    name: str
    widths: tuple[int, ...]
    kind: str  # the P4Info type_spec: "bitstring", "struct" or "tuple" (a digest of a list)
    signed: tuple[bool, ...] = ()  # per member: an int<W> (two's complement on the wire)
    config: p4runtime_pb2.DigestEntry.Config | None = None
    pending: list[tuple[int, ...]] = field(default_factory=list)
    pending_since_ns: int = 0
    in_flight: dict[tuple[int, ...], int] = field(default_factory=dict)  # value -> list id
    unacked: dict[int, tuple[int, list[tuple[int, ...]]]] = field(default_factory=dict)  # list -> (sent ns, values)
    dropped: int = 0
    next_list_id: int = 1  # each digest numbers its lists from 1, as PI's DigestData does


def _layout(d: p4info_pb2.Digest, p4info: p4info_pb2.P4Info) -> tuple[tuple[int, ...], str, tuple[bool, ...]]:
    """(member widths, the type_spec kind, which members are int<W>: two's complement on the wire)."""
    spec = d.type_spec
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        specs = [spec]
    elif kind == "struct":
        st = p4info.type_info.structs.get(spec.struct.name)
        if st is None:
            raise P4InfoError(f"digest '{d.preamble.name}': struct '{spec.struct.name}' not in type_info")
        specs = [m.type_spec for m in st.members]
    elif kind == "tuple":
        specs = list(spec.tuple.members)
    else:
        raise P4InfoError(f"digest '{d.preamble.name}': unsupported type_spec {kind}")
    return (tuple(_bits(s, d.preamble.name, p4info) for s in specs), kind,
            tuple(s.WhichOneof("type_spec") == "bitstring" and s.bitstring.HasField("int") for s in specs))


# A plain enum or an error in a digest: bmv2 (p4c's JSON) holds it in a 32-bit field, the enum's
# member index or the error's number, and that is the bitstring a DigestList carries for it.
ENUM_DIGEST_WIDTH = 32


def _bits(spec: p4info_pb2.P4DataTypeSpec, name: str, p4info: p4info_pb2.P4Info) -> int:
    kind = spec.WhichOneof("type_spec")
    if kind in ("enum", "error"):
        return ENUM_DIGEST_WIDTH
    if kind == "bool":
        return 1
    if kind == "serializable_enum":
        se = p4info.type_info.serializable_enums.get(spec.serializable_enum.name)
        if se is None:
            raise P4InfoError(f"digest '{name}': serializable enum '{spec.serializable_enum.name}' "
                              "not in type_info")
        return se.underlying_type.bitwidth
    if kind != "bitstring":
        raise P4InfoError(f"digest '{name}': a {kind} member is not supported (bit<W>, int<W>, bool, "
                          "enums and error are)")
    bs = spec.bitstring
    w = bs.WhichOneof("type_spec")
    if w == "bit":
        return bs.bit.bitwidth
    if w == "int":
        return bs.int.bitwidth
    raise P4InfoError(f"digest '{name}': varbit members are not supported")


class DigestState:
    """All digests of a program. ``emit`` is called per packet; ``poll`` by the server's timer."""

    def __init__(self, p4info: p4info_pb2.P4Info, clock_ns: Callable[[], int] = time.monotonic_ns) -> None:
        self._lock = threading.Lock()
        self._clock = clock_ns
        self._digests: dict[int, _Digest] = {}
        for d in p4info.digests:
            self._digests[d.preamble.id] = _Digest(d.preamble.id, d.preamble.name, *_layout(d, p4info))
        self._sink: Callable[[DigestListOut], None] | None = None

    def set_sink(self, sink: Callable[[DigestListOut], None] | None) -> None:
        """Where finished lists go (the P4Runtime server's primary stream)."""
        self._sink = sink

    def ids(self) -> list[int]:
        return list(self._digests)

    def emit(self, digest_id: int, values: tuple[int, ...]) -> None:
        """Data plane: one ``digest(...)`` call. Unknown ids or unconfigured digests are dropped."""
        d = self._digests.get(digest_id)
        if d is None:
            return
        ready = []
        with self._lock:
            cfg = d.config
            if cfg is None:
                d.dropped += 1
                return
            now = self._clock()
            self._expire_acks(d, now)
            if values in d.in_flight or values in d.pending:
                return
            if not d.pending:
                d.pending_since_ns = now
            d.pending.append(values)
            # more than one list when a MODIFY lowered max_list_size under what was pending
            while d.pending and (cfg.max_timeout_ns <= 0 or
                                 (cfg.max_list_size and len(d.pending) >= cfg.max_list_size)):
                ready.append(self._take(d, now))
        for lst in ready:
            self._deliver(lst)

    def poll(self, now_ns: int | None = None) -> None:
        """Flush lists whose ``max_timeout_ns`` has passed and forget expired un-acked lists."""
        now = self._clock() if now_ns is None else now_ns
        out = []
        with self._lock:
            for d in self._digests.values():
                self._expire_acks(d, now)
                while d.pending and d.config is not None and now - d.pending_since_ns >= d.config.max_timeout_ns:
                    out.append(self._take(d, now))
        for lst in out:
            self._deliver(lst)

    def ack(self, digest_id: int, list_id: int) -> bool:
        """A ``DigestListAck``: its tuples may be reported again. False if the list is unknown."""
        with self._lock:
            d = self._digests.get(digest_id)
            if d is None or list_id not in d.unacked:
                return False
            _, values = d.unacked.pop(list_id)
            for v in values:
                if d.in_flight.get(v) == list_id:
                    del d.in_flight[v]
            return True

    def _take(self, d: _Digest, now: int) -> DigestListOut:
        """The next list: the pending messages, at most ``max_list_size`` of them (the spec's maximum
        list size; what stays keeps its first enqueue time)."""
        n = d.config.max_list_size if d.config is not None else 0
        if 0 < n < len(d.pending):
            values, d.pending = d.pending[:n], d.pending[n:]
        else:
            values, d.pending = d.pending, []
        lid = d.next_list_id
        d.next_list_id += 1
        assert d.config is not None
        d.unacked[lid] = (now, values)  # held while younger than the config's ack_timeout_ns (_expire_acks)
        for v in values:
            d.in_flight[v] = lid
        return DigestListOut(d.id, lid, values, time.time_ns())

    @staticmethod
    def _expire_acks(d: _Digest, now: int) -> None:
        if not d.unacked:
            return
        # the ack timeout in force now, as the spec's pseudo-code compares it ("now - sent_time >=
        # ack_timeout_ns(digest_id)"): a MODIFY that shortens it (to 0: "the cache must always be an
        # empty set") frees what was sent before; the deadline was fixed at send time until 2026-12-07
        ack = d.config.ack_timeout_ns if d.config is not None else 0
        for lid in [lid for lid, (sent, _) in d.unacked.items() if now - sent >= ack]:
            _, values = d.unacked.pop(lid)
            for v in values:
                if d.in_flight.get(v) == lid:
                    del d.in_flight[v]

    def _deliver(self, lst: DigestListOut) -> None:
        sink = self._sink
        if sink is not None:
            sink(lst)

    # ---- P4Runtime entities -------------------------------------------------------------------
    def to_proto(self, lst: DigestListOut) -> p4runtime_pb2.DigestList:
        """Encode a list as a ``DigestList``: P4Data ``struct`` or ``tuple`` as the digest's
        P4Info type_spec is, a ``bitstring`` for a bit<W> digest."""
        d = self._digests[lst.digest_id]
        msg = p4runtime_pb2.DigestList(digest_id=lst.digest_id, list_id=lst.list_id, timestamp=lst.timestamp_ns)
        def enc(i: int, x: int) -> bytes:
            return bytestrings.encode_signed(x, d.widths[i]) if d.signed[i] else bytestrings.encode(x)

        for v in lst.values:
            data = msg.data.add()
            if d.kind != "bitstring":
                members = data.struct.members if d.kind == "struct" else data.tuple.members
                for i, x in enumerate(v):
                    members.add(bitstring=enc(i, x))
            else:
                data.bitstring = enc(0, v[0])
        return msg

    def write(self, utype: int, entry: p4runtime_pb2.DigestEntry) -> None:
        d = self._digests.get(entry.digest_id)
        if d is None:
            raise not_found(f"digest id {entry.digest_id} is not in the P4Info")
        with self._lock:
            if utype == p4runtime_pb2.Update.DELETE:
                if d.config is None:
                    raise not_found(f"digest '{d.name}' has no config to delete")
                d.config = None
                d.pending.clear()
                d.in_flight.clear()
                d.unacked.clear()
                return
            if utype == p4runtime_pb2.Update.INSERT and d.config is not None:
                raise exists(f"digest '{d.name}' is already configured")
            if utype == p4runtime_pb2.Update.MODIFY and d.config is None:
                raise not_found(f"digest '{d.name}' is not configured")
            if not entry.HasField("config"):
                raise invalid(f"digest '{d.name}': config is required")
            c = entry.config
            if c.max_timeout_ns < 0 or c.ack_timeout_ns < 0 or c.max_list_size < 0:
                raise invalid(f"digest '{d.name}': config values must be >= 0")
            cfg = p4runtime_pb2.DigestEntry.Config()
            cfg.CopyFrom(c)
            d.config = cfg

    def read(self, entry: p4runtime_pb2.DigestEntry) -> list[p4runtime_pb2.Entity]:
        ids = sorted(i for i, d in self._digests.items() if d.config is not None)
        if entry.digest_id:
            d = self._digests.get(entry.digest_id)
            if d is None:
                raise not_found(f"digest id {entry.digest_id} is not in the P4Info")
            ids = [entry.digest_id] if d.config is not None else []
        out = []
        for i in ids:
            e = p4runtime_pb2.Entity()
            e.digest_entry.digest_id = i
            e.digest_entry.config.CopyFrom(self._digests[i].config)
            out.append(e)
        return out


def digest_values(data: p4data_pb2.P4Data) -> tuple[int, ...]:
    """Decode one DigestList data item back to ints (for tests and tools)."""
    if data.WhichOneof("data") == "bitstring":
        return (int.from_bytes(data.bitstring, "big"),)
    members = data.struct.members if data.WhichOneof("data") == "struct" else data.tuple.members
    return tuple(int.from_bytes(m.bitstring, "big") for m in members)
