"""Ready-made two-host setups over a simulated network (used by tests and bench/mrc_sim.py)."""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass

from mrc.core.endpoint import Endpoint
from mrc.core.memory import MemoryRegion
from mrc.core.qp import QpAttr, QueuePair
from mrc.core.types import Completion
from mrc.sim.network import Network, PathSpec

GID_A = ipaddress.IPv6Address("fd00::a").packed
GID_B = ipaddress.IPv6Address("fd00::b").packed


def srv6_carrier(src_leaf: int, spine: int, dst_leaf: int, dst_host: int, block: int = 0xFC000000) -> bytes:
    """uSID carrier ``block(32) | src-leaf | spine | dst-leaf | dst-host`` (16-bit uSIDs, zero-filled)."""
    v = (block << 96) | (src_leaf << 80) | (spine << 64) | (dst_leaf << 48) | (dst_host << 32)
    return v.to_bytes(16, "big")


@dataclass
class Pair:
    """Requester ``a`` and responder ``b`` with one connected QP each and a target buffer at b."""

    net: Network
    a: Endpoint
    b: Endpoint
    qa: QueuePair
    qb: QueuePair
    mr: MemoryRegion
    done: list[Completion]
    rx: list[Completion]

    def pump(self) -> None:
        self.done.extend(self.a.poll_completions())
        self.rx.extend(self.b.poll_completions())


def bind_profiles(ep: Endpoint, attr: QpAttr, evs: list) -> QpAttr:
    """``attr`` for a QP of ``ep`` over ``evs``, bound through ``ep.ctl`` as mrc.h binds QPs: a new EV
    profile of ``evs`` (floor ``attr.ev_min_active``) and, unless ``attr.cc`` is DCQCN (not an mrc_ctl
    algorithm, kept in ``QpAttr.cc``), the endpoint's CC profile for ``attr.cc`` (``make_cc_profile``)."""
    pid = ep.make_ev_profile(evs, attr.ev_min_active)
    cc_pid = ep.make_cc_profile(attr.cc, mode=attr.mode, mtu=attr.mtu, base_rtt_ns=attr.cc_base_rtt_ns)
    return dataclasses.replace(attr, ev_profile_id=pid, cc_profile_id=cc_pid, cc=attr.cc if cc_pid is None else None)


def make_pair(paths: list[PathSpec], *, mode: str = "mrc", encap: str = "srv6", ports_per_path: bool = True,
              attr: QpAttr | None = None, buf_len: int = 1 << 20, base_va: int = 0x1000_0000,
              sq_psn: int = 0, seed: int = 1, port_rate_bps: float | None = None) -> Pair:
    """Two endpoints, one QP each, EV i on path i (NIC port i+1 if ``ports_per_path`` else port 1); each
    QP is bound to an EV profile of its endpoint's ``ctl`` and, but for DCQCN, to a CC profile
    (:func:`bind_profiles`)."""
    n = len(paths)
    ports = list(range(1, n + 1)) if ports_per_path else [1]
    rate = port_rate_bps or max(p.rate_bps for p in paths)
    a = Endpoint(GID_A, ports, encap=encap, port_rate_bps=rate)
    b = Endpoint(GID_B, ports, encap=encap, port_rate_bps=rate)

    def evs(src: int, dst: int) -> list[tuple[bytes | int, int]]:
        out = []
        for i in range(n):
            port = i + 1 if ports_per_path else 1
            if encap == "srv6":
                out.append((srv6_carrier(src, 0x100 + i, dst, dst + 0x10), port))
            elif encap == "stev":
                out.append((0xC0000000 | (i << 8) | 0x11, port))
            else:
                out.append((0xC000 | i, port))
        return out

    a_attr = attr or QpAttr(mode=mode)
    qa = a.create_qp(attr=bind_profiles(a, a_attr, evs(1, 2)))
    qb = b.create_qp(attr=bind_profiles(b, a_attr, evs(2, 1)))
    a.connect(qa, qb.qpn, GID_B, rq_psn=0, sq_psn=sq_psn)
    b.connect(qb, qa.qpn, GID_A, rq_psn=sq_psn, sq_psn=0)
    buf = bytearray(buf_len)
    mr = b.reg_mr(buf, base_va=base_va)
    net = Network(a, b, paths, seed=seed)
    net.connect_qps(qa, qb)
    for ep in (a, b):  # what the control API changes is stamped on the simulated clock
        ep.ctl.clock = lambda: net.now
    return Pair(net, a, b, qa, qb, mr, [], [])


def transfer(p: Pair, messages: list[tuple[int, bytes, int, int | None]], until_ns: int | None = None) -> int:
    """Post ``(wr_id, data, remote_va, imm)`` writes and run until all complete; returns the end time."""
    for wr_id, data, va, imm in messages:
        p.a.post_write(p.qa, wr_id, data, va, p.mr.rkey, imm)
    want = len(messages)

    def stop() -> bool:
        p.pump()
        return len(p.done) >= want

    return p.net.run(until_ns=until_ns, stop=stop)
