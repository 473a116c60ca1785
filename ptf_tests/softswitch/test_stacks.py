"""Header stacks: parse loop, push_front/pop_front, constant index writes, StackOutOfBounds."""
from __future__ import annotations

import struct

from base.p4rt_test import autocleanup
from ptf.testutils import group
from subset_base import SubsetTest, eth, program_constants

_C = program_constants("stacks")
OP_PUSH, OP_POP, OP_SET1 = (_C[k] for k in ("OP_PUSH", "OP_POP", "OP_SET1"))


def label(value: int, bos: int, ttl: int = 32) -> bytes:
    return struct.pack("!I", (value << 12) | (bos << 8) | ttl)


def stack_frame(op: int, labels: list[int], label_in: int = 0, payload: bytes = b"PAYLOAD!") -> bytes:
    body = b"".join(label(v, int(i == len(labels) - 1)) for i, v in enumerate(labels))
    return eth(struct.pack("!BBBBI", op, len(labels), 0, 0, label_in) + body + payload)


def parse_out(frame: bytes, n_labels: int) -> tuple[tuple[int, int, int, int], list[tuple[int, int, int]], bytes]:
    """(op header fields, [(label, bos, ttl)], rest) of an output frame with ``n_labels`` labels."""
    op, depth, err, mask, _ = struct.unpack("!BBBBI", frame[14:22])
    labels = []
    for i in range(n_labels):
        (word,) = struct.unpack("!I", frame[22 + 4 * i:26 + 4 * i])
        labels.append((word >> 12, (word >> 8) & 1, word & 0xFF))
    return (op, depth, err, mask), labels, frame[22 + 4 * n_labels:]


@group("stacks")
class ParseLoopTest(SubsetTest):
    """The parser loops until the bottom-of-stack bit: the program reports the depth it saw."""

    program = "stacks"

    @autocleanup
    def runTest(self):
        for n in (0, 1, 2, 4):
            self.send(1, stack_frame(0, list(range(100, 100 + n))))
            (_, depth, err, mask), labels, rest = parse_out(self.recv(2), n)
            self.assertEqual((depth, err), (n, 0), f"{n} labels")
            self.assertEqual(mask, (1 << n) - 1)
            self.assertEqual([lb[0] for lb in labels], list(range(100, 100 + n)))
            self.assertEqual(rest, b"PAYLOAD!")


@group("stacks")
class PushPopTest(SubsetTest):
    """push_front(1) adds a label on top (old ones shift down); pop_front(1) removes the top one."""

    program = "stacks"

    @autocleanup
    def runTest(self):
        self.send(1, stack_frame(OP_PUSH, [7, 8], label_in=0x12345))
        (_, _, _, mask), labels, rest = parse_out(self.recv(2), 3)
        self.assertEqual(mask, 0b111)
        self.assertEqual(labels, [(0x12345, 0, 64), (7, 0, 32), (8, 1, 32)])
        self.assertEqual(rest, b"PAYLOAD!")

        self.send(1, stack_frame(OP_POP, [7, 8, 9]))
        (_, _, _, mask), labels, rest = parse_out(self.recv(2), 2)
        self.assertEqual(mask, 0b011)
        self.assertEqual(labels, [(8, 0, 32), (9, 1, 32)])
        self.assertEqual(rest, b"PAYLOAD!")

        # a full stack: the bottom label falls off on push
        self.send(1, stack_frame(OP_PUSH, [1, 2, 3, 4], label_in=5))
        (_, _, _, mask), labels, _ = parse_out(self.recv(2), 4)
        self.assertEqual(mask, 0b1111)
        self.assertEqual([lb[0] for lb in labels], [5, 1, 2, 3])

        self.send(1, stack_frame(OP_SET1, [1, 2, 3], label_in=0xABCDE))
        _, labels, _ = parse_out(self.recv(2), 3)
        self.assertEqual([lb[0] for lb in labels], [1, 0xABCDE, 3])


@group("stacks")
@group("parser_errors")
class StackOverflowTest(SubsetTest):
    """Five labels without bottom-of-stack overflow the 4-entry stack: StackOutOfBounds in ingress."""

    program = "stacks"

    @autocleanup
    def runTest(self):
        body = b"".join(label(v, 0) for v in (1, 2, 3, 4, 5))
        self.send(1, eth(struct.pack("!BBBBI", 0, 5, 0, 0, 0) + body))
        (_, depth, err, mask), labels, _ = parse_out(self.recv(2), 4)
        self.assertEqual(err, 1, "parser_error != StackOutOfBounds")
        self.assertEqual(depth, 4)
        self.assertEqual(mask, 0b1111)
        self.assertEqual([lb[0] for lb in labels], [1, 2, 3, 4])


@group("stacks")
class LookaheadAdvanceTest(SubsetTest):
    """lookahead<bit<32>> peeks at bytes that advance(32) then removes from the packet."""

    program = "stacks"

    @autocleanup
    def runTest(self):
        self.send(1, eth(struct.pack("!BBBBI", 0, 0xAD, 0, 0, 0) + b"\xde\xad\xbe\xef" + b"rest"))
        out = self.recv(2)
        _, depth, err, _, label_in = struct.unpack("!BBBBI", out[14:22])
        self.assertEqual((depth, err, label_in), (0xAD, 0, 0xDEADBEEF))
        self.assertEqual(out[22:], b"rest", "advanced bytes must not be re-emitted")
