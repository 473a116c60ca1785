"""The fault-free all-to-all MRC run of bench/fabric_scenarios.py, repeated on one fabric: every EV
retirement with the evidence of the verdict that made it, and where the fabric lost packets.

    flock /tmp/mrc-net.lock .venv/bin/python bench/fabric_ev_verdicts.py [--repeat 5] [--out bench-out/evr] [--json]

Same fabric (examples/small.yaml with the demo's links: 300 frames/s, 16-frame queues, 5 ms per switch
port) and traffic (12 x 256 KiB per flow, all-to-all, NSCC, RACK floor 10 ms) as the bench's fault-free
all-to-all; only MRC, no failure.  Per run: completion, resends by cause, the switches' trims, CE marks
and drops by reason, every softswitch port's tail drops (traffic-manager queue full) and tx drops,
kernel receive drops, then each EV retirement: its kind ("fifo": a later packet on the path was
delivered and this one was not, with no congestion signal on the path within its RTT; "quiet": a
suspect path showed no life in time), the PSN, its age, the path's delivery record and the limits it
was judged by, and what the responder saw of that PSN (trimmed, arrived again = duplicate, nothing).
Exit status 1 if any run retired an EV (the acceptance bar is 0).  A run takes ~25 s plus the fabric's
bring-up (~20 s); keep --repeat small enough for the shared lock (~3 minutes).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fabric_scenarios import A2A, A2A_MEASURE, DEADLINE

from mrc_fabric.demo import demo_link_defaults
from mrc_fabric.scenarios import FabricEnv, FabricSpec, Scenario, analyse, run_traffic, verdict_lines
from mrc_fabric.scenarios.spec import DELAY_AT
from mrc_fabric.targets import TARGETS, selected_target


def port_stats(env: FabricEnv) -> dict[str, dict[str, dict[str, int]]]:
    """Per softswitch, per port (ifname): tail drops in its egress queues, tx drops, kernel receive drops
    (empty on a target without them: bmv2's runtime port speaks Thrift, not softswitch's commands)."""
    from mrc_fabric.targets import get_target
    from softswitch.engine.control import send_command

    out: dict[str, dict[str, dict[str, int]]] = {}
    assert env.fab is not None
    if not env.fab.state.target or not get_target(env.fab.state.target).reports_kernel_drops:
        return out
    for name, rec in env.fab.state.procs.items():
        if not rec.runtime_port:
            continue
        try:
            rows = send_command(f"127.0.0.1:{rec.runtime_port}", "port_stats", [])
        except Exception:  # noqa: BLE001, S112 - a switch that does not answer is left out
            continue
        out[name] = {r["ifname"]: {"queue_drops": int(r.get("queue_drops", 0)), "tx_drops": int(r.get("tx_drops", 0)),
                                   "rx_kernel_drops": int(r.get("rx_kernel_drops", 0))} for r in rows}
    return out


def stats_delta(before: dict, after: dict) -> dict[str, int]:
    """Non-zero per-port drop counts that grew: {"switch/ifname kind": n}."""
    out = {}
    for sw, ports in after.items():
        for ifn, c in ports.items():
            for k, v in c.items():
                d = v - before.get(sw, {}).get(ifn, {}).get(k, 0)
                if d:
                    out[f"{sw}/{ifn} {k}"] = d
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=TARGETS, default=selected_target(),
                    help="switch target (default $TARGET or softswitch)")
    ap.add_argument("--delay-at", choices=DELAY_AT, default="auto",
                    help="where the links' delay goes: switches, hosts (as on bmv2 without netem), auto (default)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("bench-out/evr"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    sc = Scenario(traffic=A2A, deadline_s=DEADLINE, measure=A2A_MEASURE)
    runs = []
    with FabricEnv(FabricSpec(link_defaults=demo_link_defaults(), delay_at=args.delay_at), prefix="bnev", grpc_base_port=22800,
                   target=args.target, workdir=args.out / "a2a") as env:
        for k in range(args.repeat):
            before = port_stats(env)
            run = run_traffic(env, sc, "mrc")
            drops = stats_delta(before, port_stats(env))
            m = analyse(run, sc.measure.bin_ms, sc.measure.sample_ms)
            sw_drops = {f"{n} {r}": v for n, c in run["switch_counters"].items() for r, v in c["drops"].items()}
            r = m["retransmissions"]
            comp = f"{m['completion_s']:.2f} s" if m["completion_s"] else f">= {m['elapsed_s']:.1f} s (not done)"
            print(f"run {k + 1}: completion {comp}, srtt median {m['srtt_ms_median']} ms, EV retirements "
                  f"{m['ev_retirements']}, resent {m['retransmissions_total']} of {m['data_packets_sent']} (rack "
                  f"{r.get('rack', 0)}, timeout {r.get('timeout', 0)}, trim {r.get('trim', 0)}), duplicates "
                  f"{m['duplicates_received']}; switches: trims {m['switch_trims']}, CE {m['switch_ecn_marks']}, "
                  f"early drops {m['switch_early_drops']}, drops by switch/reason {sw_drops or 'none'}; port drops "
                  f"{drops or 'none'}; kernel rx drops {m['kernel_rx_drops']}", flush=True)
            for line in verdict_lines(m):
                print(line, flush=True)
            changes = Counter(f"{e[4]}->{e[5]} ({e[6]})" for e in m["ev_events"])
            if changes:
                print(f"  EV state changes: {dict(changes)}", flush=True)
            runs.append({"run": k + 1, "completion_s": m["completion_s"], "ev_retirements": m["ev_retirements"],
                         "ev_verdicts": m["ev_verdicts"], "ev_events": m["ev_events"], "retransmissions": r,
                         "duplicates": m["duplicates_received"], "switch_drops": sw_drops, "port_drops": drops,
                         "kernel_rx_drops": m["kernel_rx_drops"], "switch_trims": m["switch_trims"],
                         "switch_ecn_marks": m["switch_ecn_marks"], "srtt_ms_median": m["srtt_ms_median"]})
    n_bad = sum(1 for x in runs if x["ev_retirements"])
    print(f"{len(runs)} fault-free MRC all-to-all runs ({args.target}, wall {time.monotonic() - t0:.0f} s): EV "
          f"retirements per run {[x['ev_retirements'] for x in runs]}; runs with any: {n_bad}; completion "
          f"{[x['completion_s'] for x in runs]}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ev_verdicts.json").write_text(json.dumps(runs, indent=1, default=str))
    if args.json:
        print(json.dumps(runs, indent=1, default=str))
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
