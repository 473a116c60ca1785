"""One P4Runtime session per switch, on the project's P4Runtime client pieces (``controller/p4rt.py``).

A session owns a gRPC channel and one StreamChannel: mastership by election id (primary or
backup; a backup takes over when the primary goes away by re-sending an election id above the
highest seen), PacketOut/PacketIn, and stream-loss detection.  Unary calls: pipeline get/set,
chunked batched writes (batch errors decoded from the status details), wildcard reads.
"""
from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import json_format, text_format
from google.protobuf.message import DecodeError
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from . import p4rt
from .mapping import PACKET_IN, PACKET_OUT, P4Names, canonical
from .p4rt import P4RuntimeError, UpdateError
from .repeatlog import RepeatLog

WRITE_CHUNK = p4rt.WRITE_BATCH
PIPELINE_TIMEOUT_S = p4rt.PIPELINE_TIMEOUT_S
GFPC = p4runtime_pb2.GetForwardingPipelineConfigRequest


class SessionError(RuntimeError):
    """A switch could not be reached or refused an operation; the message names the switch.

    ``code`` is the gRPC status of the failed RPC (None when no RPC was made) and ``errors`` the
    failed updates of a Write: callers decide on these, never on the message text."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None,
                 errors: tuple[UpdateError, ...] = ()) -> None:
        super().__init__(message)
        self.code, self.errors = code, errors


class ElectionIdInUse(SessionError):
    """The switch ended the stream: another controller holds this election id."""


def read_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """A P4Info file in the form p4c writes for its ``--p4runtime-files`` suffix: JSON (``.json``),
    binary protobuf (``.bin``), text otherwise.  SessionError, in one line, for a file that cannot be
    read, does not parse as that form, or holds no P4Info (an empty file parses as an empty message)."""
    suffix = Path(path).suffix.lower()
    what = {".json": "JSON", ".bin": "binary protobuf"}.get(suffix, "text")
    p4info = p4info_pb2.P4Info()
    try:
        if suffix == ".json":
            json_format.Parse(Path(path).read_text(), p4info)
        elif suffix == ".bin":
            p4info.ParseFromString(Path(path).read_bytes())
        else:
            text_format.Parse(Path(path).read_text(), p4info)
    except (text_format.ParseError, json_format.ParseError, DecodeError, UnicodeDecodeError) as e:
        why = (str(e).splitlines() or [type(e).__name__])[0]  # json_format adds every field name
        why = why if len(why) <= 160 else why[:160] + "..."  # protobuf quotes a whole (long) line
        raise SessionError(f"{path}: not a P4Info {what} file: {why}") from None
    except OSError as e:
        raise SessionError(f"cannot read pipeline file {e.filename}: {e.strerror or e}") from None
    if p4info == p4info_pb2.P4Info():  # the switches refused such a push, one by one
        raise SessionError(f"{path}: holds no P4Info (empty)")
    return p4info


@dataclass(frozen=True)
class PipelineConfig:
    """P4Info + target device config, with a cookie that identifies this exact pair."""

    p4info: p4info_pb2.P4Info
    device_config: bytes
    source: str = ""

    @property
    def cookie(self) -> int:
        h = hashlib.sha256(self.p4info.SerializeToString(deterministic=True) + self.device_config)
        return int.from_bytes(h.digest()[:8], "big") & ((1 << 63) - 1)

    @classmethod
    def from_files(cls, p4info_path: str | Path, device_config_path: str | Path) -> PipelineConfig:
        """A P4Info file and a device config (bmv2 JSON or softswitch bundle) from ``build/``.  The P4Info
        is text, or the JSON (``.json``) or binary (``.bin``) form p4c writes for those suffixes."""
        for p in (p4info_path, device_config_path):
            if Path(p).is_dir():  # was "does not exist (run `make build`)"
                raise SessionError(f"pipeline file {p} is a directory, not a file")
            if not Path(p).is_file():
                raise SessionError(f"pipeline file {p} does not exist (run `make build`)")
        p4info = read_p4info(p4info_path)
        try:
            device_config = Path(device_config_path).read_bytes()
        except OSError as e:
            raise SessionError(f"cannot read pipeline file {e.filename}: {e.strerror or e}") from None
        return cls(p4info, device_config, f"files:{device_config_path}")


@dataclass(frozen=True)
class PacketIn:
    """A PacketIn with its controller header decoded."""

    switch: str
    payload: bytes
    metadata: dict[str, int] = field(default_factory=dict)


def _uint128(msg, value: int) -> None:
    p4rt.uint128(msg, value)


class SwitchSession:
    """A P4Runtime client for one switch (thread-safe for unary calls; one stream)."""

    def __init__(self, name: str, address: str, device_id: int, election_id: int, *,
                 takeover: bool = True, rpc_timeout_s: float = 20.0,
                 on_packet_in: Callable[[PacketIn], None] | None = None,
                 log: logging.Logger | None = None) -> None:
        self.name, self.address, self.device_id = name, address, device_id
        self.election_id = election_id
        # the id this session was given: a takeover raises ``election_id`` above the highest seen, and a
        # session whose raised id turns out taken (another backup took over with the same id) goes back to it
        self.configured_election_id = election_id
        self.takeover = takeover
        self.rpc_timeout_s = rpc_timeout_s
        self.on_packet_in = on_packet_in
        self.log = log or logging.getLogger("controller.session")
        self.names: P4Names | None = None
        self._failed_writes = RepeatLog()  # the same updates failing the same way: logged once a minute
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._stream: p4rt.StreamChannel | None = None
        self._lock = threading.Lock()
        self._arb = threading.Condition()
        self._primary = False
        self._arb_seen = False
        # primary because the server promoted this session after the primary left, without it asking
        # (bmv2's PI server does; softswitch promotes nobody): with takeover off it stays passive
        self._server_promoted = False
        self._highest: int | None = None
        self.stream_status: tuple[grpc.StatusCode, str] | None = None
        self.stream_up = threading.Event()
        self.stream_lost = threading.Event()
        # increments on each successful connect, and each time the session becomes primary again on the
        # same stream: another client was primary meanwhile and may have written, so the daemon
        # re-converges even when it never saw the session as backup (the other client can come and go
        # between two of its ticks)
        self.generation = 0

    # ---- stream -------------------------------------------------------------------------------
    @property
    def is_primary(self) -> bool:
        return self._primary and self.stream_up.is_set()

    @property
    def may_act(self) -> bool:
        """Primary and meant to write: not a ``takeover=False`` session the server promoted on its own
        (bmv2's PI server makes the remaining backup primary when the primary's stream ends; such a
        standby stays passive, as the flag promises, until it is backup again or reconnects)."""
        return self.is_primary and not self._server_promoted

    def connect(self, timeout_s: float = 5.0, id_wait_s: float = p4rt.ELECTION_ID_WAIT_S) -> None:
        """Open the channel and the stream and arbitrate; raises ``SessionError`` if unreachable,
        ``ElectionIdInUse`` if the election id stays taken for ``id_wait_s`` (``p4rt.election_id_taken``:
        a client that just closed may still hold it; 0: at once)."""
        p4rt.while_election_id_taken(lambda: self._connect_once(timeout_s),
                                     lambda e: isinstance(e, ElectionIdInUse), id_wait_s)

    def _connect_once(self, timeout_s: float) -> None:
        self.close()
        try:
            ch = p4rt.open_channel(self.address, timeout_s)
        except P4RuntimeError as e:
            raise SessionError(f"switch {self.name}: {e.details()}", e.code()) from None
        self._channel, self._stub = ch, p4runtime_pb2_grpc.P4RuntimeStub(ch)
        self.stream_status: tuple[grpc.StatusCode, str] | None = None  # how the stream ended, if it did
        # The switch may have restarted empty (or with another program) since the names were resolved:
        # forget them until a converge finds the pipeline (use_p4info / set_pipeline), so the wiring and
        # telemetry threads do not send PacketOuts to a switch without one (answered FAILED_PRECONDITION
        # "no forwarding pipeline is set" and logged as stream errors after every switch restart).
        self.names = None
        with self._arb:
            self._arb_seen, self._primary, self._server_promoted = False, False, False
        self.stream_lost.clear()
        self._stream = p4rt.StreamChannel(self._stub, self._on_message, self._on_stream_end,
                                          name=f"p4rt-{self.name}")
        self._stream.start()
        self._send_arbitration()
        deadline = time.monotonic() + timeout_s
        with self._arb:
            while not self._arb_seen and not self.stream_lost.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._arb.wait(left)
            ok = self._arb_seen
        if not ok:
            ended = self.stream_status
            self.close()
            if ended is not None and p4rt.election_id_taken(*ended) and self._revert_raised_id():
                raise ElectionIdInUse(f"switch {self.name}: election id taken; back to the configured id "
                                      f"{self.election_id}: {ended[1]}", ended[0])  # retried at once
            if ended is not None and p4rt.election_id_taken(*ended):
                raise ElectionIdInUse(f"switch {self.name}: election id {self.election_id} is already used by "
                                      f"another controller at {self.address} (a second mrc-controller? give this "
                                      f"one another --election-id): {ended[1]}", ended[0])
            if ended is not None:  # the switch refused the arbitration (a wrong device id: NOT_FOUND)
                raise SessionError(f"switch {self.name}: {self.address} ended the stream instead of answering the "
                                   f"arbitration (device id {self.device_id}, election id {self.election_id}): "
                                   f"{ended[0].name}: {ended[1]}", ended[0])
            raise SessionError(f"switch {self.name}: no arbitration answer from {self.address}",
                               grpc.StatusCode.DEADLINE_EXCEEDED)
        self.stream_up.set()
        self.generation += 1

    def _send_arbitration(self) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        _uint128(req.arbitration.election_id, self.election_id)
        if self._stream is not None:
            self._stream.send(req)

    def _on_message(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            self._on_arbitration(msg.arbitration)
        elif kind == "packet":
            self._on_packet(msg.packet)
        elif kind == "error":
            self.log.warning("stream error", extra={"fields": {
                "switch": self.name, "code": msg.error.canonical_code, "error": msg.error.message}})

    def _on_stream_end(self, stream: p4rt.StreamChannel, err: grpc.RpcError | None) -> None:
        if stream is not self._stream:  # an old stream, or one we closed
            return
        if err is not None:
            self.stream_status = (err.code(), err.details() or "")
            self.log.warning("stream lost", extra={"fields": {"switch": self.name, "code": str(err.code()),
                                                              "detail": err.details()}})
            if p4rt.election_id_taken(*self.stream_status):
                self._revert_raised_id()
        self.stream_up.clear()
        self.stream_lost.set()
        with self._arb:
            self._primary = False
            self._arb.notify_all()

    def _on_arbitration(self, arb) -> None:
        eid = (arb.election_id.high << 64) | arb.election_id.low
        with self._arb:
            self._highest = max(self._highest or 0, eid)
            was, seen = self._primary, self._arb_seen
            self._primary = arb.status.code == code_pb2.OK
            if not self._primary:
                self._server_promoted = False
            elif not was and seen:
                if self.stream_up.is_set():  # primary again, not the first answer of a connect
                    self.generation += 1
                if not self.takeover:  # made primary later, and it never asked
                    self._server_promoted = True
            self._arb_seen = True
            self._arb.notify_all()
        if self._primary != was:
            self.log.info("mastership", extra={"fields": {
                "switch": self.name, "primary": self._primary, "election_id": self.election_id,
                **({"passive": "promoted by the switch; --no-takeover keeps it a standby"}
                   if self._server_promoted else {})}})
        if arb.status.code == code_pb2.NOT_FOUND and self.takeover and self._highest is not None:
            # no primary: the previous one went away; take over above the highest id seen
            new_id = max(self.election_id, self._highest + 1)
            self.log.info("taking over mastership", extra={"fields": {
                "switch": self.name, "old_election_id": self.election_id, "election_id": new_id}})
            self.election_id = new_id
            self._send_arbitration()

    def _revert_raised_id(self) -> bool:
        """Go back to the configured election id if a takeover had raised it; True if it had.  Two
        backups told at once that there is no primary (a P4Runtime 1.3+ server) both re-arbitrate with
        the highest id + 1: the switch takes the first and ends the other's stream (id in use).  With the
        raised id kept, that session could never connect again while the winner lived (reported as
        ``election_id_in_use``, a duplicate --election-id); with its own id it is a backup again."""
        with self._arb:
            if self.election_id == self.configured_election_id:
                return False
            raised, self.election_id = self.election_id, self.configured_election_id
        self.log.info("raised election id taken by another controller; back to the configured id", extra={
            "fields": {"switch": self.name, "raised_election_id": raised, "election_id": self.election_id}})
        return True

    def _on_packet(self, pkt: p4runtime_pb2.PacketIn) -> None:
        meta: dict[str, int] = {}
        names = self.names  # read once: a reconnect clears them (connect), and a converge sets them again
        if names is not None and PACKET_IN in names.meta:
            ids = {i: n for n, (i, _) in names.metadata_ids(PACKET_IN).items()}
            for m in pkt.metadata:
                meta[ids.get(m.metadata_id, str(m.metadata_id))] = int.from_bytes(m.value, "big")
        if self.on_packet_in is not None:
            try:
                self.on_packet_in(PacketIn(self.name, bytes(pkt.payload), meta))
            except Exception:  # a consumer bug must not kill the stream
                self.log.exception("packet-in handler failed", extra={"fields": {"switch": self.name}})

    def wait_primary(self, timeout_s: float) -> bool:
        """Wait (bounded) until this session is primary."""
        deadline = time.monotonic() + timeout_s
        with self._arb:
            while not self.is_primary:
                left = deadline - time.monotonic()
                if left <= 0 or self.stream_lost.is_set():
                    return self.is_primary
                self._arb.wait(left)
        return True

    def close(self) -> None:
        """End the stream and the channel (the switch sees the stream close)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
        ch, self._channel, self._stub = self._channel, None, None
        self.stream_up.clear()
        with self._arb:
            self._primary = False
        if ch is not None:
            ch.close()
        if stream is not None:
            stream.join(2.0)

    # ---- unary calls (controller/p4rt.py does the wire work) -----------------------------------
    def _stub_or_raise(self) -> p4runtime_pb2_grpc.P4RuntimeStub:
        stub = self._stub
        if stub is None:
            raise SessionError(f"switch {self.name}: not connected")
        return stub

    def _error(self, e: P4RuntimeError, extra: str = "") -> SessionError:
        return SessionError(f"switch {self.name}: {e}{extra}", e.code(), e.errors)

    def get_pipeline_cookie(self) -> int | None:
        """The running pipeline's cookie, 0 if it has none, None if no pipeline is set
        (``p4rt.pipeline_cookie``)."""
        try:
            return p4rt.pipeline_cookie(self._stub_or_raise(), self.device_id, self.rpc_timeout_s)
        except P4RuntimeError as e:
            raise self._error(e) from e

    def get_p4info(self) -> p4info_pb2.P4Info | None:
        """The running pipeline's P4Info, or None if no pipeline is set."""
        try:
            cfg = p4rt.get_pipeline(self._stub_or_raise(), self.device_id, GFPC.P4INFO_AND_COOKIE,
                                    self.rpc_timeout_s)
        except P4RuntimeError as e:
            raise self._error(e) from e
        return p4rt.running_p4info(cfg)

    def set_pipeline(self, cfg: PipelineConfig) -> None:
        """VERIFY_AND_COMMIT the pipeline (the switch starts empty)."""
        try:
            p4rt.set_pipeline(self._stub_or_raise(), self.device_id, self.election_id, cfg.p4info,
                              cfg.device_config, cfg.cookie, max(self.rpc_timeout_s, PIPELINE_TIMEOUT_S))
        except P4RuntimeError as e:
            raise self._error(e) from e
        self.names = P4Names.from_p4info(cfg.p4info)

    def use_p4info(self, p4info: p4info_pb2.P4Info) -> None:
        """Resolve names against the P4Info the switch runs."""
        self.names = P4Names.from_p4info(p4info)

    def write(self, updates: Iterable[p4runtime_pb2.Update], chunk: int = WRITE_CHUNK) -> int:
        """Write updates in batches of ``chunk`` (every batch is sent, unless the switch does not answer
        one: ``p4rt.write``); returns how many were written.  If any update failed, each failed one is
        logged (index, table, code, message; at DEBUG when the same updates failed the same way within
        ``REPEAT_LOG_S``) and a ``SessionError`` carrying all of them (``errors``) is raised."""
        ups = list(updates)
        try:
            return p4rt.write(self._stub_or_raise(), self.device_id, self.election_id, ups, batch=chunk,
                              timeout_s=self.rpc_timeout_s)
        except P4RuntimeError as e:
            # a batch the switch did not answer (p4rt.no_answer) has no failed update to name: the
            # caller reports the error once (before, a hung switch logged each of its 100 updates)
            errors = () if p4rt.no_answer(e.code()) else e.errors
            what = tuple((err.index, err.code, err.message) for err in errors)
            level = logging.WARNING if self._failed_writes.due(what) else logging.DEBUG
            for err in errors:
                self.log.log(level, "update failed", extra={"fields": {
                    "switch": self.name, "index": err.index, "update": _describe(ups[err.index], self.names),
                    "code": err.code_name, "error": err.message}})
            detail = "; ".join(f"update {err.index} ({_describe(ups[err.index], self.names)}): "
                               f"{err.code_name} {err.message}" for err in e.errors[:5]
                               if not p4rt.no_answer(e.code()))
            raise self._error(e, f" -- {detail}" if detail else "") from e

    def read(self, entities: Iterable[p4runtime_pb2.Entity],
             timeout_s: float | None = None) -> list[p4runtime_pb2.Entity]:
        """Read (wildcards allowed); all entities of all responses, within ``timeout_s`` (default: the
        session's RPC timeout)."""
        try:
            return p4rt.read(self._stub_or_raise(), self.device_id, entities,
                             self.rpc_timeout_s if timeout_s is None else timeout_s)
        except P4RuntimeError as e:
            raise self._error(e) from e

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        """Send a PacketOut (controller header fields by name, e.g. ``egress_port=3``)."""
        stream, names = self._stream, self.names  # read once: the wiring thread sends while a reconnect may clear them
        if stream is None or names is None:
            raise SessionError(f"switch {self.name}: not connected")
        ids = names.metadata_ids(PACKET_OUT)
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for name, value in metadata.items():
            if name not in ids:
                raise SessionError(f"switch {self.name}: packet_out has no field {name!r}")
            req.packet.metadata.add(metadata_id=ids[name][0], value=canonical(value))
        stream.send(req)


def _describe(u: p4runtime_pb2.Update, names: P4Names | None) -> str:
    """An update in words for error messages: its type and the entity (``p4rt.describe_entity``:
    table, key and action, as reconcile's drift lines name them)."""
    return f"{p4runtime_pb2.Update.Type.Name(u.type)} {p4rt.describe_entity(u.entity, names)}"
