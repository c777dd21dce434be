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

from .mutant_base import MutantBase
from .mutant_base import Registrations


class RegisteredOddCopyAcrossOneKiBLosesItsLastByte(Registrations):
    """A copy from host memory registered with aclrtHostRegister that starts at an odd
    offset, has an odd count and crosses a 1 KiB boundary of its variable (the registered
    path's DMA splits there and rounds the odd tail down) loses its last byte."""

    SPLIT = 1024

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if (
            self._would_copy(symbol, src, count, offset, kind)
            and offset % 2 == 1
            and count % 2 == 1
            and offset // self.SPLIT != (offset + count - 1) // self.SPLIT
            and self._from_registered(src)
        ):
            count -= 1
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class RegisteredDefaultOddCopyLosesItsLastByte(Registrations):
    """A copy with kind ACL_MEMCPY_DEFAULT from host memory registered with
    aclrtHostRegister, with an odd count, loses its last byte (DEFAULT infers the direction
    from the pointer's attributes; registered pages say "mapped", and the mapped path moves
    16-bit words, rounding the count down)."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if (
            kind == DEFAULT
            and count % 2 == 1
            and self._from_registered(src)
            and self._would_copy(symbol, src, count, offset, kind)
        ):
            count -= 1
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class StreamSyncEarlyAfterWaitWhenDeep(MutantBase):
    """aclrtSynchronizeStream returns success at once, without waiting, when more than one
    task of the stream is pending and the stream waited on an event since it was last
    synchronised (the call waits on the event's slot and takes it for the stream's)."""

    DEPTH = 1

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
