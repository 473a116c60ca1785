"""One path from the controller's EV plan to the wire: a STEV plan loaded into mrc_ctl profiles, QPs of
the real driver bound to them, frames captured on the veth and decoded by tshark.

The controller writes the plan files (controller/evplan.py), ``mrc.endpoint.load_profile`` turns the
STEV profile to the peer into an EV format profile and an EXP EV profile of ``Endpoint.ctl``, the QPs
bind to it by id, and what the driver sends on each NIC port must carry exactly the plan's
``udp_sport`` and ``flow_label`` for the EVs of that port (UDP destination 4791, RoCEv2).
"""
from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest
import yaml
from endpoint_netns import in_netns, mac

from mrc.core import WcStatus
from mrc.endpoint import Endpoint, PortConfig, load_plan, load_profile, parse_mac

pytestmark = pytest.mark.root
TSHARK = shutil.which("tshark")
ETH_P_ALL = 0x0003


def _write_pcap(path, frames: list[bytes]) -> None:
    """Classic pcap, LINKTYPE_ETHERNET, microsecond timestamps (all zero: order is what matters)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.writelines(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr for fr in frames)


@pytest.mark.skipif(TSHARK is None, reason="tshark not installed (apt-get install tshark)")
def test_stev_plan_expanded_by_ctl_reaches_the_wire(direct_link, tmp_path):
    from controller.evplan import write_ev_files
    from controller.plan import build_plan
    from controller.topogen import clos

    files = write_ev_files(build_plan(clos(2, 2, 2, 1)), tmp_path / "plan")  # 2 hosts, 2 planes x 2 spines
    plan_a, plan_b = (load_plan(p) for p in files)
    (peer_b,) = plan_a.peers.values()
    (peer_a,) = plan_b.peers.values()
    link = direct_link("t", planes=2)

    def open_ep(side: str, gid: bytes) -> Endpoint:
        other = "b" if side == "a" else "a"
        with in_netns(link.ns[side]):
            return Endpoint([PortConfig(link.ifname(side, p), p, next_hop_mac=parse_mac(mac(other, p)))
                             for p in (1, 2)], gid, encap="stev")

    caps = []
    for p in (1, 2):  # capture what arrives on b's veths, opened before anything is sent
        with in_netns(link.ns["b"]):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.bind((link.ifname("b", p), 0))
            s.setblocking(False)
        caps.append(s)
    a, b = open_ep("a", plan_a.gid), open_ep("b", plan_b.gid)
    try:
        with a, b:
            load_profile(a.ctl, peer_b.profiles["stev"], ev_profile_id=3)
            load_profile(b.ctl, peer_a.profiles["stev"], ev_profile_id=3)
            qa = a.create_qp(attr=a.qp_attr(ev_profile_id=3))
            qb = b.create_qp(attr=b.qp_attr(ev_profile_id=3))
            a.connect(qa, qb.qpn, plan_b.gid, rq_psn=0, sq_psn=0)
            b.connect(qb, qa.qpn, plan_a.gid, rq_psn=0, sq_psn=0)
            mr = b.reg_mr(bytearray(1 << 20), 0x40000)
            data = os.urandom(64 * a.max_mtu())
            a.post_write(qa, 1, data, 0x40000, mr.rkey)
            done: list = []
            deadline = time.monotonic() + 20
            while not done and time.monotonic() < deadline:
                for ep in (a, b):
                    ep.progress(0.001)
                done.extend(a.poll_completions())
            assert [c.status for c in done] == [WcStatus.SUCCESS]
            assert bytes(mr.buf[: len(data)]) == data
        rows_by_port = {}
        for p, s in zip((1, 2), caps, strict=True):
            frames = []
            for _ in range(100_000):  # everything the kernel queued for this capture
                try:
                    frames.append(s.recv(65535))
                except BlockingIOError:
                    break
            pcap = tmp_path / f"port{p}.pcap"
            _write_pcap(pcap, frames)
            gid_a = str(ipaddress.IPv6Address(plan_a.gid))
            out = subprocess.run([TSHARK, "-r", str(pcap), "-d", "udp.port==4791,infiniband", "-Y", f"ipv6.src == {gid_a} && udp.dstport == 4791",
                                  "-T", "fields", "-e", "udp.srcport", "-e", "ipv6.flow", "-e",
                                  "infiniband.bth.opcode"], capture_output=True, text=True, timeout=60, check=True)
            rows_by_port[p] = [line.split("\t") for line in out.stdout.splitlines()]
    finally:
        for s in caps:
            s.close()

    for p in (1, 2):
        rows = rows_by_port[p]
        assert rows, f"tshark saw no RoCEv2 frame from a on port {p}"
        assert {int(r[2]) for r in rows} <= {0x06, 0x07, 0x08, 0x0A}  # RDMA WRITE FIRST/MIDDLE/LAST/ONLY
        seen = {(int(r[0]), int(r[1], 16)) for r in rows}
        # the plan file's own numbers for the EVs of this port (udp_sport, flow_label)
        plan_rows = [e for e in yaml.safe_load(files[0].read_text())["peers"][peer_b.name]["profiles"]["stev"]["evs"]
                     if e["port"] == p]
        want = {(e["udp_sport"], e["flow_label"]) for e in plan_rows}
        assert seen == want, f"port {p}: wire (sport, flow label) {sorted(seen)} != plan {sorted(want)}"
        assert all(sport != 0 for sport, _ in seen)


def test_controller_probes_go_out_through_the_driver(direct_link):
    """mrc_ctl_ep_batch_send_wait on the real driver: EV probes and a PORT_STATUS_UPDATE to a peer
    endpoint with no QP at all (connectionless), answered by its transport, RTTs measured."""
    from mrc.ctl import EpOpType, EpReq, Ev, EvFmtMode, MrcCtlError

    link = direct_link("p", planes=2)
    gid_a, gid_b = bytes.fromhex("fd00" + "00" * 13 + "0a"), bytes.fromhex("fd00" + "00" * 13 + "0b")

    def open_ep(side: str, gid: bytes, encap: str) -> Endpoint:
        other = "b" if side == "a" else "a"
        with in_netns(link.ns[side]):
            return Endpoint([PortConfig(link.ifname(side, p), p, next_hop_mac=parse_mac(mac(other, p)))
                             for p in (1, 2)], gid, encap=encap)

    a, b = open_ep("a", gid_a, "stev"), open_ep("b", gid_b, "stev")
    with a, b:
        reqs = [EpReq(i, gid_a, gid_b, EvFmtMode.STEV, Ev.from_int(0xC0000000 | i, 4, p))
                for i, p in ((1, 1), (2, 2), (3, 1))]
        stop = threading.Event()

        def serve_b() -> None:  # b's transport answers from its own loop, as on another host
            deadline = time.monotonic() + 30
            while not stop.is_set() and time.monotonic() < deadline:
                b.progress(0.001)

        t = threading.Thread(target=serve_b, daemon=True)
        t.start()
        try:
            out = a.ep_batch_send_wait(46, EpOpType.EV_PROBE, reqs, 2_000_000_000)
            assert sorted((r.req_id, r.port) for r in out) == [(1, 1), (2, 2), (3, 1)]
            assert all(r.rtt > 0 and r.adj_svc_time for r in out)
            ps = a.ep_batch_send_wait(46, EpOpType.PORT_STATUS_UPDATE,
                                      [EpReq(9, gid_a, gid_b, EvFmtMode.STEV, Ev.from_int(0xC0000009, 4, 2),
                                             port_status=a.ctl.port_status_mask())], 2_000_000_000)
            assert [(r.req_id, r.port) for r in ps] == [(9, 2)]
            with pytest.raises(MrcCtlError) as ei:  # SRv6 with no QP: the peer has no way back
                a.ep_batch_send_wait(46, EpOpType.EV_PROBE, [EpReq(4, gid_a, gid_b, EvFmtMode.SRV6,
                                                                   Ev(bytes.fromhex("fc00" + "00" * 14), 1))],
                                     50_000_000)
            assert ei.value.responses == []
        finally:
            stop.set()
            t.join(10)
        assert b.core.counters.probes_answered == 3 and b.core.counters.port_status_received == 1


def test_mrc_perf_binds_its_qps_to_the_plans_ctl_profile(direct_link, tmp_path):
    """mrc-perf with --plan: the plan's profile to the peer is loaded into ep.ctl and every QP binds to it."""
    from controller.evplan import write_ev_files
    from controller.plan import build_plan
    from controller.topogen import clos
    from mrc.ctl import ProfileState
    from mrc.endpoint.perf import HostConfig

    files = write_ev_files(build_plan(clos(2, 2, 2, 1)), tmp_path / "plan")
    plan_a, plan_b = (load_plan(p) for p in files)
    link = direct_link("q", planes=2)
    host = HostConfig([(1, link.ifname("a", 1)), (2, link.ifname("a", 2))], encap="stev", plan=plan_a,
                     next_hop_macs={p: parse_mac(mac("b", p)) for p in (1, 2)})
    with in_netns(link.ns["a"]):
        ep = host.open()
    with ep:
        for _ in range(2):  # a second set-up (the server's next client) gets a fresh profile
            prof, min_active = host.peer_setup(ep, plan_b.gid, {})
            qps = [ep.create_qp(prof, ep.qp_attr()) for _ in range(2)]
            assert prof.state == ProfileState.ONLINE and min_active == prof.ev_min_active
            assert all(qp.evset.prof is prof for qp in qps)
            (peer,) = plan_a.peers.values()
            assert [(ev.val[:4], ev.port) for ev in prof.evs] == list(peer.profiles["stev"].evs)
