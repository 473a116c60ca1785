"""Run a scenario on a real emulated fabric: bring-up, controller, EV plans, one agent per host, faults.

``FabricEnv`` owns the fabric (namespaces, veths, switch processes) and a converged controller;
``run_traffic`` runs one traffic pattern in one mode (mrc or the rc baseline) on it, injects the
scenario's faults on schedule, restores the fabric afterwards and returns the raw per-host results.
Everything it starts is stopped in ``finally`` blocks (agents by PID; the fabric by its state file).
"""
from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import yaml
from p4.v1 import p4runtime_pb2

from controller import TopologyError, build_plan, parse_topology
from controller.daemon import Controller, Options, TextFormatter
from controller.evplan import ev_nodes, write_ev_files
from controller.plan import DEFAULT_QUEUE_DEPTH
from controller.telemetry import C_CONGESTION_EVENTS, CONGESTION_EVENTS
from controller.topogen import clos_data
from controller.topology import Topology
from mrc.yamlio import YamlFileError, read_yaml_file
from mrc_fabric.targets import DEFAULT_TARGET, full_frames_bps, get_target, load_pipeline

from ..fabric import Fabric, FabricError
from ..faults import FaultError, topo_host_link, topo_spine_links
from ..netbuild import netem_available
from .report import faults_not_reached
from .spec import FabricSpec, FaultSpec, Scenario, ScenarioError, TrafficSpec

REPO = Path(__file__).resolve().parents[2]
ProgressFn = Callable[[dict[str, Any]], None]


class RunError(RuntimeError):
    """A run could not be carried out (an agent failed, the fabric did not converge)."""


def topology_data(spec: FabricSpec) -> dict[str, Any]:
    """The topology document of a fabric spec, with the spec's link property overrides applied.

    ScenarioError names the spec's field and the topology file when the document, or the overrides
    applied to it, do not make a valid topology (a bad file was a TopologyError naming neither, or a
    traceback from the overrides)."""
    if spec.generate:
        where = "scenario.fabric.generate"
        try:
            data = clos_data(**{k: int(v) for k, v in spec.generate.items()})
        except (TypeError, ValueError) as e:  # TopologyError among them; spec.py checks the keys and types
            raise ScenarioError(f"{where}: {e}") from None
    else:
        path = Path(spec.topology or "")
        if not path.is_absolute():
            path = (REPO / path) if (REPO / path).exists() else path
        where = f"scenario.fabric.topology: {path}"
        try:
            data = read_yaml_file(path)  # as a topology file given to `up` is read
        except OSError as e:
            raise ScenarioError(f"{where}: {e.strerror or e}") from None
        except YamlFileError as e:
            raise ScenarioError(f"scenario.fabric.topology: {e}") from None
    try:
        parse_topology(data)  # before the overrides: they read the document's hosts and links
    except TopologyError as e:
        raise ScenarioError(f"{where}: {e}") from None
    if not (spec.link_defaults or spec.host_links):
        return data
    if spec.link_defaults:
        data["link_defaults"] = {**(data.get("link_defaults") or {}), **spec.link_defaults}
    if spec.host_links:
        hosts = {h if isinstance(h, str) else h["name"] for h in data["hosts"]}
        links = []
        for lk in data["links"]:
            a, b = (lk[0], lk[1]) if isinstance(lk, list) else (lk["a"], lk["b"])
            if a.split(":")[0] in hosts or b.split(":")[0] in hosts:
                base = lk if isinstance(lk, dict) else {"a": a, "b": b}
                lk = {**base, **spec.host_links}
            links.append(lk)
        data["links"] = links
    try:
        parse_topology(data)
    except TopologyError as e:
        raise ScenarioError(f"{where}, with scenario.fabric's link_defaults/host_links: {e}") from None
    return data


