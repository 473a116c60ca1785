"""STF test runner: p4c's packet/table scripts (``.stf``) run on softswitch's compiled pipeline.

    python -m softswitch.stf PROGRAM.p4 [TEST.stf]        # one program
    python -m softswitch.stf.tally CORPUS_DIR             # a directory of PROGRAM.p4 + PROGRAM.stf
"""
from softswitch.stf.runner import PortCheck, StfResult, StfSwitch, run_stf
from softswitch.stf.script import Command, StfError, load_stf, parse_stf, pattern_matches

__all__ = ["Command", "PortCheck", "StfError", "StfResult", "StfSwitch", "load_stf", "parse_stf",
           "pattern_matches", "run_stf"]
