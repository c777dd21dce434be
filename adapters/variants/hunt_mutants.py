"""Bugs that need more search than the gate spends (issue 22): the ci run passes them,
a bug hunt of a few minutes (``acl-conformance hunt``) finds them.

Each needs a rarer input than the gate's derandomised budget reaches: a particular
kind and count from registered memory, or a sequence of calls on one stream (a copy from
registered memory behind a queue of copies, a wait on an event among a queue deeper
than a few tasks) before a synchronisation.  The conditions were chosen by measurement:
a legal backend logged the copies of the ci run (none met them) and of a 4-minute hunt
(dozens did).  The catalogue marks them
``hunt_only``: selfcheck does not count them as mutants the ci run must catch, and
tests/test_hunt.py checks that the ci run indeed misses them.
"""

from __future__ import annotations

from typing import Any

from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import DEFAULT

from .mutant_base import MutantBase
from .mutant_base import Registrations


class LastByteLost(Registrations):
    """A To copy that meets :meth:`loses_last_byte` is made one byte short."""

    def loses_last_byte(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> bool:
        """Does this copy, a valid one, lose its last byte?  (None does here.)"""
        return False

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        short = (
            count > 0
            and self._would_copy(symbol, src, count, offset, kind)
            and self.loses_last_byte(symbol, src, count, offset, kind, stream)
        )
        return super().memcpy_to_symbol_async(
            symbol, src, count - 1 if short else count, offset, kind, stream
        )


class RegisteredCopyBehindTwoLosesItsLastByte(LastByteLost):
    """A copy from host memory registered with aclrtHostRegister, issued on a stream that
    took two or more copies since its last aclrtSynchronizeStream or aclrtSynchronizeDevice,
    loses its last byte (the registered path chains onto the stream's open batch of copy
    descriptors, and writes the chained descriptor's length one short)."""

    BATCH = 2

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.issued: dict[int, int] = {}
        """Stream -> the copies issued on it since its last synchronisation."""

    def loses_last_byte(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> bool:
        return self.issued.get(stream, 0) >= self.BATCH and self._from_registered(src)

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code == ACL_SUCCESS:
            self.issued[stream] = self.issued.get(stream, 0) + 1
        return code

    def synchronize_stream(self, stream: int) -> int:
        code = super().synchronize_stream(stream)
        if code == ACL_SUCCESS:
            self.issued.pop(stream, None)
        return code

    def synchronize_device(self) -> int:
        code = super().synchronize_device()
        if code == ACL_SUCCESS:
            self.issued.clear()
        return code


class RegisteredDefaultOddCopyLosesItsLastByte(LastByteLost):
    """A copy with kind ACL_MEMCPY_DEFAULT from host memory registered with
    aclrtHostRegister, with an odd count above one, loses its last byte (DEFAULT infers the
    direction from the pointer's attributes; registered pages say "mapped", and the mapped
    path moves 16-bit words, rounding the count down; a single byte goes the byte path)."""

    def loses_last_byte(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> bool:
        return kind == DEFAULT and count % 2 == 1 and count > 1 and self._from_registered(src)


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
