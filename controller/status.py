"""``mrc-controller status``: a terminal view (rich) of switches, links, drops and queue depths.

Reads the running controller's Prometheus endpoint, so it needs no P4Runtime session of its own
and never disturbs mastership.
"""
from __future__ import annotations

import os
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console, Group
from rich.table import Table

from .metrics import OUTSIDE_DROP_KINDS

DEFAULT_METRICS_PORT = 9108
# Width of the view when stdout is no terminal (`mrc-controller status > file`, `| less`, a CI log): rich
# then assumes 80 columns, and the 10 columns of the switches table came out as "swit…", "conn…", "prim…".
PIPE_WIDTH = 160


@dataclass
class StatusData:
    """The subset of the metrics the view shows, keyed for display."""

    switches: dict[str, dict[str, float]] = field(default_factory=dict)
    links: dict[tuple[str, str], str] = field(default_factory=dict)
    drops: dict[tuple[str, str], float] = field(default_factory=dict)
    ports: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    wiring: dict[str, float] = field(default_factory=dict)


def fetch(url: str, timeout_s: float = 3.0) -> str:
    """The metrics text of ``url``."""
    with urllib.request.urlopen(url, timeout=timeout_s) as resp:
        return resp.read().decode()


def parse(text: str) -> StatusData:
    """Pick the controller's metrics out of Prometheus text."""
    d = StatusData()
    sw: dict[str, dict[str, float]] = defaultdict(dict)
    ports: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as e:  # an HTML page (the --view-port given for the metrics port), a text file
        why = str(e)
        raise ValueError(f"not Prometheus metrics text ({why[:80]}{'...' if len(why) > 80 else ''})") from None
    if not any(fam.name.startswith("mrc_") for fam in families):
        # another exporter's metrics, or an empty page: the view printed empty tables and exited 0
        raise ValueError("serves no mrc-controller metrics (no mrc_* series)")
    for fam in families:
        for s in fam.samples:
            lb = s.labels
            if s.name.startswith("mrc_switch_") or s.name.startswith("mrc_reconcile_"):
                sw[lb.get("switch", "?")][s.name.removesuffix("_total")] = s.value
            elif s.name == "mrc_link_state" and s.value:
                d.links[(lb["a"], lb["b"])] = lb["state"]
            elif s.name == "mrc_drop_packets_total" and s.value:
                d.drops[(lb["switch"], lb["reason"])] = s.value
            elif s.name == "mrc_outside_drop_packets_total" and s.value:  # beside the program's own reasons
                d.drops[(lb["switch"], f"outside the pipeline: {OUTSIDE_DROP_KINDS.get(lb['where'], lb['where'])}")] = s.value
            elif s.name in ("mrc_port_rx_packets_total", "mrc_port_tx_packets_total", "mrc_queue_depth_packets"):
                ports[(lb["switch"], lb["port"])][s.name] = s.value
            elif s.name == "mrc_wiring_problems":
                d.wiring[lb["kind"]] = s.value
    d.switches, d.ports = dict(sw), dict(ports)
    return d


def _table(title: str) -> Table:
    """A table at least as wide as its title: an empty one (a backup's links) wrapped the title over
    two lines, "links (wiring" above "check)" (until 2026-12-07)."""
    return Table(title=title, min_width=len(title) + 4)


def render(d: StatusData) -> Group:
    """Rich tables: switches, links, drops, ports (rx/tx/queue depth)."""
    t_sw = _table("switches")
    for col in ("switch", "connected", "counters", "primary", "converged", "refused", "entities", "writes",
                "connect failures", "refusals"):
        t_sw.add_column(col)
    for name, m in sorted(d.switches.items()):
        # counters: "read" while the switch is up (its counter series current), "stale" when not; "-" for
        # a controller that exports no mrc_switch_up / mrc_switch_refused (before 2026-12-07): it cannot
        # say, and "stale" beside the current counters it exports would be wrong [review h-rev9]
        # counter reads another controller's pipeline push cut short (``ABORTED``) follow the state, only
        # when there were any: at 0 the cell stays "read", the column no wider than it was
        reads = "-" if "mrc_switch_up" not in m else "read" if m["mrc_switch_up"] else "stale"
        if m.get("mrc_switch_counter_reads_interrupted"):
            reads += f", {int(m['mrc_switch_counter_reads_interrupted'])} interrupted"
        flags = ["yes" if m.get("mrc_switch_connected") else "no", reads,
                 *["-" if k not in m else "yes" if m[k] else "no"
                   for k in ("mrc_switch_primary", "mrc_switch_converged", "mrc_switch_refused")]]
        t_sw.add_row(name, *flags,
                     str(int(m.get("mrc_switch_desired_entities", 0))),
                     str(int(m.get("mrc_reconcile_written_entities", 0))),
                     str(int(m.get("mrc_switch_connect_failures", 0))),
                     # "-": a controller from before 2026-12-07 counts refusals among its connect failures
                     "-" if "mrc_switch_refusals" not in m else str(int(m["mrc_switch_refusals"])))
    t_ln = _table("links (wiring check)")
    for col in ("a", "b", "state"):
        t_ln.add_column(col)
    colour = {"up": "green", "half": "yellow", "dead": "red", "miswired": "magenta"}
    for (a, b), st in sorted(d.links.items()):
        t_ln.add_row(a, b, f"[{colour.get(st, 'white')}]{st}[/]")
    t_dr = _table("drops")
    for col in ("switch", "reason", "packets"):
        t_dr.add_column(col)
    for (s, r), v in sorted(d.drops.items()):
        t_dr.add_row(s, r, str(int(v)))
    t_pt = _table("ports")
    for col in ("switch", "port", "rx pkts", "tx pkts", "queue depth"):
        t_pt.add_column(col)
    for (s, p), m in sorted(d.ports.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        t_pt.add_row(s, p, str(int(m.get("mrc_port_rx_packets_total", 0))),
                     str(int(m.get("mrc_port_tx_packets_total", 0))), str(int(m.get("mrc_queue_depth_packets", 0))))
    return Group(t_sw, t_ln, t_dr, t_pt)


def show(url: str, console: Console | None = None, clear: bool = False) -> StatusData:
    """Fetch, parse and print once; ``clear`` (``--watch``): on a terminal, the view replaces the last one
    instead of scrolling under it (piped, every view is kept, one after another)."""
    d = parse(fetch(url))
    c = console or status_console()
    if clear and c.is_terminal:
        c.clear()
    c.print(render(d))
    return d


def status_console() -> Console:
    """The terminal's width on a terminal; ``PIPE_WIDTH`` columns when piped, unless ``COLUMNS`` says."""
    c = Console()
    if not c.is_terminal and "COLUMNS" not in os.environ:
        c = Console(width=PIPE_WIDTH)
    return c