def path_delay_us(topo: Topology) -> int:
    """The longest one-way propagation delay between two hosts the links' ``delay_us`` give, as the
    emulated fabric applies it (at each switch's egress port: a leaf's uplink, the spine's downlink,
    the leaf's port to the host; a host's own port adds none)."""
    host = max((lk.props.delay_us for lk in topo.links
                if lk.a.node in topo.hosts or lk.b.node in topo.hosts), default=0)
    fabric = max((lk.props.delay_us for lk in topo.links
                  if lk.a.node in topo.switches and lk.b.node in topo.switches), default=0)
    return 2 * fabric + host


def without_link_delay(data: dict[str, Any]) -> dict[str, Any]:
    """A topology document with every link's ``delay_us`` removed (defaults and per-link)."""
    out = dict(data)
    if out.get("link_defaults"):
        out["link_defaults"] = {k: v for k, v in out["link_defaults"].items() if k != "delay_us"}
    out["links"] = [{k: v for k, v in lk.items() if k != "delay_us"} if isinstance(lk, dict) else lk
                    for lk in data.get("links", [])]
    return out


def _switches_can_delay(target: str) -> bool:
    """Whether the emulated fabric can delay at the switches: the target's own link model, or netem."""
    return get_target(target).has_link_delay or netem_available()


class NetnsFaults:
    """The emulated fabric's fault primitives (``mrc_fabric.faults.FaultTarget``): veth carrier, switch
    processes, P4Runtime port admin, softswitch/netem shaping.  ``converge`` (the scenario runner's
    controller) re-programs a restarted switch; without it (``mrc-fabric fault``) a restarted switch
    comes back empty until a controller converges it."""

    fault_primitives = frozenset({"set_link", "host_link", "spine_links", "switch_stop", "switch_start",
                                  "port_admin", "shape", "unshape"})
    # those made through the run's controller (P4Runtime writes): not for `mrc-fabric fault`, which has none
    controller_primitives = frozenset({"port_admin"})

    def __init__(self, fab: Fabric, converge: Callable[[str], None] | None = None) -> None:
        self.fab, self.topo, self.converge = fab, fab.topo, converge
        # every link the faults applied through this object took down or up, [node, node, up] (the run's
        # fault log "links", as the simulator records them: the report checks EV paths against them)
        self.links: list[list[Any]] = []

    def _note(self, a: str, b: str, up: bool) -> None:
        self.links.append([a.partition(":")[0], b.partition(":")[0], up])

    def _switch_links(self, switch: str, up: bool) -> None:
        for lk in self.topo.links:  # a stopped switch forwards nothing: every one of its links is dark
            if switch in (lk.a.node, lk.b.node):
                self._note(lk.a.node, lk.b.node, up)

    def set_link(self, a: str, b: str, up: bool) -> None:
        self.fab.set_link(a, b, up)
        self._note(a, b, up)

    def host_link(self, host: str, plane: int) -> tuple[str, str]:
        try:
            return topo_host_link(self.topo, host, plane)
        except FaultError as e:
            raise ScenarioError(f"fault: {e}") from None

    def spine_links(self, spine: str) -> list[tuple[str, str]]:
        try:
            return topo_spine_links(self.topo, spine)
        except FaultError as e:
            raise ScenarioError(f"fault: {e}") from None

    def switch_stop(self, switch: str) -> None:
        self.fab.switch_stop(switch)
        self._switch_links(switch, False)

    def switch_start(self, switch: str) -> None:
        started = not self.fab.switch_running(switch)
        if not started and self.converge is None:  # `mrc-fabric fault`: say so, do not claim a start
            raise FabricError(f"switch {switch} is already running")
        if started:  # with a controller here, shaped once it has loaded its pipeline (no race for it)
            self.fab.switch_start(switch, shape=self.converge is None)
        if self.converge is not None:
            self.converge(switch)
            if started:
                self.fab.reshape(switch)
        self._switch_links(switch, True)

    def port_admin(self, switch: str, port: int, up: bool) -> None:
        self.fab.port_admin(switch, port, up)
        lk = self.topo.link_at(switch, port)
        if lk is not None:
            self._note(lk.a.node, lk.b.node, up)

    def shape(self, switch: str, port: int, delay_us: int | None, rate_pps: int | None,
              queue_depth: int | None) -> None:
        self.fab.shape(switch, port, delay_us=delay_us, link_rate_pps=rate_pps, queue_depth=queue_depth)

    def unshape(self, switch: str, port: int) -> None:
        lk = self.topo.link_at(switch, port)
        if lk is None:
            raise ScenarioError(f"fault: switch {switch} has no connected port {port}")
        p = lk.props
        # 0 in the topology is "none": no link rate (0 lifts it on both targets), the default depth
        # (its control queue then 4 times it, CONTROL_QUEUE_FACTOR, as on a port the topology gives
        # a depth); passing None instead would leave the fault's values in place
        self.fab.shape(switch, port, delay_us=p.delay_us, link_rate_pps=p.rate_pps,
                       queue_depth=p.queue_depth or DEFAULT_QUEUE_DEPTH)


