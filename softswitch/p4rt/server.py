"""The P4Runtime gRPC server of softswitch (``p4.v1.P4Runtime`` service).

The engine gives three callbacks: ``pipeline_loader(p4info, device_config) -> loaded`` builds
(but does not start) a pipeline for SetForwardingPipelineConfig and returns an object with a
``state`` attribute holding its ``SwitchState`` (or the ``SwitchState`` itself); ``on_commit``
(optional) is told when a loaded pipeline becomes the running one; ``on_packet_out(frame)``
receives PacketOut frames with the ``packet_out`` controller header prepended. The engine calls
``send_packet_in(frame)`` for frames the data plane sends to the CPU port.

Every resource a client can make the server hold is bounded (``Limits``; docs/softswitch.md
lists them): open streams (in total and per client address), streams that never arbitrate,
messages queued to a stream that is not read (PacketIns and digests beyond the bound are dropped
and counted), concurrent Reads (a Read is answered in small units, taking the lock per unit, so
it never holds up a Write for long), PacketOut size and egress port.  A client over a limit gets
RESOURCE_EXHAUSTED (or the StreamError the spec gives for a PacketOut); the worker pool is sized
so that streams can never take the threads the unary RPCs (Capabilities, Write, Read,
SetForwardingPipelineConfig) need.
"""
from __future__ import annotations

import importlib.metadata
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Self

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from softswitch.runtime import SwitchState, wire
from softswitch.runtime.digests import DigestListOut
from softswitch.runtime.errors import Code, P4RuntimeError

from .arbitration import Arbiter, Controller, Notice
from .errors import abort, abort_batch
from .packet_io import ControllerHeader, controller_headers
from .reads import answer, read_units

log = logging.getLogger("softswitch.p4rt")


def _load_libc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim  # glibc; absent on musl and macOS
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _load_libc_trim()


def release_free_memory() -> None:
    """Give memory a pipeline build freed back to the system.  Building mrc_switch.p4 peaks ~30 MiB
    above what the pipeline keeps; glibc keeps that peak in the malloc arena of the gRPC thread that
    built it, so each thread that served a SetForwardingPipelineConfig (a VERIFY too) held its own
    ~30 MiB and a switch grew by 67 MiB under a burst of them (CI, the hostile-client test)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)

SFPC = p4runtime_pb2.SetForwardingPipelineConfigRequest
GFPC = p4runtime_pb2.GetForwardingPipelineConfigRequest
READ_CHUNK = 1000
IDLE_SCAN_S = 0.05  # how often entries of idle-timeout tables are checked (notification latency)


def api_version() -> str:
    """The P4Runtime API version of the installed protos (what Capabilities reports)."""
    try:
        return importlib.metadata.version("p4runtime")
    except importlib.metadata.PackageNotFoundError:
        return "1.4.1"


def _eid(msg) -> int | None:
    if not msg.HasField("election_id"):
        return None
    return (msg.election_id.high << 64) | msg.election_id.low


@dataclass
class _Pipeline:
    loaded: object
    state: SwitchState
    p4info: p4info_pb2.P4Info
    device_config: bytes
    cookie: int | None
    packet_in: ControllerHeader | None
    packet_out: ControllerHeader | None


@dataclass
class Limits:
    """What one client can make the server hold (see docs/softswitch.md "Limits")."""

    # open StreamChannels in total, and from one client address (host); the next one gets
    # RESOURCE_EXHAUSTED.  bmv2's PI server takes 16 arbitrated controllers per device, so 16 from one
    # host (every controller of a loopback test) fit here too, with room for streams not yet arbitrated
    max_streams: int = 24
    max_streams_per_client: int = 16
    arbitration_timeout_s: float = 10.0  # a stream must send its MasterArbitrationUpdate within this
    stream_queue: int = 1024  # messages queued to one stream; PacketIns/digests beyond are dropped
    max_concurrent_reads: int = 8  # Reads in progress; the next one gets RESOURCE_EXHAUSTED
    unary_workers: int = 16  # threads kept for unary RPCs on top of one per allowed stream
    max_packet_out_bytes: int = 9216 + 64  # PacketOut payload (a jumbo frame plus headroom)
    max_message_bytes: int = 4 << 20  # largest request gRPC accepts (its default, written down)


class _StreamEnd:
    """Queued to a stream to terminate it with an error status (or normally when err is None)."""

    def __init__(self, err: P4RuntimeError | None = None) -> None:
        self.err = err


class _WritersFirst:
    """Lets a waiting Write (or pipeline change) take the server lock ahead of the next unit of a
    Read: a lock is not fair, and a Read re-taking it at once would starve the writer."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._waiting = 0

    @contextmanager
    def writing(self, lock: threading.RLock) -> Iterator[None]:
        with self._cv:
            self._waiting += 1
        try:
            with lock:
                yield
        finally:
            with self._cv:
                self._waiting -= 1
                if not self._waiting:
                    self._cv.notify_all()

    def reader_pause(self, timeout: float = 1.0) -> None:
        """Before a Read takes the lock again: wait (bounded) until no writer is waiting."""
        with self._cv:
            if self._waiting:
                self._cv.wait_for(lambda: not self._waiting, timeout)


