"""Run an STF script through a real switch process, as a user's (or a conformance) runner does.

The in-process runner (``softswitch.stf.runner``) calls the compiled pipeline directly.  This one
takes the whole path a P4Runtime user's packets take, on any fabric target (``mrc_fabric.targets``:
softswitch, or bmv2 where it is installed), asking the target's plugin how: its compiler builds
the pipeline, its command line starts the switch empty with one veth per port the script names,
the P4Info and device config go in over ``SetForwardingPipelineConfig``, and the script's table,
PRE and register commands become P4Runtime ``Write`` requests (register commands over the
target's runtime port where it cannot write registers over P4Runtime).  Each ``packet`` is sent on
the port's veth and every named port's frames are captured from the veths (VLAN tags put back
from PACKET_AUXDATA, as on the wire).  Frames are judged exactly as the in-process runner judges
them (p4c's ``bmv2stf.py`` rules).

Each packet's outputs are collected until the ports are quiet for ``QUIET_S`` (at most
``MAX_WAIT_S``) before the next packet goes.  A frame arriving later still lands in its port's
list in order (the switch processes packets in order).  After the last packet, while the script's
expects name more frames on a port than it has received, the runner keeps listening (at most
``MAX_WAIT_S``, then ``QUIET_S`` more for anything extra), so a slow switch is not judged by the
runner's patience.  A frame
the kernel will not send on a veth (shorter than an Ethernet header, or longer than the MTU) is
not sent; the result lists it under ``ignored``.  Needs root (veths); the interfaces and the
process are removed on every exit path.
"""
from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from softswitch.runtime import bytestrings
from softswitch.stf.runner import StfResult, StfSwitch, _suffix_lookup, judge, meter_updates
from softswitch.stf.script import Command, StfError

if TYPE_CHECKING:
    from controller.p4rt import P4RuntimeClient
    from softswitch.engine.ports import LinuxPort

QUIET_S = 0.15  # a packet's outputs are complete once no named port received a frame for this long
MAX_WAIT_S = 5.0  # per packet, whatever keeps arriving
ETH_HLEN = 14


def _ifnames(port: int) -> tuple[str, str]:
    """(switch side, host side) of ``port``'s veth: unique per runner process, 15 chars at most."""
    tok = f"{os.getpid() & 0xFFFFF:x}"
    return f"sf{tok}s{port}", f"sf{tok}h{port}"


def _add_veth(port: int) -> None:
    """Port ``port``'s veth pair, both ends up with IPv6 off (the kernel sends nothing of its own on
    them), once the carrier is up: a frame sent before it would be lost unseen."""
    from mrc_fabric.netbuild import add_switch_link, delete_interface, link_info

    a, b = _ifnames(port)
    delete_interface(a)  # a leftover of a killed run with this pid
    add_switch_link(a, f"02:5f:00:00:{port >> 8:02x}:{port & 0xFF:02x}", b, f"02:5e:00:00:{port >> 8:02x}:{port & 0xFF:02x}")
    deadline = time.monotonic() + 10
    while not all((link_info(n) or {}).get("carrier") for n in (a, b)):
        if time.monotonic() > deadline:
            raise StfError(f"veth {a} not up after 10 s")
        time.sleep(0.01)  # polling interval of a bounded wait


