"""mrc-perf with its DEFAULT settings through the emulated fabric, against a hand-paced sweep (one run).

    sudo .venv/bin/python bench/mrc_perf_defaults.py [--rate-pps 300] [--size 256K] [--iters 40] [--bare]

Brings up examples/small.yaml with every link modelled at --rate-pps full frames/s (the switch
egress queues' rate, as the demo's fabric: links slower than the Python switch processes, so
congestion queues in the traffic manager where mrc_switch.p4 marks and trims), writes the EV plans,
and runs ``mrc-perf server`` on h3 and ``mrc-perf client --size S --iters N --verify`` on h1 with
nothing else on the command line: MRC, congestion control NSCC, NIC ports at the default 10 Gb/s.
Then the hand-paced sweep on the same fabric: ``--cc none --rate-gbps X`` for X around the link
rate, and the best goodput it finds.  Prints, each as PASS/FAIL:
  * every byte verified by the server;
  * resent packets <= 5% of the data packets sent;
  * default goodput >= 90% of the sweep's best;
and, for information, the same default run with ``--mode rc`` (DCQCN), trims / ECN marks / frames
lost outside the pipeline (kernel receive drops, traffic-manager tail drops, transmit drops) and EV state changes.  ``--bare`` adds a run on the
fabric without a link model (links as fast as the switch processes go).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.telemetry import EVENT_EARLY_DROP, EVENT_ECN_MARKED, EVENT_TRIMMED
from mrc.core.types import evidence_text
from mrc_fabric.scenarios import FabricEnv, FabricSpec
from mrc_fabric.targets import TARGETS, full_frames_bps, get_target, selected_target

REPO = Path(__file__).resolve().parents[1]
SWEEP = (0.5, 0.75, 0.9, 1.0, 1.1, 1.25)  # hand pacing, as fractions of the modelled link rate per NIC port


def _perf(env: FabricEnv, extra: list[str], size: str, iters: int, sock: str, timeout: float) -> dict[str, Any]:
    """One mrc-perf server (h3) / client (h1) pair; the client's JSON report (with the server's)."""
    py = sys.executable
    ifaces = "nic1,nic2"
    before = env.fab.outside_drops()
    cong0 = env.congestion_counts()
    srv = subprocess.Popen(["ip", "netns", "exec", env.fab.netns("h3"), py, "-m", "mrc", "server", "--ifaces", ifaces,
                            "--plan", str(env.plan_dir / "h3.json"), "--bootstrap", f"unix:{sock}", "--json",
                            "--accept-timeout", "60"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        for _ in range(100):  # the server's unix socket appears once it listens
            if Path(sock).exists():
                break
            time.sleep(0.05)
        cli = subprocess.run(["ip", "netns", "exec", env.fab.netns("h1"), py, "-m", "mrc", "client", "--ifaces", ifaces,
                              "--plan", str(env.plan_dir / "h1.json"), "--peer", f"unix:{sock}", "--size", size,
                              "--iters", str(iters), "--verify", "--json", "--progress", "0",
                              "--timeout", str(timeout), *extra],
                             cwd=REPO, capture_output=True, text=True, timeout=timeout + 60, check=False)
        srv.wait(timeout=30)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
        Path(sock).unlink(missing_ok=True)
    if cli.returncode not in (0, 1) or not cli.stdout.strip():
        raise RuntimeError(f"mrc-perf client {' '.join(extra)} failed ({cli.returncode}): {cli.stderr[-800:]}")
    r = json.loads(cli.stdout.strip().splitlines()[-1])
    after = env.fab.outside_drops()
    cong1 = env.congestion_counts()
    counted = get_target(env.target).reports_kernel_drops  # bmv2: not counted (shown as n/a, never 0)
    for k, per_switch in after.items():  # kernel_rx_drops, queue_tail_drops, tx_drops, ...
        r[k] = sum(max(0, v - before[k].get(n, 0)) for n, v in per_switch.items()) if counted else "n/a"
    r["switch_congestion"] = {k: sum(c.get(k, 0) for c in cong1.values()) - sum(c.get(k, 0) for c in cong0.values())
                              for k in (EVENT_TRIMMED, EVENT_ECN_MARKED, EVENT_EARLY_DROP)}
    return r


def _row(label: str, r: dict[str, Any]) -> str:
    rx = r["retransmissions"]
    data = max(1, rx.get("data_packets", 0))
    ev_bad = sum(1 for e in r["ev_timeline"] if e["to"] == "ASSUMED_BAD")
    sc = r["switch_congestion"]
    return (f"{label:<34} {r['results']['mb_per_s']:>8.2f} {r['server'].get('verify')!s:>8} "
            f"{rx['total']:>6}/{data:<6} {100 * rx['total'] / data:>6.1f}% {sc[EVENT_TRIMMED]:>6} {sc[EVENT_ECN_MARKED]:>6} "
            f"{r['kernel_rx_drops']:>7} {r['queue_tail_drops']:>7} {r['tx_drops']:>7} {ev_bad:>6}")


def _whys(r: dict[str, Any], limit: int = 5) -> str:
    """One line per EV retirement of a run (at most ``limit``): when, which EV, and its verdict's evidence."""
    bad = [e for e in r["ev_timeline"] if e["to"] == "ASSUMED_BAD"]
    lines = [f"    EV {e['ev']} (port {e['port']}) at +{e['t_s']:.3f} s, {e['cause']}: "
             f"{evidence_text(e.get('evidence')) or 'no evidence'}" for e in bad[:limit]]
    return "".join("\n" + x for x in lines)


