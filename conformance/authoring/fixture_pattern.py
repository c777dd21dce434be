"""The fixture pattern: what every bundled backend puts in its fixture variables at start.

Byte ``i`` of the ``k``-th fixture variable is ``(k*37 + i*11 + 0x5A) & 0xFF``.  The
suite never requires it (a legal backend may start from anything); the reproducer
spells it instead of embedding the bytes, and the project's tests of the bundled
backends check it.
"""

from __future__ import annotations

import numpy as np

_PER_VARIABLE = 37
_PER_BYTE = 11
_OFFSET = 0x5A


def fixture_pattern(index: int, size: int) -> bytes:
    """The first ``size`` bytes of fixture variable number ``index``."""
    i = np.arange(size, dtype=np.int64)
    return ((index * _PER_VARIABLE + i * _PER_BYTE + _OFFSET) & 0xFF).astype(np.uint8).tobytes()


def c_expression(index: int, byte: str) -> str:
    """The same byte as a C expression of type ``unsigned char`` (``byte``: the C name of
    the byte's position)."""
    return (
        f"(unsigned char)(({index} * {_PER_VARIABLE} + {byte} * {_PER_BYTE} + "
        f"0x{_OFFSET:X}) & 0xFF)"
    )
