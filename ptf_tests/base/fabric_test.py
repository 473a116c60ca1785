"""Fabric-level PTF base: MRC traffic between the hosts of a converged, multi-switch fabric.

The runner (``ptf_tests/run_fabric.py``) brings a topology up with ``fabric``, converges it with the
controller and starts PTF with every host NIC port (and a tap on every leaf uplink, see
``base.fabric_ports``).  Test parameters: ``topology`` (YAML file), ``prefix`` (fabric run prefix),
``grpc_base_port`` (switch i in file order serves P4Runtime on base + i), ``p4info`` and
``device_config`` (the pipeline the controller pushed), ``evplan_dir`` (the controller's EV plan
files), ``target``, ``election_id`` (default 1).

Expected packets come from the controller's own plan (``build_plan`` / ``walk_srv6``): what the
fabric must do is derived from the same intents the controller wrote, hop by hop.  Packets are built
with ``mrc.wire.codec``.  Every switch write a test makes is undone after it (``undo_all``), writes
that must go through the controller (port admin state) included.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ptf
import yaml
from base.fabric_ports import fabric_ports, host_port, tap_port
from base.p4info import P4Info
from base.p4rt_test import P4RuntimeClient, P4RuntimeTest
from p4.v1 import p4runtime_pb2
from ptf import testutils
from ptf.base_tests import BaseTest
from scapy.layers.l2 import Ether

import mrc.wire.layers  # noqa: F401 -- registers the MRC scapy layers for readable failure dumps
from controller import p4contract as P4
from controller import usid as U
from controller.daemon import Controller, Options
from controller.evplan import Ev, Hop, walk_srv6
from controller.plan import STEV_ECMP, build_plan
from controller.session import PipelineConfig
from controller.sidplan import build_sid_plan
from controller.topology import LinkProps, load_topology
from mrc.wire import codec
from mrc.wire import formats as F
from mrc_fabric.state import FabricState
from mrc_fabric.targets import DEFAULT_TARGET, get_target

C_DROPS, C_PORT_RX = P4.C_DROP_REASONS, P4.C_INGRESS_STATS_PORT_RX_COUNTER
C_PORT_TX = P4.C_EGRESS_STATS_PORT_TX_COUNTER
ETH, HLIM_OFF, DST_OFF = 14, 14 + 7, 14 + 24
RECV_TIMEOUT = 3.0  # longest silence while frames are still expected (collect, expect_frame)
SLOW_CAP_S = 30.0  # longest a collect waits in all when frames keep arriving (a slow target)
QUIET_S = 0.3
SEND_PPS = 2000  # frames/s from a host port: a fifth of what bmv2 forwards (send_from)


@dataclass(frozen=True)
class Expected:
    """A frame a hop must emit: where PTF can see it (None: no PTF port on that link) and its bytes."""

    hop: Hop
    key: tuple[int, int] | None
    frame: bytes


class FabricTest(P4RuntimeTest):
    """P4RuntimeTest over a whole fabric: one client per switch, hosts as PTF devices."""

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        param = testutils.test_param_get
        self.target = param("target", DEFAULT_TARGET)
        self.prefix = param("prefix", "mrc")
        topo_path = param("topology")
        if not topo_path:
            raise RuntimeError("test parameter 'topology' (the fabric's YAML file) is missing")
        self.topo = load_topology(topo_path)
        self.sids = build_sid_plan(self.topo)
        self.plan = build_plan(self.topo, self.sids)
        self.grpc_base_port = int(param("grpc_base_port", 0))
        self.election_id = int(param("election_id", 1))
        self.state_dir = param("state_dir")
        self.p4info_path, self.device_config_path = param("p4info"), param("device_config")
        self.p4info = P4Info.from_file(self.p4info_path)
        self.evplan_dir = Path(param("evplan_dir", "."))
        self.ports = fabric_ports(self.topo, self.sids, self.prefix)
        self.host_keys = [p.key for p in self.ports if not p.tap]
        self._undo = []
        self._clients: dict[str, P4RuntimeClient] = {}
        self._controller: Controller | None = None
        self._marker = int(time.monotonic_ns()) & 0xFFFF
        self.client = None

    def tearDown(self) -> None:
        try:
            self.undo_all()
        finally:
            for name in list(self._clients):
                self._drop_client(name)
            if self._controller is not None:
                self._controller.close()
            BaseTest.tearDown(self)

    # -- switches ---------------------------------------------------------------------------------
    def grpc_addr(self, switch: str) -> str:
        if self.grpc_base_port:
            return f"127.0.0.1:{self.grpc_base_port + list(self.topo.switches).index(switch)}"
        return f"127.0.0.1:{self.topo.switches[switch].grpc_port}"

    def sw(self, switch: str) -> P4RuntimeClient:
        """The P4Runtime client of ``switch`` (connected on first use, closed after the test)."""
        if switch not in self._clients:
            self._clients[switch] = P4RuntimeClient(self.grpc_addr(switch), self.topo.switches[switch].device_id,
                                                    self.election_id)
        return self._clients[switch]

    def _drop_client(self, switch: str) -> None:
        client = self._clients.pop(switch, None)
        if client is not None:
            client.close()

    def counter(self, switch: str, name: str, index: int) -> int:
        """Packet count of one cell of an indirect counter of ``switch``."""
        return self.read_counter(name, index, client=self.sw(switch))[0]

    def drops(self, switch: str, reason: int) -> int:
        """``drop_reasons[reason]`` of ``switch`` (``reason``: a contract code, P4.DROP_REASON_*)."""
        return self.counter(switch, C_DROPS, reason)

    def drop_snapshot(self, reason: int) -> dict[str, int]:
        return {name: self.drops(name, reason) for name in self.topo.switches}

    def wait_switch_counter(self, switch: str, name: str, index: int, at_least: int,
                            timeout: float = RECV_TIMEOUT) -> int:
        return self.wait_counter(lambda: self.read_counter(name, index, client=self.sw(switch)), at_least,
                                 timeout)[0]

    # -- writes ------------------------------------------------------------------------------------
    def controller(self) -> Controller:
        """A controller (library) over the same plan and pipeline the fabric was converged with."""
        if self._controller is None:
            pipeline = PipelineConfig.from_files(self.p4info_path, self.device_config_path)
            self._controller = Controller(self.plan, pipeline, Options(
                election_id=self.election_id, grpc_base_port=self.grpc_base_port or None, retries=2))
        return self._controller

    def _via_controller(self, switch: str, action: Callable[[Controller], None]) -> None:
        # one primary per election id: our own client steps aside while the controller writes
        self._drop_client(switch)
        ctl = self.controller()
        try:
            action(ctl)
        finally:
            ctl.sessions[switch].close()

    def converge(self, switches: list[str], stev_mode: str) -> None:
        """Re-converge ``switches`` through the controller with another STEV load-balancing mode
        (``ecmp`` or ``ev_direct``); the run's mode (test parameter ``stev_mode``) is restored after."""
        run_mode = testutils.test_param_get("stev_mode", STEV_ECMP)

        def apply(mode: str) -> None:
            for name in switches:
                self._drop_client(name)
            plan = dataclasses.replace(self.plan, switches={n: self.plan.switches[n] for n in switches})
            pipeline = PipelineConfig.from_files(self.p4info_path, self.device_config_path)
            ctl = Controller(plan, pipeline, Options(election_id=self.election_id, stev_mode=mode, retries=2,
                                                     grpc_base_port=self.grpc_base_port or None))
            try:
                result = ctl.converge_all(deadline_s=60)
            finally:
                ctl.close()
            bad = sorted(n for n, ok in result.items() if not ok)
            if bad:
                raise RuntimeError(f"controller did not converge {bad} in STEV mode {mode}")

        apply(stev_mode)
        self._undo.append((None, lambda: apply(run_mode)))

    def port_admin(self, switch: str, port: int, up: bool) -> None:
        """Set a port's admin state through the controller (kept by its reconciles); undone after."""
        self._via_controller(switch, lambda ctl: ctl.set_port_admin(switch, port, up))
        self._undo.append((None, lambda: self._via_controller(
            switch, lambda ctl: ctl.set_port_admin(switch, port, not up))))

    def modify_entry(self, switch: str, table: str, match: dict, action: str, params: dict) -> None:
        """MODIFY an entry the controller installed; the entry as read before is written back after."""
        client = self.sw(switch)
        key = self.table_entry(table, match)
        current = client.read(key)
        if len(current) != 1:
            self.fail(f"{switch}: expected one {table} entry for {match}, read {len(current)}")
        client.write(p4runtime_pb2.Update.MODIFY, self.table_entry(table, match, action, params))
        old = current[0]
        self._undo.append((None, lambda: self.sw(switch).write(p4runtime_pb2.Update.MODIFY, old)))

    # -- EVs and packets ---------------------------------------------------------------------------
    def ev_plan(self, src: str, dst: str, fmt: str = "srv6") -> list[Ev]:
        """The EVs the controller's plan file gives ``src`` for ``dst`` (as an endpoint loads them)."""
        path = self.evplan_dir / f"{src}.yaml"
        data = yaml.safe_load(path.read_text())
        prof = data["peers"][dst]["profiles"][fmt]
        return [Ev(e["index"], e["port"], bytes.fromhex(e["ev"]), e["udp_sport"], e.get("flow_label", 0),
                   e["spine"]) for e in prof["evs"]]

    def host_pair_other_leaf(self, src: str) -> str:
        """A host that sits on another leaf than ``src`` in plane 1."""
        leaf = self.topo.host_leaf(src, 1)[0].name
        for h in self.topo.host_list():
            if self.topo.host_leaf(h.name, 1)[0].name != leaf:
                return h.name
        self.fail("the topology has a single leaf per plane")

    def host_pair_same_leaf(self, src: str) -> str | None:
        leaf = self.topo.host_leaf(src, 1)[0].name
        return next((h.name for h in self.topo.host_list()
                     if h.name != src and self.topo.host_leaf(h.name, 1)[0].name == leaf), None)

    def encap(self, src: str, dst: str, plane: int, mode: str, ev: bytes | int, *, ev_index: int = 0,
              telemetry: bool = False) -> codec.Encap:
        """What ``src``'s endpoint puts around a transport packet on NIC port ``plane``."""
        leaf, lport = self.topo.host_leaf(src, plane)
        return codec.Encap(mode, self.sids.host_gid(src).packed, self.sids.host_gid(dst).packed, ev,
                           ev_index=ev_index, src_mac=_mac(self.sids.host_mac(src, plane)),
                           dst_mac=_mac(self.sids.switch_mac(leaf.name, lport)), telemetry=telemetry)

    def next_psn(self) -> int:
        """A PSN unique within the run, so a frame seen anywhere can be attributed to its test."""
        self._marker = (self._marker + 1) & 0xFFFFFF
        return self._marker

    def data_packet(self, encap: codec.Encap, payload_len: int = 256, opcode: int = F.OP_WRITE_ONLY,
                    dest_qp: int = 0x4D5243) -> tuple[bytes, int]:
        """An RDMA WRITE packet with a fresh PSN: (frame, psn)."""
        psn = self.next_psn()
        payload = bytes((psn + i) & 0xFF for i in range(payload_len))
        imm = 0xC0FFEE if opcode in F.IMM_OPCODES else None
        return codec.encode_data(encap, opcode, dest_qp, psn, 0x10000 + psn * 4096, 0x77, payload_len,
                                 payload, imm=imm), psn

    def send_from(self, host: str, plane: int, frame: bytes) -> None:
        """Send one frame from a host port, paced to at most ``SEND_PPS`` frames/s.

        The tests check forwarding, not speed: bmv2 forwards about 10k packets/s on a small machine and
        drops frames that arrive faster at its input, before the pipeline (docs/targets.md), so a burst
        of 48 frames lost a few ("6 of 48 frames missing").  Pacing is rate limiting, not waiting for an
        event: the frames still overlap in the fabric."""
        now = time.monotonic()
        wait = getattr(self, "_next_send", now) - now
        if wait > 0:
            time.sleep(wait)
        self._next_send = max(now, getattr(self, "_next_send", now)) + 1.0 / SEND_PPS
        testutils.send_packet(self, host_port(self.sids, host, plane), frame)

    # -- what the fabric must do -------------------------------------------------------------------
    def srv6_hops(self, src: str, ev: Ev) -> tuple[str, int, list[Hop]]:
        return walk_srv6(self.plan, src, ev.port, ev.value)

    def expected_hops(self, src: str, plane: int, frame: bytes, hops: list[Hop], srv6: bool) -> list[Expected]:
        """The frame as each hop of ``hops`` emits it: MACs of that link, hop limit decremented once
        per hop, SRv6 destination shifted by each switch whose uSID leads it; nothing else changed."""
        out = []
        data = bytearray(frame)
        block = self.sids.block_value
        for hop in hops:
            if srv6:
                dst = int.from_bytes(data[DST_OFF:DST_OFF + 16], "big")
                if U.top(dst) == U.top_of(block, self.sids.switch_usid[hop.switch]):
                    dst = U.shift(dst)
                    data[DST_OFF:DST_OFF + 16] = dst.to_bytes(16, "big")
            data[HLIM_OFF] -= 1
            peer = self.topo.peer(hop.switch, hop.out_port)
            if peer.node in self.topo.hosts:
                dst_mac, key = self.sids.host_mac(peer.node, peer.port), host_port(self.sids, peer.node, peer.port)
            else:
                dst_mac, key = self.sids.switch_mac(peer.node, peer.port), self._tap_on_link(hop.switch, hop.out_port)
            data[0:6] = _mac(dst_mac)
            data[6:12] = _mac(self.sids.switch_mac(hop.switch, hop.out_port))
            out.append(Expected(hop, key, bytes(data)))
        return out

    def _tap_on_link(self, switch: str, port: int) -> tuple[int, int] | None:
        """The tap that sees the link at ``switch:port`` (taps sit on the leaf end)."""
        if self.topo.switches[switch].role == "leaf":
            return tap_port(self.topo, switch, port)
        peer = self.topo.peer(switch, port)
        if peer.node in self.topo.switches and self.topo.switches[peer.node].role == "leaf":
            return tap_port(self.topo, peer.node, peer.port)
        return None

    # -- receiving ---------------------------------------------------------------------------------
    def poll(self, key: tuple[int, int], timeout: float) -> bytes | None:
        res = testutils.dp_poll(self, device_number=key[0], port_number=key[1], timeout=timeout)
        if isinstance(res, self.dataplane.PollFailure):
            return None
        return bytes(res.packet)

    def expect_frame(self, key: tuple[int, int], match: Callable[[bytes], bool], what: str,
                     expected: bytes | None = None, timeout: float = RECV_TIMEOUT) -> bytes:
        """The first frame on PTF port ``key`` that ``match`` accepts; other frames there are skipped
        (host stacks emit their own), and listed if nothing matches before ``timeout``."""
        deadline = time.monotonic() + timeout
        seen: list[bytes] = []
        while (left := deadline - time.monotonic()) > 0:
            data = self.poll(key, left)
            if data is None:
                break
            if match(data):
                return data
            seen.append(data)
        lines = [f"{what}: no matching frame on PTF port {key} within {timeout}s"]
        if expected is not None:
            lines.append("expected:\n" + _dump(expected))
        lines += [f"seen #{i}:\n" + _dump(d) for i, d in enumerate(seen[-3:])]
        self.fail("\n".join(lines))

    def expect_exact(self, key: tuple[int, int], frame: bytes, what: str) -> bytes:
        return self.expect_frame(key, lambda d: d == frame, what, frame)

    def frames_with_psn(self, keys: list[tuple[int, int]], psns: set[int], quiet: float = QUIET_S
                        ) -> dict[tuple[int, int], list[bytes]]:
        """MRC frames carrying one of ``psns`` on ``keys``, by port: waits ``quiet`` seconds for frames
        still in flight (longer after a slow batch: a tenth of the time the last ``collect`` took),
        then drains what every port holds (other frames are dropped)."""
        got: dict[tuple[int, int], list[bytes]] = {}
        deadline = time.monotonic() + max(quiet, getattr(self, "last_batch_s", 0.0) / 10)
        for key in keys:
            while (data := self.poll(key, max(0.01, deadline - time.monotonic()))) is not None:
                if psn_of(data) in psns:
                    got.setdefault(key, []).append(data)
        return got

    def collect(self, key: tuple[int, int], psns: set[int], what: str,
                timeout: float = RECV_TIMEOUT) -> dict[int, bytes]:
        """The frames on ``key`` carrying each of ``psns``, in whatever order they arrive.

        ``timeout`` bounds a *silence*, not the whole batch: while frames of the batch keep coming
        the wait goes on (up to ``SLOW_CAP_S``), so a slow target that delivers every frame late
        passes and one that loses a frame still fails, naming the missing PSNs.  Every frame must
        still arrive, exactly once."""
        got: dict[int, bytes] = {}
        start = time.monotonic()
        last = start
        while len(got) < len(psns):
            now = time.monotonic()
            left = min(last + timeout, start + SLOW_CAP_S) - now
            if left <= 0:
                break
            data = self.poll(key, left)
            if data is None:
                break
            psn = psn_of(data)
            if psn in psns:
                if psn in got:
                    self.fail(f"{what}: PSN {psn} received twice on {key}")
                got[psn] = data
                last = time.monotonic()
        self.last_batch_s = last - start  # how long this batch took to arrive (quiet periods follow it)
        missing = sorted(psns - set(got))
        if missing:
            self.fail(f"{what}: {len(missing)} of {len(psns)} frames missing on {key} (PSNs {missing[:8]}...), "
                      f"nothing more for {timeout}s after the last of {len(got)} in {self.last_batch_s:.1f}s")
        return got

    def shape(self, switch: str, port: int, rate_pps: int) -> None:
        """Set a port's queue rate through the target plugin (run-time control port from the fabric's
        state); undone after the test (``topology_shaping``: as the fabric shaped the port)."""
        state = FabricState.load(self.prefix, Path(self.state_dir) if self.state_dir else None)
        rec = state.procs.get(switch) if state else None
        if rec is None or not rec.runtime_port:
            self.skipTest(f"no run-time control port of {switch} in the fabric state ({self.state_dir})")
        target = get_target(self.target)
        target.shape(rec.runtime_port, port, rate_pps=rate_pps)
        link = self.topo.link_at(switch, port)
        self._undo.append((None, lambda: target.shape(rec.runtime_port, port, **topology_shaping(link.props))))

    def assert_delivered_only(self, psns: set[int], allowed: set[tuple[int, int]]) -> None:
        """No frame with one of ``psns`` reached a host port outside ``allowed``."""
        stray = {k: len(v) for k, v in self.frames_with_psn(self.host_keys, psns).items() if k not in allowed}
        self.assertEqual(stray, {}, f"frames of this test delivered to other host ports {stray}")


