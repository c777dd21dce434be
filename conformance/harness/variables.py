"""Device variables' starting contents: each is read from the backend before its first
use on each device (never assumed), and that read is the model's starting point.  The
suite's own reads land in scratch host memory, one buffer per host thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Mapping

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.constants import D2H

from .backend_calls import BackendCalls
from .failure import Declined
from .host_memory import HostBuffer

BASELINE_LIMIT = 4096
"""Variables up to this size are read as soon as a device is first used, so that a
stray write into them shows even if no test touches them on purpose; a larger one
is read when it, or the variable laid out just before it, is first used."""


SPARE = 64
"""Bytes a scratch buffer has beyond the largest read it takes: the suite's own reads pass
a dstMax above their count, never the boundary dstMax == count that the FROMSYMBOL-DSTMAX
tests check on purpose (a backend wrong there fails that requirement, not every read)."""


class Scratch:
    """Host memory that each host thread's reads land in (never a source, so never filled)."""

    def __init__(
        self, fixtures: Mapping[str, FixtureVariable], allocate: Callable[[int], HostBuffer]
    ):
        """``allocate``: pageable host memory of a size, through a set-up call."""
        self._allocate = allocate
        self._largest = min(BASELINE_LIMIT, max((f.size for f in fixtures.values()), default=0))
        self._buffers: dict[int, HostBuffer] = {}

    def forget(self) -> list[HostBuffer]:
        """The buffers handed out so far, forgotten (they were freed, or are about to be:
        the next read allocates anew)."""
        buffers = list(self._buffers.values())
        self._buffers.clear()
        return buffers

    def buffer(self, thread: int, need: int = BASELINE_LIMIT) -> HostBuffer:
        """Host thread ``thread``'s scratch buffer, of at least ``need`` bytes."""
        buf = self._buffers.get(thread)
        if buf is None or buf.size < need + SPARE:
            buf = self._buffers[thread] = self._allocate(max(need, self._largest) + SPARE)
        return buf


class Baselines:
    """What the model has been given of each device variable, read from the backend."""

    def __init__(
        self,
        fixtures: Mapping[str, FixtureVariable],
        model: Model,
        lock: threading.RLock,
        backend: BackendCalls,
        scratch: Scratch,
        failure: Callable[[list[Violation]], BaseException],
    ) -> None:
        """``failure``: the exception a violation found by a starting read becomes."""
        self._fixtures = fixtures
        self._model = model
        self._lock = lock
        self._backend = backend
        self._scratch = scratch
        self._failure = failure
        self._known: set[tuple[int, str]] = set()
        self.first_reads: dict[tuple[int, str], bytes] = {}
        """(device, variable) -> the bytes read there before its first use."""

    def ensure_known(self, thread: int, symbol: int) -> None:
        """Before a copy touches ``symbol``: read what the model has not seen of it and of
        the variables around it on the current device."""
        dev = self._model.current_device(thread)
        if dev is None:
            return
        fixture = next((f for f in self._fixtures.values() if f.address == symbol), None)
        if fixture is None:
            return
        if (dev, "*") not in self._known:
            self._known.add((dev, "*"))
            for f in self._fixtures.values():
                if f.size <= BASELINE_LIMIT:
                    self.learn(thread, dev, f)
        self.learn(thread, dev, fixture)
        # The variable laid out next (fixtures() lists them in layout order) is where a
        # copy that runs past the end would land.
        order = list(self._fixtures.values())
        i = order.index(fixture)
        if i + 1 < len(order):
            self.learn(thread, dev, order[i + 1])

    def learn(self, thread: int, device: int, f: FixtureVariable) -> None:
        """Read a variable before the model has seen it: its contents become the starting
        point."""
        if (device, f.name) in self._known:
            return
        hung = self._backend.would_hang("memcpy_from_symbol", {})
        if hung is not None:
            # The suite's read would hang (or raise) again: not made, and the step that
            # needed the starting contents is declined, citing the failure (as a test's
            # call in that situation is).
            requirement = hung.get("requirement") or "setup"
            self._model.tally.declined[requirement] += 1
            raise Declined(
                requirement,
                f"reading {f.name} on device {device}",
                f"the backend {hung.get('what') or 'hung'} on {hung.get('call')} in "
                f"{hung.get('test') or 'an earlier test'} (charged to {requirement}), and the "
                "suite's read of the variable's starting contents is in the same situation",
                masked=False,
            )
        self._known.add((device, f.name))
        scratch = self._scratch.buffer(thread, f.size)
        args = dict(
            dst=scratch.address,
            dst_max=scratch.size,
            symbol=f.address,
            count=f.size,
            offset=0,
            kind=D2H,
        )
        r = self._backend.raw(
            "memcpy_from_symbol", thread, args, f"reading {f.name} on device {device}"
        )
        observed = self._backend.read_back(scratch.address, f.size, thread) if r.ok else None
        if observed is not None:
            self.first_reads[(device, f.name)] = observed
        with self._lock:
            step = judge(self._model, r, observed, setup=True)
        if step.violations:
            raise self._failure(step.violations)
