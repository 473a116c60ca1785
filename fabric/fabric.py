"""Build a topology in network namespaces, run one switch process per switch, inject faults, tear down.

    with Fabric(load_topology("examples/small.yaml"), prefix="h7", target="softswitch") as fab:
        fab.link_down("p1l1", "p1s1")
        ...

Hosts live in namespaces ``<prefix>-<host>`` with NIC ``nic<plane>``; switch ports are veth ends in
the root namespace that the switch processes bind with AF_PACKET; gRPC on 127.0.0.1.  Every object is
recorded in a state file before it is created, so teardown (context exit, atexit, SIGTERM or a later
``mrc-fabric down``) removes exactly what this run made.
"""
from __future__ import annotations

import atexit
import concurrent.futures
import math
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from pyroute2.netlink.exceptions import NetlinkError

from controller.metrics import OUTSIDE_DROP_KINDS
from controller.session import PipelineConfig
from controller.sidplan import SidPlan, build_sid_plan
from controller.topology import Link, Topology, load_topology

from . import netbuild, supervise, switches
from .naming import Names
from .state import DEFAULT_STATE_DIR, FabricState, ProcRecord
from .targets import DEFAULT_TARGET, TargetError, control_depth, get_target, push_pipeline

DEFAULT_RUNTIME_OFFSET = 1000
PortAdminHook = Callable[[str, int, bool], None]


class FabricError(RuntimeError):
    """A fabric operation that cannot be done; the message names the element."""


PIPELINE_GRACE_S = 5.0  # how long a restarted switch's controller gets to load its pipeline first


