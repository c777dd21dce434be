"""The stream gates of one harness (host tasks that hold a stream until the suite opens
them): which were launched, which are open, which a test's own timer owns, and which
openings the model has been told of.  A gate is opened by the test, by a test's timer or by
the releaser (a call that waits longer than it must, ``workers.GateReleaser``)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class StreamGates:
    """The stream gates one harness launched, and who opened them."""

    def __init__(self, lock: threading.RLock, open_on_backend: Callable[[int], None]) -> None:
        """``lock``: the harness's (a gate is marked open under it); ``open_on_backend``:
        opens a gate on the backend, past the model."""
        self._lock = lock
        self._open_on_backend = open_on_backend
        self.launched: list[int] = []
        """Every gate the backend enqueued for this harness, in order."""
        self._open: set[int] = set()
        self._told: set[int] = set()
        self._timed: set[int] = set()

    def launched_one(self, gate: int) -> None:
        """The backend enqueued ``gate`` (closed)."""
        self.launched.append(gate)

    def is_open(self, gate: int) -> bool:
        return gate in self._open

    def open_now(self) -> frozenset[int]:
        """The gates open at this moment (what a call's record notes when it returns)."""
        return frozenset(self._open)

    def claim(self, gate: int) -> bool:
        """Mark ``gate`` open; False if someone (a timer) already did: open it only once."""
        with self._lock:
            if gate in self._open:
                return False
            self._open.add(gate)
            return True

    def any_closed(self) -> bool:
        """Is a gate of this harness still closed?"""
        with self._lock:
            return any(g not in self._open for g in self.launched)

    def open_past_model(self, gate: int) -> None:
        """Open ``gate`` from a timer or the releaser, past the model."""
        # Marked open *before* the backend opens it, so a call that returns after the gate
        # really opened always sees the mark (a correct backend is never blamed); the model
        # learns of it before the next call is judged (``tell_model``).
        if self.claim(gate):
            self._open_on_backend(gate)

    def time(self, gate: int) -> None:
        """A test's own timer opens ``gate``: the releaser leaves it alone."""
        self._timed.add(gate)

    def release(self) -> None:
        """From the releaser: a call waits for longer than it needs to; open every gate that
        no test timer owns."""
        for g in list(self.launched):
            if g not in self._timed:
                self.open_past_model(g)

    def told(self, gate: int) -> None:
        """The model is told of ``gate``'s opening by the call that opens it."""
        with self._lock:
            self._told.add(gate)

    def tell_model(self, open_at_return: frozenset[int]) -> list[int]:
        """Of the gates open when a call returned, those the model has not been told of
        (a timer or the releaser opened them), now counted as told; sorted."""
        with self._lock:
            opened = sorted(open_at_return - self._told)
            self._told.update(opened)
            return opened