def topology_shaping(props: LinkProps) -> dict[str, int | None]:
    """The ``Target.shape`` keywords that put a port back as the fabric shaped it from the topology:
    the test's queue rate taken off (0: unlimited), and the link's ``rate_pps`` as the fabric's link
    model (``link_rate_pps``, as ``Fabric`` gives it: on bmv2 every queue but the top one).  Until
    2026-12-06 the undo passed ``rate_pps=props.rate_pps``: on a topology with a link rate that left
    bmv2's top queue limited too and gave softswitch a queue rate on top of its link rate."""
    return {"rate_pps": 0, "link_rate_pps": props.rate_pps or None}


def psn_of(frame: bytes) -> int | None:
    """PSN of an MRC/RoCEv2 frame, or None for anything else (host chatter)."""
    try:
        return codec.decode_frame(frame).psn
    except codec.WireError:
        return _raw_psn(frame)


def _raw_psn(frame: bytes) -> int | None:
    # trimmed or otherwise undecodable frames: find UDP 4791 by walking the IPv6 chain by hand
    try:
        off, nh = ETH + 40, frame[ETH + 6]
        for _ in range(6):
            if nh == F.NH_UDP:
                if int.from_bytes(frame[off + 2:off + 4], "big") != F.ROCE_UDP_PORT:
                    return None
                return int.from_bytes(frame[off + 8 + 8:off + 8 + 12], "big") & F.PSN_MASK
            if nh == 41:
                nh, off = frame[off + 6], off + 40
            elif nh in (0, 43):
                nh, off = frame[off], off + 8 * (frame[off + 1] + 1)
            else:
                return None
    except IndexError:
        return None
    return None


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _dump(frame: bytes) -> str:
    try:
        return Ether(frame).show(dump=True)
    except Exception:  # noqa: BLE001 -- a dump is only for the failure message
        return frame.hex()


def ipv6(data: bytes, off: int) -> str:
    return str(ipaddress.IPv6Address(data[off:off + 16]))
