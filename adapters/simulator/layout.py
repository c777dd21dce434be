"""The fixture variables and where they live: device offsets, shadow addresses, initial bytes.

A real backend's variables are ``__gm__`` globals of a compiled image: each has
a *host shadow address* (``&var`` in the host program, the key of the symbol
table) and an offset in the device image, which every device loads.  Here:

- the device image is one contiguous byte array; the variables are packed
  next to each other **without padding**, in declaration order, with a small
  guard band before the first and after the last, so that any stray write
  lands in a neighbour (or a guard) and shows;
- the shadow addresses lie in a fake ``.bss`` region starting at
  ``SHADOW_BASE``, each variable 16-byte aligned after the previous one, so
  that ``&var + k`` for ``0 < k < size`` lies inside the variable's shadow
  range (an interior pointer) and the padding after a small variable is
  nobody's address;
- the initial contents follow a fixed pattern that is never all zero:
  byte ``i`` of variable ``k`` (its index in the declaration order) is
  ``(k*37 + i*11 + 0x5A) & 0xFF``; guard byte ``i`` is ``(i*7 + 0xA5) & 0xFF``;
  with ``zero_filled`` the variables start zero-filled instead (as CANN's do), the
  guards keep their pattern.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ByteArray = npt.NDArray[np.uint8]

SHADOW_BASE = 0x5555_0000_0000
"""Start of the fake host region holding the variables' shadows."""

SHADOW_ALIGN = 16
GUARD = 64
"""Guard bytes before the first and after the last variable of the device image."""

DEVICE_BASE = 0x12C0_0000_0000
"""Device address of byte 0 of device 0's image (HBM-like, far from every host address)."""

DEVICE_STRIDE = 1 << 36
"""Distance between two devices' images in the (fake) device address space."""

DEFAULT_FIXTURES: tuple[tuple[str, int], ...] = (
    ("g_u8", 1),
    ("g_u32", 4),
    ("g_u64", 8),
    ("g_struct12", 12),
    ("g_struct24", 24),  # a padded struct, e.g. {uint8_t; uint64_t; uint32_t}
    ("g_arr256", 256),
    ("g_arr4k", 4096),
    ("g_arr1m", 1 << 20),
    ("g_arr16m", 16 << 20),
)
"""The variables every simulator holds: (name, declared size in bytes)."""


@dataclass(frozen=True)
class Variable:
    """One fixture variable: its declaration index, name, size, shadow and image offset."""

    index: int
    name: str
    size: int
    shadow: int
    """Host shadow address, the symbol."""
    offset: int
    """Offset of byte 0 in the device image."""


def pattern(index: int, size: int) -> ByteArray:
    """The initial bytes of variable number ``index`` (see the module docstring)."""
    # The pattern has period 256 in i (11 is odd), so build one period and repeat it.
    tile = ((index * 37 + np.arange(256, dtype=np.int64) * 11 + 0x5A) & 0xFF).astype(np.uint8)
    return np.resize(tile, size)


def guard_pattern(size: int) -> ByteArray:
    """The initial bytes of a guard band."""
    tile = ((np.arange(256, dtype=np.int64) * 7 + 0xA5) & 0xFF).astype(np.uint8)
    return np.resize(tile, size)


class Layout:
    """Where every variable lives, and the device image every device loads."""

    def __init__(
        self, declarations: Sequence[tuple[str, int]], *, zero_filled: bool = False
    ) -> None:
        names = [name for name, _ in declarations]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate fixture names in {names}")
        variables: list[Variable] = []
        shadow = SHADOW_BASE
        offset = GUARD
        for index, (name, size) in enumerate(declarations):
            if not name.isidentifier():
                raise ValueError(f"fixture name {name!r} is not a C identifier")
            if size <= 0:
                raise ValueError(f"fixture {name!r} has size {size}; sizes must be positive")
            variables.append(Variable(index, name, size, shadow, offset))
            shadow = -(-(shadow + size) // SHADOW_ALIGN) * SHADOW_ALIGN
            offset += size
        self.variables: tuple[Variable, ...] = tuple(variables)
        self._declarations = tuple((name, int(size)) for name, size in declarations)
        self._zero_filled = zero_filled

    def image(self) -> ByteArray:
        """A fresh, writable copy of the initial device image."""
        fresh: ByteArray = _image(self._declarations, self._zero_filled).copy()
        return fresh

    def device_address(self, device: int, variable: Variable) -> int:
        """The address of ``variable`` in ``device``'s memory."""
        return DEVICE_BASE + device * DEVICE_STRIDE + variable.offset


@functools.lru_cache(maxsize=8)
def _image(declarations: tuple[tuple[str, int], ...], zero_filled: bool = False) -> ByteArray:
    # Built once per set of declarations: each device load is then one copy.
    size = sum(s for _, s in declarations) + 2 * GUARD
    image = np.empty(size, dtype=np.uint8)
    image[:GUARD] = guard_pattern(GUARD)
    offset = GUARD
    for index, (_, s) in enumerate(declarations):
        image[offset : offset + s] = 0 if zero_filled else pattern(index, s)
        offset += s
    image[offset:] = guard_pattern(GUARD)
    image.setflags(write=False)
    return image
