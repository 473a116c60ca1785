"""The project's one P4Runtime client: channel, stream + arbitration, pipeline, batched writes with
per-update errors, reads and packet I/O.  The controller's ``SwitchSession``, the PTF bases and the
bench all use it.

Errors are structured, never matched by message text: every failed RPC raises ``P4RuntimeError``
(a ``grpc.RpcError``) with ``code()`` (``grpc.StatusCode``) and, for a failed Write, ``errors``: one
``UpdateError`` per failed update (its index in the caller's list, its ``google.rpc.Code`` and the
server's message), decoded from the ``grpc-status-details-bin`` trailer as the P4Runtime spec (§12.3)
describes.

Why not p4runtime-shell's client (a pinned dependency, used by tests): its error iterator never
advances past an OK entry, so a CONTINUE_ON_ERROR batch with both successes and failures loops
forever; and its channel keeps gRPC's default metadata limits (below).

Batches and metadata limits (issue 14): the per-update errors ride in trailing metadata, about
110 bytes per failed update.  gRPC clients accept 8 KiB of metadata by default (16 KiB hard), so a
failed batch of 500 lost every detail (the client saw RESOURCE_EXHAUSTED only).  Writes go in batches
of ``WRITE_BATCH`` (100: under 16 KiB even when every update fails with a long message, for any
client or proxy on the path) over a channel that accepts ``MAX_METADATA_BYTES`` (4 MiB) of metadata.
"""
from __future__ import annotations

import ipaddress
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

WRITE_BATCH = 100
MAX_METADATA_BYTES = 4 << 20
MAX_MESSAGE_BYTES = 64 << 20
DEFAULT_TIMEOUT_S = 5.0
PIPELINE_TIMEOUT_S = 60.0
CHANNEL_OPTIONS = (("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_metadata_size", MAX_METADATA_BYTES))
_U64 = (1 << 64) - 1
T = TypeVar("T")
SFPC = p4runtime_pb2.SetForwardingPipelineConfigRequest
GFPC = p4runtime_pb2.GetForwardingPipelineConfigRequest
log = logging.getLogger("controller.p4rt")


@dataclass(frozen=True)
class UpdateError:
    """One failed update of a Write: its index in the caller's list, google.rpc code, message."""

    index: int
    code: int
    message: str

    @property
    def code_name(self) -> str:
        return code_pb2.Code.Name(self.code) if self.code in code_pb2.Code.values() else str(self.code)


class P4RuntimeError(grpc.RpcError):
    """A failed P4Runtime RPC: ``code()`` and ``details()`` like a ``grpc.RpcError``, plus the failed
    updates of a Write in ``errors`` (empty for other RPCs or when the server sent no details)."""

    def __init__(self, rpc: str, code: grpc.StatusCode | None, details: str,
                 errors: tuple[UpdateError, ...] = ()) -> None:
        self.rpc, self._code, self._details, self.errors = rpc, code, details, errors
        super().__init__(self.__str__())

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def __str__(self) -> str:
        head = f"{self.rpc}: {self._code.name if self._code else 'ERROR'}: {self._details}"
        if self.errors:
            head += f" ({len(self.errors)} failed update{'s' * (len(self.errors) != 1)})"
            if not self._details:
                # bmv2's PI server sends a failed Write's reasons only per update (UNKNOWN with an empty
                # message, PI's P4ErrorReporter): without them the text said nothing of why
                head += ": " + "; ".join(f"update {e.index}: {e.code_name} {e.message}".rstrip()
                                         for e in self.errors[:3])
                if len(self.errors) > 3:
                    head += f"; ... {len(self.errors) - 3} more"
        return head


def uint128(msg: p4runtime_pb2.Uint128, value: int) -> None:
    """Set a Uint128 message from an int."""
    msg.high, msg.low = value >> 64, value & _U64


