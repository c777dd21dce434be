"""Mutants that get the bounds of a copy wrong: the end check, the overflow check, the
offset, the byte count, the source address, what a symbol argument may point to.

Each is the bundled simulator with one realistic bug (see ``mutants``).
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_SYS_DMA
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.constants import SIZE_MAX

from .mutant_base import MutantBase


class BoundLessThan(MutantBase):
    """The bound is checked with ``<`` where ``<=`` is meant: copying up to the last byte fails."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if count and size is not None and kind in (H2D, DEFAULT) and src and offset + count == size:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class BoundOnePast(MutantBase):
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


class OverflowWraps(MutantBase):
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


class OffsetIgnored(MutantBase):
    """The offset is dropped: every copy lands at the start of the variable."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if size is not None and offset <= SIZE_MAX - count and offset + count <= size:
            offset = 0
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class OneByteTooMany(MutantBase):
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


class SourceOffByOne(MutantBase):
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


class InteriorPointerAccepted(MutantBase):
    """A pointer into a variable is taken as that variable, at that offset."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        inner = self._containing(symbol)
        if inner is not None:
            symbol, k = inner
            offset = min(offset + k, SIZE_MAX)
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class RejectedStillEnqueues(MutantBase):
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


class SyncBoundWrapsPastTheEnd(MutantBase):
    """aclrtMemcpyToSymbol checks ``count <= size - offset`` in size_t: an offset past the
    end wraps the bound and the copy is accepted, written past the variable into the
    variables laid out after it; one that lands outside every variable faults in the
    device copy (ACL_ERROR_RT_SYS_DMA, nothing written)."""

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        size = self._size_of(symbol)
        if (
            size is None
            or not count
            or offset <= size
            or offset > SIZE_MAX - count
            or not src
            or kind not in (H2D, DEFAULT)
        ):
            return super().memcpy_to_symbol(symbol, src, count, offset, kind)
        # the device bytes [&var + offset, &var + offset + count), over the variables that
        # hold them (their device addresses, through the contract)
        start = self._device_address(symbol) + offset
        end = start + count
        pieces = []
        for f in self.fixtures():
            base = self._device_address(f.address)
            lo, hi = max(start, base), min(end, base + f.size)
            if lo < hi:
                pieces.append((f.address, lo - base, lo - start, hi - lo))
        if sum(n for *_rest, n in pieces) != count:
            return ACL_ERROR_RT_SYS_DMA  # some byte is in no variable: the device copy faults
        for var, at, from_src, n in pieces:
            code = super().memcpy_to_symbol(var, src + from_src, n, at, kind)
            if code != ACL_SUCCESS:
                return code
        return ACL_SUCCESS

    def _device_address(self, symbol: int) -> int:
        """Where ``symbol``'s variable lies in the current device's memory."""
        return super().get_symbol_address(symbol)[1]