@dataclass(eq=False)
class _Outbox:
    """Bounded queue of messages to one stream.  ``put`` drops (returns False) past ``limit`` or
    after ``close``; ``_StreamEnd`` always gets in.  ``close`` frees what was queued."""

    limit: int
    dropped: int = 0
    closed: bool = False
    _q: deque = field(default_factory=deque)
    _cv: threading.Condition = field(default_factory=threading.Condition)

    def put(self, item: object) -> bool:
        with self._cv:
            if self.closed:
                return False
            if len(self._q) >= self.limit and not isinstance(item, _StreamEnd):
                self.dropped += 1
                return False
            self._q.append(item)
            self._cv.notify()
            return True

    def get(self, timeout: float | None = None) -> object | None:
        """Next item; None after ``close`` or when ``timeout`` passes."""
        with self._cv:
            if not self._q and not self.closed:
                self._cv.wait(timeout)
            if self.closed or not self._q:
                return None
            return self._q.popleft()

    def close(self) -> None:
        with self._cv:
            self.closed = True
            self._q.clear()
            self._cv.notify_all()

    def __len__(self) -> int:
        return len(self._q)


class P4RuntimeServer:
    """P4Runtime server for one device. ``start()`` binds ``address`` (port 0 picks a free port)."""

    def __init__(self, device_id: int, pipeline_loader: Callable[[p4info_pb2.P4Info, bytes], object],
                 on_packet_out: Callable[[bytes], None], address: str = "127.0.0.1:9559",
                 on_commit: Callable[[object], None] | None = None, max_workers: int | None = None,
                 limits: Limits | None = None,
                 egress_ports: Callable[[], Collection[int] | None] | None = None,
                 encoded_reads: bool = True) -> None:
        self.device_id = device_id
        # a Read's answer built from kept encodings (``SwitchState.read_wire``), or, False, from
        # messages as until 2026-12-07 (bench/softswitch_reads.py compares the two)
        self.encoded_reads = encoded_reads
        self.address = address
        self._loader = pipeline_loader
        self._on_packet_out = on_packet_out
        self._on_commit = on_commit
        self.limits = limits or Limits()
        # one thread per allowed stream plus the unary reserve: streams can never starve unary RPCs
        self._max_workers = max_workers or self.limits.max_streams + self.limits.unary_workers
        self._egress_ports = egress_ports
        self._streams: dict[str, int] = {}  # client host -> open streams
        self._streams_lock = threading.Lock()
        self._reads = threading.BoundedSemaphore(self.limits.max_concurrent_reads)
        self._writers = _WritersFirst()
        self.packet_ins_dropped = 0  # PacketIns/digests not queued: the primary's stream was full
        self.streams_refused = 0
        self._lock = threading.RLock()  # serialises writes, reads of tables, pipeline changes
        self._arb_lock = threading.Lock()
        self._arbiter = Arbiter()
        self._pipeline: _Pipeline | None = None
        self._saved: _Pipeline | None = None
        self._server: grpc.Server | None = None
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self.port = 0

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> int:
        """Start serving; returns the bound TCP port."""
        host, sep, tail = self.address.rpartition(":")
        if not self.address.startswith("unix:") and not (sep and host and tail.isdigit()):
            # gRPC would look a port-less name up (default port 443) or a service name up ("http": 80)
            raise OSError(f"cannot bind P4Runtime server to {self.address} (not HOST:PORT)")
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._max_workers,
                                                        thread_name_prefix="p4rt"),
                             options=[("grpc.max_receive_message_length", self.limits.max_message_bytes),
                                      # gRPC sets SO_REUSEPORT by default: a second switch on the same
                                      # address would bind too and take a share of the connections
                                      ("grpc.so_reuseport", 0)])
        servicer = _Servicer(self)
        # Read yields its responses already encoded: this handler, found before the generated one,
        # hands them to gRPC as they are (no response serializer)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("p4.v1.P4Runtime", {
            "Read": grpc.unary_stream_rpc_method_handler(
                servicer.Read, request_deserializer=p4runtime_pb2.ReadRequest.FromString,
                response_serializer=None)}),))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
        try:
            port = server.add_insecure_port(self.address)
        except RuntimeError:  # grpcio >= 1.5x raises where older ones returned 0
            port = 0
        if port == 0:
            raise OSError(f"cannot bind P4Runtime server to {self.address} (address in use or not local)")
        server.start()
        self._server = server
        self.port = port
        self._stop.clear()
        self._timer = threading.Thread(target=self._timer_loop, name="p4rt-timer", daemon=True)
        self._timer.start()
        log.info("P4Runtime server listening on %s (port %d), device id %d", self.address, port, self.device_id)
        return port

    def stop(self, grace: float | None = 0.5) -> None:
        """Stop serving; open streams are ended."""
        self._stop.set()
        with self._arb_lock:
            for c in list(self._arbiter.controllers):
                c.outbox.put(_StreamEnd())
        if self._server is not None:
            self._server.stop(grace).wait()
            self._server = None
        if self._timer is not None:
            self._timer.join(timeout=5)
            self._timer = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- engine-facing ------------------------------------------------------------------------
    @property
    def state(self) -> SwitchState | None:
        """Runtime state of the running pipeline (None before the first commit)."""
        p = self._pipeline
        return None if p is None else p.state

    @property
    def pipeline(self) -> object | None:
        """What ``pipeline_loader`` returned for the running pipeline."""
        p = self._pipeline
        return None if p is None else p.loaded

    def send_packet_in(self, frame: bytes) -> bool:
        """Send a frame the data plane sent to the CPU port to the primary controller as PacketIn.

        The ``packet_in`` controller header is stripped into metadata. Returns False when the
        frame was dropped (no primary, or shorter than the header)."""
        p = self._pipeline
        msg = p4runtime_pb2.StreamMessageResponse()
        if p is not None and p.packet_in is not None:
            split = p.packet_in.decode(frame)
            if split is None:
                log.warning("PacketIn dropped: %d bytes, shorter than the packet_in header", len(frame))
                return False
            msg.packet.metadata.extend(split[0])
            msg.packet.payload = split[1]
        else:
            msg.packet.payload = frame
        primary = self._arbiter.primary
        if primary is None:
            return False
        if not primary.outbox.put(msg):
            self.packet_ins_dropped += 1
            if self.packet_ins_dropped in (1, 10, 100, 1000) or self.packet_ins_dropped % 10000 == 0:
                log.warning("PacketIn dropped: the primary's stream has %d messages queued (%d dropped "
                            "so far)", self.limits.stream_queue, self.packet_ins_dropped)
            return False
        return True

    # ---- digests and idle timeouts ------------------------------------------------------------
    def _timer_loop(self) -> None:
        """Every 10 ms: flush digest lists whose max_timeout_ns passed; every IDLE_SCAN_S: send
        IdleTimeoutNotifications."""
        next_scan = 0.0
        while not self._stop.wait(0.01):
            p = self._pipeline
            if p is None:
                continue
            try:
                p.state.digests.poll()
            except Exception:
                log.exception("digest timer")
            if time.monotonic() >= next_scan:
                next_scan = time.monotonic() + IDLE_SCAN_S
                try:
                    self.scan_idle_timeouts()
                except Exception:
                    log.exception("idle-timeout scan")

    def scan_idle_timeouts(self) -> int:
        """Send one IdleTimeoutNotification per idle-timeout table with entries not hit for their
        ``idle_timeout_ns`` (to the primary; dropped when there is none -- the spec allows it, and
        the entry's timer restarts either way). Returns the number of notifications sent."""
        sent = 0
        p = self._pipeline
        if p is None or not p.state.idle_tables:  # the common case: no lock taken
            return 0
        due = p.state.idle_next_due()  # a lower bound: nothing can have expired before it
        if due is None or due > time.monotonic_ns():  # nothing due: no lock taken either
            return 0
        with self._writers.writing(self._lock):
            p = self._pipeline
            if p is None:
                return 0
            expired = p.state.idle_expired(time.monotonic_ns())
        for entries in expired:
            msg = p4runtime_pb2.StreamMessageResponse()
            msg.idle_timeout_notification.table_entry.extend(entries)
            msg.idle_timeout_notification.timestamp = time.time_ns()
            primary = self._arbiter.primary
            if primary is not None and primary.outbox.put(msg):
                sent += 1
        return sent

    def _send_digest(self, lst: DigestListOut) -> None:
        p = self._pipeline
        primary = self._arbiter.primary
        if p is None or primary is None:
            return
        if not primary.outbox.put(p4runtime_pb2.StreamMessageResponse(digest=p.state.digests.to_proto(lst))):
            self.packet_ins_dropped += 1

    # ---- pipeline config ----------------------------------------------------------------------
    def _rw_target(self) -> _Pipeline | None:
        """The pipeline Writes and Reads refer to: the config saved by VERIFY_AND_SAVE until it is
        committed (the spec: they "must refer to fields in the new config", and COMMIT realizes it
        with those writes), else the running one."""
        return self._saved if self._saved is not None else self._pipeline

    def _load(self, config: p4runtime_pb2.ForwardingPipelineConfig) -> _Pipeline:
        if not config.HasField("p4info"):
            raise P4RuntimeError(Code.INVALID_ARGUMENT, "ForwardingPipelineConfig has no p4info")
        p4info = p4info_pb2.P4Info()
        p4info.CopyFrom(config.p4info)
        device_config = bytes(config.p4_device_config)
        if not device_config and self._pipeline is not None:
            # a P4Info without a device config: the running program again, with this P4Info (bmv2's PI
            # server does the same, its "legacy support": it keeps the JSON the switch runs)
            device_config = self._pipeline.device_config
        try:
            loaded = self._loader(p4info, device_config)
        except P4RuntimeError:
            raise
        except Exception as exc:
            raise P4RuntimeError(Code.INVALID_ARGUMENT, f"cannot load pipeline: {exc}") from exc
        state = loaded if isinstance(loaded, SwitchState) else getattr(loaded, "state", None)
        if not isinstance(state, SwitchState):
            raise P4RuntimeError(Code.INTERNAL, "pipeline loader returned no SwitchState")
        pin, pout = controller_headers(p4info)
        cookie = config.cookie.cookie if config.HasField("cookie") else None
        return _Pipeline(loaded, state, p4info, device_config, cookie, pin, pout)

    def _commit(self, new: _Pipeline, reconcile: bool) -> None:
        old = self._pipeline
        if reconcile and old is not None:
            dropped = new.state.reconcile_from(old.state)
            if dropped:  # the spec: INVALID_ARGUMENT when the state cannot be preserved; old stays
                more = f" (and {len(dropped) - 5} more)" if len(dropped) > 5 else ""
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "RECONCILE_AND_COMMIT: the forwarding state "
                                     f"cannot be preserved in the new config: {'; '.join(dropped[:5])}{more}")
        if old is not None:
            old.state.digests.set_sink(None)
        new.state.digests.set_sink(self._send_digest)
        self._pipeline = new
        if self._on_commit is not None:
            self._on_commit(new.loaded)

    def set_pipeline(self, req: p4runtime_pb2.SetForwardingPipelineConfigRequest) -> None:
        try:
            self._set_pipeline(req)
        finally:  # the build's temporaries (and a verified-only or replaced pipeline) are gone now
            release_free_memory()

    def _set_pipeline(self, req: p4runtime_pb2.SetForwardingPipelineConfigRequest) -> None:
        action = req.action
        with self._writers.writing(self._lock):
            if action == SFPC.VERIFY:
                self._load(req.config)
            elif action == SFPC.VERIFY_AND_SAVE:
                self._saved = self._load(req.config)
            elif action in (SFPC.VERIFY_AND_COMMIT, SFPC.RECONCILE_AND_COMMIT):
                self._commit(self._load(req.config), reconcile=action == SFPC.RECONCILE_AND_COMMIT)
                self._saved = None
            elif action == SFPC.COMMIT:
                if req.HasField("config"):
                    raise P4RuntimeError(Code.INVALID_ARGUMENT, "COMMIT takes no config (it commits the one "
                                         "saved by VERIFY_AND_SAVE)")
                if self._saved is None:
                    raise P4RuntimeError(Code.NOT_FOUND, "COMMIT without a saved config "
                                         "(use VERIFY_AND_SAVE first)")
                saved, self._saved = self._saved, None
                self._commit(saved, reconcile=False)
            else:
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "SetForwardingPipelineConfig action is unspecified")

    # ---- stream -------------------------------------------------------------------------------
    def _post(self, notices: list[Notice]) -> None:
        for n in notices:
            msg = p4runtime_pb2.StreamMessageResponse()
            arb = msg.arbitration
            arb.device_id = self.device_id
            if n.election_id is not None:
                arb.election_id.high = n.election_id >> 64
                arb.election_id.low = n.election_id & ((1 << 64) - 1)
            arb.status.code = int(n.code)
            arb.status.message = {Code.OK: "primary", Code.ALREADY_EXISTS: "backup (a primary exists)",
                                  Code.NOT_FOUND: "backup (no primary)"}.get(n.code, "")
            n.to.outbox.put(msg)

    def stream_request(self, c: Controller, req: p4runtime_pb2.StreamMessageRequest) -> None:
        kind = req.WhichOneof("update")
        if kind == "arbitration":
            arb = req.arbitration
            if arb.device_id != self.device_id:
                code = Code.FAILED_PRECONDITION if c.joined else Code.NOT_FOUND
                raise P4RuntimeError(code, f"device id {arb.device_id} is not {self.device_id}")
            named = arb.HasField("role") and bool(arb.role.name or arb.role.id)
            if named and c.joined:  # a live stream keeps its role (the spec: change roles on a new stream)
                raise P4RuntimeError(Code.FAILED_PRECONDITION, "the role of a stream cannot change "
                                     "(this stream has the default role)")
            if arb.HasField("role") and arb.role.HasField("config"):
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "role.config is not supported: no role definition "
                                     "scheme is agreed with this server (leave role unset)")
            if named:
                raise P4RuntimeError(Code.UNIMPLEMENTED, "only the default role is supported")
            with self._arb_lock:
                notices = self._arbiter.arbitrate(c, _eid(arb))
                self._post(notices)
            return
        # before its arbitration a stream is a backup like any other: its PacketOut gets PERMISSION_DENIED,
        # its digest ack is ignored, the rest as below -- the stream stays open (it used to end with
        # FAILED_PRECONDITION; bmv2's PI server drops such messages and keeps the stream too)
        if kind == "packet":
            self._packet_out(c, req.packet)
        elif kind == "digest_ack":
            self._digest_ack(c, req.digest_ack)
        elif kind == "other":
            self._stream_error(c, Code.UNIMPLEMENTED, "stream message 'other' (an architecture-specific "
                               "extension) is not supported", req.other)
        else:
            self._stream_error(c, Code.UNIMPLEMENTED, "empty stream message (no update set)", None)

    def _digest_ack(self, c: Controller, ack: p4runtime_pb2.DigestListAck) -> None:
        """A DigestListAck: an ack from a backup (or a stream not yet arbitrated), or of an unknown or
        expired list, is ignored; one from the primary naming a digest not in the P4Info is a
        StreamError INVALID_ARGUMENT (the spec's example)."""
        if c is not self._arbiter.primary:
            return
        p = self._pipeline
        if p is None or ack.digest_id not in p.state.digests.ids():
            self._stream_error(c, Code.INVALID_ARGUMENT, f"DigestListAck: digest id {ack.digest_id} is not "
                               "in the P4Info", ack)
            return
        p.state.digests.ack(ack.digest_id, ack.list_id)

    def _packet_out(self, c: Controller, pkt: p4runtime_pb2.PacketOut) -> None:
        if c is not self._arbiter.primary:
            self._stream_error(c, Code.PERMISSION_DENIED, "PacketOut is only accepted from the primary", pkt)
            return
        p = self._pipeline
        if p is None:
            self._stream_error(c, Code.FAILED_PRECONDITION, "no forwarding pipeline is set", pkt)
            return
        try:
            if len(pkt.payload) > self.limits.max_packet_out_bytes:
                raise P4RuntimeError(Code.INVALID_ARGUMENT, f"PacketOut payload of {len(pkt.payload)} bytes is "
                                     f"over the {self.limits.max_packet_out_bytes}-byte limit")
            if p.packet_out is not None:
                frame = p.packet_out.encode(pkt.metadata) + pkt.payload
                self._check_egress_port(p.packet_out, pkt)
            elif len(pkt.metadata):
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "the program has no packet_out header")
            else:
                frame = bytes(pkt.payload)
            self._on_packet_out(frame)
        except P4RuntimeError as err:
            self._stream_error(c, err.code, err.message, pkt)

    def _check_egress_port(self, hdr: ControllerHeader, pkt: p4runtime_pb2.PacketOut) -> None:
        """An ``egress_port`` metadata naming no port of this switch (nor its CPU port, where a packet
        comes back as a PacketIn) is refused (INVALID_ARGUMENT) -- only when the header holds nothing
        else but padding, so that the port is where the packet goes.  A header with other fields may
        tell the program to ignore the port (fabric.p4's ``do_forwarding``: the pipeline picks the
        port and ``egress_port`` is a placeholder, often 0); bmv2 checks no port at all, the program
        decides."""
        if self._egress_ports is None:
            return
        ports = self._egress_ports()
        fid = next((f for f, name, _ in hdr.fields if name == "egress_port"), None)
        if ports is None or fid is None or any(f != fid and f not in hdr.padding for f, _, _ in hdr.fields):
            return
        m = next((m for m in pkt.metadata if m.metadata_id == fid), None)
        port = 0 if m is None else int.from_bytes(m.value, "big")
        if port not in ports:
            raise P4RuntimeError(Code.INVALID_ARGUMENT, f"PacketOut egress_port {port} is not a port of this "
                                 f"switch (ports: {', '.join(map(str, sorted(ports))) or 'none'})")

    @staticmethod
    def _stream_error(c: Controller, code: Code, message: str, about) -> None:
        """A ``StreamError`` on ``c``'s stream whose ``details`` name the message it answers (the spec
        requires the oneof): a PacketOut, a DigestListAck, else ``other`` (the extension's Any echoed,
        or unset for a message with nothing set)."""
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.error.canonical_code = int(code)
        msg.error.message = message
        if isinstance(about, p4runtime_pb2.PacketOut):
            msg.error.packet_out.packet_out.CopyFrom(about)
        elif isinstance(about, p4runtime_pb2.DigestListAck):
            msg.error.digest_list_ack.digest_list_ack.CopyFrom(about)
        else:
            msg.error.other.SetInParent()
            if about is not None:
                msg.error.other.other.CopyFrom(about)
        c.outbox.put(msg)

    def stream_closed(self, c: Controller) -> None:
        """``c``'s stream ended: leave arbitration, free its queue (idempotent)."""
        with self._arb_lock:
            self._post(self._arbiter.leave(c))
        c.outbox.close()

    # ---- stream admission ---------------------------------------------------------------------
    @staticmethod
    def client_host(peer: str) -> str:
        """The host part of a gRPC peer string (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``, ``unix:...``)."""
        kind, _, rest = peer.partition(":")
        if kind in ("ipv4", "ipv6"):
            return rest.rsplit(":", 1)[0]
        return peer

    def admit_stream(self, host: str) -> None:
        """Count a new stream from ``host``; RESOURCE_EXHAUSTED when a stream limit is reached."""
        lim = self.limits
        with self._streams_lock:
            total = sum(self._streams.values())
            mine = self._streams.get(host, 0)
            if total >= lim.max_streams or mine >= lim.max_streams_per_client:
                self.streams_refused += 1
                which = (f"{lim.max_streams} streams are open" if total >= lim.max_streams else
                         f"{lim.max_streams_per_client} streams from {host} are open")
                raise P4RuntimeError(Code.RESOURCE_EXHAUSTED, f"StreamChannel refused: {which} (the limit)")
            self._streams[host] = mine + 1

    def release_stream(self, host: str) -> None:
        with self._streams_lock:
            n = self._streams.get(host, 0) - 1
            if n > 0:
                self._streams[host] = n
            else:
                self._streams.pop(host, None)

    @property
    def open_streams(self) -> int:
        with self._streams_lock:
            return sum(self._streams.values())


