"""Child processes that end with the command: pytest and its workers, each run in a
process group of its own, stopped whole when the command is interrupted.

A terminal's Ctrl-C reaches the whole foreground group, but a CI cancel or
timeout sends SIGTERM to the command alone: without help, pytest and its
pytest-xdist workers would run on and write their files after the command has
returned.  :class:`Supervisor` starts each child with ``start_new_session`` (a
group of its own, so that a signal reaches it only through the supervisor),
forwards SIGINT and SIGTERM to every group it started, gives the groups a
bounded time to end and then kills what is left with SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from types import FrameType
from types import TracebackType
from typing import Any

GRACE_S = 3.0
"""How long an interrupted group has to end by itself before it is killed."""

FORWARDED = (signal.SIGINT, signal.SIGTERM)

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The shell's convention: 128 + the signal's number."""


class Interrupted(Exception):
    """The command was interrupted (SIGINT or SIGTERM), or its time budget was spent
    (``signum`` None); every child has ended."""

    def __init__(self, signum: int | None, reason: str = "") -> None:
        super().__init__(reason or signal.Signals(signum or signal.SIGTERM).name)
        self.signum = signum
        self.reported = False
        """The report of what finished was written before this was raised."""

    @property
    def reason(self) -> str:
        """``SIGTERM``, ``SIGINT`` or what stopped the run, in words."""
        return str(self)

    @property
    def exit_status(self) -> int | None:
        """128 + the signal's number; None when no signal stopped the run (the caller's
        own status applies)."""
        if self.signum is None:
            return None
        return EXIT_STATUS.get(signal.Signals(self.signum), 128 + self.signum)


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies, already ended, do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a member we may not signal still runs
        return True
    # killpg also reaches zombies; /proc tells those from running processes.
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover - no /proc: trust killpg
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


class Supervisor:
    """Starts children in groups of their own; forwards SIGINT and SIGTERM to them.

    Used as a context manager in the main thread (elsewhere signals cannot be
    handled and are left as they are).  ``signum`` is the signal received, if any.
    The handler only forwards and notes: code running when a signal comes (moving a
    report into place, say) is never cut in half; it asks :meth:`check` when it may
    stop.
    """

    def __init__(self, grace_s: float = GRACE_S, deadline: float | None = None) -> None:
        self.grace_s = grace_s
        self.deadline = deadline
        """``time.monotonic()`` past which the children are stopped as by SIGTERM (a time
        budget); None: no limit."""
        self.budget_spent = False
        self.signum: int | None = None
        self.received_at = 0.0
        self._groups: set[int] = set()
        self._lock = threading.RLock()  # the handler may run while this thread holds it
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Supervisor:
        if threading.current_thread() is threading.main_thread():
            for s in FORWARDED:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_all()
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
            self.received_at = time.monotonic()
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            # a second signal: the user means it, no more grace
            _signal_group(pgid, signum if first else signal.SIGKILL)

    def check(self) -> None:
        """Raise :class:`Interrupted` if a signal came or the time budget was spent (every
        child has ended by then)."""
        if self.signum is not None:
            self.stop_all()
            raise Interrupted(self.signum)
        if self.budget_spent:
            self.stop_all()
            raise Interrupted(None, "the time budget was spent")

    @property
    def stopping(self) -> bool:
        """A signal came, or the time budget was spent: the children are being stopped."""
        return self.signum is not None or self.budget_spent

    def _spend_budget(self, pgid: int) -> None:
        """The time budget is spent: stop group ``pgid`` as a CI cancel would (SIGTERM, then
        SIGKILL after the grace period)."""
        if not self.stopping:
            self.budget_spent = True
            self.received_at = time.monotonic()
            _signal_group(pgid, signal.SIGTERM)

    def popen(self, cmd: Sequence[str], **kwargs: Any) -> subprocess.Popen[str]:
        """Start ``cmd`` in a new process group (refused once interrupted)."""
        self.check()
        proc: subprocess.Popen[str] = subprocess.Popen(
            list(cmd), start_new_session=True, text=True, **kwargs
        )
        with self._lock:
            self._groups.add(proc.pid)
        if self.signum is not None:  # came while starting
            _signal_group(proc.pid, self.signum)
        return proc

    def wait(self, proc: subprocess.Popen[str], timeout: float | None = None) -> int:
        """Wait for ``proc``; raise :class:`Interrupted` once it and its group ended after a
        signal or the time budget, or :class:`subprocess.TimeoutExpired` (group killed)
        after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                rc = proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            if self.deadline is not None and time.monotonic() > self.deadline:
                self._spend_budget(proc.pid)
            if self.stopping and time.monotonic() > self.received_at + self.grace_s:
                _signal_group(proc.pid, signal.SIGKILL)
            if deadline is not None and time.monotonic() > deadline:
                _signal_group(proc.pid, signal.SIGTERM)
                self.stop(proc.pid)
                proc.wait()
                raise subprocess.TimeoutExpired(proc.args, timeout or 0.0) from None
        if not self.stopping and group_alive(proc.pid):
            _signal_group(proc.pid, signal.SIGTERM)  # workers left behind by pytest
        self.stop(proc.pid)
        self.check()
        return rc

    def stop(self, pgid: int) -> None:
        """End group ``pgid``: what is left of it after the grace period is killed."""
        give_up = time.monotonic() + self.grace_s
        while group_alive(pgid):
            if time.monotonic() > give_up:
                _signal_group(pgid, signal.SIGKILL)
                give_up = time.monotonic() + self.grace_s
            time.sleep(0.05)
        with self._lock:
            self._groups.discard(pgid)

    def stop_all(self) -> None:
        """End every group started (after a signal: the signal was forwarded already)."""
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            if self.signum is None:
                _signal_group(pgid, signal.SIGTERM)
            self.stop(pgid)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
