"""Table semantics of the runtime state: match kinds, priorities, default entries, errors."""
from __future__ import annotations

import threading

import pytest
from p4.config.v1 import p4info_pb2
from rt_helpers import DELETE, INSERT, MODIFY, Builder, b, load_p4info, update

from softswitch.runtime import Code, P4RuntimeError, SwitchState

V6 = 0x20010DB8 << 96


@pytest.fixture()
def p4info():
    return load_p4info()


@pytest.fixture()
def sb(p4info):
    return SwitchState(p4info), Builder(p4info)


def write(state, utype, te):
    state.write(update(utype, table_entry=te))


def code_of(fn) -> Code:
    with pytest.raises(P4RuntimeError) as ei:
        fn()
    return ei.value.code


def test_exact_insert_lookup_modify_delete(sb):
    s, bl = sb
    l2 = s.table("MyIngress.l2")
    assert l2.lookup((0xAABB,)) == (bl.aid("l2_miss"), (), None)
    write(s, INSERT, bl.entry("l2", {"dst_mac": 0xAABB}, bl.action("set_port", dmac=0x1122, port=7)))
    aid, args, e = l2.lookup((0xAABB,))
    assert (aid, args) == (bl.aid("set_port"), (0x1122, 7)) and e is not None
    write(s, MODIFY, bl.entry("l2", {"dst_mac": 0xAABB}, bl.action("set_port", dmac=0x3344, port=9)))
    assert l2.lookup((0xAABB,))[:2] == (bl.aid("set_port"), (0x3344, 9))
    assert l2.lookup((0xAABB,))[2] is e  # same entry object, counters kept
    write(s, DELETE, bl.entry("l2", {"dst_mac": 0xAABB}))
    assert l2.lookup((0xAABB,))[2] is None


def test_exact_errors(sb):
    s, bl = sb
    ok = bl.entry("l2", {"dst_mac": 1}, bl.action("set_port", dmac=1, port=1))
    write(s, INSERT, ok)
    assert code_of(lambda: write(s, INSERT, ok)) == Code.ALREADY_EXISTS
    assert code_of(lambda: write(s, MODIFY, bl.entry("l2", {"dst_mac": 2}, bl.action("set_port", dmac=1, port=1)))) \
        == Code.NOT_FOUND
    assert code_of(lambda: write(s, DELETE, bl.entry("l2", {"dst_mac": 2}))) == Code.NOT_FOUND
    # @defaultonly action in an entry
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 3}, bl.action("l2_miss")))) \
        == Code.PERMISSION_DENIED
    # action not in the table
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 3}, bl.action("acl_permit")))) \
        == Code.INVALID_ARGUMENT
    # missing parameter (INVALID_ARGUMENT); too-wide parameter (port is 9 bits) and too-wide key (48
    # bits) are OUT_OF_RANGE (spec "Bytestrings")
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 3}, bl.action("set_port", dmac=1)))) \
        == Code.INVALID_ARGUMENT
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 3}, bl.action("set_port", dmac=1, port=512)))) \
        == Code.OUT_OF_RANGE
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 1 << 48}, bl.action("set_port", dmac=1, port=1)))) \
        == Code.OUT_OF_RANGE
    # exact field missing, priority on an exact table, no action on insert, is_const in a write
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {}, bl.action("set_port", dmac=1, port=1)))) \
        == Code.INVALID_ARGUMENT
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 5}, bl.action("set_port", dmac=1, port=1),
                                                     priority=3))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 5}))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 5}, bl.action("set_port", dmac=1, port=1),
                                                     is_const=True))) == Code.INVALID_ARGUMENT
    # unknown table id
    te = bl.entry("l2", {"dst_mac": 5}, bl.action("set_port", dmac=1, port=1))
    te.table_id = 12345
    assert code_of(lambda: write(s, INSERT, te)) == Code.NOT_FOUND
    # idle timeout on a table without idle-timeout support
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 5}, bl.action("set_port", dmac=1, port=1),
                                                     idle_timeout_ns=10))) == Code.INVALID_ARGUMENT


