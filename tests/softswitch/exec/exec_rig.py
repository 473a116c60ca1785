"""Load a P4 program through the real front end and drive its runtime state by P4Info names."""
from __future__ import annotations

from pathlib import Path

from p4.v1 import p4runtime_pb2

from softswitch.exec import build_pipeline
from softswitch.exec.pipeline import PacketState

DATA = Path(__file__).parent / "data"
INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY


def through_loop(pl, data: bytes, port: int = 0, now: int = 7) -> bytes:
    """``data`` received on ``port`` at time ``now`` (µs) through the loop's entry points
    (``ingress_item``, ``egress_frame``, the egress 2 µs later): the output frame."""
    item = pl.ingress_item(data, port, now)
    assert isinstance(item, PacketState)
    return pl.egress_frame(item, now + 2)


def through_api(pl, data: bytes, port: int = 0, now: int = 7) -> bytes:
    """As ``through_loop`` through the API's ``ingress``/``egress`` (one packet each way)."""
    (item,) = pl.ingress(data, port, now).to_tm
    (out,) = pl.egress(item, now + 2).frames
    return out.data


def ingress_items(pl, data: bytes, fast: bool, port: int = 0, now: int = 0) -> list:
    """The traffic-manager items of one packet's ingress, through the loop's entry point
    (``ingress_item``, objects recycled) when ``fast``, else the API's ``ingress``."""
    r = pl.ingress_item(data, port, now) if fast else pl.ingress(data, port, now)
    return [r] if isinstance(r, PacketState) else list(r.to_tm)


def egress_item(pl, item, fast: bool, now: int = 1) -> tuple[list[tuple[int, bytes]], list, list]:
    """One item's egress on the same path as ``ingress_items``: (its frames as (port, bytes), the
    items it queued (clones), the recirculations it asked for)."""
    port = item.egress_port
    r = pl.egress_frame(item, now) if fast else pl.egress(item, now)
    if r.__class__ is bytes:
        return [(port, r)], [], []
    return [(f.port, f.data) for f in r.frames], list(r.to_tm), list(r.recirculate)


def enc(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class Rig:
    """Program + P4Info + SwitchState + compiled pipeline, with small write helpers."""

    def __init__(self, path: Path, trace=None, defines: dict[str, str] | None = None,
                 include_dirs: list[str] | None = None) -> None:
        from softswitch.frontend import load_program
        from softswitch.p4info import build_p4info
        from softswitch.runtime import SwitchState

        self.program = load_program(str(path), defines or {}, include_dirs or [])
        self.p4info = build_p4info(self.program)
        self.state = SwitchState(self.p4info)
        self.pipeline = build_pipeline(self.program, self.state, None, trace=trace)

    def _id(self, kind: str, name: str) -> int:
        for obj in getattr(self.p4info, kind):
            if name in (obj.preamble.name, obj.preamble.alias):
                return obj.preamble.id
        raise KeyError(name)

    def action(self, name: str, **params: int) -> p4runtime_pb2.Action:
        a = next(x for x in self.p4info.actions if name in (x.preamble.name, x.preamble.alias))
        msg = p4runtime_pb2.Action(action_id=a.preamble.id)
        for p in a.params:
            msg.params.add(param_id=p.id, value=enc(params[p.name]))
        return msg

    def write(self, utype: int, **entity) -> None:
        self.state.write(p4runtime_pb2.Update(type=utype, entity=p4runtime_pb2.Entity(**entity)))

    def entry(self, table: str, matches: dict, action=None, priority: int = 0, member=None, group=None):
        t = next(x for x in self.p4info.tables if table in (x.preamble.name, x.preamble.alias))
        te = p4runtime_pb2.TableEntry(table_id=t.preamble.id, priority=priority)
        fields = {f.name: f for f in t.match_fields}
        for name, m in matches.items():
            fm = te.match.add(field_id=fields[name].id)
            kind, *vals = m
            if kind == "exact":
                fm.exact.value = enc(vals[0])
            elif kind == "lpm":
                fm.lpm.value, fm.lpm.prefix_len = enc(vals[0]), vals[1]
            elif kind == "ternary":
                fm.ternary.value, fm.ternary.mask = enc(vals[0]), enc(vals[1])
            elif kind == "range":
                fm.range.low, fm.range.high = enc(vals[0]), enc(vals[1])
            elif kind == "optional":
                fm.optional.value = enc(vals[0])
        if action is not None:
            te.action.action.CopyFrom(action)
        if member is not None:
            te.action.action_profile_member_id = member
        if group is not None:
            te.action.action_profile_group_id = group
        self.write(INSERT, table_entry=te)
        return te

    def run(self, data: bytes, port: int = 0, now: int = 0):
        """Ingress then egress for every TM item; returns (ingress result, egress results)."""
        res = self.pipeline.ingress(data, port, now)
        return res, [self.pipeline.egress(it, now + 1) for it in res.to_tm]

    def output(self, data: bytes, port: int = 1, now: int = 0) -> bytes:
        """The first frame the packet leaves with; fails when ingress drops it."""
        res = self.pipeline.ingress(data, port, now)
        assert not res.dropped, res.drop_reason
        return self.pipeline.egress(res.to_tm[0], now).frames[0].data

    def loop_output(self, data: bytes, port: int = 1, now: int = 0) -> bytes:
        """As ``output`` through the packet loop's entry points (generated code, objects recycled)."""
        res = self.pipeline.ingress_item(data, port, now)
        item = res if isinstance(res, PacketState) else res.to_tm[0]
        out = self.pipeline.egress_frame(item, now + 1)
        return out if out.__class__ is bytes else out.frames[0].data

    def clone_session(self, session_id: int, port: int, instance: int) -> None:
        """Insert a clone session with one replica."""
        cs = p4runtime_pb2.CloneSessionEntry(session_id=session_id)
        cs.replicas.add(egress_port=port, instance=instance)
        self.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            clone_session_entry=cs))


V1_TEMPLATE = """
#include <core.p4>
#include <v1model.p4>
header h_t { HFIELDS } struct hs_t { h_t h; } struct m_t { bit<8> x; }
%s
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { %s }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), MAIN_I, E(), C(), D()) main;
"""


def v1_template(header_fields: str, main_ingress: str = "I()") -> str:
    """A one-header v1model program with two ``%s`` slots, top-level declarations and the body of
    control I (and the ingress argument of ``main`` itself a slot when ``main_ingress`` is "%s")."""
    return V1_TEMPLATE.replace("HFIELDS", header_fields).replace("MAIN_I", main_ingress)
