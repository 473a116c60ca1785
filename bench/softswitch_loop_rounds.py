"""Rounds of 64 frames through the packet loop's ingress batch, traffic manager and egress round.

For machine-instruction counts of the loop's whole in-process path (no sockets: the frames go to a
tx hook), which a shared machine's load does not move: run it under callgrind with two round
counts and divide the difference of the totals by the extra frames, e.g.

    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/softswitch_loop_rounds.py mrc 20
    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/softswitch_loop_rounds.py mrc 60

(instructions a frame = (I refs of 60 - I refs of 20) / (40 * 64)).  The program is built and the
path warmed up (20 rounds) first, the same in both runs, so the difference is the rounds alone.
Same frames and tables as ``bench/softswitch_pipeline.py``; docs/softswitch.md, "Eighth round".

Usage: ``python bench/softswitch_loop_rounds.py bench4|mrc ROUNDS``.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import softswitch_pipeline as sp

from controller.p4contract import CPU_PORT
from softswitch.engine.loop import PacketLoop
from softswitch.engine.tm import TrafficManager

WARM_UP = 20
FRAMES = 64


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("bench4", "mrc") or not sys.argv[2].isdigit():
        print("usage: softswitch_loop_rounds.py bench4|mrc ROUNDS", file=sys.stderr)
        return 2
    mrc, rounds = sys.argv[1] == "mrc", int(sys.argv[2])
    pl = sp.build_mrc() if mrc else sp.build()
    frame = sp.mrc_frame(64) if mrc else sp.frame(64)
    in_port = 3 if mrc else 1
    sent = [0]
    loop = PacketLoop(TrafficManager(), [], CPU_PORT)
    loop.set_pipeline(pl)
    loop.set_tx_hook(lambda _port, _data: sent.__setitem__(0, sent[0] + 1))

    def one_round() -> None:
        loop._ingress_batch(in_port, [frame] * FRAMES)
        while loop.tm.total:
            loop._service_tm()

    for _ in range(WARM_UP):
        one_round()
    sent[0] = 0
    for _ in range(rounds):
        one_round()
    if sent[0] != FRAMES * rounds:
        print(f"only {sent[0]} of {FRAMES * rounds} frames forwarded", file=sys.stderr)
        return 1
    print(f"{sys.argv[1]}: {rounds} rounds of {FRAMES} frames forwarded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
