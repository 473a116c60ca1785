"""``python -m softswitch.diff PROGRAM.p4 SCRIPT.json``: run a script through softswitch and, when
installed, bmv2; print every difference and exit 1 if there is one (2 if bmv2 is required but
missing)."""
from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from softswitch.diff.compare import compare, per_port
from softswitch.diff.normalise import NORMALISERS
from softswitch.diff.script import ScriptError, load_script
from softswitch.diff.softside import run_softswitch


def port_differences(soft: list[list[tuple[int, bytes]]], bmv2: dict[int, list[bytes]],
                     normalise: Callable[[bytes], bytes] | None = None) -> list[str]:
    """Per output port, softswitch's frames against bmv2's, in order (pcap runs lose the link
    from an input to its outputs, so frames are paired by position on each port); ``normalise``
    (``softswitch.diff.normalise``) is applied to both sides first."""
    out = []
    sp = per_port(soft)
    if normalise is not None:
        sp = {p: [(i, normalise(d)) for i, d in v] for p, v in sp.items()}
        bmv2 = {p: [normalise(d) for d in v] for p, v in bmv2.items()}
    for port in sorted(set(sp) | set(bmv2)):
        a, b = sp.get(port, []), bmv2.get(port, [])
        for k in range(max(len(a), len(b))):
            fa = a[k] if k < len(a) else None
            fb = b[k] if k < len(b) else None
            if fa is None or fb is None or fa[1] != fb:
                src = f"input #{fa[0]}" if fa is not None else "no softswitch frame"
                out.append(f"port {port} frame {k} ({src}): softswitch "
                           f"{fa[1].hex() if fa else '-'} bmv2 {fb.hex() if fb is not None else '-'}")
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
    soft = run_softswitch(program, script, a.cpu_port)
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
        bm = run_bmv2(a.program.resolve(), script, wd, cpu_port=a.cpu_port, defines=defines)
    diffs = port_differences(soft, bm, NORMALISERS[a.normalise] if a.normalise else None)
    print(f"softswitch vs bmv2: {len(diffs)} differences ({sum(len(v) for v in bm.values())} bmv2 frames)")
    for line in diffs[:a.max_shown]:
        print("  " + line)
    return int(failed or bool(diffs))


if __name__ == "__main__":
    sys.exit(main())
