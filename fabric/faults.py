"""Fault kinds as plugins: one registry used by scenario files, ``mrc-fabric fault`` and every engine.

A fault kind says which parameters it takes (they become scenario-file keys and CLI arguments), checks
them, labels a fault for timelines, and applies or undoes it through a small set of *primitives* that
each engine implements its own way (``FaultTarget``): the emulated fabric turns ``set_link`` into veth
carrier changes, the simulator into a link state flag.  An engine that lacks a primitive a kind needs
rejects the fault before the run starts, naming the engine.

Adding a fault kind: one ``FaultKind`` below (name, params, ``needs``, ``apply``) plus its test; the
scenario parser, the CLI (``mrc-fabric fault <kind-with-dashes> ...``) and every engine pick it up.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class FaultError(ValueError):
    """A fault that cannot be carried out as written (bad parameters, or unsupported by an engine)."""


def topo_host_link(topo: Any, host: str, plane: int) -> tuple[str, str]:
    """``("host:plane", "switch:port")``, the two ends of ``host``'s NIC link on ``plane`` in ``topo``."""
    lk = topo.link_at(host, plane) if host in topo.hosts else None
    if lk is None:
        raise FaultError(f"no host {host!r} with a NIC port {plane} in the topology")
    return f"{host}:{plane}", str(lk.other(lk.a if lk.a.node == host else lk.b))


def topo_spine_links(topo: Any, spine: str) -> list[tuple[str, str]]:
    """Every link of spine ``spine`` in ``topo``, as ``(end, end)`` names."""
    if spine not in topo.switches or topo.switches[spine].role != "spine":
        raise FaultError(f"{spine!r} is not a spine of this fabric")
    return [(str(lk.a), str(lk.b)) for lk in topo.links if spine in (lk.a.node, lk.b.node)]


class FaultTarget(Protocol):
    """What an engine offers faults.  Engines implement the primitives they can and list them in
    ``fault_primitives``; kinds needing others are refused by that engine."""

    fault_primitives: frozenset[str]

    def set_link(self, a: str, b: str, up: bool) -> None: ...
    def host_link(self, host: str, plane: int) -> tuple[str, str]: ...
    def spine_links(self, spine: str) -> list[tuple[str, str]]: ...
    def switch_stop(self, switch: str) -> None: ...
    def switch_start(self, switch: str) -> None: ...
    def port_admin(self, switch: str, port: int, up: bool) -> None: ...
    def shape(self, switch: str, port: int, delay_us: int | None, rate_pps: int | None,
              queue_depth: int | None) -> None: ...
    def unshape(self, switch: str, port: int) -> None: ...
    def link_loss(self, a: str, b: str, loss: float) -> None: ...
    def link_rate(self, a: str, b: str, fraction: float) -> None: ...


@dataclass(frozen=True)
class Param:
    """One parameter of a fault kind: a field of ``FaultSpec`` and a CLI argument."""

    name: str
    type: type = str
    help: str = ""
    positional: bool = True  # on the command line (options otherwise, with --name)
    default: Any = None


A = Param("a", help="one end: node or node:port")
B = Param("b", help="other end: node or node:port")
SWITCH = Param("switch", help="switch name")
PORT = Param("port", int, help="switch port number")
SPINE = Param("spine", help="spine switch name")
HOST = Param("host", help="host name")
PLANE = Param("plane", int, help="NIC port (= plane), 1-based")
METHOD = Param("method", help="stop: kill the switch process; links: take every link of the spine down",
               positional=False, default="stop")
UP = Param("up", bool, help="admin state to set (true = up)", positional=False, default=False)
LOSS = Param("loss", float, help="fraction of packets the link drops silently, in (0, 1]")
RATE = Param("rate", float, help="fraction of its line rate the link keeps (0..1]")


