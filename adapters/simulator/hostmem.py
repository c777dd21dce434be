"""The simulated host address space: buffers, page-locked memory and registrations.

Every host buffer is a numpy byte array given a fake address: buffers are
4096-byte aligned (which satisfies aclrtMallocHost's 64-byte alignment and
lets the suite register pageable buffers with aclrtHostRegisterV2) and
separated by at least one unmapped guard page, so a range running past the end
of a buffer reaches no other buffer.  By default an address is never handed
out twice; with ``reuse`` a freed range is handed out again, first fit, as
malloc and page-locked pools do.

A buffer from ``malloc_host`` is page-locked ("pinned"); so is any range
registered with ``register``.  Like CANN (register_memory.cc), whether a copy
counts as pinned is decided by its **start pointer** alone.
"""

from __future__ import annotations

import bisect
import enum
import threading
from dataclasses import dataclass

import numpy as np

from .layout import ByteArray

HOST_BASE = 0x7F3C_0000_0000
"""First host buffer address (a typical mmap region of a 64-bit Linux process)."""

PAGE = 4096


@dataclass(frozen=True)
class HostAllocation:
    """One live allocation of the simulated host address space."""

    address: int
    size: int
    pinned: bool
    """True for aclrtMallocHost memory; registration is tracked separately."""
    data: ByteArray

    @property
    def end(self) -> int:
        return self.address + self.size


class Registration(enum.Enum):
    """The outcome of ``HostMemory.register``."""

    OK = "ok"
    OUTSIDE = "outside"
    OVERLAP = "overlap"


class _Ranges:
    """Sorted, non-overlapping address ranges keyed by start, with containment lookup."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)

    def remove(self, start: int) -> bool:
        i = bisect.bisect_left(self._starts, start)
        if i < len(self._starts) and self._starts[i] == start:
            del self._starts[i]
            del self._ends[i]
            return True
        return False

    def containing(self, address: int) -> int | None:
        """The start of the range holding ``address``, if any."""
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and address < self._ends[i]:
            return self._starts[i]
        return None

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self._starts, end) - 1
        return i >= 0 and self._ends[i] > start


class HostMemory:
    """Allocations, registrations and byte access by address.  Thread-safe."""

    def __init__(self, limit: int, reuse: bool = False) -> None:
        self._limit = limit
        self._reuse = reuse
        self._lock = threading.Lock()
        self._next = HOST_BASE
        self._buffers: dict[int, HostAllocation] = {}
        self._starts: list[int] = []
        self._registered = _Ranges()
        self._holes: list[tuple[int, int]] = []
        """With ``reuse``: freed ranges (start, pages including the guard page), by start."""

    # -- allocation ----------------------------------------------------------
    def allocate(self, size: int, pinned: bool) -> int | None:
        """A new zero-filled buffer's address, or None if ``size`` exceeds the limit."""
        if size > self._limit:
            return None
        try:
            data = np.zeros(size, dtype=np.uint8)
        except MemoryError:  # the host itself is out of memory: as malloc returning NULL
            return None
        pages = -(-size // PAGE) + 1  # one unmapped guard page at least between buffers
        with self._lock:
            address = self._take_hole(pages) if self._reuse else None
            if address is None:
                # Without reuse a freed pointer stays invalid for good.
                address = self._next
                self._next += pages * PAGE
            self._buffers[address] = HostAllocation(address, size, pinned, data)
            bisect.insort(self._starts, address)
        return address

    def _take_hole(self, pages: int) -> int | None:
        """The start of the first freed range of at least ``pages`` pages (what is left of
        it stays free), or None."""
        for i, (start, n) in enumerate(self._holes):
            if n >= pages:
                if n == pages:
                    del self._holes[i]
                else:
                    self._holes[i] = (start + pages * PAGE, n - pages)
                return start
        return None

    def free(self, address: int, pinned: bool) -> bool:
        """Release the buffer that starts at ``address`` and is of this memory (pinned or not);
        False if none."""
        with self._lock:
            buf = self._buffers.get(address)
            if buf is None or buf.pinned != pinned:
                return False
            del self._buffers[address]
            del self._starts[bisect.bisect_left(self._starts, address)]
            if self._reuse:
                bisect.insort(self._holes, (address, -(-buf.size // PAGE) + 1))
            # Registrations are a process-global table that free() does not touch (as in
            # CANN); the stale range simply matches no live buffer any more.
            return True

    # -- lookup ------------------------------------------------------------
    def _buffer_at(self, address: int) -> HostAllocation | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        buf = self._buffers[self._starts[i]]
        # A zero-size buffer still owns its own address.
        if address < buf.end or address == buf.address:
            return buf
        return None

    def view(self, address: int, count: int) -> ByteArray | None:
        """The ``count`` bytes at ``address`` as a writable view, if they lie in one live buffer."""
        with self._lock:
            buf = self._buffer_at(address)
        if buf is None or address + count > buf.end:
            return None
        start = address - buf.address
        return buf.data[start : start + count]

    def is_pinned(self, address: int) -> bool:
        """Does a copy starting at ``address`` take the page-locked path?"""
        with self._lock:
            buf = self._buffer_at(address)
            if buf is not None and buf.pinned and address < buf.end:
                return True
            return self._registered.containing(address) is not None

    # -- registration --------------------------------------------------------
    def register(self, address: int, size: int) -> Registration:
        """Page-lock ``[address, address+size)``: OK, OUTSIDE (not inside one live buffer),
        or OVERLAP (some of it is page-locked already: registered, or aclrtMallocHost memory)."""
        end = address + size
        with self._lock:
            buf = self._buffer_at(address)
            if buf is None or end > buf.end:
                return Registration.OUTSIDE
            if buf.pinned or self._registered.overlaps(address, end):
                return Registration.OVERLAP
            self._registered.add(address, end)
            return Registration.OK

    def unregister(self, address: int) -> bool:
        """Drop the registration that starts exactly at ``address``; False if none."""
        with self._lock:
            return self._registered.remove(address)
