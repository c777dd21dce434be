"""Bugs in a call that most tests use (issue 21, item 2): the suite must still decide
every other requirement, and charge only the requirements the bug breaks.

``NullStreamRejectedEverywhere`` is the backend a vendor meets first: an implementation
whose stream lookup has no entry for NULL, so every call that takes a stream rejects
the NULL stream with ``ACL_ERROR_RT_PARAM_INVALID``, where NULL must select the default
stream.  Most tests copy on the NULL stream or synchronise it.
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID

from .mutant_base import MutantBase


class NullStreamRejectedEverywhere(MutantBase):
    """Every call that takes a stream rejects stream == NULL with ACL_ERROR_RT_PARAM_INVALID
    (the copies, synchronise, synchronise with a timeout, query, record, wait, the stream
    gates) instead of taking it as the default stream; a copy of 0 bytes still succeeds
    first, as CANN's does."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if stream == 0 and count:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if stream == 0 and count:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)

    def synchronize_stream(self, stream: int) -> int:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().synchronize_stream(stream)

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().synchronize_stream_with_timeout(stream, timeout)

    def stream_query(self, stream: int) -> tuple[int, int]:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID, 0
        return super().stream_query(stream)

    def record_event(self, event: int, stream: int) -> int:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().record_event(event, stream)

    def stream_wait_event(self, stream: int, event: int) -> int:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().stream_wait_event(stream, event)

    def launch_gate(self, stream: int) -> tuple[int, int]:
        if stream == 0:
            return ACL_ERROR_RT_PARAM_INVALID, 0
        return super().launch_gate(stream)
