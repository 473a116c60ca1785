"""``python -m softswitch.diff PROGRAM.p4 SCRIPT.json``: run a script through softswitch and, when
installed, bmv2; print every difference and exit 1 if there is one (2 if bmv2 is required but
missing)."""
from __future__ import annotations

import argparse
import sys
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path

from softswitch.diff.compare import compare
from softswitch.diff.normalise import NORMALISERS
from softswitch.diff.script import ScriptError, load_script
from softswitch.diff.softside import run_softswitch


def port_differences(departures: list[tuple[int, int, int, bytes]], bmv2: dict[int, list[bytes]],
                     normalise: Callable[[bytes], bytes] | None = None) -> list[str]:
    """Per output port, softswitch's frames against bmv2's (``departures``: softswitch's frames as
    ``run_softswitch`` logs them, (port, priority queue, input number, bytes) in departure order;
    ``normalise`` (``softswitch.diff.normalise``) is applied to both sides first).  A pcap run loses
    the link from an input to its outputs, and a port's priority queues interleave its frames by
    timing (bmv2 serves queue 0 first, each queue at its own rate, from real arrival times; a pcap
    replay and a virtual clock do not share them), so a port's frames are matched as a multiset --
    every frame on one side must have an equal frame on the other -- and then, queue by queue, in
    order: a queue is a FIFO on both targets, so the frames of one queue leave in the same order."""
    sp: dict[int, list[tuple[int, int, bytes]]] = {}
    for port, pri, idx, data in departures:
        sp.setdefault(port, []).append((idx, pri, normalise(data) if normalise else data))
    bm = {p: [normalise(d) if normalise else d for d in v] for p, v in bmv2.items()}
    out = []
    for port in sorted(set(sp) | set(bm)):
        a, b = sp.get(port, []), bm.get(port, [])
        pool: dict[bytes, deque[int]] = {}  # frame -> its positions among softswitch's, in order
        for k, (_i, _q, d) in enumerate(a):
            pool.setdefault(d, deque()).append(k)
        latest: dict[int, int] = {}  # queue -> latest softswitch position matched so far
        for j, d in enumerate(b):
            ks = pool.get(d)
            if not ks:
                out.append(f"port {port}: bmv2 frame {j} has no equal softswitch frame: {d.hex()}")
                continue
            k = ks.popleft()
            idx, pri, _ = a[k]
            if k < latest.get(pri, -1):
                out.append(f"port {port} queue {pri}: bmv2 frame {j} (softswitch's from input #{idx}) "
                           "left after a frame softswitch sent after it from the same queue")
            latest[pri] = max(k, latest.get(pri, -1))
        for ks in pool.values():
            for k in ks:
                idx, pri, d = a[k]
                out.append(f"port {port}: softswitch frame {k} (input #{idx}, queue {pri}) has no equal "
                           f"bmv2 frame: {d.hex()}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m softswitch.diff", description=__doc__)
    ap.add_argument("program", type=Path)
    ap.add_argument("script", type=Path)
    ap.add_argument("--bmv2", choices=("auto", "require", "off"), default="auto",
                    help="run bmv2 too: when installed (auto), or fail without it (require)")
    ap.add_argument("--cpu-port", type=int, default=None)
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    ap.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    ap.add_argument("--workdir", type=Path, default=None, help="keep bmv2's files here")
    ap.add_argument("--max-shown", type=int, default=20, help="differences printed per comparison")
    ap.add_argument("--normalise", choices=sorted(NORMALISERS), default=None,
                    help="mask fields that report time or load (bmv2 replays pcaps without timing) "
                         "before comparing against bmv2")
    a = ap.parse_args(argv)
    from softswitch.frontend import load_program
    from softswitch.frontend.errors import P4Error

    defines = dict(d.split("=", 1) if "=" in d else (d, "") for d in a.defines)
    try:
        program = load_program(str(a.program), defines, a.includes)
        script = load_script(a.script)
    except (P4Error, ScriptError) as e:
        print(e, file=sys.stderr)
        return 1
    departures: list[tuple[int, int, int, bytes]] = []
    soft = run_softswitch(program, script, a.cpu_port, departures)
    nframes = sum(len(f) for f in soft)
    print(f"softswitch: {len(script.packets)} packets in, {nframes} frames out")
    failed = False
    expected = [p.expect for p in script.packets]
    if any(e is not None for e in expected):
        idx = [i for i, e in enumerate(expected) if e is not None]
        diffs = compare([soft[i] for i in idx], [expected[i] for i in idx])
        print(f"softswitch vs the script's expectations: {len(diffs)} differences in {len(idx)} packets")
        for d in diffs[:a.max_shown]:
            d.index = idx[d.index]
            print("  " + d.describe("softswitch", "expected"))
        failed |= bool(diffs)
    from softswitch.diff.bmv2side import bmv2_missing, run_bmv2
    why = bmv2_missing() if a.bmv2 != "off" else "--bmv2 off"
    if why is not None:
        print(f"bmv2: skipped ({why})")
        return 2 if a.bmv2 == "require" else int(failed)
    with tempfile.TemporaryDirectory(prefix="softswitch-diff-") as tmp:
        wd = a.workdir or Path(tmp)
        # every port softswitch sent to gets a file, but the CPU port: bmv2 sends its frames as
        # PacketIns on the P4Runtime stream, which run_bmv2 returns as that port's frames
        bm = run_bmv2(a.program.resolve(), script, wd, cpu_port=a.cpu_port, defines=defines,
                      includes=a.includes, ports={d[0] for d in departures if d[0] != a.cpu_port})
    diffs = port_differences(departures, bm, NORMALISERS[a.normalise] if a.normalise else None)
    print(f"softswitch vs bmv2: {len(diffs)} differences ({sum(len(v) for v in bm.values())} bmv2 frames)")
    for line in diffs[:a.max_shown]:
        print("  " + line)
    return int(failed or bool(diffs))


if __name__ == "__main__":
    sys.exit(main())