def test_padded_bytestrings_accepted_and_read_canonical(sb):
    s, bl = sb
    te = bl.entry("l2", {"dst_mac": 5}, bl.action("set_port", dmac=1, port=3))
    te.match[0].exact.value = (5).to_bytes(6, "big")
    te.action.action.params[1].value = b"\x00\x03"
    write(s, INSERT, te)
    (got,) = s.read(update(INSERT, table_entry=bl.entry("l2")).entity)
    assert got.table_entry.match[0].exact.value == b"\x05"
    assert [p.value for p in got.table_entry.action.action.params] == [b"\x01", b"\x03"]


def test_table_full_is_resource_exhausted(p4info):
    for t in p4info.tables:
        if t.preamble.name == "MyIngress.l2":
            t.size = 2
    s, bl = SwitchState(p4info), Builder(p4info)
    for mac in (1, 2):
        write(s, INSERT, bl.entry("l2", {"dst_mac": mac}, bl.action("set_port", dmac=1, port=1)))
    assert code_of(lambda: write(s, INSERT, bl.entry("l2", {"dst_mac": 3}, bl.action("set_port", dmac=1, port=1)))) \
        == Code.RESOURCE_EXHAUSTED


def test_lpm_longest_prefix_wins():
    p4info = load_p4info(__import__("rt_helpers").BENCH4)
    s, bl = SwitchState(p4info), Builder(p4info)
    t = s.table("I.route_v6")
    nh = next(a for a in p4info.actions if a.preamble.id in {r.id for r in bl.tables["route_v6"].action_refs}
              and a.params)
    n = len(nh.params)

    def act(port):
        return bl.action(nh.preamble.name, **{p.name: port for p in nh.params})

    def add(prefix, plen, port):
        write(s, INSERT, bl.entry("route_v6", {"h.ipv6.dst": (prefix, plen)}, act(port)))

    add(V6, 32, 1)
    add(V6 | (1 << 80), 48, 2)
    add(V6 | (1 << 80) | 5, 128, 3)
    assert t.lookup((V6 | 7,))[1] == (1,) * n
    assert t.lookup((V6 | (1 << 80) | 9,))[1] == (2,) * n
    assert t.lookup((V6 | (1 << 80) | 5,))[1] == (3,) * n
    assert t.lookup((0x2002 << 112,))[2] is None
    # don't-care (field omitted) entry catches everything else
    write(s, INSERT, bl.entry("route_v6", {}, act(9)))
    assert t.lookup((0x2002 << 112,))[1] == (9,) * n
    write(s, DELETE, bl.entry("route_v6", {"h.ipv6.dst": (V6 | (1 << 80), 48)}))
    assert t.lookup((V6 | (1 << 80) | 9,))[1] == (1,) * n
    # prefix_len 0, too long, bits beyond the prefix
    for bad in ((V6, 0), (V6, 129), (V6 | 1, 32)):
        assert code_of(lambda bad=bad: write(s, INSERT, bl.entry("route_v6", {"h.ipv6.dst": bad},
                                                                 act(1)))) \
            == Code.INVALID_ARGUMENT


