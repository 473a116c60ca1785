#!/usr/bin/env python3
"""The simple_switch_grpc stand-in's P4Runtime front: PI's answers where PI refuses what softswitch takes.

    pi_proxy.py -- SOFTSWITCH-ARGS...     (as the simple_switch_grpc stand-in runs it; README.md here)

It starts ``python -m softswitch SOFTSWITCH-ARGS`` with the gRPC server moved to a private loopback port,
waits until that answers, then serves P4Runtime on the address bmv2 would listen on (the target option
``--grpc-server-addr``, default 0.0.0.0:9559), forwarding every RPC (the StreamChannel both ways) as
raw bytes and answering, instead of softswitch, what bmv2's PI server refuses (p4lang/PI
proto/frontend/src/device_mgr.cpp, DeviceMgrImp::read_one_ / write_ and the per-entity helpers;
p4lang/PI proto/frontend/src/pre_clone_mgr.cpp; p4lang/behavioral-model PI/src/pi_clone_imp.cpp):

* a Read stops at the first entity PI refuses: what the entities before it read is sent, then the
  RPC ends with PI's code and message (RegisterEntry, ValueSetEntry, a DirectCounterEntry or
  DirectMeterEntry with table_id 0, an ExternEntry or an empty entity);
* a Write answers per update as PI's P4ErrorReporter does: UNKNOWN with an empty message and one
  ``p4.v1.Error`` per update in ``grpc-status-details-bin`` (refused ones with their code, PI's
  message and space "ALL-sswitch-p4org"); refused updates are not sent to softswitch (RegisterEntry,
  ValueSetEntry, ExternEntry, an empty entity, a wildcard CounterEntry/MeterEntry write, a new clone
  session with packet_length_bytes or class_of_service); a clone session MODIFY with either is sent
  without them (PI has changed the replicas when it refuses the rest) and answered as PI does;
  atomicity other than CONTINUE_ON_ERROR is UNIMPLEMENTED with PI's message;
* counters count packets and bytes whatever their P4 type (bmv2's PI target marks both values valid,
  PI/src/pi_counter_imp.cpp): the P4Info pushed to softswitch declares every counter and direct
  counter packets_and_bytes, and GetForwardingPipelineConfig answers with the P4Info as pushed; a
  MODIFY of a packets-only (bytes-only) cell keeps its bytes (packets), a DELETE zeroes the cell;
* PI's server checks no device id: another one is a device without a pipeline (FAILED_PRECONDITION,
  PERMISSION_DENIED for a Write with an election id, UNKNOWN for SetForwardingPipelineConfig), and
  a Read, Write or GetForwardingPipelineConfig before any SetForwardingPipelineConfig is
  FAILED_PRECONDITION (also when softswitch was started with a program); without
  --device-id the switch is device 0, as bmv2;
* Reads, Writes and SetForwardingPipelineConfig take turns as PI's AccessArbitration makes them
  (proto/frontend/src/access_arbitration.cpp): a Read waits for the Writes in progress and a Write
  for the Reads, and a SetForwardingPipelineConfig waits for both and holds both back, so a Read is
  never overtaken by a pipeline change (softswitch answers that ABORTED; PI never does); a Read's
  answer is read whole in its turn and sent after it, as PI sends the answer it built.  PI lets
  Writes to different P4 objects run side by side; here every Write may run beside another.

Each injected answer is logged to $STANDIN_LOG.  It dies with the switch: SIGTERM/SIGINT stop both
(softswitch first, then this process at once, with no graceful gRPC shutdown), softswitch gets SIGKILL
if this process is killed (PR_SET_PDEATHSIG), and this one exits when softswitch exits, with its code.
STANDIN_PI=0 in the environment makes the stand-in run softswitch alone.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2 as pb

SPACE = "ALL-sswitch-p4org"  # P4ErrorReporter::push_back (device_mgr.cpp)
DETAILS_KEY = "grpc-status-details-bin"
SERVICE = "/p4.v1.P4Runtime/"

# PI's words, device_mgr.cpp unless said otherwise
MSG_DC_ALL = "Reading all direct counters for ALL tables is not supported yet"
MSG_DM_ALL = "Reading all direct meters for ALL tables is not supported yet"
MSG_REG_READ = "Register reads are not supported yet"
MSG_REG_WRITE = "Register writes are not supported yet"
MSG_VS_READ = "ValueSet reads are not supported yet"
MSG_VS_WRITE = "ValueSet writes are not supported yet"
MSG_ENTITY = "Incorrect entity type"
MSG_ATOMIC = "Support for atomic write modes has not been implemented yet"
MSG_CTR_WILDCARD = "Wildcard write is not supported for indirect counters yet"
MSG_METER_WILDCARD = "Wildcard write is not supported for indirect meters yet"
# pre_clone_mgr.cpp PreCloneMgr::session_set: bmv2's _pi_clone_session_set returns
# PI_STATUS_NOT_IMPLEMENTED_BY_TARGET for max_packet_length != 0 (behavioral-model PI/src/pi_clone_imp.cpp)
MSG_CLONE_TARGET = "Error when creating clone session in target"
MSG_CLONE_COS = "COS for clone sessions not supported yet"
# proto/server/pi_server.cpp: no_pipeline_config_status(), not_master_status()
MSG_NO_PIPELINE = "No forwarding pipeline config set for this device"
MSG_NOT_PRIMARY = "Not master"

_F_UPDATES = pb.WriteRequest.DESCRIPTOR.fields_by_name["updates"].number
_F_ENTITY = pb.Update.DESCRIPTOR.fields_by_name["entity"].number
_ENTITY_NO = {f.number: f.name for f in pb.Entity.DESCRIPTOR.fields}
# entities a Write forwards without a look inside (PI refuses none of them where softswitch takes them)
_PASS = {"table_entry", "action_profile_member", "action_profile_group", "direct_meter_entry",
         "digest_entry"}
_BOTH = p4info_pb2.CounterSpec.BOTH


# ---------------------------------------------------------------- protobuf wire scanning (no parse)
def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf: bytes, i: int = 0, end: int | None = None):
    """(field number, wire type, start of the field's tag, start of its value, end) for each field."""
    end = len(buf) if end is None else end
    while i < end:
        start = i
        key, i = _varint(buf, i)
        no, wt = key >> 3, key & 7
        if wt == 0:
            _, j = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            j = i + n
        elif wt == 1:
            j = i + 8
        elif wt == 5:
            j = i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield no, wt, start, i, j
        i = j


def _entity_kind(buf: bytes, i: int, end: int) -> str | None:
    kind = None
    for no, _wt, _s, _v, _e in _fields(buf, i, end):
        kind = _ENTITY_NO.get(no, kind)  # the last member of the oneof wins, as in a parse
    return kind


# ---------------------------------------------------------------- what PI refuses
def read_refusal(ent: pb.Entity) -> tuple[int, str] | None:
    """(code, message) PI answers to this entity of a ReadRequest, where softswitch would read it."""
    kind = ent.WhichOneof("entity")
    if kind == "register_entry":
        return code_pb2.UNIMPLEMENTED, MSG_REG_READ
    if kind == "value_set_entry":
        return code_pb2.UNIMPLEMENTED, MSG_VS_READ
    if kind in (None, "extern_entry"):
        return code_pb2.UNKNOWN, MSG_ENTITY
    if kind == "direct_counter_entry":
        dce = ent.direct_counter_entry
        if dce.HasField("table_entry") and dce.table_entry.table_id == 0:
            return code_pb2.UNIMPLEMENTED, MSG_DC_ALL
    if kind == "direct_meter_entry":
        dme = ent.direct_meter_entry
        if dme.HasField("table_entry") and dme.table_entry.table_id == 0:
            return code_pb2.UNIMPLEMENTED, MSG_DM_ALL
    return None


def write_refusal(up: pb.Update, counters: set[int], meters: set[int]) -> tuple[int, str] | None:
    """(code, message) PI answers to this update of a WriteRequest, where softswitch would take it."""
    ent = up.entity
    kind = ent.WhichOneof("entity")
    if kind == "register_entry":
        return code_pb2.UNIMPLEMENTED, MSG_REG_WRITE
    if kind == "value_set_entry":
        return code_pb2.UNIMPLEMENTED, MSG_VS_WRITE
    if kind == "extern_entry":
        return code_pb2.UNIMPLEMENTED, ""  # write_: status.set_code(UNIMPLEMENTED), no message
    if kind is None:
        return code_pb2.UNKNOWN, MSG_ENTITY
    if kind == "counter_entry":  # after PI's id check: an unknown id is softswitch's to answer
        c = ent.counter_entry
        if c.counter_id in counters and not c.HasField("index"):
            return code_pb2.UNIMPLEMENTED, MSG_CTR_WILDCARD
    if kind == "meter_entry":
        m = ent.meter_entry
        if m.meter_id in meters and not m.HasField("index"):
            return code_pb2.UNIMPLEMENTED, MSG_METER_WILDCARD
    return None


def clone_session_refusal(up: pb.Update) -> tuple[int, str] | None:
    """What bmv2's PI answers to a clone session INSERT or MODIFY asking for a class of service or a
    truncation, once the session's id and existence have passed PI's checks (PreCloneMgr::session_set,
    via session_create, and via session_modify when the two differ from the session's, which on bmv2
    are always 0): the class of service first, then the target's refusal of max_packet_length."""
    ent = up.entity
    if (up.type not in (pb.Update.INSERT, pb.Update.MODIFY)
            or ent.WhichOneof("entity") != "packet_replication_engine_entry"
            or not ent.packet_replication_engine_entry.HasField("clone_session_entry")):
        return None
    cs = ent.packet_replication_engine_entry.clone_session_entry
    if cs.session_id == 0:
        return None
    if cs.class_of_service != 0:
        return code_pb2.UNIMPLEMENTED, MSG_CLONE_COS
    if cs.packet_length_bytes != 0:
        return code_pb2.UNKNOWN, MSG_CLONE_TARGET
    return None


def _without_clone_config(up: pb.Update) -> bytes:
    """The update with the clone session's class of service and truncation cleared, re-encoded: a
    MODIFY PI refuses has changed the session's replicas already (session_modify: group_modify first)."""
    cs = up.entity.packet_replication_engine_entry.clone_session_entry
    cs.packet_length_bytes = 0
    cs.class_of_service = 0
    return up.SerializeToString()


def _counter_delete_as_pi(up: pb.Update) -> bytes | None:
    """A CounterEntry / DirectCounterEntry DELETE as PI applies it: both values of the cell zeroed
    (device_mgr.cpp counter_write / direct_counter_write); softswitch refuses a DELETE."""
    kind = up.entity.WhichOneof("entity")
    if up.type != pb.Update.DELETE or kind not in ("counter_entry", "direct_counter_entry"):
        return None
    up.type = pb.Update.MODIFY
    data = getattr(up.entity, kind).data
    data.Clear()
    data.SetInParent()
    return up.SerializeToString()


def _tagged(no: int, payload: bytes) -> bytes:
    out = bytearray()
    for v in ((no << 3) | 2, len(payload)):
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                break
    return bytes(out) + payload


# ---------------------------------------------------------------- the proxy
class Arbitration:
    """PI's AccessArbitration between RPCs (access_arbitration.cpp): reads exclude writes, writes
    exclude reads, a pipeline update excludes both and waits for them to end."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self.reads = self.writes = self.updates = 0

    @contextlib.contextmanager
    def _access(self, kind: str, ready) -> Iterator[None]:
        with self._cv:
            self._cv.wait_for(ready)
            setattr(self, kind, getattr(self, kind) + 1)
        try:
            yield
        finally:
            with self._cv:
                setattr(self, kind, getattr(self, kind) - 1)
                self._cv.notify_all()

    def read(self):
        return self._access("reads", lambda: self.writes == 0 and self.updates == 0)

    def write(self):
        return self._access("writes", lambda: self.reads == 0 and self.updates == 0)

    def update(self):
        return self._access("updates", lambda: self.reads == 0 and self.writes == 0 and self.updates == 0)


class PiProxy:
    def __init__(self, upstream: str, log_path: str | None = None, label: str = "", device_id: int = 0) -> None:
        self.upstream = upstream
        self.device_id = device_id
        self._config_set = False  # a SetForwardingPipelineConfig reached PI's device manager
        self.log_path = log_path
        self.label = label
        self._log_lock = threading.Lock()
        self.channel = grpc.insecure_channel(upstream, options=[("grpc.max_receive_message_length", -1),
                                                                ("grpc.max_send_message_length", -1)])
        self._uu = {m: self.channel.unary_unary(SERVICE + m) for m in
                    ("Write", "SetForwardingPipelineConfig", "GetForwardingPipelineConfig", "Capabilities")}
        self._read = self.channel.unary_stream(SERVICE + "Read")
        self._stream = self.channel.stream_stream(SERVICE + "StreamChannel")
        self.counters: set[int] = set()  # indexed counter / meter ids of the pushed P4Infos
        self.meters: set[int] = set()
        self.units: dict[tuple[str, int], int] = {}  # (kind, id) -> unit as pushed, where not BOTH
        self.direct_by_table: dict[int, int] = {}  # table id -> its direct counter's id
        self.injected = 0
        self.access = Arbitration()

    def log(self, what: str) -> None:
        self.injected += 1
        if not self.log_path:
            return
        with self._log_lock, open(self.log_path, "a") as f:
            f.write(f"{time.time():.6f} pi-proxy {self.label}: {what}\n")

    @staticmethod
    def _timeout(context) -> float | None:
        t = context.time_remaining()
        return None if t is None or t > 1e8 else max(0.0, t)

    @staticmethod
    def _relay(context, err: grpc.RpcError):
        md = [(k, v) for k, v in (err.trailing_metadata() or ()) if k == DETAILS_KEY]
        if md:
            context.set_trailing_metadata(md)
        context.abort(err.code(), err.details() or "")

    # ---- unary
    def capabilities(self, req: bytes, context) -> bytes:
        try:
            return self._uu["Capabilities"](req, timeout=self._timeout(context))
        except grpc.RpcError as e:
            self._relay(context, e)

    def _other_device(self, context, rpc: str, device_id: int, code, message: str) -> None:
        """PI's server checks no device id of its own: another id is another (empty) device there."""
        if device_id != self.device_id:
            self.log(f"{rpc} for device id {device_id} (the switch's is {self.device_id}): "
                     f"{code.name} {message!r}")
            context.abort(code, message)

    def set_pipeline(self, req: bytes, context) -> bytes:
        msg = pb.SetForwardingPipelineConfigRequest.FromString(req)
        # the target cannot be assigned a device it is not (device_mgr.cpp pipeline_config_set)
        self._other_device(context, "SetForwardingPipelineConfig", msg.device_id, grpc.StatusCode.UNKNOWN,
                           "Error when trying to assign device")
        info = msg.config.p4info
        units: dict[tuple[str, int], int] = {}
        for kind, items in (("counters", info.counters), ("direct_counters", info.direct_counters)):
            for c in items:
                if c.spec.unit != _BOTH:
                    units[(kind, c.preamble.id)] = c.spec.unit
                    c.spec.unit = _BOTH  # bmv2 counts both, and PI reports both (see the module doc)
        try:
            with self.access.update():  # after the Reads and Writes in progress, before any that come
                out = self._uu["SetForwardingPipelineConfig"](msg.SerializeToString() if units else req,
                                                              timeout=self._timeout(context))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.PERMISSION_DENIED:
                self._config_set = True  # PI made the device's manager before the config failed
            self._relay(context, e)
        self._config_set = True
        self.units.update(units)
        self.counters |= {c.preamble.id for c in info.counters}
        self.direct_by_table.update({c.direct_table_id: c.preamble.id for c in info.direct_counters})
        self.meters |= {m.preamble.id for m in info.meters}
        return out

    def get_pipeline(self, req: bytes, context) -> bytes:
        msg = pb.GetForwardingPipelineConfigRequest.FromString(req)
        self._other_device(context, "GetForwardingPipelineConfig", msg.device_id,
                           grpc.StatusCode.FAILED_PRECONDITION, MSG_NO_PIPELINE)
        if not self._config_set:  # pi_server.cpp: no device manager yet
            self.log(f"GetForwardingPipelineConfig before any pipeline: FAILED_PRECONDITION {MSG_NO_PIPELINE!r}")
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, MSG_NO_PIPELINE)
        try:
            out = self._uu["GetForwardingPipelineConfig"](req, timeout=self._timeout(context))
        except grpc.RpcError as e:
            self._relay(context, e)
        if not self.units:
            return out
        resp = pb.GetForwardingPipelineConfigResponse.FromString(out)
        info = resp.config.p4info
        changed = False
        for kind, items in (("counters", info.counters), ("direct_counters", info.direct_counters)):
            for c in items:
                unit = self.units.get((kind, c.preamble.id))
                if unit is not None and c.spec.unit == _BOTH:
                    c.spec.unit = unit
                    changed = True
        return resp.SerializeToString() if changed else out

    def write(self, req: bytes, context) -> bytes:
        with self.access.write():
            return self._write(req, context)

    def _write(self, req: bytes, context) -> bytes:
        head = bytearray()  # every field but the updates, as sent
        updates: list[tuple[int, int]] = []  # (start, end) of each update's value
        for no, _wt, start, vstart, end in _fields(req):
            if no == _F_UPDATES:
                updates.append((vstart, end))
            else:
                head += req[start:end]
        header = pb.WriteRequest.FromString(bytes(head))
        if header.device_id != self.device_id:  # pi_server.cpp Write: no stream of that device is primary
            if header.HasField("election_id"):
                self._other_device(context, "Write", header.device_id, grpc.StatusCode.PERMISSION_DENIED,
                                   MSG_NOT_PRIMARY)
            self._other_device(context, "Write", header.device_id, grpc.StatusCode.FAILED_PRECONDITION,
                               MSG_NO_PIPELINE)
        atomicity = header.atomicity
        if not self._config_set or atomicity != pb.WriteRequest.CONTINUE_ON_ERROR:
            # PI's server checks the primary, then the device's manager (made by the first
            # SetForwardingPipelineConfig, whatever softswitch was started with), then the mode
            probe = pb.WriteRequest()
            probe.CopyFrom(header)
            probe.atomicity = pb.WriteRequest.CONTINUE_ON_ERROR
            try:
                self._uu["Write"](probe.SerializeToString(), timeout=self._timeout(context))
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.PERMISSION_DENIED or self._config_set:
                    self._relay(context, e)
            if not self._config_set:
                self.log(f"Write before any pipeline: FAILED_PRECONDITION {MSG_NO_PIPELINE!r}")
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, MSG_NO_PIPELINE)
            self.log(f"Write: UNIMPLEMENTED {MSG_ATOMIC!r}")
            context.abort(grpc.StatusCode.UNIMPLEMENTED, MSG_ATOMIC)
        # per update: None (softswitch answers), ("refuse", code, message) (not sent to softswitch) or
        # ("after", code, message) (sent; PI's answer unless softswitch refuses it first)
        results: list[tuple | None] = []
        forward: list[bytes] = []
        changed = False
        for vstart, end in updates:
            kind = None
            for no, _wt, _s, evs, ee in _fields(req, vstart, end):
                if no == _F_ENTITY:
                    kind = _entity_kind(req, evs, ee)
            if kind in _PASS:
                results.append(None)
                forward.append(req[vstart:end])
                continue
            up = pb.Update.FromString(req[vstart:end])
            refusal = write_refusal(up, self.counters, self.meters)
            clone = clone_session_refusal(up) if refusal is None else None
            if clone is not None and up.type == pb.Update.INSERT and not self._clone_session_exists(up, context):
                refusal = clone  # PI creates nothing (the session's multicast group is undone)
            if refusal is not None:
                results.append(("refuse", *refusal))
                changed = True
            elif clone is not None and up.type == pb.Update.MODIFY:
                results.append(("after", *clone))
                forward.append(_without_clone_config(up))
                changed = True
            else:  # (an INSERT of an existing session: softswitch's ALREADY_EXISTS, as PI's)
                results.append(None)
                as_pi = _counter_delete_as_pi(up) or self._counter_write_as_pi(up, context)
                changed |= as_pi is not None
                forward.append(req[vstart:end] if as_pi is None else as_pi)
        body = req if not changed else bytes(head) + b"".join(_tagged(_F_UPDATES, u) for u in forward)
        upstream_errors: list | None = None
        try:
            out = self._uu["Write"](body, timeout=self._timeout(context))
        except grpc.RpcError as e:
            upstream_errors = _batch_details(e, len(forward))
            if upstream_errors is None:  # a whole-RPC error (primary, pipeline, ...): PI's checks come first
                self._relay(context, e)
        if upstream_errors is None and all(r is None for r in results):
            return out
        status = status_pb2.Status(code=code_pb2.UNKNOWN)  # P4ErrorReporter::get_status: no message
        up_iter = iter(upstream_errors or [])
        for i, r in enumerate(results):
            err = None
            if r is None or r[0] == "after":
                err = next(up_iter, None) or pb.Error()
                if err.canonical_code != code_pb2.OK and not err.space:
                    err.space = SPACE
            if r is not None and (err is None or err.canonical_code == code_pb2.OK):
                err = pb.Error(canonical_code=r[1], message=r[2], space=SPACE)
                self.log(f"Write update {i}: {code_pb2.Code.Name(r[1])} {r[2]!r}")
            status.details.add().Pack(err)
        context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
        context.abort(grpc.StatusCode.UNKNOWN, "")

    def _counter_write_as_pi(self, up: pb.Update, context) -> bytes | None:
        """A MODIFY of a packets-only (bytes-only) counter cell keeps the cell's byte (packet) count, as
        bmv2's PI target merges a value PI marks valid for the counter's unit only with the current one
        (pi_counter_imp.cpp, merge_current_value); softswitch counts both here, so the other value is
        read first and written back.  None if the update is not such a write."""
        kind = up.entity.WhichOneof("entity")
        if up.type != pb.Update.MODIFY or kind not in ("counter_entry", "direct_counter_entry"):
            return None
        ent = getattr(up.entity, kind)
        if kind == "counter_entry":
            unit = self.units.get(("counters", ent.counter_id))
            if not ent.HasField("index"):
                return None
        else:
            unit = self.units.get(("direct_counters", self._direct_counter_id(ent.table_entry.table_id)))
            if not ent.table_entry.match and not ent.table_entry.is_default_action:
                return None
        if unit is None or not ent.HasField("data"):
            return None
        probe = pb.ReadRequest(device_id=self.device_id)
        probe.entities.add().CopyFrom(up.entity)
        getattr(probe.entities[0], kind).ClearField("data")
        try:
            got = [e for r in self._read(probe.SerializeToString(), timeout=self._timeout(context))
                   for e in pb.ReadResponse.FromString(r).entities]
        except grpc.RpcError:
            return None  # softswitch answers the write itself (unknown entry, index out of range...)
        if len(got) != 1:
            return None
        now = getattr(got[0], kind).data
        if unit == p4info_pb2.CounterSpec.PACKETS:
            ent.data.byte_count = now.byte_count
        else:
            ent.data.packet_count = now.packet_count
        return up.SerializeToString()

    def _clone_session_exists(self, up: pb.Update, context) -> bool:
        probe = pb.ReadRequest(device_id=self.device_id)
        cs = probe.entities.add().packet_replication_engine_entry.clone_session_entry
        cs.session_id = up.entity.packet_replication_engine_entry.clone_session_entry.session_id
        try:
            return any(pb.ReadResponse.FromString(r).entities
                       for r in self._read(probe.SerializeToString(), timeout=self._timeout(context)))
        except grpc.RpcError:
            return False  # NOT_FOUND (or no pipeline: the Write will say so)

    def _direct_counter_id(self, table_id: int) -> int:
        return self.direct_by_table.get(table_id, 0)

    # ---- server streaming
    def read(self, req: bytes, context):
        msg = pb.ReadRequest.FromString(req)
        self._other_device(context, "Read", msg.device_id, grpc.StatusCode.FAILED_PRECONDITION, MSG_NO_PIPELINE)
        if not self._config_set:
            self.log(f"Read before any pipeline: FAILED_PRECONDITION {MSG_NO_PIPELINE!r}")
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, MSG_NO_PIPELINE)
        refused = None
        for i, ent in enumerate(msg.entities):
            r = read_refusal(ent)
            if r is not None:
                refused = (i, *r)
                break
        body = req
        if refused is not None:
            del msg.entities[refused[0]:]
            body = msg.SerializeToString()
        # read whole under the read access, sent after it: PI builds its answer holding the access and
        # sends it after, so a client that reads its answer slowly holds back no Write or push
        got: list[bytes] = []
        failed = None
        with self.access.read():
            try:
                got.extend(self._read(body, timeout=self._timeout(context)))  # (what came before a failure too)
            except grpc.RpcError as e:
                failed = e
        yield from got
        if failed is not None:
            self._relay(context, failed)
        if refused is not None:
            i, code, message = refused
            self.log(f"Read entity {i}: {code_pb2.Code.Name(code)} {message!r}")
            context.abort(_grpc_code(code), message)

    # ---- bidirectional
    def stream_channel(self, request_iterator, context):
        call = self._stream(request_iterator)
        context.add_callback(call.cancel)
        try:
            yield from call
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.CANCELLED and not context.is_active():
                return
            self._relay(context, e)

    def handler(self) -> grpc.GenericRpcHandler:
        methods = {
            "Write": grpc.unary_unary_rpc_method_handler(self.write),
            "SetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(self.set_pipeline),
            "GetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(self.get_pipeline),
            "Capabilities": grpc.unary_unary_rpc_method_handler(self.capabilities),
            "Read": grpc.unary_stream_rpc_method_handler(self.read),
            "StreamChannel": grpc.stream_stream_rpc_method_handler(self.stream_channel),
        }
        return grpc.method_handlers_generic_handler("p4.v1.P4Runtime", methods)


