"""Bytecodes and Python calls per packet on softswitch's packet path, counted (not timed).

A timing on a shared machine moves with the other jobs' load; the number of bytecode instructions
CPython executes and the Python-level calls it makes per packet do not, so this is the figure to
compare two versions of the generated code with (run it on each: same frames, same tables as
``bench/softswitch_pipeline.py``).  Counted with ``sys.settrace`` opcode events over 64 packets
after a warm-up, either through the pipeline's loop entry points alone (``ingress_item`` +
``egress_frame``) or, with ``--loop``, through the packet loop's ingress batch, traffic manager and
egress round as well (frames handed to a tx hook, no sockets).  The 20 functions that execute
the most bytecodes are listed.

``--lines N``: also list the N source lines of the generated code (``CompiledBlocks.source``,
``V1Pipeline.fast_source``) that execute the most bytecodes, with their text.

``--rounds N``: instead of counting, run N rounds of 64 frames through the loop untraced, for
machine-instruction counts under callgrind (which the load does not move either): run it with two
round counts and divide the difference of the totals by the extra frames, e.g.

    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/softswitch_bytecodes.py --program mrc --rounds 20
    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/softswitch_bytecodes.py --program mrc --rounds 60

(instructions a frame = (I refs of 60 - I refs of 20) / (40 * 64); the build and the warm-up are the
same in both runs, so the difference is the rounds alone).

Usage: ``python bench/softswitch_bytecodes.py [--program bench4|mrc] [--size 64] [--loop | --rounds N] [--lines N]``.
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import softswitch_pipeline as sp

from controller.p4contract import CPU_PORT
from softswitch.engine.loop import PacketLoop
from softswitch.engine.tm import TrafficManager

PACKETS = 64


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", choices=["bench4", "mrc"], default="bench4")
    ap.add_argument("--size", type=int, default=64, help="frame size in bytes")
    ap.add_argument("--loop", action="store_true", help="through the packet loop and traffic manager too")
    ap.add_argument("--rounds", type=int, default=0,
                    help="run N rounds through the loop untraced (for callgrind's instruction counts) instead")
    ap.add_argument("--lines", type=int, default=0, help="also list the N generated source lines that run the most bytecodes")
    args = ap.parse_args()
    mrc = args.program == "mrc"
    pl = sp.build_mrc() if mrc else sp.build()
    frame = sp.mrc_frame(args.size) if mrc else sp.frame(args.size)
    in_port = 3 if mrc else 1
    ingress, egress = pl.ingress_item, pl.egress_frame
    sent = [0]
    loop = PacketLoop(TrafficManager(), [], CPU_PORT)
    loop.set_pipeline(pl)
    loop.set_tx_hook(lambda _port, _data: sent.__setitem__(0, sent[0] + 1))

    def pipeline_only() -> None:
        for i in range(PACKETS):
            if egress(ingress(frame, in_port, i), i).__class__ is not bytes:
                raise SystemExit("bench packet not forwarded as one frame")

    def through_loop() -> None:
        loop._ingress_batch(in_port, [frame] * PACKETS)
        while loop.tm.total:
            loop._service_tm()

    run = through_loop if args.loop or args.rounds else pipeline_only
    for _ in range(20):  # warm-up: pools filled, specialised bytecode in place
        run()
    sent[0] = 0
    if args.rounds:
        for _ in range(args.rounds):
            run()
        if sent[0] != PACKETS * args.rounds:
            raise SystemExit(f"only {sent[0]} of {PACKETS * args.rounds} frames forwarded")
        print(f"{args.program} {args.size} B: {args.rounds} rounds of {PACKETS} frames through the loop")
        return
    ops: collections.Counter = collections.Counter()
    lines: collections.Counter = collections.Counter()
    calls = [0]

    def tracer(frame_, event, _arg):
        frame_.f_trace_opcodes = True
        if event == "opcode":
            ops[frame_.f_code.co_name] += 1
            lines[(frame_.f_code.co_filename, frame_.f_code.co_name, frame_.f_lineno)] += 1
        elif event == "call":
            calls[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    if args.loop and sent[0] != PACKETS:
        raise SystemExit(f"only {sent[0]} of {PACKETS} frames forwarded")
    total = sum(ops.values())
    print(f"{args.program} {args.size} B, {'packet loop + TM' if args.loop else 'pipeline entry points'}: "
          f"{total / PACKETS:.0f} bytecodes and {(calls[0] - 1) / PACKETS:.1f} Python calls per packet")
    for name, n in ops.most_common(20):
        print(f"  {n / PACKETS:8.1f}  {name}")
    if args.lines:
        sources = {"<p4:": pl.blocks.source.split("\n"), "<fastpath:": (pl.fast_source or "").split("\n")}
        print(f"the {args.lines} generated lines that run the most bytecodes (a packet, function, line, text):")
        shown = 0
        for (fname, func, lineno), n in lines.most_common():
            text = next((src for prefix, src in sources.items() if fname.startswith(prefix)), None)
            if text is None or not 0 < lineno <= len(text):
                continue  # the engine's own code: its files are on disk
            print(f"  {n / PACKETS:8.1f}  {func:14s} {lineno:6d}  {text[lineno - 1].strip()[:120]}")
            shown += 1
            if shown == args.lines:
                break


if __name__ == "__main__":
    main()
