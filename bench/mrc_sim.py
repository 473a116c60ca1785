"""MRC vs the classic RoCEv2 RC baseline on the simulated network, as ratios from one run.

Scenarios (64 MiB RDMA WRITE_WITH_IMM, 4 KiB MTU, 8 paths of --gbps each, --delay-us one way):
  * 0%, 0.1%, 1% random loss on every path;
  * one of 8 paths dies halfway through the transfer (the path the RC baseline is pinned to: with
    static SRv6 nothing reroutes it, so it comes back only after --reroute-ms, the time a routing
    protocol or controller would need);
  * goodput of MRC with 8 healthy paths as a fraction of their summed capacity.
Each path is a NIC port of its own: RC sends on one, an eighth of MRC's NIC bandwidth, so RC/MRC is
~8 with no loss at all.  The loss and path-death rows are printed again with all 8 paths behind ONE
NIC port (equal bandwidth: only the transport differs), and each row as each mode's time over its own
loss-free time.
Simulated time, so results are deterministic.  Wall-clock and process CPU time are printed too,
with one floor on them: the 1%-loss MRC run takes at most 3x the time of the loss-free one (the
simulator's work must grow with the packets, not with the losses).  The floor reads process CPU
time: on the shared 2-core machine the wall-time ratio of one run each moved 1.13-2.40 in four
back-to-back repeats (another process took the core), the CPU ratio 2.06-2.17.

    python bench/mrc_sim.py [--mib 64] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mrc.core import EvState, NsccConfig, QpAttr, WcStatus
from mrc.sim import PathSpec, make_pair, transfer

MTU = 4096


def run(mode: str, nbytes: int, paths: list[PathSpec], gbps: float, delay_ns: int, seed: int = 1,
        one_port: bool = False) -> dict:
    """One transfer; ``one_port``: every path behind one NIC port of ``gbps`` (MRC sprays them from it), else
    a NIC port per path (RC sends on one of them: an eighth of MRC's NIC bandwidth with 8 paths)."""
    base_rtt = 2 * delay_ns + 2 * int(MTU * 8 / gbps)
    cc = NsccConfig.defaults(base_rtt, gbps * 1e9 * (1 if one_port else len(paths)), MTU) if mode == "mrc" else None
    attr = QpAttr(mode=mode, mtu=MTU, mpr=16, ack_timeout=10, retry_cnt=7, exp_retry_cnt=25, cc=cc)
    p = make_pair(paths, mode=mode, attr=attr, buf_len=nbytes, seed=seed, port_rate_bps=gbps * 1e9,
                  ports_per_path=not one_port)
    data = os.urandom(nbytes)
    t0, c0 = time.perf_counter(), time.process_time()
    end = transfer(p, [(1, data, p.mr.base_va, 0xABC)], until_ns=120_000_000_000)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = bool(p.done) and p.done[0].status is WcStatus.SUCCESS and bytes(p.mr.buf) == data
    c = p.qa.counters
    evs = p.a.poll_events()
    evs_b = p.b.poll_events()
    return {"mode": mode, "ok": ok, "time_us": end / 1000, "wall_s": round(wall, 2), "cpu_s": round(cpu, 3),
            "retx": {"timeout": c.retx_timeout, "rack": c.retx_rack, "trim": c.retx_trim, "nak": c.retx_nak},
            "ev_events": len(evs), "packets": c.data_packets_sent,
            # EVs made ASSUMED_BAD at either end: with no loss and no dead path every one is a healthy path's
            "ev_retired": sum(1 for e in evs + evs_b if e.state is EvState.ASSUMED_BAD)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--paths", type=int, default=8)
    ap.add_argument("--gbps", type=float, default=100.0)
    ap.add_argument("--delay-us", type=float, default=2.0)
    ap.add_argument("--reroute-ms", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    nbytes = a.mib << 20
    delay = int(a.delay_us * 1000)
    n = a.paths

    def healthy(loss: float = 0.0) -> list[PathSpec]:
        return [PathSpec(delay_ns=delay, rate_bps=a.gbps * 1e9, loss=loss, queue_bytes=4 << 20) for _ in range(n)]

    results: dict[str, dict] = {}
    rows = []
    for name, loss in (("loss 0%", 0.0), ("loss 0.1%", 0.001), ("loss 1%", 0.01)):
        m = run("mrc", nbytes, healthy(loss), a.gbps, delay)
        r = run("rc", nbytes, healthy(loss), a.gbps, delay)
        results[name] = {"mrc": m, "rc": r}
        rows.append((name, m, r))
    # one path dies halfway through each mode's own healthy transfer, back after --reroute-ms
    base = results["loss 0%"]
    dying = {}
    for mode in ("mrc", "rc"):
        ps = healthy()
        t_die = int(base[mode]["time_us"] * 1000 / 2)
        ps[0].down = [(t_die, t_die + int(a.reroute_ms * 1e6))]
        dying[mode] = run(mode, nbytes, ps, a.gbps, delay)
    results["1 of 8 paths dies"] = dying
    rows.append(("1 of 8 paths dies", dying["mrc"], dying["rc"]))
    # the same with both modes behind ONE NIC port (the 8 paths are the fabric's): with a port per path
    # RC has an eighth of MRC's NIC bandwidth, which alone makes RC/MRC ~8 at no loss; here only the
    # transport differs (until 2026-12-07 the bench printed the unequal comparison only)
    eq: dict[str, dict] = {}
    eq_rows = []
    for name, loss in (("loss 0%", 0.0), ("loss 1%", 0.01)):
        eq[name] = {mode: run(mode, nbytes, healthy(loss), a.gbps, delay, one_port=True) for mode in ("mrc", "rc")}
        eq_rows.append((name, eq[name]["mrc"], eq[name]["rc"]))
    eq_dying = {}
    for mode in ("mrc", "rc"):
        ps = healthy()
        t_die = int(eq["loss 0%"][mode]["time_us"] * 1000 / 2)
        ps[0].down = [(t_die, t_die + int(a.reroute_ms * 1e6))]
        eq_dying[mode] = run(mode, nbytes, ps, a.gbps, delay, one_port=True)
    eq["1 of 8 paths dies"] = eq_dying
    eq_rows.append(("1 of 8 paths dies", eq_dying["mrc"], eq_dying["rc"]))
    results["one_nic_port"] = eq
    ideal_us = nbytes * 8 / (a.gbps * 1e9 * n) * 1e6
    goodput = ideal_us / base["mrc"]["time_us"]
    results["goodput_fraction_8_paths"] = goodput
    floors = {"path_death_speedup>=5": dying["rc"]["time_us"] / dying["mrc"]["time_us"] >= 5,
              "goodput>=0.85": goodput >= 0.85,
              # process CPU, not wall: the same work, whatever else the machine runs (see the docstring)
              "mrc_1%_loss_cpu<=3x_loss_free": results["loss 1%"]["mrc"]["cpu_s"]
              <= 3 * max(base["mrc"]["cpu_s"], 0.01),
              # with equal NIC bandwidth (RC/MRC is then the transfer's 5.6 ms against RC's 10 ms stall, ~2.9):
              # MRC loses at most 10% to the path's death, RC's pinned path stalls until the reroute
              "one_port_mrc_path_death<=1.1x_loss_free": eq_dying["mrc"]["time_us"]
              <= 1.1 * eq["loss 0%"]["mrc"]["time_us"],
              "one_port_rc_stalls_the_reroute": eq_dying["rc"]["time_us"]
              >= eq["loss 0%"]["rc"]["time_us"] + 0.9 * a.reroute_ms * 1000,
              "all_delivered": all(m["ok"] and r["ok"] for _n, m, r in rows + eq_rows),
              # no loss, no dead path: nothing may retire an EV (random loss may: it is loss on that path)
              "loss_free_0_evs_retired": base["mrc"]["ev_retired"] == 0 == eq["loss 0%"]["mrc"]["ev_retired"]}
    results["floors"] = floors
    if a.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{a.mib} MiB WRITE_WITH_IMM, MTU {MTU}, {n} paths x {a.gbps:g} Gb/s, one-way delay {a.delay_us} us")
        print(f"{'scenario':20} {'MRC us':>10} {'RC us':>12} {'RC/MRC':>8}  MRC retx (rack/timeout/trim)  RC retx"
              f"  wall s MRC / RC")
        def table(rows: list, own: dict) -> None:
            for name, m, r in rows:
                print(f"{name:20} {m['time_us']:10.1f} {r['time_us']:12.1f} {r['time_us'] / m['time_us']:8.2f}"
                      f"  {m['retx']['rack']}/{m['retx']['timeout']}/{m['retx']['trim']:<20} "
                      f"{r['retx']['nak'] + r['retx']['timeout']:<8} {m['wall_s']:.2f} / {r['wall_s']:.2f}"
                      f"   x own loss-free: MRC {m['time_us'] / own['mrc']['time_us']:.2f}, RC "
                      f"{r['time_us'] / own['rc']['time_us']:.2f}; MRC EVs retired {m['ev_retired']}")
        table(rows, base)
        print(f"The same, all 8 paths behind ONE {a.gbps:g} Gb/s NIC port (above, RC sends on 1 of 8 NIC ports: "
              f"1/8 of MRC's bandwidth)")
        table(eq_rows, eq["loss 0%"])
        m1, m0 = results["loss 1%"]["mrc"], base["mrc"]
        print(f"MRC time, 1% loss / loss-free: wall {m1['wall_s'] / max(m0['wall_s'], 0.01):.2f} "
              f"({m1['wall_s']:.2f} / {m0['wall_s']:.2f} s), process CPU {m1['cpu_s'] / max(m0['cpu_s'], 0.01):.2f} "
              f"({m1['cpu_s']:.2f} / {m0['cpu_s']:.2f} s)")
        print(f"MRC goodput with {n} healthy paths: {goodput:.3f} of summed capacity "
              f"(payload only; ideal {ideal_us:.1f} us)")
        print("floors:", ", ".join(f"{k}: {'PASS' if v else 'FAIL'}" for k, v in floors.items()))
    return 0 if all(floors.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