_GRPC_CODES = {c.value[0]: c for c in grpc.StatusCode}


def _grpc_code(code: int) -> grpc.StatusCode:
    return _GRPC_CODES.get(code, grpc.StatusCode.UNKNOWN)


def _batch_details(err: grpc.RpcError, n: int) -> list[pb.Error] | None:
    """The per-update errors of a Write softswitch answered UNKNOWN with one detail per update."""
    if err.code() != grpc.StatusCode.UNKNOWN:
        return None
    raw = next((v for k, v in (err.trailing_metadata() or ()) if k == DETAILS_KEY), None)
    if raw is None:
        return None
    status = status_pb2.Status.FromString(raw)
    if len(status.details) != n:
        return None
    out = []
    for a in status.details:
        e = pb.Error()
        if not a.Unpack(e):
            return None
        out.append(e)
    return out


# ---------------------------------------------------------------- process: softswitch behind the proxy
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def softswitch_argv(args: list[str], private: str) -> tuple[list[str], str]:
    """softswitch's command line with its gRPC address replaced by ``private``; the public address."""
    args = list(args)
    public = "0.0.0.0:9559"  # simple_switch_grpc's default
    if "--" not in args:
        args.append("--")
    cut = args.index("--")
    target = args[cut + 1:]
    for i, a in enumerate(target):
        if a == "--grpc-server-addr" and i + 1 < len(target):
            public = target[i + 1]
            target[i + 1] = private
            break
        if a.startswith("--grpc-server-addr="):
            public = a.split("=", 1)[1]
            target[i] = f"--grpc-server-addr={private}"
            break
    else:
        target = ["--grpc-server-addr", private, *target]
    return [*args[:cut + 1], *target], public


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    private_port = _free_port()
    ss_args, public = softswitch_argv(argv, f"127.0.0.1:{private_port}")
    device_id = 0  # simple_switch_grpc's default (softswitch's is 1)
    for i, a in enumerate(ss_args[:ss_args.index("--")]):
        if a == "--device-id" and i + 1 < len(ss_args):
            device_id = int(ss_args[i + 1])
    if "--device-id" not in ss_args[:ss_args.index("--")]:
        ss_args = ["--device-id", "0", *ss_args]
    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    child = subprocess.Popen([sys.executable, "-m", "softswitch", *ss_args], preexec_fn=_die_with_parent)  # noqa: PLW1509 - no thread yet
    exited = threading.Event()  # softswitch has ended (set the moment it is reaped)
    threading.Thread(target=lambda: (child.wait(), exited.set(), stop.set()), daemon=True).start()
    server = None
    try:
        end = time.monotonic() + 300  # a P4 program given on the command line is compiled first
        while not stop.is_set() and not _port_open(private_port):
            if time.monotonic() > end:
                print(f"pi-proxy: softswitch not answering on 127.0.0.1:{private_port} in 300 s", file=sys.stderr)
                return 1
            stop.wait(0.05)
        if stop.is_set():
            return _finish(child)
        proxy = PiProxy(f"127.0.0.1:{private_port}", os.environ.get("STANDIN_LOG") or None, label=public,
                        device_id=device_id)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="pi-proxy"),
                             options=[("grpc.max_receive_message_length", 4 << 20), ("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers((proxy.handler(),))
        try:
            bound = server.add_insecure_port(public)
        except RuntimeError:
            bound = 0
        if not bound:
            print(f"pi-proxy: cannot bind the P4Runtime address {public}", file=sys.stderr)
            return 1
        server.start()
        print(f"pi-proxy: P4Runtime on {public}, softswitch behind it on 127.0.0.1:{private_port}",
              file=sys.stderr, flush=True)
        while not stop.wait(0.5):  # woken by the signal handler or softswitch's end
            pass
        # bmv2 runs PI in its own process: a stop ends one process, with no second one beside it.  So
        # softswitch is stopped first and this process leaves at once: a graceful gRPC shutdown held it
        # ~0.1 s past softswitch (the 0.2 s grace with a controller's stream open, then the server's and
        # the interpreter's teardown), on the CPU a running fabric shares, and the demo's spine loss
        # through the stand-ins recovered later than with softswitch alone (docs/targets.md)
        _stop_child(child, exited)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_finish(child))
    finally:
        if server is not None:
            server.stop(0.2)
        _stop_child(child, exited)


def _stop_child(child: subprocess.Popen, exited: threading.Event) -> None:
    """SIGTERM softswitch and wait for it (SIGKILL after 4 s).  ``exited`` is set by the thread that
    reaps it: waiting on it returns at once, where ``Popen.wait(timeout)`` polls with sleeps of up
    to 50 ms while another thread holds the wait."""
    if exited.is_set() or child.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGTERM)
    if not exited.wait(4):
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        exited.wait(2)


def _finish(child: subprocess.Popen) -> int:
    rc = child.poll()
    return 0 if rc is None else (rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
