"""Bugs (and one legal oddity) in the timeouts, the synchronous companions' bounds, the
order of checks and the stream life cycle (issue 23).

- aclrtSynchronizeStreamWithTimeout: -1 (wait forever) taken as a poll; 0 taken as a
  poll; a small positive timeout ignored (success at once while the stream is busy);
- aclrtMemcpyFromSymbol: ``dstMax`` compared off by one either way;
- aclrtMemcpyToSymbolAsync: the symbol looked up before the kind is checked;
- aclrtDestroyStream: the tasks not yet started are discarded (legal under spec, which
  says nothing of destroy; CANN's destroy waits for them).
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D

from .mutant_base import MutantBase


class TimeoutForeverIsAPoll(MutantBase):
    """aclrtSynchronizeStreamWithTimeout takes a timeout of -1 ('wait forever') as a poll:
    it returns ACL_ERROR_RT_STREAM_SYNC_TIMEOUT at once while a task of the stream is still
    pending."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        if timeout == -1 and self._has_pending(stream):
            return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        return super().synchronize_stream_with_timeout(stream, timeout)


class TimeoutZeroIsAPoll(MutantBase):
    """aclrtSynchronizeStreamWithTimeout takes a timeout of 0 as a poll (0 when the stream is
    idle, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT at once otherwise) where CANN rejects 0 with
    107000."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        if timeout == 0:
            self._check_open()
            code, strm, _ctx = self._stream(stream)
            if strm is None:
                return code
            return ACL_SUCCESS if strm.idle() else ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        return super().synchronize_stream_with_timeout(stream, timeout)


class TimeoutPositiveIgnored(MutantBase):
    """aclrtSynchronizeStreamWithTimeout ignores a small positive timeout (under 1000 ms):
    it returns 0 at once, without waiting, while a task of the stream is still pending."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        if 0 < timeout < 1000 and self._has_pending(stream):
            return ACL_SUCCESS
        return super().synchronize_stream_with_timeout(stream, timeout)


class FromDstMaxOneShortAccepted(MutantBase):
    """aclrtMemcpyFromSymbol checks ``count > dstMax + 1``: dstMax == count - 1 is accepted
    and one byte too many is written to dst."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        if count and dst_max + 1 == count:
            dst_max = count
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class FromDstMaxEqualRejected(MutantBase):
    """aclrtMemcpyFromSymbol checks ``count >= dstMax``: a dst exactly count bytes long
    (dstMax == count) is rejected with 100000."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        if count and dst_max == count:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class SymbolLookedUpBeforeKind(MutantBase):
    """aclrtMemcpyToSymbolAsync looks the symbol up before it checks the kind: an
    unregistered symbol with a bad kind gives the lookup's 107043 where CANN gives the
    kind's 100000."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count and symbol and src and kind not in (H2D, DEFAULT):
            code, _size = super().get_symbol_size(symbol)
            if code != ACL_SUCCESS:
                return code
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class DestroyDiscardsUnstarted(MutantBase):
    """aclrtDestroyStream does not wait: the tasks of the stream not yet started are
    discarded (a task already running finishes), and the call returns 0 at once."""

    def destroy_stream(self, stream: int) -> int:
        self._check_open()
        _code, strm, ctx = self._stream(stream)
        # nothing pending: a plain destroy (what completed stays complete, its events too)
        if strm is None or strm.pending() == 0:
            return super().destroy_stream(stream)
        if stream and ctx is not None and self._unlist_stream(strm, ctx):
            with self._lock:
                self._live_streams.discard(strm)
            strm.abort()
            return ACL_SUCCESS
        return super().destroy_stream(stream)