@dataclass
class Flow:
    """One sender -> receiver flow of a pattern."""

    fid: int
    src: str
    dst: str


def flows_for(t: TrafficSpec, hosts: list[str]) -> list[Flow]:
    """The flows of a traffic pattern over ``hosts`` (ids from 1)."""
    hs = list(t.hosts) or hosts
    unknown = sorted(set(hs) - set(hosts))
    if unknown:
        raise ScenarioError(f"scenario.traffic.hosts: unknown host(s) {', '.join(unknown)}")
    if len(hs) < 2:
        raise ScenarioError("scenario.traffic: needs at least two hosts")
    if t.pattern == "all-to-all":
        pairs = [(a, b) for a in hs for b in hs if a != b]
    elif t.pattern == "allreduce":  # ring all-reduce: host i writes to host i+1 (size x count = its 2(n-1)/n share)
        pairs = [(h, hs[(i + 1) % len(hs)]) for i, h in enumerate(hs)]
    elif t.pattern == "permutation":
        if t.shift % len(hs) == 0:
            raise ScenarioError("scenario.traffic.shift: a multiple of the host count maps hosts to themselves")
        pairs = [(h, hs[(i + t.shift) % len(hs)]) for i, h in enumerate(hs)]
    else:
        dst = t.incast_dst or hs[0]
        if dst not in hs:
            raise ScenarioError(f"scenario.traffic.incast_dst: {dst!r} is not one of the hosts")
        srcs = [h for h in hs if h != dst]
        if t.senders:
            srcs = srcs[:t.senders]
        pairs = [(s, dst) for s in srcs]
    return [Flow(i + 1, a, b) for i, (a, b) in enumerate(pairs)]


def rc_pins(hosts: list[str]) -> dict[tuple[str, str], int]:
    """RC baseline path choice: unordered pair j (sorted) -> EV j mod n (an even static spread, as a
    perfect ECMP hash would give); both directions and both ends of a pair use the same path."""
    pairs = sorted({tuple(sorted((a, b))) for a in hosts for b in hosts if a != b})
    return {p: j for j, p in enumerate(pairs)}


