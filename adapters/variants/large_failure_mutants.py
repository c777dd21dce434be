"""A bug in large pageable copies, for the bounded-memory path of a failure (issue 35).

The bug: a pageable ``aclrtMemcpyToSymbolAsync`` larger than a staging threshold is
staged page by page (4 KiB), and the staging loop copies one byte too few of every
page: the last byte of each page keeps what the variable held.  The call still drains
its stream and returns once the rest is copied, so a 16 MiB copy leaves 4,096 wrong
bytes, one per page, each its own run: the failure the suite must record, shrink,
report, trace and replay in memory bounded by the data, not by the number of runs.
``bench/large_failure.py`` drives it; the C double's ``large-pageable-drops``
planted bug is the same bug, for the C reproducer.
"""

from __future__ import annotations

from typing import ClassVar

from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .mutant_base import MutantBase

PAGE = 4096
"""The staging loop's page."""


class LargePageableDropsPageTails(MutantBase):
    """A pageable aclrtMemcpyToSymbolAsync of more than 8 MiB is staged 4 KiB page by page
    and the last byte of every page is not copied: the variable keeps its old byte
    there (the call drains its stream and returns complete, as it must)."""

    LIMIT: ClassVar[int] = 8 << 20
    """Copies larger than this take the staging path."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        staged = (
            count > self.LIMIT
            and self._would_copy(symbol, src, count, offset, kind)
            and self._pageable(src)
        )
        if not staged:
            return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        code, _, dst = self._symbol_range(symbol, offset, count)
        if code != ACL_SUCCESS or dst is None or self.synchronize_stream(stream) != ACL_SUCCESS:
            return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        # The stream is drained (as the copy itself drains it first): the bytes there now
        # are those the staging loop leaves in place.
        kept = dst[PAGE - 1 :: PAGE].copy()
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code == ACL_SUCCESS:
            dst[PAGE - 1 :: PAGE] = kept
        return code
