"""Realistic backend bugs, each a small change to the bundled simulator.

Every class overrides as little as it can, mostly through the contract's own
methods, so that the bug is the only difference.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_SYMBOL_NOT_FOUND,
    ACL_SUCCESS,
    SIZE_MAX,
    StreamStatus,
)

H2D, D2H, DEFAULT = 1, 2, 4


class _Helpers(Simulator):
    """Lookups the mutants share (through the contract, so they match the simulator)."""

    def _size_of(self, symbol: int) -> int | None:
        code, size = super().get_symbol_size(symbol)
        return size if code == ACL_SUCCESS else None

    def _neighbour(self, symbol: int) -> int | None:
        """The variable laid out right after ``symbol`` in device memory."""
        fixtures = self.fixtures()
        for a, b in itertools.pairwise(fixtures):
            if a.address == symbol:
                return b.address
        return None

    def _containing(self, symbol: int) -> tuple[int, int] | None:
        """(variable address, k) for an interior pointer ``symbol`` = variable + k."""
        for f in self.fixtures():
            if f.address < symbol < f.address + f.size:
                return f.address, symbol - f.address
        return None

    def _pageable(self, src: int) -> bool:
        return not self._host.is_pinned(src)


class BoundLessThan(_Helpers):
    """The bound is checked with ``<`` where ``<=`` is meant: copying up to the last byte fails."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if count and size is not None and kind in (H2D, DEFAULT) and src and offset + count == size:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class BoundOnePast(_Helpers):
    """The bound is off by one the other way: one byte past the end is accepted, and written
    into the next variable."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        nxt = self._neighbour(symbol)
        if count and size is not None and nxt is not None and src and offset + count == size + 1:
            code = super().memcpy_to_symbol_async(symbol, src, count - 1, offset, kind, stream)
            if code == ACL_SUCCESS:
                super().memcpy_to_symbol_async(nxt, src + count - 1, 1, 0, kind, stream)
            return code
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class OverflowWraps(_Helpers):
    """``offset + count`` is computed in size_t and wraps: a huge offset passes the check."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if (
            count
            and size is not None
            and offset + count > SIZE_MAX
            and (offset + count) % (SIZE_MAX + 1) <= size
        ):
            return ACL_SUCCESS  # the wrapped end is "in bounds"; what it writes is anyone's guess
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class DeviceToHostAccepted(_Helpers):
    """ACL_MEMCPY_DEVICE_TO_HOST is accepted on the To copies and treated as host to device."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(
            symbol, src, count, offset, H2D if kind == D2H else kind, stream
        )


class OutOfEnumAccepted(_Helpers):
    """A kind outside the enum is taken as ACL_MEMCPY_DEFAULT."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(
            symbol, src, count, offset, DEFAULT if not 0 <= kind <= 7 else kind, stream
        )


class OffsetIgnored(_Helpers):
    """The offset is dropped: every copy lands at the start of the variable."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if size is not None and offset <= SIZE_MAX - count and offset + count <= size:
            offset = 0
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class OneByteTooMany(_Helpers):
    """One byte more than ``count`` is written (into the variable, or its neighbour)."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code != ACL_SUCCESS or not count or size is None:
            return code
        if offset + count < size:
            super().memcpy_to_symbol_async(symbol, src + count - 1, 1, offset + count, kind, stream)
        else:
            nxt = self._neighbour(symbol)
            if nxt is not None:
                super().memcpy_to_symbol_async(nxt, src + count - 1, 1, 0, kind, stream)
        return code


class SourceOffByOne(_Helpers):
    """The source is read one byte too far on."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(
            symbol, src + 1 if src else src, count, offset, kind, stream
        )
        if code != ACL_SUCCESS and src:
            return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return code


class PageableDeferred(_Helpers):
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


class StreamOrderBroken(_Helpers):
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


class EventWaitIgnored(_Helpers):
    """aclrtStreamWaitEvent succeeds and does nothing."""

    def stream_wait_event(self, stream: int, event: int) -> int:
        if event and self._event(event) is not None and self.stream_query(stream)[0] == ACL_SUCCESS:
            return ACL_SUCCESS  # a valid wait: accepted, and never waited for
        return super().stream_wait_event(stream, event)


class SyncReturnsEarly(_Helpers):
    """aclrtSynchronizeStream returns before the stream's tasks have run (a lazy device that
    is never told to run them)."""

    def __init__(self, **kw: Any) -> None:
        kw["schedule"] = "lazy"
        super().__init__(**kw)

    def synchronize_stream(self, stream: int) -> int:
        code, _stream, _ctx = self._stream(stream)  # the handle checks, and no waiting
        return code


class SharedInstance(_Helpers):
    """Every device uses one and the same instance of the variables."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        shared = self.layout.image()
        self.layout.image = lambda: shared  # type: ignore[method-assign]


