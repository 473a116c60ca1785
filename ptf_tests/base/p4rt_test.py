"""Generic P4Runtime test base for PTF (no knowledge of the MRC program).

Test parameters (``--test-params``): ``grpcaddr`` (host:port), ``device_id`` (1), ``p4info``
(text P4Info file; when absent it is read back from the switch), ``config`` (device config to
push with SetForwardingPipelineConfig; absent = keep the program the switch runs), ``target``
(a ``mrc_fabric.targets`` name), ``can_write_registers`` (1/0, the target's capability), ``election_id``
(default 1).

The client is the project's one P4Runtime client (``controller/p4rt.py``); a failed write raises its
``P4RuntimeError`` (a ``grpc.RpcError`` with the server's code and per-update errors).
Writes go through helpers that remember how to undo them; ``@autocleanup`` undoes them in
reverse order after the test, so every test leaves the switch as it found it.
"""
from __future__ import annotations

import functools
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass

import ptf
from base.p4info import P4Info, Value, encode_value, split_prefix
from p4.v1 import p4runtime_pb2
from ptf import testutils
from ptf.base_tests import BaseTest

from controller import p4rt
from mrc_fabric.targets import DEFAULT_TARGET, get_target

DEFAULT_TIMEOUT = 5.0


@dataclass
class PacketIn:
    """A PacketIn with its controller metadata decoded by name."""

    payload: bytes
    metadata: dict[str, int]


class P4RuntimeClient(p4rt.P4RuntimeClient):
    """The project's P4Runtime client (``controller/p4rt.py``) with the PTF tests' conventions:
    ``election_id`` as a Uint128 message, pipelines and P4Info as ``base.p4info.P4Info``."""

    def __init__(self, addr: str, device_id: int = 1, election_id: int = 1) -> None:
        super().__init__(addr, device_id, election_id, timeout_s=DEFAULT_TIMEOUT)
        self.addr = addr
        self.election_id = p4runtime_pb2.Uint128(high=election_id >> 64, low=election_id & ((1 << 64) - 1))

    def set_pipeline(self, p4info: P4Info, device_config: bytes) -> None:  # type: ignore[override]
        super().set_pipeline(p4info.info, device_config)

    def get_p4info(self) -> P4Info:  # type: ignore[override]
        info = super().get_p4info()
        if info is None:
            raise RuntimeError(f"{self.addr}: no pipeline set (give the 'p4info' and 'config' test parameters)")
        return P4Info(info)


