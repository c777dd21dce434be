"""Bugs that live in the corners: numeric boundaries, deep queues, host registration, the
synchronisation calls, the observer, what a rejected call leaves behind.

Each is a small change to the bundled simulator, as a vendor could ship it; most go
through the contract's own methods, a few reach the simulator's parts where the bug
lives (a queue, the host-memory table).
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.constants import StreamStatus

from .mutants import _Helpers

U32 = 1 << 32
I64 = 1 << 63


class CountCutTo32Bits(_Helpers):
    """The To copies keep ``count`` in a 32-bit variable: a count of 2^32 + k copies k bytes."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(symbol, src, count % U32, offset, kind, stream)

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        return super().memcpy_to_symbol(symbol, src, count % U32, offset, kind)


class OffsetComparedSigned(_Helpers):
    """The bound is checked in signed 64-bit arithmetic: an offset of 2^63 or more is
    negative, passes ``offset + count <= size``, and the copy lands before the variable."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if count and size is not None and offset >= I64 and kind in (H2D, DEFAULT) and src:
            before = self._before(symbol)
            if before is None:
                return ACL_SUCCESS
            back = (SIZE_MAX + 1) - offset  # how far before the variable it lands
            bsize = self._size_of(before) or 0
            at = bsize - back
            if at >= 0 and at + count <= bsize:
                return super().memcpy_to_symbol_async(before, src, count, at, kind, stream)
            return ACL_SUCCESS
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)

    def _before(self, symbol: int) -> int | None:
        fixtures = self.fixtures()
        for a, b in itertools.pairwise(fixtures):
            if b.address == symbol:
                return a.address
        return None


class FromIgnoresOffset(_Helpers):
    """aclrtMemcpyFromSymbol reads from the start of the variable whatever the offset."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        size = self._size_of(symbol)
        if size is not None and offset and offset <= SIZE_MAX - count and offset + count <= size:
            offset = 0
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class FromBothIgnoreOffset(_Helpers):
    """aclrtMemcpyFromSymbol and aclrtMemcpyFromSymbolAsync both read from the start of the
    variable whatever the offset (the bounds are still checked with it)."""

    def _from_start(self, symbol: int, count: int, offset: int) -> int:
        """The offset the buggy read uses: 0 for a read that passes the bounds check."""
        size = self._size_of(symbol)
        if size is not None and offset and offset <= SIZE_MAX - count and offset + count <= size:
            return 0
        return offset

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        offset = self._from_start(symbol, count, offset)
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        offset = self._from_start(symbol, count, offset)
        return super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)


class FromAsyncReadsAtTheCall(_Helpers):
    """aclrtMemcpyFromSymbolAsync into page-locked memory reads the variable at the call,
    not in stream order: it misses the copies issued before it that have not run."""

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if self._host.is_pinned(dst) and self.stream_query(stream)[0] == ACL_SUCCESS:
            code = super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)
            if code in (ACL_SUCCESS, ACL_ERROR_INVALID_PARAM):
                return code
        return super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)


class LargeCopyLosesItsTail(_Helpers):
    """A copy of more than 1 MiB goes in 1 MiB pieces, and the last, shorter piece is lost."""

    PIECE = 1 << 20

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if (
            count > self.PIECE
            and count % self.PIECE
            and self._would_copy(symbol, src, count, offset, kind)
        ):
            count -= count % self.PIECE
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class DeviceSyncWaitsForTheDefaultStream(_Helpers):
    """aclrtSynchronizeDevice waits for the default stream only (a lazy device runs the
    other streams' tasks when something else asks for them)."""

    def __init__(self, **kw: Any) -> None:
        kw["schedule"] = "lazy"
        super().__init__(**kw)

    def synchronize_device(self) -> int:
        return super().synchronize_stream(0)


class TimeoutZeroWaitsForever(_Helpers):
    """aclrtSynchronizeStreamWithTimeout takes a timeout of 0 as 'forever' (CANN rejects it
    with 107000)."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        return super().synchronize_stream_with_timeout(stream, -1 if timeout == 0 else timeout)


class EventSyncReturnsEarly(_Helpers):
    """aclrtSynchronizeEvent returns at once (a lazy device never ran what it captured)."""

    def __init__(self, **kw: Any) -> None:
        kw["schedule"] = "lazy"
        super().__init__(**kw)

    def synchronize_event(self, event: int) -> int:
        if event and self._event(event) is not None:
            return ACL_SUCCESS
        return super().synchronize_event(event)


class RegisteredRangeOnePast(_Helpers):
    """The registration table's end is inclusive: a copy that starts on the first byte after
    a registered range takes the page-locked (asynchronous) path."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        inner = self._host.is_pinned

        def is_pinned(address: int) -> bool:
            return inner(address) or (address > 0 and inner(address - 1))

        self._host.is_pinned = is_pinned  # type: ignore[method-assign]


