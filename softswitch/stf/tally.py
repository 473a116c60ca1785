"""``python -m softswitch.stf.tally CORPUS_DIR``: run every ``X.p4`` that has an ``X.stf`` beside it
and print the tally: passed, failed (misruns), rejected by feature, load errors, crashes.

Made for p4c's ``testdata/p4_16_samples`` (``*-bmv2.p4`` with their ``.stf``), kept outside this
repository.  Each program runs in its own ``python -m softswitch.stf --json`` process with a
time limit, ``-j`` at a time.  Exit status 0 when nothing failed or crashed, 1 otherwise.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

STATUSES = ("pass", "fail", "rejected", "error", "stf-error", "crash", "timeout", "unsendable")


def find_pairs(corpus: Path, pattern: str = "*.p4") -> list[tuple[Path, Path]]:
    """(program, stf) pairs in ``corpus`` whose program name matches ``pattern``, sorted."""
    out = []
    for p in sorted(corpus.glob("*.p4")):
        if fnmatch.fnmatch(p.name, pattern) and p.with_suffix(".stf").is_file():
            out.append((p, p.with_suffix(".stf")))
    return out


def run_one(program: Path, stf: Path, timeout_s: float, loop_path: bool = False,
            process: str | None = None) -> dict:
    """One pair in a child process -> its JSON result (status ``timeout`` when it ran over)."""
    cmd = [sys.executable, "-m", "softswitch.stf", "--json", str(program), str(stf),
           "-I", str(program.parent), *(["--loop-path"] if loop_path else []),
           *(["--process", "--target", process] if process else [])]
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"over {timeout_s:g} s"}
    lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"status": "crash", "message": (cp.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def reason(r: dict) -> str:
    """The short cause of a non-pass, for grouping (the feature for rejections)."""
    if r["status"] == "rejected":
        return r.get("feature", r.get("message", ""))
    if r["status"] == "fail":
        return r.get("first_failure") or ""
    if r["status"] == "unsendable":
        return f"{r.get('unsent')} of {r.get('packets')} packets not sendable on a veth; " + (r.get("first_failure") or "")
    return r.get("message", "")


def tally(results: dict[str, dict]) -> str:
    """The printed summary of ``results`` (program name -> result)."""
    counts = Counter(r["status"] for r in results.values())
    lines = [f"{len(results)} programs: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)]
    rej = Counter(reason(r) for r in results.values() if r["status"] == "rejected")
    if rej:
        lines.append("rejected, by feature:")
        for feat, n in rej.most_common():
            names = sorted(k for k, r in results.items() if r["status"] == "rejected" and reason(r) == feat)
            lines.append(f"  {n:3d}  {feat}: {' '.join(names)}")
    for st in ("fail", "error", "stf-error", "crash", "timeout", "unsendable"):
        bad = sorted(k for k, r in results.items() if r["status"] == st)
        if bad:
            lines.append(f"{st}:")
            lines.extend(f"  {k}: {reason(results[k])}" for k in bad)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from mrc_fabric.targets import TARGETS, selected_target

    ap = argparse.ArgumentParser(prog="python -m softswitch.stf.tally", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="directory of PROGRAM.p4 + PROGRAM.stf pairs")
    ap.add_argument("--pattern", default="*.p4", help="program file names to run (glob, default *.p4)")
    ap.add_argument("--only", type=Path, default=None,
                    help="file listing the program names to run, one a line (e.g. those bmv2 passes)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per program")
    ap.add_argument("--json", type=Path, default=None, help="also write every result here")
    ap.add_argument("--loop-path", action="store_true",
                    help="run packets as the switch loop does (header objects recycled between packets)")
    ap.add_argument("--process", action="store_true",
                    help="run each program through a switch process over P4Runtime and veths (needs root)")
    ap.add_argument("--target", choices=TARGETS, default=selected_target(),
                    help="with --process: the switch (default: $TARGET, else softswitch)")
    a = ap.parse_args(argv)
    a.process = a.target if a.process else None
    if a.process is not None:
        from softswitch.stf.process import target_missing

        why = target_missing(a.process)
        if why is not None:
            print(f"{a.process} cannot run here: {why}", file=sys.stderr)
            return 2
    pairs = find_pairs(a.corpus, a.pattern)
    if a.only is not None:
        keep = {ln.strip() for ln in a.only.read_text().splitlines() if ln.strip() and not ln.startswith("#")}
        pairs = [(p, s) for p, s in pairs if p.name in keep or p.stem in keep]
    if not pairs:
        print(f"no PROGRAM.p4 + PROGRAM.stf pairs in {a.corpus}", file=sys.stderr)
        return 2
    results: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_one, p, s, a.timeout, a.loop_path, a.process): p.name for p, s in pairs}
        for i, (fut, name) in enumerate(futs.items(), 1):
            results[name] = r = fut.result()
            print(f"[{i}/{len(pairs)}] {r['status']:9s} {name}", file=sys.stderr, flush=True)
    print(tally(results))
    if a.json is not None:
        a.json.write_text(json.dumps(results, indent=1, sort_keys=True))
    return int(any(r["status"] in ("fail", "crash") for r in results.values()))


if __name__ == "__main__":
    sys.exit(main())