@dataclass(frozen=True)
class FaultKind:
    """One kind of fault.  ``apply(target, f, undo)`` returns what it did, as text for the timeline."""

    name: str
    help: str
    params: tuple[Param, ...]
    needs: frozenset[str]  # primitives of FaultTarget it uses
    apply: Callable[[Any, Any, bool], str]
    # applying it brings something back (not a failure for the report); a function of the fault when its
    # parameters decide (port_admin: up or down)
    restores: bool | Callable[[Any], bool] = False
    check: Callable[[Any], str | None] | None = None  # extra validation: an error text or None
    label_fn: Callable[[Any], str] | None = None

    @property
    def cli_name(self) -> str:
        return self.name.replace("_", "-")

    def label(self, f: Any) -> str:
        """Short text naming the fault (timelines, plots)."""
        if self.label_fn is not None:
            return self.label_fn(f)
        names = [p.name for p in self.params if p.positional]
        if names[:2] == ["a", "b"]:  # a link: "a-b"
            names = ["a-b", *names[2:]]
        args = " ".join(f"{f.a}-{f.b}" if n == "a-b" else str(getattr(f, n)) for n in names)
        return f"{self.name} {args}".strip()

    def validate(self, f: Any, where: str) -> None:
        """Raise FaultError naming ``where`` when ``f`` lacks a parameter or has a bad one."""
        # the kind once: "fault shape: ..." on the command line (where names it), "scenario.faults[0]:
        # shape: ..." in a file; the CLI said "fault shape: shape: ..." until 2026-12-07
        head = where if where.endswith((f" {self.name}", f" {self.cli_name}")) else f"{where}: {self.name}"
        for p in self.params:
            v = getattr(f, p.name, None)
            if p.positional and (v is None or v == ""):
                raise FaultError(f"{head} needs {', '.join(q.name for q in self.params if q.positional)}"
                                 f" ({p.name} is missing)")
            if p.positional and p.type is int and v < 1:
                raise FaultError(f"{head}: {p.name} must be 1 or more, got {v}")
        if self.check is not None:
            err = self.check(f)
            if err:
                raise FaultError(f"{head}: {err}")

    def is_failure(self, f: Any, undo: bool) -> bool:
        """True when this application takes something away (the report looks for recovery after it)."""
        if undo:
            return False
        return not (self.restores(f) if callable(self.restores) else self.restores)


REGISTRY: dict[str, FaultKind] = {}


def register(kind: FaultKind) -> FaultKind:
    """Add a kind to the registry (names are unique)."""
    if kind.name in REGISTRY:
        raise ValueError(f"fault kind {kind.name!r} registered twice")
    REGISTRY[kind.name] = kind
    return kind


def get(name: str, where: str = "fault") -> FaultKind:
    """The kind called ``name`` (snake_case; the CLI's kebab-case is accepted too)."""
    k = REGISTRY.get(name.replace("-", "_"))
    if k is None:
        raise FaultError(f"{where}.kind: {name!r} is not one of {', '.join(REGISTRY)}")
    return k


def check_engine(kind: FaultKind, target_primitives: frozenset[str], engine: str, where: str) -> None:
    """Refuse a kind an engine cannot carry out (before the run starts)."""
    missing = sorted(kind.needs - target_primitives)
    if missing:
        raise FaultError(f"{where}: fault kind {kind.name} is not supported by the {engine} engine "
                         f"(it has no {', '.join(missing)})")


class TopologyCheck:
    """A ``FaultTarget`` that carries nothing out: each primitive only checks that the nodes, ports and
    links it is given exist in the topology.  The scenario runner applies every fault (and its undo)
    to it before a run, so a misspelt node fails there, naming the fault, for every kind through the
    primitives it uses, instead of being logged mid-run as a fault that did nothing."""

    fault_primitives = frozenset({"set_link", "host_link", "spine_links", "switch_stop", "switch_start",
                                  "port_admin", "shape", "unshape", "link_loss", "link_rate"})

    def __init__(self, topo: Any) -> None:
        self.topo = topo

    def _link(self, a: str, b: str) -> None:
        for lk in self.topo.links_between(a.partition(":")[0], b.partition(":")[0]):
            ends = {str(lk.a), str(lk.b)}
            if all(":" not in x or x in ends for x in (a, b)):
                return
        raise FaultError(f"no link between {a} and {b} in the topology")

    def _switch(self, switch: str, port: int | None = None) -> None:
        if switch not in self.topo.switches:
            raise FaultError(f"no switch {switch!r} in the topology")
        if port is not None and self.topo.link_at(switch, port) is None:
            raise FaultError(f"switch {switch} has no connected port {port}")

    def set_link(self, a: str, b: str, up: bool) -> None:
        self._link(a, b)

    def host_link(self, host: str, plane: int) -> tuple[str, str]:
        return topo_host_link(self.topo, host, plane)

    def spine_links(self, spine: str) -> list[tuple[str, str]]:
        return topo_spine_links(self.topo, spine)

    def switch_stop(self, switch: str) -> None:
        self._switch(switch)

    def switch_start(self, switch: str) -> None:
        self._switch(switch)

    def port_admin(self, switch: str, port: int, up: bool) -> None:
        self._switch(switch, port)

    def shape(self, switch: str, port: int, delay_us: int | None, rate_pps: int | None,
              queue_depth: int | None) -> None:
        self._switch(switch, port)

    def unshape(self, switch: str, port: int) -> None:
        self._switch(switch, port)

    def link_loss(self, a: str, b: str, loss: float) -> None:
        self._link(a, b)

    def link_rate(self, a: str, b: str, fraction: float) -> None:
        self._link(a, b)


