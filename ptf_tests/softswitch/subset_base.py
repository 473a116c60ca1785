"""Base of the softswitch acceptance PTF tests: each test class names one program of ``p4/``.

Test parameters (besides those of ``base.p4rt_test``): ``build_dir`` (where the runner compiled
every program to ``<build_dir>/<program>/p4info.txtpb`` and ``softswitch.json`` or
``bmv2.json``), ``target`` and ``runtime`` (softswitch: the ``--runtime-addr`` host:port;
bmv2: the Thrift port) for queue-rate commands.

The pipeline is pushed with SetForwardingPipelineConfig only when the switch does not already
run the program (the cookie is a hash of the device config), so classes sharing a program reuse it.
"""
from __future__ import annotations

import os
import queue
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from base.p4info import P4Info
from base.p4rt_test import DEFAULT_TIMEOUT, P4RuntimeClient, P4RuntimeTest
from p4.v1 import p4runtime_pb2
from ptf import testutils

from controller.gen_p4contract import read_constants
from mrc_fabric.targets import TargetError

P4_DIR = Path(__file__).resolve().parent / "p4"


def program_constants(program: str) -> dict[str, int]:
    """The ``#define``s of the suite's ``p4/common.p4`` and ``p4/<program>.p4``: a test reads the opcodes
    and reasons of the program it drives from that program, never from a copy."""
    return read_constants([P4_DIR / "common.p4", P4_DIR / f"{program}.p4"])


ETHERTYPE_TEST = read_constants([P4_DIR / "common.p4"])["ETHERTYPE_TEST"]
DST_MAC = bytes.fromhex("020000000002")
SRC_MAC = bytes.fromhex("020000000001")
RECV_TIMEOUT = 5.0  # a frame through a Python switch on a loaded machine; costs nothing on a pass


def eth(payload: bytes, ether_type: int = ETHERTYPE_TEST, src: bytes = SRC_MAC) -> bytes:
    """An Ethernet frame around ``payload`` (no padding: veths carry short frames as they are)."""
    return DST_MAC + src + ether_type.to_bytes(2, "big") + payload


class DigestClient(P4RuntimeClient):
    """A P4Runtime session that also keeps the DigestList messages of the stream."""

    def __init__(self, addr: str, device_id: int = 1, election_id: int = 1) -> None:
        self.digests: queue.Queue = queue.Queue()
        super().__init__(addr, device_id, election_id)

    def _on_update(self, resp: p4runtime_pb2.StreamMessageResponse) -> None:
        if resp.WhichOneof("update") == "digest":
            self.digests.put(resp.digest)
        else:
            super()._on_update(resp)

    def ack_digest(self, digest_id: int, list_id: int) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.digest_ack.digest_id = digest_id
        req.digest_ack.list_id = list_id
        self._requests.put(req)


