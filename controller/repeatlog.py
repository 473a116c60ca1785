"""One rule for a finding that stays the same: log it when it changes, then again at most every
``REPEAT_LOG_S``; the repeats in between go to DEBUG (a dead cable, a refused write, a refused
converge were a WARNING line every round, every few seconds, for as long as they lasted)."""
from __future__ import annotations

import time

REPEAT_LOG_S = 60.0


class RepeatLog:
    """The last finding logged, when, and how many repeats of it were held back since."""

    def __init__(self) -> None:
        self.last: object = None
        self.at = float("-inf")  # monotonic time it was logged
        self.held = 0

    def due(self, what: object, now: float | None = None) -> bool:
        """True (and ``what`` remembered as logged now) when it differs from the last finding logged or
        ``REPEAT_LOG_S`` has passed since; False counts it as a repeat held back."""
        now = time.monotonic() if now is None else now
        if what == self.last and now - self.at < REPEAT_LOG_S:
            self.held += 1
            return False
        self.last, self.at = what, now
        return True

    def take_held(self) -> int:
        """The repeats held back since the last call (to report beside the next line logged)."""
        n, self.held = self.held, 0
        return n

    def reset(self) -> None:
        self.last, self.at, self.held = None, float("-inf"), 0
