"""The simulator's symbol calls: aclrtGetSymbolAddress/Size and the four symbol copies,
aclrtMemcpyToSymbolAsync among them.

The order of checks and the codes are those of cann-runtime-facts.md
(sections 2, 4, 5 and 7).  Where the facts leave a behaviour open, the choice
made here is marked ``Choice:`` in the method's docstring.
"""

from __future__ import annotations

import numpy as np

from acl_conformance.reference_impl.constants import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_INVALID_SYMBOL,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_SUCCESS,
    FROM_SYMBOL_KINDS,
    TO_SYMBOL_KINDS,
)

from . import cabi
from .core import SimulatorCore
from .layout import ByteArray
from .streams import Task


def _copy_task(dst: ByteArray, src: ByteArray) -> Task:
    def run() -> None:
        np.copyto(dst, src)

    return run


class SymbolCalls(SimulatorCore):
    """aclrtGetSymbolAddress, aclrtGetSymbolSize and the symbol copies."""

    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        """aclrtGetSymbolAddress: NULL symbol, then NULL output, 100000; then 107002 without
        a current device, 107043 unless ``symbol`` is exactly a variable's shadow address."""
        self._check_open()
        sym = cabi.pointer(symbol)
        if sym == 0 or null_dev_ptr:
            return ACL_ERROR_INVALID_PARAM, 0
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        var = self._symbols.lookup(sym)
        if var is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, 0
        return ACL_SUCCESS, self.layout.device_address(ctx.device, var)

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        """aclrtGetSymbolSize: the same checks as aclrtGetSymbolAddress."""
        self._check_open()
        sym = cabi.pointer(symbol)
        if sym == 0 or null_size:
            return ACL_ERROR_INVALID_PARAM, 0
        if self._devices.current() is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        var = self._symbols.lookup(sym)
        if var is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, 0
        return ACL_SUCCESS, var.size

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        """aclrtMemcpyToSymbolAsync.

        Order: ``count == 0`` is 0 before anything else; NULL symbol, NULL src, kind not
        H2D/DEFAULT: 100000; no current device 107002; not a symbol 107043; overflow
        500001; past the end 100000; the stream (NULL = default): not a live stream 107017.
        Then, by the start pointer of ``src``: *pinned* (aclrtMallocHost or registered):
        another context's stream 107003, else a task that reads the source when it runs
        (or at the call, with ``pinned_read="call"``); *pageable*: drain the stream (any
        device's), copy, return.  Choice: a source range that does not lie in one live
        host buffer is 107000, nothing written or enqueued (for pageable: after the drain).
        """
        self._check_open()
        sym, src_ptr = cabi.pointer(symbol), cabi.pointer(src)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        if sym == 0 or src_ptr == 0 or k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        code, _, dst = self._symbol_range(sym, off, n)
        if dst is None:
            return code
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        if self._host.is_pinned(src_ptr):
            code = self._submit_check(strm, ctx)
            if code:
                return code
            source = self._host.view(src_ptr, n)
            if source is None:
                return ACL_ERROR_RT_PARAM_INVALID
            if self._snapshot_source:
                source = source.copy()
            if strm.enqueue(_copy_task(dst, source)) is None:
                return ACL_ERROR_RT_INVALID_HANDLE
            return ACL_SUCCESS
        code = self._pageable_drain(strm)
        if code:
            return code
        source = self._host.view(src_ptr, n)
        if source is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(dst, source)
        return ACL_SUCCESS

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        """aclrtMemcpyToSymbol: the same checks (no stream); the copy is done at the call,
        outside every stream.  Choice: a source not in one live host buffer is 107000."""
        self._check_open()
        sym, src_ptr = cabi.pointer(symbol), cabi.pointer(src)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        if sym == 0 or src_ptr == 0 or k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        code, _, dst = self._symbol_range(sym, off, n)
        if dst is None:
            return code
        source = self._host.view(src_ptr, n)
        if source is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(dst, source)
        return ACL_SUCCESS

    @staticmethod
    def _from_checks(dst: int, dst_max: int, symbol: int, count: int, kind: int) -> int:
        # CheckMemcpyFromSymbol (MEM:2299-2325), in order.
        if symbol == 0 or dst == 0 or count > dst_max or kind not in FROM_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        return ACL_SUCCESS

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        """aclrtMemcpyFromSymbol: ``count == 0`` 0; NULL symbol, NULL dst, count > dstMax,
        kind not D2H/DEFAULT: 100000; then lookup, overflow and bounds as for To*.  Reads
        the device at the call.  Choice: a destination not in one live host buffer is
        107000."""
        self._check_open()
        dst_ptr, sym = cabi.pointer(dst), cabi.pointer(symbol)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        code = self._from_checks(dst_ptr, cabi.size_t(dst_max), sym, n, k)
        if code:
            return code
        code, _, source = self._symbol_range(sym, off, n)
        if source is None:
            return code
        target = self._host.view(dst_ptr, n)
        if target is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(target, source)
        return ACL_SUCCESS

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        """aclrtMemcpyFromSymbolAsync: the checks of aclrtMemcpyFromSymbol, then the stream
        (107017).  Pinned destination: 107003 for another context's stream, else a task
        that reads the device and writes ``dst`` when it runs (``pinned_read`` does not
        apply: the device must be read in stream order).  Pageable: drain, copy, return."""
        self._check_open()
        dst_ptr, sym = cabi.pointer(dst), cabi.pointer(symbol)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        code = self._from_checks(dst_ptr, cabi.size_t(dst_max), sym, n, k)
        if code:
            return code
        code, _, source = self._symbol_range(sym, off, n)
        if source is None:
            return code
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        if self._host.is_pinned(dst_ptr):
            code = self._submit_check(strm, ctx)
            if code:
                return code
            target = self._host.view(dst_ptr, n)
            if target is None:
                return ACL_ERROR_RT_PARAM_INVALID
            if strm.enqueue(_copy_task(target, source)) is None:
                return ACL_ERROR_RT_INVALID_HANDLE
            return ACL_SUCCESS
        code = self._pageable_drain(strm)
        if code:
            return code
        target = self._host.view(dst_ptr, n)
        if target is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(target, source)
        return ACL_SUCCESS