def test_ternary_range_optional_priorities(sb):
    s, bl = sb
    acl = s.table("acl")
    permit, deny, cpu = bl.aid("acl_permit"), bl.aid("acl_deny"), bl.aid("to_cpu")
    # key order: next_hdr(ternary 8), dport(range 16), l4_sport(optional 16), eth_type(ternary 16)
    write(s, INSERT, bl.entry("acl", {"h.ipv6.next_hdr": (17, 0xFF)}, bl.action("acl_deny"), priority=10))
    write(s, INSERT, bl.entry("acl", {"h.udp.dport": (4791, 4791)}, bl.action("to_cpu", reason=3), priority=20))
    write(s, INSERT, bl.entry("acl", {"m.l4_sport": 99, "eth_type": (0x86DD, 0xFFFF)}, bl.action("acl_permit"),
                               priority=30))
    assert acl.lookup((17, 80, 1, 0x86DD))[0] == deny
    assert acl.lookup((17, 4791, 1, 0x86DD))[:2] == (cpu, (3,))
    assert acl.lookup((17, 4791, 99, 0x86DD))[0] == permit
    assert acl.lookup((6, 4790, 99, 0x0800)) == (permit, (), None)  # default, a miss
    assert acl.lookup((6, 4790, 98, 0x86DD))[2] is None
    # same match, different priority: two entries; the higher wins
    write(s, INSERT, bl.entry("acl", {"h.ipv6.next_hdr": (17, 0xFF)}, bl.action("to_cpu", reason=1), priority=40))
    assert acl.lookup((17, 80, 1, 0))[:2] == (cpu, (1,))
    write(s, DELETE, bl.entry("acl", {"h.ipv6.next_hdr": (17, 0xFF)}, priority=40))
    assert acl.lookup((17, 80, 1, 0))[0] == deny
    # errors: priority 0, mask 0, value outside mask, low > high, full range
    bad = [
        bl.entry("acl", {"h.ipv6.next_hdr": (17, 0xFF)}, bl.action("acl_deny")),
        bl.entry("acl", {"h.ipv6.next_hdr": (0, 0)}, bl.action("acl_deny"), priority=1),
        bl.entry("acl", {"h.ipv6.next_hdr": (0x11, 0x0F)}, bl.action("acl_deny"), priority=1),
        bl.entry("acl", {"h.udp.dport": (10, 5)}, bl.action("acl_deny"), priority=1),
        bl.entry("acl", {"h.udp.dport": (0, 0xFFFF)}, bl.action("acl_deny"), priority=1),
    ]
    for te in bad:
        assert code_of(lambda te=te: write(s, INSERT, te)) == Code.INVALID_ARGUMENT


def test_ternary_many_masks_matches_linear_scan(sb):
    """Tuple-space search gives the same answers as a brute-force priority scan."""
    import random

    s, bl = sb
    acl = s.table("acl")
    rnd = random.Random(7)
    rules = []
    for prio in rnd.sample(range(1, 1000), 60):
        m = rnd.choice([0xFF, 0xF0, 0x0F, 0x11])
        v = rnd.randrange(256) & m
        lo = rnd.randrange(0, 60000)
        hi = lo + rnd.randrange(1, 5000)
        te = bl.entry("acl", {"h.ipv6.next_hdr": (v, m), "h.udp.dport": (lo, hi)}, bl.action("to_cpu", reason=prio % 256),
                      priority=prio)
        write(s, INSERT, te)
        rules.append((prio, v, m, lo, hi))
    rules.sort(reverse=True)
    for _ in range(2000):
        nh, dp = rnd.randrange(256), rnd.randrange(65536)
        want = next(((p % 256,) for p, v, m, lo, hi in rules if nh & m == v and lo <= dp <= hi), None)
        _aid, args, e = acl.lookup((nh, dp, 0, 0))
        assert (args if e is not None else None) == want


def test_default_entry_modify_reset_and_errors(sb):
    s, bl = sb
    acl = s.table("acl")
    write(s, MODIFY, bl.entry("acl", action=bl.action("to_cpu", reason=5), is_default_action=True))
    assert acl.lookup((0, 0, 0, 0)) == (bl.aid("to_cpu"), (5,), None)
    (got,) = s.read(update(INSERT, table_entry=bl.entry("acl", is_default_action=True)).entity)
    assert got.table_entry.is_default_action and got.table_entry.action.action.action_id == bl.aid("to_cpu")
    write(s, MODIFY, bl.entry("acl", is_default_action=True))  # no action: reset
    assert acl.lookup((0, 0, 0, 0)) == (bl.aid("acl_permit"), (), None)
    for utype in (INSERT, DELETE):
        assert code_of(lambda utype=utype: write(s, utype, bl.entry("acl", action=bl.action("acl_deny"),
                                                                    is_default_action=True))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: write(s, MODIFY, bl.entry("acl", {"m.l4_sport": 1}, bl.action("acl_deny"), priority=1,
                                                     is_default_action=True))) == Code.INVALID_ARGUMENT
    # indirect tables keep their default action
    assert code_of(lambda: write(s, MODIFY, bl.entry("MyIngress.nexthop", action=bl.action("ingress.nexthop", port=1),
                                                     is_default_action=True))) == Code.PERMISSION_DENIED


