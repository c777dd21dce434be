"""C argument conversions: what a Python integer becomes when C receives it.

The contract passes plain Python integers; C would convert them to the
parameter's type.  The simulator applies the same conversions, so that a
value such as ``-1`` for a ``size_t`` is ``SIZE_MAX``, exactly as a C caller
passing ``(size_t)-1`` would get.
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import SIZE_MAX

_U64 = SIZE_MAX
_I32_SIGN = 1 << 31
_U32 = (1 << 32) - 1


def size_t(value: int) -> int:
    """``(size_t)value`` on a 64-bit platform."""
    return int(value) & _U64


def pointer(value: int) -> int:
    """``(uintptr_t)value``: an address or a handle on a 64-bit platform."""
    return int(value) & _U64


def int32(value: int) -> int:
    """``(int32_t)value``: also how an ``enum`` such as aclrtMemcpyKind is passed."""
    v = int(value) & _U32
    return v - (1 << 32) if v & _I32_SIGN else v


def uint32(value: int) -> int:
    """``(uint32_t)value``."""
    return int(value) & _U32
