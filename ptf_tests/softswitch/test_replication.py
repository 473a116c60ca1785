"""Replication: clone I2E and E2E with a preserved field list (and a field outside it), clone
session truncation, recirculation preserving a field, truncate(), multicast with egress_rid."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from base.p4rt_test import autocleanup
from p4.v1 import p4runtime_pb2
from ptf import testutils
from ptf.testutils import group
from subset_base import SubsetTest, eth, program_constants

_C = program_constants("replication")
OP_CLONE_I2E, OP_CLONE_E2E, OP_RECIRC, OP_TRUNCATE, OP_MCAST, OP_MCAST_PRUNE, OP_RESUBMIT = (
    _C[k] for k in ("OP_CLONE_I2E", "OP_CLONE_E2E", "OP_RECIRC", "OP_TRUNCATE", "OP_MCAST", "OP_MCAST_PRUNE", "OP_RESUBMIT"))
NORMAL, I2E_CLONE, E2E_CLONE, RECIRCULATED, REPLICATED, RESUBMITTED = 0, 1, 2, 4, 5, 6  # bmv2's
R_FMT = "!BBBBHHII"


@dataclass
class R:
    op: int
    arg: int
    inst: int
    passes: int
    rid: int
    port: int
    kept: int
    lost: int


def r_frame(op: int, arg: int, pad: int = 20) -> bytes:
    return eth(struct.pack(R_FMT, op, arg, 0xFF, 0, 0, 0, 0, 0) + bytes(range(pad)))


def r_fields(frame: bytes) -> R:
    return R(*struct.unpack(R_FMT, frame[14:14 + struct.calcsize(R_FMT)]))


class ReplicationTest(SubsetTest):
    program = "replication"


@group("clone")
class CloneI2ETest(ReplicationTest):
    """The ingress clone goes to the session's port with only the field-list field preserved."""

    @autocleanup
    def runTest(self):
        self.insert_clone_session(5, [3])
        frame = r_frame(OP_CLONE_I2E, 5)
        self.send(1, frame)
        orig, clone = r_fields(self.recv(2)), self.recv(3)
        self.assertEqual((orig.inst, orig.port, orig.kept, orig.lost), (NORMAL, 2, 0x11110005, 0x22220000))
        self.assertEqual(len(clone), len(frame))
        c = r_fields(clone)
        self.assertEqual((c.inst, c.port), (I2E_CLONE, 3))
        self.assertEqual(c.kept, 0x11110005, "field-list field not preserved")
        self.assertEqual(c.lost, 0, "a field outside the field list reached the clone")
        self.expect_silence([1, 2, 3, 4])


@group("clone")
class CloneE2ETest(ReplicationTest):
    """An egress clone of the deparsed packet runs egress again as EGRESS_CLONE."""

    @autocleanup
    def runTest(self):
        self.insert_clone_session(6, [4])
        self.send(1, r_frame(OP_CLONE_E2E, 6))
        orig, clone = r_fields(self.recv(2)), r_fields(self.recv(4))
        self.assertEqual((orig.inst, orig.port, orig.kept), (NORMAL, 2, 0))
        self.assertEqual((clone.inst, clone.port), (E2E_CLONE, 4))
        self.assertEqual(clone.kept, 0x33330006, "field-list field not preserved")
        self.assertEqual(clone.lost, 0, "a field outside the field list reached the clone")
        self.expect_silence([1, 2, 3, 4])


@group("clone")
@group("truncate")
class CloneSessionTruncationTest(ReplicationTest):
    """packet_length_bytes of the clone session cuts the clone, not the original."""

    @autocleanup
    def runTest(self):
        if not self.switch_target.can_truncate_clones:
            self.skipTest(f"{self.target}'s P4Runtime server rejects a clone session with "
                          "packet_length_bytes (bmv2/PI: UNKNOWN, no details): truncating clone "
                          "sessions are not supported there")
        self.insert_clone_session(7, [3], truncate=20)
        frame = r_frame(OP_CLONE_I2E, 7, pad=40)
        self.send(1, frame)
        orig, clone = self.recv(2), self.recv(3)
        self.assertEqual(len(orig), len(frame))
        self.assertEqual(len(clone), 20)
        self.assertEqual(clone[:14], frame[:14])


@group("recirculate")
class RecirculateTest(ReplicationTest):
    """Egress recirculates twice; the preserved field of the last pass reaches the output.

    Ingress sees instance_type RECIRCULATED; like bmv2, a unicast packet is NORMAL again in egress.
    """

    @autocleanup
    def runTest(self):
        self.send(1, r_frame(OP_RECIRC, 3))
        out = r_fields(self.recv(2))
        self.assertEqual(out.passes, 3)
        self.assertEqual(out.lost, 0x66660000 | RECIRCULATED, "ingress instance_type of the last pass")
        self.assertEqual(out.inst, NORMAL)
        self.assertEqual(out.kept, 0x55550002, "field list not preserved across recirculation")
        self.expect_silence([1, 2, 3, 4])


