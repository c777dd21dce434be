"""Mutants that check an argument wrongly or answer with the wrong code: the kind, NULL
stream, count 0, dstMax, a destroyed or foreign stream, the error numbers themselves.

Each is the bundled simulator with one realistic bug (see ``mutants``).
"""

from __future__ import annotations

from typing import Any

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_SYMBOL_NOT_FOUND
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D

from .mutant_base import MutantBase


class DeviceToHostAccepted(MutantBase):
    """ACL_MEMCPY_DEVICE_TO_HOST is accepted on the To copies and treated as host to device."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(
            symbol, src, count, offset, H2D if kind == D2H else kind, stream
        )


class OutOfEnumAccepted(MutantBase):
    """A kind outside the enum is taken as ACL_MEMCPY_DEFAULT."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(
            symbol, src, count, offset, DEFAULT if not 0 <= kind <= 7 else kind, stream
        )


class NullStreamRejected(MutantBase):
    """stream == NULL is rejected instead of meaning the default stream."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if stream == 0 and count:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class CountZeroRejected(MutantBase):
    """count == 0 is rejected (as HIP on NVIDIA does); CANN accepts it."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count == 0:
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class OverflowIsInvalidParam(MutantBase):
    """An overflowing ``offset + count`` gives 100000, where CANN gives 500001."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return ACL_ERROR_INVALID_PARAM if code == 500001 else code


class DestroyedStreamAccepted(MutantBase):
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


class ForeignStreamAccepted(MutantBase):
    """A page-locked copy on another device's stream is accepted (CANN returns 107003)."""

    def submit_check(self, stream: Any, ctx: Any) -> int:  # type: ignore[override]
        return 0 if ctx is not None else Simulator.submit_check(stream, ctx)


class DstMaxIgnored(MutantBase):
    """aclrtMemcpyFromSymbol ignores dstMax."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return super().memcpy_from_symbol(dst, max(dst_max, count), symbol, count, offset, kind)


class SymbolNotFoundCode(MutantBase):
    """A non-symbol gives 107042 (SYMBOL_NOT_FOUND, as the header suggests); CANN gives 107043."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return ACL_ERROR_RT_SYMBOL_NOT_FOUND if code == 107043 else code


class SizeRoundedUp(MutantBase):
    """aclrtGetSymbolSize reports the size rounded up to 8 bytes."""

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        code, size = super().get_symbol_size(symbol, null_size)
        return code, (size + 7) // 8 * 8 if code == ACL_SUCCESS else size


class GenericErrorCodes(MutantBase):
    """Every rejection of the symbol copies is ACL_ERROR_RT_PARAM_INVALID: legal under spec,
    not CANN's codes."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        return 107000 if code != ACL_SUCCESS else code
