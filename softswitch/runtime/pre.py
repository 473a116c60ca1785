"""Packet replication engine: multicast groups and clone sessions written over P4Runtime."""
from __future__ import annotations

from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from . import bytestrings
from .errors import exists, invalid, not_found, out_of_range, unimplemented

Replica = tuple[int, int]  # (egress port, instance a.k.a. egress_rid)

# bmv2's P4Runtime server (p4lang/PI proto/frontend, since PI #588 of 2023-04): multicast group
# ids and clone session ids are 1..32767. Group ids from 32768 up are PI's own, one per clone
# session; simple_switch keeps the top bit of its 16-bit mirror id for itself.
FIRST_RESERVED_GROUP_ID = 1 << 15
CLONE_SESSION_ID_LIMIT = 1 << 15  # session ids < this
PORT_MAX = (1 << 9) - 1  # v1model's bit<9> ports (bmv2's McSimplePre port map holds 512)


@dataclass(frozen=True, slots=True)
class CloneSession:
    """A clone session: where copies go, their class of service and truncation length (0 = none)."""

    replicas: tuple[Replica, ...]
    class_of_service: int
    packet_length_bytes: int


def _replicas(msgs, what: str) -> tuple[Replica, ...]:
    out: list[Replica] = []
    seen = set()
    for r in msgs:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            # a bytestring (spec "Bytestrings"): any zero-extended length is taken, an empty one is
            # OUT_OF_RANGE, as is a value past the port range (checked below)
            if not r.port:
                raise out_of_range(f"{what}: replica port is an empty bytestring")
            port = int.from_bytes(r.port, "big")
        elif kind == "egress_port":
            port = r.egress_port
        else:  # neither form (a oneof member set to 0 is still set): PI's "Missing port in ... replica"
            raise invalid(f"{what}: a replica without a port (set port, or the deprecated egress_port)")
        if port > PORT_MAX:  # bmv2's PRE has 512 ports; PI drops a larger one without a word
            raise out_of_range(f"{what}: replica port {port} does not fit v1model's egress_port (bit<9>, 0..{PORT_MAX})")
        if r.instance > 0xFFFF:  # spec "Replica": it must fit the target's instance type
            raise invalid(f"{what}: replica instance {r.instance} does not fit v1model's egress_rid (bit<16>)")
        rep = (port, r.instance)
        if rep in seen:
            raise invalid(f"{what}: duplicate replica (port {port}, instance {r.instance})")
        seen.add(rep)
        out.append(rep)
    return tuple(out)