def _read_response(entities: list, encoded: bool) -> bytes:
    """A ReadResponse's bytes: its ``entities`` (field 1, repeated) one after the other."""
    if encoded:
        return b"".join([wire.field(wire.TAG_RESPONSE_ENTITY, b) for b in entities])
    return p4runtime_pb2.ReadResponse(entities=entities).SerializeToString()


class _Servicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, srv: P4RuntimeServer) -> None:
        self.srv = srv

    def _check_device(self, device_id: int, context) -> None:
        if device_id != self.srv.device_id:
            abort(context, P4RuntimeError(Code.NOT_FOUND, f"device id {device_id} is not {self.srv.device_id}"))

    def _check_role(self, req, context) -> None:
        if req.role:
            abort(context, P4RuntimeError(Code.NOT_FOUND, f"role '{req.role}' does not exist (only the default "
                                          "role, an empty name, does)"))

    def _check_primary(self, req, context) -> None:
        self._check_role(req, context)
        if not self.srv._arbiter.is_primary_id(_eid(req)):
            abort(context, P4RuntimeError(Code.PERMISSION_DENIED, "not the primary controller (election id "
                                          "does not match the primary's)"))

    def Write(self, request, context):
        srv = self.srv
        self._check_device(request.device_id, context)
        self._check_primary(request, context)
        results: list[P4RuntimeError | None] = []
        with srv._writers.writing(srv._lock):
            p = srv._rw_target()
            if p is None:
                abort(context, P4RuntimeError(Code.FAILED_PRECONDITION, "no forwarding pipeline is set"))
            if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:  # after the pipeline, as PI
                abort(context, P4RuntimeError(Code.UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported"))
            for u in request.updates:
                try:
                    p.state.write(u)
                    results.append(None)
                except P4RuntimeError as err:
                    results.append(err)
                except Exception as exc:
                    log.exception("Write update failed")
                    results.append(P4RuntimeError(Code.INTERNAL, f"internal error: {exc}"))
        if any(r is not None for r in results):
            abort_batch(context, results)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context) -> Iterator[bytes]:
        """Answer in units (``reads.read_units``) taking the lock per unit, streaming responses of
        at most READ_CHUNK entities; at most ``max_concurrent_reads`` Reads run at once.  Each
        response is yielded encoded (the Read handler has no serializer): from the entities'
        encodings (``SwitchState.read_wire``), or with ``encoded_reads`` off from messages."""
        srv = self.srv
        self._check_device(request.device_id, context)
        self._check_role(request, context)  # a Read filters by role: one that does not exist, as for a Write
        if not srv._reads.acquire(blocking=False):
            abort(context, P4RuntimeError(Code.RESOURCE_EXHAUSTED, f"{srv.limits.max_concurrent_reads} Reads are "
                                          "in progress (the limit); retry when one has finished"))
        try:
            p = srv._rw_target()
            if p is None:
                abort(context, P4RuntimeError(Code.FAILED_PRECONDITION, "no forwarding pipeline is set"))
            encoded = srv.encoded_reads
            out: list = []  # encoded Entities (or Entity messages)
            sent = False
            try:
                for ent in request.entities:
                    for unit in read_units(p.state, ent):
                        if not context.is_active():
                            return
                        srv._writers.reader_pause()
                        with srv._lock:
                            if srv._rw_target() is not p:
                                raise P4RuntimeError(Code.ABORTED, "the forwarding pipeline changed during "
                                                     "the Read")
                            out += answer(p.state, unit, encoded)
                        while len(out) >= READ_CHUNK:
                            chunk, out = out[:READ_CHUNK], out[READ_CHUNK:]
                            sent = True
                            yield _read_response(chunk, encoded)
            except P4RuntimeError as err:
                if out:  # what was read before the failing request goes first, as from PI
                    yield _read_response(out, encoded)
                abort(context, err)
            if out or not sent:
                yield _read_response(out, encoded)
        finally:
            srv._reads.release()

    def SetForwardingPipelineConfig(self, request, context):
        self._check_device(request.device_id, context)
        self._check_primary(request, context)
        try:
            self.srv.set_pipeline(request)
        except P4RuntimeError as err:
            abort(context, err)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        self._check_device(request.device_id, context)
        if request.response_type not in GFPC.ResponseType.values():  # as bmv2's PI server
            abort(context, P4RuntimeError(Code.INVALID_ARGUMENT, "Invalid response_type in "
                                          "GetForwardingPipelineConfigRequest"))
        # the config Reads and Writes refer to: one saved by VERIFY_AND_SAVE, else the running one (a
        # client decodes its Reads with this P4Info; bmv2's PI server answers the saved one too)
        p = self.srv._rw_target()
        resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if p is None:  # the spec: no config known -> the response's config is unset
            return resp
        cfg = resp.config
        cfg.SetInParent()  # a config is known: set even when COOKIE_ONLY finds no cookie to put in it
        if p.cookie is not None:
            cfg.cookie.cookie = p.cookie
        rt = request.response_type
        if rt in (GFPC.ALL, GFPC.P4INFO_AND_COOKIE):
            cfg.p4info.CopyFrom(p.p4info)
        if rt in (GFPC.ALL, GFPC.DEVICE_CONFIG_AND_COOKIE):
            cfg.p4_device_config = p.device_config
        return resp

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=api_version())

    def StreamChannel(self, request_iterator, context):
        srv = self.srv
        host = srv.client_host(context.peer())
        try:
            srv.admit_stream(host)
        except P4RuntimeError as err:
            if srv.streams_refused in (1, 10, 100, 1000) or srv.streams_refused % 10000 == 0:  # no log flood
                log.warning("%s (%d refused so far)", err.message, srv.streams_refused)
            abort(context, err)
        outbox = _Outbox(srv.limits.stream_queue)
        c = Controller(outbox)
        once = threading.Lock()

        def release() -> None:  # from the RPC's done callback and the generator: exactly once
            if once.acquire(blocking=False):
                srv.stream_closed(c)
                srv.release_stream(host)

        def reader() -> None:
            try:
                for req in request_iterator:
                    try:
                        srv.stream_request(c, req)
                    except P4RuntimeError as err:
                        outbox.put(_StreamEnd(err))
                        return
            except Exception as exc:  # noqa: BLE001 - the client went away
                log.debug("stream closed: %s", exc)
            outbox.put(_StreamEnd())

        context.add_callback(release)  # the RPC ended (also when the generator is never resumed)
        th = threading.Thread(target=reader, name="p4rt-stream", daemon=True)
        th.start()
        deadline = time.monotonic() + srv.limits.arbitration_timeout_s
        try:
            while True:
                wait = None if c.joined else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    release()
                    abort(context, P4RuntimeError(Code.FAILED_PRECONDITION, "no MasterArbitrationUpdate within "
                                                  f"{srv.limits.arbitration_timeout_s:g} s of opening the stream"))
                item = outbox.get(wait)
                if item is None:
                    if outbox.closed:
                        return
                    continue
                if isinstance(item, _StreamEnd):
                    if item.err is not None:
                        release()
                        abort(context, item.err)
                    return
                yield item
        finally:
            release()
