"""What every mutant starts from: the simulator, with lookups the mutants share.

The lookups go through the contract, so that they match the simulator.
"""

from __future__ import annotations

import itertools
from typing import Any

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.constants import SIZE_MAX


class MutantBase(Simulator):
    """Lookups the mutants share (through the contract, so they match the simulator)."""

    def _size_of(self, symbol: int) -> int | None:
        code, size = super().get_symbol_size(symbol)
        return size if code == ACL_SUCCESS else None

    def _would_copy(self, symbol: int, src: int, count: int, offset: int, kind: int) -> bool:
        """Would the simulator take this To copy and make it: a registered ``symbol``, a
        source, an allowed kind, ``offset + count`` within the variable, no overflow?"""
        size = self._size_of(symbol)
        return bool(
            size is not None
            and src
            and kind in (H2D, DEFAULT)
            and offset <= SIZE_MAX - count
            and offset + count <= size
        )

    def _has_pending(self, stream: int) -> bool:
        """Is ``stream`` a valid stream with a task still pending?"""
        self._check_open()
        _code, strm, _ctx = self._stream(stream)
        return strm is not None and not strm.idle()

    def _unlist_stream(self, strm: Any, ctx: Any) -> bool:
        """Take stream ``strm`` out of the handle tables as a destroy does, without waiting
        for its tasks; False when it is not ``ctx``'s own (then nothing changes)."""
        with self._lock:
            mine = ctx.streams.get(strm.handle) is strm and self._objects.get(strm.handle) is strm
            if mine:
                del self._objects[strm.handle]
                del ctx.streams[strm.handle]
        return mine

    def _neighbour(self, symbol: int) -> int | None:
        """The variable laid out right after ``symbol`` in device memory."""
        fixtures = self.fixtures()
        for a, b in itertools.pairwise(fixtures):
            if a.address == symbol:
                return b.address
        return None

    def _containing(self, symbol: int) -> tuple[int, int] | None:
        """(variable address, k) for an interior pointer ``symbol`` = variable + k."""
        for f in self.fixtures():
            if f.address < symbol < f.address + f.size:
                return f.address, symbol - f.address
        return None

    def _pageable(self, src: int) -> bool:
        return not self._host.is_pinned(src)


class Registrations(MutantBase):
    """Remembers the live registrations in the order they were made (start -> size)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._live: dict[int, int] = {}

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            self._live[ptr] = size
        return code

    def host_unregister(self, ptr: int) -> int:
        code = super().host_unregister(ptr)
        if code == ACL_SUCCESS:
            self._live.pop(ptr, None)
        return code

    def _from_registered(self, src: int) -> bool:
        """Does ``src`` lie in a live registered range?"""
        return any(a <= src < a + n for a, n in self._live.items())
