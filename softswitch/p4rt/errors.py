"""gRPC status helpers: P4Runtime's batch error format and aborting an RPC with a code."""
from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2

from softswitch.runtime.errors import Code, P4RuntimeError

_GRPC_CODES = {c.value[0]: c for c in grpc.StatusCode}


def grpc_code(code: Code) -> grpc.StatusCode:
    return _GRPC_CODES[int(code)]


def abort(context: grpc.ServicerContext, err: P4RuntimeError) -> None:
    """End the RPC with the error's canonical code and message (raises)."""
    context.abort(grpc_code(err.code), err.message)


def abort_batch(context: grpc.ServicerContext, results: list[P4RuntimeError | None]) -> None:
    """End a Write with UNKNOWN and one ``p4.v1.Error`` per update in ``grpc-status-details-bin``."""
    failed = [r for r in results if r is not None]
    status = status_pb2.Status(code=Code.UNKNOWN, message=f"{len(failed)} of {len(results)} update(s) failed: "
                               + "; ".join(r.message for r in failed[:3]))
    for r in results:
        err = p4runtime_pb2.Error(canonical_code=Code.OK) if r is None else \
            p4runtime_pb2.Error(canonical_code=int(r.code), message=r.message)
        a = any_pb2.Any()
        a.Pack(err)
        status.details.append(a)
    context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.abort(grpc.StatusCode.UNKNOWN, status.message)
