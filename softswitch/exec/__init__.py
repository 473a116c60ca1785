"""softswitch execution core: the checked program compiled to Python, run as bmv2's v1model."""
from __future__ import annotations

from collections.abc import Callable

from softswitch.exec.codegen import CompiledBlocks, CompileError, Compiler, Resources
from softswitch.exec.install import install_program_entries
from softswitch.exec.pipeline import PacketState, V1Pipeline
from softswitch.frontend import ir

__all__ = ["CompileError", "CompiledBlocks", "PacketState", "V1Pipeline", "build_pipeline",
           "compile_program"]


def _resources(program: ir.Program, state) -> Resources:
    kinds = {e.name: e.kind for e in program.all_externs()}
    action_ids = state.action_names

    def extern(name: str):
        kind = kinds[name]
        if kind == "counter":
            return state.counter(name)
        if kind == "direct_counter":
            return state.direct_counter(name)
        if kind == "meter":
            return state.meter(name)
        if kind == "direct_meter":
            return state.direct_meter(name)
        if kind == "register":
            return state.register(name)
        return state.action_profile(name)

    def action_id(key: str) -> int:  # a key of program.actions: its P4Info name's id
        try:
            return action_ids[program.actions[key].name]
        except KeyError:
            raise CompileError(f"action {key} is not in the P4Info") from None

    def digest_id(name: str) -> int:
        try:
            return state.digest_ids[name]
        except KeyError:
            raise CompileError(f"digest {name} is not in the P4Info") from None

    return Resources(table=state.table, extern=extern, action_id=action_id, digest_id=digest_id,
                     value_set=state.value_set)


def compile_program(program: ir.Program, state, trace: bool = False) -> CompiledBlocks:
    """Generate and compile the Python code of ``program`` bound to runtime ``state``."""
    comp = Compiler(program, _resources(program, state), trace=trace)
    blocks = comp.compile()
    if trace:
        blocks.namespace["ANAMES"] = {i: n for n, i in state.action_names.items()}
    return blocks


def build_pipeline(program: ir.Program, state, cpu_port: int | None,
                   trace: Callable[[str], None] | None = None) -> V1Pipeline:
    """Compile ``program``, install its const entries/defaults into ``state``, return the
    ``contract.Pipeline``; ``trace`` (e.g. a logger method) receives the per-packet trace."""
    from softswitch.p4info import build_p4info

    state.add_private(build_p4info(program, private=True))  # @hidden tables run, unpublished
    blocks = compile_program(program, state, trace=trace is not None)
    if trace is not None:
        blocks.namespace["TR"] = trace
    install_program_entries(program, state)
    return V1Pipeline(program, blocks, state, cpu_port, trace)
