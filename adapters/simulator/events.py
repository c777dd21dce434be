"""Events and gates: the two things that make one stream's progress wait for something.

An *event* remembers its most recent record: the stream it was recorded on
and the sequence number of the record task there.  The record has happened
once that stream has completed that task.  A wait captures the record that is
most recent *at the time of the wait*; a later record does not move it.

A *gate* is the suite's stream gate (``aclrtLaunchHostFunc`` with a host
function that blocks until the suite opens it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .streams import Stream


@dataclass(frozen=True)
class Record:
    """One aclrtRecordEvent: which stream, which task there."""

    stream: Stream
    seq: int


class Event:
    """An event handle's state."""

    def __init__(self, handle: int, device: int) -> None:
        self.handle = handle
        self.device = device
        self._lock = threading.Lock()
        self._latest: Record | None = None

    def record(self, stream: Stream) -> bool:
        """Issue a record task on ``stream`` and make it the latest; False if refused."""
        with self._lock:
            # Issue and publish under one lock, so that no wait sees a record issued
            # after a later one.
            seq = stream.enqueue(_record_task)
            if seq is None:
                return False
            self._latest = Record(stream, seq)
            return True

    def latest(self) -> Record | None:
        """The most recent record, or None if the event was never recorded."""
        with self._lock:
            return self._latest


def _record_task() -> None:
    """A record does nothing when it runs: that it has run is the event."""


class Gate:
    """A host task that blocks its stream until opened."""

    def __init__(self, gate_id: int) -> None:
        self.id = gate_id
        self._opened = threading.Event()

    def open(self) -> None:
        self._opened.set()

    def task(self) -> None:
        """The task body: block the stream's worker until the gate opens."""
        self._opened.wait()