class FabricEnv:
    """A fabric brought up and converged by the controller, with EV plans written (context manager)."""

    def __init__(self, spec: FabricSpec, *, prefix: str, grpc_base_port: int, target: str = DEFAULT_TARGET,
                 workdir: Path, evs_per_path: int = 1, log: logging.Logger | None = None) -> None:
        self.spec, self.prefix, self.target = spec, prefix, target
        # absolute: the agents run with the repository as their working directory (``run_traffic``), so a
        # plan path relative to the caller's (``mrc-fabric demo --out demo-out`` run from anywhere but the
        # repository) named no file for them.  Made, and topology.yaml written, by __enter__ once Fabric
        # took the prefix and ports
        self.workdir = Path(workdir).resolve()
        self.grpc_base_port = grpc_base_port
        self.evs_per_path = evs_per_path
        self.log = log or logging.getLogger("mrc_fabric.scenarios")
        self.last_fault_links: list[list[Any]] = []  # links the last fault applied took down or up
        data = topology_data(spec)
        self.topo = parse_topology(data)
        # link delay the switches cannot apply goes to the hosts' NICs (FabricSpec.delay_at)
        self.host_delay_us = 0
        delay = path_delay_us(self.topo) if spec.delay_at != "switches" else 0
        if delay and (spec.delay_at == "hosts" or not _switches_can_delay(target)):
            self.host_delay_us = delay
            data = without_link_delay(data)
            self.topo = parse_topology(data)
        self.topo_path = self.workdir / "topology.yaml"
        self._topo_text = yaml.safe_dump(data, sort_keys=False)
        self.plan = build_plan(self.topo)
        self.fab: Fabric | None = None
        self.ctl: Controller | None = None
        self.plan_dir = self.workdir / "evplans"
        self.bringup_s = 0.0
        self.converge_s = 0.0

    @property
    def hosts(self) -> list[str]:
        return [h.name for h in self.topo.host_list()]

    def line_rate_gbps(self, host: str) -> float:
        """The NIC line rate of ``host`` as the fabric models its links: the slowest host link's
        ``rate_pps`` times a full frame (QP MTU 8192 + SRv6 headers + Ethernet), as bits; 10 Gb/s
        where the links have no rate.  The agents pace their NIC ports at it (a NIC sends at its
        line rate; congestion control, not a hand-tuned pacing knob, keeps the fabric's queues short)."""
        rates = [lk.props.rate_pps for lk in self.topo.links if host in (lk.a.node, lk.b.node) and lk.props.rate_pps]
        if not rates:
            return 10.0
        return full_frames_bps(min(rates)) / 1e9

    def __enter__(self) -> Self:
        t0 = time.monotonic()
        self.fab = Fabric(self.topo, prefix=self.prefix, target=self.target, grpc_base_port=self.grpc_base_port,
                          state_dir=self.workdir / "state", topology_path=str(self.topo_path))
        # written once Fabric took the prefix and ports: a refused one wrote topology.yaml into --out
        # first, so a refused `scenario run` left a folder behind (until 2026-12-08)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.topo_path.write_text(self._topo_text)
        try:
            self.fab.__enter__()
            self.bringup_s = time.monotonic() - t0
            pipeline = load_pipeline(self.target, os.environ.get("MRC_P4_PROGRAM"))
            _controller_warnings_name_their_switch()
            self.ctl = Controller(self.plan, pipeline, Options(grpc_base_port=self.grpc_base_port, retries=4,
                                                               backoff_initial_s=0.3, backoff_max_s=2.0))
            ok = self.ctl.converge_all()
            bad = sorted(n for n, v in ok.items() if not v)
            if bad:
                raise RunError(f"controller did not converge switch(es) {', '.join(bad)}: "
                               + "; ".join(self.ctl.status[n].last_error for n in bad))
            self.fab.port_admin_hook = self.ctl.set_port_admin
            self.ctl.outside_drops = self.fab.outside_drop_counts  # the metrics' mrc_outside_drop_packets_total
            self.converge_s = time.monotonic() - t0 - self.bringup_s
            write_ev_files(self.plan, self.plan_dir, self.evs_per_path, fmt="json")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.ctl is not None:
            self.ctl.close()
            self.ctl = None
        if self.fab is not None:
            self.fab.__exit__(None, None, None)
            self.fab = None

    # ---- faults ------------------------------------------------------------------------------------
    def apply(self, f: FaultSpec, undo: bool = False) -> str:
        """Carry out one fault (or its undo) through the fault registry; returns what was done."""
        assert self.fab is not None and self.ctl is not None
        target = NetnsFaults(self.fab, self._converge_with_retry)
        self.last_fault_links = target.links
        return f.spec.apply(target, f, undo)

    def _converge_with_retry(self, switch: str, deadline_s: float = 30.0) -> None:
        """Converge a restarted switch; a freshly started process may not answer the first attempt
        (its gRPC server is still coming up on a loaded machine), so retry until the deadline."""
        assert self.ctl is not None
        end = time.monotonic() + deadline_s
        while True:
            try:
                if self.ctl.converge_switch(switch):
                    return
                why = "controller is not primary"
            except Exception as e:  # noqa: BLE001 - retried, and re-raised at the deadline
                why = str(e)
            if time.monotonic() > end:
                raise RunError(f"switch {switch} did not converge within {deadline_s:.0f} s: {why}")
            time.sleep(0.5)  # retry interval of a deadline-bounded loop

    def restore(self, faults: tuple[FaultSpec, ...]) -> None:
        """Undo every fault a run may have left behind and wait until host NICs are up again."""
        failed = []
        for f in faults:
            try:
                self.apply(f, undo=True)
            except Exception as e:  # noqa: BLE001 - restore what can be restored, then report the rest
                self.log.warning("restore failed: %s: %s", f.label(), e)
                failed.append(f"{f.label()}: {e}")
        end = time.monotonic() + 10.0
        while time.monotonic() < end and not self.nics_up():
            time.sleep(0.1)  # polling the carrier with a deadline
        if failed:  # the next run would start on a broken fabric and compare nothing fairly
            raise RunError("could not restore the fabric after a run: " + "; ".join(failed))

    def nics_up(self) -> bool:
        """True when no host NIC lacks LOWER_UP.  Asks ``ip`` rather than ``netbuild.link_info``: that
        forks a pyroute2 NetNS helper from this process, which holds the controller's gRPC channels,
        and with it the e2e suite's later counter reads failed (incast trimming saw no trims)."""
        assert self.fab is not None
        for h in self.hosts:
            out = subprocess.run(["ip", "-n", self.fab.netns(h), "-o", "link", "show"], capture_output=True,
                                 text=True, check=False).stdout
            for line in out.splitlines():
                if ": nic" in line and "LOWER_UP" not in line:
                    return False
        return True

    def counters(self) -> dict[str, Any]:
        """Switch counters read now through the controller: drops by reason, port tx packets."""
        assert self.ctl is not None
        self.ctl.poll_counters()
        snap, _, _ = self.ctl.telemetry.snapshot()
        return {n: {"drops": {r: v[0] for r, v in c.drops.items()}, "tx": sum(v[0] for v in c.port_tx.values()),
                    "rx": sum(v[0] for v in c.port_rx.values()), "congestion": dict(c.congestion)}
                for n, c in snap.items()}

    def congestion_counts(self) -> dict[str, dict[str, int]]:
        """Per switch: packets trimmed / CE-marked / dropped early so far (``congestion_events``).

        One small counter read per switch, cheap enough to sample during a run; a switch that does
        not answer (stopped by a fault) is left out."""
        assert self.ctl is not None
        out: dict[str, dict[str, int]] = {}
        for name, s in self.ctl.sessions.items():
            if s.names is None:
                continue
            for c in s.names.counters_named(C_CONGESTION_EVENTS):
                ent = p4runtime_pb2.Entity()
                ent.counter_entry.counter_id = c.preamble.id
                try:
                    ents = s.read([ent])
                except Exception as e:  # noqa: BLE001 - a stopped switch is simply not sampled
                    self.log.debug("congestion counters of %s not read: %s", name, e)
                    continue
                out[name] = {CONGESTION_EVENTS.get(e.counter_entry.index.index, "other"):
                             e.counter_entry.data.packet_count for e in ents}
        return out


def counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per-switch differences of :meth:`FabricEnv.counters` (switches restarted in between count from 0)."""
    out: dict[str, Any] = {}
    for n, a in after.items():
        b = before.get(n, {"drops": {}, "tx": 0, "rx": 0, "congestion": {}})
        restarted = a["tx"] < b["tx"]
        drops = {r: v - (0 if restarted else b["drops"].get(r, 0)) for r, v in a["drops"].items()}
        cong = {k: v - (0 if restarted else b.get("congestion", {}).get(k, 0))
                for k, v in a.get("congestion", {}).items()}
        out[n] = {"drops": {r: v for r, v in drops.items() if v}, "tx": a["tx"] - (0 if restarted else b["tx"]),
                  "rx": a["rx"] - (0 if restarted else b["rx"]), "congestion": {k: v for k, v in cong.items() if v}}
    return out


@dataclass
class _Agent:
    host: str
    proc: subprocess.Popen
    q: queue.Queue = field(default_factory=queue.Queue)
    last: dict[str, Any] = field(default_factory=dict)

    def send(self, obj: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def wait(self, key: str, timeout_s: float) -> Any:
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            try:
                msg = self.q.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise RunError(f"agent {self.host} exited ({self.proc.returncode}): {self.stderr_tail()}") from None
                continue
            if key in msg:
                return msg[key]
            if "error" in msg:
                raise RunError(f"agent {self.host}: {msg['error']}")
            self._note(msg)
        raise RunError(f"agent {self.host}: no '{key}' within {timeout_s:g} s: {self.stderr_tail()}")

    def _note(self, msg: dict) -> None:
        for k in ("progress", "sent"):
            if k in msg:
                self.last[k] = msg[k]

    def drain(self) -> None:
        while True:
            try:
                msg = self.q.get_nowait()
            except queue.Empty:
                return
            if "error" in msg:
                raise RunError(f"agent {self.host}: {msg['error']}")
            self._note(msg)

    def stderr_tail(self) -> str:
        path = getattr(self, "errpath", None)
        try:
            return Path(path).read_text()[-1500:] if path else ""
        except OSError:
            return ""


def _reader(a: _Agent) -> None:
    assert a.proc.stdout is not None
    for line in a.proc.stdout:
        line = line.strip()
        if line:
            try:
                a.q.put(json.loads(line))
            except ValueError:
                a.q.put({"error": f"bad line from agent: {line[:200]}"})


def run_traffic(env: FabricEnv, sc: Scenario, mode: str, progress: ProgressFn | None = None) -> dict[str, Any]:
    """Run ``sc``'s traffic in ``mode`` with its faults; the fabric is restored afterwards."""
    assert env.fab is not None
    t = sc.traffic
    flows = flows_for(t, env.hosts)
    pins = rc_pins(env.hosts)
    total_bytes = len(flows) * t.count * t.size
    agents: dict[str, _Agent] = {}
    fault_log: list[dict[str, Any]] = []
    stop_faults = threading.Event()
    cong_samples: list[list] = []
    cthread: threading.Thread | None = None
    counters_before = env.counters() if sc.measure.switch_counters else {}
    drops_before = env.fab.outside_drops()
    involved = sorted({f.src for f in flows} | {f.dst for f in flows}, key=env.hosts.index)
    try:
        for h in involved:
            errpath = env.workdir / f"agent-{mode}-{h}.log"
            with open(errpath, "w") as err:
                proc = subprocess.Popen(["ip", "netns", "exec", env.fab.netns(h), sys.executable,
                                         str(Path(__file__).with_name("agent.py"))], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=err, text=True, cwd=REPO,
                                        env={**os.environ, "PYTHONPATH": str(REPO)})
            a = _Agent(h, proc)
            a.errpath = errpath  # type: ignore[attr-defined]
            agents[h] = a
            threading.Thread(target=_reader, args=(a,), daemon=True).start()
            peers = {(f.dst if f.src == h else f.src) for f in flows if h in (f.src, f.dst)}
            a.send({"config": {
                "host": h, "plan": str(env.plan_dir / f"{h}.json"), "mode": mode, "encap": t.encap, "seed": sc.seed,
                "rate_gbps": t.rate_gbps or env.line_rate_gbps(h), "cc": t.cc, "nscc": t.nscc, "mtu": t.mtu, "ack_timeout": t.ack_timeout,
                "resend_dscp": t.resend_dscp, "trim_ahead": t.trim_ahead, "tx_delay_us": env.host_delay_us,
                "probe_interval_ms": t.probe_interval_ms, "reorder_ms": t.reorder_ms, "sample_ms": sc.measure.sample_ms,
                "rc_pin": {p: pins[tuple(sorted((h, p)))] for p in peers},
                "flows_out": [{"id": f.fid, "dst": f.dst, "size": t.size, "count": t.count, "qps": t.qps,
                               "tx_depth": t.tx_depth} for f in flows if f.src == h],
                "flows_in": [{"id": f.fid, "src": f.src, "size": t.size, "count": t.count, "qps": t.qps}
                             for f in flows if f.dst == h]}})
        hello = {h: a.wait("hello", 60.0) for h, a in agents.items()}
        gids = {h: v["gid"] for h, v in hello.items()}
        for h, a in agents.items():
            a.send({"connect": {"gids": gids,
                                "in": {str(f.fid): hello[f.src]["out"][str(f.fid)] for f in flows if f.dst == h},
                                "out": {str(f.fid): hello[f.dst]["in"][str(f.fid)] for f in flows if f.src == h}}})
        for a in agents.values():
            a.wait("ready", 60.0)
        t0 = time.monotonic_ns()
        for a in agents.values():
            a.send({"start": {"t0_ns": t0}})
        fthread = threading.Thread(target=_inject, args=(env, sc.faults, t0, fault_log, stop_faults), daemon=True)
        fthread.start()
        if sc.measure.switch_counters:
            cthread = threading.Thread(target=_sample_congestion, args=(env, t0, cong_samples, stop_faults,
                                                                       sc.measure.congestion_ms / 1000),
                                       daemon=True)
            cthread.start()
        deadline = t0 + int(sc.deadline_s * 1e9)
        senders = {f.src for f in flows}
        completed = False
        while True:
            for a in agents.values():
                a.drain()
                if a.proc.poll() is not None:
                    raise RunError(f"agent {a.host} exited ({a.proc.returncode}): {a.stderr_tail()}")
            now = time.monotonic_ns()
            if progress is not None:
                progress({"mode": mode, "t_s": (now - t0) / 1e9, "acked": sum(
                    a.last.get("progress", {}).get("acked", 0) for a in agents.values()), "total": total_bytes,
                    "faults": list(fault_log)})
            if all("sent" in agents[h].last for h in senders):
                completed = True
                break
            if now >= deadline:
                break
            time.sleep(0.05)  # the runner's poll period; agents run on their own
        end_ns = time.monotonic_ns()
        stop_faults.set()
        for a in agents.values():
            a.send({"stop": True})
        halted = {h: a.wait("halted", 60.0) for h, a in agents.items()}
        done = {fid: n for v in halted.values() for fid, n in v["done"].items()}
        for h, a in agents.items():
            a.send({"verify": {"done": {str(f.fid): done.get(str(f.fid), 0) for f in flows if f.dst == h}}})
        results = {h: a.wait("result", 120.0) for h, a in agents.items()}
        fthread.join(timeout=30)
        if cthread is not None:
            cthread.join(timeout=30)
    finally:
        stop_faults.set()
        for a in agents.values():
            if a.proc.poll() is None:
                a.proc.terminate()
        for a in agents.values():
            try:
                a.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                a.proc.kill()
                a.proc.wait(timeout=5)
        env.restore(sc.faults)
    counters_after = env.counters() if sc.measure.switch_counters else {}
    drops_after = env.fab.outside_drops()
    for h, res in results.items():
        res["ev_events"] = [e[:7] + [ev_path(env.topo, h, e[7] if len(e) > 7 else None)] + e[8:9]
                            for e in res["ev_events"]]
    return {"mode": mode, "completed": completed, "elapsed_s": (end_ns - t0) / 1e9, "deadline_s": sc.deadline_s,
            "total_bytes": total_bytes, "flows": [f.__dict__ for f in flows], "hosts": results,
            "faults": fault_log, "faults_not_reached": faults_not_reached(sc.faults, fault_log),
            "switch_counters": counter_delta(counters_before, counters_after),
            "congestion_samples": cong_samples,
            # whether the target counts what it loses outside its pipeline at all (bmv2: no port_stats)
            "outside_drops_reported": get_target(env.target).reports_kernel_drops,
            # per switch, what it lost outside its pipeline during the run (a restarted switch counts anew)
            **{k: {n: v - drops_before[k].get(n, 0) if v >= drops_before[k].get(n, 0) else v
                   for n, v in after.items()} for k, after in drops_after.items()},
            # switches whose port statistics could not be read at the start or the end of the run (a stopped
            # switch): their drops are in none of the sums above, which then say 0 for what nobody read
            "outside_drops_unread": sorted(n for n, rec in env.fab.state.procs.items() if rec.runtime_port and (
                n not in drops_before["tx_drops"] or n not in drops_after["tx_drops"]))
            if get_target(env.target).reports_kernel_drops else [],
            "rc_pins": {f"{a}-{b}": j for (a, b), j in pins.items()} if mode == "rc" else {}}