def _fabric_runs(env: FabricEnv, args: argparse.Namespace, line_gbps: float | None, tmp: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sock = f"{tmp}/perf.sock"
    print(f"{'run':<34} {'MB/s':>8} {'verify':>8} {'resent/data':>13} {'share':>7} {'trims':>6} {'ECN':>6} "
          f"{'kdrops':>7} {'qdrops':>7} {'txdrops':>7} {'EVbad':>6}", flush=True)
    out["default"] = r = _perf(env, [], args.size, args.iters, sock, args.timeout)
    print(_row("mrc-perf defaults (MRC, NSCC)", r) + _whys(r), flush=True)
    out["default_rc"] = r = _perf(env, ["--mode", "rc"], args.size, args.iters, sock, args.timeout)
    print(_row("--mode rc (DCQCN)", r) + _whys(r), flush=True)
    if line_gbps is None:
        return out
    sweep = []
    for f in SWEEP:
        g = line_gbps * f
        r = _perf(env, ["--cc", "none", "--rate-gbps", f"{g:.5f}"], args.size, args.iters, sock, args.timeout)
        sweep.append((g, r))
        print(_row(f"--cc none --rate-gbps {g:.4f}", r) + _whys(r), flush=True)
    out["sweep"] = [{"rate_gbps": g, "report": r} for g, r in sweep]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate-pps", type=int, default=300, help="modelled link rate, full frames/s (default 300, the demo's)")
    ap.add_argument("--size", default="256K")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--target", choices=TARGETS, default=selected_target(),
                    help="switch target (default $TARGET or softswitch)")
    ap.add_argument("--bare", action="store_true", help="also run the defaults on the fabric without a link model")
    ap.add_argument("--out", type=Path, default=Path("bench-out/perf-defaults"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    line_gbps = full_frames_bps(args.rate_pps) / 1e9
    res: dict[str, Any] = {"rate_pps": args.rate_pps, "line_gbps": line_gbps}
    print(f"mrc-perf with default settings, h1 -> h3 over examples/small.yaml ({args.target}), links modelled at "
          f"{args.rate_pps} frames/s (= {line_gbps * 1000:.1f} Mb/s of full 8 KiB frames per port, 2 planes); "
          f"--size {args.size} --iters {args.iters} --verify", flush=True)
    with tempfile.TemporaryDirectory(prefix="mrcperf") as tmp:
        with FabricEnv(FabricSpec(link_defaults={"rate_pps": args.rate_pps}), prefix="bnpf", grpc_base_port=22700,
                       target=args.target, workdir=args.out / "modelled") as env:
            res["modelled"] = _fabric_runs(env, args, line_gbps, tmp)
        if args.bare:
            print("bare fabric (no link model):", flush=True)
            with FabricEnv(FabricSpec(), prefix="bnpb", grpc_base_port=22750, target=args.target,
                           workdir=args.out / "bare") as env:
                res["bare"] = _fabric_runs(env, args, None, tmp)
    m = res["modelled"]
    d = m["default"]
    ok_sweep = [s for s in m["sweep"] if s["report"]["server"].get("verify") == "ok" and s["report"]["ok"]]
    best = max(ok_sweep, key=lambda s: s["report"]["results"]["mb_per_s"]) if ok_sweep else None
    rx = d["retransmissions"]
    share = rx["total"] / max(1, rx.get("data_packets", 0))
    ratio = d["results"]["mb_per_s"] / best["report"]["results"]["mb_per_s"] if best else 0.0
    checks = [
        (d["ok"] and d["server"].get("verify") == "ok",
         f"every byte verified ({d['results']['bytes']} bytes, server: {d['server'].get('verify')})"),
        (share <= 0.05,
         f"resent packets {rx['total']} of {rx.get('data_packets', 0)} data packets = {100 * share:.1f}% (bar: <= 5%)"),
        (ratio >= 0.9, (f"goodput {d['results']['mb_per_s']:.2f} MB/s = {ratio:.2f} of the best hand-paced "
                        + (f"{best['report']['results']['mb_per_s']:.2f} MB/s (--rate-gbps {best['rate_gbps']:.4f})"
                           if best else "(no sweep run verified)") + " (bar: >= 0.90)")),
    ]
    rcd = m["default_rc"]
    print(f"MRC (NSCC) / RC (DCQCN) goodput, both with defaults: "
          f"{d['results']['mb_per_s'] / max(1e-9, rcd['results']['mb_per_s']):.2f}")
    print("acceptance (measured in this run):")
    for ok, text in checks:
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")
    print(f"wall {time.monotonic() - t0:.0f} s")
    res["checks"] = [{"ok": ok, "text": t} for ok, t in checks]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(res, indent=1, default=str))
    if args.json:
        print(json.dumps(res["checks"], indent=1))
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
