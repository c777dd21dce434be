"""What a successful call does, as the profiles describe it and the model applies it."""

from __future__ import annotations

from dataclasses import dataclass

from .state import BufferState
from .state import Event
from .state import Stream
from .state import Symbol


@dataclass(frozen=True)
class CopyToSymbol:
    """count bytes from host memory into ``symbol`` on ``device``.

    mode 'pinned': a task on ``stream``, reading its source when it runs;
    'pageable': drains ``stream``, copies, complete at return;
    'sync': complete at return, in no stream (aclrtMemcpyToSymbol).
    ``source`` None: memory the model does not know; the bytes are unspecified.
    """

    symbol: Symbol
    device: int
    offset: int
    count: int
    source: BufferState | None
    source_offset: int
    mode: str
    stream: Stream | None
    either_kind: bool = False
    """The source is partly page-locked, or may be (PINNED-START-POINTER is at stake)."""


@dataclass(frozen=True)
class ReadSymbol:
    """count bytes of ``symbol`` on ``device`` into host memory at ``dest``.

    mode 'sync': read now; 'pageable': drain ``stream``, then read now;
    'pinned': a task on ``stream``, judged once a synchronisation covers it.
    """

    symbol: Symbol
    device: int
    offset: int
    count: int
    dest: BufferState | None
    dest_offset: int
    mode: str
    stream: Stream | None


@dataclass(frozen=True)
class NewStream:
    device: int


@dataclass(frozen=True)
class DestroyStream:
    stream: Stream
    drains: bool
    """True where the call waits for the stream's tasks first (cann)."""


@dataclass(frozen=True)
class SyncStream:
    stream: Stream


@dataclass(frozen=True)
class QueryStream:
    stream: Stream


@dataclass(frozen=True)
class SyncDevice:
    device: int


@dataclass(frozen=True)
class NewEvent:
    device: int


@dataclass(frozen=True)
class RecordEvent:
    event: Event
    stream: Stream


@dataclass(frozen=True)
class WaitEvent:
    stream: Stream
    event: Event


@dataclass(frozen=True)
class SyncEvent:
    event: Event


@dataclass(frozen=True)
class DestroyEvent:
    event: Event


@dataclass(frozen=True)
class NewHostBuffer:
    size: int
    pinned: bool


@dataclass(frozen=True)
class FreeHostBuffer:
    buffer: BufferState


@dataclass(frozen=True)
class RegisterHost:
    address: int
    size: int


@dataclass(frozen=True)
class UnregisterHost:
    address: int


@dataclass(frozen=True)
class WriteHost:
    buffer: BufferState
    offset: int
    data: bytes


@dataclass(frozen=True)
class SetDevice:
    device: int


@dataclass(frozen=True)
class ResetDevice:
    device: int


@dataclass(frozen=True)
class ReportDevice:
    device: int


@dataclass(frozen=True)
class ReportDeviceCount:
    count: int


@dataclass(frozen=True)
class ReportSymbolAddress:
    symbol: Symbol
    device: int


@dataclass(frozen=True)
class ReportSymbolSize:
    symbol: Symbol


@dataclass(frozen=True)
class LaunchGate:
    stream: Stream


@dataclass(frozen=True)
class OpenGate:
    gate: int


@dataclass(frozen=True)
class Init:
    pass


@dataclass(frozen=True)
class Finalize:
    pass


@dataclass(frozen=True)
class Nothing:
    """Success with no effect the model tracks (a version string, a host read)."""
