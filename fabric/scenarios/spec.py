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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PATTERNS = ("permutation", "all-to-all", "incast")
MODES = ("mrc", "rc")
FAULT_KINDS = ("link_down", "link_up", "flap", "spine_loss", "spine_restore", "nic_down", "nic_up", "port_admin")
SPINE_METHODS = ("stop", "links")
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


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
    cc: str = ""  # congestion control: nscc | dcqcn | none; "": NSCC for MRC, DCQCN for RC (mrc.core.cc)


@dataclass(frozen=True)
class FaultSpec:
    """One fault at ``at`` seconds after traffic starts; ``duration`` > 0 undoes it after that long."""

    at: float
    kind: str
    a: str = ""
    b: str = ""
    spine: str = ""
    method: str = "stop"
    host: str = ""
    plane: int = 0
    switch: str = ""
    port: int = 0
    up: bool = False
    duration: float = 0.0

    def label(self) -> str:
        """Short text for timelines and plots."""
        if self.kind in ("link_down", "link_up", "flap"):
            return f"{self.kind} {self.a}-{self.b}"
        if self.kind in ("spine_loss", "spine_restore"):
            return f"{self.kind} {self.spine}"
        if self.kind in ("nic_down", "nic_up"):
            return f"{self.kind} {self.host} plane {self.plane}"
        return f"port_admin {self.switch}:{self.port} {'up' if self.up else 'down'}"


@dataclass(frozen=True)
class MeasureSpec:
    """Sampling of the time series and switch counter reads."""

    sample_ms: float = 20.0
    bin_ms: float = 100.0
    switch_counters: bool = True
    congestion_ms: float = 500.0  # period of the switches' trim/ECN counter samples (timeline)


@dataclass(frozen=True)
class Scenario:
    """A complete scenario; run it with :func:`fabric.scenarios.run_scenario`."""

    name: str = "scenario"
    fabric: FabricSpec = field(default_factory=FabricSpec)
    traffic: TrafficSpec = field(default_factory=TrafficSpec)
    faults: tuple[FaultSpec, ...] = ()
    modes: tuple[str, ...] = ("mrc",)
    deadline_s: float = 60.0  # a run that has not completed by then is stopped and reported as such
    seed: int = 1
    measure: MeasureSpec = field(default_factory=MeasureSpec)

    def check(self) -> Scenario:
        """Raise ScenarioError on values no run can use."""
        t = self.traffic
        if t.pattern not in PATTERNS:
            raise ScenarioError(f"scenario.traffic.pattern: {t.pattern!r} is not one of {', '.join(PATTERNS)}")
        if t.count < 1 or t.qps < 1 or t.tx_depth < 1:
            raise ScenarioError("scenario.traffic: count, qps and tx_depth must be >= 1")
        if t.rate_gbps < 0:
            raise ScenarioError("scenario.traffic.rate_gbps: must be >= 0 (0: the fabric's link rate)")
        if t.cc not in ("", "nscc", "dcqcn", "none"):
            raise ScenarioError(f"scenario.traffic.cc: {t.cc!r} is not nscc, dcqcn or none")
        if t.encap not in ("srv6", "stev", "udp"):
            raise ScenarioError(f"scenario.traffic.encap: {t.encap!r} is not srv6, stev or udp")
        for m in self.modes:
            if m not in MODES:
                raise ScenarioError(f"scenario.modes: {m!r} is not mrc or rc")
        if self.deadline_s <= 0:
            raise ScenarioError("scenario.deadline_s: must be positive")
        m = self.measure
        if min(m.sample_ms, m.bin_ms, m.congestion_ms) <= 0:
            raise ScenarioError("scenario.measure: sample_ms, bin_ms and congestion_ms must be positive")
        if self.fabric.topology is None and not self.fabric.generate:
            raise ScenarioError("scenario.fabric: give a topology file or generate arguments")
        for i, f in enumerate(self.faults):
            w = f"scenario.faults[{i}]"
            if f.kind not in FAULT_KINDS:
                raise ScenarioError(f"{w}.kind: {f.kind!r} is not one of {', '.join(FAULT_KINDS)}")
            if f.at < 0 or f.duration < 0:
                raise ScenarioError(f"{w}: at and duration must be >= 0")
            if f.kind in ("link_down", "link_up", "flap") and not (f.a and f.b):
                raise ScenarioError(f"{w}: {f.kind} needs a and b (node or node:port)")
            if f.kind in ("spine_loss", "spine_restore") and not f.spine:
                raise ScenarioError(f"{w}: {f.kind} needs spine")
            if f.kind in ("spine_loss", "spine_restore") and f.method not in SPINE_METHODS:
                raise ScenarioError(f"{w}.method: {f.method!r} is not stop or links")
            if f.kind in ("nic_down", "nic_up") and not (f.host and f.plane >= 1):
                raise ScenarioError(f"{w}: {f.kind} needs host and plane")
            if f.kind == "port_admin" and not (f.switch and f.port):
                raise ScenarioError(f"{w}: port_admin needs switch and port")
        return self


