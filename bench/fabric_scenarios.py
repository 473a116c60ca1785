"""Scenario benchmarks on the emulated softswitch fabric: MRC / RC-baseline ratios from one run.

    python bench/fabric_scenarios.py [--target softswitch] [--out bench-out/fabric] [--json]

One fabric (examples/small.yaml, with the demo's links: 5 ms propagation delay per switch port) for
the all-to-all runs, one with slow shallow host downlinks for incast.  Prints: completion time of an
all-to-all without and with a spine-link failure, goodput recovery time and longest flow stall after
the failure, and p99 message latency under incast; each as MRC and RC measured in this run, and
their ratio.  A run that does not finish by its deadline is
reported as ">= deadline" (a single-path QP pinned to a dead path never recovers on a static fabric).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fabric.demo import demo_link_defaults
from fabric.scenarios import (
    FabricEnv,
    FabricSpec,
    FaultSpec,
    MeasureSpec,
    Scenario,
    TrafficSpec,
    analyse,
    run_traffic,
)

# The demo's links and QP settings (fabric/demo.py): 5 ms propagation delay per switch port (a fabric
# with several packets per RTT), RACK reordering floor 10 ms, 5 ms samples, 20 ms bins.
A2A = TrafficSpec(pattern="all-to-all", size=256 << 10, count=12, tx_depth=2, rate_gbps=0.012, reorder_ms=10.0)
A2A_MEASURE = MeasureSpec(sample_ms=5.0, bin_ms=20.0)
# 3 -> 1 into 600 packets/s, 16-packet host downlinks (trim threshold 14): two messages in flight per
# sender keep the downlinks congested (one in flight barely queued: no trims, p99 ratio 1.00)
INCAST = TrafficSpec(pattern="incast", size=64 << 10, count=16, tx_depth=2, rate_gbps=0.02)
FAIL = FaultSpec(at=1.0, kind="link_down", a="p1l1", b="p1s1")
DEADLINE = 20.0


def _pair(env: FabricEnv, sc: Scenario) -> dict[str, dict]:
    return {m: analyse(run_traffic(env, sc, m), sc.measure.bin_ms, sc.measure.sample_ms) for m in ("mrc", "rc")}


def _ratio(a: float | None, b: float | None) -> str:
    return f"{b / a:.2f}" if a and b else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="softswitch")
    ap.add_argument("--out", type=Path, default=Path("bench-out/fabric"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    res: dict[str, dict] = {}
    with FabricEnv(FabricSpec(link_defaults=demo_link_defaults(args.target)), prefix="bnch", grpc_base_port=22500, target=args.target,
                   workdir=args.out / "a2a") as env:
        res["a2a"] = _pair(env, Scenario(traffic=A2A, deadline_s=DEADLINE, measure=A2A_MEASURE))
        res["a2a_fail"] = _pair(env, Scenario(traffic=A2A, faults=(FAIL,), deadline_s=DEADLINE, measure=A2A_MEASURE))
    spec = FabricSpec(host_links={"rate_pps": 600, "queue_depth": 16})
    with FabricEnv(spec, prefix="bnci", grpc_base_port=22600, target=args.target, workdir=args.out / "incast") as env:
        res["incast"] = _pair(env, Scenario(traffic=INCAST, deadline_s=DEADLINE))
    rows = []

    def comp(m: dict) -> float | None:
        return m["completion_s"]

    def comp_txt(m: dict) -> str:
        return f"{m['completion_s']:.2f} s" if m["completion_s"] else f">= {m['elapsed_s']:.1f} s (not done)"
    for key, label in (("a2a", "all-to-all completion, no failure"), ("a2a_fail", "all-to-all completion, link failure")):
        m, r = res[key]["mrc"], res[key]["rc"]
        rc_val = comp(r) or r["elapsed_s"]
        ratio = _ratio(comp(m), rc_val) if comp(r) else f">= {_ratio(comp(m), rc_val)}"
        rows.append((label, comp_txt(m), comp_txt(r), ratio))
    m, r = res["a2a_fail"]["mrc"]["recovery"][0], res["a2a_fail"]["rc"]["recovery"][0]

    def rec(x: dict) -> str:
        if x["goodput_recovery_s"] is None:
            return "not recovered"
        rtts = x.get("goodput_recovery_rtts")
        return f"{x['goodput_recovery_s'] * 1000:.0f} ms" + (f" ({rtts:g} RTTs)" if rtts is not None else "")
    rows.append(("goodput recovery after the link failure (80%, 20 ms bins)", rec(m), rec(r),
                 _ratio(m["goodput_recovery_s"], r["goodput_recovery_s"])))
    stall_rtts = f" ({m['max_flow_stall_rtts']:g} RTTs)" if m.get("max_flow_stall_rtts") is not None else ""
    rows.append(("longest flow stall after the link failure", f"{m['max_flow_stall_s'] * 1000:.0f} ms{stall_rtts}",
                 f"{r['max_flow_stall_s'] * 1000:.0f} ms" + (" (until the end)" if r["stalled_until_end"] else ""),
                 _ratio(m["max_flow_stall_s"], r["max_flow_stall_s"])))
    mi, ri = res["incast"]["mrc"], res["incast"]["rc"]
    rows.append(("incast 3->1 p99 message latency", f"{mi['latency_us']['p99'] / 1000:.1f} ms",
                 f"{ri['latency_us']['p99'] / 1000:.1f} ms", _ratio(mi["latency_us"]["p99"], ri["latency_us"]["p99"])))
    print(f"fabric scenario bench ({args.target}, examples/small.yaml, wall {time.monotonic() - t0:.0f} s); "
          f"all-to-all MRC median srtt {res['a2a_fail']['mrc']['srtt_ms_median']} ms")
    print(f"{'metric':<62} {'MRC':>20} {'RC baseline':>28} {'RC/MRC':>8}")
    for label, a, b, c in rows:
        print(f"{label:<62} {a:>20} {b:>28} {c:>8}")
    print(f"data integrity: MRC corrupt messages {sum(res[k]['mrc']['corrupt_messages'] for k in res)}, "
          f"RC {sum(res[k]['rc']['corrupt_messages'] for k in res)}")
    print(f"incast: switches trimmed {mi['switch_trims']} (MRC) / {ri['switch_trims']} (RC), CE-marked "
          f"{mi['switch_ecn_marks']} / {ri['switch_ecn_marks']}, dropped early {mi['switch_early_drops']} / "
          f"{ri['switch_early_drops']}; MRC trims received {mi['trims_received']}, trim retransmissions "
          f"{mi['retransmissions'].get('trim', 0)}; RC go-back-N resends {ri['retransmissions'].get('nak', 0)}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps({k: {m: {x: v for x, v in d.items() if x != "ev_events"}
                                                         for m, d in pair.items()} for k, pair in res.items()},
                                                    indent=1, default=str))
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
