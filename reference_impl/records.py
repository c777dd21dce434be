"""What the model remembers of past calls, beyond the memory model itself.

The bookkeeping of each copy into a variable (``WriteMeta``), the asynchronous
reads still to judge (``PendingRead``), the last copies rejected per variable
(``Rejected``), and two small helpers the failure messages use.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .memory import Bytes
from .memory import Candidate
from .memory import VarMemory
from .memory import Write
from .order import Clock
from .order import Gate
from .state import HostBuffer
from .state import Symbol

_SHOW = 32
"""Bytes shown of a value in a failure message."""


def hex_bytes(data: bytes | Bytes | None) -> str:
    """The first bytes of a value in hex, for a failure message."""
    if data is None:
        return "<any value>"
    raw = bytes(data)
    more = f"... ({len(raw)} bytes)" if len(raw) > _SHOW else ""
    return (raw[:_SHOW].hex(" ") or "<empty>") + more


Cause = tuple[str, str]
"""Why tasks became known complete: (the requirement that promised it, the call)."""


@dataclass(eq=False)
class WriteMeta:
    """What the model knows of one copy into a variable, besides its bytes."""

    var: VarMemory
    device: int
    symbol: Symbol
    source: HostBuffer | None
    source_offset: int
    issued_done: Clock
    source_version: int = 0
    done_by: Cause | None = None
    """The call whose return made the write known complete, and what it promised."""


@dataclass(eq=False)
class PendingRead:
    """An aclrtMemcpyFromSymbolAsync into page-locked memory, judged once complete."""

    rid: int
    label: str
    task: Any
    device: int
    symbol: Symbol
    offset: int
    count: int
    dest: HostBuffer
    dest_offset: int
    snapshot: list[tuple[int, int, tuple[Candidate, ...]]]
    extra: list[Write] = field(default_factory=list)
    ready: bool = False
    checked: bool = False
    gates_at_completion: list[Gate] = field(default_factory=list)
    ready_by: tuple[str, str] | None = None
    """The promise (requirement, call) that made the read known complete."""

    @property
    def address(self) -> int:
        """Where in host memory the read lands."""
        return self.dest.address + self.dest_offset


@dataclass
class Rejected:
    """A copy to a variable the backend rejected: what it would have written."""

    label: str
    source: bytes | None
    offset: int


def some(*requirements: str | None) -> tuple[str, ...]:
    """The requirements given, each once, in order, without None."""
    return tuple(dict.fromkeys(r for r in requirements if r))