class ProcessStfSwitch(StfSwitch):
    """STF control-plane commands as P4Runtime writes to a running switch; packets on veths."""

    def __init__(self, p4info: p4info_pb2.P4Info, client: P4RuntimeClient, hosts: dict[int, LinuxPort],
                 register_cli: Callable[[list[str]], object] | None = None) -> None:
        """``p4info``: the pushed pipeline's; ``register_cli``: run register commands as
        ``simple_switch_CLI`` lines (bmv2's P4Runtime server writes no registers)."""
        self._control(p4info)  # no pipeline in this process: the switch runs it
        self.register_cli = register_cli
        self.client = client
        self.hosts = hosts  # port -> LinuxPort on the host end of the port's veth
        self._sessions: set[int] = set()
        self.unsent: list[str] = []

    def _write(self, utype: int, **entity) -> None:
        from controller.p4rt import P4RuntimeError

        try:
            self.client.write(utype, p4runtime_pb2.Entity(**entity))
        except P4RuntimeError as e:
            raise StfError(f"the switch refused the write: {e}") from None

    def _has_session(self, session: int) -> bool:  # the switch's sessions are the ones written here
        return session in self._sessions

    def _session_written(self, session: int) -> None:
        self._sessions.add(session)

    def _session_deleted(self, session: int) -> None:
        self._sessions.discard(session)

    def command(self, cmd: Command) -> None:
        if cmd.kind in ("meter_set_rates", "meter_array_set_rates"):
            return self._meter(cmd)
        if cmd.kind not in ("register_write", "register_reset"):
            return super().command(cmd)
        a = cmd.args
        regs = {r.preamble.name: r for r in self.p4info.registers}
        reg = regs[_suffix_lookup(list(regs), a["register"], "register")]
        spec = reg.type_spec.bitstring
        width = spec.bit.bitwidth or spec.int.bitwidth
        if cmd.kind == "register_write":
            if not 0 <= a["index"] < reg.size:
                raise StfError(f"register '{reg.preamble.name}': index {a['index']} out of range")
            cells = [(a["index"], a["value"] & ((1 << width) - 1))]
        if self.register_cli is not None:
            name = reg.preamble.name
            self.register_cli([f"register_write {name} {cells[0][0]} {cells[0][1]}"
                               if cmd.kind == "register_write" else f"register_reset {name}"])
            return None
        if cmd.kind == "register_reset":
            cells = [(i, 0) for i in range(reg.size)]
        ups = []
        for i, v in cells:
            e = p4runtime_pb2.Entity()
            e.register_entry.register_id = reg.preamble.id
            e.register_entry.index.index = i
            e.register_entry.data.bitstring = bytestrings.encode(v)
            ups.append(p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY, entity=e))
        from controller.p4rt import P4RuntimeError

        try:
            self.client.write_updates(ups)
        except P4RuntimeError as e:
            raise StfError(f"the switch refused the register write: {e}") from None
        return None

    def _meter(self, cmd: Command) -> None:
        """Meter rates: bmv2's own CLI takes the line (with the meter's full name, as p4c's runner passes
        it); softswitch gets the P4Runtime MeterEntry writes the in-process runner applies."""
        ups = meter_updates(self.p4info, cmd.args)  # checks the name and index first
        if self.register_cli is not None:  # the line with the meter's full name, as the registers'
            meter_id = ups[0].entity.meter_entry.meter_id
            name = next(m.preamble.name for m in self.p4info.meters if m.preamble.id == meter_id)
            words = cmd.args["text"].split()
            self.register_cli([" ".join([words[0], name, *words[2:]])])
            return
        from controller.p4rt import P4RuntimeError

        try:
            self.client.write_updates(ups)
        except P4RuntimeError as e:
            raise StfError(f"the switch refused the meter configuration: {e}") from None

    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        host = self.hosts[port]
        if not ETH_HLEN <= len(data) <= host.mtu + ETH_HLEN or not host.send(data):
            self.unsent.append(f"a frame of {len(data)} bytes on port {port} could not be sent on a veth")
            return []
        return self._collect({})

    def settle(self, owed: dict[int, int]) -> list[tuple[int, bytes]]:
        return self._collect(owed) if owed else []

    def _collect(self, owed: dict[int, int]) -> list[tuple[int, bytes]]:
        """Frames from every port until none came for ``QUIET_S`` and no port is ``owed`` more
        frames (port -> count), at most ``MAX_WAIT_S``."""
        owed = dict(owed)
        out: list[tuple[int, bytes]] = []
        fds = {h.fileno(): (p, h) for p, h in self.hosts.items()}
        start = last = time.monotonic()
        while True:
            now = time.monotonic()
            if now - start >= MAX_WAIT_S or (now - last >= QUIET_S and not any(n > 0 for n in owed.values())):
                return out
            wait = QUIET_S - (now - last) if not any(n > 0 for n in owed.values()) else MAX_WAIT_S - (now - start)
            ready, _, _ = select.select(list(fds), [], [], max(0.0, wait))
            for fd in ready:
                p, h = fds[fd]
                frames = h.receive(64)
                if frames:
                    out.extend((p, f) for f in frames)
                    if p in owed:
                        owed[p] -= len(frames)
                    last = time.monotonic()
                else:
                    h.take_error()


