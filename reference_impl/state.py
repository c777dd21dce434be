"""The abstract state the profiles read: symbols, host memory, streams, events, devices.

Handles are the integers the backend returned (stream and event handles,
host addresses); the world maps them to what it knows of them, so that NULL,
a destroyed handle, garbage, an interior pointer or an unregistered address
are recognised for what they are.
"""

from __future__ import annotations

from bisect import bisect_right
from bisect import insort
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from enum import Enum

from .constants import Capabilities
from .memory import Write
from .order import Clock
from .order import Order
from .order import Queue


@dataclass(eq=False)
class Symbol:
    """A fixture device variable: its host shadow address and declared size."""

    name: str
    address: int
    size: int


CHANGES_KEPT = 32
"""How many of a host buffer's latest writes the model keeps (for the diagnosis only)."""
CHANGE_LIMIT = 1 << 16
"""Writes larger than this are not kept (the diagnosis then looks at the contents as now)."""


@dataclass(eq=False)
class BufferState:
    """What the model knows of a host buffer (host memory the suite allocated through the
    adapter): its contents, the writes still reading it, the host's latest changes."""

    address: int
    size: int
    name: str
    pinned: bool
    """True for aclrtMallocHost memory (page-locked by allocation)."""
    contents: bytearray
    alive: bool = True
    version: int = 0
    """How many times the host wrote into it (a source changed after its copy's call)."""
    open_writes: list[tuple[Write, int]] = field(default_factory=list)
    """Pinned writes reading this buffer that are not yet known complete: (write, source offset)."""
    changes: deque[tuple[int, int, bytes]] = field(
        default_factory=lambda: deque(maxlen=CHANGES_KEPT)
    )
    """The host's latest small writes into it: (version after the write, offset, bytes).  A
    copy that read its source late shows bytes the source held some time after the call,
    not only as it is now (see the diagnosis of wrong bytes)."""

    @property
    def end(self) -> int:
        return self.address + self.size


@dataclass(eq=False)
class Stream:
    handle: int
    device: int
    queue: Queue
    name: str
    default: bool = False
    alive: bool = True
    after_rejection: bool = False
    """A call on it was rejected since it was last synchronised (hygiene is at stake)."""
    after_sync_copy: bool = False
    """A synchronous copy on its device returned since it was last known complete (a busy
    stream may then hold a copy that should have been in no stream)."""


@dataclass(eq=False)
class Event:
    handle: int
    device: int
    name: str
    alive: bool = True
    captured: Clock | None = None
    """What the most recent aclrtRecordEvent captured; None if never recorded."""


class StreamArg(Enum):
    """What a stream argument denotes."""

    DEFAULT = "the default stream (NULL)"
    LIVE = "a stream"
    DESTROYED = "a destroyed stream"
    GARBAGE = "a handle that is not a stream"


@dataclass(eq=False)
class Registration:
    """A range registered with aclrtHostRegister and not yet unregistered."""

    address: int
    size: int
    stale: bool = False
    """The memory it was made on has been freed.  Whether a registration outlives the
    free and applies to what is allocated there next (CANN's process-global table does)
    or dies with it, the text does not say: the model accepts either."""

    @property
    def end(self) -> int:
        return self.address + self.size


@dataclass(frozen=True)
class HostRange:
    """What the model knows of a source or destination range of host memory."""

    buffer: BufferState | None
    offset: int
    start_pinned: bool
    all_pinned: bool
    any_pinned: bool
    start_stale: bool = False
    """The start lies in a stale registration only: it may or may not be page-locked."""
    any_stale: bool = False

    @property
    def known(self) -> bool:
        return self.buffer is not None