def test_tableonly_default_and_const_default(p4info):
    for t in p4info.tables:
        if t.preamble.name == "MyIngress.acl":
            t.action_refs[2].scope = p4info_pb2.ActionRef.TABLE_ONLY  # to_cpu
        if t.preamble.name == "MyIngress.src_learn":
            t.const_default_action_id = t.initial_default_action.action_id
    s, bl = SwitchState(p4info), Builder(p4info)
    assert code_of(lambda: write(s, MODIFY, bl.entry("acl", action=bl.action("to_cpu", reason=1),
                                                     is_default_action=True))) == Code.PERMISSION_DENIED
    assert code_of(lambda: write(s, MODIFY, bl.entry("src_learn", action=bl.action("NoAction"),
                                                     is_default_action=True))) == Code.PERMISSION_DENIED
    # resetting it (a MODIFY without an action) is modifying it too (spec, "Default Entry"; PI alike)
    assert code_of(lambda: write(s, MODIFY, bl.entry("src_learn", is_default_action=True))) == Code.PERMISSION_DENIED
    # a const default entry reads back with is_const (p4runtime.proto, TableEntry.is_const); others without
    const_default = s.read(update(INSERT, table_entry=bl.entry("src_learn", is_default_action=True)).entity)
    assert [r.table_entry.is_const for r in const_default] == [True]
    acl_default = s.read(update(INSERT, table_entry=bl.entry("acl", is_default_action=True)).entity)
    assert [r.table_entry.is_const for r in acl_default] == [False]


def test_const_table(p4info):
    for t in p4info.tables:
        if t.preamble.name == "MyIngress.acl":
            t.is_const_table = True
            t.has_initial_entries = True
    s, bl = SwitchState(p4info), Builder(p4info)
    acl = s.table("acl")
    acl.add_const_entry(bl.entry("acl", {"h.ipv6.next_hdr": (6, 0xFF)}, bl.action("acl_deny"), priority=2))
    acl.add_const_entry(bl.entry("acl", {"h.ipv6.next_hdr": (6, 0xFE)}, bl.action("to_cpu", reason=4), priority=1))
    assert acl.lookup((6, 0, 0, 0))[0] == bl.aid("acl_deny")
    assert acl.lookup((7, 0, 0, 0))[:2] == (bl.aid("to_cpu"), (4,))
    new = bl.entry("acl", {"h.ipv6.next_hdr": (8, 0xFF)}, bl.action("acl_deny"), priority=3)
    assert code_of(lambda: write(s, INSERT, new)) == Code.PERMISSION_DENIED
    key = bl.entry("acl", {"h.ipv6.next_hdr": (6, 0xFF)}, bl.action("acl_permit"), priority=2)
    assert code_of(lambda: write(s, MODIFY, key)) == Code.PERMISSION_DENIED
    assert code_of(lambda: write(s, DELETE, key)) == Code.PERMISSION_DENIED
    # direct resources of const entries may be modified (acl has a direct meter)
    key.ClearField("action")
    key.meter_config.cir, key.meter_config.cburst, key.meter_config.pir, key.meter_config.pburst = 1, 1, 2, 2
    write(s, MODIFY, key)
    reads = s.read(update(INSERT, table_entry=bl.entry("acl")).entity)
    assert len(reads) == 2 and all(r.table_entry.is_const for r in reads)


def test_keyless_table_only_has_a_default(sb):
    s, bl = sb
    assert code_of(lambda: write(s, INSERT, bl.entry("selector_keys", {}, bl.action("ingress.nexthop", port=1)))) \
        in (Code.INVALID_ARGUMENT,)
    assert s.table("selector_keys").lookup(()) == (bl.aid("NoAction"), (), None)