class PacketReplicationEngine:
    """Data plane reads ``multicast_group``/``clone_session``; writes replace whole tuples."""

    def __init__(self) -> None:
        self._groups: dict[int, tuple[Replica, ...]] = {}
        self._group_msgs: dict[int, p4runtime_pb2.MulticastGroupEntry] = {}
        self._sessions: dict[int, CloneSession] = {}
        self._session_msgs: dict[int, p4runtime_pb2.CloneSessionEntry] = {}

    def multicast_group(self, gid: int) -> tuple[Replica, ...]:
        """Replicas of multicast group ``gid``; empty when the group does not exist."""
        return self._groups.get(gid, ())

    def clone_session(self, sid: int) -> CloneSession | None:
        """Clone session ``sid`` or None when it is not configured (the clone is dropped)."""
        return self._sessions.get(sid)

    def write(self, utype: int, entry: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
        kind = entry.WhichOneof("type")
        if kind == "multicast_group_entry":
            self._write_group(utype, entry.multicast_group_entry)
        elif kind == "clone_session_entry":
            self._write_session(utype, entry.clone_session_entry)
        else:
            raise invalid("PacketReplicationEngineEntry: no entry type set")

    def _write_group(self, utype: int, m: p4runtime_pb2.MulticastGroupEntry) -> None:
        gid = m.multicast_group_id
        what = f"multicast group {gid}"
        if gid == 0:
            raise invalid("multicast group id 0 is invalid")
        if gid >= FIRST_RESERVED_GROUP_ID:
            raise out_of_range(f"{what}: group ids are 1..{FIRST_RESERVED_GROUP_ID - 1}")
        present = gid in self._groups
        if utype == p4runtime_pb2.Update.DELETE:
            _check_presence(utype, present, what)
            del self._groups[gid]
            del self._group_msgs[gid]
            return
        _check_presence(utype, present, what)
        reps = _replicas(m.replicas, what)
        msg = p4runtime_pb2.MulticastGroupEntry()
        msg.CopyFrom(m)
        _canonical_ports(msg.replicas)
        self._group_msgs[gid] = msg
        self._groups[gid] = reps

    def _write_session(self, utype: int, m: p4runtime_pb2.CloneSessionEntry) -> None:
        """As PI's PreCloneMgr: id 0 INVALID_ARGUMENT, ids past 32767 INVALID_ARGUMENT (checked
        before presence), then presence; a class_of_service other than 0 is UNIMPLEMENTED. PI
        rewrites a MODIFY's replicas before it looks at the class of service, so a MODIFY with
        class 1..n changes the replicas and still fails, keeping the old class and length."""
        sid = m.session_id
        what = f"clone session {sid}"
        if sid == 0:
            raise invalid("clone session id 0 is invalid")
        if sid >= CLONE_SESSION_ID_LIMIT:
            raise invalid(f"{what}: session ids are 1..{CLONE_SESSION_ID_LIMIT - 1}")
        present = sid in self._sessions
        if utype == p4runtime_pb2.Update.DELETE:
            _check_presence(utype, present, what)
            del self._sessions[sid]
            del self._session_msgs[sid]
            return
        _check_presence(utype, present, what)
        reps = _replicas(m.replicas, what)
        if m.class_of_service != 0:
            if utype == p4runtime_pb2.Update.MODIFY:  # stored sessions all have class 0
                old = self._sessions[sid]
                msg = self._session_msgs[sid]
                del msg.replicas[:]
                msg.replicas.extend(m.replicas)
                _canonical_ports(msg.replicas)
                self._sessions[sid] = CloneSession(reps, old.class_of_service, old.packet_length_bytes)
            raise unimplemented(f"{what}: class_of_service other than 0 (bmv2's PI server)")
        if m.packet_length_bytes < 0:
            raise invalid(f"{what}: packet_length_bytes must be >= 0")
        msg = p4runtime_pb2.CloneSessionEntry()
        msg.CopyFrom(m)
        _canonical_ports(msg.replicas)
        self._session_msgs[sid] = msg
        self._sessions[sid] = CloneSession(reps, m.class_of_service, m.packet_length_bytes)

    def read(self, entry: p4runtime_pb2.PacketReplicationEngineEntry) -> list[p4runtime_pb2.Entity]:
        """Read one group/session, or all of a kind with id 0 (NOT_FOUND for a missing id)."""
        out: list[p4runtime_pb2.Entity] = []
        kind = entry.WhichOneof("type")
        if kind == "multicast_group_entry":
            gid = entry.multicast_group_entry.multicast_group_id
            if gid >= FIRST_RESERVED_GROUP_ID:  # PI: OUT_OF_RANGE, not NOT_FOUND
                raise out_of_range(f"multicast group {gid}: group ids are 1..{FIRST_RESERVED_GROUP_ID - 1}")
            if gid and gid not in self._group_msgs:
                raise not_found(f"multicast group {gid} does not exist")
            for g in sorted(self._group_msgs) if gid == 0 else [gid]:
                e = p4runtime_pb2.Entity()
                e.packet_replication_engine_entry.multicast_group_entry.CopyFrom(self._group_msgs[g])
                out.append(e)
        elif kind == "clone_session_entry":
            sid = entry.clone_session_entry.session_id
            if sid and sid not in self._session_msgs:
                raise not_found(f"clone session {sid} does not exist")
            for s in sorted(self._session_msgs) if sid == 0 else [sid]:
                e = p4runtime_pb2.Entity()
                e.packet_replication_engine_entry.clone_session_entry.CopyFrom(self._session_msgs[s])
                out.append(e)
        else:
            out += self.read(p4runtime_pb2.PacketReplicationEngineEntry(
                multicast_group_entry=p4runtime_pb2.MulticastGroupEntry()))
            out += self.read(p4runtime_pb2.PacketReplicationEngineEntry(
                clone_session_entry=p4runtime_pb2.CloneSessionEntry()))
        return out


def _canonical_ports(replicas) -> None:
    """Stored (read-back) replicas give a ``port`` bytestring in canonical form, whatever the write
    used (spec "Bytestrings": reads answer the shortest form); ``egress_port`` stays as written."""
    for r in replicas:
        if r.WhichOneof("port_kind") == "port":
            r.port = bytestrings.encode(int.from_bytes(r.port, "big"))


def _check_presence(utype: int, present: bool, what: str) -> None:
    """INSERT needs the entry absent, MODIFY and DELETE need it present (P4Runtime codes)."""
    if utype == p4runtime_pb2.Update.INSERT:
        if present:
            raise exists(f"{what} already exists")
    elif not present and utype in (p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE):
        raise not_found(f"{what} does not exist")