def check_names(kind: FaultKind, f: Any, topo: Any, where: str) -> None:
    """Refuse, before a run, a fault whose parameters name what ``topo`` does not have (its apply and
    undo, dry-run through ``TopologyCheck``)."""
    t = TopologyCheck(topo)
    try:
        kind.apply(t, f, False)
        kind.apply(t, f, True)
    except ValueError as e:  # FaultError, or an engine-style error a kind raises itself
        raise FaultError(f"{where}: {kind.name}: {e}") from None


# ---- the kinds ----------------------------------------------------------------------------------
def _link(up: bool | None) -> Callable[[Any, Any, bool], str]:
    def apply(t: Any, f: Any, undo: bool) -> str:
        state = undo if up is None else (up or undo)  # flap (None): down, and up again on undo
        t.set_link(f.a, f.b, state)
        return f"link {f.a}-{f.b} {'up' if state else 'down'}"
    return apply


def _nic(up: bool) -> Callable[[Any, Any, bool], str]:
    def apply(t: Any, f: Any, undo: bool) -> str:
        a, b = t.host_link(f.host, f.plane)
        state = up or undo
        t.set_link(a, b, state)
        return f"NIC {f.host} plane {f.plane} {'up' if state else 'down'}"
    return apply


def _spine(restore: bool) -> Callable[[Any, Any, bool], str]:
    def apply(t: Any, f: Any, undo: bool) -> str:
        up = restore or undo
        links = t.spine_links(f.spine)  # refuses a name that is not a spine, whatever the method
        if f.method == "links":
            for a, b in links:
                t.set_link(a, b, up)
        elif up:
            t.switch_start(f.spine)
        else:
            t.switch_stop(f.spine)
        return f"spine {f.spine} {'restored' if up else 'lost'} ({f.method})"
    return apply


def _switch(start: bool) -> Callable[[Any, Any, bool], str]:
    def apply(t: Any, f: Any, undo: bool) -> str:
        if start or undo:
            t.switch_start(f.switch)
            return f"switch {f.switch} started"
        t.switch_stop(f.switch)
        return f"switch {f.switch} stopped"
    return apply


def _port(up: bool | None) -> Callable[[Any, Any, bool], str]:
    def apply(t: Any, f: Any, undo: bool) -> str:
        state = True if undo else (f.up if up is None else up)
        t.port_admin(f.switch, f.port, state)
        return f"port {f.switch}:{f.port} admin {'up' if state else 'down'}"
    return apply


# the topology's bounds on the same link properties (controller.topology._link_props)
SHAPE_LIMITS = {"delay_us": 10_000_000, "rate_pps": 100_000_000, "queue_depth": 1_000_000}


def _shape_check(f: Any) -> str | None:
    """A shape fault's values: each 0 (leave it) or up to the topology's bound, at least one set.  A
    negative one was accepted and failed when the fault came due (mid-run, logged as not applied); all
    three 0 shaped nothing."""
    for k, hi in SHAPE_LIMITS.items():
        v = getattr(f, k)
        if not 0 <= v <= hi:
            return f"{k} must be 0 (leave it) .. {hi}, got {v}"
    if not any(getattr(f, k) for k in SHAPE_LIMITS):
        return "give delay_us, rate_pps or queue_depth (all 0 shapes nothing)"
    return None


def _shape(t: Any, f: Any, undo: bool) -> str:
    if undo:
        t.unshape(f.switch, f.port)
        return f"switch {f.switch} port {f.port} back to its topology link properties"
    t.shape(f.switch, f.port, f.delay_us or None, f.rate_pps or None, f.queue_depth or None)
    return f"switch {f.switch} port {f.port} shaped"


def _loss(t: Any, f: Any, undo: bool) -> str:
    t.link_loss(f.a, f.b, 0.0 if undo else f.loss)
    return f"link {f.a}-{f.b} " + ("loss cleared" if undo else f"drops {f.loss:.0%} silently")