class World:
    """Everything but device memory: the state the return-code rules look at."""

    def __init__(self, capabilities: Capabilities, order: Order) -> None:
        self.caps = capabilities
        self.order = order
        self.symbols: dict[int, Symbol] = {}
        self.symbols_by_name: dict[str, Symbol] = {}
        self._symbol_starts: list[int] = []
        self._buffer_starts: list[int] = []
        self.buffers: dict[int, BufferState] = {}
        """Every buffer by start address, the most recent one at each address (freed ones
        too: a backend may hand a freed address out again)."""
        self.registered: dict[int, Registration] = {}
        """Registered host ranges by start address (stale ones too)."""
        self.unregistered: list[tuple[int, int]] = []
        """Ranges once registered and then unregistered (for diagnoses only)."""
        self.streams: dict[int, Stream] = {}
        self.dead_streams: dict[int, Stream] = {}
        self.default_streams: dict[int, Stream] = {}
        self.events: dict[int, Event] = {}
        self.dead_events: dict[int, Event] = {}
        self.current: dict[int, int | None] = {}
        """Per host thread, its current device (None before aclrtSetDevice)."""
        self.refcount: dict[int, int] = {}
        self.initialized = False
        self.finalized = False
        self._names: dict[str, int] = {}

    # -- naming -----------------------------------------------------------
    def fresh_name(self, prefix: str) -> str:
        n = self._names.get(prefix, 0)
        self._names[prefix] = n + 1
        return f"{prefix}{n}"

    def name_of(self, ctype: str, value: int) -> str | None:
        """A readable C name for a handle or address, for failure messages."""
        if ctype == "aclrtStream":
            s = self.streams.get(value) or self.dead_streams.get(value)
            if s is None:
                return None
            return s.name if s.alive else f"{s.name} /* destroyed */"
        if ctype == "aclrtEvent":
            e = self.events.get(value) or self.dead_events.get(value)
            if e is None:
                return None
            return e.name if e.alive else f"{e.name} /* destroyed */"
        if ctype.endswith("*"):
            sym = self.symbols.get(value)
            if sym is not None:
                return f"&{sym.name}"
            inner = self.symbol_containing(value)
            if inner is not None:
                return f"(const char*)&{inner.name} + {value - inner.address}"
            rng = self.host_range(value, 0)
            if rng.buffer is not None:
                return rng.buffer.name + (f" + {rng.offset}" if rng.offset else "")
        return None

    # -- symbols ----------------------------------------------------------
    def add_symbol(self, name: str, address: int, size: int) -> Symbol:
        if address in self.symbols or name in self.symbols_by_name:
            raise ValueError(f"symbol {name!r} at 0x{address:x} is already known")
        if address == 0 or size <= 0:
            raise ValueError(f"symbol {name!r} needs a non-NULL address and a positive size")
        sym = Symbol(name, address, size)
        self.symbols[address] = sym
        self.symbols_by_name[name] = sym
        insort(self._symbol_starts, address)
        return sym

    def symbol_containing(self, address: int) -> Symbol | None:
        """The symbol whose shadow [address, address + size) holds ``address``, if it is
        not its start (an interior pointer)."""
        i = bisect_right(self._symbol_starts, address) - 1
        if i < 0:
            return None
        sym = self.symbols[self._symbol_starts[i]]
        if sym.address < address < sym.address + sym.size:
            return sym
        return None

    # -- host memory ------------------------------------------------------
    def add_buffer(
        self, address: int, size: int, pinned: bool, contents: bytes, name: str
    ) -> BufferState:
        if address == 0 or size <= 0:
            raise ValueError("a host buffer needs a non-NULL address and a positive size")
        if len(contents) != size:
            raise ValueError(
                f"host buffer {name}: {len(contents)} bytes of contents for size {size}"
            )
        old = self.buffers.get(address)
        if old is not None and old.alive:
            raise ValueError(f"host buffer at 0x{address:x} is already live ({old.name})")
        overlap = self._live_buffer_overlapping(address, size)
        if overlap is not None:
            raise ValueError(f"host buffer {name} overlaps {overlap.name}")
        buf = BufferState(address, size, name, pinned, bytearray(contents))
        insort(self._buffer_starts, address)
        self.buffers[address] = buf
        return buf

    def release_buffer(self, buf: BufferState) -> None:
        """The buffer was freed: its address may be handed out again, and registrations
        made on it become stale."""
        buf.alive = False
        i = bisect_right(self._buffer_starts, buf.address) - 1
        if i >= 0 and self._buffer_starts[i] == buf.address:
            del self._buffer_starts[i]
        for reg in self.registered.values():
            if buf.address <= reg.address < buf.end:
                reg.stale = True

    def _live_buffer_overlapping(self, address: int, size: int) -> BufferState | None:
        i = bisect_right(self._buffer_starts, address + max(size, 1) - 1) - 1
        if i < 0:
            return None
        buf = self.buffers[self._buffer_starts[i]]
        return buf if buf.end > address else None

    def host_range(self, address: int, count: int) -> HostRange:
        """What [address, address + count) is: inside which live buffer, pinned or not."""
        i = bisect_right(self._buffer_starts, address) - 1
        buf = self.buffers.get(self._buffer_starts[i]) if i >= 0 else None
        if buf is None or not buf.alive or address >= buf.end or address + count > buf.end:
            return HostRange(None, 0, False, False, False)
        if buf.pinned:
            return HostRange(buf, address - buf.address, True, True, True)
        end = address + count
        live = [r for r in self.registered.values() if not r.stale]
        stale = [r for r in self.registered.values() if r.stale]
        start = next((r for r in live if r.address <= address < r.end), None)
        return HostRange(
            buf,
            address - buf.address,
            start_pinned=start is not None,
            all_pinned=start is not None and end <= start.end,
            any_pinned=any(r.address < end and address < r.end for r in live),
            start_stale=start is None and any(r.address <= address < r.end for r in stale),
            any_stale=any(r.address < end and address < r.end for r in stale),
        )

    def was_registered(self, address: int) -> bool:
        """Was ``address`` in a range that has been unregistered (and is not registered now)?"""
        if any(r.address <= address < r.end for r in self.registered.values()):
            return False  # registered again since
        return any(a <= address < a + n for a, n in self.unregistered)

    def once_registered(self, address: int, size: int) -> bool:
        """Does [address, address + size) overlap a range that was registered and then
        unregistered?"""
        return any(a < address + size and address < a + n for a, n in self.unregistered)

    def overlapping_registrations(self, address: int, size: int) -> list[Registration]:
        return [
            r for r in self.registered.values() if r.address < address + size and address < r.end
        ]

    def register(self, address: int, size: int) -> None:
        """A registration succeeded: stale ones it overlaps are gone in the backend."""
        for r in self.overlapping_registrations(address, size):
            del self.registered[r.address]
        self.registered[address] = Registration(address, size)

    # -- streams and events -----------------------------------------------
    def default_stream(self, device: int) -> Stream:
        s = self.default_streams.get(device)
        if s is None:
            s = Stream(
                0,
                device,
                self.order.new_queue(),
                f"NULL /* default stream of device {device} */",
                default=True,
            )
            self.default_streams[device] = s
        return s

    def classify_stream(self, handle: int) -> StreamArg:
        if handle == 0:
            return StreamArg.DEFAULT
        s = self.streams.get(handle)
        if s is not None and s.alive:
            return StreamArg.LIVE
        if handle in self.dead_streams:
            return StreamArg.DESTROYED
        return StreamArg.GARBAGE

    def add_stream(self, handle: int, device: int) -> Stream:
        old = self.streams.pop(handle, None)
        if old is not None and old.alive:
            raise ValueError(f"stream handle 0x{handle:x} returned twice while live")
        self.dead_streams.pop(handle, None)
        s = Stream(handle, device, self.order.new_queue(), self.fresh_name("stream"))
        self.streams[handle] = s
        return s

    def kill_stream(self, s: Stream) -> None:
        s.alive = False
        if not s.default:
            self.streams.pop(s.handle, None)
            self.dead_streams[s.handle] = s

    def add_event(self, handle: int, device: int) -> Event:
        old = self.events.get(handle)
        if old is not None and old.alive:
            raise ValueError(f"event handle 0x{handle:x} returned twice while live")
        self.dead_events.pop(handle, None)
        e = Event(handle, device, self.fresh_name("event"))
        self.events[handle] = e
        return e

    def kill_event(self, e: Event) -> None:
        e.alive = False
        self.events.pop(e.handle, None)
        self.dead_events[e.handle] = e

    def live_event(self, handle: int) -> Event | None:
        e = self.events.get(handle)
        return e if e is not None and e.alive else None

    # -- devices ----------------------------------------------------------
    def current_device(self, thread: int) -> int | None:
        return self.current.get(thread)

    def valid_device(self, device: int) -> bool:
        return 0 <= device < self.caps.devices
