"""Helpers for P4Runtime server tests: a server on a random loopback port and a stream client."""
from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import grpc
from google.protobuf import text_format
from google.rpc import status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

DATA = Path(__file__).parent.parent / "runtime" / "data"
FEATURES = DATA / "p4info_features.p4info.txtpb"


def load_p4info(path: Path = FEATURES) -> p4info_pb2.P4Info:
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


def eid(high: int, low: int) -> p4runtime_pb2.Uint128:
    return p4runtime_pb2.Uint128(high=high, low=low)


class StreamClient:
    """One StreamChannel: send requests, wait (with a deadline) for responses of a kind."""

    def __init__(self, stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
        self._out: queue.Queue = queue.Queue()
        self._in: queue.Queue = queue.Queue()
        self.call = stub.StreamChannel(iter(self._out.get, None))
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        self._th = threading.Thread(target=self._recv, daemon=True)
        self._th.start()

    def _recv(self) -> None:
        try:
            for msg in self.call:
                self._in.put(msg)
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.ended.set()

    def send(self, req: p4runtime_pb2.StreamMessageRequest) -> None:
        self._out.put(req)

    def arbitrate(self, election_id: tuple[int, int] | None, device_id: int = 1) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        if election_id is not None:
            req.arbitration.election_id.CopyFrom(eid(*election_id))
        self.send(req)

    def recv(self, kind: str, timeout: float = 5.0) -> p4runtime_pb2.StreamMessageResponse:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no '{kind}' stream message within {timeout}s")
            try:
                msg = self._in.get(timeout=left)
            except queue.Empty:
                continue
            if msg.WhichOneof("update") == kind:
                return msg

    def nothing(self, kind: str, timeout: float = 0.3) -> bool:
        """True when no message of ``kind`` arrives within ``timeout`` (used for negative checks)."""
        try:
            self.recv(kind, timeout)
        except TimeoutError:
            return True
        return False

    def close(self) -> None:
        self._out.put(None)
        self.call.cancel()
        self.ended.wait(5)


def write_errors(err: grpc.RpcError) -> list[tuple[int, str]]:
    """Decode the per-update p4.v1.Error list of a failed Write."""
    for k, v in err.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = status_pb2.Status.FromString(v)
            out = []
            for d in st.details:
                e = p4runtime_pb2.Error()
                d.Unpack(e)
                out.append((e.canonical_code, e.message))
            return out
    raise AssertionError("no grpc-status-details-bin in the Write error")