class P4RuntimeTest(BaseTest):
    """PTF base test holding a P4Runtime session to the switch under test."""

    grpc_param = "grpcaddr"

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.target = testutils.test_param_get("target", DEFAULT_TARGET)
        # the target plugin (fabric/targets): tests ask its declared capabilities, never its name
        self.switch_target = get_target(self.target)
        self.can_write_registers = bool(int(testutils.test_param_get(
            "can_write_registers", int(self.switch_target.can_write_registers))))
        self.device_id = int(testutils.test_param_get("device_id", 1))
        self._undo: list[tuple[object, Callable[[], None]]] = []
        self.client = self.connect(self.grpc_param)
        self.p4info = self._load_pipeline(self.client)

    def connect(self, param: str) -> P4RuntimeClient:
        addr = testutils.test_param_get(param)
        if not addr:
            raise RuntimeError(f"test parameter {param!r} (host:port of the switch) is missing")
        election = int(testutils.test_param_get("election_id", 1))
        return P4RuntimeClient(addr, self.device_id, election)

    def _load_pipeline(self, client: P4RuntimeClient) -> P4Info:
        p4info_path = testutils.test_param_get("p4info")
        config_path = testutils.test_param_get("config")
        if config_path:
            if not p4info_path:
                raise RuntimeError("test parameter 'config' needs 'p4info'")
            p4info = P4Info.from_file(p4info_path)
            with open(config_path, "rb") as f:
                client.set_pipeline(p4info, f.read())
            return p4info
        if p4info_path:
            return P4Info.from_file(p4info_path)
        return client.get_p4info()

    def tearDown(self) -> None:
        try:
            self.undo_all()
        finally:
            self.client.close()
            BaseTest.tearDown(self)

    def undo_all(self) -> None:
        """Undo this test's writes, newest first; keep going past failures, report the first."""
        first_error: Exception | None = None
        while self._undo:
            _, undo = self._undo.pop()
            try:
                undo()
            except Exception as e:  # noqa: BLE001 -- report after undoing the rest
                first_error = first_error or e
        if first_error is not None:
            raise first_error

    # -- entity builders -------------------------------------------------------------------------
    def _match(self, table: str, match: dict[str, object]) -> list[p4runtime_pb2.FieldMatch]:
        fields = []
        for name, value in match.items():
            mf = self.p4info.match_field(table, name)
            fm = p4runtime_pb2.FieldMatch(field_id=mf.id)
            kind = mf.match_type
            if kind == mf.EXACT:
                fm.exact.value = encode_value(value, mf.bitwidth)
            elif kind == mf.LPM:
                addr, plen = split_prefix(value)
                fm.lpm.value = encode_value(_mask_prefix(addr, plen, mf.bitwidth), mf.bitwidth)
                fm.lpm.prefix_len = plen
            elif kind == mf.TERNARY:
                val, mask = value
                fm.ternary.value = encode_value(_to_int(val) & _to_int(mask), mf.bitwidth)
                fm.ternary.mask = encode_value(mask, mf.bitwidth)
            elif kind == mf.RANGE:
                low, high = value
                fm.range.low = encode_value(low, mf.bitwidth)
                fm.range.high = encode_value(high, mf.bitwidth)
            elif kind == mf.OPTIONAL:
                fm.optional.value = encode_value(value, mf.bitwidth)
            else:
                raise ValueError(f"unsupported match kind for {table}.{name}")
            fields.append(fm)
        return fields

    def _action(self, action: str, params: dict[str, Value] | None,
                table: str | None = None) -> p4runtime_pb2.Action:
        if table is not None:  # a short action name resolves among the table's own actions
            refs = {r.id for r in self.p4info.get("tables", table).action_refs}
            candidates = [a for a in self.p4info.info.actions if a.preamble.id in refs and (
                a.preamble.name == action or a.preamble.alias == action
                or a.preamble.name.endswith("." + action))]
            if len(candidates) == 1:
                action = candidates[0].preamble.name
        act = p4runtime_pb2.Action(action_id=self.p4info.get_id("actions", action))
        for name, value in (params or {}).items():
            p = self.p4info.action_param(action, name)
            act.params.add(param_id=p.id, value=encode_value(value, p.bitwidth))
        return act

    def table_entry(self, table: str, match: dict[str, object], action: str | None = None,
                    params: dict[str, Value] | None = None, priority: int = 0,
                    group_id: int | None = None) -> p4runtime_pb2.Entity:
        entity = p4runtime_pb2.Entity()
        te = entity.table_entry
        te.table_id = self.p4info.get_id("tables", table)
        te.match.extend(self._match(table, match))
        if priority:
            te.priority = priority
        if group_id is not None:
            te.action.action_profile_group_id = group_id
        elif action is not None:
            te.action.action.CopyFrom(self._action(action, params, table))
        return entity

    # -- writes with undo ----------------------------------------------------------------------------
    def insert(self, entity: p4runtime_pb2.Entity, client: P4RuntimeClient | None = None) -> None:
        client = client or self.client
        client.write(p4runtime_pb2.Update.INSERT, entity)
        key = _key_only(entity)
        self._undo.append((key, lambda: client.write(p4runtime_pb2.Update.DELETE, key)))

    def insert_table_entry(self, table: str, match: dict[str, object], action: str | None = None,
                           params: dict[str, Value] | None = None, priority: int = 0,
                           group_id: int | None = None,
                           client: P4RuntimeClient | None = None) -> p4runtime_pb2.Entity:
        entity = self.table_entry(table, match, action, params, priority, group_id)
        self.insert(entity, client)
        return entity

    def modify_table_entry(self, table: str, match: dict[str, object], action: str,
                           params: dict[str, Value] | None = None, priority: int = 0) -> None:
        self.client.write(p4runtime_pb2.Update.MODIFY,
                          self.table_entry(table, match, action, params, priority))

    def delete_table_entry(self, table: str, match: dict[str, object], priority: int = 0) -> None:
        """Delete an entry this test inserted (its undo is dropped)."""
        entity = self.table_entry(table, match, priority=priority)
        self.client.write(p4runtime_pb2.Update.DELETE, entity)
        self._undo = [(k, u) for k, u in self._undo if k != entity]

    def set_default_action(self, table: str, action: str, params: dict[str, Value] | None,
                           restore: tuple[str, dict[str, Value] | None],
                           client: P4RuntimeClient | None = None) -> None:
        """Modify a table's default action; ``restore`` is written back at cleanup."""
        client = client or self.client

        def entity_for(act: str, prm: dict[str, Value] | None) -> p4runtime_pb2.Entity:
            e = p4runtime_pb2.Entity()
            e.table_entry.table_id = self.p4info.get_id("tables", table)
            e.table_entry.is_default_action = True
            e.table_entry.action.action.CopyFrom(self._action(act, prm, table))
            return e

        client.write(p4runtime_pb2.Update.MODIFY, entity_for(action, params))
        self._undo.append((None, lambda: client.write(p4runtime_pb2.Update.MODIFY, entity_for(*restore))))

    def insert_action_profile_member(self, profile: str, member_id: int, action: str,
                                     params: dict[str, Value] | None = None) -> None:
        entity = p4runtime_pb2.Entity()
        m = entity.action_profile_member
        m.action_profile_id = self.p4info.get_id("action_profiles", profile)
        m.member_id = member_id
        m.action.CopyFrom(self._action(action, params))
        self.insert(entity)

    def insert_action_profile_group(self, profile: str, group_id: int, member_ids: list[int],
                                    max_size: int = 0) -> None:
        entity = p4runtime_pb2.Entity()
        g = entity.action_profile_group
        g.action_profile_id = self.p4info.get_id("action_profiles", profile)
        g.group_id = group_id
        g.max_size = max_size or max(len(member_ids), 1)
        for mid in member_ids:
            g.members.add(member_id=mid, weight=1)
        self.insert(entity)

    def insert_clone_session(self, session_id: int, ports: list[int], truncate: int = 0,
                             client: P4RuntimeClient | None = None) -> None:
        entity = p4runtime_pb2.Entity()
        cs = entity.packet_replication_engine_entry.clone_session_entry
        cs.session_id = session_id
        cs.packet_length_bytes = truncate
        for i, port in enumerate(ports):
            cs.replicas.add(egress_port=port, instance=i + 1)
        self.insert(entity, client)

    def write_register(self, register: str, index: int, value: int) -> None:
        """Write one register cell (bmv2's P4Runtime server answers UNIMPLEMENTED)."""
        reg = self.p4info.get("registers", register)
        width = reg.type_spec.bitstring.bit.bitwidth
        entity = p4runtime_pb2.Entity()
        entity.register_entry.register_id = reg.preamble.id
        entity.register_entry.index.index = index
        entity.register_entry.data.bitstring = encode_value(value, width)
        self.client.write(p4runtime_pb2.Update.MODIFY, entity)

    # -- reads -----------------------------------------------------------------------------------------
    def read_register(self, register: str, index: int) -> int:
        """Read one register cell."""
        entity = p4runtime_pb2.Entity()
        entity.register_entry.register_id = self.p4info.get_id("registers", register)
        entity.register_entry.index.index = index
        got = self.client.read(entity)
        if not got:
            raise AssertionError(f"register {register}[{index}] not returned by the switch")
        return int.from_bytes(got[0].register_entry.data.bitstring, "big")

    def read_counter(self, counter: str, index: int,
                     client: P4RuntimeClient | None = None) -> tuple[int, int]:
        """(packets, bytes) of one cell of an indirect counter."""
        entity = p4runtime_pb2.Entity()
        entity.counter_entry.counter_id = self.p4info.get_id("counters", counter)
        entity.counter_entry.index.index = index
        got = (client or self.client).read(entity)
        if not got:
            return 0, 0
        data = got[0].counter_entry.data
        return data.packet_count, data.byte_count

    def read_direct_counter(self, table_entity: p4runtime_pb2.Entity) -> tuple[int, int]:
        """(packets, bytes) of the direct counter of one table entry."""
        entity = p4runtime_pb2.Entity()
        entity.direct_counter_entry.table_entry.CopyFrom(_key_only(table_entity).table_entry)
        got = self.client.read(entity)
        if not got:
            return 0, 0
        data = got[0].direct_counter_entry.data
        return data.packet_count, data.byte_count

    def wait_counter(self, read: Callable[[], tuple[int, int]], packets: int,
                     timeout: float = DEFAULT_TIMEOUT) -> tuple[int, int]:
        """Poll a counter until it reaches ``packets`` (counters lag the data plane a little)."""
        deadline = time.monotonic() + timeout
        value = read()
        while value[0] < packets and time.monotonic() < deadline:
            time.sleep(0.02)
            value = read()
        return value

    # -- packet I/O --------------------------------------------------------------------------------------
    def send_packet_out(self, payload: bytes, **metadata: int) -> None:
        md = self.p4info.packet_metadata("packet_out")
        encoded = {md[name][0]: encode_value(value, md[name][1]) for name, value in metadata.items()}
        for mid, width in md.values():
            encoded.setdefault(mid, encode_value(0, width))
        self.client.send_packet_out(payload, encoded)

    def get_packet_in(self, timeout: float = DEFAULT_TIMEOUT,
                      client: P4RuntimeClient | None = None) -> PacketIn:
        client = client or self.client
        try:
            pkt = client.packet_ins.get(timeout=timeout)
        except queue.Empty:
            self.fail("no PacketIn received")
        md = {mid: name for name, (mid, _) in self.p4info.packet_metadata("packet_in").items()}
        return PacketIn(pkt.payload, {md[m.metadata_id]: int.from_bytes(m.value, "big")
                                      for m in pkt.metadata if m.metadata_id in md})

    def verify_no_packet_in(self, timeout: float = 0.5) -> None:
        try:
            pkt = self.client.packet_ins.get(timeout=timeout)
        except queue.Empty:
            return
        self.fail(f"unexpected PacketIn of {len(pkt.payload)} bytes")


def autocleanup(test: Callable) -> Callable:
    """Undo every write the test made, newest first, even when it fails."""
    @functools.wraps(test)
    def wrapper(self: P4RuntimeTest, *args, **kwargs):
        try:
            return test(self, *args, **kwargs)
        finally:
            self.undo_all()
    return wrapper


def _to_int(value: Value) -> int:
    return int.from_bytes(encode_value(value, 1 << 12), "big")


def _mask_prefix(addr: Value, plen: int, width: int) -> int:
    mask = ((1 << plen) - 1) << (width - plen) if plen else 0
    return _to_int(addr) & mask


def _key_only(entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity:
    """The same entity without its action/data, as DELETE and direct-counter reads want it."""
    e = p4runtime_pb2.Entity()
    e.CopyFrom(entity)
    kind = e.WhichOneof("entity")
    if kind == "table_entry":
        e.table_entry.ClearField("action")
    elif kind == "action_profile_group":
        del e.action_profile_group.members[:]
    elif kind == "action_profile_member":
        e.action_profile_member.ClearField("action")
    return e