class UnregisterKeepsThePages(_Helpers):
    """aclrtHostUnregister answers success and leaves the memory page-locked."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._sizes: dict[int, int] = {}
        self._kept: dict[int, int] = {}
        inner = self._host.is_pinned

        def is_pinned(address: int) -> bool:
            return inner(address) or any(p <= address < p + n for p, n in list(self._kept.items()))

        self._host.is_pinned = is_pinned  # type: ignore[method-assign]

    def host_register(self, ptr: int, size: int, flag: int = 0x10000000) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            self._sizes[ptr] = size
            self._kept.pop(ptr, None)
        return code

    def host_unregister(self, ptr: int) -> int:
        code = super().host_unregister(ptr)
        if code == ACL_SUCCESS and ptr in self._sizes:
            self._kept[ptr] = self._sizes.pop(ptr)
        return code


class RejectionLeavesAnError(_Helpers):
    """A rejected copy records an error on its stream, which the next synchronisation of
    that stream reports (a failed task would; a rejected call is no task)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._poisoned: set[int] = set()
        self._plock = threading.Lock()

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code != ACL_SUCCESS and self.stream_query(stream)[0] == ACL_SUCCESS:
            with self._plock:
                self._poisoned.add(stream)
        return code

    def synchronize_stream(self, stream: int) -> int:
        code = super().synchronize_stream(stream)
        with self._plock:
            if stream in self._poisoned and code == ACL_SUCCESS:
                self._poisoned.discard(stream)
                return ACL_ERROR_RT_INTERNAL_ERROR
        return code


class RejectionLeavesTheStreamBusy(_Helpers):
    """After a rejected copy the stream reports NOT_READY until it is synchronised (the
    rejected task was counted as pending)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._busy: set[int] = set()

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code != ACL_SUCCESS and super().stream_query(stream)[0] == ACL_SUCCESS:
            self._busy.add(stream)
        return code

    def stream_query(self, stream: int) -> tuple[int, int]:
        code, status = super().stream_query(stream)
        if code == ACL_SUCCESS and stream in self._busy:
            return code, int(StreamStatus.ACL_STREAM_STATUS_NOT_READY)
        return code, status

    def synchronize_stream(self, stream: int) -> int:
        self._busy.discard(stream)
        return super().synchronize_stream(stream)

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        code = super().synchronize_stream_with_timeout(stream, timeout)
        if code == ACL_SUCCESS:
            self._busy.discard(stream)
        return code

    def synchronize_device(self) -> int:
        code = super().synchronize_device()
        if code == ACL_SUCCESS:
            self._busy.clear()
        return code


class DeepQueueDropsTasks(_Helpers):
    """A stream holds 32 pending tasks; a page-locked copy issued when it is full is
    accepted and dropped."""

    DEPTH = 32

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        _code, strm, _ctx = self._stream(stream)
        if strm is not None and not self._pageable(src) and count and src:
            pending = strm.pending()
            size = self._size_of(symbol)
            valid = (
                size is not None
                and kind in (H2D, DEFAULT)
                and offset <= SIZE_MAX - count
                and offset + count <= size
            )
            if valid and pending >= self.DEPTH:
                return ACL_SUCCESS
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class SymbolSizeIn16Bits(_Helpers):
    """aclrtGetSymbolSize reports the size in 16 bits: right for small variables, wrong
    from 64 KiB on."""

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        code, size = super().get_symbol_size(symbol, null_size)
        return code, size & 0xFFFF if code == ACL_SUCCESS else size


class DstMaxCutTo32Bits(_Helpers):
    """The From copies keep dstMax in 32 bits: a dstMax of 2^32 + count - 1 (plenty) is taken
    as count - 1 and the read is rejected."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return super().memcpy_from_symbol(dst, dst_max % U32, symbol, count, offset, kind)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_from_symbol_async(
            dst, dst_max % U32, symbol, count, offset, kind, stream
        )


class FromAcceptsInteriorPointers(_Helpers):
    """The From copies take a pointer into a variable as that variable, at that offset."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        inner = self._containing(symbol)
        if inner is not None:
            symbol, k = inner
            offset = min(offset + k, SIZE_MAX)
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class SyncCopyFromPinnedIsAsync(_Helpers):
    """aclrtMemcpyToSymbol from page-locked memory is queued on the default stream and
    returns before it ran."""

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        if src and not self._pageable(src):
            return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, 0)
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)