class InteriorPointerAccepted(_Helpers):
    """A pointer into a variable is taken as that variable, at that offset."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        inner = self._containing(symbol)
        if inner is not None:
            symbol, k = inner
            offset = min(offset + k, SIZE_MAX)
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class NullStreamRejected(_Helpers):
    """stream == NULL is rejected instead of meaning the default stream."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if stream == 0 and count:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class CountZeroRejected(_Helpers):
    """count == 0 is rejected (as HIP on NVIDIA does); CANN accepts it."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count == 0:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class RejectedStillEnqueues(_Helpers):
    """A copy rejected for running past the end still enqueues the part that fits."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        size = self._size_of(symbol)
        clipped = size is not None and count and offset < size < offset + count
        if code == ACL_ERROR_INVALID_PARAM and clipped and src and kind in (H2D, DEFAULT):
            assert size is not None
            super().memcpy_to_symbol_async(symbol, src, size - offset, offset, kind, stream)
        return code


class OverflowIsInvalidParam(_Helpers):
    """An overflowing ``offset + count`` gives 100000, where CANN gives 500001."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return ACL_ERROR_INVALID_PARAM if code == 500001 else code


class DestroyedStreamAccepted(_Helpers):
    """A destroyed stream is accepted: the call succeeds and the copy is lost."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._destroyed: set[int] = set()

    def destroy_stream(self, stream: int) -> int:
        code = super().destroy_stream(stream)
        if code == ACL_SUCCESS:
            self._destroyed.add(stream)
        return code

    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        code, handle = super().create_stream(null_stream)
        self._destroyed.discard(handle)
        return code, handle

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count and stream in self._destroyed:
            return ACL_SUCCESS
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class RegisteredIsPageable(_Helpers):
    """aclrtHostRegister succeeds but the memory is still treated as pageable."""

    def host_register(self, ptr: int, size: int, flag: int = 0x10000000) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            super().host_unregister(ptr)
        return code

    def host_unregister(self, ptr: int) -> int:
        code = super().host_unregister(ptr)
        return ACL_SUCCESS if code == 507911 and ptr else code


class PinnedBlocks(_Helpers):
    """A page-locked copy waits until it has run before returning."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code == ACL_SUCCESS and count and not self._pageable(src):
            super().synchronize_stream(stream)
        return code


class ThreadsLoseWrites(_Helpers):
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


class ForeignStreamAccepted(_Helpers):
    """A page-locked copy on another device's stream is accepted (CANN returns 107003)."""

    def _submit_check(self, stream: Any, ctx: Any) -> int:  # type: ignore[override]
        return 0 if ctx is not None else Simulator._submit_check(stream, ctx)


class QueryAlwaysComplete(_Helpers):
    """aclrtStreamQuery always says COMPLETE."""

    def stream_query(self, stream: int) -> tuple[int, int]:
        code, _status = super().stream_query(stream)
        return code, int(StreamStatus.ACL_STREAM_STATUS_COMPLETE)


class DstMaxIgnored(_Helpers):
    """aclrtMemcpyFromSymbol ignores dstMax."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return super().memcpy_from_symbol(dst, max(dst_max, count), symbol, count, offset, kind)


class SymbolNotFoundCode(_Helpers):
    """A non-symbol gives 107042 (SYMBOL_NOT_FOUND, as the header suggests); CANN gives 107043."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return ACL_ERROR_RT_SYMBOL_NOT_FOUND if code == 107043 else code


class SizeRoundedUp(_Helpers):
    """aclrtGetSymbolSize reports the size rounded up to 8 bytes."""

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        code, size = super().get_symbol_size(symbol, null_size)
        return code, (size + 7) // 8 * 8 if code == ACL_SUCCESS else size


class GenericErrorCodes(_Helpers):
    """Every rejection of the symbol copies is ACL_ERROR_RT_PARAM_INVALID: legal under spec,
    not CANN's codes."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return 107000 if code != ACL_SUCCESS else code
