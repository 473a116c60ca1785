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
    context.abort(grpc_code(err.code), _cut(err.message, MESSAGE_MAX))


# gRPC clients take 8 KiB of metadata by default (16 KiB hard): the error trailer is kept under
# this many bytes while messages can be cut, so a client with default limits still gets every
# update's code (a message echoing a 5,000-byte key made the client see RESOURCE_EXHAUSTED only)
DETAILS_BUDGET = 6 * 1024
MESSAGE_MAX = 512


def _cut(msg: str, n: int) -> str:
    return msg if len(msg) <= n else msg[:max(0, n - 3)] + "..."


def abort_batch(context: grpc.ServicerContext, results: list[P4RuntimeError | None]) -> None:
    """End a Write with UNKNOWN and one ``p4.v1.Error`` per update in ``grpc-status-details-bin``.
    Messages are cut to fit ``DETAILS_BUDGET`` (codes are never dropped)."""
    failed = [r for r in results if r is not None]
    summary = _cut(f"{len(failed)} of {len(results)} update(s) failed: " + "; ".join(r.message for r in failed[:3]),
                   MESSAGE_MAX)

    def build(limit: int) -> status_pb2.Status:
        status = status_pb2.Status(code=Code.UNKNOWN, message=summary)
        for r in results:
            err = p4runtime_pb2.Error(canonical_code=Code.OK) if r is None else \
                p4runtime_pb2.Error(canonical_code=int(r.code), message=_cut(r.message, limit))
            a = any_pb2.Any()
            a.Pack(err)
            status.details.append(a)
        return status

    status = build(MESSAGE_MAX)
    if status.ByteSize() > DETAILS_BUDGET and failed:
        bare = build(0).ByteSize()  # codes only
        status = build(max(0, (DETAILS_BUDGET - bare) // len(failed)))
    context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.abort(grpc.StatusCode.UNKNOWN, status.message)
