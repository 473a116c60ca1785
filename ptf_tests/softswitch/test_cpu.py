"""Controller I/O: PacketIn with its controller-header metadata, PacketOut steered by its header,
digests configured with a DigestEntry, delivered as DigestList and acknowledged on the stream."""
from __future__ import annotations

import queue
import struct

from base.p4rt_test import autocleanup
from p4.v1 import p4runtime_pb2
from ptf.testutils import group
from subset_base import SubsetTest, eth, program_constants

_C = program_constants("cpu")
OP_FWD_NONE, OP_PUNT, OP_LEARN, REASON_PUNT = (_C[k] for k in ("OP_FWD_NONE", "OP_PUNT", "OP_LEARN", "REASON_PUNT"))
MAC_A, MAC_B = bytes.fromhex("0a0000000001"), bytes.fromhex("0a00000000b2")


def c_frame(op: int, src: bytes | None = None, tag: bytes = b"controller-io") -> bytes:
    return eth(struct.pack("!BBH", op, 0, 0) + tag, **({"src": src} if src else {}))


class CpuTest(SubsetTest):
    program = "cpu"


@group("packetio")
class PacketInTest(CpuTest):
    """A punted frame arrives as PacketIn, metadata decoded by name, payload without the header."""

    @autocleanup
    def runTest(self):
        for port in (1, 3):
            frame = c_frame(OP_PUNT, tag=b"from-port-%d" % port)
            self.send(port, frame)
            pin = self.get_packet_in()
            self.assertEqual(pin.payload, frame)
            self.assertEqual(pin.metadata, {"ingress_port": port, "_pad": 0, "reason": REASON_PUNT})
        self.expect_silence([1, 2, 3, 4])


@group("packetio")
class PacketOutTest(CpuTest):
    """PacketOut enters ingress on the CPU port; the program sends it where its header says."""

    @autocleanup
    def runTest(self):
        for port in (4, 2):
            frame = c_frame(OP_FWD_NONE, tag=b"to-port-%d" % port)
            self.send_packet_out(frame, egress_port=port)
            out = self.recv(port)
            self.assertEqual(len(out), len(frame), "the packet_out header was not removed")
            self.assertEqual(out[15], 1, "ingress did not see the PacketOut's header")
            self.assertEqual(out[:15] + out[16:], frame[:15] + frame[16:])
        self.verify_no_packet_in()


@group("digests")
class DigestTest(CpuTest):
    """Learned (src MAC, port) tuples come as DigestLists; a tuple is not repeated until acked."""

    def digest_entry(self, configured: bool) -> p4runtime_pb2.Entity:
        e = p4runtime_pb2.Entity()
        e.digest_entry.digest_id = self.p4info.get_id("digests", "learn_t")
        if configured:
            e.digest_entry.config.max_timeout_ns = 50_000_000
            e.digest_entry.config.max_list_size = 2
            e.digest_entry.config.ack_timeout_ns = 60_000_000_000
        return e

    def collect(self, n: int) -> tuple[set[tuple[int, int]], list[p4runtime_pb2.DigestList]]:
        """Read DigestLists until ``n`` tuples came; returns the tuples and the lists."""
        values: set[tuple[int, int]] = set()
        lists = []
        while len(values) < n:
            try:
                lst = self.client.digests.get(timeout=5.0)
            except queue.Empty:
                self.fail(f"only {len(values)} of {n} digest tuples arrived")
            self.assertEqual(lst.digest_id, self.p4info.get_id("digests", "learn_t"))
            lists.append(lst)
            for data in lst.data:
                src, port = (int.from_bytes(m.bitstring, "big") for m in data.struct.members)
                values.add((src, port))
        return values, lists

    def no_digest(self, timeout: float = 0.5) -> None:
        try:
            lst = self.client.digests.get(timeout=timeout)
        except queue.Empty:
            return
        self.fail(f"unexpected DigestList {lst}")

    @autocleanup
    def runTest(self):
        self.client.write(p4runtime_pb2.Update.INSERT, self.digest_entry(True))
        self._undo.append((None, lambda: self.client.write(p4runtime_pb2.Update.DELETE,
                                                           self.digest_entry(False))))
        self.send(1, c_frame(OP_LEARN, src=MAC_A))
        self.send(3, c_frame(OP_LEARN, src=MAC_B))
        self.recv_n(2, 2)  # learning does not stop forwarding
        values, lists = self.collect(2)
        a, b = int.from_bytes(MAC_A, "big"), int.from_bytes(MAC_B, "big")
        self.assertEqual(values, {(a, 1), (b, 3)})

        self.send(1, c_frame(OP_LEARN, src=MAC_A))  # still unacknowledged: no new digest
        self.recv(2)
        self.no_digest()

        for lst in lists:
            self.client.ack_digest(lst.digest_id, lst.list_id)
        # acknowledged: learned again (the ack travels on the stream, asynchronously to the
        # data plane, so a packet racing it may still be filtered: retry a bounded number of times)
        for _ in range(10):
            self.send(1, c_frame(OP_LEARN, src=MAC_A))
            self.recv(2)
            try:
                lst = self.client.digests.get(timeout=0.5)
                break
            except queue.Empty:
                continue
        else:
            self.fail("an acknowledged tuple was never learned again")
        got = {tuple(int.from_bytes(m.bitstring, "big") for m in d.struct.members) for d in lst.data}
        self.assertEqual(got, {(a, 1)})
        self.client.ack_digest(lst.digest_id, lst.list_id)
