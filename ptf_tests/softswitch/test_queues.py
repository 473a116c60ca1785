"""Priority queues and queue metadata, with rate limits set at run time through the target's
runtime CLI (softswitch cli / simple_switch_CLI ``set_queue_rate``).

bmv2's priority queueing (QueueingLogicPriRL) limits the rate of each priority queue on its own
and serves, among the queue heads whose rate allows them to leave, the highest priority first:
priority 0 (since bmv2's PR #1276 a packet's priority is its queue id, and queue 0 is served first).
So: port 4's queues are limited to RATE_PPS except priority 0; a burst of low-priority packets
followed by high-priority ones must see every high one overtake the queued low ones, low ones stay
FIFO at the configured rate, and the program's copy of enq_qdepth grows through the low burst.
enq_qdepth counts the packet's own priority queue (bmv2 since its PR #1270; bmv2 1.15.5 read 0
for every high packet here), so the unlimited high queue reads (near) 0 behind the low backlog.
"""
from __future__ import annotations

import struct

from base.p4rt_test import autocleanup
from ptf.testutils import group
from subset_base import SubsetTest, eth

SLOW_PORT, RATE_PPS, N_EACH = 4, 4, 8  # 250 ms a low packet: room for a slow sender on a loaded machine
LOW, HIGH = 7, 0  # priority 0 is served first
Q_FMT = "!BBBBIII"
SLACK_US = 2_000  # 1/125 of a low packet's interval


def q_frame(prio: int, seq: int) -> bytes:
    return eth(struct.pack(Q_FMT, prio, seq, 0xFF, 0, 0, 0, 0))


@group("queues")
class StrictPriorityTest(SubsetTest):
    program = "queues"

    @autocleanup
    def runTest(self):
        self.runtime_command("set_queue_rate", RATE_PPS, SLOW_PORT)
        self._undo.append((None, lambda: self.runtime_command("set_queue_rate", 0, SLOW_PORT)))
        self.runtime_command("set_queue_rate", 0, SLOW_PORT, HIGH)
        sent = [(LOW, seq) for seq in range(N_EACH)] + [(HIGH, N_EACH + seq) for seq in range(N_EACH)]
        for prio, seq in sent:
            self.send(1, q_frame(prio, seq))
        out = [struct.unpack(Q_FMT, f[14:14 + struct.calcsize(Q_FMT)])
               for f in self.recv_n(SLOW_PORT, len(sent), timeout=5.0)]
        self.expect_silence([1, 2, 3, 4])
        order = [(prio, seq) for prio, seq, *_ in out]
        self.assertEqual(sorted(order, key=lambda x: x[1]), sent, "packets lost or duplicated")
        for prio, _, out_prio, *_ in out:
            self.assertEqual(out_prio, prio, "egress saw a different priority")

        # strict priority, judged by what was queued when each packet left (not by the sender's
        # speed: a loaded sender or a switch that reads a burst in one batch may interleave them):
        # a low packet never leaves while a high one is waiting, i.e. every high packet that leaves
        # after a low one was enqueued after that low one left (same µs clock on both targets;
        # SLACK_US covers bmv2's ingress and egress threads racing for the same microseconds)
        left_us = {seq: ts + waited for _, seq, _, _, _, waited, ts in out}
        enq_us = {seq: ts for _, seq, _, _, _, _, ts in out}
        for i, (prio, seq) in enumerate(order):
            if prio != LOW:
                continue
            waiting = [h for p, h in order[i + 1:] if p == HIGH and enq_us[h] < left_us[seq] - SLACK_US]
            self.assertFalse(waiting, f"low {seq} left at {left_us[seq]} µs while high {waiting} waited: {order}")
        # and the test saw priority at work: high packets overtook lows that were queued before them
        overtaken = [s for i, (p, s) in enumerate(order) if p == LOW and any(q == HIGH for q, _ in order[:i])]
        self.assertGreaterEqual(len(overtaken), N_EACH // 2, f"too few lows were overtaken: {order}")
        self.assertEqual([s for p, s in order if p == LOW], list(range(N_EACH)), "FIFO within a queue")

        by_seq = {seq: (qdepth, waited) for _, seq, _, _, qdepth, waited, _ in out}
        lows = [by_seq[s][0] for s in range(N_EACH)]
        highs = [by_seq[s][0] for s in range(N_EACH, 2 * N_EACH)]
        self.assertLessEqual(lows[0], 1, f"enq_qdepth of the low burst: {lows}")
        self.assertEqual(lows[1:], sorted(lows[1:]), f"enq_qdepth of the low burst: {lows}")
        self.assertGreaterEqual(lows[-1], N_EACH - 3, f"enq_qdepth of the low burst: {lows}")
        # the high ones do not count the low backlog: the k-th high packet finds at most the k
        # highs before it in its own queue (all priorities counted, the first would read >= 5)
        self.assertTrue(all(d <= k for k, d in enumerate(highs)), f"enq_qdepth of the high burst: {highs}")
        # lows leave at the configured rate: the last one waited for ~N_EACH-1 intervals;
        # highs are not held by the lows' rate limit
        interval_us = 1_000_000 // RATE_PPS
        self.assertGreaterEqual(by_seq[N_EACH - 1][1], (N_EACH - 3) * interval_us,
                                f"deq_timedelta (µs) of the last low packet at {RATE_PPS} pps")
        self.assertLess(max(by_seq[s][1] for s in range(N_EACH, 2 * N_EACH)), 3 * interval_us,
                        "deq_timedelta (µs) of the high-priority packets")