def test_read_filters_and_metadata(sb):
    s, bl = sb
    for mac in range(1, 6):
        write(s, INSERT, bl.entry("l2", {"dst_mac": mac}, bl.action("set_port", dmac=mac, port=mac),
                                  controller_metadata=mac % 2, metadata=b"m%d" % mac))
    rd = lambda **kw: s.read(update(INSERT, table_entry=bl.entry("l2", **kw)).entity)
    assert len(rd()) == 5
    assert len(rd(controller_metadata=1)) == 3
    assert [r.table_entry.metadata for r in rd(metadata=b"m2")] == [b"m2"]
    assert len(rd(match={"dst_mac": 4})) == 1 and rd(match={"dst_mac": 9}) == []
    from p4.v1 import p4runtime_pb2
    everything = s.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
    assert len(everything) == 5


def test_concurrent_lookups_while_writing(sb):
    """Lookups on another thread never fail and only see complete entries while entries churn."""
    s, bl = sb
    acl = s.table("acl")
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader():
        try:
            while not stop.is_set():
                for nh in range(32):
                    _aid, args, e = acl.lookup((nh, 80, 0, 0))
                    if e is not None:
                        assert args == (nh,), (nh, args)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    th = threading.Thread(target=reader)
    th.start()
    try:
        for rnd in range(30):
            for nh in range(32):
                te = bl.entry("acl", {"h.ipv6.next_hdr": (nh, 0xFF)}, bl.action("to_cpu", reason=nh), priority=nh + 1)
                write(s, INSERT, te)
            for nh in range(32):
                write(s, DELETE, bl.entry("acl", {"h.ipv6.next_hdr": (nh, 0xFF)}, priority=nh + 1))
    finally:
        stop.set()
        th.join(timeout=10)
    assert not errors, errors[0]


def test_b_helper_roundtrip():
    assert b(0) == b"\x00" and b(256) == b"\x01\x00"


def test_set_initial_default_is_what_reset_restores(sb):
    s, bl = sb
    acl = s.table("acl")
    acl.set_initial_default(bl.aid("to_cpu"), (9,))
    assert acl.lookup((0, 0, 0, 0)) == (bl.aid("to_cpu"), (9,), None)
    write(s, MODIFY, bl.entry("acl", action=bl.action("acl_deny"), is_default_action=True))
    write(s, MODIFY, bl.entry("acl", is_default_action=True))
    assert acl.lookup((0, 0, 0, 0)) == (bl.aid("to_cpu"), (9,), None)
    (got,) = s.read(update(INSERT, table_entry=bl.entry("acl", is_default_action=True)).entity)
    assert got.table_entry.action.action.params[0].value == b"\x09"


def test_idle_timeout_stored_on_supporting_tables(p4info):
    for t in p4info.tables:
        if t.preamble.name == "MyIngress.l2":
            t.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
    s, bl = SwitchState(p4info), Builder(p4info)
    write(s, INSERT, bl.entry("l2", {"dst_mac": 1}, bl.action("set_port", dmac=1, port=1), idle_timeout_ns=5_000_000))
    req = bl.entry("l2")
    req.time_since_last_hit.SetInParent()
    (got,) = s.read(update(INSERT, table_entry=req).entity)
    assert got.table_entry.idle_timeout_ns == 5_000_000 and got.table_entry.HasField("time_since_last_hit")
    bad = bl.entry("l2", {"dst_mac": 2}, bl.action("set_port", dmac=1, port=1))
    bad.time_since_last_hit.elapsed_ns = 1
    assert code_of(lambda: write(s, INSERT, bad)) == Code.INVALID_ARGUMENT


def test_inconsistent_p4info_is_rejected(p4info):
    from softswitch.runtime import P4InfoError

    p4info.tables[0].action_refs.add(id=4242)
    with pytest.raises(P4InfoError, match="4242"):
        SwitchState(p4info)


