"""Switch targets as plugins: one ``Target`` interface, implemented once per target.

A target says how to start a switch (its command line), how the pipeline config the controller
pushes is built (compile the P4 source, or load ``build/`` outputs of p4c), how link shaping is
applied (on the command line at start or over the switch's runtime port afterwards) and what it can
do (``has_link_delay``, ``can_write_registers``).  Everything else -- the fabric, the PTF runners,
the test configuration, the demo -- asks the target instead of testing its name; the controller
imports none of this and receives a ready ``PipelineConfig``.

Adding a target = one module here with a ``Target`` subclass, listed in ``_registry()`` and ``TARGETS``.
"""
from __future__ import annotations

import abc
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from controller.p4contract import CPU_PORT
from controller.session import PipelineConfig, SessionError

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PROGRAM = REPO_ROOT / "p4src" / "mrc_switch.p4"
DEFAULT_BUILD = REPO_ROOT / "build" / "mrc_switch"
PRIORITY_QUEUES = 8  # the data queue is priority 7 (define.p4 PRIORITY_DATA); 0 is served first
FULL_FRAME_BYTES = 8192 + 148 + 14  # a full-MTU SRv6 data frame (mrc.endpoint.driver.qp_overhead): what a
# link's ``rate_pps`` counts
# [ours] The control queue (priority PRIORITY_TRIMMED: trimmed headers, ACKs, CNPs, probes) holds this
# many times a port's data depth in frames.  Its frames are 80-250 bytes against 8 KiB data frames, so
# even 4x the frames is a few percent of the data queue's bytes; with the data depth (16) it overflowed
# under the ACKs of a whole plane after a link failure (docs/demo.md, "A control traffic class").
CONTROL_QUEUE_FACTOR = 4


def full_frames_bps(rate_pps: float) -> float:
    """Bits/s of ``rate_pps`` full frames a second on the wire (each frame plus Ethernet's 24 bytes of
    preamble, FCS and gap): a link rate in ``rate_pps`` and the hosts' NIC line rate, so that both
    charge every frame its wire bytes and agree for any frame size."""
    from mrc.wire.formats import ETH_WIRE_OVERHEAD

    return rate_pps * (FULL_FRAME_BYTES + ETH_WIRE_OVERHEAD) * 8


def control_depth(queue_depth: int) -> int:
    """The control queue's depth (frames) on a port whose data queues hold ``queue_depth``."""
    return queue_depth * CONTROL_QUEUE_FACTOR


class TargetError(RuntimeError):
    """A target cannot do what was asked (unknown name, a tool missing, a shaping it lacks)."""


def running_cookie(address: str, device_id: int, timeout_s: float = 5.0) -> int | None:
    """``p4rt.pipeline_cookie`` of the switch at ``address`` on a channel of its own: unary
    GetForwardingPipelineConfig calls, no stream and no arbitration -- any client may ask (P4Runtime
    spec), so this never competes with a controller for its election id."""
    from p4.v1 import p4runtime_pb2_grpc

    from controller import p4rt

    try:
        ch = p4rt.open_channel(address, timeout_s)
    except p4rt.P4RuntimeError as e:
        raise TargetError(f"{address}: {e.details()}") from None
    try:
        return p4rt.pipeline_cookie(p4runtime_pb2_grpc.P4RuntimeStub(ch), device_id, timeout_s)
    except p4rt.P4RuntimeError as e:
        raise TargetError(f"{address}: {e.details()}") from None
    finally:
        ch.close()


