"""Happens-before between device tasks, from stream order, events and syncs.

Every task (a copy, a gate, an asynchronous read) sits at an index in one
queue.  Its *clock* maps each queue to the highest index in that queue that is
certain to have finished before the task starts: its own queue up to the task
before it (stream FIFO order), what an event wait imported, and everything the
host knew to be complete when it issued the task.  ``a`` happens before ``b``
when ``a.index <= b.clock[a.queue]``.

The host's knowledge is a clock too (``Order.done``): a synchronisation that
returned raises it.  A task is *done* when the host clock covers it, *not yet*
when a closed gate happens before it (or is it), and *maybe* otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

Clock = dict[int, int]


def join_into(target: Clock, other: Clock) -> None:
    """target := target ⊔ other (pointwise maximum)."""
    for q, i in other.items():
        if target.get(q, -1) < i:
            target[q] = i


def covers(clock: Clock, queue: int, index: int) -> bool:
    return clock.get(queue, -1) >= index


@dataclass(eq=False)
class Task:
    """One entry of a queue.  Identity matters, not value."""

    queue: int
    index: int
    clock: Clock

    def happens_before(self, other: Task) -> bool:
        return self is not other and covers(other.clock, self.queue, self.index)


@dataclass(eq=False)
class Gate:
    """A host function that blocks its stream until the suite opens it."""

    gid: int
    task: Task
    open: bool = False


@dataclass(eq=False)
class Queue:
    """A stream (or a host thread's sequence of synchronous copies)."""

    key: int
    frontier: Clock = field(default_factory=dict)
    """What the next task of this queue inherits: its predecessors and their pasts."""
    length: int = 0


class Order:
    """The happens-before relation and the host's knowledge of completion."""

    def __init__(self) -> None:
        self.done: Clock = {}
        self._next_key = 0
        self.gates: list[Gate] = []
        """The gates that are closed now."""
        self.abandoned: Clock = {}
        """Queues of streams destroyed without waiting for their tasks (spec): queue -> the
        last index known done then.  Their later tasks may run or may never run (the text
        does not say), so no synchronisation makes them done."""

    def new_queue(self) -> Queue:
        q = Queue(self._next_key)
        self._next_key += 1
        return q

    def enqueue(self, queue: Queue) -> Task:
        """Append a task; it follows its queue and what the host knows is done."""
        clock = dict(queue.frontier)
        join_into(clock, self.done)
        task = Task(queue.key, queue.length, clock)
        queue.length += 1
        queue.frontier = dict(clock)
        queue.frontier[queue.key] = task.index
        return task

    def import_clock(self, queue: Queue, clock: Clock) -> None:
        """An event wait: the queue's later tasks follow what ``clock`` covers."""
        join_into(queue.frontier, clock)

    def is_done(self, task: Task) -> bool:
        return covers(self.done, task.queue, task.index)

    def closed_gate_before(self, clock: Clock, gates: Iterable[Gate] | None = None) -> Gate | None:
        """A closed gate that ``clock`` waits for, if any."""
        for g in self.gates if gates is None else gates:
            if covers(clock, g.task.queue, g.task.index):
                return g
        return None

    def blocked(self, task: Task) -> Gate | None:
        """The closed gate that keeps ``task`` from running, if any."""
        for g in self.gates:
            if g.task is task or g.task.happens_before(task):
                return g
        return None

    def complete(self, clock: Clock) -> None:
        """A synchronisation returned: everything ``clock`` covers is done (but the tasks
        of an abandoned queue, which may never run)."""
        join_into(self.done, clock)
        for q, last in self.abandoned.items():
            if self.done.get(q, -1) > last:
                self.done[q] = last

    def abandon(self, queue: Queue) -> None:
        """``queue``'s stream was destroyed without waiting: what is not known done now may
        run later or never, and its closed gates no longer hold anything for certain."""
        self.abandoned[queue.key] = self.done.get(queue.key, -1)
        self.gates = [g for g in self.gates if g.task.queue != queue.key]

    def abandoned_in(self, clock: Clock) -> bool:
        """Does ``clock`` cover a task of an abandoned queue that may never run?"""
        return any(clock.get(q, -1) > last for q, last in self.abandoned.items())

    def add_gate(self, gate: Gate) -> None:
        self.gates.append(gate)

    def open_gate(self, gate: Gate) -> None:
        gate.open = True
        # Only closed gates are kept: they are what makes a task "not yet".
        self.gates = [g for g in self.gates if g is not gate]
