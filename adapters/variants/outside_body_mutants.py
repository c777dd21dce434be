"""Backends whose bug the suite meets in a call it makes for itself, outside a test's own
steps (issue 34: every call the suite makes is judged, in a test body or not).

The suite calls the backend outside a test's steps in its clean-up after each test
(gates opened, devices drained, streams, events, registrations and buffers released:
``conformance/harness/teardown.py``), in the reset between harnesses of a backend that
asks for isolation ``reset`` (``conformance/harness/reset.py``), in its set-up reads of
the variables' starting contents (``conformance/harness/variables.py``) and in its second
looks (``conformance/harness/second_look.py``).  Each class below is the simulator with
one realistic bug that shows first, or only, there: a call that never returns, one that
raises, one that answers wrongly.  The suite must charge each as it would in a test body:
the call named, its stage said, the requirement its success stands for failing, timing
out or crashing, and the run not conformant.
"""

from __future__ import annotations

from typing import Any

from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .hang_mutants import _HangsUntilClosed
from .mutant_base import MutantBase

PAGE = 4096
"""A host page: :class:`FreeHostCrashesOnLargeBuffers` fails on buffers of one or more."""

STAGING_LIMIT = 4 << 20
"""Bytes a synchronous read takes in one staging pass in :class:`LargeReadHangs`."""


class SyncDeviceHangsAfterStreamDestroy(_HangsUntilClosed):
    """aclrtSynchronizeDevice never returns once a stream has been destroyed: the destroyed
    stream stays in the device's list and its completion never arrives (the suite meets it
    first in its clean-up after a test that destroyed a stream)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._destroyed = False

    def destroy_stream(self, stream: int) -> int:
        code = super().destroy_stream(stream)
        if code == ACL_SUCCESS:
            self._destroyed = True
        return code

    def synchronize_device(self) -> int:
        if self._destroyed:
            self._check_open()
            return self._hang()
        return super().synchronize_device()


class FreeHostCrashesOnLargeBuffers(MutantBase):
    """aclrtFreeHost raises for page-locked memory of a page or more (the path that unpins
    whole pages walks a list it has already freed: a use after free); smaller buffers are
    freed as they must be (the suite frees what a test allocated in its clean-up)."""

    def free_host(self, host_ptr: int) -> int:
        self._check_open()
        if host_ptr and self._host.view(host_ptr, PAGE) is not None:
            raise RuntimeError("aclrtFreeHost: the page list was already freed (use after free)")
        return super().free_host(host_ptr)


class DestroyEventRefusedAfterWait(MutantBase):
    """aclrtDestroyEvent refuses (107000) an event that a stream has waited on
    (aclrtStreamWaitEvent), as if the wait still held it, though the wait completed (the
    suite destroys the events a test made in its clean-up)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._waited: set[int] = set()

    def stream_wait_event(self, stream: int, event: int) -> int:
        code = super().stream_wait_event(stream, event)
        if code == ACL_SUCCESS:
            self._waited.add(event)
        return code

    def destroy_event(self, event: int) -> int:
        self._check_open()
        if event in self._waited:
            return ACL_ERROR_RT_PARAM_INVALID
        return super().destroy_event(event)


class _NoStreamLeft(MutantBase):
    """What the reset's mutants share: a backend that asks for isolation ``reset`` (one
    instance serves harness after harness, reset between them), and knows whether the
    current device has a stream of the caller's left (the suite's clean-up destroys them
    all before its reset)."""

    isolation = "reset"

    def _no_stream_left(self) -> bool:
        ctx = self._devices.current()
        return ctx is not None and not ctx.streams


class SyncCopyHangsWithNoStream(_NoStreamLeft, _HangsUntilClosed):
    """aclrtMemcpyToSymbol (synchronous) waits for a stream of the device to carry its copy;
    with none left it never returns (the suite's reset, made once a test's streams are
    destroyed, meets it)."""

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        self._check_open()
        if count and self._no_stream_left() and self._would_copy(symbol, src, count, offset, kind):
            return self._hang()
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)


class SyncCopyCrashesWithNoStream(_NoStreamLeft):
    """aclrtMemcpyToSymbol (synchronous) dereferences the device's first stream for its
    copy; with none left it raises (a null dereference; the suite's reset, made once a
    test's streams are destroyed, meets it)."""

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        self._check_open()
        if count and self._no_stream_left() and self._would_copy(symbol, src, count, offset, kind):
            raise RuntimeError("aclrtMemcpyToSymbol: the device has no stream (null stream)")
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)


class LargeReadHangs(_HangsUntilClosed):
    """aclrtMemcpyFromSymbol (synchronous) of more than 4 MiB never returns: its staging
    loop waits for a second pass that is never scheduled (the suite meets it first in its
    set-up read of the 16 MiB variable's starting contents)."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        self._check_open()
        if count > STAGING_LIMIT and dst and count <= dst_max:
            return self._hang()
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)
