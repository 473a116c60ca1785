"""Trimming through the fabric: with a trim threshold of 0 on the last hop's host port, data packets
arrive cut after their transport headers with lengths fixed and DSCP 11; ACKs, probes and an
already-trimmed packet arrive whole.  Thresholds are restored after the test."""
from __future__ import annotations

from base.fabric_test import FabricTest
from ptf.testutils import group
from scapy.layers.l2 import Ether

from controller import p4contract as P4
from controller.plan import PortSetting
from mrc.wire import codec
from mrc.wire import formats as F
from mrc.wire.layers import is_trimmed


@group("trim")
class TrimLastHopTest(FabricTest):
    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        ev = self.ev_plan(src, dst, "srv6")[0]
        _, _, hops = self.srv6_hops(src, ev)
        last = hops[-1]
        ps = next(p for p in self.plan.switches[last.switch].of(PortSetting) if p.port == last.out_port)
        self.modify_entry(last.switch, P4.T_INGRESS_CONGESTION_QUEUE_THRESHOLDS, {"port": last.out_port},
                          P4.A_INGRESS_CONGESTION_SET_QUEUE_THRESHOLDS,
                          {"trim_threshold": 0, "drop_threshold": ps.drop_threshold})
        enc = self.encap(src, dst, ev.port, codec.ENCAP_SRV6, ev.value, ev_index=ev.index)

        def through(frame: bytes) -> tuple[tuple[int, int], bytes]:
            step = self.expected_hops(src, ev.port, frame, hops, srv6=True)[-1]
            return step.key, step.frame

        for opcode, size in ((F.OP_WRITE_ONLY, 1024), (F.OP_WRITE_FIRST, 512), (F.OP_WRITE_LAST_IMM, 64)):
            frame, psn = self.data_packet(enc, payload_len=size, opcode=opcode)
            self.send_from(src, ev.port, frame)
            key, whole = through(frame)
            want = codec.trim_packet(whole)
            got = self.expect_exact(key, want, f"opcode {opcode:#x} trimmed at {last.switch}")
            fr = codec.decode_frame(got)
            self.assertTrue(fr.trimmed and fr.dscp == F.DSCP_TRIMMED)
            self.assertEqual((fr.opcode, fr.psn, fr.payload), (opcode, psn, b""))
            self.assertTrue(is_trimmed(Ether(got)))
            self.assertLess(len(got), len(whole))

        controls = [codec.encode_ack(enc, 0x4D5243, self.next_psn()),
                    codec.encode_probe(enc, F.OP_PROBE_REQ, codec.ProbeInfo(req_id=self.next_psn(), port=ev.port)),
                    codec.trim_packet(self.data_packet(enc)[0])]
        for frame in controls:
            self.send_from(src, ev.port, frame)
            key, whole = through(frame)
            got = self.expect_exact(key, whole, f"control/trimmed packet passes whole (opcode {frame[-1]:#x})")
            self.assertEqual(len(got), len(frame))
