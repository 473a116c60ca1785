"""The JSON document behind the live view: topology, link states and loads, switch counters, postcards.

Loads are rates between two consecutive counter reads of a switch (``SwitchCounters.read_at``); a
link's load is the larger of its two directions (each measured as the sending switch port's tx
counter; a host link's host->switch direction as the switch port's rx counter).  Link state: fabric
links from the wiring check (up / half / dead / miswired; "unknown" before the first check); host
links are not probed by the wiring check, so their state is "host" (the page shows their load only).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..metrics import MetricsSnapshot
from ..telemetry import SwitchCounters
from ..topology import Link, Topology

MAX_POSTCARDS = 16


def link_id(link: Link) -> str:
    """The link's id on the page and in the API: the topology's ``a:port--b:port`` name."""
    return link.name


class ViewState:
    """Builds ``/api/state`` documents from metrics snapshots, remembering what rates need."""

    def __init__(self, topology: Topology, snapshot: Callable[[], MetricsSnapshot]) -> None:
        self.topo, self.snapshot = topology, snapshot
        self._lock = threading.Lock()
        self._prev: dict[str, SwitchCounters] = {}  # the read before the latest, per switch
        self._last: dict[str, SwitchCounters] = {}
        self._states: dict[str, tuple[str, float]] = {}  # link id -> (state, wall time first seen)

    def _rates(self, counters: dict[str, SwitchCounters]) -> dict[tuple[str, str, int], tuple[float, float]]:
        """(switch, 'tx'|'rx', port) -> (bits/s, packets/s) between the last two reads."""
        out: dict[tuple[str, str, int], tuple[float, float]] = {}
        for name, c in counters.items():
            last = self._last.get(name)
            if last is None or c.read_at != last.read_at:
                if last is not None:
                    self._prev[name] = last
                self._last[name] = c
            prev, cur = self._prev.get(name), self._last[name]
            if prev is None or cur.read_at <= prev.read_at:
                continue
            dt = cur.read_at - prev.read_at
            for kind, now, before in (("tx", cur.port_tx, prev.port_tx), ("rx", cur.port_rx, prev.port_rx)):
                for port, (p, b) in now.items():
                    p0, b0 = before.get(port, (0, 0))
                    if p >= p0 and b >= b0:  # a restarted switch counts from 0: no rate for that read
                        out[(name, kind, port)] = ((b - b0) * 8 / dt, (p - p0) / dt)
        return out

    def document(self) -> dict[str, Any]:
        """The current state as a JSON-ready dict."""
        snap = self.snapshot()
        now = time.time()
        with self._lock:
            rates = self._rates(snap.counters)
            switches = []
            for sw in self.topo.switches.values():
                info = snap.switches.get(sw.name)
                c = snap.counters.get(sw.name)
                switches.append({
                    "name": sw.name, "role": sw.role, "plane": sw.plane, "device_id": sw.device_id,
                    "connected": bool(info and info.connected), "converged": bool(info and info.converged),
                    "drops": {r: p for r, (p, _) in sorted(c.drops.items())} if c else {},
                    "congestion": dict(sorted(c.congestion.items())) if c else {},
                    "qdepth": {str(p): d for p, d in sorted(c.qdepth.items())} if c else {},
                    "postcards": snap.postcards_total.get(sw.name, 0),
                    "counters_at": c.read_at if c else None,
                })
            links = []
            for lk in self.topo.links:
                lid = link_id(lk)
                fabric = lk.a.node in self.topo.switches and lk.b.node in self.topo.switches
                if fabric:
                    state = snap.links.get((str(lk.a), str(lk.b)), "unknown")
                    dirs = [rates.get((lk.a.node, "tx", lk.a.port)), rates.get((lk.b.node, "tx", lk.b.port))]
                else:
                    state = "host"
                    sw_end = lk.b if lk.b.node in self.topo.switches else lk.a
                    dirs = [rates.get((sw_end.node, "tx", sw_end.port)), rates.get((sw_end.node, "rx", sw_end.port))]
                seen = self._states.get(lid)
                if seen is None or seen[0] != state:
                    seen = self._states[lid] = (state, now)
                known = [d for d in dirs if d is not None]
                links.append({
                    "id": lid, "a": lk.a.node, "a_port": lk.a.port, "b": lk.b.node, "b_port": lk.b.port,
                    "kind": "fabric" if fabric else "host", "state": state, "since": seen[1],
                    "bps": max((d[0] for d in known), default=None), "pps": max((d[1] for d in known), default=None),
                })
        pcs = [{"switch": p.switch, "switch_id": p.hop.switch_id, "ingress_port": p.hop.ingress_port,
                "egress_port": p.hop.egress_port, "ingress_ts_us": p.hop.ingress_ts_us,
                "hop_latency_us": p.hop.hop_latency_us, "queue_depth": p.hop.queue_depth,
                "queue_id": p.hop.queue_id, "packet": p.packet, "received_at": p.received_at}
               for p in snap.postcards[-MAX_POSTCARDS:]]
        return {"time": now, "topology": self.topo.name, "planes": self.topo.planes,
                "switches": switches, "hosts": [h.name for h in self.topo.host_list()], "links": links,
                "postcards": pcs, "wiring_problems": dict(snap.wiring_problems)}
