"""A minimal raw-proto P4Runtime client for engine tests (primary arbitration, table writes,
PacketIn/PacketOut), independent of our controller so it checks the switch alone."""
from __future__ import annotations

import queue
import threading

import grpc
from p4.v1 import p4runtime_pb2 as pb
from p4.v1 import p4runtime_pb2_grpc


class Client:
    """One primary P4Runtime session."""

    def __init__(self, addr: str, device_id: int = 1, election_low: int = 1) -> None:
        self.device_id = device_id
        self.election_low = election_low
        self.channel = grpc.insecure_channel(addr)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue = queue.Queue()
        self.packet_ins: queue.Queue = queue.Queue()
        self._arb: queue.Queue = queue.Queue()
        req = pb.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.low = election_low
        self._out.put(req)
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._arb.get(timeout=10)
        cfg = self.stub.GetForwardingPipelineConfig(
            pb.GetForwardingPipelineConfigRequest(device_id=device_id), timeout=10)
        self.p4info = cfg.config.p4info

    def _read(self) -> None:
        try:
            for msg in self._stream:
                if msg.HasField("arbitration"):
                    self._arb.put(msg.arbitration)
                elif msg.HasField("packet"):
                    self.packet_ins.put(msg.packet)
        except grpc.RpcError:
            pass

    def _table(self, name: str):
        return next(t for t in self.p4info.tables if t.preamble.name == name)

    def _action(self, name: str):
        return next(a for a in self.p4info.actions if a.preamble.name == name)

    def insert_exact(self, table: str, key: dict[str, bytes], action: str, params: dict[str, bytes]) -> None:
        t = self._table(table)
        a = self._action(action)
        e = pb.TableEntry(table_id=t.preamble.id)
        fields = {f.name: f.id for f in t.match_fields}
        for name, value in key.items():
            e.match.add(field_id=fields[name]).exact.value = value
        e.action.action.action_id = a.preamble.id
        pids = {p.name: p.id for p in a.params}
        for name, value in params.items():
            e.action.action.params.add(param_id=pids[name], value=value)
        req = pb.WriteRequest(device_id=self.device_id)
        req.election_id.low = self.election_low
        u = req.updates.add(type=pb.Update.INSERT)
        u.entity.table_entry.CopyFrom(e)
        self.stub.Write(req, timeout=10)

    def packet_out(self, payload: bytes, metadata: dict[str, bytes]) -> None:
        meta = next(m for m in self.p4info.controller_packet_metadata if m.preamble.name == "packet_out")
        ids = {m.name: m.id for m in meta.metadata}
        req = pb.StreamMessageRequest()
        req.packet.payload = payload
        for name, value in metadata.items():
            req.packet.metadata.add(metadata_id=ids[name], value=value)
        self._out.put(req)

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()
