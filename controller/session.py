"""One P4Runtime session per switch over the raw p4runtime protos and grpc.

A session owns a gRPC channel and one StreamChannel: mastership by election id (primary or
backup; a backup takes over when the primary goes away by re-sending an election id above the
highest seen), PacketOut/PacketIn, and stream-loss detection.  Unary calls: pipeline get/set,
chunked batched writes (batch errors decoded from the status details), wildcard reads.
"""
from __future__ import annotations

import hashlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from .mapping import PACKET_IN, PACKET_OUT, P4Names, canonical

WRITE_CHUNK = 500
PIPELINE_TIMEOUT_S = 60.0
_U64 = (1 << 64) - 1
SFPC = p4runtime_pb2.SetForwardingPipelineConfigRequest
GFPC = p4runtime_pb2.GetForwardingPipelineConfigRequest


class SessionError(RuntimeError):
    """A switch could not be reached or refused an operation; the message names the switch."""


class ElectionIdInUse(SessionError):
    """The switch ended the stream: another controller holds this election id."""


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
    def softswitch(cls, program: str | Path) -> PipelineConfig:
        """Compile ``program`` with softswitch's front end (P4Info + softswitch device config)."""
        from softswitch.devconfig import make_device_config
        from softswitch.frontend.errors import P4Error
        from softswitch.frontend.load import load_program
        from softswitch.p4info import build_p4info

        try:
            p4info = build_p4info(load_program(str(program)))
            return cls(p4info, make_device_config(str(program)), f"softswitch:{program}")
        except P4Error as e:
            raise SessionError(f"cannot compile {program} for softswitch: {e}") from None

    @classmethod
    def from_files(cls, p4info_path: str | Path, device_config_path: str | Path) -> PipelineConfig:
        """A P4Info text file and a device config (bmv2 JSON or softswitch bundle) from ``build/``."""
        for p in (p4info_path, device_config_path):
            if not Path(p).is_file():
                raise SessionError(f"pipeline file {p} does not exist (run `make build`)")
        p4info = text_format.Parse(Path(p4info_path).read_text(), p4info_pb2.P4Info())
        return cls(p4info, Path(device_config_path).read_bytes(), f"files:{device_config_path}")


@dataclass(frozen=True)
class PacketIn:
    """A PacketIn with its controller header decoded."""

    switch: str
    payload: bytes
    metadata: dict[str, int] = field(default_factory=dict)


def _uint128(msg, value: int) -> None:
    msg.high, msg.low = value >> 64, value & _U64


def batch_errors(err: grpc.RpcError) -> list[tuple[int, str]]:
    """Per-update (code, message) of a failed Write, from the grpc-status-details-bin trailer."""
    out: list[tuple[int, str]] = []
    for key, value in (err.trailing_metadata() or ()):
        if key != "grpc-status-details-bin":
            continue
        st = status_pb2.Status.FromString(value)
        for detail in st.details:
            e = p4runtime_pb2.Error()
            if detail.Unpack(e):
                out.append((e.canonical_code, e.message))
    return out


