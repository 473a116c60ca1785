"""Read answers as protobuf wire bytes, built without message objects (docs/softswitch.md,
"Reads from kept encodings").

With pure-Python protobuf (the one p4runtime-shell 0.0.6 pins) answering a Read cost ~300 us of CPU
per entity, a third each building the Entity (a ``CopyFrom`` of the stored TableEntry), copying it
into the ReadResponse and serializing that; a leaf's counter poll (~300 entities) took ~90 ms of
the switch's CPU while its packet loop waited for the GIL.  An entry's TableEntry never changes in
place (a write stores a new message on the entry), so its encoding is kept with the entry, checked
by identity against ``entry.msg``; a Read of direct counters or entries joins those bytes with the
few varints that change between Reads.  The bytes are what ``SerializeToString`` writes (the same
fields, in field-number order: tests/softswitch/runtime/test_rt_read_wire.py compares them).
"""
from __future__ import annotations

from .counters import UNIT_BOTH, UNIT_BYTES, UNIT_PACKETS, unpack_cell

_U64 = 1 << 64
_I63 = 1 << 63
_SMALL = [bytes((n,)) for n in range(128)]

# tags (field number << 3 | wire type 2, length-delimited) of the fields written here
TAG_RESPONSE_ENTITY = b"\x0a"  # ReadResponse.entities = 1
TAG_TABLE_ENTRY = b"\x12"  # Entity.table_entry = 2
TAG_COUNTER_ENTRY = b"\x3a"  # Entity.counter_entry = 7
TAG_DIRECT_COUNTER_ENTRY = b"\x42"  # Entity.direct_counter_entry = 8


def varint(n: int) -> bytes:
    """The base-128 varint of ``0 <= n < 2**64``."""
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n >= 128:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(tag: bytes, body: bytes) -> bytes:
    """A length-delimited field: its tag, the body's length, the body."""
    n = len(body)
    return tag + (_SMALL[n] if n < 128 else varint(n)) + body


def int64(n: int) -> bytes:
    """The varint of an int64 value (a negative one as its 64-bit two's complement, 10 bytes, as
    protobuf writes it); the caller checks the range (``in_int64``)."""
    return varint(n + _U64 if n < 0 else n)


def in_int64(a: int, b: int) -> bool:
    """Whether both values fit an int64 (protobuf refuses others: the caller then takes the message
    path, which fails as it always did)."""
    return -_I63 <= a < _I63 and -_I63 <= b < _I63


def counter_data(unit: int, nbytes: int, npackets: int) -> bytes | None:
    """The CounterData field body ``fill_counter_data`` makes: only what the unit counts, zeros left
    out (proto3), b"" when both are 0 (the field is still set); None for a unit counting neither
    (the field is not set).  Both values must be ``in_int64``."""
    if unit == UNIT_BOTH:
        return (b"\x08" + int64(nbytes) if nbytes else b"") + (b"\x10" + int64(npackets) if npackets else b"")
    if unit == UNIT_BYTES:
        return b"\x08" + int64(nbytes) if nbytes else b""
    if unit == UNIT_PACKETS:
        return b"\x10" + int64(npackets) if npackets else b""
    return None


def table_entry_bytes(e) -> bytes:
    """The encoding of ``e.msg`` (an ``Entry``'s stored TableEntry), kept on the entry while that
    message is the entry's: a write that changes the entry stores a new message (never edits it)."""
    w = e.wire
    msg = e.msg
    if w is None or w[0] is not msg:
        w = e.wire = (msg, msg.SerializeToString())
    return w[1]


def direct_counter_entity(e, unit: int) -> bytes | None:
    """The Entity a direct counter Read answers for entry ``e`` (None: fall back to the messages)."""
    b, p = unpack_cell(e.cnt)
    if not in_int64(b, p):
        return None
    cd = counter_data(unit, b, p)
    body = field(b"\x0a", table_entry_bytes(e))
    if cd is not None:
        body += field(b"\x12", cd)
    return field(TAG_DIRECT_COUNTER_ENTRY, body)


def counter_entity(counter_id: int, index: int, unit: int, nbytes: int, npackets: int) -> bytes | None:
    """The Entity of one counter cell (CounterEntry with counter_id, index and data set)."""
    if not in_int64(nbytes, npackets) or not 0 <= index < _I63:
        return None
    cd = counter_data(unit, nbytes, npackets)
    body = b"\x08" + varint(counter_id) + field(b"\x12", b"\x08" + varint(index) if index else b"")
    if cd is not None:
        body += field(b"\x1a", cd)
    return field(TAG_COUNTER_ENTRY, body)
