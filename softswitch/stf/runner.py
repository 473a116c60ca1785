"""Run an STF script on softswitch's compiled pipeline, in process, and judge it as p4c does.

Table commands become P4Runtime writes into the program's ``SwitchState`` (names resolved
against the P4Info the way p4c's runner resolves them against bmv2's JSON: the full name, else a
unique suffix).  Each ``packet`` runs through parser, ingress, the traffic manager and egress
(resubmits, recirculations, clones and multicast copies included) before the next command.

Judging follows p4c's ``bmv2stf.py``: only ports named in a ``packet`` or ``expect`` line are
observed (bmv2 gets an interface for exactly those); on each observed port the frames must
equal the ``expect`` lines for that port, in order and in number; a port with a data-less
``expect`` accepts anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from softswitch.contract import TmItem
from softswitch.engine.tm import TrafficManager
from softswitch.frontend import ir
from softswitch.runtime import bytestrings
from softswitch.stf.script import Command, StfError, parse_number, parse_wildcard, pattern_matches

MAX_STEPS = 100_000  # traffic-manager rounds per input packet (a loop guard)
MAX_RECIRCULATIONS = 16  # per input packet


class InternalError(RuntimeError):
    """softswitch raised while running a packet (a bug: the runner reports a crash)."""


@dataclass
class PortCheck:
    """The verdict on one expected frame (or one unexpected frame, ``pattern`` None)."""

    port: int
    index: int
    pattern: str | None
    got: bytes | None
    ok: bool
    line: int = 0

    def describe(self) -> str:
        """One line, ``PASS``/``FAIL`` first."""
        got = self.got.hex().upper() if self.got is not None else "nothing"
        head = "PASS" if self.ok else "FAIL"
        where = f"port {self.port} frame {self.index + 1}"
        if self.line:
            where += f" (expect at line {self.line})"
        if self.pattern is None:
            return f"{head} {where}: unexpected frame {got}"
        if self.ok:
            return f"{head} {where}"
        return f"{head} {where}: expected {self.pattern} got {got}"


@dataclass
class StfResult:
    """Outcome of one STF run: per-frame checks and the frames every port produced."""

    checks: list[PortCheck] = field(default_factory=list)
    outputs: dict[int, list[bytes]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    unsent: int = 0  # packets the switch could not be given (a veth takes no frame under 14 bytes)
    packets_in: int = 0

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)


def _suffix_lookup(names: list[str], want: str, what: str) -> str:
    """p4c's rule: the exact name, else the only name ending in it (``.``-bounded first)."""
    if want in names:
        return want
    for cands in ([n for n in names if n.endswith("." + want)], [n for n in names if n.endswith(want)]):
        if len(cands) == 1:
            return cands[0]
        if len(cands) > 1:
            raise StfError(f"{what} '{want}' is ambiguous: {', '.join(sorted(cands))}")
    raise StfError(f"no {what} '{want}'" + (f" (have: {', '.join(sorted(names))})" if len(names) < 30 else ""))


def _key_name(fields: list[str], want: str) -> str:
    """Resolve a key field as p4c's runner does (``$valid$`` spellings, ``h$0`` for ``h[0]``)."""
    import re

    m = re.match(r"(.*)\$([0-9]+)(.*)", want)
    if m:
        want = f"{m.group(1)}[{m.group(2)}]{m.group(3)}"
    alts = [want, want + "$", want + ".$valid$", want + ".isValid()"]
    if want.endswith(".valid"):
        alts += [want[:-5] + "$valid$", want[:-6] + ".isValid()"]
    if want.endswith(".$valid$"):
        alts.append(want[:-8] + ".isValid()")
    for a in alts:
        if a in fields:
            return a
    for a in alts:
        cands = [f for f in fields if f.endswith("." + a)]
        if len(cands) == 1:
            return cands[0]
    if want in ("valid", "$valid$"):
        cands = [f for f in fields if f.endswith((".isValid()", ".$valid$"))]
        if len(cands) == 1:
            return cands[0]
    raise StfError(f"no key field '{want}' (have: {', '.join(fields)})")


