"""Devices and contexts: reference counts, per-device memory, each host thread's current device.

``set_device`` takes a reference on a device; the first reference creates the
device's *context*: its memory (a fresh copy of the initial image, i.e. the
fixture variables at their initial pattern) and its default stream, both
shared by every host thread that sets the device (as CANN's default context
and default stream are).  ``reset_device`` drops a reference; dropping the
last one ends the context: its streams and events die, and the device's
memory is discarded, so the next context starts again from the initial
pattern.

The current device is per host thread (CANN contexts are thread-local).  A
thread's current device is remembered with the context's generation: once
that context has ended, the thread has no current device (107002) until it
sets one again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from collections.abc import Sequence

from .events import Event
from .layout import ByteArray
from .layout import Layout
from .streams import Stream


class Context:
    """One device's live context: its memory, default stream and the objects created in it."""

    def __init__(self, device: int, generation: int, memory: ByteArray, default: Stream) -> None:
        self.device = device
        self.generation = generation
        self.memory = memory
        self.default_stream = default
        self.streams: dict[int, Stream] = {}
        """Streams created by aclrtCreateStream in this context (handle -> stream)."""
        self.events: dict[int, Event] = {}


class _Device:
    def __init__(self, index: int) -> None:
        self.index = index
        self.refcount = 0
        self.generation = 0
        self.context: Context | None = None


class Devices:
    """The device table.  Thread-safe."""

    def __init__(
        self,
        count: int,
        layout: Layout,
        make_default_stream: Callable[[int, int], Stream],
        physical: Sequence[int] = (),
        touch_log: str = "",
    ) -> None:
        self._lock = threading.Lock()
        self._devices = [_Device(i) for i in range(count)]
        self._physical = tuple(physical) or tuple(range(count))
        """The physical device behind each device shown (a device group shows some)."""
        self._touch_log = touch_log
        self._touched: set[int] = set()
        self._layout = layout
        self._make_default_stream = make_default_stream
        self._tls = threading.local()

    @property
    def count(self) -> int:
        return len(self._devices)

    def valid(self, device: int) -> bool:
        return 0 <= device < len(self._devices)

    def set_device(self, device: int) -> None:
        """Take a reference on ``device`` (creating its context) and make it this thread's."""
        with self._lock:
            dev = self._devices[device]
            if dev.context is None:
                self._touch(self._physical[device])
                stream = self._make_default_stream(device, dev.generation)
                dev.context = Context(device, dev.generation, self._layout.image(), stream)
            dev.refcount += 1
            self._tls.current = dev.context

    def _touch(self, physical: int) -> None:
        """Note, once per instance, that ``physical`` was brought up (``touch_log``)."""
        if not self._touch_log or physical in self._touched:
            return
        self._touched.add(physical)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(self._touch_log, "a", encoding="utf-8") as f:
            f.write(f"{worker} {physical}\n")

    def current(self) -> Context | None:
        """This thread's current context, or None (never set, or that context has ended)."""
        ctx: Context | None = getattr(self._tls, "current", None)
        if ctx is None:
            return None
        with self._lock:
            if self._devices[ctx.device].context is not ctx:
                return None
        return ctx

    def release(self, device: int) -> Context | None:
        """Drop one reference on ``device``; the context that ended with it, if it was the last.

        The caller must then wait for, and stop, the ended context's streams.
        """
        with self._lock:
            dev = self._devices[device]
            if dev.refcount == 0:
                return None
            dev.refcount -= 1
            if dev.refcount > 0:
                return None
            ended = dev.context
            dev.context = None
            dev.generation += 1
        if getattr(self._tls, "current", None) is ended:
            self._tls.current = None
        return ended

    def references(self, device: int) -> int:
        """How many references ``device``'s context holds (aclrtSetDevice calls not yet
        matched by an aclrtResetDevice)."""
        with self._lock:
            return self._devices[device].refcount

    def context_of(self, device: int) -> Context | None:
        """``device``'s live context, whichever thread made it, or None."""
        with self._lock:
            return self._devices[device].context

    def contexts(self) -> list[Context]:
        """Every live context."""
        with self._lock:
            return [d.context for d in self._devices if d.context is not None]