def _slow(t: Any, f: Any, undo: bool) -> str:
    t.link_rate(f.a, f.b, 1.0 if undo else f.rate)
    return f"link {f.a}-{f.b} " + ("back to line rate" if undo else f"at {f.rate:.0%} of its rate")


def _flap_ok(f: Any) -> str | None:
    # without a duration a flap never came up again: a silent link_down under another name
    return None if getattr(f, "duration", 0) > 0 else \
        "a duration > 0 is required (the link comes up again after it); link_down keeps a link down"


def _method_ok(f: Any) -> str | None:
    return None if f.method in ("stop", "links") else f"method: {f.method!r} is not stop or links"


_L = frozenset({"set_link"})
for _name, _help, _params, _needs, _fn, _restores, _check, _label in (
    ("link_down", "both ends of a link down", (A, B), _L, _link(False), False, None, None),
    ("link_up", "both ends of a link up", (A, B), _L, _link(True), True, None, None),
    ("flap", "a link down, up again after `duration` (required)", (A, B), _L, _link(None), False, _flap_ok,
     None),
    ("spine_loss", "a whole spine lost", (SPINE, METHOD), frozenset({"switch_stop", "switch_start", "set_link",
                                                                   "spine_links"}),
     _spine(False), False, _method_ok, lambda f: f"spine_loss {f.spine}"),
    ("spine_restore", "a lost spine back", (SPINE, METHOD), frozenset({"switch_start", "set_link", "spine_links"}),
     _spine(True), True, _method_ok, lambda f: f"spine_restore {f.spine}"),
    ("switch_stop", "kill a switch process (every port goes dark)", (SWITCH,), frozenset({"switch_stop",
                                                                                         "switch_start"}),
     _switch(False), False, None, None),
    ("switch_start", "restart a stopped switch", (SWITCH,), frozenset({"switch_start"}), _switch(True), True, None,
     None),
    ("nic_down", "one NIC port of a host down", (HOST, PLANE), frozenset({"set_link", "host_link"}), _nic(False),
     False, None, lambda f: f"nic_down {f.host} plane {f.plane}"),
    ("nic_up", "one NIC port of a host up", (HOST, PLANE), frozenset({"set_link", "host_link"}), _nic(True), True,
     None, lambda f: f"nic_up {f.host} plane {f.plane}"),
    ("port_admin", "switch port admin state (through the controller)", (SWITCH, PORT, UP),
     frozenset({"port_admin"}), _port(None), lambda f: bool(f.up), None,
     lambda f: f"port_admin {f.switch}:{f.port} {'up' if f.up else 'down'}"),
    ("port_down", "switch port admin down", (SWITCH, PORT), frozenset({"port_admin"}), _port(False), False, None,
     lambda f: f"port_down {f.switch}:{f.port}"),
    ("port_up", "switch port admin up", (SWITCH, PORT), frozenset({"port_admin"}), _port(True), True, None,
     lambda f: f"port_up {f.switch}:{f.port}"),
    ("shape", "port delay / rate / queue depth (the target's link model)",
     (SWITCH, PORT, Param("delay_us", int, "one-way delay (us)", False, 0),
      Param("rate_pps", int, "link rate in full frames per second (0: no limit)", False, 0),
      Param("queue_depth", int, "queue depth in packets (0 on softswitch: the port tail-drops every frame)", False, 0)),
     frozenset({"shape", "unshape"}), _shape, False, lambda f: _shape_check(f), lambda f: f"shape {f.switch}:{f.port}"),
    ("link_loss", "grey failure: a link silently drops a fraction of its packets", (A, B, LOSS),
     frozenset({"link_loss"}), _loss, False, lambda f: None if 0 < f.loss <= 1 else "loss must be in (0, 1]",
     lambda f: f"link_loss {f.a}-{f.b} {f.loss:g}"),
    ("link_slow", "grey failure: a link runs at a fraction of its rate", (A, B, RATE),
     frozenset({"link_rate"}), _slow, False, lambda f: None if 0 < f.rate <= 1 else "rate must be in (0, 1]",
     lambda f: f"link_slow {f.a}-{f.b} {f.rate:g}"),
):
    register(FaultKind(_name, _help, _params, _needs, _fn, _restores, _check, _label))

FAULT_KINDS = tuple(REGISTRY)