class StfSwitch:
    """One program loaded into a ``SwitchState`` and a compiled pipeline, driven by STF commands."""

    def __init__(self, program: ir.Program, cpu_port: int | None = None, loop_path: bool = False) -> None:
        """``loop_path``: run packets as the switch's packet loop does (``ingress_item`` /
        ``egress_frame``: plain unicast without result objects, header objects recycled from one
        packet to the next), so a corpus run also checks that reuse changes nothing."""
        from softswitch.exec import build_pipeline
        from softswitch.p4info import build_p4info
        from softswitch.runtime import SwitchState

        self._control(build_p4info(program))
        self.state = SwitchState(self.p4info)
        self.pipeline = build_pipeline(program, self.state, cpu_port)
        self.tm = TrafficManager()
        self.now = 0
        self.loop_path = loop_path

    def _control(self, p4info: p4info_pb2.P4Info) -> None:
        """The control plane's view: names to resolve STF commands against, multicast so far."""
        self.p4info = p4info
        self._tables = {t.preamble.name: t for t in p4info.tables}
        self._actions = {a.preamble.id: a for a in p4info.actions}
        self._mc_nodes: list[tuple[int, list[int]]] = []
        self._mc_groups: dict[int, list[int]] = {}
        self._session_groups: dict[int, int] = {}  # clone session -> the group mirroring_add_mc named

    # ---- control plane -------------------------------------------------------------------
    def _table(self, name: str) -> p4info_pb2.Table:
        return self._tables[_suffix_lookup(list(self._tables), name, "table")]

    def _action(self, table: p4info_pb2.Table, name: str, params: list[tuple[str, str]],
                out: p4runtime_pb2.Action) -> None:
        acts = {self._actions[r.id].preamble.name: self._actions[r.id] for r in table.action_refs}
        act = acts[_suffix_lookup(list(acts), name, f"action of table '{table.preamble.name}'")]
        out.action_id = act.preamble.id
        given = dict(params)
        for p in act.params:
            if p.name not in given:
                raise StfError(f"action '{act.preamble.name}': parameter '{p.name}' not given")
            v = parse_number(given.pop(p.name))
            if v < 0 or v >> p.bitwidth:
                raise StfError(f"action '{act.preamble.name}': {p.name}={v} does not fit {p.bitwidth} bits")
            out.params.add(param_id=p.id, value=bytestrings.encode(v))
        if given:
            raise StfError(f"action '{act.preamble.name}' has no parameter '{next(iter(given))}'")

    def _write(self, utype: int, **entity) -> None:
        from softswitch.runtime.errors import P4RuntimeError

        try:
            self.state.write(p4runtime_pb2.Update(type=utype, entity=p4runtime_pb2.Entity(**entity)))
        except P4RuntimeError as e:
            raise StfError(f"the switch refused the write: {e}") from None

    def add(self, args: dict) -> None:
        """``add``: one table entry."""
        t = self._table(args["table"])
        te = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
        fields = {mf.name: mf for mf in t.match_fields}
        given = {}
        for k, v in args["keys"]:
            given[_key_name(list(fields), k)] = v
        M = p4info_pb2.MatchField
        needs_prio = False
        for mf in t.match_fields:
            w = mf.bitwidth
            full = (1 << w) - 1
            needs_prio |= mf.match_type in (M.TERNARY, M.RANGE, M.OPTIONAL)
            text = given.get(mf.name)
            if mf.match_type == M.EXACT:
                v = parse_number(text) if text is not None else 0
                if v >> w:
                    raise StfError(f"key '{mf.name}': {text} does not fit {w} bits")
                te.match.add(field_id=mf.id).exact.value = bytestrings.encode(v)
            elif text is None or text.strip() == "*":
                continue
            elif mf.match_type == M.TERNARY:
                if "&&&" in text:
                    a, b = text.split("&&&", 1)
                    v, m = parse_number(a), parse_number(b)
                else:
                    v, m, _bits = parse_wildcard(text)
                m &= full
                v &= m
                if m:
                    fm = te.match.add(field_id=mf.id)
                    fm.ternary.value, fm.ternary.mask = bytestrings.encode(v), bytestrings.encode(m)
            elif mf.match_type == M.LPM:
                if "/" in text:
                    a, b = text.split("/", 1)
                    v, plen = parse_number(a), parse_number(b)
                else:
                    v, m, _bits = parse_wildcard(text)
                    # p4c's runner: the prefix is the written non-'*' digits, counted from
                    # the top of the field whatever the value's length; decimal: the whole field
                    plen = w if m == -1 else m.bit_count()
                plen = min(plen, w)
                if plen:
                    v &= full ^ ((1 << (w - plen)) - 1)
                    fm = te.match.add(field_id=mf.id)
                    fm.lpm.value, fm.lpm.prefix_len = bytestrings.encode(v), plen
            elif mf.match_type == M.RANGE:
                if "->" in text:
                    a, b = text.split("->", 1)
                    lo, hi = parse_number(a), parse_number(b)
                else:
                    lo = hi = parse_number(text)
                if not (lo == 0 and hi == full):
                    fm = te.match.add(field_id=mf.id)
                    fm.range.low, fm.range.high = bytestrings.encode(lo), bytestrings.encode(hi)
            elif mf.match_type == M.OPTIONAL:
                te.match.add(field_id=mf.id).optional.value = bytestrings.encode(parse_number(text))
            else:
                raise StfError(f"key '{mf.name}': match kind {mf.match_type} not supported by the STF runner")
        if needs_prio:
            te.priority = args["priority"] if args["priority"] else 1
        self._action(t, args["action"], args["params"], te.action.action)
        self._write(p4runtime_pb2.Update.INSERT, table_entry=te)

    def setdefault(self, args: dict) -> None:
        """``setdefault``: the table's default action."""
        t = self._table(args["table"])
        te = p4runtime_pb2.TableEntry(table_id=t.preamble.id, is_default_action=True)
        self._action(t, args["action"], args["params"], te.action.action)
        self._write(p4runtime_pb2.Update.MODIFY, table_entry=te)

    def mirroring_add(self, session: int, port: int) -> None:
        """A clone session sending to one port (bmv2 CLI ``mirroring_add``)."""
        self._session_groups.pop(session, None)
        self._write_session(session, [(port, 0)])

    def mirroring_add_mc(self, session: int, group: int) -> None:
        """A clone session sending to a multicast group (bmv2 CLI ``mirroring_add_mc``): bmv2 keeps
        the group's id and replicates a clone to the group as it is then, so the session is
        written with the group's replicas again whenever the group changes."""
        self._session_groups[session] = group
        self._write_session(session, self._group_replicas(group))

    def mirroring_delete(self, session: int) -> None:
        """bmv2 CLI ``mirroring_delete``: no more clones through the session."""
        self._session_groups.pop(session, None)
        if self._has_session(session):
            cs = p4runtime_pb2.CloneSessionEntry(session_id=session)
            self._write(p4runtime_pb2.Update.DELETE, packet_replication_engine_entry=p4runtime_pb2.
                        PacketReplicationEngineEntry(clone_session_entry=cs))
            self._session_deleted(session)

    def _write_session(self, session: int, replicas: list[tuple[int, int]]) -> None:
        cs = p4runtime_pb2.CloneSessionEntry(session_id=session)
        for port, rid in replicas:
            cs.replicas.add(egress_port=port, instance=rid)
        kind = p4runtime_pb2.Update.MODIFY if self._has_session(session) else p4runtime_pb2.Update.INSERT
        self._write(kind, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            clone_session_entry=cs))
        self._session_written(session)

    def _session_written(self, session: int) -> None:
        """A hook: the session exists now (a switch in another process keeps its own list)."""

    def _session_deleted(self, session: int) -> None:
        """A hook: the session is gone."""

    def _group_replicas(self, group: int) -> list[tuple[int, int]]:
        """The group's (port, rid) replicas, each once, in node order (as bmv2 replicates)."""
        out: list[tuple[int, int]] = []
        for node in self._mc_groups.get(group, []):
            rid, ports = self._mc_nodes[node]
            out += [(p, rid) for p in ports if (p, rid) not in out]
        return out

    def _has_session(self, session: int) -> bool:
        return self.state.pre.clone_session(session) is not None

    def _push_group(self, group: int, created: bool) -> None:
        mg = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=group)
        for port, rid in self._group_replicas(group):
            mg.replicas.add(egress_port=port, instance=rid)
        kind = p4runtime_pb2.Update.INSERT if created else p4runtime_pb2.Update.MODIFY
        self._write(kind, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            multicast_group_entry=mg))
        for session, g in self._session_groups.items():
            if g == group:
                self._write_session(session, self._group_replicas(group))

    def command(self, cmd: Command) -> None:
        """Apply one control-plane command (``packet``/``expect`` are handled by ``run_stf``)."""
        a = cmd.args
        if cmd.kind == "add":
            self.add(a)
        elif cmd.kind == "setdefault":
            self.setdefault(a)
        elif cmd.kind == "mirroring_add":
            self.mirroring_add(a["session"], a["port"])
        elif cmd.kind == "mirroring_add_mc":
            self.mirroring_add_mc(a["session"], a["group"])
        elif cmd.kind == "mirroring_delete":
            self.mirroring_delete(a["session"])
        elif cmd.kind == "mc_node_update":
            if not 0 <= a["node"] < len(self._mc_nodes):
                raise StfError(f"mc_node_update: no node {a['node']}")
            self._mc_nodes[a["node"]] = (self._mc_nodes[a["node"]][0], a["ports"])
            for g, nodes in self._mc_groups.items():
                if a["node"] in nodes:
                    self._push_group(g, False)
        elif cmd.kind == "mc_mgrp_create":
            if a["group"] in self._mc_groups:
                raise StfError(f"multicast group {a['group']} exists")
            self._mc_groups[a["group"]] = []
            self._push_group(a["group"], True)
        elif cmd.kind == "mc_node_create":
            self._mc_nodes.append((a["rid"], a["ports"]))
        elif cmd.kind == "mc_node_associate":
            if a["group"] not in self._mc_groups or not 0 <= a["node"] < len(self._mc_nodes):
                raise StfError(f"mc_node_associate: no group {a['group']} or node {a['node']}")
            self._mc_groups[a["group"]].append(a["node"])
            self._push_group(a["group"], False)
        elif cmd.kind in ("register_write", "register_reset"):
            names = [r.preamble.name for r in self.p4info.registers]
            reg = self.state.register(_suffix_lookup(names, a["register"], "register"))
            if cmd.kind == "register_reset":
                reg.control_write(None, 0)
            else:
                if not 0 <= a["index"] < reg.size:
                    raise StfError(f"register '{reg.name}': index {a['index']} out of range")
                reg.control_write(a["index"], a["value"] & reg.mask)
        elif cmd.kind in ("meter_set_rates", "meter_array_set_rates"):
            for up in meter_updates(self.p4info, a):
                self._write(up.type, meter_entry=up.entity.meter_entry)
        else:
            raise StfError(f"command '{cmd.kind}' is not a control-plane command")

    # ---- data plane ----------------------------------------------------------------------
    def settle(self, owed: dict[int, int]) -> list[tuple[int, bytes]]:
        """Frames that came out after the last ``send`` returned, once the script has run: ``owed``
        is how many more frames each port's expects still name.  In process every frame is out when
        ``send`` returns, so none."""
        return []

    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one frame to completion; the frames it produced, in departure order."""
        out: list[tuple[int, bytes]] = []
        recirc = [0]

        def enqueue(items: list[TmItem]) -> None:
            for it in items:
                self.tm.enqueue(it, self.now)

        def check(res):  # a softswitch exception must not pass for a drop the program chose
            why = getattr(res, "drop_reason", "") or ""
            if why.startswith("internal error"):
                raise InternalError(why)
            return res

        self.now += 1
        pl = self.pipeline
        if self.loop_path:
            first = pl.ingress_item(data, port, self.now)
            enqueue([first] if isinstance(first, TmItem) else check(first).to_tm)
        else:
            enqueue(check(pl.ingress(data, port, self.now)).to_tm)
        for _ in range(MAX_STEPS):
            got: list = []
            due = self.tm.dequeue(self.now, 1 << 30, got)
            for _pq, item in got:
                if self.loop_path:
                    eport = item.egress_port
                    frame = pl.egress_frame(item, self.now)
                    if frame.__class__ is bytes:
                        out.append((eport, frame))
                        continue
                    res = check(frame)
                else:
                    res = check(pl.egress(item, self.now))
                out.extend((f.port, f.data) for f in res.frames)
                enqueue(res.to_tm)
                for d, preserved in res.recirculate:
                    recirc[0] += 1
                    if recirc[0] <= MAX_RECIRCULATIONS:
                        enqueue(check(self.pipeline.ingress_recirculated(d, preserved, self.now)).to_tm)
            if got:
                continue
            if due is None:
                break
            self.now = max(self.now + 1, int(due))
        return out


def meter_updates(p4info, args: dict) -> list[p4runtime_pb2.Update]:
    """P4Runtime MeterEntry writes for an STF ``meter_set_rates`` / ``meter_array_set_rates``: bmv2's
    CLI rates are units per microsecond, P4Runtime's units per second (PI multiplies back by 10^6);
    the whole array is one write per cell."""
    meters = {m.preamble.name: m for m in p4info.meters}
    m = meters[_suffix_lookup(list(meters), args["meter"], "meter")]
    (crate, cburst), (prate, pburst) = args["rates"]
    cfg = p4runtime_pb2.MeterConfig(cir=round(crate * 1e6), cburst=cburst, pir=round(prate * 1e6), pburst=pburst)
    index = args["index"]
    if index is not None and not 0 <= index < m.size:
        raise StfError(f"meter '{m.preamble.name}': index {index} out of range")
    ups = []
    for i in range(m.size) if index is None else [index]:
        e = p4runtime_pb2.Entity()
        e.meter_entry.meter_id = m.preamble.id
        e.meter_entry.index.index = i
        e.meter_entry.config.CopyFrom(cfg)
        ups.append(p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY, entity=e))
    return ups


def run_stf(program: ir.Program, commands: list[Command], cpu_port: int | None = None,
            loop_path: bool = False) -> StfResult:
    """Apply ``commands`` in order and judge the outputs as p4c's bmv2 STF runner does
    (``loop_path``: see :class:`StfSwitch`)."""
    return judge(StfSwitch(program, cpu_port, loop_path), commands)


def judge(sw: StfSwitch, commands: list[Command]) -> StfResult:
    """Run ``commands`` on ``sw`` (in process, or a switch process: ``softswitch.stf.process``) and
    judge the frames by p4c's rules (see the module doc)."""
    res = StfResult()
    expected: dict[int, list[tuple[str, int]]] = {}
    any_ok: set[int] = set()
    observed: set[int] = set()
    for cmd in commands:
        where = f"line {cmd.line}"
        if cmd.kind == "packet":
            observed.add(cmd.args["port"])
            res.packets_in += 1
            for port, data in sw.send(cmd.args["port"], cmd.args["data"]):
                res.outputs.setdefault(port, []).append(data)
        elif cmd.kind == "expect":
            port = cmd.args["port"]
            observed.add(port)
            if cmd.args["pattern"] is None:
                any_ok.add(port)
            else:
                expected.setdefault(port, []).append((cmd.args["pattern"], cmd.line))
        elif cmd.kind == "ignored":
            res.ignored.append(f"{where}: {cmd.args['text']}")
        else:
            try:
                sw.command(cmd)
            except StfError as e:
                raise StfError(f"{where}: {e}") from None
    owed = {p: len(w) - len(res.outputs.get(p, [])) for p, w in expected.items()}
    for port, data in sw.settle({p: n for p, n in owed.items() if n > 0}):
        res.outputs.setdefault(port, []).append(data)
    for port in sorted(observed):
        got = res.outputs.get(port, [])
        if port in any_ok:
            continue
        want = expected.get(port, [])
        for i in range(max(len(want), len(got))):
            frame = got[i] if i < len(got) else None
            if i < len(want):
                pat, line = want[i]
                ok = frame is not None and pattern_matches(pat, frame)
                res.checks.append(PortCheck(port, i, pat, frame, ok, line))
            else:
                res.checks.append(PortCheck(port, i, None, frame, False))
    return res
