"""Backends with one call that never returns (issue 21, item 1: a hang is a first-class
failure).

Each is the simulator with one call that, in one situation, blocks until the backend is
released: as a runtime whose completion never arrives would.  Released is the only way
out (``close``), so that the thread the suite abandons ends with the backend instead of
keeping the process alive.  The simulator answers in its own process and says its calls
never hang (``calls_may_hang = False``); these say they may, so the suite bounds every
call with its time limit, as it does for any backend it does not know.
"""

from __future__ import annotations

import threading
from typing import Any

from .mutant_base import MutantBase


class _HangsUntilClosed(MutantBase):
    """What the classes below share: a hang that ends when the backend is released."""

    calls_may_hang = True

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._released = threading.Event()

    def _hang(self) -> int:
        """Block until the backend is released; then answer as a closed backend would."""
        self._released.wait()
        self._check_open()  # raises: the simulator is closed
        raise AssertionError("unreachable: the backend was released")

    def close(self) -> None:
        self._released.set()
        super().close()


class NullStreamSyncHangs(_HangsUntilClosed):
    """aclrtSynchronizeStream(NULL) never returns (the default stream's completions are
    never delivered); every other stream synchronises as it must."""

    def synchronize_stream(self, stream: int) -> int:
        if stream == 0:
            self._check_open()
            return self._hang()
        return super().synchronize_stream(stream)


class EventSyncHangsAfterStreamRecord(_HangsUntilClosed):
    """aclrtSynchronizeEvent never returns when the event's latest record was made on a
    stream the caller created (not the default stream); an event recorded on the default
    stream, or never recorded, synchronises as it must."""

    def synchronize_event(self, event: int) -> int:
        evt = self._event(event) if event else None
        record = evt.latest() if evt is not None else None
        if record is not None and record.stream.handle != 0:
            self._check_open()
            return self._hang()
        return super().synchronize_event(event)
