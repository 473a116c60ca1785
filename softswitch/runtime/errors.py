"""Errors raised by the runtime state, carrying the gRPC canonical code P4Runtime prescribes."""
from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    """gRPC / google.rpc canonical status codes (same numbers as ``google.rpc.Code``)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14


class P4RuntimeError(Exception):
    """One failed P4Runtime operation: a canonical code and a message a user can act on."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class P4InfoError(ValueError):
    """The P4Info given to ``SwitchState`` is inconsistent (dangling ids, bad widths...)."""


def invalid(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.INVALID_ARGUMENT, msg)


def not_found(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.NOT_FOUND, msg)


def exists(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.ALREADY_EXISTS, msg)


def denied(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.PERMISSION_DENIED, msg)


def exhausted(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.RESOURCE_EXHAUSTED, msg)


def precondition(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.FAILED_PRECONDITION, msg)


def unimplemented(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.UNIMPLEMENTED, msg)


def out_of_range(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.OUT_OF_RANGE, msg)


def check_index(what: str, index: int, size: int) -> None:
    """An index into an array of ``size`` cells (``what``: "counter 'c'"): a negative one is
    INVALID_ARGUMENT, one past the end OUT_OF_RANGE (P4Runtime spec, CounterEntry / MeterEntry; PI
    answers the same)."""
    if index < 0:
        raise invalid(f"{what}: a negative number ({index}) is not a valid index")
    if index >= size:
        raise out_of_range(f"{what}: index {index} not in [0, {size})")
