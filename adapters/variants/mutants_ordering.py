"""Mutants that break when a copy happens: pageable and page-locked semantics, stream
order, events, synchronisation, queries, host threads, per-device instances.

Each is the bundled simulator with one realistic bug (see ``mutants``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.constants import StreamStatus

from .mutant_base import MutantBase


class PageableSkipsTheDrain(MutantBase):
    """A pageable copy is made at the call, complete at its return as it must be, but
    without waiting for the earlier tasks of its stream first (the stream is not
    drained): an earlier copy of the stream may land after it."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        _code, strm, _ctx = self._stream(stream)
        if count and src and strm is not None and self._pageable(src):
            return super().memcpy_to_symbol(symbol, src, count, offset, kind)
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class PageableDeferred(MutantBase):
    """A pageable copy is not made at the call but at the next synchronisation of its stream
    or device (reading the source then); it does wait for its stream first."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._deferred: dict[tuple[int, int], list[tuple[int, int, int, int, int]]] = {}
        self._dlock = threading.Lock()

    def _device_now(self) -> int:
        return self.get_device()[1]

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        valid = (
            count
            and size is not None
            and src
            and kind in (H2D, DEFAULT)
            and offset <= SIZE_MAX - count
        )
        if valid and offset + count <= (size or 0) and self._pageable(src):
            code, _ = self.stream_query(stream)
            if code == ACL_SUCCESS:
                super().synchronize_stream(stream)
                with self._dlock:
                    key = (self._device_now(), stream)
                    self._deferred.setdefault(key, []).append((symbol, src, count, offset, kind))
                return ACL_SUCCESS
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)

    def _flush(self, match: Any) -> None:
        with self._dlock:
            keys = [k for k in self._deferred if match(k)]
            todo = [(k[0], c) for k in keys for c in self._deferred.pop(k)]
        here = self._device_now()
        for device, (symbol, src, count, offset, kind) in todo:
            # In the device the copy was issued on, as the call would have made it.
            if device != here:
                super().set_device(device)
            super().memcpy_to_symbol(symbol, src, count, offset, kind)
            if device != here:
                super().set_device(here)

    def synchronize_stream(self, stream: int) -> int:
        here = self._device_now()
        self._flush(lambda k: k[1] == stream and (stream != 0 or k[0] == here))
        return super().synchronize_stream(stream)

    def synchronize_device(self) -> int:
        here = self._device_now()
        self._flush(lambda k: k[0] == here)
        return super().synchronize_device()


class StreamOrderBroken(MutantBase):
    """Two pinned copies in a row on one stream run in the opposite order (a reordering queue)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._held: dict[int, tuple[int, int, int, int, int]] = {}

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        args = (symbol, src, count, offset, kind)
        held = self._held.pop(stream, None)
        if held is None and count and src and not self._pageable(src) and self._valid(args, stream):
            self._held[stream] = args  # wait for the next copy, then run both the wrong way round
            return ACL_SUCCESS
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if held is not None:
            super().memcpy_to_symbol_async(*held, stream)
        return code

    def _valid(self, args: tuple[int, int, int, int, int], stream: int) -> bool:
        symbol, _src, count, offset, kind = args
        size = self._size_of(symbol)
        ok_stream = self.stream_query(stream)[0] == ACL_SUCCESS
        return bool(
            size is not None
            and kind in (H2D, DEFAULT)
            and offset <= SIZE_MAX - count
            and offset + count <= size
            and ok_stream
        )

    def _release(self, stream: int | None) -> None:
        for s in [stream] if stream is not None else list(self._held):
            held = self._held.pop(s, None) if s is not None else None
            if held is not None:
                super().memcpy_to_symbol_async(*held, s)

    def synchronize_stream(self, stream: int) -> int:
        self._release(stream)
        return super().synchronize_stream(stream)

    def synchronize_device(self) -> int:
        self._release(None)
        return super().synchronize_device()

    def stream_query(self, stream: int) -> tuple[int, int]:
        code, status = super().stream_query(stream)
        if stream in self._held:
            status = int(StreamStatus.ACL_STREAM_STATUS_NOT_READY)
        return code, status

    def launch_gate(self, stream: int) -> tuple[int, int]:
        self._release(stream)
        return super().launch_gate(stream)

    def record_event(self, event: int, stream: int) -> int:
        self._release(stream)
        return super().record_event(event, stream)

    def destroy_stream(self, stream: int) -> int:
        self._release(stream)
        return super().destroy_stream(stream)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        self._release(stream)
        return super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)


class EventWaitIgnored(MutantBase):
    """aclrtStreamWaitEvent succeeds and does nothing."""

    def stream_wait_event(self, stream: int, event: int) -> int:
        if event and self._event(event) is not None and self.stream_query(stream)[0] == ACL_SUCCESS:
            return ACL_SUCCESS  # a valid wait: accepted, and never waited for
        return super().stream_wait_event(stream, event)


class SyncReturnsEarly(MutantBase):
    """aclrtSynchronizeStream returns before the stream's tasks have run (a lazy device that
    is never told to run them)."""

    def __init__(self, **kw: Any) -> None:
        kw["schedule"] = "lazy"
        super().__init__(**kw)

    def synchronize_stream(self, stream: int) -> int:
        code, _stream, _ctx = self._stream(stream)  # the handle checks, and no waiting
        return code


class SharedInstance(MutantBase):
    """Every device uses one and the same instance of the variables."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        shared = self.layout.image()
        self.layout.image = lambda: shared  # type: ignore[method-assign]


class RegisteredIsPageable(MutantBase):
    """aclrtHostRegister succeeds but the memory is still treated as pageable."""

    def host_register(self, ptr: int, size: int, flag: int = 0x10000000) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            super().host_unregister(ptr)
        return code

    def host_unregister(self, ptr: int) -> int:
        code = super().host_unregister(ptr)
        return ACL_SUCCESS if code == 507911 and ptr else code


class PinnedBlocks(MutantBase):
    """A page-locked copy waits until it has run before returning."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code == ACL_SUCCESS and count and not self._pageable(src):
            super().synchronize_stream(stream)
        return code


class ThreadsLoseWrites(MutantBase):
    """The call keeps its arguments in one unguarded slot: copies made by two host threads at
    once can swap or drop."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._slot: tuple[int, int, int, int, int, int] | None = None

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        self._slot = (symbol, src, count, offset, kind, stream)
        time.sleep(0.0005)  # the window in which another thread overwrites the slot
        args = self._slot
        return super().memcpy_to_symbol_async(*args)


class QueryAlwaysComplete(MutantBase):
    """aclrtStreamQuery always says COMPLETE."""

    def stream_query(self, stream: int) -> tuple[int, int]:
        code, _status = super().stream_query(stream)
        return code, int(StreamStatus.ACL_STREAM_STATUS_COMPLETE)


class QueryBusyOnceUsed(MutantBase):
    """aclrtStreamQuery says NOT_READY on any stream that has ever been given a task, its
    tasks all run and the stream synchronised included (the query compares the stream's
    count of tasks issued with a count of completions that only the worker's own progress
    report updates, and it never reports the last)."""

    def stream_query(self, stream: int) -> tuple[int, int]:
        code, status = super().stream_query(stream)
        _c, strm, _ctx = self._stream(stream)
        if code == ACL_SUCCESS and strm is not None and strm.issued() > 0:
            return code, int(StreamStatus.ACL_STREAM_STATUS_NOT_READY)
        return code, status
