"""The runnable switch: ports + traffic manager + packet loop + P4Runtime server + runtime control.

It glues the parts together: the front end (``softswitch.frontend``/``p4info``/``devconfig``), the
compiled pipeline (``softswitch.exec``), the runtime state and P4Runtime server
(``softswitch.runtime``/``softswitch.p4rt``) and the engine (``softswitch.engine``).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from softswitch.engine.control import ControlHandler, ControlServer, split_addr
from softswitch.engine.loop import PacketLoop
from softswitch.engine.pcap import CapturingPort
from softswitch.engine.ports import LinuxPort
from softswitch.engine.tm import TrafficManager

log = logging.getLogger("softswitch")
TRACE = 5  # logging level of the per-packet trace (bmv2's "trace")


@dataclass
class SwitchConfig:
    """Everything the command line (or the Python API) can set."""

    device_id: int = 1
    interfaces: list[tuple[int, str]] = field(default_factory=list)
    program: str | None = None  # a .p4 file; None waits for SetForwardingPipelineConfig
    defines: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    grpc_addr: str = "0.0.0.0:9559"
    cpu_port: int | None = None
    # (port or None for all, priority or None for all, value)
    queue_depths: list[tuple[int | None, int | None, int]] = field(default_factory=list)
    queue_rates: list[tuple[int | None, int | None, int]] = field(default_factory=list)
    link_delays: list[tuple[int | None, int]] = field(default_factory=list)
    link_rates: list[tuple[int | None, int]] = field(default_factory=list)  # shared by a port's 8 queues
    link_bps: list[tuple[int | None, int]] = field(default_factory=list)  # the same, in bits/s per byte on the wire
    runtime_addr: str | None = None
    pcap_dir: str | None = None  # --pcap: IFNAME_in.pcap / IFNAME_out.pcap per interface here
    trace: bool = False  # per-packet trace through the "softswitch.trace" logger


@dataclass
class LoadedPipeline:
    """What the P4Runtime server holds per pipeline: its runtime state and compiled pipeline."""

    state: object
    pipeline: object


class SwitchError(Exception):
    """The switch could not start (bad program, address in use, ...)."""


class Switch:
    """One running switch; ``start()`` returns once the gRPC server listens."""

    def __init__(self, config: SwitchConfig) -> None:
        self.config = config
        self.tm = TrafficManager()
        self.loop = PacketLoop(self.tm, [self._port(n, name) for n, name in config.interfaces],
                               cpu_port=config.cpu_port, on_packet_in=self._packet_in)
        self.server = None
        self.control: ControlServer | None = None
        self.grpc_port: int | None = None
        self._preloaded: tuple[bytes, object] | None = None
        self._stopped = threading.Event()
        self._trace = logging.getLogger("softswitch.trace").debug if config.trace else None
        self._apply_queue_config()

    def _port(self, number: int, ifname: str) -> LinuxPort:
        """Port ``number`` on ``ifname``; with ``pcap_dir``, one that also writes pcap files."""
        if self.config.pcap_dir is None:
            return LinuxPort(number, ifname)
        try:
            return CapturingPort(number, ifname, pcap_dir=self.config.pcap_dir)
        except OSError as e:
            raise SwitchError(f"--pcap {self.config.pcap_dir}: cannot write the pcap files of {ifname}: {e}") from e

    def _apply_queue_config(self) -> None:
        cfg = self.config
        for port, pri, depth in cfg.queue_depths:
            self.tm.set_queue_depth(depth, port, pri)
        for port, pri, rate in cfg.queue_rates:
            self.tm.set_queue_rate(rate, port, pri)
        for port, delay in cfg.link_delays:
            self.tm.set_link_delay(delay, port)
        for port, rate in cfg.link_rates:
            self.tm.set_link_rate(rate, port)
        for port, bps in cfg.link_bps:
            self.tm.set_link_bps(bps, port)

    # ------------------------------------------------------------ pipeline
    def _defines(self) -> dict[str, str]:
        out = {}
        for d in self.config.defines:
            name, _, value = d.partition("=")
            out[name] = value or "1"
        return out

    def _build(self, program: object, p4info: object) -> LoadedPipeline:
        """Runtime state and compiled pipeline for ``program`` (not yet running)."""
        from softswitch.exec import build_pipeline
        from softswitch.runtime import SwitchState

        state = SwitchState(p4info)
        pipeline = build_pipeline(program, state, self.config.cpu_port, trace=self._trace)
        return LoadedPipeline(state, pipeline)

    def compile_source(self, path: str) -> tuple[object, bytes]:
        """Compile ``path`` into (P4Info, device config bytes); the program is kept for the loader."""
        from softswitch.devconfig import make_device_config
        from softswitch.frontend import load_program
        from softswitch.p4info import build_p4info

        program = load_program(path, self._defines(), self.config.include_dirs)
        p4info = build_p4info(program)
        device_config = make_device_config(path, self._defines(), self.config.include_dirs)
        self._preloaded = (device_config, program)
        return p4info, device_config

    def load_pipeline(self, p4info: object, device_config: bytes) -> LoadedPipeline:
        """P4Runtime's pipeline loader: build state + pipeline from a device config (not started)."""
        pre, self._preloaded = self._preloaded, None
        if pre is not None and pre[0] == device_config:
            program = pre[1]
        else:
            from softswitch.devconfig import load_device_config

            program = load_device_config(device_config)
        return self._build(program, p4info)

    def commit_pipeline(self, loaded: LoadedPipeline) -> None:
        """P4Runtime's on_commit: the new pipeline takes the next packet (atomic swap)."""
        self.loop.set_pipeline(loaded.pipeline)
        log.info("pipeline committed")

    # ------------------------------------------------------------ packets to/from the controller
    def _packet_in(self, frame: bytes) -> bool:
        """Hand a frame for the CPU port to the P4Runtime server; False when it was not delivered
        (no primary controller, the primary's stream full, shorter than the packet_in header)."""
        server = self.server
        return server is not None and server.send_packet_in(frame)

    def _packet_out(self, frame: bytes) -> None:
        if self.config.cpu_port is None:
            from softswitch.runtime.errors import Code, P4RuntimeError

            raise P4RuntimeError(Code.FAILED_PRECONDITION, "PacketOut refused: the switch has no --cpu-port")
        self.loop.inject(self.config.cpu_port, frame)

    def _egress_ports(self) -> set[int] | None:
        """Ports a PacketOut may name (None: any, when a tx hook stands in for interfaces): the bound
        ones and the CPU port (a frame the program sends there comes back as a PacketIn, as on bmv2)."""
        if self.loop._tx_hook is not None:
            return None
        ports = set(self.loop.ports)
        if self.config.cpu_port is not None:
            ports.add(self.config.cpu_port)
        return ports

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Load the program (if any), start the packet loop, gRPC and runtime control servers."""
        from p4.v1 import p4runtime_pb2

        from softswitch.p4rt import P4RuntimeServer

        self.server = P4RuntimeServer(self.config.device_id, self.load_pipeline, self._packet_out,
                                      self.config.grpc_addr, on_commit=self.commit_pipeline,
                                      egress_ports=self._egress_ports)
        if self.config.program:
            p4info, device_config = self.compile_source(self.config.program)
            req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
                device_id=self.config.device_id,
                action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
            req.config.p4info.CopyFrom(p4info)
            req.config.p4_device_config = device_config
            self.server.set_pipeline(req)
        self.loop.start()
        try:
            self.grpc_port = self.server.start()
            if self.config.runtime_addr:
                host, port = split_addr(self.config.runtime_addr)
                try:
                    self.control = ControlServer(ControlHandler(self.loop), host, port)
                except OSError as e:
                    raise SwitchError(f"--runtime-addr {self.config.runtime_addr}: {e.strerror or e}") from e
                self.control.start()
        except Exception:
            self.stop()
            raise
        log.info("softswitch device %d serving P4Runtime on %s", self.config.device_id,
                 self.config.grpc_addr)

    def stop(self) -> None:
        """Stop every server and thread and close every socket (idempotent)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        # The data plane first: a switch told to stop forwards nothing more (the gRPC server's grace
        # period for open streams kept a "stopped" spine forwarding for up to half a second); server
        # calls into the loop run inline once its thread is gone.
        self.loop.stop()
        if self.control is not None:
            self.control.stop()
        if self.server is not None:
            self.server.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until ``stop`` was called; True if it was."""
        return self._stopped.wait(timeout)
