"""Scenarios as data: fabric, traffic pattern, faults on a schedule, what to measure (Python or YAML).

    name: spine-link-failure
    fabric: {topology: examples/small.yaml}       # or {generate: {planes: 2, spines: 2, leaves: 2,
                                                  #    hosts_per_leaf: 2}, link_defaults: {...}}
    traffic: {pattern: all-to-all, size: 256K, count: 16, qps: 1, tx_depth: 2, rate_gbps: 0.03}
    modes: [mrc, rc]
    faults:
    - {at: 1.0, kind: link_down, a: p1l1, b: p1s1}
    - {at: 2.0, kind: spine_loss, spine: p2s2}
    deadline_s: 30
Errors raise ``ScenarioError`` naming the field (``scenario.faults[1].kind: ...``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.plan import STEV_EV_DIRECT, STEV_MODES
from controller.topogen import count_error
from mrc.core.qp import PATH_MTUS
from mrc.wire.formats import DSCP_RESEND
from mrc.yamlio import YamlFileError, place_error, read_yaml_file, unknown_keys

from .. import faults

PATTERNS = ("permutation", "all-to-all", "incast", "allreduce")
MODES = ("mrc", "rc")
DELAY_AT = ("auto", "switches", "hosts")  # FabricSpec.delay_at
FAULT_KINDS = faults.FAULT_KINDS
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
MAX_MESSAGE = (1 << 32) - 1  # an RDMA Write's length (the RETH's 32-bit DMA length)


class ScenarioError(ValueError):
    """A scenario that cannot be run as written; the message names the field."""


def parse_size(v: Any, where: str) -> int:
    """``65536``, ``64K``, ``1M`` -> bytes."""
    if isinstance(v, int) and not isinstance(v, bool):
        n = v
    else:
        s = str(v).strip().upper()
        mult = _SUFFIX.get(s[-1:], 1)
        try:
            n = int(s[:-1] if s[-1:] in _SUFFIX else s) * mult
        except ValueError:
            raise ScenarioError(f"{where}: not a size: {v!r}") from None
    if n < 1:
        raise ScenarioError(f"{where}: must be at least 1 byte")
    return n


@dataclass(frozen=True)
class FabricSpec:
    """Which fabric: a topology file, or generator arguments (``controller.topogen.clos_data``)."""

    topology: str | None = "examples/small.yaml"
    generate: dict[str, int] | None = None
    link_defaults: dict[str, int] | None = None  # applied to every link (queue_depth, rate_pps, delay_us)
    host_links: dict[str, int] | None = None  # applied to host<->leaf links only (e.g. a slow, shallow downlink)
    # where the links' delay_us is applied on the emulated fabric: "switches" (each switch egress port:
    # softswitch's link model, or netem for a target without one), "hosts" (each host's NIC delays what
    # it sends by a path's one-way delay: for switches that cannot delay, e.g. bmv2 without netem),
    # "auto" (switches where the target or the kernel can, else hosts).  The simulated fabric (engine sim)
    # always delays at its switch ports.  docs/fabric.md
    delay_at: str = "auto"


@dataclass(frozen=True)
class TrafficSpec:
    """Who writes to whom, how much, and how fast the NIC ports are paced."""

    pattern: str = "all-to-all"
    size: int = 256 << 10
    count: int = 8
    qps: int = 1
    tx_depth: int = 2
    rate_gbps: float = 0.0  # NIC port line rate; 0: the fabric's host-link rate (rate_pps x a full frame), else 10
    hosts: tuple[str, ...] = ()  # empty: every host
    incast_dst: str | None = None  # incast receiver (default: the first host)
    senders: int = 0  # incast senders (0: every other host)
    shift: int = 1  # permutation: host i writes to host (i + shift) mod n
    mtu: int = 0  # 0: the largest the interfaces allow
    encap: str = "srv6"
    ack_timeout: int = 18  # QP ACK timeout t (1.024 us * 2^t; 18 = 268 ms: switches in Python queue for tens of ms)
    reorder_ms: float = 40.0  # RACK reordering floor: paths through CPU-shared switches differ by tens of ms
    probe_interval_ms: float = 20.0  # ASSUMED_BAD EV probe period (core default: max(4 x srtt, 1 ms)); docs/protocol.md table
    steps: int = 1  # a job of this many steps: each step writes every flow's messages; next step when all are done
    # congestion control: nscc | dcqcn | none | auto; auto: NSCC for MRC, DCQCN for RC (what the NICs run;
    # cc_for).  "": the engine's default -- the emulation's is auto, the simulator's none (no window), which
    # every simulated figure recorded before 2026-12-07 ran with (docs/simulation.md)
    cc: str = ""
    # MRC: data found lost is resent with DSCP_RESEND, which mrc_switch.p4 queues ahead of the data queue
    # (QpAttr.resend_dscp); false: resent as data, behind the same queues (docs/protocol.md)
    resend_priority: bool = True
    # MRC: the trimmed packet holding a QP's cumulative ACK is resent ahead of the data queues from this
    # trim of it on (QpAttr.trim_ahead_after; 0: never, every trim's resend goes as data)
    trim_ahead: int = 2
    # NSCC's CC profile parameters by NsccConfig name (base_rtt in ns, max_cwnd, ...) over its defaults for
    # the NIC rate and MTU; empty: each QP learns the base RTT (docs/mrc_ctl.md, "How ctl drives the transport")
    nscc: dict[str, Any] = field(default_factory=dict)

    @property
    def resend_dscp(self) -> int | None:
        """``QpAttr.resend_dscp`` for the MRC QPs of this traffic (both engines)."""
        return DSCP_RESEND if self.resend_priority else None


@dataclass(frozen=True, init=False)
class FaultSpec:
    """One fault at ``at`` seconds after traffic starts; ``duration`` > 0 undoes it after that long.

    The kind's parameters (``a``/``b``, ``spine``, ``host``/``plane``, ...; see ``mrc_fabric.faults``) are
    keyword arguments and read back as attributes; a parameter not given reads as its default."""

    at: float
    kind: str
    duration: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    def __init__(self, at: float, kind: str, duration: float = 0.0, params: dict[str, Any] | None = None,
                 **kw: Any) -> None:
        object.__setattr__(self, "at", at)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "duration", duration)
        object.__setattr__(self, "params", {**(params or {}), **kw})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        kind = faults.REGISTRY.get(self.__dict__.get("kind", ""))
        for p in kind.params if kind else ():
            if p.name == name:
                return p.default if p.default is not None else ("" if p.type is str else p.type())
        raise AttributeError(f"fault {self.__dict__.get('kind')!r} has no parameter {name!r}")

    def __hash__(self) -> int:
        return hash((self.at, self.kind, self.duration, tuple(sorted(self.params.items()))))

    @property
    def spec(self) -> faults.FaultKind:
        """The registered kind (raises FaultError for an unknown one)."""
        return faults.get(self.kind)

    def label(self) -> str:
        """Short text for timelines and plots."""
        k = faults.REGISTRY.get(self.kind)
        return k.label(self) if k else self.kind


@dataclass(frozen=True)
class MeasureSpec:
    """Sampling of the time series and switch counter reads."""

    sample_ms: float = 20.0
    bin_ms: float = 100.0
    switch_counters: bool = True
    congestion_ms: float = 500.0  # period of the switches' trim/ECN counter samples (timeline)


@dataclass(frozen=True)
class SimSpec:
    """Settings only the simulated engine uses (``--engine sim``); the emulation ignores them."""

    link_gbps: float = 0.0  # switch-to-switch line rate; 0: traffic.rate_gbps (the NIC rate)
    delay_ns: int | None = None  # one-way propagation delay of every link; None: the topology's delay_us
    queue_packets: int = 0  # per-port queue depth (ECN 1/4, trim 7/8, drop at it); 0: the topology's
    stev_mode: str = STEV_EV_DIRECT  # STEV/UDP leaves: ev_direct (the EV picks the spine) or ecmp (flow hash)
    rc_path: str = "hash"  # RC baseline's pinned path: hash (as ECMP hashing, collisions included) or even
    evs_per_path: int = 1  # EVs per (plane, spine) path in the controller's EV plan
    shuffle_evs: bool = True  # MRC: each host pair's EV profile sprays in its own (seeded) order, not plan order
    linger_s: float = 0.0  # keep simulating this long after the traffic completes (probes, faults' undoing)
    # switch ports' top strict-priority queue (priority 0: trimmed headers, control) holds this many times the data
    # depth and the resend queue (1) the data depth, each tail-dropping beyond, as mrc_switch.p4's queues
    # do on the fabric (4); 0: both unbounded
    priority_queue_factor: int = 0


@dataclass(frozen=True)
class Scenario:
    """A complete scenario; run it with :func:`mrc_fabric.scenarios.run_scenario`."""

    name: str = "scenario"
    fabric: FabricSpec = field(default_factory=FabricSpec)
    traffic: TrafficSpec = field(default_factory=TrafficSpec)
    faults: tuple[FaultSpec, ...] = ()
    modes: tuple[str, ...] = ("mrc",)
    deadline_s: float = 60.0  # a run that has not completed by then is stopped and reported as such
    seed: int = 1
    measure: MeasureSpec = field(default_factory=MeasureSpec)
    sim: SimSpec = field(default_factory=SimSpec)
    # the file it was read from (load_scenario): errors found later, when it is run, name their place
    # in it as FILE:LINE:COL
    source: str = field(default="", compare=False)

    def check(self) -> Scenario:
        """Raise ScenarioError on values no run can use."""
        t = self.traffic
        if t.pattern not in PATTERNS:
            raise ScenarioError(f"scenario.traffic.pattern: {t.pattern!r} is not one of {', '.join(PATTERNS)}")
        for k in ("count", "qps", "tx_depth", "steps"):
            if getattr(t, k) < 1:
                raise ScenarioError(f"scenario.traffic.{k}: must be >= 1, got {getattr(t, k)}")
        sm = self.sim
        if sm.stev_mode not in STEV_MODES:
            raise ScenarioError(f"scenario.sim.stev_mode: {sm.stev_mode!r} is not {' or '.join(STEV_MODES)}")
        if sm.rc_path not in ("hash", "even"):
            raise ScenarioError(f"scenario.sim.rc_path: {sm.rc_path!r} is not hash or even")
        for k, zero in (("link_gbps", "traffic.rate_gbps"), ("queue_packets", "the topology's queue_depth"),
                        ("delay_ns", None), ("linger_s", "none")):
            v = getattr(sm, k)
            if v is not None and not 0 <= v < math.inf:  # nan and .inf were a ValueError / OverflowError traceback
                raise ScenarioError(f"scenario.sim.{k}: must be >= 0 and finite{f' (0: {zero})' if zero else ''}, "
                                    f"got {v}")
        if sm.priority_queue_factor < 0:
            raise ScenarioError("scenario.sim.priority_queue_factor: must be >= 0 (0: unbounded)")
        if not 1 <= sm.evs_per_path <= 256:
            raise ScenarioError("scenario.sim.evs_per_path: must be 1..256")
        if not 0 <= t.rate_gbps < math.inf:  # nan too: a ValueError traceback from the pacing
            raise ScenarioError("scenario.traffic.rate_gbps: must be >= 0 and finite (0: the fabric's link rate)")
        # each of these was a ValueError traceback from QpAttr.validate or the RETH once the run was under way
        # (on the emulated fabric: after bring-up and convergence)
        if t.size > MAX_MESSAGE:
            raise ScenarioError(f"scenario.traffic.size: a message is at most {MAX_MESSAGE} bytes (RETH DMA length), "
                                f"got {t.size}")
        if t.mtu and t.mtu not in PATH_MTUS:
            raise ScenarioError(f"scenario.traffic.mtu: must be 0 (the largest the interfaces allow) or one of "
                                f"{', '.join(map(str, PATH_MTUS))}, got {t.mtu}")
        if not 0 <= t.ack_timeout <= 24:
            raise ScenarioError(f"scenario.traffic.ack_timeout: must be 0..24 (1.024 us x 2^t), got {t.ack_timeout}")
        for k in ("reorder_ms", "probe_interval_ms"):
            if not 0 <= getattr(t, k) < math.inf:
                raise ScenarioError(f"scenario.traffic.{k}: must be >= 0 and finite, got {getattr(t, k)}")
        if t.senders < 0:  # -1 took every sender but the last (srcs[:-1])
            raise ScenarioError(f"scenario.traffic.senders: must be >= 0 (0: every other host), got {t.senders}")
        if t.trim_ahead < 0:
            raise ScenarioError("scenario.traffic.trim_ahead: must be >= 0 (0: every trim's resend goes as data)")
        if t.cc not in ("", "auto", "nscc", "dcqcn", "none"):
            raise ScenarioError(f"scenario.traffic.cc: {t.cc!r} is not auto, nscc, dcqcn or none")
        if t.nscc:
            _check_nscc(t)
        if t.encap not in ("srv6", "stev", "udp"):
            raise ScenarioError(f"scenario.traffic.encap: {t.encap!r} is not srv6, stev or udp")
        for m in self.modes:
            if m not in MODES:
                raise ScenarioError(f"scenario.modes: {m!r} is not mrc or rc")
        if not 0 < self.deadline_s < math.inf:  # nan too
            raise ScenarioError("scenario.deadline_s: must be positive (and finite)")
        m = self.measure
        for k in ("sample_ms", "bin_ms", "congestion_ms"):
            if not 0 < getattr(m, k) < math.inf:  # nan and .inf passed "<= 0" and failed once the run was over
                raise ScenarioError(f"scenario.measure.{k}: must be positive and finite, got {getattr(m, k)}")
        if self.fabric.delay_at not in DELAY_AT:
            raise ScenarioError(f"scenario.fabric.delay_at: {self.fabric.delay_at!r} is not {', '.join(DELAY_AT)}")
        if self.fabric.topology is None and not self.fabric.generate:
            raise ScenarioError("scenario.fabric: give a topology file or generate arguments")
        if not self.modes:
            raise ScenarioError("scenario.modes: empty (nothing to run); give mrc, rc or both")
        for i, f in enumerate(self.faults):
            w = f"scenario.faults[{i}]"
            try:
                kind = faults.get(f.kind, w)
                if not (0 <= f.at < math.inf and 0 <= f.duration < math.inf):
                    # .inf was an OverflowError traceback from the simulator's scheduler, nan a fault never undone
                    raise ScenarioError(f"{w}: at and duration must be >= 0 (and finite), got at {f.at:g}, "
                                        f"duration {f.duration:g}")
                kind.validate(f, w)
            except faults.FaultError as e:
                raise ScenarioError(str(e)) from None
        return self


def _build(cls: type, raw: Any, where: str, conv: dict[str, Any] | None = None) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected a mapping")
    names = set(cls.__dataclass_fields__)
    unknown = unknown_keys(raw, names)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    kw = {}
    for k, v in raw.items():
        fn = (conv or {}).get(k)
        try:
            kw[k] = fn(v, f"{where}.{k}") if fn else v
        except (TypeError, ValueError) as e:
            if isinstance(e, ScenarioError):
                raise
            raise ScenarioError(f"{where}.{k}: {e}") from None
    return cls(**kw)


def _flag(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise ScenarioError(f"{where}: expected true or false, got {v!r}")
    return v


def _num(t: type):
    def f(v: Any, where: str) -> Any:
        if isinstance(v, bool):
            raise ScenarioError(f"{where}: expected a number, got {v!r}")
        if t is int and isinstance(v, float) and not v.is_integer():  # int(2.7) would run 2 without a word
            raise ScenarioError(f"{where}: expected a whole number, got {v!r}")
        try:
            return t(v)
        except (TypeError, ValueError, OverflowError):
            raise ScenarioError(f"{where}: expected {'a whole' if t is int else 'a'} number, got {v!r}") from None
    return f


def _fault(raw: Any, where: str) -> FaultSpec:
    """A fault entry: ``at``, ``kind``, ``duration`` and the parameters its kind declares."""
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected a mapping")
    if "kind" not in raw:  # first: it says which other keys there are
        raise ScenarioError(f"{where}: needs at and kind")
    try:
        kind = faults.get(str(raw["kind"]), where)
    except faults.FaultError as e:
        raise ScenarioError(str(e)) from None
    types = {p.name: p.type for p in kind.params}
    unknown = unknown_keys(raw, {*types, "at", "kind", "duration"})
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)} for {kind.name} "
                            f"(known: at, kind, duration, {', '.join(types)})")
    params: dict[str, Any] = {}
    times = {"duration": 0.0}
    for k, v in raw.items():  # in file order, as every section (the parameters came before at and duration)
        t = types.get(k)
        if k in ("at", "duration"):
            times[k] = _num(float)(v, f"{where}.{k}")
        elif k == "kind":
            continue
        elif t is bool:
            if not isinstance(v, bool):
                raise ScenarioError(f"{where}.{k}: expected true or false, got {v!r}")
            params[k] = v
        elif t is str:
            params[k] = str(v)
        else:
            params[k] = _num(t)(v, f"{where}.{k}")
    if "at" not in times:
        raise ScenarioError(f"{where}: needs at and kind")
    return FaultSpec(at=times["at"], kind=kind.name, duration=times["duration"],
                     params={k: params[k] for k in types if k in params})


def _mapping(v: Any, where: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ScenarioError(f"{where}: expected a mapping, got {v!r}")
    return {str(k): x for k, x in v.items()}


def _or_none(fn):
    """``fn``, but an empty value (YAML null: ``link_defaults:`` with its entries commented out) is the
    field's default, None, as it was before the fabric section's values were checked (and as a
    topology file's ``link_defaults:`` is)."""
    def f(v: Any, where: str) -> Any:
        return None if v is None else fn(v, where)
    return f


def _hosts(v: Any, where: str) -> tuple[str, ...]:
    # a bare name was taken letter by letter ('h1' -> hosts h and 1)
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ScenarioError(f"{where}: expected a list of host names, got {v!r}")
    return tuple(v)


def _path(v: Any, where: str) -> str | None:
    if v is None:  # `topology: null` beside generate
        return None
    if not isinstance(v, str) or not v:
        raise ScenarioError(f"{where}: expected a file name, got {v!r}")
    return v


GENERATE_KEYS = ("planes", "spines", "leaves", "hosts_per_leaf")  # controller.topogen.clos_data's counts


def _generate(v: Any, where: str) -> dict[str, int]:
    """``fabric.generate``: the Clos generator's four counts (and optionally grpc_base_port), integers."""
    d = _mapping(v, where)
    unknown = unknown_keys(d, {*GENERATE_KEYS, "grpc_base_port"})
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(GENERATE_KEYS)}, "
                            "grpc_base_port)")
    # what is there, in file order (its type, then its range), before what is not: `{planes: two}` said
    # "give spines, leaves, hosts_per_leaf" and only once they were added that planes was no number
    out = {}
    for k, x in d.items():
        out[k] = _num(int)(x, f"{where}.{k}")
        why = count_error(k.replace("_", "-"), out[k]) if k in GENERATE_KEYS else ""
        if why:
            raise ScenarioError(f"{where}.{k}: {why}")
    missing = [k for k in GENERATE_KEYS if k not in d]
    if missing:
        raise ScenarioError(f"{where}: give {', '.join(missing)}")
    return out


