"""Headers reset for the next packet only while valid or marked dirty (issue 16).

``usage.field_written_headers`` lists the headers whose only writes besides ``extract`` are stores
the generated code marks (``dirty = True`` after a field store or ``setInvalid``; a whole-header
store is ``copy_from``, which sets it), and stack ``push_front``/``pop_front``.  The recycled
objects of the loop's path skip the reset of such a header while it is invalid and clean, so the
fields a fresh object would read as 0 must still read 0 after every kind of write; the API's
path builds fresh objects for each packet and is the reference."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from exec_rig import DATA, Rig, through_api, through_loop

from softswitch.exec.exprgen import ExprGen
from softswitch.exec.usage import field_written_headers
from softswitch.frontend import load_program

REPO = Path(__file__).resolve().parents[3]
PROG = DATA / "exec_dirty.p4"


def test_headers_whose_every_write_is_marked():
    assert field_written_headers(load_program(str(PROG))) == {"g", "p", "q", "k", "w", "z", "st", "ps", "v", "u", "rep"}
    # exec_usage.p4: a and st are extract-only (already reset only while valid), the rest marked
    assert field_written_headers(load_program(str(DATA / "exec_usage.p4"))) == {"b", "c", "d", "e", "f", "rep"}
    assert field_written_headers(load_program(str(DATA / "bench4.p4"))) == {"eth", "ipv6"}
    mrc = field_written_headers(load_program(str(REPO / "p4src" / "mrc_switch.p4")))
    assert {"ethernet", "ipv4", "ipv6", "udp", "telemetry_records", "cpu_in", "postcard"} <= mrc
    assert not mrc & {"hbh", "bth"}  # extract-only


def test_a_write_the_walk_cannot_follow_tracks_nothing(tmp_path):
    # the whole headers struct as an inout argument: any header may be written through it
    src = PROG.read_text().replace(
        "action give(out bit<8> v) { v = 0x33; }",
        "action give(out bit<8> v) { v = 0x33; }\n    action all(inout headers_t hh) { hh.g.x = 1; }").replace(
        "give(h.q.y);", "give(h.q.y); all(h);")
    p = tmp_path / "whole.p4"
    p.write_text(src)
    assert field_written_headers(load_program(str(p))) == frozenset()


def _frame(everything: bool, writer: bool, rnd: random.Random) -> bytes:
    eth = bytes(5) + bytes([rnd.randrange(1, 256)]) + bytes(5) + bytes([1 if writer else 2])
    if not everything:
        return eth + b"\x08\x00" + bytes(20)
    return eth + b"\x90\x01" + bytes(rnd.randrange(1, 256) for _ in range(22)) + bytes(4)



def _run(pl, seed: int, n: int) -> int:
    rnd = random.Random(seed)
    nonzero = 0
    for i in range(n):
        data = _frame(everything=rnd.random() < 0.5, writer=rnd.random() < 0.5, rnd=rnd)
        got, want = through_loop(pl, data), through_api(pl, data)
        assert got == want, (i, data.hex(), got.hex(), want.hex())
        nonzero += any(want[14:27])
    return nonzero


def test_recycled_objects_read_as_fresh_ones_after_every_kind_of_write():
    pl = Rig(PROG).pipeline
    assert pl.ingress_item.__code__.co_filename.startswith("<fastpath:")
    assert ".dirty" in pl.blocks.source
    # stores inside `if (h.v.isValid())` and `if (h.u.isValid() ...)` carry no mark (v's one
    # mark is its setInvalid's)
    assert re.search(r"\.valid = _xh\.dirty = True", pl.blocks.source)  # extract's
    assert pl.blocks.source.count("H.f_v.dirty = True") == 1 and "H.f_u.dirty = True" not in pl.blocks.source
    assert _run(pl, 5, 500) > 150
    assert pl._pool, "the loop's objects were put back for reuse"


def test_without_the_marks_the_reset_would_be_wrong(monkeypatch):
    """The check above has teeth: the same program with the marks left out of the generated
    code (the reset still skipping clean invalid headers) reads an earlier packet's values."""
    monkeypatch.setattr(ExprGen, "dirty_header", lambda self, e: None)
    pl = Rig(PROG).pipeline
    marks = re.findall(r"^ *\S+\.dirty = True$", pl.blocks.source.split("def parse")[1], re.MULTILINE)
    assert pl._tracked and not marks  # only extract's `valid = dirty = True` is left
    with pytest.raises(AssertionError):
        _run(pl, 5, 500)


def test_without_the_extract_marks_the_reset_would_be_wrong(monkeypatch):
    """A valid header is dirty too (extract and setValid set both), so the reset tests one flag:
    the same program with extract setting ``valid`` alone (as for a header only extract writes)
    keeps an earlier packet's headers valid."""
    import softswitch.exec.exprgen as eg
    monkeypatch.setattr(eg, "extract_only_headers", lambda p: frozenset(f.name for f in p.parser.params[1].type.fields))
    pl = Rig(PROG).pipeline
    assert pl._tracked and not re.search(r"\.valid = _xh\.dirty = True", pl.blocks.source)
    with pytest.raises(AssertionError):
        _run(pl, 5, 500)
