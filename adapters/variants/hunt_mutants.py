"""Bugs that need more search than the gate spends (issue 22): the ci run passes them,
a bug hunt of a few minutes (``acl-conformance hunt``) finds them.

Each needs a rarer input than the gate's derandomised budget reaches: a particular
offset/count pair, or a sequence of calls on one stream (a wait on an event among a
queue deeper than a few tasks) before a synchronisation.  The catalogue marks them
``hunt_only``: selfcheck does not count them as mutants the ci run must catch, and
tests/test_hunt.py checks that the ci run indeed misses them.
"""

from __future__ import annotations

from typing import Any

from acl_conformance.reference_impl.constants import DEFAULT
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.constants import SIZE_MAX

from .mutant_base import MutantBase


class BurstEndLosesItsLastByte(MutantBase):
    """A copy that starts at 17 mod 32 in its variable and whose count is 31 mod 32 (it
    ends exactly on a 32-byte burst boundary from an odd start) loses its last byte."""

    BURST = 32

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self._size_of(symbol)
        if (
            size is not None
            and src
            and kind in (H2D, DEFAULT)
            and count % self.BURST == self.BURST - 1
            and offset % self.BURST == self.BURST // 2 + 1
            and offset <= SIZE_MAX - count
            and offset + count <= size
        ):
            count -= 1
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class StreamSyncEarlyAfterWaitWhenDeep(MutantBase):
    """aclrtSynchronizeStream returns success at once, without waiting, when more than 6
    tasks of the stream are pending and the stream waited on an event since it was last
    synchronised."""

    DEPTH = 6

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.waited: set[int] = set()
        """The streams that waited on an event since they were last synchronised."""

    def stream_wait_event(self, stream: int, event: int) -> int:
        code = super().stream_wait_event(stream, event)
        if code == 0:
            self.waited.add(stream)
        return code

    def synchronize_stream(self, stream: int) -> int:
        self._check_open()
        _code, strm, _ctx = self._stream(stream)
        if strm is not None and stream in self.waited and strm.pending() > self.DEPTH:
            return 0
        self.waited.discard(stream)
        return super().synchronize_stream(stream)
