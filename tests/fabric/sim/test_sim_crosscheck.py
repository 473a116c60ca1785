"""Cross-check: the simulator's switch model and softswitch running p4src/mrc_switch.p4 with the
controller's tables make the same forwarding decisions for the same packets.

One plane of a 2x2x2 Clos: four in-process softswitches (loopback gRPC only, no interfaces), each
converged by the real controller over P4Runtime.  Every packet is pushed hop by hop through the
compiled program (ingress, traffic manager hand-off, egress, deparser: the next switch gets the bytes
the previous one emitted) and through ``mrc_fabric.sim.model``; egress ports and drops must agree.
"""
from __future__ import annotations

import ipaddress

import pytest

from controller import build_plan
from controller.daemon import Controller, Options
from controller.evplan import srv6_profile, stev_profile
from controller.topogen import clos
from mrc.wire import formats as F
from mrc.wire.codec import Encap, encode_ack, encode_data
from mrc_fabric.sim.model import SimFabric
from mrc_fabric.targets import load_pipeline
from softswitch.api import SoftSwitch
from softswitch.contract import TmItem

PLANE1 = ("p1s1", "p1s2", "p1l1", "p1l2")


@pytest.fixture(scope="module")
def switches():
    plan = build_plan(clos(2, 2, 2, 2))
    sws = {n: SoftSwitch(None, device_id=plan.switches[n].device_id, cpu_port=255) for n in PLANE1}
    ctl = None
    try:
        for s in sws.values():
            s.start()
        ctl = Controller(plan, load_pipeline("softswitch"),
                         Options(addresses={n: s.grpc_addr for n, s in sws.items()}, stev_mode="ev_direct",
                                 retries=2, backoff_initial_s=0.2))
        for n in PLANE1:
            assert ctl.converge_switch(n), ctl.status[n].last_error
        yield plan, {n: s.switch.loop.pipeline for n, s in sws.items()}
    finally:
        if ctl is not None:
            ctl.close()
        for s in sws.values():
            s.stop()


def _through_program(plan, pipes, host: str, port: int, frame: bytes) -> tuple[list[str], str]:
    """Hop by hop through the real program: (egress 'switch:port' list, drop reason or delivered host)."""
    topo = plan.topology
    here = topo.peer(host, port)
    out: list[str] = []
    for _ in range(8):
        if here.node in topo.hosts:
            return out, here.node
        res = pipes[here.node].ingress(frame, here.port, 0)
        if res.dropped or not res.to_tm:
            return out, f"drop:{res.drop_reason}"
        item: TmItem = res.to_tm[0]
        eg = pipes[here.node].egress(item, 0)
        if eg.dropped or not eg.frames:
            return out, f"drop:{eg.drop_reason}"
        out.append(f"{here.node}:{eg.frames[0].port}")
        frame = eg.frames[0].data
        here = topo.peer(here.node, eg.frames[0].port)
    return out, "loop"


def _through_model(fab: SimFabric, host: str, port: int, frame: bytes, encap: str) -> tuple[list[str], str]:
    r = fab.route(host, port, frame, encap)
    return [p.name for p in r.ports[1:]], (f"drop:{r.drop}" if r.drop else fab.hosts[r.dst_host])


def test_same_forwarding_decisions_as_the_real_program(switches):
    plan, pipes = switches
    fab = SimFabric(plan, link_gbps=100, nic_gbps=100, delay_ns=0, queue_packets=0, stev_mode="ev_direct")
    sids = plan.sids
    hosts = [h.name for h in plan.topology.host_list()]
    compared = 0
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            gs, gd = sids.host_gid(src).packed, sids.host_gid(dst).packed
            for ev in srv6_profile(plan, src, dst, 2).evs:
                if ev.port != 1:
                    continue
                enc = Encap("srv6", gs, gd, ev.value, ev_index=ev.index)
                for frame in (encode_data(enc, F.OP_WRITE_ONLY, 0x101, 7, 0x1000, 0x22, 256, bytes(256)),
                              encode_ack(enc, 0x101, 7)):
                    want = _through_program(plan, pipes, src, 1, frame)
                    assert _through_model(fab, src, 1, frame, "srv6") == want, (src, dst, ev)
                    assert want[1] == dst
                    compared += 1
            for ev in stev_profile(plan, src, dst, 2).evs:
                if ev.port != 1:
                    continue
                enc = Encap("stev", gs, gd, int.from_bytes(ev.value, "big"), ev_index=ev.index)
                frame = encode_data(enc, F.OP_WRITE_ONLY, 0x101, 7, 0x1000, 0x22, 256, bytes(256))
                want = _through_program(plan, pipes, src, 1, frame)
                assert _through_model(fab, src, 1, frame, "stev") == want, (src, dst, ev)
                compared += 1
    assert compared == 12 * (2 * 4 + 4)
    # what the program drops, the model drops at the same switch (the model names the program's
    # drop reason; softswitch reports its v1model cause, mark_to_drop, so reasons are not compared)
    bad = [sids.carrier(sids.switch_usid["p1l1"], 0x1FFF).packed,  # our block, no such uSID
           sids.carrier(sids.switch_usid["p1l1"], sids.switch_usid["p1s1"]).packed,  # ends at a spine
           ipaddress.IPv6Address("2001:db8::1").packed]  # not our block, no route
    for dst_addr in bad:
        enc = Encap("srv6", sids.host_gid("h1").packed, sids.host_gid("h3").packed, dst_addr)
        frame = encode_data(enc, F.OP_WRITE_ONLY, 0x101, 7, 0x1000, 0x22, 64, bytes(64))
        want = _through_program(plan, pipes, "h1", 1, frame)
        got = _through_model(fab, "h1", 1, frame, "srv6")
        assert got[0] == want[0] and got[1].startswith("drop:") and want[1].startswith("drop:"), (got, want)