def push_pipeline(name: str, address: str, device_id: int, cfg: PipelineConfig | Callable[[], PipelineConfig],
                  timeout_s: float = 10.0, wait_s: float = 0.0, grace_s: float = 0.0) -> bool:
    """Make sure the switch at ``address`` runs a pipeline, for a target whose shaping needs one
    (``shapes_need_pipeline``); True if this call pushed ``cfg`` (a callable: made only when no
    pipeline runs, before arbitrating).  A switch that runs any pipeline
    already is left as it is (whoever loaded it owns it).  Else ``cfg`` is pushed by a short-lived
    P4Runtime client that never takes over; the controller later finds the same cookie and keeps it.
    If another client holds the switch (primary, or using the same election id), that client is
    loading a pipeline: wait up to ``wait_s`` for one to run.  ``grace_s``: first wait that long for a
    pipeline to appear without arbitrating at all -- a restarted switch's controller (election id 1
    by default, the id used here) reconnects and pushes its own, and must not find the id taken.
    TargetError if the switch cannot be reached, the push fails, or no pipeline runs when the wait
    ends."""
    from controller.session import ElectionIdInUse, SwitchSession

    def runs_one() -> bool:
        try:
            return running_cookie(address, device_id, timeout_s) is not None
        except TargetError as e:
            raise TargetError(f"switch {name}: loading the pipeline failed: {e}") from None

    def one_runs_within(wait: float) -> bool:
        end = time.monotonic() + wait
        while True:  # bounded by wait
            if runs_one():
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.2)  # poll interval of a deadline-bounded wait

    if one_runs_within(grace_s):
        return False
    # made before arbitrating: a compile (bmv2's pipeline() runs p4c when build/ is stale) must not
    # hold election id 1 while a controller tries to connect with it
    config = cfg() if callable(cfg) else cfg
    s = SwitchSession(name, address, device_id, election_id=1, takeover=False, rpc_timeout_s=timeout_s)
    held = ""
    try:
        s.connect(timeout_s, id_wait_s=0)  # a holder of id 1 is a controller loading its pipeline: wait below
        if s.is_primary:  # connect() waited for the arbitration answer
            if runs_one():  # pushed between the check above and now
                return False
            s.set_pipeline(config)
            return True
        held = "another P4Runtime client is primary"
    except ElectionIdInUse:
        held = "another P4Runtime client uses election id 1"
    except SessionError as e:
        raise TargetError(f"switch {name}: loading the pipeline failed: {e}") from None
    finally:
        s.close()
    if one_runs_within(wait_s):
        return False
    raise TargetError(f"switch {name}: {held} and no pipeline runs after {wait_s:g} s; cannot load one")


class Target(abc.ABC):
    """One switch target."""

    name: ClassVar[str]
    # capabilities: differences between targets are declared here, never tested by name
    has_link_delay: ClassVar[bool]  # models propagation delay per port itself (else: netem qdisc)
    can_write_registers: ClassVar[bool]  # P4Runtime RegisterEntry writes are accepted
    shapes_at_start: ClassVar[bool]  # queue depth/rate/delay go on the command line (else: shape())
    # shape() works only once a pipeline is loaded: bmv2's simple_switch_CLI first reads the running JSON
    # config from the switch, which is empty under --no-p4 until a pipeline is pushed (it fails on it)
    shapes_need_pipeline: ClassVar[bool]
    loads_source_at_start: ClassVar[bool]  # can start with a P4 source loaded (else: push a pipeline)
    device_config_name: ClassVar[str]  # the device config file in a build folder
    # answers softswitch's runtime "port_stats" with rx_kernel_drops (frames lost before the pipeline)
    reports_kernel_drops: ClassVar[bool]
    # accepts a clone session with packet_length_bytes (truncating clones) over P4Runtime
    can_truncate_clones: ClassVar[bool]
    # a link's ``rate_pps`` is one link shared by the port's priority queues, each frame charged its bytes
    # on the wire (full frames pass at rate_pps, an ACK costs its own 100 bytes); else (bmv2's
    # set_queue_rate) every priority queue may send rate_pps frames of any size on its own
    shares_link_rate: ClassVar[bool]

    @abc.abstractmethod
    def missing(self) -> str | None:
        """None if the target can run here, else why not."""

    @abc.abstractmethod
    def switch_argv(self, device_id: int, ports: dict[int, str], grpc_port: int, *, runtime_port: int = 0,
                    queue_depth: dict[int, int] | None = None, queue_rate: dict[int, int] | None = None,
                    link_delay: dict[int, int] | None = None, log_file: str = "",
                    program: str | Path | None = None, cpu_port: int = CPU_PORT,
                    link_rate: dict[int, int] | None = None,
                    control_queue_depth: dict[int, int] | None = None) -> list[str]:
        """The command line of one switch.  ``program``: a P4 source a target may load at start
        (None: start empty, the controller pushes the pipeline).  ``runtime_port``: the run-time
        control port (softswitch runtime / bmv2 Thrift), 0 for none.  Per port: ``queue_depth`` every
        priority queue's depth, ``queue_rate`` every priority queue's rate (frames/s, bmv2's
        set_queue_rate), ``link_rate`` the fabric's link model (full frames/s, as
        ``shares_link_rate`` says), ``control_queue_depth`` the depth of the top queue (trimmed
        headers and control packets), ``link_delay`` µs.  A target that does not
        ``shapes_at_start`` ignores the shaping here (the caller uses ``shape`` once it runs)."""

    @abc.abstractmethod
    def pipeline(self, program: str | Path | None = None, build_dir: Path = DEFAULT_BUILD) -> PipelineConfig:
        """The P4Info + device config to push (compiled here, or read from ``build_dir``)."""

    @abc.abstractmethod
    def compile_argv(self, source: Path, out_dir: Path) -> list[str]:
        """A command that compiles ``source`` into ``out_dir`` (p4info.txtpb + the device config)."""

    def compiler_missing(self) -> str | None:
        """None if the program ``compile_argv`` names is here, else why not."""
        exe = self.compile_argv(Path("x.p4"), Path("."))[0]
        if shutil.which(exe) or Path(exe).exists():
            return None
        return f"{self.name}: {exe} is not on PATH (needed to compile P4 for this target)"

    @abc.abstractmethod
    def runtime_address(self, runtime_port: int) -> str:
        """How the target's own tools address its run-time control port (for test parameters)."""

    def tools_missing(self) -> str | None:
        """None if the tools beside the switch and its compiler that a run needs (its run-time command
        line) are here, else which one is not."""
        return None

    def build_missing(self, build_dir: Path = DEFAULT_BUILD) -> str | None:
        """None if ``pipeline(build_dir=build_dir)`` has what it needs, else what is missing (a
        target that compiles the source itself needs nothing from ``build/``)."""
        return None

    @abc.abstractmethod
    def runtime_command(self, address: str, line: str) -> str:
        """Run one ``simple_switch_CLI``-style command (``set_queue_rate 20 4``) on a running switch's
        run-time control port (``address`` as ``runtime_address`` gives it); raise on failure."""

    @abc.abstractmethod
    def shape(self, runtime_port: int, port: int, *, delay_us: int | None = None, rate_pps: int | None = None,
              queue_depth: int | None = None, link_rate_pps: int | None = None,
              control_queue_depth: int | None = None) -> None:
        """Change a port's delay / queue rate / queue depth / link rate / control queue depth on a
        running switch (the meanings of ``switch_argv``).  A target without ``has_link_delay`` raises
        ``TargetError`` for ``delay_us`` (the caller uses netem instead)."""

    def shape_ports(self, runtime_port: int, ports: dict[int, dict]) -> None:
        """``shape`` for several ports of one switch (``{port: shape keyword arguments}``); a target
        whose runtime control has a per-call cost (bmv2: one simple_switch_CLI process, which first
        downloads the switch's JSON) does them in one call."""
        for port, kw in ports.items():
            self.shape(runtime_port, port, **kw)