def test_one_field_lookup1_answers_as_lookup_through_writes():
    """``lookup1(v)`` (the generated code's call for a one-field table: no key tuple, exact tables
    keyed by the value, LPM taking the first group that holds it) gives what ``lookup((v,))``
    gives, through random inserts and deletes of many prefix lengths, the don't-care entry too."""
    import random

    p4info = load_p4info(__import__("rt_helpers").BENCH4)
    s, bl = SwitchState(p4info), Builder(p4info)
    rnd = random.Random(16)
    route, my_mac = s.table("I.route_v6"), s.table("I.my_mac")
    fwd = next(a for a in p4info.actions if a.preamble.name == "I.fwd")
    nop = bl.action("I.nop")
    assert route.lookup1 is not None and my_mac.lookup1 is not None and s.table("I.acl").lookup1 is None
    live_routes: dict = {}
    live_macs: set = set()
    probes = [V6 | (rnd.getrandbits(16) << 96) | rnd.getrandbits(8) for _ in range(40)]
    for step in range(400):
        if rnd.random() < 0.6:
            plen = rnd.choice([0, 16, 24, 32, 40, 48, 64, 127, 128])
            base = rnd.choice(probes)
            prefix = base & (((1 << plen) - 1) << (128 - plen)) if plen else 0
            key = {} if plen == 0 else {"h.ipv6.dst": (prefix, plen)}
            if (prefix, plen) in live_routes:
                write(s, DELETE, bl.entry("route_v6", key))
                del live_routes[(prefix, plen)]
            else:
                act = bl.action(fwd.preamble.name, port=step % 500, dmac=step)
                write(s, INSERT, bl.entry("route_v6", key, act))
                live_routes[(prefix, plen)] = step
        else:
            mac = rnd.randrange(8)
            if mac in live_macs:
                write(s, DELETE, bl.entry("my_mac", {"h.eth.dst": mac}))
                live_macs.discard(mac)
            else:
                write(s, INSERT, bl.entry("my_mac", {"h.eth.dst": mac}, nop))
                live_macs.add(mac)
        for v in probes + [0, (1 << 128) - 1]:
            assert route.lookup1(v) == route.lookup((v,)), (step, hex(v))
        for mac in range(8):
            assert my_mac.lookup1(mac) == my_mac.lookup((mac,))
    assert live_routes and live_macs


# ---- idle timeout scan ------------------------------------------------------------------------
@pytest.fixture()
def idle_sb(p4info):
    for t in p4info.tables:
        if t.preamble.name == "MyIngress.l2":
            t.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
            t.size = 0  # unbounded
    s = SwitchState(p4info)
    return s, Builder(p4info), s.table("MyIngress.l2")


def _l2(bl, mac: int, ttl_ns: int = 0):
    return bl.entry("l2", {"dst_mac": mac}, bl.action("set_port", dmac=1, port=1), idle_timeout_ns=ttl_ns)


def _lines_run(fn):
    """(fn's result, how many lines of Python it ran, callees included): the work it did."""
    import sys

    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    prev = sys.gettrace()
    sys.settrace(tracer)
    try:
        got = fn()
    finally:
        sys.settrace(prev)
    return got, count


def _macs(notes) -> list[int]:
    return sorted(int.from_bytes(te.match[0].exact.value, "big") for te in notes)


def test_idle_scan_does_not_walk_entries_without_idle_timeout(idle_sb):
    """The scan runs under the server's write lock: its work must not grow with the entries
    that have no idle timeout (here 4000 of them next to 2 that have one; walking the table
    ran several lines per entry, over 12000 in all)."""
    import time

    s, bl, _ = idle_sb
    for mac in range(1, 4001):
        write(s, INSERT, _l2(bl, mac))
    write(s, INSERT, _l2(bl, 0x5001, ttl_ns=1000))
    write(s, INSERT, _l2(bl, 0x5002, ttl_ns=1000))
    later = time.monotonic_ns() + 10**9
    got, lines = _lines_run(lambda: s.idle_expired(later))
    assert [_macs(g) for g in got] == [[0x5001, 0x5002]]
    assert lines < 2000, lines  # building the two notifications (pure-Python protobuf: ~300 each)
    got, lines = _lines_run(lambda: s.idle_expired(later + 500))  # nothing due yet
    assert got == [] and lines < 50, lines


def test_idle_scan_work_stays_bounded_under_write_churn(idle_sb):
    """Inserting and deleting timed entries leaves nothing for the scan to wade through."""
    import time

    s, bl, _ = idle_sb
    write(s, INSERT, _l2(bl, 1, ttl_ns=1000))
    for mac in range(2, 3002):
        write(s, INSERT, _l2(bl, mac, ttl_ns=1000))
        write(s, DELETE, _l2(bl, mac))
    write(s, MODIFY, _l2(bl, 1, ttl_ns=2000))  # a new deadline: the old one is dropped
    got, lines = _lines_run(lambda: s.idle_expired(time.monotonic_ns() + 10**9))
    assert [_macs(g) for g in got] == [[1]]
    assert lines < 2000, lines