@group("recirculate")
class ResubmitTest(ReplicationTest):
    """Resubmit re-runs ingress on the original packet (first-pass edits gone) with the field list."""

    @autocleanup
    def runTest(self):
        self.send(3, r_frame(OP_RESUBMIT, 0x42))
        out = r_fields(self.recv(2))
        self.assertEqual(out.lost, 0x66660000 | RESUBMITTED, "ingress instance_type of the second pass")
        self.assertEqual(out.kept, 0x77770042, "field list not preserved across resubmit")
        self.assertEqual(out.passes, 0, "a first-pass header edit survived the resubmit")
        self.assertEqual(out.inst, NORMAL)
        # bmv2 1.15 starts the resubmitted pass from reset standard_metadata: ingress_port 0
        # (measured; docs/softswitch.md); softswitch does the same
        self.assertEqual(out.arg, 0, "ingress_port of the resubmitted pass")
        self.expect_silence([1, 2, 3, 4])


@group("truncate")
class TruncateTest(ReplicationTest):
    """truncate(n) sends only the first n bytes of the deparsed packet."""

    @autocleanup
    def runTest(self):
        frame = r_frame(OP_TRUNCATE, 24, pad=60)
        self.send(1, frame)
        out = self.recv(2)
        self.assertEqual(len(out), 24)
        self.assertEqual(out[:16], frame[:16])
        # a limit longer than the packet leaves it whole
        frame = r_frame(OP_TRUNCATE, 200, pad=10)
        self.send(1, frame)
        self.assertEqual(len(self.recv(2)), len(frame))


@group("multicast")
class MulticastTest(ReplicationTest):
    """A multicast group written over P4Runtime: one copy per replica, egress_rid = instance."""

    @autocleanup
    def runTest(self):
        self.insert_multicast_group(7, [(2, 1), (3, 2), (4, 3)])
        self.insert_multicast_group(8, [(2, 9), (2, 10)])
        self.send(1, r_frame(OP_MCAST, 7))
        for port, rid in ((2, 1), (3, 2), (4, 3)):
            out = r_fields(self.recv(port))
            self.assertEqual((out.inst, out.port, out.rid), (REPLICATED, port, rid))
        self.expect_silence([1, 2, 3, 4])
        # two replicas on one port differ only by their rid
        self.send(1, r_frame(OP_MCAST, 8))
        rids = sorted(r_fields(self.recv(2)).rid for _ in range(2))
        self.assertEqual(rids, [9, 10])
        self.expect_silence([1, 2, 3, 4])
        # egress keeps ingress_port for every replica and may drop one (source pruning)
        self.insert_multicast_group(9, [(1, 1), (2, 2), (3, 3)])
        self.send(3, r_frame(OP_MCAST_PRUNE, 9))
        for port, rid in ((1, 1), (2, 2)):
            self.assertEqual(r_fields(self.recv(port)).rid, rid)
        self.expect_silence([1, 2, 3, 4])


@group("clone")
class CloneSessionReplicasTest(ReplicationTest):
    """A clone session with two replicas: one clone per port, egress_rid = the replica's instance."""

    @autocleanup
    def runTest(self):
        entity_ports = [(3, 11), (4, 12)]
        e = p4runtime_pb2.Entity()
        cs = e.packet_replication_engine_entry.clone_session_entry
        cs.session_id = 9
        for port, instance in entity_ports:
            cs.replicas.add(egress_port=port, instance=instance)
        self.insert(e)
        self.send(1, r_frame(OP_CLONE_I2E, 9))
        self.assertEqual(r_fields(self.recv(2)).inst, NORMAL)
        for port, instance in entity_ports:
            c = r_fields(self.recv(port))
            self.assertEqual((c.inst, c.port, c.rid, c.kept), (I2E_CLONE, port, instance, 0x11110009))
        self.expect_silence([1, 2, 3, 4])


@group("clone")
@group("packetio")
class CloneToCpuTest(ReplicationTest):
    """A clone session whose replica is the CPU port delivers the clone as a PacketIn."""

    @autocleanup
    def runTest(self):
        cpu = testutils.test_param_get("cpu_port")  # the runner's, read from the suite's cpu.p4
        self.assertIsNotNone(cpu, "test parameter cpu_port missing (ptf_tests/run_softswitch.py passes it)")
        cpu = int(cpu)
        self.insert_clone_session(10, [cpu])
        frame = r_frame(OP_CLONE_I2E, 10)
        self.send(1, frame)
        self.assertEqual(r_fields(self.recv(2)).inst, NORMAL)
        pin = self.client.packet_ins.get(timeout=5.0)  # no @controller_header here: no metadata
        self.assertEqual(len(pin.payload), len(frame))
        self.assertEqual(list(pin.metadata), [])
        c = r_fields(pin.payload)
        self.assertEqual((c.inst, c.port, c.kept), (I2E_CLONE, cpu, 0x1111000A))
        self.expect_silence([1, 2, 3, 4])
