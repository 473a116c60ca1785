"""``softswitch compile``: check a P4 program and write its P4Info and device config.

Usage: ``softswitch compile PROG.p4 [-D X[=V]] [-I DIR] [--p4runtime-files OUT.txtpb[,OUT.json...]]
[--device-config OUT] [-o OUTDIR]``.  With ``-o DIR`` the defaults are ``DIR/p4info.txtpb`` and
``DIR/softswitch.json``.  As p4c, ``--p4runtime-files`` takes a comma list and writes each file in
the format its suffix names (.json, .bin, else text).  Exit code 0 on success, 1 with ``file:line:col: error: ...`` on errors.
"""
from __future__ import annotations

import argparse
import os
import sys

from softswitch.devconfig import make_device_config
from softswitch.frontend.errors import P4Error
from softswitch.frontend.load import load_program
from softswitch.p4info import build_p4info, p4info_text


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="softswitch compile",
                                 description="Check a P4_16 v1model program; write P4Info and device config.")
    ap.add_argument("program", help="the P4 source file")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    ap.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    ap.add_argument("--p4runtime-files", dest="p4info", metavar="FILE[,FILE...]",
                    help="write the P4Info to each file, in the format its suffix names as p4c does: "
                         ".json JSON, .bin binary protobuf, .txt/.txtpb (or any other) text")
    ap.add_argument("--device-config", dest="device_config", metavar="OUT",
                    help="write the softswitch device config here")
    ap.add_argument("-o", dest="outdir", metavar="OUTDIR",
                    help="output folder (defaults: OUTDIR/p4info.txtpb, OUTDIR/softswitch.json)")
    return ap


def parse_defines(items: list[str]) -> dict[str, str]:
    """``["X", "Y=2"]`` -> ``{"X": "1", "Y": "2"}`` (as cpp's -D does)."""
    out = {}
    for d in items:
        name, eq, value = d.partition("=")
        out[name] = value if eq else "1"
    return out


def p4info_bytes(p4info, path: str) -> bytes:
    """The P4Info serialized as p4c serializes it for a ``--p4runtime-files`` name: by suffix.  Every
    file was written as text, so ``x.json`` (a name p4c writes JSON to) held text; and p4c's comma
    list ``a.txt,b.json`` made one file of that name."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".json":
        from google.protobuf import json_format
        return (json_format.MessageToJson(p4info, indent=2) + "\n").encode()
    if suffix == ".bin":
        return p4info.SerializeToString()
    return p4info_text(p4info).encode()  # .txt, .txtpb; other names too (p4c refuses them)


def main(argv: list[str] | None = None) -> int:
    """Run the compile command; returns the process exit code."""
    args = _parser().parse_args(argv)
    defines = parse_defines(args.defines)
    p4info_outs, dev_out = [f for f in (args.p4info or "").split(",") if f], args.device_config
    if args.outdir:
        p4info_outs = p4info_outs or [os.path.join(args.outdir, "p4info.txtpb")]
        dev_out = dev_out or os.path.join(args.outdir, "softswitch.json")
    try:
        program = load_program(args.program, defines, args.include_dirs)
        for w in program.warnings:
            print(w, file=sys.stderr)
        p4info = build_p4info(program)
        blob = make_device_config(args.program, defines, args.include_dirs) if dev_out else b""
    except P4Error as e:
        print(str(e), file=sys.stderr)
        return 1
    try:
        if args.outdir:  # made once the program compiled: a failed compile left an empty folder behind, and
            os.makedirs(args.outdir, exist_ok=True)  # -o naming a file was a FileExistsError traceback
        for out in p4info_outs:
            with open(out, "wb") as f:
                f.write(p4info_bytes(p4info, out))
        if dev_out:
            with open(dev_out, "wb") as f:
                f.write(blob)
    except FileExistsError:  # `-o FILE`: makedirs found a file where the folder goes
        print(f"error: cannot write output: -o {args.outdir}: exists and is not a directory", file=sys.stderr)
        return 1
    except OSError as e:  # "[Errno 2] No such file or directory: '/x'" said the errno and quoted the path
        print(f"error: cannot write output: {e.filename or args.outdir}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
