"""One wall-clock deadline for a whole `cryptobench sim run`: loading the image, running it and
writing the result.

The run itself stops at its executor's own timeout (the time left, less a reserve for the
result); around it, `guard` arms SIGALRM for the time left, so a step that takes too long (a
hostile ELF that is slow to parse or scan) is interrupted with CommandTimeout. CommandTimeout is a
BaseException, as KeyboardInterrupt is: the `except Exception` of a parser cannot swallow it. The
alarm interrupts only inside `guard`: during the run the executors call back into Python, where an
exception must not be raised (imagerun.py's callbacks turn exceptions into the run's problem)."""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager


class CommandTimeout(BaseException):
    """The command's time ran out during `what` (a step of the command, in words)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self._step: str | None = None

    def left(self) -> float:
        return self.end - time.monotonic()

    def run_budget(self) -> float:
        """The time the run itself may take: what is left, less a reserve for writing the result
        (a tenth of the timeout, at most a second)."""
        return max(0.0, self.left() - min(1.0, self.seconds / 10))

    @contextmanager
    def guard(self, what: str, grace: float = 0.0):
        """Raises CommandTimeout(what) when the deadline (plus `grace` seconds) passes before the
        block ends."""
        left = self.left() + grace
        if left <= 0:
            raise CommandTimeout(what)
        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            # no interval timer here (another platform, or a caller's thread): checked at the end
            yield
            if self.left() + grace <= 0:
                raise CommandTimeout(what)
            return
        self._step = what
        previous = signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
            self._step = None

    def _alarm(self, signum, frame) -> None:
        if self._step is not None:
            raise CommandTimeout(self._step)