class SwitchSession:
    """A P4Runtime client for one switch (thread-safe for unary calls; one stream)."""

    def __init__(self, name: str, address: str, device_id: int, election_id: int, *,
                 takeover: bool = True, rpc_timeout_s: float = 20.0,
                 on_packet_in: Callable[[PacketIn], None] | None = None,
                 log: logging.Logger | None = None) -> None:
        self.name, self.address, self.device_id = name, address, device_id
        self.election_id = election_id
        self.takeover = takeover
        self.rpc_timeout_s = rpc_timeout_s
        self.on_packet_in = on_packet_in
        self.log = log or logging.getLogger("controller.session")
        self.names: P4Names | None = None
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue | None = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._arb = threading.Condition()
        self._primary = False
        self._arb_seen = False
        self._highest: int | None = None
        self.stream_status: tuple[grpc.StatusCode, str] | None = None
        self.stream_up = threading.Event()
        self.stream_lost = threading.Event()
        self.generation = 0  # increments on each successful connect

    # ---- stream -------------------------------------------------------------------------------
    @property
    def is_primary(self) -> bool:
        return self._primary and self.stream_up.is_set()

    def connect(self, timeout_s: float = 5.0) -> None:
        """Open the channel and the stream and arbitrate; raises ``SessionError`` if unreachable."""
        self.close()
        ch = grpc.insecure_channel(self.address, options=[("grpc.max_receive_message_length", 64 << 20),
                                                          ("grpc.max_send_message_length", 64 << 20)])
        try:
            grpc.channel_ready_future(ch).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            ch.close()
            raise SessionError(f"switch {self.name}: no P4Runtime server at {self.address}") from None
        self._channel, self._stub = ch, p4runtime_pb2_grpc.P4RuntimeStub(ch)
        self._requests = q = queue.Queue()
        self.stream_status: tuple[grpc.StatusCode, str] | None = None  # how the stream ended, if it did
        with self._arb:
            self._arb_seen, self._primary = False, False
        self.stream_lost.clear()
        responses = self._stub.StreamChannel(self._iter_requests(q))
        self._reader = threading.Thread(target=self._read_stream, args=(responses, q),
                                        name=f"p4rt-{self.name}", daemon=True)
        self._reader.start()
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
            if ended is not None and ended[0] == grpc.StatusCode.INVALID_ARGUMENT and "election id" in ended[1]:
                # the spec's answer to a duplicate election id (what softswitch and PI/bmv2 send)
                raise ElectionIdInUse(f"switch {self.name}: election id {self.election_id} is already used by "
                                      f"another controller at {self.address} (a second mrc-controller? give this "
                                      f"one another --election-id): {ended[1]}")
            raise SessionError(f"switch {self.name}: no arbitration answer from {self.address}")
        self.stream_up.set()
        self.generation += 1

    @staticmethod
    def _iter_requests(q: queue.Queue) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            item = q.get()
            if item is None:
                return
            yield item

    def _send_arbitration(self) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        _uint128(req.arbitration.election_id, self.election_id)
        if self._requests is not None:
            self._requests.put(req)

    def _read_stream(self, responses, q: queue.Queue) -> None:
        try:
            for msg in responses:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self._on_arbitration(msg.arbitration)
                elif kind == "packet":
                    self._on_packet(msg.packet)
                elif kind == "error":
                    self.log.warning("stream error", extra={"fields": {
                        "switch": self.name, "code": msg.error.canonical_code, "error": msg.error.message}})
        except grpc.RpcError as e:
            self.stream_status = (e.code(), e.details() or "")
            if q is self._requests:  # not a close() of ours
                self.log.warning("stream lost", extra={"fields": {"switch": self.name, "code": str(e.code()),
                                                                  "detail": e.details()}})
        finally:
            if q is self._requests:
                self.stream_up.clear()
                self.stream_lost.set()
                with self._arb:
                    self._primary = False
                    self._arb.notify_all()

    def _on_arbitration(self, arb) -> None:
        eid = (arb.election_id.high << 64) | arb.election_id.low
        with self._arb:
            self._highest = max(self._highest or 0, eid)
            was = self._primary
            self._primary = arb.status.code == code_pb2.OK
            self._arb_seen = True
            self._arb.notify_all()
        if self._primary != was:
            self.log.info("mastership", extra={"fields": {"switch": self.name, "primary": self._primary,
                                                          "election_id": self.election_id}})
        if arb.status.code == code_pb2.NOT_FOUND and self.takeover and self._highest is not None:
            # no primary: the previous one went away; take over above the highest id seen
            new_id = max(self.election_id, self._highest + 1)
            self.log.info("taking over mastership", extra={"fields": {
                "switch": self.name, "old_election_id": self.election_id, "election_id": new_id}})
            self.election_id = new_id
            self._send_arbitration()

    def _on_packet(self, pkt: p4runtime_pb2.PacketIn) -> None:
        meta: dict[str, int] = {}
        if self.names is not None and PACKET_IN in self.names.meta:
            ids = {i: n for n, (i, _) in self.names.metadata_ids(PACKET_IN).items()}
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
        q, self._requests = self._requests, None
        if q is not None:
            q.put(None)
        ch, self._channel, self._stub = self._channel, None, None
        self.stream_up.clear()
        with self._arb:
            self._primary = False
        if ch is not None:
            ch.close()
        if self._reader is not None:
            self._reader.join(timeout=2.0)
            self._reader = None

    # ---- unary calls --------------------------------------------------------------------------
    def _call(self, what: str, fn, req):
        stub = self._stub
        if stub is None:
            raise SessionError(f"switch {self.name}: not connected")
        try:
            return fn(stub)(req, timeout=self.rpc_timeout_s)
        except grpc.RpcError as e:
            raise SessionError(f"switch {self.name}: {what}: {e.code().name}: {e.details()}") from e

    def get_pipeline_cookie(self) -> int | None:
        """The running pipeline's cookie, 0 if it has none, None if no pipeline is set."""
        req = GFPC(device_id=self.device_id, response_type=GFPC.COOKIE_ONLY)
        stub = self._stub
        if stub is None:
            raise SessionError(f"switch {self.name}: not connected")
        try:
            resp = stub.GetForwardingPipelineConfig(req, timeout=self.rpc_timeout_s)
        except grpc.RpcError as e:
            if e.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                return None
            raise SessionError(f"switch {self.name}: GetForwardingPipelineConfig: {e.code().name}: "
                               f"{e.details()}") from e
        return resp.config.cookie.cookie if resp.config.HasField("cookie") else 0

    def get_p4info(self) -> p4info_pb2.P4Info | None:
        """The running pipeline's P4Info, or None if no pipeline is set."""
        req = GFPC(device_id=self.device_id, response_type=GFPC.P4INFO_AND_COOKIE)
        try:
            resp = self._call("GetForwardingPipelineConfig", lambda s: s.GetForwardingPipelineConfig, req)
        except SessionError as e:
            if isinstance(e.__cause__, grpc.RpcError) and e.__cause__.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None
            raise
        return resp.config.p4info

    def set_pipeline(self, cfg: PipelineConfig) -> None:
        """VERIFY_AND_COMMIT the pipeline (the switch starts empty)."""
        req = SFPC(device_id=self.device_id, action=SFPC.VERIFY_AND_COMMIT)
        _uint128(req.election_id, self.election_id)
        req.config.p4info.CopyFrom(cfg.p4info)
        req.config.p4_device_config = cfg.device_config
        req.config.cookie.cookie = cfg.cookie
        stub = self._stub
        if stub is None:
            raise SessionError(f"switch {self.name}: not connected")
        try:  # a target compiles/loads the program here: allow more than a table write
            stub.SetForwardingPipelineConfig(req, timeout=max(self.rpc_timeout_s, PIPELINE_TIMEOUT_S))
        except grpc.RpcError as e:
            raise SessionError(f"switch {self.name}: SetForwardingPipelineConfig: {e.code().name}: "
                               f"{e.details()}") from e
        self.names = P4Names.from_p4info(cfg.p4info)

    def use_p4info(self, p4info: p4info_pb2.P4Info) -> None:
        """Resolve names against the P4Info the switch runs."""
        self.names = P4Names.from_p4info(p4info)

    def write(self, updates: Iterable[p4runtime_pb2.Update], chunk: int = WRITE_CHUNK) -> int:
        """Write updates in batches of ``chunk``; returns how many were written or raises on the first
        failed batch (the message lists each failed update)."""
        ups = list(updates)
        done = 0
        for i in range(0, len(ups), chunk):
            req = p4runtime_pb2.WriteRequest(device_id=self.device_id, atomicity=p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR)
            _uint128(req.election_id, self.election_id)
            req.updates.extend(ups[i:i + chunk])
            try:
                self._call("Write", lambda s: s.Write, req)
            except SessionError as e:
                cause = e.__cause__
                errs = batch_errors(cause) if isinstance(cause, grpc.RpcError) else []
                failed = [(j, c, m) for j, (c, m) in enumerate(errs) if c != code_pb2.OK]
                done += len(errs) - len(failed) if errs else 0
                detail = "; ".join(f"update {i + j} ({_describe(ups[i + j], self.names)}): "
                                   f"{code_pb2.Code.Name(c)} {m}" for j, c, m in failed[:5])
                raise SessionError(f"{e}{' -- ' + detail if detail else ''}") from cause
            done += len(req.updates)
        return done

    def read(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        """Read (wildcards allowed); all entities of all responses."""
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        stub = self._stub
        if stub is None:
            raise SessionError(f"switch {self.name}: not connected")
        try:
            return [e for resp in stub.Read(req, timeout=self.rpc_timeout_s) for e in resp.entities]
        except grpc.RpcError as e:
            raise SessionError(f"switch {self.name}: Read: {e.code().name}: {e.details()}") from e

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        """Send a PacketOut (controller header fields by name, e.g. ``egress_port=3``)."""
        if self._requests is None or self.names is None:
            raise SessionError(f"switch {self.name}: not connected")
        ids = self.names.metadata_ids(PACKET_OUT)
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for name, value in metadata.items():
            if name not in ids:
                raise SessionError(f"switch {self.name}: packet_out has no field {name!r}")
            req.packet.metadata.add(metadata_id=ids[name][0], value=canonical(value))
        self._requests.put(req)


def _describe(u: p4runtime_pb2.Update, names: P4Names | None) -> str:
    """Short human description of an update (table/profile name) for error messages."""
    e = u.entity
    kind = e.WhichOneof("entity")
    if kind == "table_entry" and names is not None:
        t = names.table_by_id.get(e.table_entry.table_id)
        return f"{p4runtime_pb2.Update.Type.Name(u.type)} {t.preamble.name if t else e.table_entry.table_id}"
    return f"{p4runtime_pb2.Update.Type.Name(u.type)} {kind}"
