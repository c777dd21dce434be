"""Host memory a test allocates through the backend (page-locked or pageable)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from acl_conformance.reference_impl.constants import error_name

from .failure import ConformanceFailure
from .failure_evidence import gather

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


@dataclass
class HostBuffer:
    """Host memory allocated through the backend."""

    address: int
    size: int
    pinned: bool
    name: str

    def at(self, offset: int) -> int:
        return self.address + offset


def allocate(h: Harness, pinned: bool, size: int, fill: bytes | None, name_hint: str) -> HostBuffer:
    """A new buffer (aclrtMallocHost or malloc), filled with ``fill`` or a fresh pattern."""
    if pinned:
        r = h.call("malloc_host", size=size)
        why = f"aclrtMallocHost({size}) failed: {error_name(r.acl_error)} ({r.code})"
    else:
        r = h.call("malloc_pageable", size=size)
        why = f"malloc({size}) failed in the backend: {r.code}"
    if not r.ok:
        raise ConformanceFailure.setup(why, gather(h))
    buf = HostBuffer(int(r["host_ptr" if pinned else "ptr"]), size, pinned, name_hint)
    h.buffers.append(buf)
    h.write(buf, 0, fill if fill is not None else pattern(len(h.buffers), size))
    return buf


def pattern(seed: int, size: int) -> bytes:
    """A recognisable, non-repeating fill for fresh host buffers."""
    base = bytes(((seed * 59 + i * 7 + (i >> 8) * 13) & 0xFF) or 1 for i in range(min(size, 4096)))
    reps = -(-size // len(base))
    return (base * reps)[:size]