def ev_path(topo: Topology, host: str, route: list[Any] | None) -> list[str] | None:
    """The nodes an EV of ``host`` crosses (``controller.evplan.ev_nodes``), from the agent's ``[peer, NIC
    port, spine, encap]`` (the 8th field of its EV events), as the simulator reports them; None when
    the plan does not decide the path."""
    if not route:
        return None
    peer, port, spine, encap = route
    if host not in topo.hosts or peer not in topo.hosts or topo.peer(host, port) is None or \
            topo.peer(peer, port) is None:
        return None  # not a path of this fabric's plan: counted as unknown_path, which the checks report
    return ev_nodes(topo, host, peer, port, spine, encap)


def _inject(env: FabricEnv, faults: tuple[FaultSpec, ...], t0: int, log: list[dict[str, Any]],
            stop: threading.Event) -> None:
    """Apply the faults at their times (and undo those with a duration) until ``stop``."""
    actions = []
    for f in faults:
        actions.append((f.at, f, False))
        if f.duration > 0:
            actions.append((f.at + f.duration, f, True))
    actions.sort(key=lambda x: x[0])
    for at, f, undo in actions:
        wait = t0 / 1e9 + at - time.monotonic()
        if wait > 0 and stop.wait(wait):
            return
        t_s = (time.monotonic_ns() - t0) / 1e9
        try:
            what = env.apply(f, undo=undo)
            log.append({"t_s": round(t_s, 4), "fault": f.label(), "undo": undo, "did": what,
                        "down": f.spec.is_failure(f, undo), "links": list(env.last_fault_links)})
        except Exception as e:  # noqa: BLE001 - a fault that cannot be applied is reported in the result
            log.append({"t_s": round(t_s, 4), "fault": f.label(), "undo": undo, "error": str(e), "down": False})


def _sample_congestion(env: FabricEnv, t0: int, out: list[list], stop: threading.Event, period_s: float) -> None:
    """Every ``period_s`` until ``stop``: [t_s, {switch: {event: packets}}] (the timeline's trims/ECN)."""
    while True:
        t_s = (time.monotonic_ns() - t0) / 1e9
        out.append([round(t_s, 4), env.congestion_counts()])
        if stop.wait(period_s):
            out.append([round((time.monotonic_ns() - t0) / 1e9, 4), env.congestion_counts()])
            return


def _controller_warnings_name_their_switch() -> None:
    """The in-process controller's warnings ("stream lost; reconnecting") with their fields (which
    switch), as ``mrc-controller`` prints them: with no handler anywhere, Python's last-resort handler
    would print the bare message.  Nothing changes where the application (or pytest) set up logging."""
    log = logging.getLogger("controller")
    if log.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(TextFormatter())
    handler.setLevel(logging.WARNING)
    log.addHandler(handler)