def test_idle_deadlines_follow_hits_notifications_and_modifies(idle_sb):
    """Spec "Table Idle Timeout Notification": an entry is reported once not hit for its TTL;
    its timer then restarts; a hit (the data plane sets since_ns) postpones it; a MODIFY to 0
    stops it, to another TTL uses that one; a deleted entry is never reported."""
    s, bl, t = idle_sb
    write(s, INSERT, _l2(bl, 1, ttl_ns=1000))
    write(s, INSERT, _l2(bl, 2, ttl_ns=1000))
    write(s, INSERT, _l2(bl, 3, ttl_ns=1000))
    e1, e2, e3 = t.entries()
    t0 = max(e.since_ns for e in (e1, e2, e3))  # each inserted at its since_ns, t0 or a bit before
    assert t.idle_expired(min(e.since_ns for e in (e1, e2, e3)) + 999) == []
    e2.since_ns = t0 + 500  # a hit
    write(s, DELETE, _l2(bl, 3))
    (n,) = t.idle_expired(t0 + 1000)
    assert _macs([n]) == [1] and n.idle_timeout_ns == 1000 and n.time_since_last_hit.elapsed_ns >= 1000
    assert t.idle_expired(t0 + 1499) == []
    assert _macs(t.idle_expired(t0 + 1500)) == [2]
    assert t.idle_expired(t0 + 1999) == []  # 1 was reported at t0 + 1000: next at t0 + 2000
    assert _macs(t.idle_expired(t0 + 2000)) == [1]
    write(s, MODIFY, _l2(bl, 1, ttl_ns=0))
    write(s, MODIFY, _l2(bl, 2, ttl_ns=100))  # last notified at t0 + 1500
    assert t.idle_expired(t0 + 1599) == []
    assert _macs(t.idle_expired(t0 + 1600)) == [2]
    assert _macs(t.idle_expired(t0 + 10**6)) == [2]
    write(s, MODIFY, _l2(bl, 1, ttl_ns=50))  # last notified at t0 + 2000: due at once
    assert _macs(t.idle_expired(t0 + 10**6 + 50)) == [1]
    assert _macs(t.idle_expired(t0 + 10**6 + 100)) == [1, 2]


def test_equal_priorities_tie_as_on_bmv2(sb):
    """Of two matching ternary entries of one priority, bmv2 picks the one with the lower entry
    handle, and a handle is the lowest number not in use when the entry is inserted
    (match_units.cpp, handle_mgr.h); PI keeps equal P4Runtime priorities equal.  Until 2026-12-05
    softswitch picked by mask group, whatever the insertion order."""
    s, bl = sb
    acl = s.table("acl")

    def add(value, mask, reason):
        te = bl.entry("acl", {"h.ipv6.next_hdr": (value, mask)}, bl.action("to_cpu", reason=reason), priority=10)
        write(s, INSERT, te)
        return te

    add(0x20, 0xF0, 1)  # handle 0, does not match 0x11
    y = add(0x01, 0x0F, 2)  # handle 1, matches
    add(0x10, 0xF0, 3)  # handle 2, matches: Y's handle is lower
    assert acl.lookup((0x11, 0, 0, 0))[:2] == (bl.aid("to_cpu"), (2,))
    write(s, DELETE, y)  # frees handle 1 ...
    add(0x11, 0x11, 4)  # ... which this one takes: it beats handle 2
    assert acl.lookup((0x11, 0, 0, 0))[:2] == (bl.aid("to_cpu"), (4,))
    # a higher priority still wins whatever its handle
    te = bl.entry("acl", {"h.ipv6.next_hdr": (0x11, 0xFF)}, bl.action("to_cpu", reason=5), priority=11)
    write(s, INSERT, te)
    assert acl.lookup((0x11, 0, 0, 0))[:2] == (bl.aid("to_cpu"), (5,))
