"""Header objects reused between packets (``softswitch.exec.recycle``) change nothing a packet does.

The packet loop's entry points (``ingress_item`` / ``egress_frame``) reuse the header, metadata and
standard-metadata objects of packets that have left; the API's (``ingress`` / ``egress``) always
allocate.  Both must give the same bytes for any sequence of packets, whatever the previous packet
left in the objects."""
from __future__ import annotations

import random

import pytest
from exec_rig import DATA, Rig
from test_exec_bench4 import frame
from test_exec_bench4 import rig as bench4_rig  # noqa: F401 - fixture

from softswitch.contract import IngressResult
from softswitch.exec.pipeline import PacketState
from softswitch.exec.recycle import dirty, make_reset, same_tree

PROGRAMS = sorted(DATA.glob("*.p4"))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_reset_puts_every_program_s_objects_back(path):
    b = Rig(path).pipeline.blocks
    classes = (b.header_cls, b.meta_cls, b.std_cls)
    reset = make_reset(*classes)
    assert reset is not None, f"{path.name}: objects not resettable (the loop would allocate)"
    objs = [c() for c in classes]
    for o in objs:
        dirty(o)
    assert not all(same_tree(o, c()) for o, c in zip(objs, classes))
    reset(*objs)
    assert all(same_tree(o, c()) for o, c in zip(objs, classes))


def test_reset_after_a_stack_pop_replaced_its_elements(bench4_rig):  # noqa: F811
    b = bench4_rig.pipeline.blocks
    reset = make_reset(b.header_cls, b.meta_cls, b.std_cls)
    H, M, S = b.header_cls(), b.meta_cls(), b.std_cls()
    dirty(H)
    H.f_segs.pop_front(2)
    dirty(H)
    reset(H, M, S)
    assert same_tree(H, b.header_cls())


def test_objects_that_cannot_be_reset_by_stores_are_refused():
    class Shared:
        __slots__ = ("a", "b")

        def __init__(self):
            self.a = self.b = Inner()

    class Inner:
        __slots__ = ("x",)

        def __init__(self):
            self.x = 0

    class NoSlots:
        def __init__(self):
            self.x = 0

    assert make_reset(Shared) is None
    assert make_reset(NoSlots) is None
    assert make_reset(Inner) is not None


def _api(pl, data: bytes, port: int):
    res = pl.ingress(data, port, 7)
    return [f.data for item in res.to_tm for f in pl.egress(item, 9).frames]


def _loop(pl, data: bytes, port: int):
    res = pl.ingress_item(data, port, 7)
    items = [res] if isinstance(res, PacketState) else res.to_tm
    if isinstance(res, IngressResult):
        assert not items or res.to_tm
    out = []
    for item in items:
        r = pl.egress_frame(item, 9)
        out.extend([r] if r.__class__ is bytes else [f.data for f in r.frames])
    return out


def test_loop_path_equals_api_path_over_a_random_sequence(bench4_rig):  # noqa: F811
    """SRH / no SRH / ACL drop / truncated frames in random order: a packet that finds objects an
    SRH packet filled (stack elements valid, fields set) must still come out as on a fresh tree."""
    pl = bench4_rig.pipeline
    kinds = [frame(srh=True), frame(srh=False), frame(dport=9, srh=False), frame(srh=True)[:70],
             frame(srh=True)[:30], b"\x00" * 14]
    rnd = random.Random(16)
    seq = [rnd.choice(kinds) for _ in range(300)]
    for data in seq:
        assert _loop(pl, data, 1) == _api(pl, data, 1)
    assert pl._pool, "forwarded packets' objects were put back for reuse"


def _mrc_pipeline(program, script):
    from p4.v1 import p4runtime_pb2

    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    state = SwitchState(build_p4info(program))
    for ent in script.entities:
        default = ent.HasField("table_entry") and ent.table_entry.is_default_action
        kind = p4runtime_pb2.Update.MODIFY if default else p4runtime_pb2.Update.INSERT
        state.write(p4runtime_pb2.Update(type=kind, entity=ent))
    return build_pipeline(program, state, 255)


def test_mrc_switch_loop_path_equals_api_path():
    """The differential run's 5,000 random, mutated and tagged MRC packets into leaf p1l1 with the
    controller's tables, in batches of 32 in flight at once: the loop's path (objects reused) and
    the API's (fresh objects) produce the same frames, clones and drops, packet by packet."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
    from mrc_script import build

    program, script, _counts = build(5000)
    api, loop = _mrc_pipeline(program, script), _mrc_pipeline(program, script)
    assert loop._reset is not None
    pk = script.packets
    forwarded = 0
    for start in range(0, len(pk), 32):
        batch = pk[start:start + 32]
        a_items = [(i, api.ingress(p.data, p.port, p.time_us)) for i, p in enumerate(batch)]
        l_items = [(i, loop.ingress_item(p.data, p.port, p.time_us)) for i, p in enumerate(batch)]
        a_out: list = [[] for _ in batch]
        l_out: list = [[] for _ in batch]
        for i, res in a_items:
            for item in res.to_tm:
                e = api.egress(item, batch[i].time_us + 5)
                a_out[i].extend((f.port, f.data) for f in e.frames)
                a_out[i].extend(("clone", c.egress_port) for c in e.to_tm)
        for i, res in l_items:
            items = [res] if isinstance(res, PacketState) else res.to_tm
            for item in items:
                e = loop.egress_frame(item, batch[i].time_us + 5)
                if e.__class__ is bytes:
                    l_out[i].append((item.egress_port, e))
                else:
                    l_out[i].extend((f.port, f.data) for f in e.frames)
                    l_out[i].extend(("clone", c.egress_port) for c in e.to_tm)
        assert l_out == a_out, f"packets {start}..{start + len(batch) - 1}"
        forwarded += sum(1 for o in l_out if o)
    assert forwarded > 1000 and loop._pool, (forwarded, len(loop._pool))