def _registry() -> dict[str, type[Target]]:
    from .bmv2 import Bmv2
    from .softswitch import Softswitch

    return {t.name: t for t in (Softswitch, Bmv2)}


TARGETS: tuple[str, ...] = ("softswitch", "bmv2")  # the registry's names, in this order (checked by a test)
DEFAULT_TARGET = TARGETS[0]  # softswitch: in this repository, runs wherever Python does


def selected_target() -> str:
    """The target a run uses when the command line names none: ``$TARGET``, else ``DEFAULT_TARGET``
    (every command, runner and test asks here; none types a default of its own)."""
    return os.environ.get("TARGET") or DEFAULT_TARGET


def get_target(name: str) -> Target:
    """The target plugin called ``name``."""
    reg = _registry()
    if name not in reg:
        raise TargetError(f"unknown target {name!r} (choose {', '.join(TARGETS)})")
    return reg[name]()


def target_available(name: str) -> str | None:
    """None if target ``name`` can run a fabric here, else the reason it cannot: its switch binary,
    the run-time tools the fabric shapes links with, and a pipeline (``build/``'s outputs, or the
    compiler that makes them).  bmv2 installed without p4c and without ``make build``'s outputs is
    "cannot run" (tests skip saying so), not an error in the middle of a test."""
    try:
        t = get_target(name)
    except TargetError as e:
        return str(e)
    return t.missing() or t.tools_missing() or t.build_missing()


def load_pipeline(target: str, program: str | Path | None = None, p4info: str | Path | None = None,
                  device_config: str | Path | None = None) -> PipelineConfig:
    """The pipeline to push: explicit files if given, else what ``target`` builds (``SessionError`` on
    bad input, as the controller reports it)."""
    if p4info or device_config:
        if not (p4info and device_config):
            raise SessionError("give both --p4info and --device-config")
        return PipelineConfig.from_files(p4info, device_config)
    try:
        t = get_target(target)
    except TargetError as e:
        raise SessionError(str(e)) from None
    return t.pipeline(program)
