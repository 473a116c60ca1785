"""The generated data-plane contract (controller/p4contract.py) is current, and no second copy of a
program name or a define.p4 constant is typed anywhere in the code that drives the program."""
from __future__ import annotations

import ast
import re
import socket
from pathlib import Path

import pytest

from controller import gen_p4contract, p4contract

REPO = Path(__file__).resolve().parents[2]
# the code that talks to mrc_switch.p4: it must take names and constants from the contract
CONSUMERS = ("controller", "ptf_tests/base", "ptf_tests/run.py", "ptf_tests/run_fabric.py", "ptf_tests/mrc_switch",
             "ptf_tests/fabric", "fabric", "bench", "examples/scripting")
# the PTF suites of this program: not even the short form of a name (``route_v6``), a drop or
# packet-in reason name, or a congestion event name may be typed there
PTF_SUITES = ("ptf_tests/base", "ptf_tests/mrc_switch", "ptf_tests/fabric")
GENERATED = {REPO / "controller" / "p4contract.py", REPO / "controller" / "gen_p4contract.py"}
# program-agnostic P4Runtime plumbing: "packet_in"/"packet_out" there are the P4Runtime convention for
# any program (the softswitch acceptance programs too), not this program's names
GENERIC = {REPO / "ptf_tests" / "base" / "p4rt_test.py", REPO / "ptf_tests" / "base" / "p4info.py"}


def _program_names() -> set[str]:
    return {v for k, v in vars(p4contract).items()
            if isinstance(v, str) and re.match(r"(T|A|AP|C|DC|R)_|PACKET_(IN|OUT)$", k) and v != "NoAction"}


def _constants() -> dict[str, int]:
    return {k: v for k, v in vars(p4contract).items() if k.isupper() and isinstance(v, int)}


def _sources() -> list[Path]:
    out: list[Path] = []
    for c in CONSUMERS:
        p = REPO / c
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return [p for p in out if p not in GENERATED | GENERIC]


def test_committed_contract_is_current():
    """`make contract` output equals what the generator makes from today's P4 source."""
    want = gen_p4contract.generate()
    have = (REPO / "controller" / "p4contract.py").read_text()
    assert have == want, "controller/p4contract.py is not current: run `make contract`"


def test_contract_carries_each_selectors_max_group_size():
    """``MAX_GROUP_SIZE`` gives every selector's ``@max_group_size`` as the P4Info has it: the offline
    commands (``topo check``, ``plan``) check a topology's ECMP groups against it without a P4Info."""
    info = gen_p4contract.p4info_from_source()
    want = {ap.preamble.name: ap.max_group_size for ap in info.action_profiles
            if ap.with_selector and ap.max_group_size}
    assert want == {p4contract.AP_INGRESS_ROUTING_ECMP_SELECTOR: 64}
    assert p4contract.MAX_GROUP_SIZE == want


def test_no_program_name_typed_outside_the_contract():
    names = _program_names()
    assert "ingress.routing.route_v6" in names and "drop_reasons" in names
    found = _typed(_sources(), names)
    assert not found, "program names typed outside controller/p4contract.py:\n" + "\n".join(found)