def _build(cls: type, raw: Any, where: str, conv: dict[str, Any] | None = None) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected a mapping")
    names = set(cls.__dataclass_fields__)
    unknown = sorted(set(raw) - names)
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


def _num(t: type):
    def f(v: Any, where: str) -> Any:
        if isinstance(v, bool):
            raise ScenarioError(f"{where}: expected a number, got {v!r}")
        try:
            return t(v)
        except (TypeError, ValueError):
            raise ScenarioError(f"{where}: expected a number, got {v!r}") from None
    return f


def parse_scenario(data: Any, where: str = "scenario") -> Scenario:
    """Build and check a Scenario from loaded YAML/JSON."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a mapping at the top level")
    sizes = {"size": parse_size, "count": _num(int), "qps": _num(int), "tx_depth": _num(int),
             "rate_gbps": _num(float), "senders": _num(int), "shift": _num(int), "mtu": _num(int),
             "ack_timeout": _num(int), "probe_interval_ms": _num(float), "reorder_ms": _num(float),
             "hosts": lambda v, w: tuple(str(x) for x in v), "cc": lambda v, w: str(v)}
    faults_raw = data.get("faults") or []
    if not isinstance(faults_raw, list):
        raise ScenarioError(f"{where}.faults: expected a list")
    fconv = {"at": _num(float), "duration": _num(float), "plane": _num(int), "port": _num(int)}
    modes = data.get("modes", ["mrc"])
    kw: dict[str, Any] = {
        "fabric": _build(FabricSpec, data.get("fabric"), f"{where}.fabric"),
        "traffic": _build(TrafficSpec, data.get("traffic"), f"{where}.traffic", sizes),
        "faults": tuple(_build(FaultSpec, f, f"{where}.faults[{i}]", fconv) for i, f in enumerate(faults_raw)),
        "modes": tuple([modes] if isinstance(modes, str) else modes),
        "measure": _build(MeasureSpec, data.get("measure"), f"{where}.measure",
                          {"sample_ms": _num(float), "bin_ms": _num(float), "congestion_ms": _num(float)}),
    }
    unknown = sorted(set(data) - {"name", "fabric", "traffic", "faults", "modes", "deadline_s", "seed", "measure"})
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if "name" in data:
        kw["name"] = str(data["name"])
    if "deadline_s" in data:
        kw["deadline_s"] = _num(float)(data["deadline_s"], f"{where}.deadline_s")
    if "seed" in data:
        kw["seed"] = _num(int)(data["seed"], f"{where}.seed")
    return Scenario(**kw).check()


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario YAML file."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as e:
        raise ScenarioError(f"{p}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{p}: not valid YAML: {e}") from None
    return parse_scenario(data, str(p))
