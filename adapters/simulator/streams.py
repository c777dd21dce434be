"""Streams: a queue of tasks run in issue order by one worker thread, under a schedule.

Each task gets a sequence number when it is issued (1, 2, ...); the stream
counts how many have completed.  "Everything issued before now is done" is
then ``completed >= issued-at-the-time``, which is what every
synchronisation waits for.

Schedules (legal freedom of when tasks run; order within a stream never changes):

- ``eager``: the worker runs each task as soon as it can;
- ``lazy``: the worker runs a task only once somebody *demands* it: a
  synchronisation, a query, an event wait from another stream, a pageable
  drain, a destroy or a device sync raises the stream's demand to the tasks
  that waiter needs.  Demands only ever reach tasks issued before the
  waiter, and a task only ever waits for tasks issued before it, so no cycle,
  hence no deadlock, can arise;
- ``random``: the worker sleeps a seeded random delay before some tasks, so
  that different streams interleave differently from run to run of different
  seeds (and identically for one seed, as far as the OS scheduler allows).

The worker thread starts with the first task (a stream nobody uses costs no
thread) and is a daemon; ``retire`` (drain, then end) and ``abort`` (end now,
dropping what has not run) end it, and ``join`` waits for it.
"""

from __future__ import annotations

import enum
import random
import threading
import time
from collections import deque
from collections.abc import Callable

Task = Callable[[], None]

SCHEDULES = ("eager", "lazy", "random")


class Wait(enum.Enum):
    """How a wait on a stream ended."""

    DONE = "done"
    TIMEOUT = "timeout"
    STOPPED = "stopped"
    """The stream was stopped (simulator closed) before the tasks ran."""


class Schedule:
    """A schedule and the random source of its delays."""

    def __init__(self, name: str, seed: int = 0, max_delay: float = 0.001) -> None:
        if name not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, not {name!r}")
        self.name = name
        self.seed = seed
        self.max_delay = max_delay

    @property
    def lazy(self) -> bool:
        return self.name == "lazy"

    def delays(self, stream_key: str) -> Callable[[], float] | None:
        """For ``random``: the delay source of one stream (seeded by the seed and its key)."""
        if self.name != "random":
            return None
        rng = random.Random(f"{self.seed}/{stream_key}")
        max_delay = self.max_delay

        def draw() -> float:
            # Half the tasks run at once, the others after a delay up to max_delay.
            return 0.0 if rng.random() < 0.5 else rng.uniform(0.0, max_delay)

        return draw


class Stream:
    """An ordered task queue with its worker thread."""

    def __init__(self, handle: int, device: int, schedule: Schedule, key: str) -> None:
        self.handle = handle
        self.device = device
        self._lazy = schedule.lazy
        self._delay = schedule.delays(key)
        self._name = f"acl-sim-stream-{key}"
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[tuple[int, Task]] = deque()
        self._issued = 0
        self._completed = 0
        self._demand = 0
        self._closing = False
        """No new task is accepted (destroy or reset under way)."""
        self._stopped = False
        """The worker ends (after a retire, or an abort)."""
        self._aborted = False
        """Ended by ``abort`` (simulator closed): tasks not yet run are dropped, waiters fail."""
        self._failures: list[BaseException] = []
        self._thread: threading.Thread | None = None

    # -- issuing -------------------------------------------------------------
    def enqueue(self, task: Task) -> int | None:
        """Issue ``task``: its sequence number, or None if the stream no longer accepts tasks."""
        with self._cond:
            if self._closing or self._stopped:
                return None
            self._issued += 1
            seq = self._issued
            self._queue.append((seq, task))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
            elif not self._lazy:
                self._cond.notify_all()
            return seq

    # -- waiting ------------------------------------------------------------
    def pending(self) -> int:
        """How many issued tasks have not run yet."""
        with self._cond:
            return self._issued - self._completed

    def issued(self) -> int:
        """Sequence number of the last task issued so far."""
        with self._cond:
            return self._issued

    def wait_for(self, seq: int, timeout: float | None = None) -> Wait:
        """Wait until task ``seq`` (and so every earlier one) has run."""
        with self._cond:
            self._raise_demand(seq)
            self._cond.wait_for(lambda: self._completed >= seq or self._stopped, timeout)
            # An abort wins over a task that completed meanwhile: after close, nobody may
            # be told that tasks finished (close opens gates to free the workers).
            if self._aborted:
                return Wait.STOPPED
            if self._completed >= seq:
                return Wait.DONE
            return Wait.STOPPED if self._stopped else Wait.TIMEOUT

    def drain(self, timeout: float | None = None) -> Wait:
        """Wait for every task issued before this call."""
        return self.wait_for(self.issued(), timeout)

    def idle(self) -> bool:
        """Have all tasks issued so far run?  (Under ``lazy``, also asks for them to run.)"""
        with self._cond:
            self._raise_demand(self._issued)
            return self._completed >= self._issued

    def take_failure(self) -> BaseException | None:
        """The first task failure not yet reported, reported once (as CANN reports at sync)."""
        with self._cond:
            return self._failures.pop(0) if self._failures else None

    def _raise_demand(self, seq: int) -> None:
        # Caller holds the condition.
        if self._lazy and seq > self._demand:
            self._demand = seq
            self._cond.notify_all()

    # -- ending -------------------------------------------------------------
    def retire(self) -> Wait:
        """Refuse new tasks, wait for the issued ones, then end the worker (destroy, reset)."""
        with self._cond:
            self._closing = True
        result = self.drain()
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self.join()
        return result

    def abort(self) -> None:
        """Tell the worker to end now (without waiting for it): tasks not yet run are
        dropped and every waiter is told STOPPED.  ``join`` then waits for the worker."""
        with self._cond:
            self._aborted = True
            self._stopped = True
            self._cond.notify_all()

    def join(self, timeout: float = 10.0) -> None:
        """Wait for the worker thread to end (after ``abort``)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    # -- the worker ---------------------------------------------------------
    def _runnable(self) -> bool:
        if not self._queue:
            return False
        return not self._lazy or self._queue[0][0] <= self._demand

    def _work(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while not self._stopped and not self._runnable():
                    cond.wait()
                if self._stopped:
                    return
                seq, task = self._queue.popleft()
            if self._delay is not None:
                delay = self._delay()
                if delay > 0.0:
                    time.sleep(delay)
            try:
                task()
            except Exception as exc:  # a failed task is reported at the next sync, as in CANN
                with cond:
                    self._failures.append(exc)
            with cond:
                self._completed = seq
                cond.notify_all()
