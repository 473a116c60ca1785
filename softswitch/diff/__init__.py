"""Differential runs: one P4 program and one packet/table script, through softswitch and (when
``simple_switch_grpc`` and ``p4c-bm2-ss`` are on PATH) bmv2, compared packet by packet.

    python -m softswitch.diff PROGRAM.p4 SCRIPT.json [--bmv2 auto|require|off]
"""
from softswitch.diff.compare import Difference, compare
from softswitch.diff.script import Packet, Script, load_script
from softswitch.diff.softside import run_softswitch

__all__ = ["Difference", "Packet", "Script", "compare", "load_script", "run_softswitch"]