def _modes(v: Any, where: str) -> tuple[str, ...]:
    modes = [v] if isinstance(v, str) else v
    if not isinstance(modes, list) or not modes:
        raise ScenarioError(f"{where}: expected mrc, rc or a non-empty list of them, got {v!r}")
    return tuple(modes)


def cc_for(cc: str, mode: str, empty: str) -> str:
    """The congestion control ``traffic.cc`` names for ``mode``: auto is NSCC for MRC and DCQCN for RC,
    "" the engine's default ``empty`` (the emulation's is auto, the simulator's none)."""
    cc = cc or empty
    if cc == "auto":
        return "nscc" if mode == "mrc" else "dcqcn"
    return cc


def _check_nscc(t: TrafficSpec) -> None:
    """``traffic.nscc``: NsccConfig parameters, base_rtt among them, for runs whose cc is NSCC."""
    from mrc.core.nscc import NsccConfig

    w = "scenario.traffic.nscc"
    if t.cc != "nscc":
        raise ScenarioError(f"{w}: needs traffic.cc: nscc (it is {t.cc or 'unset'!r}: the default differs by "
                            "engine and mode, so NSCC parameters go with an explicit nscc)")
    if "base_rtt" not in t.nscc:
        raise ScenarioError(f"{w}: give base_rtt (ns) with the other parameters (without it each QP learns "
                            "the base RTT and derives every parameter from it)")
    for k, v in t.nscc.items():
        if isinstance(v, bool) != (k == "disable_qa") or not isinstance(v, (int, float)):
            raise ScenarioError(f"{w}.{k}: {v!r} is not a {'boolean' if k == 'disable_qa' else 'number'}")
    try:
        NsccConfig().replace(**t.nscc)
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"{w}: {e}") from None


