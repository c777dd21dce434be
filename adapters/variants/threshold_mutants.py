"""Bugs that live where real runtimes switch copy paths by size (issue 35).

A runtime copies a small buffer one way and a large one another: a pageable copy above a
staging buffer's size goes to a staging thread, a page-locked one is cut into DMA chunks,
a DMA descriptor holds the length in a field of 24 bits.  Each class here is the bundled
simulator with one such bug above a threshold, picked where real runtimes put it
(``STAGING``: 64 KiB, ``DMA_LENGTH_BITS``: 24).  The suite must catch each with copies at
and around those sizes (conformance/suite/test_sizes.py), not only with small ones.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from acl_conformance.adapters.simulator.layout import ByteArray
from acl_conformance.adapters.simulator.streams import Stream
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .mutant_base import MutantBase

STAGING = 64 << 10
"""Bytes above which these runtimes take the other path (a staging buffer, a DMA chunk)."""
LATE = 0.002
"""Seconds after the call returned at which a staged copy reads its source."""
DMA_LENGTH_BITS = 24
"""The width of the DMA descriptor's length field."""


class _Staged(MutantBase):
    """A pageable aclrtMemcpyToSymbolAsync of more than ``STAGING`` bytes is handed to a
    staging thread and the call returns at once; the copy reads its source ``LATE``
    seconds later.  Subclasses say where the staged copy runs (``stage``)."""

    def _copy_on_stream(
        self, stream: int, host_ptr: int, n: int, device: ByteArray, to_device: bool
    ) -> int:
        if not to_device or n <= STAGING or self._host.is_pinned(host_ptr):
            return super()._copy_on_stream(stream, host_ptr, n, device, to_device)
        _code, strm, _ctx = self._stream(stream)
        host = self._host.view(host_ptr, n)
        if strm is None or host is None:
            # a bad stream or a source in no buffer: the simulator's own answer
            return super()._copy_on_stream(stream, host_ptr, n, device, to_device)
        return self.stage(strm, host, device)

    def stage(self, strm: Stream, host: ByteArray, device: ByteArray) -> int:
        """Hand the copy of ``host`` into ``device`` over; the call's code."""
        raise NotImplementedError


def _late_copy(host: ByteArray, device: ByteArray) -> None:
    """The staging thread's copy: the source as it is ``LATE`` seconds from now."""
    time.sleep(LATE)
    np.copyto(device, host)


class PageableStagedInOrder(_Staged):
    """A pageable aclrtMemcpyToSymbolAsync of more than 64 KiB is staged and returns at
    once: the staged copy keeps its place in its stream (a synchronisation waits for it),
    but it reads its source about 2 ms after the call returned."""

    def stage(self, strm: Stream, host: ByteArray, device: ByteArray) -> int:
        if strm.enqueue(lambda: _late_copy(host, device)) is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        return ACL_SUCCESS


class PageableStagedOutOfOrder(_Staged):
    """A pageable aclrtMemcpyToSymbolAsync of more than 64 KiB waits for its stream, then
    is handed to a staging thread of its own and returns: the copy reads its source and
    lands about 2 ms later, outside every stream (no synchronisation waits for it)."""

    def stage(self, strm: Stream, host: ByteArray, device: ByteArray) -> int:
        code = self._pageable_drain(strm)
        if code:
            return code
        threading.Thread(target=_late_copy, args=(host, device), daemon=True).start()
        return ACL_SUCCESS


class PinnedChunksDropTheTail(MutantBase):
    """A page-locked aclrtMemcpyToSymbolAsync of more than 64 KiB is cut into 64 KiB DMA
    chunks, and the last, shorter chunk is never issued: the tail of the copy is lost."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if (
            count > STAGING
            and count % STAGING
            and self._would_copy(symbol, src, count, offset, kind)
            and not self._pageable(src)
        ):
            count -= count % STAGING
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class DmaLengthWraps(MutantBase):
    """The To copies put the length in a 24-bit DMA field: a copy of ``count`` bytes writes
    ``count mod 2^24`` of them (a copy of 16 MiB writes nothing) and succeeds; the call is
    otherwise made as the simulator makes it (a pageable one waits for its stream, a
    page-locked one is a task of its stream)."""

    def _copy_now(self, host_ptr: int, n: int, device: ByteArray, to_device: bool) -> int:
        if to_device and n >= 1 << DMA_LENGTH_BITS:
            n %= 1 << DMA_LENGTH_BITS
            device = device[:n]
        return super()._copy_now(host_ptr, n, device, to_device)

    def _copy_on_stream(
        self, stream: int, host_ptr: int, n: int, device: ByteArray, to_device: bool
    ) -> int:
        if to_device and n >= 1 << DMA_LENGTH_BITS:
            n %= 1 << DMA_LENGTH_BITS
            device = device[:n]
        return super()._copy_on_stream(stream, host_ptr, n, device, to_device)
