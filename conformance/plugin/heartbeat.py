"""``--acl-heartbeat SECONDS``: while a test runs longer than SECONDS (a state machine
shrinking a failure can take minutes), say so on the terminal every SECONDS.

Registered where the terminal is: in a run without workers, and in pytest-xdist's
controller, which hears of each test a worker starts and finishes.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import IO

import pytest

from .shared import location_id

TICK_SECONDS = 0.25
"""How often the watcher looks at the running tests (a bound on how late it speaks)."""


class Heartbeat:
    """The running tests, watched by a thread of its own."""

    def __init__(self, config: pytest.Config, seconds: float) -> None:
        self.config = config
        self.seconds = seconds
        self.running: dict[str, tuple[str, float, float]] = {}
        """Node id: the test's id, when it started, and when it is next due to be named."""
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.out, self.owned = _terminal()
        self.width_said_after = -1
        """How long pytest's line was when the heartbeat last spoke (it cannot tell that
        the heartbeat ended it)."""
        self.thread = threading.Thread(target=self._watch, name="acl-heartbeat", daemon=True)
        self.thread.start()

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        now = time.monotonic()
        with self.lock:
            self.running[nodeid] = (location_id(nodeid, location), now, now + self.seconds)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        with self.lock:
            self.running.pop(nodeid, None)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # A test whose pytest-xdist worker died has a report (of phase "???") and no finish.
        if report.when not in ("setup", "call"):
            with self.lock:
                self.running.pop(report.nodeid, None)

    def pytest_unconfigure(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        if self.owned:
            with contextlib.suppress(OSError):
                self.out.close()

    def _watch(self) -> None:
        while not self.stop.wait(TICK_SECONDS):
            now = time.monotonic()
            due: list[tuple[str, float]] = []
            with self.lock:
                for nodeid, (name, started, next_due) in self.running.items():
                    if now >= next_due:
                        due.append((name, now - started))
                        self.running[nodeid] = (name, started, next_due + self.seconds)
            for name, elapsed in due:
                # Whole seconds, rounded down: the watcher may speak a little late.
                took = f"{int(elapsed)}" if self.seconds >= 1 else f"{elapsed:.1f}"
                self._say(f"still running {name} ({took} s)")

    def _say(self, line: str) -> None:
        writer = self.config.get_terminal_writer()
        # On a line of its own, even in the middle of pytest's progress dots.
        width = writer.width_of_current_line
        start = "\n" if width and width != self.width_said_after else ""
        self.width_said_after = width
        with contextlib.suppress(OSError, ValueError):
            writer.flush()
            self.out.write(f"{start}{line}\n")
            self.out.flush()


def _terminal() -> tuple[IO[str], bool]:
    """The terminal as it is now, before pytest captures the output of a test (pytest
    captures at the file descriptor, so that what a thread writes to standard output
    while a test runs would be the test's output, shown only if it fails); and whether
    it is a copy of the heartbeat's own, to be closed at the end."""
    try:
        fd = os.dup(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor (pytest run in-process)
        return sys.stdout, False
    return os.fdopen(fd, "w", encoding="utf-8", errors="replace"), True
