"""What the load-time usage analysis (``softswitch/exec/usage.py``) lets the packet loop leave out,
and that leaving it out changes no packet: headers only ``extract`` writes are reset only while
valid, and ``egress_frame`` fills in only the standard-metadata fields a statement names."""
from __future__ import annotations

import random
from pathlib import Path

from exec_rig import DATA, Rig, through_api, through_loop

from softswitch.exec.usage import extract_only_headers, std_fields_used
from softswitch.frontend import load_program

REPO = Path(__file__).resolve().parents[3]
PROG = DATA / "exec_usage.p4"


def test_only_headers_written_by_extract_alone_are_lazy():
    # b: field written while invalid; c: setInvalid; d: register.read; e: hash result;
    # f: inout argument; rep: setValid and assignments.  eth, a and the stack: extract only
    assert extract_only_headers(load_program(str(PROG))) == {"eth", "a", "st"}
    bench4 = load_program(str(DATA / "bench4.p4"))
    assert extract_only_headers(bench4) == {"srh", "segs", "udp"}  # eth.dst, ipv6.dst/hop_limit written
    mrc = load_program(str(REPO / "p4src" / "mrc_switch.p4"))
    assert extract_only_headers(mrc) == {"hbh", "hbh_opts", "hbh_units", "dest_opts", "dest_units", "srh_segments",
                                         "srh_tlv_units", "bth", "reth", "immdt", "aeth"}


def test_unions_and_varbit_headers_are_never_lazy():
    for name, header in (("exec_union.p4", "u"), ("exec_varbit.p4", "o")):
        prog = load_program(str(DATA / name))
        names = {f.name for f in prog.parser.params[1].type.fields}
        assert header in names, (name, names)
        assert header not in extract_only_headers(prog)


def test_std_fields_named_by_the_program(tmp_path):
    assert std_fields_used(load_program(str(PROG))) == {"egress_spec"}
    # mark_to_drop(sm) names the two fields it writes, not the whole struct
    assert std_fields_used(load_program(str(DATA / "bench4.p4"))) == {"egress_spec", "mcast_grp"}
    mrc = std_fields_used(load_program(str(REPO / "p4src" / "mrc_switch.p4")))
    assert {"enq_qdepth", "deq_qdepth", "egress_global_timestamp", "ingress_global_timestamp"} <= mrc
    assert "deq_timedelta" not in mrc and "enq_timestamp" not in mrc
    # the struct passed whole to an action: any field may be read through it
    whole = PROG.read_text().replace(
        "action set_f(inout one_t hh) { hh.y = 3; }",
        "action set_f(inout one_t hh) { hh.y = 3; }\n"
        "    action peek(inout standard_metadata_t s) { s.priority = 1; }").replace(
        "sm.egress_spec = 1;", "sm.egress_spec = 1; peek(sm);")
    p = tmp_path / "whole.p4"
    p.write_text(whole)
    assert std_fields_used(load_program(str(p))) is None


def test_egress_frame_writes_only_the_std_fields_named():
    src = Rig(PROG).pipeline.egress_frame.__code__.co_names
    assert "f_egress_spec" in src and "f_deq_qdepth" not in src and "f_enq_timestamp" not in src
    mrc = Rig(REPO / "p4src" / "mrc_switch.p4").pipeline.egress_frame.__code__.co_names
    assert {"f_enq_qdepth", "f_deq_qdepth", "f_egress_global_timestamp"} <= set(mrc)
    assert "f_deq_timedelta" not in mrc


def _frame(everything: bool, writer: bool, rnd: random.Random) -> bytes:
    eth = bytes(5) + bytes([rnd.randrange(1, 256)]) + bytes(5) + bytes([1 if writer else 2])
    if not everything:
        return eth + b"\x08\x00" + bytes(20)
    return eth + b"\x90\x01" + bytes(rnd.randrange(1, 256) for _ in range(16)) + bytes(4)



def test_recycled_objects_read_as_fresh_ones_after_every_kind_of_write():
    """The loop's path reuses the objects of the previous packet; the API's are fresh.  After a
    packet that extracted (and wrote) every header, one that extracts nothing must report 0 for
    every field, as on fresh objects; a header wrongly taken as extract-only would show the
    earlier packet's value here."""
    r = Rig(PROG)
    pl = r.pipeline
    assert pl.ingress_item.__code__.co_filename.startswith("<fastpath:")
    rnd = random.Random(11)
    seen_nonzero = 0
    for i in range(400):
        data = _frame(everything=rnd.random() < 0.5, writer=rnd.random() < 0.5, rnd=rnd)
        got, want = through_loop(pl, data), through_api(pl, data)
        assert got == want, (i, data.hex(), got.hex(), want.hex())
        seen_nonzero += any(want[14:22])
        if data[12:14] != b"\x90\x01" and data[11] != 1:
            assert want[14:22] == bytes(8), want.hex()  # nothing extracted, nothing written: zeros
    assert seen_nonzero > 100
    assert pl._pool, "the loop's objects were put back for reuse"


def test_ingress_item_resets_only_the_std_fields_something_reads():
    """A recycled packet's standard metadata is reset only where a statement or the pipeline's
    own code can read it; the three fields ingress_item writes before the parser never are."""
    from softswitch.exec.fastpath import std_reset_skip

    pl = Rig(DATA / "bench4.p4").pipeline
    slots = set(pl._S.__slots__)
    skip = std_reset_skip(pl._S, std_fields_used(pl.program))
    assert slots - skip == {"f_egress_spec", "f_mcast_grp", "f_priority"}
    # the struct used whole: every field may be read, only the ones written first are skipped
    assert std_reset_skip(pl._S, None) == {"f_ingress_port", "f_packet_length", "f_ingress_global_timestamp"}
    names = pl.ingress_item.__code__.co_names
    assert "f_egress_rid" not in names and "f_deq_qdepth" not in names and "f_mcast_grp" in names
    mrc = Rig(REPO / "p4src" / "mrc_switch.p4").pipeline
    kept = set(mrc._S.__slots__) - std_reset_skip(mrc._S, std_fields_used(mrc.program))
    assert {"f_enq_qdepth", "f_deq_qdepth", "f_egress_spec"} <= kept
    assert "f_ingress_port" not in kept and "f_deq_timedelta" not in kept
