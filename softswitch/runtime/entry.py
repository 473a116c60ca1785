"""A table entry as the data plane sees it (what ``TableState.lookup`` returns on a hit)."""
from __future__ import annotations

from p4.v1 import p4runtime_pb2

from .action_profiles import Group, Member
from .actions import NO_ACTION_ID
from .counters import pack_cell, unpack_cell
from .meters import TrTcm


class Entry:
    """One installed entry. ``hit`` is the precomputed lookup answer of a direct-action entry;
    indirect entries resolve their member/group per packet. ``cnt`` is the table's direct
    counter cell, packed as ``counters.pack_cell`` packs it (the data plane adds to it);
    ``counter`` reads or sets it as ``[bytes, packets]``; ``meter`` is the direct meter cell
    (None = default, GREEN)."""

    __slots__ = (
        "cnt",
        "group",
        "handle",
        "hit",
        "idle_seq",
        "is_const",
        "mask",
        "member",
        "meter",
        "msg",
        "notified_ns",
        "oneshot",
        "priority",
        "ranges",
        "rank",
        "since_ns",
        "spec",
        "value",
        "wire",
    )

    def __init__(self, spec: tuple, priority: int, rank: int) -> None:
        self.spec = spec
        self.priority = priority
        self.rank = rank  # lookup rank: P4Runtime priority (ties: the lower handle), or an LPM prefix length
        self.handle = 0  # its bmv2 entry handle (the table's lowest free number when inserted)
        self.hit: tuple | None = None
        self.member: Member | None = None
        self.group: Group | None = None
        self.oneshot = False
        self.cnt = 0
        self.meter: TrTcm | None = None
        self.msg = p4runtime_pb2.TableEntry()  # replaced, never changed in place, by a write
        self.wire: tuple | None = None  # (msg, its encoding): kept by ``wire.table_entry_bytes``
        self.is_const = False
        self.since_ns = 0  # last hit (monotonic ns; set at insert, then by the data plane of
        # idle-timeout tables on every hit)
        self.notified_ns = 0  # last IdleTimeoutNotification for this entry
        self.idle_seq = 0  # its live item in the table's idle-timeout heap (0: none)
        self.mask = 0
        self.value = 0
        self.ranges: tuple | None = None

    @property
    def counter(self) -> list[int]:
        """``[bytes, packets]`` of the direct counter cell (a copy: set it whole)."""
        return list(unpack_cell(self.cnt))

    @counter.setter
    def counter(self, value) -> None:
        self.cnt = pack_cell(value[0], value[1])

    def resolve(self, sel_hash: int) -> tuple[int, tuple[int, ...], Entry]:
        """Answer of an indirect entry: its member's action, or one member of its group."""
        m = self.member
        if m is not None:
            aid, args = m.result
            return aid, args, self
        choices = self.group.choices  # type: ignore[union-attr]
        if not choices:
            return NO_ACTION_ID, (), self  # bmv2: "lookup yielded empty group", no action runs
        aid, args = choices[sel_hash % len(choices)].result
        return aid, args, self

    def __repr__(self) -> str:
        return f"Entry(spec={self.spec!r}, priority={self.priority})"
