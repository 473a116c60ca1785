"""``python -m softswitch.stf PROGRAM.p4 [TEST.stf]``: run p4c-style STF tests on softswitch.

Prints one PASS/FAIL line per expected frame and a summary.  Exit status: 0 every frame
matched, 1 a mismatch (a misrun), 2 the program was rejected (not loadable: the message names
the construct), 3 anything else: a malformed STF script or one the runner cannot apply, a
load error that is not a named rejection, or an exception inside softswitch (a crash).
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

EXIT_PASS, EXIT_FAIL, EXIT_REJECTED, EXIT_STF_ERROR = 0, 1, 2, 3


def classify(program: Path, stf: Path, defines: dict[str, str] | None = None,
             includes: list[str] | None = None, verbose: bool = True,
             out=None, loop_path: bool = False, process: str | None = None) -> dict:
    """Run one program/STF pair -> ``{"status": pass|fail|rejected|error|stf-error|crash, ...}``.

    ``rejected``: the front end refused a construct by name (``unsupported: ...``);
    ``unsendable``: frames differ, but a packet could not be sent on its veth (``process``);
    ``error``: any other load-time error (a P4 error softswitch should not raise on a program
    p4c accepts); ``stf-error``: the script could not be applied; ``crash``: a Python exception
    (a softswitch bug).  ``process``: a target's name (``mrc_fabric.targets``): run through a
    switch process of that target, P4Runtime and veths (``softswitch.stf.process``) instead of
    the compiled pipeline in this process; its compiler's refusal is ``rejected`` when it names
    an unsupported construct, else ``error``."""
    from softswitch.exec.exprgen import CompileError
    from softswitch.frontend import P4Unsupported, load_program
    from softswitch.frontend.errors import P4Error
    from softswitch.stf.runner import run_stf
    from softswitch.stf.script import StfError, load_stf

    out = out or sys.stdout
    if process:
        extra = [d for d in includes or [] if Path(d).resolve() != program.resolve().parent]
        if defines or extra:  # the target's compiler is run as the fabric runs it: no -D, no -I
            return {"status": "stf-error", "message": "a switch process compiles the program as the "
                    "fabric does, without -D or -I (only the program's own folder is searched)"}
        return _in_process(program, stf, process, verbose, out)
    try:
        program_ir = load_program(str(program), defines or {}, includes or [])
    except P4Unsupported as e:
        return {"status": "rejected", "feature": e.construct, "message": str(e)}
    except P4Error as e:
        return {"status": "error", "message": str(e)}
    except RecursionError:
        return {"status": "crash", "message": "RecursionError while loading"}
    except Exception as e:  # noqa: BLE001 -- any other exception is a softswitch bug, reported
        return {"status": "crash", "message": f"load: {e!r}", "trace": traceback.format_exc()}
    try:
        commands = load_stf(stf)
        res = run_stf(program_ir, commands, loop_path=loop_path)
    except StfError as e:
        return {"status": "stf-error", "message": str(e)}
    except P4Error as e:  # e.g. a P4Info/compile-time error found while building the pipeline
        kind = "rejected" if "unsupported:" in str(e) else "error"
        d = {"status": kind, "message": str(e)}
        if kind == "rejected":
            d["feature"] = getattr(e, "construct", str(e))
        return d
    except CompileError as e:  # the execution core refuses a construct, by name
        msg = str(e)
        if "unsupported: " in msg:
            return {"status": "rejected", "feature": msg.split("unsupported: ", 1)[1], "message": msg}
        return {"status": "error", "message": msg}
    except Exception as e:  # noqa: BLE001
        return {"status": "crash", "message": f"run: {e!r}", "trace": traceback.format_exc()}
    return _verdict(res, verbose, out)


def _in_process(program: Path, stf: Path, target: str, verbose: bool, out) -> dict:
    """``classify`` through a switch process of ``target``, P4Runtime and veths."""
    from softswitch.stf.process import CompileRefused, run_stf_process, target_missing
    from softswitch.stf.script import StfError, load_stf

    why = target_missing(target)
    if why is not None:
        return {"status": "stf-error", "message": f"{target} cannot run here: {why}"}
    try:
        res = run_stf_process(program, load_stf(stf), target)
    except CompileRefused as e:
        msg = str(e)
        if "unsupported: " in msg:
            return {"status": "rejected", "feature": msg.split("unsupported: ", 1)[1].splitlines()[0],
                    "message": msg}
        return {"status": "error", "message": msg}
    except StfError as e:
        return {"status": "stf-error", "message": str(e)}
    except Exception as e:  # noqa: BLE001 -- reported, as in process
        return {"status": "crash", "message": f"run: {e!r}", "trace": traceback.format_exc()}
    return _verdict(res, verbose, out)


def _verdict(res, verbose: bool, out) -> dict:
    """The result dict of a finished run (its checks printed first when ``verbose``)."""
    if verbose:
        for c in res.checks:
            print(c.describe(), file=out)
        for line in res.ignored:
            print(f"note: not checked: {line}", file=out)
    nbad = sum(not c.ok for c in res.checks)
    status = "pass" if res.passed else "fail"
    if not res.passed and res.unsent:  # a packet never reached the switch: not the switch's verdict
        status = "unsendable"
    return {"status": status, "packets": res.packets_in, "unsent": res.unsent,
            "checks": len(res.checks), "failed_checks": nbad,
            "first_failure": next((c.describe() for c in res.checks if not c.ok), None)}


def main(argv: list[str] | None = None, prog: str = "python -m softswitch.stf") -> int:
    from mrc_fabric.targets import TARGETS, selected_target

    ap = argparse.ArgumentParser(prog=prog, description=__doc__.replace("python -m softswitch.stf", prog, 1).replace("``", ""),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program", type=Path, help="the P4_16 v1model program")
    ap.add_argument("stf", type=Path, nargs="?", help="the STF script (default: PROGRAM with .stf)")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    ap.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    ap.add_argument("--json", action="store_true", help="print one JSON result line instead")
    ap.add_argument("--loop-path", action="store_true",
                    help="run packets through the switch loop's entry points (header objects recycled "
                         "between packets) instead of the API's; results must be the same")
    ap.add_argument("--process", action="store_true",
                    help="run through a switch process: the program compiled and pushed over P4Runtime, "
                         "the script's commands as P4Runtime writes, packets on veths (needs root)")
    ap.add_argument("--target", choices=TARGETS, default=selected_target(),
                    help="with --process: the switch (default: $TARGET, else softswitch)")
    a = ap.parse_args(argv)
    stf = a.stf or a.program.with_suffix(".stf")
    defines = dict(d.split("=", 1) if "=" in d else (d, "") for d in a.defines)
    r = classify(a.program, stf, defines, a.includes, verbose=not a.json, loop_path=a.loop_path,
                 process=a.target if a.process else None)
    if a.stf is None and r["status"] == "stf-error" and not stf.exists():
        r["message"] += " (no TEST.stf given: the default is the program's name with .stf)"
    if a.json:
        r.pop("trace", None)
        print(json.dumps(r))
    else:
        st = r["status"]
        if st in ("pass", "fail", "unsendable"):
            print(f"{st.upper()}: {a.program.name}: {r['checks'] - r['failed_checks']} of "
                  f"{r['checks']} expected frames matched, "
                  + (f"{r['packets'] - r['unsent']} of {r['packets']} packets sent" if r["unsent"]
                     else f"{r['packets']} packets sent"))
        else:
            print(f"{st.upper()}: {a.program.name}: {r['message']}")
            if "trace" in r:
                print(r["trace"], file=sys.stderr)
    return {"pass": EXIT_PASS, "fail": EXIT_FAIL, "rejected": EXIT_REJECTED}.get(r["status"], EXIT_STF_ERROR)


if __name__ == "__main__":
    sys.exit(main())