def run_stf_process(program_path: Path, commands: list[Command], target: str,
                    log_file: str | None = None) -> StfResult:
    """Apply ``commands`` to a switch process of ``target`` (a fabric target plugin's name,
    ``mrc_fabric.targets``) and judge its outputs (see the module doc).  The plugin says how:
    ``compile_argv`` compiles the program (softswitch's front end, or p4c), ``switch_argv`` starts
    the switch empty with one interface per named port and no CPU port, the compiled P4Info and
    device config are pushed over P4Runtime, and where the target ``can_write_registers`` not,
    register commands go over its runtime port (``simple_switch_CLI`` for bmv2).  A compiler's
    refusal raises ``CompileRefused``."""
    from mrc_fabric.netbuild import delete_interface
    from softswitch.engine.ports import LinuxPort

    ports = sorted({c.args["port"] for c in commands if c.kind in ("packet", "expect")})
    hosts: dict[int, LinuxPort] = {}
    made: list[int] = []
    try:
        for p in ports:
            made.append(p)
            _add_veth(p)
        for p in ports:
            h = LinuxPort(p, _ifnames(p)[1])
            if not h.open():
                raise StfError(f"cannot open {h.ifname}")
            hosts[p] = h
        return _run(program_path, commands, target, {p: _ifnames(p)[0] for p in ports}, hosts, log_file)
    finally:
        for h in hosts.values():
            h.close()
        for p in made:
            delete_interface(_ifnames(p)[0])  # its peer goes with it


def target_missing(target: str) -> str | None:
    """Why a switch process of ``target`` cannot run here (switch, compiler or runtime tool
    missing), or None."""
    from mrc_fabric.targets import get_target

    tgt = get_target(target)
    return tgt.missing() or tgt.compiler_missing() or tgt.tools_missing()


class CompileRefused(RuntimeError):
    """The target's compiler refused the program (its message is the error's text)."""


def _run(program_path: Path, commands: list[Command], target: str, switch_ports: dict[int, str],
         hosts: dict[int, LinuxPort], log_file: str | None) -> StfResult:
    import subprocess
    import tempfile

    from controller.p4rt import P4RuntimeClient
    from controller.session import PipelineConfig
    from mrc_fabric.targets import get_target
    from softswitch.api import free_tcp_port, grpc_ready, stop_process

    tgt = get_target(target)
    with tempfile.TemporaryDirectory(prefix="stf-") as tmp:
        out = Path(tmp)
        r = subprocess.run(tgt.compile_argv(program_path.resolve(), out), capture_output=True, text=True,
                           timeout=300, check=False)
        if r.returncode:
            raise CompileRefused((r.stderr or r.stdout).strip()[-2000:])
        cfg = PipelineConfig.from_files(out / "p4info.txtpb", out / tgt.device_config_name)
        grpc_port, runtime_port = free_tcp_port(), free_tcp_port()
        argv = tgt.switch_argv(1, switch_ports, grpc_port, runtime_port=runtime_port, cpu_port=None)
        with open(log_file or out / "switch.log", "w") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
            client = None
            try:
                addr = f"127.0.0.1:{grpc_port}"
                deadline = time.monotonic() + 60
                while not grpc_ready(addr, timeout=0.5):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise StfError(f"{target} did not answer on {addr} (exit {proc.poll()})")
                    time.sleep(0.1)  # polling interval of a bounded wait
                client = P4RuntimeClient(addr, device_id=1, election_id=1, timeout_s=30.0)
                client.set_pipeline(cfg.p4info, cfg.device_config)
                register_cli = None
                if not tgt.can_write_registers:
                    where = tgt.runtime_address(runtime_port)

                    def register_cli(lines: list[str]) -> None:
                        for line in lines:
                            tgt.runtime_command(where, line)
                sw = ProcessStfSwitch(cfg.p4info, client, hosts, register_cli)
                res = judge(sw, commands)
                res.ignored.extend(sw.unsent)
                res.unsent = len(sw.unsent)
                return res
            finally:
                if client is not None:
                    client.close()
                stop_process(proc)