class Fabric:
    """One emulated fabric: namespaces, veths and switch processes for a topology."""

    def __init__(self, topology: Topology, *, prefix: str = "mrc", target: str | None = DEFAULT_TARGET,
                 sids: SidPlan | None = None, state_dir: Path | None = None, mtu: int = netbuild.DEFAULT_MTU,
                 grpc_base_port: int | None = None, runtime_port_offset: int = DEFAULT_RUNTIME_OFFSET,
                 ready_timeout_s: float = 60.0, topology_path: str = "", restart: bool = True) -> None:
        self.topo = topology
        self.sids = sids or build_sid_plan(topology)
        self.names = Names.for_topology(prefix, topology)
        self.prefix = prefix
        self.target = target
        self.state_dir = Path(state_dir) if state_dir else DEFAULT_STATE_DIR
        self.mtu = mtu
        self.ready_timeout_s = ready_timeout_s
        self.runtime_port_offset = runtime_port_offset
        self.port_admin_hook: PortAdminHook | None = None
        self.restart = restart  # supervisors restart crashed switches (fabric/supervise.py)
        self._grpc = {name: (grpc_base_port + i if grpc_base_port else sw.grpc_port)
                      for i, (name, sw) in enumerate(topology.switches.items())}
        if target is not None:
            self._check_ports(grpc_base_port)
        if not 0 < ready_timeout_s < math.inf:
            raise FabricError(f"ready timeout (--ready-timeout) must be more than 0 seconds (and finite), got {ready_timeout_s:g}")
        self._procs: dict[str, subprocess.Popen] = {}
        self._old_sigterm: Any = None
        self._owner_pid = os.getpid()
        self._pipeline: PipelineConfig | None = None  # the target's default one, once a switch needed it
        self.state = FabricState(prefix=prefix, topology=topology_path, target=target or "")

    def _check_ports(self, base: int | None) -> None:
        """Refuse, before anything is built, a gRPC port (or its run-time control port, + the offset)
        outside 1..65535: ``up --grpc-base-port 70000`` built the namespaces and veths, then failed on
        'switch p1s1 exited with code 2 before its gRPC port 70000 answered'."""
        for name, port in self._grpc.items():
            for p, what in ((port, "gRPC port"), (port + self.runtime_port_offset, "run-time control port")):
                if not 1 <= p <= 65535:
                    how = (f"--grpc-base-port {base} gives it" if base else "from the topology's grpc_port")
                    raise FabricError(f"switch {name}: {what} {p} is not 1..65535 ({how}; the run-time control "
                                      f"port is the gRPC port + {self.runtime_port_offset}); choose a lower base")

    # -- attach to a run described by a state file ------------------------------------------------
    @classmethod
    def attach(cls, prefix: str, state_dir: Path | None = None) -> Fabric:
        """A handle on a fabric brought up by another process (for ``mrc-fabric fault``/``status``)."""
        st = FabricState.load(prefix, state_dir)
        if st is None:
            raise FabricError(f"no fabric with prefix {prefix!r} (no state file "
                              f"{FabricState.path(prefix, state_dir)})")
        if not st.topology:
            raise FabricError(f"fabric {prefix!r}: state file does not name its topology file")
        fab = cls(load_topology(st.topology), prefix=prefix, target=st.target or None, state_dir=state_dir,
                  topology_path=st.topology)
        fab.state = st
        fab._grpc.update({n: r.grpc_port for n, r in st.procs.items()})
        return fab

    # -- names ------------------------------------------------------------------------------------
    def netns(self, host: str) -> str:
        """Namespace of ``host``."""
        if host not in self.topo.hosts:
            raise FabricError(f"unknown host {host!r}")
        return self.names.netns(host)

    def switch_port_if(self, switch: str, port: int) -> str:
        """Root-namespace interface of ``switch`` port ``port``."""
        if switch not in self.topo.switches:
            raise FabricError(f"unknown switch {switch!r}")
        return self.names.switch_if(switch, port)

    def grpc_addr(self, switch: str) -> str:
        """``127.0.0.1:<port>`` of the switch's P4Runtime server."""
        return f"127.0.0.1:{self._grpc[switch]}"

    def _save(self) -> None:
        self.state.save(self.state_dir)

    # -- bring-up ---------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
        try:
            self.up()
        except BaseException:
            self._restore_signal()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.down()
        finally:
            self._restore_signal()

    def _on_sigterm(self, signum: int, frame: object) -> None:
        if os.getpid() != self._owner_pid:  # a forked helper (pyroute2 spawns some): just die
            os._exit(128 + signum)
        raise SystemExit(128 + signum)  # unwinds into __exit__, which tears down

    def _restore_signal(self) -> None:
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def up(self) -> None:
        """Build namespaces and links, then start and wait for the switches; undo all on failure."""
        if FabricState.load(self.prefix, self.state_dir) is not None:
            raise FabricError(f"a fabric with prefix {self.prefix!r} is already up (state file "
                              f"{FabricState.path(self.prefix, self.state_dir)}); run `mrc-fabric down "
                              f"--prefix {self.prefix}` first")
        if self.target is not None:
            why = switches.target_available(self.target)
            if why:
                raise FabricError(why)
        try:  # nothing built yet: a state dir that cannot be written is bad input, not a traceback
            self._save()
        except OSError as e:
            raise FabricError(f"cannot write the run state {FabricState.path(self.prefix, self.state_dir)} "
                              f"(--state-dir): {e.strerror or e}") from None
        atexit.register(self.down)
        try:
            self.build_network()
            if self.target is not None:
                self.start_switches()
        except BaseException:
            self.down()
            raise

    def build_network(self) -> None:
        """Namespaces for hosts, one veth pair per link, addresses and MACs from the SID plan."""
        for h in self.topo.host_list():
            ns = self.names.netns(h.name)
            if netbuild.netns_exists(ns):  # never record (and later delete) what we did not create
                raise netbuild.NetBuildError(f"network namespace {ns} already exists (a previous run? "
                                             f"try `mrc-fabric down --prefix {self.prefix}`)")
            self.state.namespaces.append(ns)
            self._save()
            # pyroute2 creates the namespace in a forked child: a signal that ended the wait for it
            # let the child create the namespace after the teardown had looked for it (left behind)
            with switches._interrupts_deferred():
                netbuild.create_netns(ns)
            netbuild.add_loopback_address(ns, str(self.sids.host_gid(h.name)))
        for link in self.topo.links:
            self._add_link(link)

    def _end(self, node: str, port: int) -> list[str]:
        if node in self.topo.hosts:
            return [self.names.netns(node), self.names.host_if(port)]
        return ["", self.names.switch_if(node, port)]

    def _add_link(self, link: Link) -> None:
        ea, eb = self._end(link.a.node, link.a.port), self._end(link.b.node, link.b.port)
        self.state.links[link.name] = [ea, eb]
        root_ifs = [e[1] for e in (ea, eb) if not e[0]]
        for ifname in root_ifs:
            if netbuild.interface_exists(ifname):
                raise netbuild.NetBuildError(f"link {link.name}: interface {ifname} already exists (a previous "
                                             f"run? try `mrc-fabric down --prefix {self.prefix}`)")
        self.state.interfaces.extend(root_ifs)
        self._save()
        if len(root_ifs) == 2:
            netbuild.add_switch_link(ea[1], self.sids.switch_mac(link.a.node, link.a.port),
                                     eb[1], self.sids.switch_mac(link.b.node, link.b.port), self.mtu)
            return
        host_end, sw_end = (link.a, link.b) if link.a.node in self.topo.hosts else (link.b, link.a)
        netbuild.add_host_link(
            self.names.switch_if(sw_end.node, sw_end.port), self.sids.switch_mac(sw_end.node, sw_end.port),
            self.names.netns(host_end.node), self.names.host_if(host_end.port),
            self.sids.host_mac(host_end.node, host_end.port),
            [str(self.sids.host_port_address(host_end.node, host_end.port))], self.mtu)

    def _proc_record(self, name: str) -> ProcRecord:
        sw = self.topo.switches[name]
        ports = {p: self.names.switch_if(name, p) for p in self.topo.ports_of(name)}
        props = {p: self.topo.link_at(name, p).props for p in ports}
        grpc_port = self._grpc[name]
        runtime_port = grpc_port + self.runtime_port_offset  # the target's run-time control port
        log_dir = self.state_dir / self.prefix
        log_dir.mkdir(parents=True, exist_ok=True)
        argv = switches.switch_argv(
            self.target or DEFAULT_TARGET, sw.device_id, ports, grpc_port, runtime_port=runtime_port,
            queue_depth={p: v.queue_depth for p, v in props.items() if v.queue_depth},
            control_queue_depth={p: control_depth(v.queue_depth) for p, v in props.items() if v.queue_depth},
            link_rate={p: v.rate_pps for p, v in props.items() if v.rate_pps},
            link_delay={p: v.delay_us for p, v in props.items() if v.delay_us})
        log = str(log_dir / f"{name}.log")
        after_restart = None
        if not get_target(self.target or DEFAULT_TARGET).shapes_at_start and any(
                v.queue_depth or v.rate_pps or v.delay_us for v in props.values()):
            # the target keeps link properties in process state (bmv2): a restarted switch is shaped again
            after_restart = [sys.executable, "-m", "mrc_fabric", "reshape", "--prefix", self.prefix,
                             "--state-dir", str(self.state_dir.resolve()), name]
        argv = supervise.wrap(argv, status_file=supervise.status_path(log), grpc_port=grpc_port,
                              restart=self.restart, after_restart=after_restart)
        return ProcRecord(name, argv, log=log, grpc_port=grpc_port, runtime_port=runtime_port)

    def start_switches(self) -> None:
        """Start every switch process and wait (bounded) until each gRPC port answers."""
        for name in self.topo.switches:
            self.state.procs[name] = rec = self._proc_record(name)
            self._save()
            self._procs[name] = switches.start(rec)
            self._save()
        switches.wait_ready(list(self.state.procs.values()), self._procs, self.ready_timeout_s)
        self._shape_running()

    def _shape_running(self, names: list[str] | None = None, wait_s: float = 0.0) -> dict[str, list[int]]:
        """The topology's link properties on the ports of ``names`` (every switch if None), for a
        target that takes them only once the switch runs (e.g. bmv2: over its Thrift port, after a
        pipeline is loaded).  ``wait_s``: how long to wait for a controller that holds a switch to
        load its pipeline (a restarted switch; ``push_pipeline``).  Returns the ports shaped, by switch."""
        target = get_target(self.target or DEFAULT_TARGET)
        if target.shapes_at_start:
            return {}
        by_switch: dict[str, dict[int, dict]] = {}
        for name in names or self.topo.switches:
            for p in self.topo.ports_of(name):
                v = self.topo.link_at(name, p).props
                if v.queue_depth or v.rate_pps or v.delay_us:
                    by_switch.setdefault(name, {})[p] = {"link_rate_pps": v.rate_pps or None,
                                                         "queue_depth": v.queue_depth or None,
                                                         "delay_us": v.delay_us or None}
        for name, ports in by_switch.items():  # one runtime call a switch (a pipeline first where needed)
            self._shape_ports(name, ports, wait_s)
        return {name: sorted(ports) for name, ports in by_switch.items()}

    def reshape(self, name: str, wait_s: float = 30.0) -> list[int]:
        """Give a running switch its topology's link properties again: a target that keeps them in
        process state (``shapes_at_start`` False: bmv2's queues, set over Thrift) loses them when the
        switch restarts.  Nothing to do for a target that takes them on its command line.  Returns
        the ports shaped."""
        self._rec(name)
        return self._shape_running([name], wait_s).get(name, [])

    def _load_pipeline(self, target, name: str, wait_s: float = 0.0) -> None:
        """Make sure ``name``, a switch that must run a pipeline before it can be shaped
        (``Target.shapes_need_pipeline``), runs one: the target's default pipeline is loaded where none
        runs (the controller finds it running, same cookie, and keeps it); a switch a controller holds
        gets up to ``wait_s`` for the controller to load its own, and a switch that may have one (a
        restart, a fault: ``wait_s`` > 0) first gets a few seconds to (push_pipeline arbitrates with the
        same election id, 1)."""

        def pipeline():  # read (or compiled) only if a switch needs it pushed, then kept
            if self._pipeline is None:
                try:
                    self._pipeline = target.pipeline()
                except Exception as e:  # noqa: BLE001 -- build missing, a compile error: say which and why
                    raise TargetError(f"{target.name}: no pipeline to load before shaping the links: {e}") from None
            return self._pipeline

        rec = self.state.procs[name]
        try:
            push_pipeline(name, f"127.0.0.1:{rec.grpc_port}", self.topo.switches[name].device_id, pipeline,
                          wait_s=wait_s, grace_s=min(wait_s, PIPELINE_GRACE_S))
        except TargetError as e:
            raise FabricError(str(e)) from None

    # -- teardown ---------------------------------------------------------------------------------
    def down(self) -> list[str]:
        """Stop switches, delete interfaces and namespaces, drop the state file. Idempotent."""
        atexit.unregister(self.down)
        if os.getpid() != self._owner_pid:
            return []  # never tear down from a forked child of the process that built the fabric
        return teardown(self.state, self.state_dir, self._procs)

    def detach(self) -> None:
        """Leave the fabric running after this process exits (``mrc-fabric up``)."""
        atexit.unregister(self.down)
        self._restore_signal()
        self._procs.clear()

    # -- faults -----------------------------------------------------------------------------------
    def _find_link(self, a: str, b: str) -> Link:
        if ":" in a or ":" in b:
            cands = [lk for lk in self.topo.links if {str(lk.a), str(lk.b)} >= {x for x in (a, b) if ":" in x}
                     and {lk.a.node, lk.b.node} == {a.split(":")[0], b.split(":")[0]}]
        else:
            cands = self.topo.links_between(a, b)
        if len(cands) != 1:
            raise FabricError(f"link {a}--{b}: {'no such link' if not cands else 'ambiguous'} in the topology")
        return cands[0]

    def set_link(self, a: str, b: str, up: bool) -> Link:
        """Set both veth ends of the link between ``a`` and ``b`` (names or ``node:port``) up or down."""
        link = self._find_link(a, b)
        netbuild.set_states([(ifname, up, ns or None) for ns, ifname in self.state.links[link.name]])
        return link

    def link_down(self, a: str, b: str) -> Link:
        return self.set_link(a, b, False)

    def link_up(self, a: str, b: str) -> Link:
        return self.set_link(a, b, True)

    def switch_stop(self, name: str) -> None:
        """Kill one switch process (by its recorded PID); its ports stay, unserved."""
        rec = self._rec(name)
        if not switches.stop(rec, self._procs.pop(name, None)):
            raise FabricError(f"switch {name} is not running")

    def switch_start(self, name: str, shape: bool = True) -> None:
        """Restart a stopped switch with the same arguments, wait for its gRPC port and (``shape``)
        give it its topology's link properties again where the target keeps them in process state
        (``reshape``; a caller that converges the switch first reshapes after)."""
        rec = self._rec(name)
        if switches.is_running(rec):
            raise FabricError(f"switch {name} is already running (pid {rec.pid})")
        self._procs[name] = switches.start(rec)
        self._save()
        switches.wait_ready([rec], self._procs, self.ready_timeout_s)
        if shape:
            self.reshape(name)

    def switch_running(self, name: str) -> bool:
        return switches.is_running(self._rec(name))

    def _rec(self, name: str) -> ProcRecord:
        if name not in self.topo.switches:
            raise FabricError(f"unknown switch {name!r}")
        if name not in self.state.procs:
            raise FabricError(f"switch {name} has no process in this fabric (network-only run?)")
        return self.state.procs[name]

    def port_admin(self, switch: str, port: int, up: bool) -> None:
        """Set a switch port's admin state through the controller hook (P4Runtime, not the kernel)."""
        if port not in self.topo.ports_of(switch):
            raise FabricError(f"switch {switch} has no connected port {port}")
        if self.port_admin_hook is None:
            raise FabricError("port admin state is set by the controller over P4Runtime; attach one with "
                              "fabric.port_admin_hook = controller_callable(switch, port, up)")
        self.port_admin_hook(switch, port, up)

    def shape(self, switch: str, port: int, *, delay_us: int | None = None, rate_pps: int | None = None,
              queue_depth: int | None = None, link_rate_pps: int | None = None,
              pipeline_wait_s: float = 10.0) -> None:
        """Change a port's link delay / queue rate (every priority queue, frames/s) / queue depth /
        link rate (the link model's full frames/s, ``Target.shares_link_rate``) at run time, through
        the target's runtime control (softswitch runtime port, bmv2 Thrift); a depth sets the control
        queue's too (``control_depth``).  A target without a link-delay model (``has_link_delay``
        False) gets a netem qdisc on the switch's end of the veth instead.  A target whose runtime
        control needs a loaded pipeline (``shapes_need_pipeline``) gets one first where none runs
        (``push_pipeline``; ``pipeline_wait_s`` for a controller that holds the switch to load its own)."""
        self._shape_ports(switch, {port: {"delay_us": delay_us, "rate_pps": rate_pps, "queue_depth": queue_depth,
                                          "link_rate_pps": link_rate_pps}}, pipeline_wait_s)

    def _shape_ports(self, switch: str, ports: dict[int, dict], pipeline_wait_s: float) -> None:
        """``shape`` for several ports of one switch, in one call of the target's runtime control."""
        rec = self._rec(switch)
        for port in ports:
            if port not in self.topo.ports_of(switch):
                raise FabricError(f"switch {switch} has no connected port {port}")
        if not rec.runtime_port:
            raise FabricError(f"switch {switch}: no runtime control port recorded (restart the fabric)")
        if not switches.is_running(rec):
            raise FabricError(f"switch {switch} is not running (`mrc-fabric fault switch-start {switch}` starts it)")
        target = get_target(self.state.target or DEFAULT_TARGET)
        todo: dict[int, dict] = {}
        for port, kw in ports.items():
            kw = dict(kw)
            if kw.get("delay_us") is not None and not target.has_link_delay:
                self._netem(switch, port, kw["delay_us"])
                kw["delay_us"] = None
            if all(v is None for v in kw.values()):
                continue
            depth = kw.get("queue_depth")
            todo[port] = {**kw, "control_queue_depth": None if depth is None else control_depth(depth)}
        if not todo:
            return
        if target.shapes_need_pipeline:
            self._load_pipeline(target, switch, pipeline_wait_s)
        try:
            target.shape_ports(rec.runtime_port, todo)
        except TargetError as e:
            raise FabricError(f"switch {switch} port{'s' if len(todo) > 1 else ''} "
                              f"{', '.join(map(str, sorted(todo)))}: {e}") from None

    def _netem(self, switch: str, port: int, delay_us: int) -> None:
        """Link delay for a target without its own: a netem qdisc on the switch's end of the port's
        veth (egress, as softswitch's --link-delay)."""
        try:
            netbuild.set_netem_delay(self.names.switch_if(switch, port), delay_us)
        except netbuild.NetemUnavailable as e:
            raise FabricError(f"switch {switch} port {port}: target {self.state.target} has no link delay of its "
                              f"own and the fabric emulates it with the netem qdisc, which is not available here "
                              f"({e}); use a target with has_link_delay, or drop delay_us and delay at the hosts "
                              f"(mrc-perf --tx-delay-us; scenario runs and the demo do this themselves, "
                              f"docs/fabric.md)") from None

    def outside_drops(self) -> dict[str, dict[str, int]]:
        """Per softswitch, from one ``port_stats`` read: ``kernel_rx_drops``, frames its ports' sockets
        lost in the kernel before the pipeline saw them (``PACKET_STATISTICS``), and
        ``queue_tail_drops``, frames its traffic manager tail-dropped because a priority queue was full
        after the pipeline had admitted them (the program's early drop acts on its own estimate of the
        queue, which can lag the real one), and the same by queue, ``queue_tail_drops_by_queue``
        (``"switch:port/priority"``, the queues that dropped any), and ``rx_errors``, frames its ports'
        receive rings cut short (larger than a ring slot: a peer's GSO super-frame, or one sent right after
        an MTU increase; docs/softswitch.md), and ``tx_drops``, frames the pipeline and the traffic manager
        passed that its ports could not send (link down, the interface's transmit ring full, larger than
        the MTU).  A switch that does not answer is left out; a target without ``port_stats`` (bmv2)
        gives empty maps."""
        from softswitch.engine.control import send_command

        out: dict[str, dict[str, int]] = {"kernel_rx_drops": {}, "queue_tail_drops": {},
                                          "queue_tail_drops_by_queue": {}, "rx_errors": {}, "tx_drops": {}}
        if not self.state.target or not get_target(self.state.target).reports_kernel_drops:
            return out
        def read(port: int) -> list | None:
            try:
                return send_command(f"127.0.0.1:{port}", "port_stats", [])
            except Exception:  # noqa: BLE001 - a stopped switch is simply not read
                return None

        ports = {name: rec.runtime_port for name, rec in self.state.procs.items() if rec.runtime_port}
        # every switch at once: one after the other, a hung switch (accepts, never answers) held each
        # metrics scrape its 5 s timeout per switch
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(16, len(ports)))) as pool:
            answers = dict(zip(ports, pool.map(read, ports.values()), strict=True))
        for name, rows in answers.items():
            if rows is None:
                continue
            out["kernel_rx_drops"][name] = sum(int(r.get("rx_kernel_drops", 0)) for r in rows)
            out["queue_tail_drops"][name] = sum(int(r.get("queue_drops", 0)) for r in rows)
            out["rx_errors"][name] = sum(int(r.get("rx_errors", 0)) for r in rows)
            out["tx_drops"][name] = sum(int(r.get("tx_drops", 0)) for r in rows)
            for r in rows:
                for q in r.get("queues", ()):
                    if int(q.get("dropped", 0)):
                        out["queue_tail_drops_by_queue"][f"{name}:{r['port']}/{q['priority']}"] = int(q["dropped"])
        return out

    def outside_drop_counts(self) -> dict[str, dict[str, int]]:
        """``outside_drops()`` per switch, as the controller's metrics take it (``Controller.outside_drops``,
        ``mrc_outside_drop_packets_total``): {switch: {"kernel_rx" | "queue_tail" | "rx_error" | "tx":
        packets}}; empty on a target that does not count them."""
        out: dict[str, dict[str, int]] = {}
        drops = self.outside_drops()
        for key, kind in zip(("kernel_rx_drops", "queue_tail_drops", "rx_errors", "tx_drops"), OUTSIDE_DROP_KINDS,
                             strict=True):
            for sw, n in drops[key].items():
                out.setdefault(sw, {})[kind] = n
        return out

    # -- status -----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Processes, links and namespaces as they are now."""
        procs = {n: {"pid": r.pid, "running": switches.is_running(r), "grpc": f"127.0.0.1:{r.grpc_port}",
                     "grpc_answers": switches.port_open(r.grpc_port), "log": r.log,
                     "supervisor": supervise.read_status(r.log)}
                 for n, r in self.state.procs.items()}
        # a link is up only if its veths are up *and* the switch process at each switch end runs: after
        # `fault switch-stop` the veths stay up, and status showed the stopped switch's links "up"
        # (a reader took that for "the link works"); `veth_up` keeps the interfaces' own state
        nodes = {lk.name: (lk.a.node, lk.b.node) for lk in self.topo.links}
        links = {}
        for name, ends in self.state.links.items():
            infos = [netbuild.link_info(i, ns or None) for ns, i in ends]
            veth_up = all(x is not None and x["up"] for x in infos)
            stopped = [n for n in nodes.get(name, ()) if n in procs and not procs[n]["running"]]
            links[name] = {"ends": [f"{ns + '/' if ns else ''}{i}" for ns, i in ends],
                           "up": veth_up and not stopped, "veth_up": veth_up, "stopped_switches": stopped}
        return {"prefix": self.prefix, "target": self.state.target or "none", "topology": self.state.topology,
                "namespaces": {ns: netbuild.netns_exists(ns) for ns in self.state.namespaces},
                "switches": procs, "links": links, **self.outside_drops()}


