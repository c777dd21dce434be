"""Bugs that do not show every time: the same calls against a fresh backend pass (as
timing bugs on real hardware do).  The suite must report them ``flaky``, not ``fail``."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from .mutant_base import MutantBase


class EveryKthCopyLosesItsLastByte(MutantBase):
    """Flaky: one copy to a symbol in ``K`` (counted per backend instance, every thread and
    test together) loses its last byte, whatever its arguments: the same calls against a
    fresh backend do not fail (a bug that shows one run in many, as timing bugs on real
    hardware do)."""

    K = 200

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._copies = itertools.count(1)
        self._copies_lock = threading.Lock()

    def _short(self, count: int) -> int:
        """``count``, one byte short for every ``K``-th copy of more than one byte."""
        if count <= 1:
            return count
        with self._copies_lock:
            kth = next(self._copies) % self.K == 0
        return count - 1 if kth else count

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(symbol, src, self._short(count), offset, kind, stream)

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        return super().memcpy_to_symbol(symbol, src, self._short(count), offset, kind)
