"""Bugs in the life cycles past their first step (issue 23): events recorded again, a
stream destroyed after a record, the current device switched back and forth, and two
host threads on two devices.

Each is a small subclass of the simulator, a bug a real runtime could have.
"""

from __future__ import annotations

import threading
import types
from typing import Any

from acl_conformance.adapters.simulator.devices import Context
from acl_conformance.adapters.simulator.devices import Devices
from acl_conformance.adapters.simulator.events import Event
from acl_conformance.adapters.simulator.events import Record
from acl_conformance.adapters.simulator.streams import Stream
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .mutant_base import MutantBase


# -- the current device and the NULL stream -----------------------------------------
class _ProcessWideDevices(Devices):
    """The device table with one current device for the whole process."""

    def make_process_wide(self) -> None:
        # Every thread reads and writes the same "current" slot.
        self._tls = types.SimpleNamespace()  # type: ignore[assignment]


class CurrentDeviceProcessGlobal(MutantBase):
    """The current device is one for the whole process, not one per host thread:
    aclrtSetDevice in one thread changes the device every other thread's calls go to."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        devices = self._devices
        devices.__class__ = _ProcessWideDevices
        assert isinstance(devices, _ProcessWideDevices)
        devices.make_process_wide()


class NullStreamStaleAfterSwitch(MutantBase):
    """NULL keeps meaning the default stream of the device that was current the first
    time NULL was used (the runtime caches it per thread and does not drop the cache when
    aclrtSetDevice switches device): after a switch, NULL names the other device's default
    stream, so a task on NULL is refused as on another context's stream (107003) and a
    synchronisation of NULL waits for the other device's default stream."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._cached_null = threading.local()

    def _stream(self, stream: int) -> tuple[int, Stream | None, Context | None]:
        code, strm, ctx = super()._stream(stream)
        if stream != 0 or strm is None or ctx is None:
            return code, strm, ctx
        cached: Context | None = getattr(self._cached_null, "ctx", None)
        if cached is None or self._devices.context_of(cached.device) is not cached:
            self._cached_null.ctx = ctx  # none yet, or that context ended: cache anew
            return code, strm, ctx
        return code, cached.default_stream, ctx


# -- events recorded again ------------------------------------------------------------
class _WaitBinding(MutantBase):
    """aclrtStreamWaitEvent as the simulator does it, with the record the wait follows
    chosen by ``_bind``."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._firsts: dict[int, Record] = {}

    def _bind(self, evt: Event, strm: Stream) -> Record | None:
        return evt.latest()

    def record_event(self, event: int, stream: int) -> int:
        code = super().record_event(event, stream)
        evt = self._event(event) if event else None
        latest = evt.latest() if evt is not None else None
        if code == ACL_SUCCESS and latest is not None:
            self._firsts.setdefault(cast_handle(event), latest)
        return code

    def stream_wait_event(self, stream: int, event: int) -> int:
        self._check_open()
        if event == 0:
            return ACL_ERROR_INVALID_PARAM
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        code, evt = self._event_arg(event)
        if evt is None:
            return code
        code = self.submit_check(strm, ctx)
        if code:
            return code
        cell = self._bind(evt, strm)
        if cell is None:
            return ACL_SUCCESS
        return self._enqueue_wait(strm, evt, cell)

    def _enqueue_wait(self, strm: Stream, evt: Event, record: Record) -> int:
        source, seq = record.stream, record.seq

        def wait() -> None:
            source.wait_for(seq)

        return ACL_SUCCESS if strm.enqueue(wait) is not None else ACL_ERROR_RT_INVALID_HANDLE


def cast_handle(event: int) -> int:
    """An event argument as the key the mutants keep it under."""
    return int(event)


class WaitBindsFirstRecord(_WaitBinding):
    """aclrtStreamWaitEvent follows the event's first record: an event recorded again
    keeps ordering later waits after its first record only (the runtime caches the record's
    task id in the event and refreshes it only on the first record)."""

    def _bind(self, evt: Event, strm: Stream) -> Record | None:
        return self._firsts.get(evt.handle, evt.latest())


class PendingWaitRetargeted(_WaitBinding):
    """A wait that has not started yet (its stream is held by earlier work) reads the
    event's record when it starts, not when aclrtStreamWaitEvent was called: recording the
    event again meanwhile moves the pending wait to the new record."""

    def _enqueue_wait(self, strm: Stream, evt: Event, record: Record) -> int:
        def wait() -> None:
            now = evt.latest() or record
            # A record issued later on the waiting stream itself would wait for itself.
            target = record if now.stream is strm else now
            target.stream.wait_for(target.seq)

        return ACL_SUCCESS if strm.enqueue(wait) is not None else ACL_ERROR_RT_INVALID_HANDLE


# -- a record on a stream that is then destroyed ---------------------------------------
class DestroyCompletesItsEvents(MutantBase):
    """aclrtDestroyStream returns at once (its tasks run after it) and marks the events
    last recorded on the stream complete: aclrtSynchronizeEvent on them returns before the
    work they captured ran, and a later aclrtStreamWaitEvent orders nothing."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._marked: set[int] = set()

    def destroy_stream(self, stream: int) -> int:
        self._check_open()
        _code, strm, ctx = self._stream(stream)
        if not stream or strm is None or ctx is None:
            return super().destroy_stream(stream)
        with self._lock:
            mine = ctx.streams.get(strm.handle) is strm and self._objects.get(strm.handle) is strm
            if mine:
                del self._objects[strm.handle]
                del ctx.streams[strm.handle]
                for handle, evt in ctx.events.items():
                    latest = evt.latest()
                    if latest is not None and latest.stream is strm:
                        self._marked.add(handle)
        if not mine:
            return super().destroy_stream(stream)
        threading.Thread(
            target=self._retire, args=([strm],), name="acl-sim-late-destroy", daemon=True
        ).start()
        return ACL_SUCCESS

    def record_event(self, event: int, stream: int) -> int:
        code = super().record_event(event, stream)
        if code == ACL_SUCCESS:
            self._marked.discard(cast_handle(event))
        return code

    def synchronize_event(self, event: int) -> int:
        if event and cast_handle(event) in self._marked and self._event(event) is not None:
            return ACL_SUCCESS
        return super().synchronize_event(event)

    def stream_wait_event(self, stream: int, event: int) -> int:
        if event and cast_handle(event) in self._marked and self._event(event) is not None:
            code, strm, ctx = self._stream(stream)
            if strm is None:
                return code
            return self.submit_check(strm, ctx)
        return super().stream_wait_event(stream, event)