class SubsetTest(P4RuntimeTest):
    """P4Runtime PTF test running one of the acceptance programs (``program`` = basename)."""

    program = ""

    def connect(self, param: str) -> DigestClient:
        addr = testutils.test_param_get(param)
        if not addr:
            raise RuntimeError(f"test parameter {param!r} (host:port of the switch) is missing")
        return DigestClient(addr, self.device_id, int(testutils.test_param_get("election_id", 1)))

    def _load_pipeline(self, client: P4RuntimeClient) -> P4Info:
        build = testutils.test_param_get("build_dir")
        if not build or not self.program:
            raise RuntimeError("test parameter 'build_dir' and the class's 'program' are needed")
        folder = os.path.join(build, self.program)
        p4info = P4Info.from_file(os.path.join(folder, "p4info.txtpb"))
        with open(os.path.join(folder, self.switch_target.device_config_name), "rb") as f:
            config = f.read()
        cookie = zlib.crc32(config) | (len(config) << 32)
        if self._running_cookie(client) != cookie:
            req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
                device_id=client.device_id, election_id=client.election_id,
                action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
            req.config.p4info.CopyFrom(p4info.info)
            req.config.p4_device_config = config
            req.config.cookie.cookie = cookie
            client.stub.SetForwardingPipelineConfig(req, timeout=60)
        return p4info

    @staticmethod
    def _running_cookie(client: P4RuntimeClient) -> int | None:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=client.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY)
        try:
            cfg = client.stub.GetForwardingPipelineConfig(req, timeout=DEFAULT_TIMEOUT).config
        except Exception:  # noqa: BLE001 -- no pipeline yet (an error on bmv2; softswitch answers an unset config)
            return None
        return cfg.cookie.cookie if cfg.HasField("cookie") else None

    # -- packets --------------------------------------------------------------------------------
    def send(self, port: int, frame: bytes) -> None:
        testutils.send_packet(self, port, frame)

    def recv(self, port: int, timeout: float = RECV_TIMEOUT) -> bytes:
        """The next frame out of ``port``; fails the test when none comes."""
        res = testutils.dp_poll(self, 0, port, timeout=timeout)
        if isinstance(res, self.dataplane.PollFailure):
            self.fail(f"no packet on port {port} within {timeout}s")
        return bytes(res.packet)

    def recv_n(self, port: int, n: int, timeout: float = RECV_TIMEOUT) -> list[bytes]:
        return [self.recv(port, timeout) for _ in range(n)]

    def expect_silence(self, ports: list[int], timeout: float = 0.3) -> None:
        """No frame comes out of any of ``ports`` within ``timeout``."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            res = testutils.dp_poll(self, 0, None, timeout=left)
            if isinstance(res, self.dataplane.PollFailure):
                return
            if res.port in ports:
                self.fail(f"unexpected {len(res.packet)}-byte frame on port {res.port}")

    # -- P4Runtime extras -----------------------------------------------------------------------
    def write_meter(self, meter: str, index: int, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure one meter cell; reset to unconfigured (all green) at cleanup."""
        def entity(configured: bool) -> p4runtime_pb2.Entity:
            e = p4runtime_pb2.Entity()
            e.meter_entry.meter_id = self.p4info.get_id("meters", meter)
            e.meter_entry.index.index = index
            if configured:
                cfg = e.meter_entry.config
                cfg.cir, cfg.cburst, cfg.pir, cfg.pburst = cir, cburst, pir, pburst
            return e
        self.client.write(p4runtime_pb2.Update.MODIFY, entity(True))
        self._undo.append((None, lambda: self.client.write(p4runtime_pb2.Update.MODIFY, entity(False))))

    def read_register(self, register: str, index: int) -> int:
        e = p4runtime_pb2.Entity()
        e.register_entry.register_id = self.p4info.get_id("registers", register)
        e.register_entry.index.index = index
        got = self.client.read(e)
        self.assertEqual(len(got), 1, f"register {register}[{index}] read returned {len(got)} entries")
        return int.from_bytes(got[0].register_entry.data.bitstring, "big")

    def insert_multicast_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        """Group ``group_id`` with (egress_port, instance) replicas; deleted at cleanup."""
        e = p4runtime_pb2.Entity()
        g = e.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = group_id
        for port, instance in replicas:
            g.replicas.add(egress_port=port, instance=instance)
        self.insert(e)

    def runtime_command(self, *words: object) -> None:
        """Run a simple_switch_CLI-style command (``set_queue_rate 20 4``) on the target."""
        line = " ".join(str(w) for w in words)
        where = str(testutils.test_param_get("runtime", ""))
        if not where:
            self.skipTest("test parameter 'runtime' (runtime control address) is missing")
        try:
            self.switch_target.runtime_command(where, line)
        except TargetError as e:
            self.fail(str(e))

    def poll(self, cond: Callable[[], bool], what: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait (bounded) until ``cond()`` holds."""
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                self.fail(f"timed out waiting for {what}")
            time.sleep(0.02)

