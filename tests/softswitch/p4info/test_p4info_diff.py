"""softswitch p4info-diff: entity-by-entity comparison of two P4Infos."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2

from softswitch.frontend import load_program
from softswitch.p4info import build_p4info, p4info_text
from softswitch.p4info_diff import Loaded, diff, main, parse_text

CONF = str(Path(__file__).resolve().parents[1] / "data" / "conformance")
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def ref() -> p4info_pb2.P4Info:
    return build_p4info(load_program(os.path.join(CONF, "p4info_features.p4")))


def _copy(p: p4info_pb2.P4Info) -> p4info_pb2.P4Info:
    c = p4info_pb2.P4Info()
    c.CopyFrom(p)
    return c


def test_equal_is_empty(ref: p4info_pb2.P4Info) -> None:
    assert diff(ref, _copy(ref)) == []


def test_changed_action_id_is_one_difference_not_a_cascade(ref: p4info_pb2.P4Info) -> None:
    """References resolve to names on each side: an action whose id changed shows once."""
    other = _copy(ref)
    act = next(a for a in other.actions if a.preamble.name != "NoAction" and
               any(r.id == a.preamble.id for t in other.tables for r in t.action_refs))
    old = act.preamble.id
    act.preamble.id = old + 1
    for t in other.tables:
        for r in t.action_refs:
            if r.id == old:
                r.id = old + 1
        if t.const_default_action_id == old:
            t.const_default_action_id = old + 1
        if t.initial_default_action.action_id == old:
            t.initial_default_action.action_id = old + 1
    d = diff(ref, other)
    assert [(x.kind, x.name, x.path, x.left, x.right) for x in d] == \
        [("actions", act.preamble.name, "preamble.id", old, old + 1)]


def test_field_level_differences_are_named(ref: p4info_pb2.P4Info) -> None:
    other = _copy(ref)
    t = other.tables[0]
    t.size += 1
    t.match_fields[0].bitwidth += 1
    t.preamble.annotations.append("@extra")
    del other.registers[0]
    out = [str(x) for x in diff(ref, other)]
    name = t.preamble.name
    assert f"tables {name!r} size: {t.size - 1} != {t.size}" in out
    assert any(s.startswith(f"tables {name!r} match_fields[{t.match_fields[0].name}].bitwidth:") for s in out)
    assert any(s.startswith(f"tables {name!r} preamble.annotations:") and "@extra" in s for s in out)
    assert f"registers {ref.registers[0].preamble.name!r}: 'present' != (absent)" in out
    assert len(out) == 4


def test_order_and_its_ignore(ref: p4info_pb2.P4Info) -> None:
    other = _copy(ref)
    tables = list(other.tables)
    del other.tables[:]
    other.tables.extend(reversed(tables))
    d = diff(ref, other)
    assert [(x.kind, x.path) for x in d] == [("tables", "(order)")]
    assert diff(ref, other, {"order"}) == []


def test_initial_default_action_and_corelib_ignores(ref: p4info_pb2.P4Info) -> None:
    older = _copy(ref)
    for t in older.tables:
        t.ClearField("initial_default_action")
    noaction = next(a for a in older.actions if a.preamble.name == "NoAction")
    noaction.preamble.annotations.insert(0, "@corelib")
    kinds = {(x.kind, x.path.split(".")[0]) for x in diff(ref, older)}
    assert ("tables", "initial_default_action") in kinds and ("actions", "preamble") in kinds
    assert diff(ref, older, {"initial_default_action", "corelib"}) == []


def test_unknown_fields_are_reported_then_skipped(ref: p4info_pb2.P4Info) -> None:
    """Some p4c builds of 2024 wrote Table.initial_default_action_id, which this P4Runtime
    does not have: the file still parses, and the field is named as a difference."""
    text = p4info_text(ref).replace("  size: ", "  initial_default_action_id: 7\n  size: ", 1)
    loaded = parse_text(text)
    assert loaded.unknown_fields == ["initial_default_action_id"]
    d = diff(Loaded(ref, []), loaded)
    assert len(d) == 1 and d[0].kind == "unknown fields"
    assert diff(Loaded(ref, []), loaded, {"unknown_fields"}) == []


def test_bad_ignore_is_refused(ref: p4info_pb2.P4Info) -> None:
    with pytest.raises(ValueError, match="cannot ignore"):
        diff(ref, ref, {"sizes"})


def test_cli_exit_codes_and_output(tmp_path: Path, ref: p4info_pb2.P4Info, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.txtpb"
    a.write_text(p4info_text(ref))
    other = _copy(ref)
    other.tables[0].size += 1
    b = tmp_path / "b.txtpb"
    b.write_text(p4info_text(other))
    prog = os.path.join(CONF, "p4info_features.p4")
    assert main([prog, str(a)]) == 0  # a .p4 is compiled by softswitch first
    assert main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "size:" in out and "1 difference(s)" in out
    bad = tmp_path / "bad.txtpb"
    bad.write_text("tables { preamble { id: x } }")
    assert main([str(a), str(bad)]) == 2
    assert "bad.txtpb" in capsys.readouterr().err
    assert main([str(a), str(tmp_path / "missing.txtpb")]) == 2


def test_softswitch_subcommand_help() -> None:
    r = subprocess.run([sys.executable, "-m", "softswitch", "p4info-diff", "--help"], check=False,
                       capture_output=True,
                       text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0 and "--lenient" in r.stdout and "--ignore" in r.stdout


def test_reference_p4c_output_matches(ref: p4info_pb2.P4Info) -> None:
    """The conformance reference (p4c 1.2.5.8) and softswitch agree, with nothing ignored."""
    assert main([os.path.join(CONF, "p4info_features.p4"), os.path.join(CONF, "p4info_features.p4info.txtpb")]) == 0


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`softswitch p4info-diff A B | head -1`: the pipe closes under the writer; the command ends
    quietly with 141 (as a shell reports SIGPIPE), not with a BrokenPipeError traceback."""
    a, b = os.path.join(CONF, "bench4.p4info.txtpb"), os.path.join(CONF, "p4info_features.p4info.txtpb")
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line
    try:
        p = subprocess.run([sys.executable, "-m", "softswitch", "p4info-diff", a, b], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=60, check=False, cwd=ROOT)
    finally:
        os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr


def test_type_info_presence_is_compared(tmp_path) -> None:
    """p4c writes no type_info for some programs (no table, extern, parameter or extern call);
    an empty one on the other side is a difference, as the texts and messages differ."""
    head = '# proto-file: p4/config/v1/p4info.proto\npkg_info {\n  arch: "v1model"\n}\n'
    a = tmp_path / "a.txtpb"
    b = tmp_path / "b.txtpb"
    a.write_text(head)
    b.write_text(head + "type_info {\n}\n")
    from softswitch.p4info_diff import main as diff_main
    assert diff_main([str(a), str(b)]) == 1
    assert diff_main(["--lenient", str(a), str(b)]) == 1
    assert diff_main([str(b), str(b)]) == 0


def test_a_file_that_is_not_utf8_is_named(tmp_path, capsys):
    bad = tmp_path / "a.txtpb"
    bad.write_bytes(b"pkg_info {\n name: \"\xff\"\n}\n")
    assert main([str(bad), str(bad)]) == 2  # was a UnicodeDecodeError traceback
    assert f"{bad}: not a P4Info text file (byte 0xff at offset 19 is not UTF-8)" in capsys.readouterr().err


def test_a_file_that_is_not_p4info_gets_a_short_error(tmp_path, capsys):
    """A device config (one JSON line of 200 KB) given by mistake: protobuf's parse error quotes the
    whole line, and all of it was printed. Now the error is one short line naming the file and the
    place."""
    text = '{"magic": "softswitch-device-config", "source": "' + "x" * 200_000 + '"}'
    blob = tmp_path / "softswitch.json"  # .json: read as p4c's JSON P4Info
    blob.write_text(text)
    assert main([str(blob), str(blob)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400, err[:500]
    assert err.startswith(f"p4info-diff: {blob}: not a P4Info JSON file: ") and "magic" in err
    blob = tmp_path / "softswitch.txt"
    blob.write_text(text)
    assert main([str(blob), str(blob)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400, err[:500]
    assert err.startswith(f"p4info-diff: {blob}: not a valid P4Info text file: 1:1 : ") and "characters)" in err
    bad = tmp_path / "bad.txtpb"
    bad.write_text("tables { preamble { id: x } }")  # short lines are quoted whole, as before
    assert main([str(bad), str(bad)]) == 2
    assert "'tables { preamble { id: x } }': Couldn't parse integer: x" in capsys.readouterr().err


def test_p4c_file_formats_by_suffix_and_empty_files(tmp_path, capsys):
    """p4c's --p4runtime-files takes a comma list and writes each file in the format of its suffix
    (.json JSON, .bin binary, .txt text).  softswitch compile wrote text to every name, and the comma
    list as one file called "a.txt,b.json"; p4info-diff read every file as text.  Two empty files (a
    failed redirect) compared equal, exit 0."""
    from softswitch.compile_cmd import main as compile_main

    prog = "p4src/mrc_switch.p4"
    outs = [tmp_path / n for n in ("p.txt", "p.json", "p.bin", "p.txtpb")]
    assert compile_main([prog, "--p4runtime-files", ",".join(map(str, outs))]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in outs)
    from google.protobuf import json_format

    want = build_p4info(load_program(prog))
    assert json_format.Parse(outs[1].read_text(), p4info_pb2.P4Info()) == want
    got = p4info_pb2.P4Info()
    got.ParseFromString(outs[2].read_bytes())
    assert got == want
    assert outs[0].read_text() == outs[3].read_text() == p4info_text(want)
    for a in outs:
        assert main(["-q", str(a), prog]) == 0, a
    capsys.readouterr()
    empty = tmp_path / "empty.txtpb"
    empty.write_text("")
    comments = tmp_path / "c.txt"
    comments.write_text("# proto-file: p4/config/v1/p4info.proto\n")
    empty_bin = tmp_path / "e.bin"
    empty_bin.write_bytes(b"")
    for f in (empty, comments, empty_bin):
        assert main([str(f), str(f)]) == 2, f
        assert capsys.readouterr().err.startswith(f"p4info-diff: {f}: holds no P4Info (empty"), f
    text_as_bin = tmp_path / "t.bin"
    text_as_bin.write_text(outs[0].read_text())
    assert main([str(text_as_bin), prog]) == 2
    assert f"{text_as_bin}: not a P4Info binary protobuf file: " in capsys.readouterr().err
