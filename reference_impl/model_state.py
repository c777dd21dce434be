"""The model's state, and the operations its handlers share.

:class:`ModelState` is everything the model knows after the calls it was told of: the
world the profiles read (``state.World``), happens-before and what is known complete
(``order.Order``), each variable's memory (``memory.VarMemory``), and the bookkeeping
of past calls kept here: each copy into a variable (:class:`WriteMeta`), the
asynchronous reads still to judge (:class:`PendingRead`), the last copies rejected per
variable (:class:`Rejected`).  Its methods are the operations that keep these in step
(a synchronisation that returned, a host write, a rejected copy); the handlers of the
calls' effects (``apply.py``, ``apply_memory.py``), the judgement of bytes read
(``observation.py``), the diagnosis and the tally use them.  The model (``model.py``)
is this state with the calls' entry points on top.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import numpy.typing as npt

from .constants import Capabilities
from .evidence import CopyShape
from .evidence import Tally
from .judgement import Cause
from .judgement import Judgement
from .judgement import Violation
from .memory import Bytes
from .memory import Candidate
from .memory import VarMemory
from .memory import Write
from .order import Clock
from .order import Gate
from .order import Order
from .order import Queue
from .order import Task
from .order import covers
from .profiles import Profile
from .state import CHANGE_LIMIT
from .state import BufferState
from .state import Symbol
from .state import World


@dataclass(eq=False)
class WriteMeta:
    """What the model knows of one copy into a variable, besides its bytes."""

    var: VarMemory
    device: int
    symbol: Symbol
    source: BufferState | None
    source_offset: int
    issued_done: Clock
    source_version: int = 0
    done_by: Cause | None = None
    """The call whose return made the write known complete, and what it promised."""
    own_promise: str | None = None
    """The requirement under which its own call promised it complete at return (a
    pageable or synchronous copy), if it did."""
    shape: CopyShape | None = None
    """Its count, host memory kind and odd offsets at the call, for the coverage the
    checks of its bytes add to (``evidence.Extent``)."""


@dataclass(eq=False)
class PendingRead:
    """An aclrtMemcpyFromSymbolAsync into page-locked memory, judged once complete."""

    call: Judgement
    task: Task
    device: int
    symbol: Symbol
    offset: int
    count: int
    dest: BufferState
    dest_offset: int
    snapshot: list[tuple[int, int, tuple[Candidate, ...]]]
    extra: list[Write] = field(default_factory=list)
    ready: bool = False
    checked: bool = False
    gates_at_completion: list[Gate] = field(default_factory=list)
    ready_by: Cause | None = None
    """The promise (requirement, call) that made the read known complete."""

    @property
    def address(self) -> int:
        """Where in host memory the read lands."""
        return self.dest.address + self.dest_offset


@dataclass
class Rejected:
    """A copy to a variable the backend rejected: what it would have written."""

    call: Judgement
    source: bytes | None
    offset: int


LastRead = tuple[Judgement | None, list[tuple[int, int, list[npt.NDArray[np.uint8]] | None]]]
"""The last synchronous read judged, and what it allowed per segment (see
``VarMemory.allowed``)."""


class ModelState:
    """What the model knows after the calls it was told of, for one backend run."""

    def __init__(self, profile: Profile, capabilities: Capabilities, tally: Tally | None) -> None:
        self.profile = profile
        self.caps = capabilities
        self.tally = tally if tally is not None else Tally()
        """The checks made and the outcomes seen (may be shared by several models)."""
        self.masks: frozenset[str] = frozenset()
        """Requirements known to fail (in this run, or listed as expected failures): a
        violation charged to one of them is set aside (``set_aside``) and, for a read,
        the model takes the bytes read as the truth from then on, so that the other
        requirements are still judged."""
        self.known_failing: frozenset[str] = frozenset()
        """Requirements known to fail in this run, masked or not (a test that carries one
        still checks it): where an observation has several readings, one that names a
        requirement known to fail is the likelier."""
        self.set_aside: list[Violation] = []
        """Violations of masked requirements since the caller last emptied the list."""
        self.unbelieved: list[Cause] = []
        """Promises of completion by masked requirements that the model did not believe (a
        test that relies on them cannot go on), since the caller last emptied the list."""
        self.order = Order()
        self.world = World(self.caps, self.order)
        self.memory: dict[tuple[int, str], VarMemory] = {}
        """Each variable's memory per (device, name)."""
        self.history: list[Judgement] = []
        """Every call announced so far, in order."""
        self.pending: list[Write] = []
        """Writes not yet known complete."""
        self.meta: dict[int, WriteMeta] = {}
        """What is known of each write, by its id."""
        self.reads: list[PendingRead] = []
        """Asynchronous reads not yet judged."""
        self.gates: dict[int, Gate] = {}
        """Every gate launched, by its id."""
        self.rejected: dict[tuple[int, str], deque[Rejected]] = {}
        """The latest copies rejected per (device, variable)."""
        self.addresses: dict[tuple[int, str], int] = {}
        """The device address reported for each (device, variable) since its last reset."""
        self.reset: set[tuple[int, str]] = set()
        """Variables whose contents a device reset made unspecified, not read since."""
        self.resets: list[tuple[int, Judgement]] = []
        """Each reset that ended a device's context: (device, the aclrtResetDevice call)."""
        self.after_reset: dict[tuple[int, str], Bytes] = {}
        """What each variable held when first read after its device's last reset."""
        self.undefined: dict[int, npt.NDArray[np.bool_]] = {}
        """Per host buffer address: which bytes hold values the suite never wrote."""
        self.last_read: LastRead | None = None
        """The last synchronous read judged, and what it allowed."""
        self._ids = 0
        self._host_queues: dict[int, Queue] = {}
        self._raised: dict[int, list[tuple[int, Cause]]] = {}
        """Per queue, each promise that raised what the host knows complete there: (the
        index it raised it to, the promise), in order."""

    def new_id(self) -> int:
        """A fresh id for a write (ids grow in the order writes are issued)."""
        self._ids += 1
        return self._ids

    def host_queue(self, thread: int) -> Queue:
        """The queue of host ``thread``'s synchronous copies (in no stream)."""
        q = self._host_queues.get(thread)
        if q is None:
            q = self._host_queues[thread] = self.order.new_queue()
        return q

    def var(self, device: int, sym: Symbol) -> VarMemory:
        """The memory of ``sym`` on ``device`` (unknown contents if never read)."""
        var = self.memory.get((device, sym.name))
        if var is None:
            # Never read: its starting contents are unknown.
            var = VarMemory(sym.size, np.zeros(sym.size, dtype=np.uint8))
            var.forget(None)
            self.memory[(device, sym.name)] = var
        return var

    def is_done(self, w: Write) -> bool:
        """Is write ``w`` known complete?"""
        return self.order.is_done(w.task)

    def all_done(self, clock: Clock) -> bool:
        """Is every task ``clock`` covers known complete?"""
        return all(covers(self.order.done, q, i) for q, i in clock.items())

    def complete(self, clock: Clock, cause: Cause) -> None:
        """A synchronisation returned: what ``clock`` covers is done; prune and close windows.
        ``cause``: the requirement that promised it and the call (a later read that shows a
        write did not run is charged to that promise).  A promise of a masked requirement
        (known to be broken) is not believed: what it covers stays as uncertain as before."""
        if cause[0] in self.masks:
            if not self.all_done(clock):
                self.unbelieved.append(cause)
            return
        for q, i in clock.items():
            if not covers(self.order.done, q, i):
                self._raised.setdefault(q, []).append((i, cause))
        self.order.complete(clock)
        still: list[Write] = []
        newly: list[Write] = []
        for w in self.pending:
            (newly if self.order.is_done(w.task) else still).append(w)
        self.pending = still
        for w in newly:
            meta = self.meta[w.wid]
            meta.done_by = cause
            if meta.source is not None:
                meta.source.open_writes = [(x, o) for x, o in meta.source.open_writes if x is not w]
            meta.var.prune(w.offset, w.end, self.is_done)
        for r in self.reads:
            if not r.ready and self.order.is_done(r.task):
                r.ready = True
                r.ready_by = cause
                r.gates_at_completion = list(self.order.gates)

    def promises_of(self, clock: Clock) -> list[Cause]:
        """The promises of the latest call that made tasks ``clock`` covers known complete,
        for the earliest tasks first (a pageable copy: its drain, then its own copy)."""
        raised = [
            (i, c)
            for q in clock
            if covers(self.order.done, q, clock[q])
            for i, c in self._raised.get(q, [])
        ]
        if not raised:
            return []
        last = max(c[1].number for _i, c in raised)
        return list(
            dict.fromkeys(c for _i, c in sorted(raised, key=lambda r: r[0]) if c[1].number == last)
        )

    def host_write(self, buf: BufferState, offset: int, data: bytes) -> None:
        """The host changed buffer bytes: pending pinned copies may see the new values."""
        end = offset + len(data)
        buf.contents[offset:end] = data
        buf.version += 1
        if len(data) <= CHANGE_LIMIT:
            buf.changes.append((buf.version, offset, bytes(data)))
        undefined = self.undefined.get(buf.address)
        if undefined is not None:
            undefined[offset:end] = False
            if not undefined.any():
                del self.undefined[buf.address]
        arr = np.frombuffer(data, dtype=np.uint8)
        for w, src_off in buf.open_writes:
            x, y = max(offset, src_off), min(end, src_off + w.count)
            if x < y and w.base is not None:
                w.alternatives.append(
                    (w.offset + (x - src_off), arr[x - offset : y - offset].copy())
                )

    def remember_rejected(self, call: Judgement) -> None:
        """A copy to a variable was rejected: what it would have written is kept (a read
        that shows those bytes names it)."""
        sym = self.world.symbols.get(call.args.get("symbol") or 0)
        if sym is None:
            return
        device = self.world.current_device(call.thread) or 0
        count = int(call.args.get("count") or 0)
        rng = self.world.host_range(call.args.get("src") or 0, count)
        data = (
            bytes(rng.buffer.contents[rng.offset : rng.offset + int(call.args["count"])])
            if rng.buffer
            else None
        )
        q = self.rejected.setdefault((device, sym.name), deque(maxlen=8))
        q.append(Rejected(call, data, int(call.args.get("offset") or 0)))

    def forget_device(self, device: int) -> None:
        """``device`` was reset: its variables' contents are unspecified, its pending reads
        and reported addresses gone."""
        for (dev, name), var in self.memory.items():
            if dev == device:
                var.forget(None)  # DEVICE-RESET-CONTENTS: unspecified after a reset
                self.reset.add((dev, name))
                self.after_reset.pop((dev, name), None)
        self.reads = [r for r in self.reads if r.device != device]
        for k in [k for k in self.addresses if k[0] == device]:
            del self.addresses[k]

    def screen(self, violations: list[Violation]) -> list[Violation]:
        """The violations not of masked requirements; those are set aside."""
        if not self.masks or not violations:
            return violations
        kept = []
        for v in violations:
            hit = next((r for r in (v.requirement, *v.also) if r in self.masks), None)
            if hit is None:
                kept.append(v)
            else:
                self.tally.set_aside[hit] += 1
                self.set_aside.append(v)
        return kept