def decode_update_errors(err: grpc.RpcError, offset: int = 0) -> tuple[list[UpdateError], int | None]:
    """(failed updates, number of per-update details) of a failed Write; the count is None when the
    trailer carried no details at all."""
    out: list[UpdateError] = []
    for key, value in (err.trailing_metadata() or ()):
        if key != "grpc-status-details-bin":
            continue
        st = status_pb2.Status.FromString(value)
        for i, detail in enumerate(st.details):
            e = p4runtime_pb2.Error()
            if detail.Unpack(e) and e.canonical_code != code_pb2.OK:
                out.append(UpdateError(offset + i, e.canonical_code, e.message))
        return out, len(st.details)
    return out, None


def rpc_error(rpc: str, err: grpc.RpcError, errors: Iterable[UpdateError] = ()) -> P4RuntimeError:
    """A ``P4RuntimeError`` for a raw gRPC error."""
    return P4RuntimeError(rpc, err.code(), err.details() or "", tuple(errors))


def open_channel(address: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> grpc.Channel:
    """An insecure channel with the project's limits, ready (raises ``P4RuntimeError`` UNAVAILABLE)."""
    ch = grpc.insecure_channel(address, options=list(CHANNEL_OPTIONS))
    try:
        grpc.channel_ready_future(ch).result(timeout=timeout_s)
    except grpc.FutureTimeoutError:
        ch.close()
        raise P4RuntimeError("connect", grpc.StatusCode.UNAVAILABLE,
                             f"no P4Runtime server at {address}") from None
    return ch


# the answers of a switch that did not answer (no server, connection gone, or the deadline passed):
# a Write that gets one sends no further batch, and the controller treats its session as lost
NO_ANSWER = (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE)


def no_answer(code: grpc.StatusCode | None) -> bool:
    """True for the status of an RPC the switch did not answer (``NO_ANSWER``), not one it refused."""
    return code in NO_ANSWER


def write(stub: p4runtime_pb2_grpc.P4RuntimeStub, device_id: int, election_id: int,
          updates: Iterable[p4runtime_pb2.Update], *, batch: int = WRITE_BATCH,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """Write ``updates`` in batches of ``batch`` (CONTINUE_ON_ERROR); every batch is tried, unless one
    gets no answer (``NO_ANSWER``: a hung switch holds each batch for the whole ``timeout_s``), after
    which none is sent.  Returns how many were written; raises ``P4RuntimeError`` listing every failed
    update (index into ``updates``; the updates never sent are not listed, the message counts them)."""
    ups = list(updates)
    done, failed, first = 0, [], None
    unsent = 0
    for i in range(0, len(ups), batch):
        if first is not None and no_answer(first.code()):
            unsent = len(ups) - i
            break
        req = p4runtime_pb2.WriteRequest(device_id=device_id, atomicity=p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR)
        uint128(req.election_id, election_id)
        req.updates.extend(ups[i:i + batch])
        try:
            stub.Write(req, timeout=timeout_s)
            done += len(req.updates)
        except grpc.RpcError as e:
            errs, n = decode_update_errors(e, i)
            # the first error names the failure, unless the switch then stopped answering: that one
            first = e if first is None or no_answer(e.code()) else first
            if n is None:  # no per-update details: the whole batch was refused (or they were lost)
                failed += [UpdateError(i + j, e.code().value[0], e.details() or "") for j in range(len(req.updates))]
            else:
                failed += errs
                done += len(req.updates) - len(errs)
    if first is not None:
        err = rpc_error("Write", first, failed)
        if unsent:
            err = P4RuntimeError("Write", err.code(), f"{err.details()} (the switch did not answer: the "
                                 f"{unsent} updates of the later batches were not sent)", err.errors)
        raise err
    return done


def read(stub: p4runtime_pb2_grpc.P4RuntimeStub, device_id: int, entities: Iterable[p4runtime_pb2.Entity],
         timeout_s: float = DEFAULT_TIMEOUT_S) -> list[p4runtime_pb2.Entity]:
    """Every entity of every response of one Read (wildcards allowed)."""
    req = p4runtime_pb2.ReadRequest(device_id=device_id)
    req.entities.extend(entities)
    try:
        return [e for resp in stub.Read(req, timeout=timeout_s) for e in resp.entities]
    except grpc.RpcError as e:
        raise rpc_error("Read", e) from None


def set_pipeline(stub: p4runtime_pb2_grpc.P4RuntimeStub, device_id: int, election_id: int,
                 p4info: p4info_pb2.P4Info, device_config: bytes, cookie: int | None = None,
                 timeout_s: float = PIPELINE_TIMEOUT_S) -> None:
    """VERIFY_AND_COMMIT a pipeline (the target compiles or loads it: allow more than a write)."""
    req = SFPC(device_id=device_id, action=SFPC.VERIFY_AND_COMMIT)
    uint128(req.election_id, election_id)
    req.config.p4info.CopyFrom(p4info)
    req.config.p4_device_config = device_config
    if cookie is not None:
        req.config.cookie.cookie = cookie
    try:
        stub.SetForwardingPipelineConfig(req, timeout=timeout_s)
    except grpc.RpcError as e:
        err = rpc_error("SetForwardingPipelineConfig", e)
        if e.code() == grpc.StatusCode.UNKNOWN:
            # bmv2's PI server checks no device id of its own: a mismatch shows only here, as the
            # target refusing the config (docs/softswitch.md, "Where bmv2's PI server answers otherwise")
            err = P4RuntimeError(err.rpc, err.code(), f"{err.details()} (on bmv2 also the answer when device id "
                                 f"{device_id} is not the switch's --device-id; bmv2's default is 0)", err.errors)
        raise err from None


def pipeline_cookie(stub: p4runtime_pb2_grpc.P4RuntimeStub, device_id: int,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> int | None:
    """The running pipeline's cookie, 0 if it has none, None if the device runs no pipeline -- also
    when it answers a config with neither cookie nor P4Info, as PI does once a push has failed (the
    device's manager exists, its config is not set)."""
    cfg = get_pipeline(stub, device_id, GFPC.COOKIE_ONLY, timeout_s)
    if cfg is None:
        return None
    if cfg.HasField("cookie"):
        return cfg.cookie.cookie
    return 0 if running_p4info(get_pipeline(stub, device_id, GFPC.P4INFO_AND_COOKIE, timeout_s)) else None


def running_p4info(cfg: p4runtime_pb2.ForwardingPipelineConfig | None) -> p4info_pb2.P4Info | None:
    """The P4Info of a ``get_pipeline`` answer, None when it holds none: no pipeline, or a config
    with an empty P4Info, as PI answers once a push has failed (``pipeline_cookie``)."""
    return cfg.p4info if cfg is not None and cfg.p4info.ByteSize() else None


def get_pipeline(stub: p4runtime_pb2_grpc.P4RuntimeStub, device_id: int, response_type: int,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> p4runtime_pb2.ForwardingPipelineConfig | None:
    """The running pipeline (P4Info and/or cookie), or None if the device has none."""
    try:
        resp = stub.GetForwardingPipelineConfig(GFPC(device_id=device_id, response_type=response_type),
                                                timeout=timeout_s)
        # the spec answers an unset config when none is known; some servers answer an error instead
        return resp.config if resp.HasField("config") else None
    except grpc.RpcError as e:
        if e.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
            return None
        raise rpc_error("GetForwardingPipelineConfig", e) from None


class StreamChannel:
    """One P4Runtime StreamChannel: requests go through ``send`` (a queue feeding the call), a reader
    thread hands every response to ``on_message`` and, once the stream ends, calls
    ``on_end(self, error)`` (``error`` None when it ended cleanly or was closed by us).  Call
    ``start()`` once the owner holds it."""

    def __init__(self, stub: p4runtime_pb2_grpc.P4RuntimeStub,
                 on_message: Callable[[p4runtime_pb2.StreamMessageResponse], None],
                 on_end: Callable[[StreamChannel, grpc.RpcError | None], None] | None = None,
                 name: str = "p4rt-stream") -> None:
        self.requests: queue.Queue = queue.Queue()
        self.closed = False
        self._on_message, self._on_end = on_message, on_end
        self._responses = stub.StreamChannel(self._iter())
        self._reader = threading.Thread(target=self._read, name=name, daemon=True)

    def start(self) -> StreamChannel:
        """Start the reader (after the owner stored this stream: ``on_end`` may compare with it)."""
        self._reader.start()
        return self

    def _iter(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            item = self.requests.get()
            if item is None:
                return
            yield item

    def _read(self) -> None:
        err: grpc.RpcError | None = None
        try:
            for msg in self._responses:
                self._on_message(msg)
        except grpc.RpcError as e:
            err = None if self.closed else e
        finally:
            if self._on_end is not None:
                self._on_end(self, err)

    def send(self, req: p4runtime_pb2.StreamMessageRequest) -> None:
        self.requests.put(req)

    def close(self) -> None:
        """End the request side (the switch sees the stream close); ``join`` waits for the reader."""
        self.closed = True
        self.requests.put(None)

    def join(self, timeout_s: float) -> None:
        self._reader.join(timeout=timeout_s)


ELECTION_ID_WAIT_S = 3.0  # how long a client waits for its election id to be free again


def election_id_taken(code: grpc.StatusCode | None, details: str | None) -> bool:
    """The switch ended an arbitration stream because another client holds this election id (the
    spec's INVALID_ARGUMENT; PI words it "Election id already exists").  PI drops a closed client's
    connection only once its stream handler has returned, so a client of ours that just closed can
    still hold the id for a moment: both clients (``P4RuntimeClient``, ``SwitchSession``) retry for
    ``ELECTION_ID_WAIT_S`` before they report it."""
    return code == grpc.StatusCode.INVALID_ARGUMENT and "election id" in (details or "").lower()


def while_election_id_taken(attempt: Callable[[], T], taken: Callable[[Exception], bool],
                            wait_s: float = ELECTION_ID_WAIT_S) -> T:
    """``attempt()`` again (every 0.1 s) while it fails with an exception ``taken`` says is the
    election id still held by another client, for up to ``wait_s`` (0: once); then that failure is
    raised as it is.  The one retry loop both clients use (``election_id_taken``)."""
    end = time.monotonic() + wait_s
    while True:
        try:
            return attempt()
        except Exception as e:
            if not taken(e) or time.monotonic() >= end:
                raise
        time.sleep(0.1)  # retry interval of a deadline-bounded wait for the old connection to go


class P4RuntimeClient:
    """One P4Runtime session (one stream): arbitration, pipeline, writes, reads, packet I/O.

    Stream messages go to ``_on_update`` (subclasses keep other kinds): arbitration answers to
    ``arbitrations``, PacketIns to ``packet_ins``, stream errors to ``stream_errors``."""

    def __init__(self, address: str, device_id: int = 1, election_id: int = 1, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S, require_primary: bool = True) -> None:
        self.address, self.device_id, self.election = address, device_id, election_id
        self.timeout_s = timeout_s
        self.channel = open_channel(address, timeout_s)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.arbitrations: queue.Queue = queue.Queue()
        self.packet_ins: queue.Queue = queue.Queue()
        self.stream_errors: queue.Queue = queue.Queue()
        self.primary = False
        self._open_stream()
        self.arbitrate(require_primary)

    def _open_stream(self) -> None:
        self.stream = StreamChannel(self.stub, lambda m: self._on_update(m), self._on_stream_end,
                                    name=f"p4rt-{self.address}")
        self._requests = self.stream.requests  # subclasses queue their own stream messages here
        self.stream.start()

    def _on_stream_end(self, stream: StreamChannel, err: grpc.RpcError | None) -> None:
        if err is not None:  # the switch went away (not our close)
            self.stream_errors.put(err)

    def _on_update(self, resp: p4runtime_pb2.StreamMessageResponse) -> None:
        kind = resp.WhichOneof("update")
        if kind == "arbitration":
            self.primary = resp.arbitration.status.code == code_pb2.OK
            self.arbitrations.put(resp.arbitration)
        elif kind == "packet":
            self.packet_ins.put(resp.packet)
        elif kind == "error":
            self.stream_errors.put(resp.error)

    def arbitrate(self, require_primary: bool = True) -> p4runtime_pb2.MasterArbitrationUpdate:
        """Send the election id and wait (bounded) for the answer.  A switch still holding this id for
        a client of ours that just closed (PI drops a connection only once its stream handler has
        returned, after the cancel) ends the new stream with INVALID_ARGUMENT: the stream is reopened
        and the id sent again for up to ``ELECTION_ID_WAIT_S``, then that error is raised as such."""
        tries = 0

        def once() -> p4runtime_pb2.MasterArbitrationUpdate:
            nonlocal tries
            tries += 1
            if tries > 1:  # the switch ended the last stream (a held id): close releases its request generator
                self.stream.close()
                self._open_stream()
            req = p4runtime_pb2.StreamMessageRequest()
            req.arbitration.device_id = self.device_id
            uint128(req.arbitration.election_id, self.election)
            self.stream.send(req)
            reply, ended = self._await_arbitration()
            if reply is not None:
                return reply
            if ended is None:
                raise P4RuntimeError("StreamChannel", grpc.StatusCode.DEADLINE_EXCEEDED,
                                     f"no arbitration answer from {self.address}")
            raise P4RuntimeError("StreamChannel", ended.code(), f"{self.address}: {ended.details()}")

        reply = while_election_id_taken(once, lambda e: isinstance(e, P4RuntimeError)
                                        and election_id_taken(e.code(), e.details()))
        if require_primary and reply.status.code != code_pb2.OK:
            raise P4RuntimeError("StreamChannel", grpc.StatusCode.PERMISSION_DENIED,
                                 f"not primary on {self.address}: {reply.status.message}")
        return reply

    def _await_arbitration(self) -> tuple[p4runtime_pb2.MasterArbitrationUpdate | None, grpc.RpcError | None]:
        """(the arbitration answer, None), or (None, how the stream ended) if it ended first, or
        (None, None) when ``timeout_s`` passed with neither."""
        end = time.monotonic() + self.timeout_s
        while True:
            try:
                return self.arbitrations.get(timeout=0.05), None
            except queue.Empty:
                pass
            if self.stream.closed or not self.stream_errors.empty():
                kept = []
                ended = None
                while not self.stream_errors.empty():
                    e = self.stream_errors.get_nowait()
                    if isinstance(e, grpc.RpcError) and ended is None:
                        ended = e
                    else:
                        kept.append(e)
                for e in kept:
                    self.stream_errors.put(e)
                if ended is not None:
                    return None, ended
            if time.monotonic() >= end:
                return None, None

    def close(self) -> None:
        """End the stream and the channel."""
        self.stream.close()
        self.channel.close()
        self.stream.join(self.timeout_s)

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes, cookie: int | None = None) -> None:
        set_pipeline(self.stub, self.device_id, self.election, p4info, device_config, cookie)

    def get_p4info(self) -> p4info_pb2.P4Info | None:
        """The running pipeline's P4Info, None if there is none (``running_p4info``)."""
        return running_p4info(get_pipeline(self.stub, self.device_id, GFPC.P4INFO_AND_COOKIE, self.timeout_s))

    def get_cookie(self) -> int | None:
        """The running pipeline's cookie (0 if it has none), None if there is no pipeline."""
        return pipeline_cookie(self.stub, self.device_id, self.timeout_s)

    def write_updates(self, updates: Iterable[p4runtime_pb2.Update], batch: int = WRITE_BATCH) -> int:
        return write(self.stub, self.device_id, self.election, updates, batch=batch, timeout_s=self.timeout_s)

    def write(self, update_type: int, entity: p4runtime_pb2.Entity) -> None:
        """One update (raises ``P4RuntimeError`` with the server's code)."""
        self.write_updates([p4runtime_pb2.Update(type=update_type, entity=entity)])

    def read(self, entity: p4runtime_pb2.Entity | Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        ents = [entity] if isinstance(entity, p4runtime_pb2.Entity) else list(entity)
        return read(self.stub, self.device_id, ents, self.timeout_s)

    def send_packet_out(self, payload: bytes, metadata: dict[int, bytes]) -> None:
        """A PacketOut with controller metadata by id."""
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for mid, value in metadata.items():
            req.packet.metadata.add(metadata_id=mid, value=value)
        self.stream.send(req)


# ---- entities in words (logs and errors) ---------------------------------------------------
def replica_port(r: p4runtime_pb2.Replica) -> int:
    """A replica's port in either form: the deprecated ``egress_port`` (what PI answers today) or the
    ``port`` bytes of P4Runtime 1.4 -- a server answering the other form than the one written is the
    same replica, not a difference to rewrite on every pass."""
    return int.from_bytes(r.port, "big") if r.WhichOneof("port_kind") == "port" else r.egress_port


def _show(value: bytes, bitwidth: int) -> str:
    """A field value as an operator reads it: IPv6 address, MAC, or a number."""
    n = int.from_bytes(value, "big")
    if bitwidth == 128:
        return str(ipaddress.IPv6Address(n))
    if bitwidth == 48:
        return ":".join(f"{b:02x}" for b in n.to_bytes(6, "big"))
    return str(n) if bitwidth <= 32 else f"0x{n:x}"


def describe_entity(e: p4runtime_pb2.Entity, names=None) -> str:
    """One line naming an entity and what it holds: ``route_v6 dst_addr=fc00:0:1101::/48 ->
    set_next_hop(port=1, ...)``, ``default of switch_info -> ...``, ``clone session 100 -> ports [255]``."""
    kind = e.WhichOneof("entity")

    def action(a: p4runtime_pb2.Action) -> str:
        ad = names.action_by_id.get(a.action_id) if names else None
        pn = {p.id: (p.name, p.bitwidth) for p in ad.params} if ad else {}
        args = ", ".join(f"{pn[p.param_id][0]}={_show(p.value, pn[p.param_id][1])}" if p.param_id in pn
                         else f"{p.param_id}=0x{p.value.hex()}" for p in a.params)
        return f"{ad.preamble.alias if ad else a.action_id}({args})"

    if kind == "table_entry":
        te = e.table_entry
        t = names.table_by_id.get(te.table_id) if names else None
        fields = {f.id: (f.name, f.bitwidth) for f in t.match_fields} if t else {}
        key = []
        for fm in te.match:
            mk = fm.WhichOneof("field_match_type")
            f = getattr(fm, mk)
            name, width = fields.get(fm.field_id, (str(fm.field_id), 0))
            v = _show(f.value, width) if hasattr(f, "value") else ""
            key.append(f"{name}={v}" + (f"/{f.prefix_len}" if mk == "lpm" else "")
                       + (f"&&&{_show(f.mask, width)}" if mk == "ternary" else ""))
        tname = t.preamble.alias if t else str(te.table_id)
        what = f"default of {tname}" if te.is_default_action else f"{tname} {' '.join(key)}".rstrip()
        if te.priority:
            what += f" priority={te.priority}"
        ta = te.action.WhichOneof("type")
        if ta == "action":
            what += f" -> {action(te.action.action)}"
        elif ta:
            what += f" -> {ta.replace('action_profile_', '')} {getattr(te.action, ta)}"
        return what
    if kind == "action_profile_member":
        m = e.action_profile_member
        return f"member {m.member_id}" + (f" -> {action(m.action)}" if m.HasField("action") else "")
    if kind == "action_profile_group":
        g = e.action_profile_group
        return f"group {g.group_id}" + (f" -> members {[m.member_id for m in g.members]}" if g.members else "")
    if kind == "packet_replication_engine_entry":
        pre = e.packet_replication_engine_entry
        if pre.HasField("clone_session_entry"):
            cs = pre.clone_session_entry
            return f"clone session {cs.session_id} -> ports {[replica_port(r) for r in cs.replicas]}"
        mg = pre.multicast_group_entry
        return f"multicast group {mg.multicast_group_id} -> ports {[replica_port(r) for r in mg.replicas]}"
    return str(kind)
