"""Synchronising calls that return at once when the queue is deep (issue 21, item 3).

The bug: the runtime waits for completions through a table of N slots, one per pending
task, and a table too small for the queue is taken for "nothing to wait for": with more
than N tasks pending, the call answers success at once, without waiting.  With N tasks
or fewer it waits as it must, so only a call made while a deep queue is still running
shows it.

Each synchronising call is a code path of its own in the simulator, so each has its own
class here; ``deeper_than(cls, n)`` makes one for a depth N (the catalogue's family).
"""

from __future__ import annotations

import inspect
import threading
from typing import Any
from typing import ClassVar

from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .mutant_base import MutantBase

INT32_MAX = (1 << 31) - 1


class _EarlyWhenDeep(MutantBase):
    """What the classes below share: the depth past which the call does not wait."""

    LIMIT: ClassVar[int] = 8
    """More than this many tasks pending: the call returns at once."""

    def _deep(self, pending: int) -> bool:
        return pending > self.LIMIT


class StreamSyncEarlyWhenDeep(_EarlyWhenDeep):
    """aclrtSynchronizeStream returns success at once, without waiting, when more than
    {n} tasks of the stream are pending."""

    def synchronize_stream(self, stream: int) -> int:
        self._check_open()
        _code, strm, _ctx = self._stream(stream)
        if strm is not None and self._deep(strm.pending()):
            return ACL_SUCCESS
        return super().synchronize_stream(stream)


class TimeoutSyncEarlyWhenDeep(_EarlyWhenDeep):
    """aclrtSynchronizeStreamWithTimeout (a valid timeout) returns success at once, without
    waiting, when more than {n} tasks of the stream are pending."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        self._check_open()
        valid = timeout == -1 or 0 < timeout <= INT32_MAX
        _code, strm, _ctx = self._stream(stream)
        if valid and strm is not None and self._deep(strm.pending()):
            return ACL_SUCCESS
        return super().synchronize_stream_with_timeout(stream, timeout)


class DeviceSyncEarlyWhenDeep(_EarlyWhenDeep):
    """aclrtSynchronizeDevice returns success at once, without waiting, when more than {n}
    tasks are pending on the streams of the current device together."""

    def synchronize_device(self) -> int:
        self._check_open()
        ctx = self._devices.current()
        if ctx is not None:
            with self._lock:
                streams = [ctx.default_stream, *ctx.streams.values()]
            if self._deep(sum(s.pending() for s in streams)):
                return ACL_SUCCESS
        return super().synchronize_device()


class EventSyncEarlyWhenDeep(_EarlyWhenDeep):
    """aclrtSynchronizeEvent returns success at once, without waiting, when more than {n}
    tasks are pending on the stream the event was last recorded on."""

    def synchronize_event(self, event: int) -> int:
        self._check_open()
        evt = self._event(event) if event else None
        latest = evt.latest() if evt is not None else None
        if latest is not None and self._deep(latest.stream.pending()):
            return ACL_SUCCESS
        return super().synchronize_event(event)


class DestroyEarlyWhenDeep(_EarlyWhenDeep):
    """aclrtDestroyStream returns success at once when more than {n} tasks of the stream
    are pending: the handle is gone at the return, and the tasks run after it (CANN's
    destroy waits for them first; the text does not say)."""

    def destroy_stream(self, stream: int) -> int:
        self._check_open()
        _code, strm, ctx = self._stream(stream)
        deep = stream and strm is not None and ctx is not None and self._deep(strm.pending())
        if deep and self._unlist_stream(strm, ctx):
            threading.Thread(
                target=self._retire, args=([strm],), name="acl-sim-late-destroy", daemon=True
            ).start()
            return ACL_SUCCESS
        return super().destroy_stream(stream)


def deeper_than(cls: type[_EarlyWhenDeep], n: int) -> type[_EarlyWhenDeep]:
    """``cls`` with the depth ``n``: its docstring names the depth."""
    attrs: dict[str, Any] = {
        "LIMIT": n,
        "__doc__": inspect.cleandoc(cls.__doc__ or "").format(n=n),
        "__module__": __name__,
        "__qualname__": f"{cls.__name__}Past{n}",
    }
    return type(f"{cls.__name__}Past{n}", (cls,), attrs)
