"""The one exception type of the control API: an errno-style code plus a message a user can act on."""

from __future__ import annotations

import errno as _errno


class MrcCtlError(OSError):
    """A control call failed; ``.errno`` is the code ``mrc_ctl.h`` documents (EINVAL, EBUSY, E2BIG...).

    ``required_count`` is set on E2BIG from a query whose output array was too small (the C API
    returns the needed length in the in/out count); ``responses`` holds the partial responses of an
    endpoint batch that timed out (ETIMEDOUT).
    """

    def __init__(self, code: int, message: str, *, required_count: int | None = None,
                 responses: list | None = None) -> None:
        super().__init__(code, message)
        self.required_count = required_count
        self.responses = responses

    def __str__(self) -> str:
        name = _errno.errorcode.get(self.errno, str(self.errno))
        return f"[{name}] {self.strerror}"


def einval(message: str) -> MrcCtlError:
    """Shorthand for the most common failure: an invalid argument."""
    return MrcCtlError(_errno.EINVAL, message)


def enum_arg(cls, value, what: str):
    """``cls(value)`` for an enum field of an attribute; EINVAL (not a bare ValueError) when ``value``
    is none of the header's values, as every other bad argument."""
    try:
        return cls(value)
    except (ValueError, TypeError):
        raise einval(f"{what} {value!r} is not a valid {cls.__name__}") from None
