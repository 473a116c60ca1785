"""A controller's EV probe (``ep_batch_send_wait``) is answered on the NIC port it came in on (the rx
port the controller records), with the request's own entropy (STEV/UDP) or a QP's EV on that port
(SRv6), echoing its id, flags and send time; answering never moves a QP's spray pointer."""
from __future__ import annotations

import pytest

from mrc.sim.scenario import GID_A, GID_B, PathSpec, make_pair, srv6_carrier
from mrc.wire import formats as F
from mrc.wire.codec import Encap, ProbeInfo, decode_frame, encode_probe


def _answer(encap_mode: str, ev, port: int):
    p = make_pair([PathSpec() for _ in range(4)], encap=encap_mode)  # EV i on NIC port i + 1
    rr = p.qb.evset.rr
    req = encode_probe(Encap(encap_mode, GID_A, GID_B, ev), F.OP_PROBE_REQ,
                       ProbeInfo(77, port, F.PROBE_FLAG_CTL, 123))
    p.b.receive(req, port, 1_000)
    out = p.b.datagrams_to_send(1_000)
    assert p.qb.evset.rr == rr, "answering moved the QP's spray pointer"
    (answers,) = [(o, decode_frame(d)) for o, d in out if decode_frame(d).opcode == F.OP_PROBE_RESP]
    return p, decode_frame(req), answers


@pytest.mark.parametrize("port", [1, 3, 4])
def test_stev_request_answered_with_its_own_entropy_on_its_port(port):
    ev = 0xC0000000 | (0x55 << 8) | 0x7  # no EV of the QP: a value the controller chose
    _p, req, (out_port, ans) = _answer("stev", ev, port)
    assert out_port == port
    assert ans.entropy == req.entropy
    assert ans.probe.flags & F.PROBE_FLAG_CTL and ans.probe.req_id == 77 and ans.probe.sender_ts_ns == 123


@pytest.mark.parametrize("port", [2, 3])
def test_srv6_request_answered_on_its_port(port):
    carrier = srv6_carrier(1, 0x100 + port - 1, 2, 0x12)
    p, _req, (out_port, ans) = _answer("srv6", carrier, port)
    assert out_port == port
    assert ans.probe.flags & F.PROBE_FLAG_CTL and ans.probe.req_id == 77 and ans.probe.sender_ts_ns == 123
    # the QP's EV on that port (the request carries no EV index of ours: its inner sport is slot 0's)
    (ev_on_port,) = [e for e in p.qb.evset.entries if e.port == port]
    assert ans.outer_dst == decode_frame(encode_probe(ev_on_port.encap, F.OP_PROBE_RESP, ProbeInfo(0))).outer_dst


def test_no_answer_on_a_port_that_is_down():
    p = make_pair([PathSpec() for _ in range(2)], encap="stev")
    p.b.set_port_state(2, False, 0)
    p.b.datagrams_to_send(0)  # the PORT_STATUS it sends
    req = encode_probe(Encap("stev", GID_A, GID_B, 0xC0000042), F.OP_PROBE_REQ, ProbeInfo(5, 2, F.PROBE_FLAG_CTL, 1))
    p.b.receive(req, 2, 1_000)
    assert not [d for _o, d in p.b.datagrams_to_send(1_000) if decode_frame(d).opcode == F.OP_PROBE_RESP]


def _srv6_request_on(port: int, state):
    from mrc.core.types import EvState
    p = make_pair([PathSpec() for _ in range(4)], encap="srv6")
    (i,) = [i for i, e in enumerate(p.qb.evset.entries) if e.port == port]
    p.qb.evset.prof.states[i] = getattr(EvState, state)  # as the profile holds it after the change
    before = p.b.counters.rx_unknown_qp
    req = encode_probe(Encap("srv6", GID_A, GID_B, srv6_carrier(1, 0x100 + port - 1, 2, 0x12)), F.OP_PROBE_REQ,
                       ProbeInfo(9, port, F.PROBE_FLAG_CTL, 1))
    p.b.receive(req, port, 1_000)
    answers = [(o, decode_frame(d)) for o, d in p.b.datagrams_to_send(1_000) if decode_frame(d).opcode == F.OP_PROBE_RESP]
    return p, answers, p.b.counters.rx_unknown_qp - before


def test_srv6_request_is_not_answered_on_a_denied_ev():
    """The controller's DENIED is an order: no answer goes on that path, even to the controller (until
    2026-12-05 the first EV on the port was taken whatever its state)."""
    _p, answers, unknown = _srv6_request_on(2, "DENIED")
    assert answers == [] and unknown == 1


def test_srv6_request_is_answered_on_an_assumed_bad_ev():
    """ASSUMED_BAD is only the endpoint's belief: the answer still goes back on the port probed."""
    _p, answers, unknown = _srv6_request_on(2, "ASSUMED_BAD")
    assert [o for o, _a in answers] == [2] and unknown == 0


def test_a_qp_probe_on_a_denied_ev_with_no_other_way_back_is_not_answered():
    """A QP's probe whose mirror EV is DENIED is answered on another GOOD EV; with none left (all
    DENIED), not at all (the round-robin fallback returned the DENIED one)."""
    from mrc.core.types import EvState
    p = make_pair([PathSpec() for _ in range(2)], encap="stev")
    for i in range(len(p.qb.evset.entries)):
        p.qb.evset.prof.states[i] = EvState.DENIED
    ev = p.qa.evset.entries[0]
    req = encode_probe(ev.encap, F.OP_PROBE_REQ, ProbeInfo(3, ev.port, 0, 1))
    before = p.b.counters.rx_unknown_qp
    p.b.receive(req, ev.port, 1_000)
    assert not [d for _o, d in p.b.datagrams_to_send(1_000) if decode_frame(d).opcode == F.OP_PROBE_RESP]
    assert p.b.counters.rx_unknown_qp == before + 1


@pytest.mark.parametrize("req_tc", [F.DSCP_DATA, F.DSCP_TRIMMED])
def test_request_with_any_dscp_is_answered(req_tc):
    """``req_tc`` is any DSCP (mrc_ctl_ep_batch_send_wait checks 0..63), DSCP 11 included: a probe is
    never a trimmed packet (until 2026-12-06 the codec took every DSCP-11 packet for one, counted this
    request malformed and the controller's batch timed out)."""
    p = make_pair([PathSpec() for _ in range(2)], encap="stev")
    req = encode_probe(Encap("stev", GID_A, GID_B, 0xC0000042, dscp=req_tc), F.OP_PROBE_REQ,
                       ProbeInfo(5, 1, F.PROBE_FLAG_CTL, 1))
    p.b.receive(req, 1, 1_000)
    answers = [decode_frame(d) for _o, d in p.b.datagrams_to_send(1_000) if decode_frame(d).opcode == F.OP_PROBE_RESP]
    assert [a.probe.req_id for a in answers] == [5] and p.b.counters.rx_malformed == 0
