"""The Endpoint library in-process: one endpoint per namespace, both driven from this thread.

Sockets keep the namespace they were created in, so each endpoint is opened inside its namespace
(setns for this thread) and used from the original one.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import socket
import struct
import time

import pytest
from endpoint_netns import in_netns, mac

from mrc.core import EvState, WcOpcode, WcStatus
from mrc.endpoint import Endpoint, EndpointError, PortConfig, direct_evs, parse_mac
from mrc.wire import formats as F
from mrc.wire.codec import Encap, encode_data

pytestmark = pytest.mark.root

GID_A = bytes.fromhex("fd00000000000000000000000000000a")
GID_B = bytes.fromhex("fd00000000000000000000000000000b")


def _open(link, side: str, encap: str = "srv6", **kw) -> Endpoint:
    with in_netns(link.ns[side]):
        return Endpoint([PortConfig(link.ifname(side, p), p,
                                    next_hop_mac=parse_mac(mac("b" if side == "a" else "a", p)))
                         for p in range(1, link.planes + 1)], GID_A if side == "a" else GID_B, encap=encap, **kw)


def _pump(eps, pred, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        for ep in eps:
            ep.progress(0.001)
    return pred()


def _pair(link, encap="srv6", mode="mrc", buf_len=1 << 20, a_kw=None):
    a, b = _open(link, "a", encap, **(a_kw or {})), _open(link, "b", encap)
    evs_ab = direct_evs(encap, a.ports, 2, 0xA, 0xB)
    evs_ba = direct_evs(encap, b.ports, 2, 0xB, 0xA)
    qa = a.create_qp(evs_ab, a.qp_attr(mode))
    qb = b.create_qp(evs_ba, b.qp_attr(mode))
    a.connect(qa, qb.qpn, GID_B, rq_psn=0, sq_psn=0xFFFFF0)  # crosses the 24-bit wrap
    b.connect(qb, qa.qpn, GID_A, rq_psn=0xFFFFF0, sq_psn=0)
    buf = bytearray(buf_len)
    mr = b.reg_mr(buf, 0x20000)
    return a, b, qa, qb, buf, mr


def test_write_with_imm_in_process(direct_link):
    link = direct_link("l", planes=2)
    a, b, qa, _qb, buf, mr = _pair(link)
    with a, b:
        msgs = [(1, os.urandom(300_000), 0x20000, 11), (2, os.urandom(5), 0x20000 + 400_000, None),
                (3, os.urandom(70_000), 0x20000 + 500_000, 33)]
        for wr, data, va, imm in msgs:
            a.post_write(qa, wr, data, va, mr.rkey, imm)
        done, rx = [], []

        def finished():
            done.extend(a.poll_completions())
            rx.extend(b.poll_completions())
            return len(done) == 3 and len(rx) == 2

        assert _pump([a, b], finished)
        assert [c.wr_id for c in done] == [1, 2, 3] and all(c.status is WcStatus.SUCCESS for c in done)
        assert [(c.opcode, c.imm, c.byte_len) for c in rx] == [(WcOpcode.RECV_RDMA_WITH_IMM, 11, 300_000),
                                                                (WcOpcode.RECV_RDMA_WITH_IMM, 33, 70_000)]
        for _, data, va, _ in msgs:
            assert buf[va - 0x20000 : va - 0x20000 + len(data)] == data
        st = a.stats()
        assert st["ports"][1]["tx_frames"] > 0 and st["ports"][2]["tx_frames"] > 0
        assert qa.snd_una > 0xFFFFFF  # the PSNs wrapped


def _raw(link, side, plane):
    with in_netns(link.ns[side]):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        s.bind((link.ifname(side, plane), 0))
    return s


def test_foreign_frames_ignored_and_malformed_counted(direct_link):
    """ARP, IPv6 ND, other UDP, another MAC: never reach the core; truncated/bad-ICRC/unknown-QP RoCE:
    counted by the core."""
    link = direct_link("f", planes=1)
    a = _open(link, "a")
    inj = _raw(link, "b", 1)  # frames sent on b1 arrive on a1
    with a, contextlib.closing(inj):
        my = parse_mac(mac("a", 1))
        peer = parse_mac(mac("b", 1))
        eth6 = my + peer + b"\x86\xdd"
        ip6 = lambda nh, plen: struct.pack(">IHBB16s16s", 6 << 28, plen, nh, 64, GID_B, GID_A)
        good = encode_data(Encap("srv6", GID_B, GID_A, bytes(16), src_mac=peer, dst_mac=my), F.OP_WRITE_ONLY,
                           0x999, 0, 0, 1, 4, b"abcd")
        bad_icrc = good[:-1] + bytes([good[-1] ^ 0xFF])
        frames = [
            my + peer + b"\x08\x06" + bytes(28),  # ARP ethertype
            eth6 + ip6(58, 24) + bytes(24),  # ICMPv6 (ND)
            eth6 + ip6(17, 8 + 12) + struct.pack(">HHHH", 1234, 53, 20, 0) + bytes(12),  # UDP, not RoCE
            b"\x33\x33\x00\x00\x00\x01" + peer + b"\x86\xdd" + ip6(58, 8) + bytes(8),  # multicast ND
            good[:70],  # truncated RoCE
            bad_icrc,
            good,  # well-formed, but QP 0x999 does not exist
        ]
        for f in frames:
            inj.send(f)
        d, c = a.counters, a.core.counters
        assert _pump([a], lambda: c.rx_packets >= 3 and d.rx_ignored_not_roce >= 2, 10)
        assert d.rx_ignored_ethertype == 0  # the socket is bound to IPv6: the kernel never hands us ARP
        assert d.rx_ignored_not_roce == 2
        assert c.rx_packets == 3  # only the three RoCEv2 frames reached the transport core
        assert d.rx_ignored_dst_mac >= 1  # plus whatever ND/MLD the kernel sends itself
        assert c.rx_malformed == 1 and c.rx_bad_icrc == 1 and c.rx_unknown_qp == 1


def test_port_down_reported_to_core_and_peer(direct_link):
    link = direct_link("p", planes=2)
    a, b, qa, _qb, _buf, mr = _pair(link)
    with a, b:
        assert _pump([a, b], lambda: all(ep.port_up(p) for ep in (a, b) for p in (1, 2)), 5)
        link.set_up("a", 2, False)
        assert _pump([a, b], lambda: not a.port_up(2) and not b.port_up(2), 5)
        evs = a.poll_events()
        port2 = [i for i, e in enumerate(qa.evset.entries) if e.port == 2]
        assert {(e.ev_index, e.new_state, e.cause) for e in evs} >= {(i, EvState.ASSUMED_BAD, "port_down")
                                                                     for i in port2}
        assert [a.link_events[-1].port, a.link_events[-1].up] == [2, False]
        # traffic still flows on plane 1
        a.post_write(qa, 7, b"x" * 50_000, 0x20000, mr.rkey)
        assert _pump([a, b], lambda: any(c.wr_id == 7 for c in a.poll_completions()))
        link.set_up("a", 2, True)
        assert _pump([a, b], lambda: a.port_up(2) and b.port_up(2), 5)
        # once the port is up again, probes bring its EVs back to GOOD
        assert _pump([a, b], lambda: all(e.state is EvState.GOOD for e in qa.evset.entries), 10)
        assert b.core.counters.port_status_received >= 1


def test_closed_endpoint_and_bad_ports(direct_link):
    link = direct_link("c", planes=1)
    with pytest.raises(EndpointError):
        Endpoint([PortConfig("x", 1), PortConfig("y", 1)], GID_A)
    with in_netns(link.ns["a"]), pytest.raises(OSError, match="w2bnosuch"):
        Endpoint([PortConfig("w2bnosuch", 1)], GID_A)
    a = _open(link, "a")
    qp = a.create_qp(direct_evs("srv6", [1]))
    a.close()
    a.close()
    with pytest.raises(EndpointError, match="closed"):
        a.post_write(qp, 1, b"x", 0, 0)


def test_frames_are_stamped_when_read(direct_link):
    """Each frame of a receive batch reaches the core with the time it was read, not the batch's start:
    with one time per batch, a frame read 100 ms into a long batch gave an RTT sample 100 ms short
    (the learning NSCC took a 1 ns base RTT from one, docs/protocol.md)."""
    link = direct_link("t", planes=1)
    a = _open(link, "a")
    inj = _raw(link, "b", 1)
    with a, contextlib.closing(inj):
        my, peer = parse_mac(mac("a", 1)), parse_mac(mac("b", 1))
        frame = encode_data(Encap("srv6", GID_B, GID_A, bytes(16), src_mac=peer, dst_mac=my), F.OP_WRITE_ONLY,
                            0x999, 0, 0, 1, 4, b"abcd")
        stamps: list[int] = []
        real = a.core.receive

        def slow_receive(data, port, now_ns):  # the real core, made to take 30 ms a frame
            stamps.append(now_ns)
            time.sleep(0.03)
            return real(data, port, now_ns)

        a.core.receive = slow_receive
        for _ in range(3):
            inj.send(frame)
        time.sleep(0.05)  # all three are queued before the batch starts
        assert _pump([a], lambda: len(stamps) >= 3, 5)
        assert all(b - x >= 25_000_000 for x, b in itertools.pairwise(stamps)), stamps
        assert a.core.counters.rx_unknown_qp == 3


def test_tx_delay_line(direct_link):
    """``tx_delay_us``: every frame the core emits reaches the wire that much later, in order (the hosts'
    side of a link's propagation delay, for switches that cannot delay): a write completes intact and
    the requester's RTT samples all include the delay; a raw socket on the far side sees the first
    frame no sooner than the delay after the post."""
    link = direct_link("d", planes=2)
    delay_ms = 40
    a, b, qa, _qb, buf, mr = _pair(link, a_kw={"tx_delay_us": delay_ms * 1000})
    with in_netns(link.ns["b"]):  # a second socket on b's port 1 that sees every frame (ETH_P_ALL)
        cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        cap.bind((link.ifname("b", 1), 0))
    cap.setblocking(False)
    with a, b, contextlib.closing(cap):
        data = os.urandom(200_000)
        t_post = time.monotonic()
        a.post_write(qa, 7, data, 0x20000, mr.rkey)
        seen: list[float] = []
        done: list = []

        def finished():
            with contextlib.suppress(BlockingIOError):
                while not seen:
                    if len(cap.recv(65536)) >= 1000:  # a data frame (not the kernel's own ND or MLD)
                        seen.append(time.monotonic())
            done.extend(a.poll_completions())
            return bool(done)

        assert _pump([a, b], finished)
        assert done[0].status is WcStatus.SUCCESS and buf[: len(data)] == data
        assert seen and seen[0] - t_post >= delay_ms / 1000 * 0.95, (seen, t_post)
        req = qa.requester
        assert req.min_rtt >= delay_ms * 1_000_000, req.min_rtt  # every sample carries the delay
    with pytest.raises(EndpointError, match="tx delay"):
        Endpoint([PortConfig("w2bx", 1)], GID_A, tx_delay_us=-1)


def test_each_endpoint_draws_its_own_qp_numbers_and_keys(direct_link):
    # mrc-perf server opens a new endpoint per session on the same ports and buffer address: with the
    # same first QPN and rkey every time, a late packet of the previous session whose PSN fell in the
    # new window was placed (the random first PSN was the only guard)
    link = direct_link("l", planes=1)
    seen = set()
    for _ in range(3):
        ep = _open(link, "b")
        with ep:
            qp = ep.create_qp(direct_evs("srv6", ep.ports, 2, 0xB, 0xA), ep.qp_attr("mrc"))
            mr = ep.reg_mr(bytearray(64), 0x20000)
            assert 0x100 <= qp.qpn <= 0xFFFFFF and mr.rkey <= 0xFFFFFFFF
            seen.add((qp.qpn, mr.rkey))
    assert len({q for q, _ in seen}) == 3 and len({k for _, k in seen}) == 3
