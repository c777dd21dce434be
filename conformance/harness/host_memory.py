"""Host memory a test allocates through the backend (pinned or pageable)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HostBuffer:
    """Host memory allocated through the backend."""

    address: int
    size: int
    pinned: bool
    name: str

    def at(self, offset: int) -> int:
        return self.address + offset


def pattern(seed: int, size: int) -> bytes:
    """A recognisable, non-repeating fill for fresh host buffers."""
    base = bytes(((seed * 59 + i * 7 + (i >> 8) * 13) & 0xFF) or 1 for i in range(min(size, 4096)))
    reps = -(-size // len(base))
    return (base * reps)[:size]
