"""Run a script through softswitch's compiled pipeline and traffic manager on a virtual clock."""
from __future__ import annotations

from softswitch.contract import TmItem
from softswitch.diff.script import Script
from softswitch.engine.tm import TrafficManager
from softswitch.exec import build_pipeline
from softswitch.frontend import ir
from softswitch.p4info import build_p4info
from softswitch.runtime import SwitchState

MAX_RECIRCULATIONS = 16  # per input packet, as a loop guard


def run_softswitch(program: ir.Program, script: Script, cpu_port: int | None = None,
                   departures: list[tuple[int, int, int, bytes]] | None = None) -> list[list[tuple[int, bytes]]]:
    """For each input packet, the frames (port, bytes) it produced, in departure order.
    ``departures``, if given, gets every frame as (port, priority queue, input number, bytes) in
    the order the traffic manager sent them, all ports together (``port_differences`` compares a
    port's frames with bmv2's by queue: priorities reorder a port's frames by timing).

    Packets enter at their ``time_us``; everything they queue leaves through the traffic manager
    (rates and depths from ``script.queues``) before virtual time passes the next arrival, so a
    burst into a rate-limited port is in flight together and egress sees real queue depths."""
    from p4.v1 import p4runtime_pb2

    state = SwitchState(build_p4info(program))
    for ent in script.entities:
        default = ent.HasField("table_entry") and ent.table_entry.is_default_action
        kind = p4runtime_pb2.Update.MODIFY if default else p4runtime_pb2.Update.INSERT
        state.write(p4runtime_pb2.Update(type=kind, entity=ent))
    pipeline = build_pipeline(program, state, cpu_port)
    tm = TrafficManager()
    for q in script.queues:
        if "rate_pps" in q:
            tm.set_queue_rate(int(q["rate_pps"]), int(q["port"]), q.get("priority"))
        if "depth" in q:
            tm.set_queue_depth(int(q["depth"]), int(q["port"]), q.get("priority"))
    outs: list[list[tuple[int, bytes]]] = [[] for _ in script.packets]
    owner: dict[int, int] = {}

    def enqueue(items: list[TmItem], idx: int, now: int) -> None:
        for it in items:
            if tm.enqueue(it, now):
                owner[id(it)] = idx

    def drain(until: int | None) -> None:
        now = script.packets[-1].time_us if until is None else until
        for _ in range(1_000_000):
            got: list = []
            due = tm.dequeue(now, 1 << 30, got)
            for _pq, item in got:
                idx = owner.pop(id(item))
                res = pipeline.egress(item, now)
                outs[idx].extend((f.port, f.data) for f in res.frames)
                if departures is not None:
                    departures.extend((f.port, item.priority, idx, f.data) for f in res.frames)
                enqueue(res.to_tm, idx, now)
                for data, preserved in res.recirculate[:MAX_RECIRCULATIONS]:
                    enqueue(pipeline.ingress_recirculated(data, preserved, now).to_tm, idx, now)
            if got:
                continue
            if due is None or (until is not None and due > until):
                return
            now = int(due) if due > now else now + 1

    for i, p in enumerate(script.packets):
        drain(p.time_us)
        enqueue(pipeline.ingress(p.data, p.port, p.time_us).to_tm, i, p.time_us)
    if script.packets:
        drain(None)
    return outs
