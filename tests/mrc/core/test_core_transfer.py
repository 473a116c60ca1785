"""Transport core over the simulated network: delivery, ordering, wrap-around, failures, EV rules."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrc.core import EvState, QpAttr, QpState, WcOpcode, WcStatus
from mrc.sim import PathSpec, make_pair, transfer


def _messages(rng: random.Random, base_va: int, sizes: list[int], imm_every: int = 2):
    msgs, va = [], base_va
    for i, n in enumerate(sizes):
        imm = 0x1000 + i if i % imm_every == 0 else None
        msgs.append((i + 1, rng.randbytes(n), va, imm))
        va += n + rng.randrange(0, 64)
    return msgs


def _check_delivery(p, msgs):
    """Every byte at its address, nothing else written, completions and immediates in order."""
    expect = bytearray(len(p.mr.buf))
    for _wr, data, va, _imm in msgs:
        off = va - p.mr.base_va
        expect[off : off + len(data)] = data
    assert p.mr.buf == expect
    assert [c.wr_id for c in p.done] == [m[0] for m in msgs]
    assert all(c.status is WcStatus.SUCCESS and c.opcode is WcOpcode.RDMA_WRITE for c in p.done)
    assert [c.imm for c in p.rx] == [m[3] for m in msgs if m[3] is not None]
    assert [c.byte_len for c in p.rx] == [len(m[1]) for m in msgs if m[3] is not None]


@pytest.mark.parametrize("mode", ["mrc", "rc"])
@pytest.mark.parametrize("encap", ["srv6", "stev", "udp"])
def test_every_byte_lands_once_in_order(mode, encap):
    rng = random.Random(7)
    p = make_pair([PathSpec() for _ in range(4)], mode=mode, encap=encap, buf_len=2 << 20)
    msgs = _messages(rng, p.mr.base_va, [0, 1, 4095, 4096, 4097, 100_000, 300_000, 7])
    transfer(p, msgs)
    _check_delivery(p, msgs)
    assert p.qb.counters.bytes_placed == sum(len(m[1]) for m in msgs)  # each byte placed once


@pytest.mark.parametrize("mode", ["mrc", "rc"])
def test_psn_wraparound(mode):
    rng = random.Random(3)
    p = make_pair([PathSpec() for _ in range(3)], mode=mode, sq_psn=0xFFFFFF - 20, buf_len=1 << 20)
    msgs = _messages(rng, p.mr.base_va, [50_000, 60_000, 30_000])
    transfer(p, msgs)
    _check_delivery(p, msgs)
    assert p.qa.snd_una > 0xFFFFFF  # really crossed the wrap


def test_path_dies_mid_message_assumed_bad_at_first_loss_and_completes():
    paths = [PathSpec() for _ in range(8)]
    paths[3].down = [(20_000, None)]
    p = make_pair(paths, buf_len=8 << 20)
    msgs = _messages(random.Random(1), p.mr.base_va, [6 << 20], imm_every=1)
    transfer(p, msgs)
    _check_delivery(p, msgs)
    ev = p.a.poll_events()
    bad = [e for e in ev if e.new_state is EvState.ASSUMED_BAD]
    assert [e.ev_index for e in bad] == [3] and bad[0].time_ns > 20_000
    assert p.qa.evset.entries[3].state is EvState.ASSUMED_BAD
    # exactly the data packets lost on the dead path were resent (its other drops are probes)
    lost = p.net.stats()[3][0].dropped_down - p.qa.counters.probes_sent
    assert p.qa.counters.retx_rack + p.qa.counters.retx_timeout == lost


def test_revived_path_returns_to_good_through_probes():
    paths = [PathSpec() for _ in range(4)]
    paths[1].down = [(10_000, 60_000)]
    # the simulated RTT is a few us: a 20 us probe floor instead of the 1 ms default for real networks
    p = make_pair(paths, attr=QpAttr(probe_good_count=3, probe_min_ns=20_000), buf_len=8 << 20)
    msgs = _messages(random.Random(2), p.mr.base_va, [4 << 20, 3 << 20], imm_every=1)
    transfer(p, msgs)
    p.net.run(until_ns=p.net.now + 200_000)
    _check_delivery(p, msgs)
    ev = p.a.poll_events()
    assert [(e.ev_index, e.new_state) for e in ev] == [(1, EvState.ASSUMED_BAD), (1, EvState.GOOD)]
    assert ev[1].time_ns >= 60_000 and ev[1].cause == "probe"
    assert p.qa.counters.probe_answers >= 3


def test_trims_never_retire_an_ev():
    # paths slower than the NIC ports: queues build, and the switch trims instead of dropping
    paths = [PathSpec(rate_bps=25e9, trim_bytes=24_000, queue_bytes=1 << 20) for _ in range(4)]
    p = make_pair(paths, port_rate_bps=100e9, buf_len=4 << 20)
    msgs = _messages(random.Random(4), p.mr.base_va, [3 << 20], imm_every=1)
    transfer(p, msgs)
    _check_delivery(p, msgs)
    assert sum(s[0].trimmed for s in p.net.stats()) > 0
    assert p.qa.counters.retx_trim > 0 and p.qb.counters.trims_received > 0
    assert not [e for e in p.a.poll_events() if e.new_state is EvState.ASSUMED_BAD]
    assert all(e.state is EvState.GOOD for e in p.qa.evset.entries)


def test_ecn_marks_are_echoed_and_penalise_paths():
    paths = [PathSpec(rate_bps=25e9, ecn_bytes=8_000, queue_bytes=1 << 20) for _ in range(2)]
    p = make_pair(paths, port_rate_bps=100e9, buf_len=2 << 20)
    msgs = _messages(random.Random(5), p.mr.base_va, [1 << 20])
    transfer(p, msgs)
    _check_delivery(p, msgs)
    assert sum(s[0].ecn_marked for s in p.net.stats()) > 0
    assert p.qa.counters.ecn_echoes > 0


def test_ev_min_active_holds():
    paths = [PathSpec() for _ in range(4)]
    paths[0].down = [(5_000, None)]
    paths[1].down = [(5_000, None)]
    paths[2].down = [(5_000, None)]
    p = make_pair(paths, attr=QpAttr(ev_min_active=2), buf_len=4 << 20)
    msgs = _messages(random.Random(6), p.mr.base_va, [2 << 20], imm_every=1)
    transfer(p, msgs)
    _check_delivery(p, msgs)
    states = [e.state for e in p.qa.evset.entries]
    assert states.count(EvState.GOOD) == 2 and p.qa.evset.holds > 0
    assert p.qa.counters.as_dict()["min_active_holds"] == p.qa.evset.holds  # what --json reports


def test_err_after_exhausted_retries():
    paths = [PathSpec(down=[(3_000, None)]) for _ in range(2)]
    attr = QpAttr(ack_timeout=4, retry_cnt=2, exp_retry_cnt=1)
    p = make_pair(paths, attr=attr, buf_len=1 << 20)
    msgs = _messages(random.Random(8), p.mr.base_va, [500_000, 1000], imm_every=1)
    transfer(p, msgs, until_ns=50_000_000)
    assert p.qa.state is QpState.ERR
    assert [c.status for c in p.done] == [WcStatus.RETRY_EXC_ERR, WcStatus.WR_FLUSH_ERR]
    assert p.qa.counters.timeouts == attr.retry_cnt + attr.exp_retry_cnt + 1
    # a request posted to a QP in ERR is flushed at once, as verbs flushes it (not refused)
    p.a.poll_completions()
    p.a.post_write(p.qa, 9, b"x", p.mr.base_va, p.mr.rkey)
    [c] = p.a.poll_completions()
    assert (c.wr_id, c.status, c.byte_len) == (9, WcStatus.WR_FLUSH_ERR, 0)
    assert not p.qa.requester.has_work()
    with pytest.raises(ValueError, match="32-bit"):  # what the wire cannot carry is still refused
        p.a.post_write(p.qa, 10, b"x", p.mr.base_va, p.mr.rkey, imm=1 << 32)


def test_local_port_down_retires_its_evs_and_tells_the_peer():
    p = make_pair([PathSpec() for _ in range(4)], buf_len=4 << 20)
    msgs = _messages(random.Random(9), p.mr.base_va, [2 << 20], imm_every=1)
    for m in msgs:
        p.a.post_write(p.qa, m[0], m[1], m[2], p.mr.rkey, m[3])
    p.net.run(until_ns=10_000)
    p.a.set_port_state(3, False, p.net.now)
    transfer(p, [])
    p.net.run(stop=lambda: (p.pump(), len(p.done) >= 1)[1])
    _check_delivery(p, msgs)
    assert p.qa.evset.entries[2].state is EvState.ASSUMED_BAD
    assert p.b.counters.port_status_received >= 1
    assert p.qb.evset.entries[2].state is EvState.ASSUMED_BAD  # the peer stopped using our dead plane
    # one event each, naming the profile's EV and no QP (qpn 0: a port event, which no QP observed)
    ours = [e for e in p.a.poll_events() if e.cause == "port_down"]
    theirs = [e for e in p.b.poll_events() if e.cause == "peer_port_down"]
    assert [(e.ev_index, e.qpn) for e in ours] == [(2, 0)]
    assert [(e.ev_index, e.qpn) for e in theirs] == [(2, 0)]


def test_wimm_cap_still_delivers_in_order():
    p = make_pair([PathSpec() for _ in range(4)], attr=QpAttr(max_wimm=1, max_wimm_dest=2), buf_len=1 << 20)
    msgs = _messages(random.Random(10), p.mr.base_va, [9000] * 12, imm_every=1)
    transfer(p, msgs)
    _check_delivery(p, msgs)


@pytest.mark.parametrize("mode", ["mrc", "rc"])
def test_delivers_under_loss_reorder_and_duplication(mode):
    paths = [PathSpec(loss=0.02, reorder=0.1, reorder_ns=3_000, dup=0.02) for _ in range(4)]
    p = make_pair(paths, mode=mode, buf_len=2 << 20, attr=QpAttr(mode=mode, ack_timeout=6,
                                                                 exp_retry_cnt=25))
    msgs = _messages(random.Random(11), p.mr.base_va, [400_000, 1, 300_000, 5000])
    transfer(p, msgs)
    _check_delivery(p, msgs)
    assert p.qb.counters.duplicates_received > 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), loss=st.floats(0, 0.08), reorder=st.floats(0, 0.5),
       dup=st.floats(0, 0.1), mode=st.sampled_from(["mrc", "rc"]), npaths=st.integers(1, 5),
       sizes=st.lists(st.integers(0, 60_000), min_size=1, max_size=5),
       start=st.integers(0, 0xFFFFFF))
def test_property_random_network_patterns(seed, loss, reorder, dup, mode, npaths, sizes, start):
    paths = [PathSpec(loss=loss, reorder=reorder, reorder_ns=2_500, dup=dup) for _ in range(npaths)]
    p = make_pair(paths, mode=mode, seed=seed, sq_psn=start, buf_len=1 << 19,
                  attr=QpAttr(mode=mode, ack_timeout=6, exp_retry_cnt=25, ev_min_active=1))
    msgs = _messages(random.Random(seed), p.mr.base_va, sizes, imm_every=1)
    transfer(p, msgs, until_ns=2_000_000_000)
    _check_delivery(p, msgs)


def test_wimm_overflow_is_a_resend_not_a_path_loss():
    """An application that does not poll its immediate completions for a while makes the responder
    refuse LAST_WITH_IMM packets beyond max_wimm_dest; the refusal goes back as an RNR NAK (resend it
    after min_rnr_timer, the path delivered it), so no healthy EV is retired and RACK does not resend in
    a loop."""
    p = make_pair([PathSpec() for _ in range(2)], attr=QpAttr(max_wimm_dest=1), buf_len=1 << 20)
    msgs = _messages(random.Random(12), p.mr.base_va, [2 * 4096] * 4, imm_every=1)
    for wr_id, data, va, imm in msgs:
        p.a.post_write(p.qa, wr_id, data, va, p.mr.rkey, imm)

    def sender_only() -> bool:  # the receiving application does not poll yet
        p.done.extend(p.a.poll_completions())
        return False

    p.net.run(until_ns=3_000_000, stop=sender_only)
    assert p.qb.counters.wimm_overflow > 0  # it refused some
    assert len(p.done) < len(msgs)

    def both() -> bool:
        p.pump()
        return len(p.done) >= len(msgs)

    p.net.run(until_ns=p.net.now + 50_000_000, stop=both)
    _check_delivery(p, msgs)
    bad = [e for e in p.qa.evset.prof.events if e.state is EvState.ASSUMED_BAD]
    assert not bad, bad
    assert p.qa.counters.retx_rack == 0, p.qa.counters
    assert p.qa.counters.retx_rnr > 0 and p.qa.counters.retx_trim == 0  # resent after their RNR timers
