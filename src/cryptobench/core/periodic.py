"""A thread that calls a function every few seconds while a block runs: the run lock's heartbeat
(runner/runner.py) and a lab worker's lease renewal (targets/mcu/lab/worker.py), each beside the main thread that
measures and writes."""
from __future__ import annotations

import threading
from typing import Callable


class Every:
    """`with Every(seconds, fn):` calls fn() every `seconds` until the block ends (first call one
    interval in); the thread is a daemon, and the exit waits at most 5 s for a call in progress."""

    def __init__(self, seconds: float, fn: Callable[[], object]):
        self.seconds, self.fn = seconds, fn
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=5)

    def _loop(self) -> None:
        while not self.stop.wait(self.seconds):
            self.fn()
