"""The simulator's symbol calls: aclrtGetSymbolAddress/Size and the four symbol copies,
aclrtMemcpyToSymbolAsync among them.

Checks, codes and ``Choice:`` marks: as the package docstring says for every calls_ module.
"""

from __future__ import annotations

import numpy as np

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_SYMBOL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import FROM_SYMBOL_KINDS
from acl_conformance.reference_impl.constants import TO_SYMBOL_KINDS

from . import cabi
from .core import SimulatorCore
from .layout import ByteArray
from .streams import Stream
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
        device's), copy, return; with ``pageable_staged``: copy the source now, issue a task
        that copies that copy, return once the stream has run it.  Choice: a source range
        that does not lie in one live host buffer is 107000, nothing written or enqueued
        (for pageable: after the drain).
        """
        self._check_open()
        src_ptr, n = cabi.pointer(src), cabi.size_t(count)
        code, dst = self._to_symbol_checks(symbol, src_ptr, n, offset, kind)
        if dst is None:
            return code
        return self._copy_on_stream(stream, src_ptr, n, dst, to_device=True)

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        """aclrtMemcpyToSymbol: the same checks (no stream); the copy is done at the call,
        outside every stream.  Choice: a source not in one live host buffer is 107000."""
        self._check_open()
        src_ptr, n = cabi.pointer(src), cabi.size_t(count)
        code, dst = self._to_symbol_checks(symbol, src_ptr, n, offset, kind)
        if dst is None:
            return code
        return self._copy_now(src_ptr, n, dst, to_device=True)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        """aclrtMemcpyFromSymbol: ``count == 0`` 0; NULL symbol, NULL dst, count > dstMax,
        kind not D2H/DEFAULT: 100000; then lookup, overflow and bounds as for To*.  Reads
        the device at the call.  Choice: a destination not in one live host buffer is
        107000."""
        self._check_open()
        dst_ptr, n = cabi.pointer(dst), cabi.size_t(count)
        code, source = self._from_symbol_checks(dst_ptr, dst_max, symbol, n, offset, kind)
        if source is None:
            return code
        return self._copy_now(dst_ptr, n, source, to_device=False)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        """aclrtMemcpyFromSymbolAsync: the checks of aclrtMemcpyFromSymbol, then the stream
        (107017).  Pinned destination: 107003 for another context's stream, else a task
        that reads the device and writes ``dst`` when it runs (``pinned_read`` does not
        apply: the device must be read in stream order).  Pageable: drain, copy, return."""
        self._check_open()
        dst_ptr, n = cabi.pointer(dst), cabi.size_t(count)
        code, source = self._from_symbol_checks(dst_ptr, dst_max, symbol, n, offset, kind)
        if source is None:
            return code
        return self._copy_on_stream(stream, dst_ptr, n, source, to_device=False)

    def _to_symbol_checks(
        self, symbol: int, src_ptr: int, n: int, offset: int, kind: int
    ) -> tuple[int, ByteArray | None]:
        """The checks of the two To-symbol copies, in order: ``n == 0`` is 0 before
        anything else; NULL symbol, NULL src, kind not H2D/DEFAULT: 100000; then
        ``_symbol_range``.  The code, and the symbol's bytes to write (None: return the
        code, nothing to copy)."""
        sym, off, k = cabi.pointer(symbol), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS, None
        if sym == 0 or src_ptr == 0 or k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM, None
        code, _, dst = self._symbol_range(sym, off, n)
        return code, dst

    def _from_symbol_checks(
        self, dst_ptr: int, dst_max: int, symbol: int, n: int, offset: int, kind: int
    ) -> tuple[int, ByteArray | None]:
        """The same for the two From-symbol copies (CheckMemcpyFromSymbol, MEM:2299-2325,
        then ``_symbol_range``): the code, and the symbol's bytes to read."""
        sym, off, k = cabi.pointer(symbol), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS, None
        if sym == 0 or dst_ptr == 0 or n > cabi.size_t(dst_max) or k not in FROM_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM, None
        code, _, source = self._symbol_range(sym, off, n)
        return code, source

    def _copy_now(self, host_ptr: int, n: int, device: ByteArray, to_device: bool) -> int:
        """Copy ``n`` bytes between the host buffer at ``host_ptr`` and ``device`` at the
        call; 107000 (nothing copied) unless the host range lies in one live buffer."""
        host = self._host.view(host_ptr, n)
        if host is None:
            return ACL_ERROR_RT_PARAM_INVALID
        if to_device:
            np.copyto(device, host)
        else:
            np.copyto(host, device)
        return ACL_SUCCESS

    def _copy_staged(self, strm: Stream, host_ptr: int, n: int, device: ByteArray) -> int:
        """``pageable_staged``: the source as at the call into a staging copy, a task on
        ``strm`` that copies it to ``device``, then the drain (which waits for that task).
        107000 (after the drain, nothing enqueued) unless the source lies in one live
        buffer."""
        host = self._host.view(host_ptr, n)
        if host is None:
            return self._pageable_drain(strm) or ACL_ERROR_RT_PARAM_INVALID
        if strm.enqueue(_copy_task(device, host.copy())) is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        return self._pageable_drain(strm)

    def _copy_on_stream(
        self, stream: int, host_ptr: int, n: int, device: ByteArray, to_device: bool
    ) -> int:
        """The stream half of an async symbol copy, decided by the host side's start
        pointer: the stream (107017); pinned: 107003 for another context's stream, else a
        copy task (a To-symbol task reads a snapshot of the source with
        ``pinned_read="call"``); pageable: drain the stream, then ``_copy_now``."""
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        if not self._host.is_pinned(host_ptr):
            if to_device and self.options.pageable_staged:
                return self._copy_staged(strm, host_ptr, n, device)
            # a failed drain's code, else the copy's
            return self._pageable_drain(strm) or self._copy_now(host_ptr, n, device, to_device)
        code = self.submit_check(strm, ctx)
        if code:
            return code
        host = self._host.view(host_ptr, n)
        if host is None:
            return ACL_ERROR_RT_PARAM_INVALID
        if not to_device:
            task = _copy_task(host, device)
        elif self._snapshot_source:
            task = _copy_task(device, host.copy())
        else:
            task = _copy_task(device, host)
        if strm.enqueue(task) is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        return ACL_SUCCESS