def _typed(paths: list[Path], names: set[str]) -> list[str]:
    """Where a string constant among ``names`` is typed in ``paths`` (``file:line: 'name'``)."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    return found


def _short_names() -> set[str]:
    return {n.rsplit(".", 1)[-1] for n in _program_names()} | _reason_names()


def test_no_short_program_name_typed_in_the_ptf_suites():
    short = _short_names()
    assert {"route_v6", "port_rx_counter", "port_admin_down", "link_probe", "ecn_ce"} <= short
    found = _typed([p for c in PTF_SUITES for p in sorted((REPO / c).rglob("*.py")) if p not in GENERIC], short)
    assert not found, "short program names typed in the PTF suites (use controller/p4contract.py):\n" + \
        "\n".join(found)


def _reason_names() -> set[str]:
    return {v for fam in (p4contract.DROP_REASONS, p4contract.PACKET_IN_REASONS, p4contract.CONGESTION_EVENTS)
            for v in fam.values()}


def test_no_reason_or_event_name_typed_outside_the_contract():
    """Drop reasons, packet-in reasons and congestion events are named in define.p4 only: the controller,
    the simulator's counters, the reports and the benches take them from the contract's tables
    (``DROP_REASONS[DROP_REASON_NO_ROUTE]``), so renaming one in define.p4 cannot leave a stale copy."""
    names = _reason_names()
    assert {"no_route", "queue_full", "link_probe", "trimmed", "early_drop"} <= names
    found = _typed(_sources(), names)
    assert not found, "reason or event names typed outside controller/p4contract.py:\n" + "\n".join(found)


def test_no_contract_constant_defined_twice():
    consts = _constants()
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, int)):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id in consts:
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: {t.id}")
    assert not found, "define.p4 constants defined again:\n" + "\n".join(found)


# contract values no other number in this code shares: typed as a literal they are a second copy
_DISTINCT = ("DROP_PORT", "ETHERTYPE_LINK_PROBE", "POSTCARD_TRUNC_BYTES", "QDEPTH_ESTIMATE_MAX")


def _cpu_port_literal(node: ast.AST) -> bool:
    """A number given where a switch or pipeline takes its CPU port (255 is also a byte mask, so the
    CPU port is looked for there, not everywhere)."""
    if isinstance(node, ast.keyword):
        return node.arg == "cpu_port" and isinstance(node.value, ast.Constant) and node.value.value is not None
    if isinstance(node, ast.Call) and len(node.args) >= 3:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        arg = node.args[2]
        return name in ("build_pipeline", "PacketLoop") and isinstance(arg, ast.Constant) and arg.value is not None
    return False


def test_no_contract_value_typed_as_a_number():
    consts = _constants()
    values = {consts[k]: k for k in _DISTINCT} | {consts["DROP_PORT"] - 1: "DROP_PORT - 1 (the last port)"}
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value in values:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value} is {values[node.value]}")
            elif _cpu_port_literal(node):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: a CPU port typed (use P4.CPU_PORT)")
    assert not found, "contract values typed as numbers:\n" + "\n".join(found)


def test_constants_read_from_p4(tmp_path):
    f = tmp_path / "d.p4"
    f.write_text("#ifndef MRC_X\n#define MRC_X\n#define CPU_PORT 255  /* c */\n"
                 "const bit<16> ETHERTYPE_X = 0x88b5;\ncontrol c() { const bit<8> LOCAL = 1; apply {} }\n"
                 "const drop_reason_t DROP_REASON_A = 3;\n")
    assert gen_p4contract.read_constants([f]) == {"CPU_PORT": 255, "ETHERTYPE_X": 0x88B5, "DROP_REASON_A": 3}
    g = tmp_path / "e.p4"
    g.write_text("#define CPU_PORT 255\n#define CPU_PORT 256\n")
    with pytest.raises(gen_p4contract.ContractError, match="CPU_PORT defined twice"):
        gen_p4contract.read_constants([g])


def test_identifiers_collide_loudly():
    from p4.config.v1 import p4info_pb2

    info = p4info_pb2.P4Info()
    for i, n in enumerate(("a.b_c", "a_b.c")):
        t = info.tables.add()
        t.preamble.id, t.preamble.name = i + 1, n
    with pytest.raises(gen_p4contract.ContractError, match="both become T_A_B_C"):
        gen_p4contract.render(info, {}, "x")


def test_host_wire_format_agrees_with_the_program():
    """The host side (``mrc/``, which imports nothing of the switch) keeps its own wire layout in
    ``mrc/wire/formats.py``; every value there that define.p4 also defines must be the same, so the
    two deliberate copies of the MRC wire format cannot drift apart."""
    from mrc.wire import formats as F
    from mrc_fabric.targets import PRIORITY_QUEUES

    P4 = p4contract
    pairs = {
        "ETHERTYPE_IPV6": (F.ETHERTYPE_IPV6, P4.ETHERTYPE_IPV6),
        "PROTO_HOPOPT": (F.NH_HOP_BY_HOP, P4.PROTO_HOPOPT), "PROTO_UDP": (F.NH_UDP, P4.PROTO_UDP),
        "PROTO_IPV6": (F.NH_IPV6, P4.PROTO_IPV6), "PROTO_ROUTING": (F.NH_ROUTING, P4.PROTO_ROUTING),
        # the host never sends Destination Options; the switch parses them (IANA's number, RFC 8200 4.6)
        "PROTO_DSTOPTS": (socket.IPPROTO_DSTOPTS, P4.PROTO_DSTOPTS),
        "SRH_ROUTING_TYPE": (F.SRH_TYPE, P4.SRH_ROUTING_TYPE),
        "UDP_PORT_ROCEV2": (F.ROCE_UDP_PORT, P4.UDP_PORT_ROCEV2),
        "ECN_NOT_ECT": (F.ECN_NOT_ECT, P4.ECN_NOT_ECT), "ECN_CE": (F.ECN_CE, P4.ECN_CE),
        "DSCP_TRIMMED": (F.DSCP_TRIMMED, P4.DSCP_TRIMMED), "PRIORITY_TRIMMED": (F.TRIM_PRIORITY, P4.PRIORITY_TRIMMED),
        "DSCP_RESEND": (F.DSCP_RESEND, P4.DSCP_RESEND), "PRIORITY_RESEND": (F.RESEND_PRIORITY, P4.PRIORITY_RESEND),
        "PRIORITY_DATA": (F.DATA_PRIORITY, P4.PRIORITY_DATA),
        "TELEMETRY_OPT_TYPE": (F.HBH_OPT_TELEMETRY, P4.TELEMETRY_OPT_TYPE),
        "TELEMETRY_RECORDS": (F.TELEMETRY_MAX_HOPS, P4.TELEMETRY_RECORDS),
        "TELEMETRY_OPT_LEN": (F.TELEMETRY_OPT_DATA_LEN, P4.TELEMETRY_OPT_LEN),
        "TELEMETRY_HBH_EXT_LEN": (F.HBH_TELEMETRY_EXT_LEN, P4.TELEMETRY_HBH_EXT_LEN),
        "TRIMMED_UDP_LEN": (F.UDP_LEN + F.BTH_LEN + F.RETH_LEN, P4.TRIMMED_UDP_LEN),
        "TRIMMED_UDP_LEN_IMM": (F.UDP_LEN + F.BTH_LEN + F.RETH_LEN + F.IMMDT_LEN, P4.TRIMMED_UDP_LEN_IMM),
        "BTH_OP_WRITE_FIRST": (F.OP_WRITE_FIRST, P4.BTH_OP_WRITE_FIRST),
        "BTH_OP_WRITE_MIDDLE": (F.OP_WRITE_MIDDLE, P4.BTH_OP_WRITE_MIDDLE),
        "BTH_OP_WRITE_LAST": (F.OP_WRITE_LAST, P4.BTH_OP_WRITE_LAST),
        "BTH_OP_WRITE_LAST_WITH_IMM": (F.OP_WRITE_LAST_IMM, P4.BTH_OP_WRITE_LAST_WITH_IMM),
        "BTH_OP_WRITE_ONLY": (F.OP_WRITE_ONLY, P4.BTH_OP_WRITE_ONLY),
        "BTH_OP_WRITE_ONLY_WITH_IMM": (F.OP_WRITE_ONLY_IMM, P4.BTH_OP_WRITE_ONLY_WITH_IMM),
        "BTH_OP_ACK": (F.OP_ACK, P4.BTH_OP_ACK),
        "BTH_OP_MRC_PROBE_REQ": (F.OP_PROBE_REQ, P4.BTH_OP_MRC_PROBE_REQ),
        "BTH_OP_MRC_PROBE_RESP": (F.OP_PROBE_RESP, P4.BTH_OP_MRC_PROBE_RESP),
        "BTH_OP_MRC_PORT_STATUS": (F.OP_PORT_STATUS, P4.BTH_OP_MRC_PORT_STATUS),
        "BTH_OP_CNP": (F.OP_CNP, P4.BTH_OP_CNP),
    }
    differ = {k: v for k, v in pairs.items() if v[0] != v[1]}
    assert not differ, f"mrc/wire/formats.py (host) and define.p4 (switch) disagree: {differ}"
    # every BTH opcode and protocol number the program names is checked above
    assert {k for k in vars(P4) if k.startswith(("BTH_OP_", "PROTO_"))} <= set(pairs)
    assert PRIORITY_QUEUES > P4.PRIORITY_DATA, "the targets' priority queues must include every class"
    # priority 0 is served first (bmv2 since its PR #1276, softswitch): control, then resends, then data
    assert P4.PRIORITY_TRIMMED < P4.PRIORITY_RESEND < P4.PRIORITY_DATA, "resends go ahead of data, below control"


def _contract_value(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The contract string ``node`` stands for: ``P4.T_X`` / ``p4contract.T_X``, or a name the mapping
    defines as one (``T_ROUTE_V6``)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("P4", "p4contract"):
        v = getattr(p4contract, node.attr, None)
        return v if isinstance(v, str) else None
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    return None


def test_field_and_parameter_names_typed_beside_a_contract_name_are_the_programs():
    """Match-field, action-parameter and controller-header field names stay typed where entries and
    packets are built (``names.table_entry(T_ROUTE_V6, {"dst_addr": ...}, A_NEXT_HOP, ...)``,
    ``pin.metadata["reason"]``, ``packet_out(..., egress_port=3)``); each must be one the contract
    lists for that table, action or header (``MATCH_FIELDS``, ``ACTION_PARAMS``, ``PACKET_*_FIELDS``),
    so a renamed key or parameter fails here and not only on a switch."""
    from controller import mapping

    strings = {v for v in vars(p4contract).values() if isinstance(v, str)}
    aliases = {k: v for k, v in vars(mapping).items() if isinstance(v, str) and v in strings}
    tables, actions = set(p4contract.MATCH_FIELDS), set(p4contract.ACTION_PARAMS)
    found, checked = [], 0
    for path in _sources():
        where = path.relative_to(REPO)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                f = node.func
                fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if fname in ("packet_out", "send_packet_out"):
                    for k in node.keywords:
                        checked += 1
                        if k.arg is not None and k.arg not in p4contract.PACKET_OUT_FIELDS:
                            found.append(f"{where}:{node.lineno}: packet_out has no field {k.arg!r}")
                items = [(None, a) for a in node.args] + [(k.arg, k.value) for k in node.keywords]
                flat = [(kw, e) for kw, a in items for e in (a.elts if isinstance(a, ast.Tuple) else [a])]
                cur = None
                for kw, a in flat:
                    v = _contract_value(a, aliases)
                    if v in tables or v in actions:
                        cur = v
                    elif isinstance(a, ast.Dict) and cur is not None:
                        if kw == "params" and cur in tables:
                            continue
                        want = p4contract.MATCH_FIELDS[cur] if cur in tables else p4contract.ACTION_PARAMS[cur]
                        for k in a.keys:
                            if isinstance(k, ast.Constant):
                                checked += 1
                                if k.value not in want:
                                    found.append(f"{where}:{node.lineno}: {cur} has no field {k.value!r} {want}")
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "metadata" and isinstance(node.slice, ast.Constant)):
                key = node.slice.value
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "metadata"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                key = node.args[0].value
            else:
                continue
            checked += 1
            if key not in p4contract.PACKET_IN_FIELDS:
                found.append(f"{where}:{node.lineno}: packet_in has no field {key!r}")
    assert checked > 50, checked  # the walk does find the places that build entries and read packets
    assert not found, "field or parameter names the program does not have:\n" + "\n".join(found)


def test_directly_called_actions_are_in_p4info_but_not_in_the_contract():
    """p4c lists an action called only from an apply block (BMV2_FACTS: ``ingress.routing.drop_with``
    in p4c 1.2.5.8's P4Info) and softswitch does too; the contract keeps the actions a table or
    profile refers to, as gen_p4contract's docstring says."""
    info = gen_p4contract.p4info_from_source()
    assert "ingress.routing.drop_with" in {a.preamble.name for a in info.actions}
    assert "ingress.routing.drop_with" not in {v for v in vars(p4contract).values() if isinstance(v, str)}
    referenced = {r.id for t in info.tables for r in t.action_refs}
    assert all(a.preamble.id not in referenced for a in info.actions
               if a.preamble.name == "ingress.routing.drop_with")


def test_softswitch_suite_reads_its_programs_constants():
    """The target acceptance suite (ptf_tests/softswitch) drives its own programs: a test names their
    opcodes, reasons and counter indices through ``subset_base.program_constants``, never as copies."""
    suite = REPO / "ptf_tests" / "softswitch"
    defines: set[str] = set()
    for p4 in sorted((suite / "p4").glob("*.p4")):
        defines |= set(gen_p4contract.read_constants([p4]))
    assert {"OP_PUNT", "REASON_PUNT", "ETHERTYPE_TEST", "OP_RESUBMIT"} <= defines
    found = []
    for path in sorted(suite.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Tuple, ast.Call)):
                names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                literal = all(isinstance(e, ast.Constant) for e in ast.walk(node.value)
                              if not isinstance(e, (ast.Tuple, ast.Load))) or (
                    isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "range")
                for n in names:
                    if n in defines and literal:
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: {n}")
    assert not found, "the suite's program constants typed again:\n" + "\n".join(found)
