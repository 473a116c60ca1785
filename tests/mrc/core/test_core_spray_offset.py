"""QPs bound to one EV profile start their round robin at per-QP offsets (issue 11, simulators and endpoint).

Every QP of a host to one peer binds the same EV profile; if each started its spray at EV 0, QPs that
send alike would spray the profile in lockstep, the same path at the same moment.  Pure logic over a
real ``mrc.core.Endpoint``: which EV each QP's data packets leave on, read back from the frames.
"""
from __future__ import annotations

import ipaddress

from mrc.core import Endpoint, QpAttr
from mrc.core.ev import spray_start
from mrc.endpoint.plan import direct_evs
from mrc.sim.network import encap_route_key, frame_route_key
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame

GID_A = ipaddress.IPv6Address("fd00::a").packed
GID_B = ipaddress.IPv6Address("fd00::b").packed


def _sent_evs(n_qps: int, evs_per_port: int) -> dict[int, list[int]]:
    """Connected QPs of one endpoint bound to one EV profile (2 ports); each posts one write; the EV
    index of every data packet each QP sends, in order."""
    ep = Endpoint(GID_A, [1, 2], encap="srv6", port_rate_bps=100e9)
    pid = ep.make_ev_profile(direct_evs("srv6", ep.ports, evs_per_port, 0xA, 0xB), 1)
    qps = [ep.create_qp(attr=QpAttr(ev_profile_id=pid, cc="none")) for _ in range(n_qps)]
    index: dict[bytes, int] = {}
    for i, qp in enumerate(qps):
        ep.connect(qp, 0x300 + i, GID_B, 0, 0)
        index = {encap_route_key(e.encap): j for j, e in enumerate(qp.evset.entries)}  # same profile: same keys
        qp.post_write(1, bytes(4096 * 16), 0x1000, 0x55)
    out: dict[int, list[int]] = {qp.qpn: [] for qp in qps}
    by_remote = {qp.remote.qpn: qp.qpn for qp in qps}
    t = 0
    while any(qp.has_work() for qp in qps) and t < 10_000_000:
        for _port, frame in ep.datagrams_to_send(t):
            fr = decode_frame(frame)
            if fr.opcode in F.DATA_OPCODES:
                out[by_remote[fr.dest_qp]].append(index[frame_route_key(frame, "srv6")])
        t += 1_000
    return out


def test_qps_of_one_profile_start_their_spray_at_different_evs_and_never_move_in_lockstep():
    sent = _sent_evs(4, 2)  # 4 QPs (consecutive QPNs, as mrc-perf --qps 4 makes them) over 4 EVs
    firsts = [evs[0] for evs in sent.values()]
    assert all(len(evs) == 16 for evs in sent.values())
    assert sorted(firsts) == [0, 1, 2, 3]  # one start per EV: before, every QP started at EV 0
    for qpn, evs in sent.items():  # each still sprays every EV round robin, from its own start
        assert evs[:4] == [(spray_start(qpn, 4) + k) % 4 for k in range(4)]
    # packet k of every QP: on 4 different EVs (the endpoint serves the QPs one packet per turn)
    assert all(len({evs[k] for evs in sent.values()}) == 4 for k in range(16))


def test_spray_start_is_spread_and_in_range():
    for n in (1, 2, 3, 4, 6, 8, 64, 256):
        starts = [spray_start(q, n) for q in range(0x100, 0x100 + n)]
        assert sorted(starts) == list(range(n))  # n consecutive QPNs: every EV once
    assert abs(spray_start(0x101, 256) - spray_start(0x100, 256)) > 64  # neighbours start far apart
