"""The generated ``parse`` keeps few local variables (issue 16, speed).

States on no loop are copied into every state that transitions to them; each copy used to take
temporaries of its own, so ``mrc_switch.p4`` with its Hop-by-Hop / Destination Options states
(2026-12-06) compiled to a ``parse`` of 1,964 locals, and CPython sets up and clears every local
slot on each call: the whole pipeline ran at 0.4 of its speed.  A select's cases never fall
through (each ends in a return, a ``continue`` or a raise), so their copies now share
temporaries; and a ``parse`` still over ``MAX_PARSER_LOCALS`` gets a branch per shared state
instead of copies.  Since the ninth round extracts, emits and the header reset share their
temporaries' names too."""
from __future__ import annotations

import random
from pathlib import Path

from exec_rig import DATA, Rig, through_api, through_loop

from softswitch.exec import codegen

REPO = Path(__file__).resolve().parents[3]
PROG = DATA / "exec_parser_shared.p4"


def _parse_source(rig: Rig) -> str:
    return "def parse" + rig.pipeline.blocks.source.split("def parse")[1].split("\ndef ")[0]


def test_mrc_switch_parse_has_few_locals():
    rig = Rig(REPO / "p4src" / "mrc_switch.p4", include_dirs=[str(REPO / "p4src")])
    n = codegen._code_of(rig.pipeline.blocks.source, "parse").co_nlocals
    assert n < 400, n  # 1,964 before the cases shared temporaries


def test_mrc_switch_frames_have_few_slots():
    """Every extract names its header and unpacked words alike, as every emit, every written-out
    table lookup and the reset of every header of scalars alone do (issue 16, ninth round): each
    is read only by its own lines.
    mrc_switch.p4 had 340 locals in ``parse``, 136 in the deparser and 100 in ``ingress_item``
    (the header reset written into it)."""
    rig = Rig(REPO / "p4src" / "mrc_switch.p4", include_dirs=[str(REPO / "p4src")])
    src = rig.pipeline.blocks.source
    assert codegen._code_of(src, "parse").co_nlocals < 80
    assert codegen._code_of(src, "blk_deparse").co_nlocals < 40
    assert rig.pipeline.ingress_item.__code__.co_nlocals < 50
    # a written-out lookup's key and intermediates, named alike in every apply (79 with the
    # ingress control's own locals made Python locals, 64 now)
    assert codegen._code_of(src, "blk_ingress").co_nlocals < 70


def _frames() -> list[bytes]:
    rnd = random.Random(16)
    heads = [b"\x01\x00\xaa\xaa\xaa\x01\x05\x06", b"\x01\x00\x00\x01\xbb\x07", b"\x01\x09\x00\x00\x05",
             b"\x02\x01\xaa\x01\x03\x04", b"\x02\x02\x07\x08", b"\x02\x03", b"\x03\x05\x09\x09",
             b"\x03\x05\x00\x09", b"\x03\x09\x01", b"\x02\x01\x00\x02", b"\x02\x01\xaa\x01"]
    out = [h + bytes(12) for h in heads] + heads
    for _ in range(300):
        out.append(bytes([rnd.choice((1, 2, 3, 4)), rnd.randrange(256)])
                   + bytes(rnd.choice((0xAA, 0xBB, 0, 1, 2)) for _ in range(rnd.randrange(0, 9))))
    return out


def _outputs(rig: Rig) -> list[bytes]:
    frames = _frames()
    api = [through_api(rig.pipeline, f, port=2) for f in frames]
    assert api == [through_loop(rig.pipeline, f, port=2) for f in frames]
    return api


def test_shared_states_copied_or_branched_parse_alike(monkeypatch):
    copied = Rig(PROG)
    out = _outputs(copied)
    # by hand (the trailer r = (error, path) is emitted first and again with the struct):
    # kind 1 -> one (+1), b1 = aaaa, lookahead aa -> shared_b (+16), b2 = aa01 -> shared_c (+64)
    assert out[0] == b"\x00\x51" + bytes.fromhex("0100aaaaaa010506") + b"\x00\x51" + bytes(12)
    # kind 2, len 3: two (+2), 0x30 -> an explicit reject: no error set, a only
    assert out[5] == b"\x00\x02" + b"\x02\x03" + b"\x00\x02" + bytes(12)
    # kind 3, len 5, c.x = 0: verify fails (error 2), c extracted already stays valid
    assert out[7] == b"\x02\x40" + b"\x03\x05\x00\x09" + b"\x02\x40" + bytes(12)
    # kind 2, len 1: two, 0x10 -> shared_b, b2 = aa01 -> shared_c: too short (error 1), no c
    assert out[21] == b"\x01\x52" + bytes.fromhex("0201aa01") + b"\x01\x52"
    monkeypatch.setattr(codegen, "MAX_PARSER_LOCALS", 0)  # every shared state a branch of its own
    branched = Rig(PROG)
    assert _parse_source(branched).count("elif st == ") > _parse_source(copied).count("elif st == ")
    assert _outputs(branched) == out