def teardown(state: FabricState, state_dir: Path | None = None,
             procs: dict[str, subprocess.Popen] | None = None) -> list[str]:
    """Remove everything ``state`` records: processes (by recorded PID), root veths, namespaces."""
    procs = procs if procs is not None else {}
    done: list[str] = []
    errors: list[str] = []
    for name, rec in list(state.procs.items()):
        try:
            if switches.stop(rec, procs.pop(name, None)):
                done.append(f"stopped switch {name} (pid {rec.pid})")
        except OSError as e:
            errors.append(f"switch {name} pid {rec.pid}: {e}")
    for ifname in state.interfaces:
        try:
            if netbuild.delete_interface(ifname):
                done.append(f"deleted {ifname}")
        except (OSError, NetlinkError) as e:  # keep going: clean up everything else
            errors.append(f"interface {ifname}: {e}")
    for ns in state.namespaces:
        try:
            if netbuild.delete_netns(ns):
                done.append(f"deleted netns {ns}")
        except OSError as e:
            errors.append(f"netns {ns}: {e}")
    if errors:
        state.save(state_dir)
        raise FabricError("teardown incomplete: " + "; ".join(errors))
    state.remove(state_dir)
    return done


def down_prefix(prefix: str, state_dir: Path | None = None) -> list[str]:
    """Tear down whatever the state file of ``prefix`` records (after a crash, or a detached up)."""
    st = FabricState.load(prefix, state_dir)
    return [] if st is None else teardown(st, state_dir)