def parse_scenario(data: Any, where: str = "scenario") -> Scenario:
    """Build and check a Scenario from loaded YAML/JSON."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a mapping at the top level")
    sizes = {"size": parse_size, "count": _num(int), "qps": _num(int), "tx_depth": _num(int),
             "rate_gbps": _num(float), "senders": _num(int), "shift": _num(int), "mtu": _num(int),
             "ack_timeout": _num(int), "probe_interval_ms": _num(float), "reorder_ms": _num(float),
             "steps": _num(int), "cc": lambda v, w: str(v), "nscc": _mapping, "resend_priority": _flag,
             "trim_ahead": _num(int),
             "hosts": _hosts}
    known = {"name", "fabric", "traffic", "faults", "modes", "deadline_s", "seed", "measure", "sim"}
    unknown = unknown_keys(data, known)
    if unknown:  # first, as in every section (it came after the sections' values were checked)
        # a topology file given as the scenario was "unknown key(s) grpc_base_port, hosts, links, ...", no more
        hint = ("; this looks like a topology file: a scenario names one as fabric: {topology: FILE}"
                if {"switches", "links"} <= set(unknown) else "")
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))}){hint}")

    def faults_of(raw: Any, w: str) -> tuple[FaultSpec, ...]:
        if not isinstance(raw or [], list):
            raise ScenarioError(f"{w}: expected a list")
        return tuple(_fault(f, f"{w}[{i}]") for i, f in enumerate(raw or []))

    build = {
        "fabric": lambda v, w: _build(FabricSpec, v, w, {
            "topology": _path, "generate": _or_none(_generate), "link_defaults": _or_none(_mapping),
            "host_links": _or_none(_mapping), "delay_at": lambda v, w: str(v)}),
        "traffic": lambda v, w: _build(TrafficSpec, v, w, sizes),
        "faults": faults_of,
        "modes": _modes,
        "measure": lambda v, w: _build(MeasureSpec, v, w, {
            "sample_ms": _num(float), "bin_ms": _num(float), "congestion_ms": _num(float), "switch_counters": _flag}),
        "sim": lambda v, w: _build(SimSpec, v, w, {
            "link_gbps": _num(float), "delay_ns": _num(int), "queue_packets": _num(int), "evs_per_path": _num(int),
            "priority_queue_factor": _num(int), "linger_s": _num(float), "shuffle_evs": _flag,
            "stev_mode": lambda v, w: str(v), "rc_path": lambda v, w: str(v)}),
        "name": lambda v, w: str(v),
        "deadline_s": _num(float),
        "seed": _num(int),
    }
    # each section's values in file order (sim: before fabric: was reported after it); ranges and rules
    # between fields follow in Scenario.check once every value has its type
    kw: dict[str, Any] = {k: build[k](v, f"{where}.{k}") for k, v in data.items()}
    for k in ("fabric", "traffic", "measure", "sim"):  # absent sections: their defaults, as before
        kw.setdefault(k, build[k](None, f"{where}.{k}"))
    kw.setdefault("modes", _modes(["mrc"], f"{where}.modes"))
    return Scenario(**kw).check()


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario YAML file."""
    p = Path(path)
    try:
        data = read_yaml_file(p)
    except OSError as e:
        raise ScenarioError(f"{p}: {e.strerror or e}") from None
    except YamlFileError as e:
        raise ScenarioError(str(e)) from None
    try:
        return replace(parse_scenario(data), source=str(p))
    except ScenarioError as e:  # FILE:LINE:COL: traffic.pattern: ... (it named "scenario.traffic.pattern")
        raise ScenarioError(place_error(p, str(e), "scenario")) from None
