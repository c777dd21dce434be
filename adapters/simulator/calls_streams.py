"""The simulator's stream calls: create, destroy, synchronise (with and without a time
limit), query.

Checks, codes and ``Choice:`` marks: as the package docstring says for every calls_ module.
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import StreamStatus

from . import cabi
from .core import SimulatorCore
from .streams import Stream
from .streams import Wait

# A code of rt_error_codes.h that constants.py does not list (CANN's header value).
ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008


class StreamCalls(SimulatorCore):
    """aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream[WithTimeout],
    aclrtStreamQuery."""

    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        """aclrtCreateStream.  More than ``max_streams`` per device (the default stream
        included) is 207008 (ACL_ERROR_RT_NO_STREAM_RESOURCE)."""
        self._check_open()
        code, ctx = self._create_context(null_stream)
        if ctx is None:
            return code, 0
        with self._lock:  # count and insert at once, so that racing threads respect the limit
            if len(ctx.streams) + 1 >= self.options.max_streams:
                return ACL_ERROR_RT_NO_STREAM_RESOURCE, 0
            handle = next(self._handles)
            key = f"d{ctx.device}g{ctx.generation}-{next(self._stream_keys)}"
            stream = Stream(handle, ctx.device, self._schedule, key)  # no thread until used
            self._live_streams.add(stream)
            self._objects[handle] = stream
            ctx.streams[handle] = stream
        if self._devices.context_of(ctx.device) is not ctx:
            # Another thread reset the device meanwhile: the context this stream was made in
            # has ended (its reset may or may not have seen the stream; undoing is harmless).
            with self._lock:
                self._objects.pop(handle, None)
                ctx.streams.pop(handle, None)
            self._retire([stream])
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        return ACL_SUCCESS, handle

    def destroy_stream(self, stream: int) -> int:
        """aclrtDestroyStream: NULL 100000; not a live stream 107017; no current device
        107002; another context's stream 107003; else waits for its pending tasks."""
        self._check_open()
        handle = cabi.pointer(stream)
        if handle == 0:
            return ACL_ERROR_INVALID_PARAM
        ctx = self._devices.current()
        with self._lock:
            obj = self._objects.get(handle)
            if not isinstance(obj, Stream):
                return ACL_ERROR_RT_INVALID_HANDLE
            if ctx is None:
                return ACL_ERROR_RT_CONTEXT_NULL
            if handle not in ctx.streams:
                return ACL_ERROR_RT_STREAM_CONTEXT
            del self._objects[handle]
            del ctx.streams[handle]
        result = self._retire([obj])
        return ACL_SUCCESS if result is Wait.DONE else ACL_ERROR_RT_INTERNAL_ERROR

    def synchronize_stream(self, stream: int) -> int:
        """aclrtSynchronizeStream: wait for every task issued before the call.  Another
        device's stream is synchronised too (CANN switches context for it)."""
        self._check_open()
        code, strm, _ = self._stream(stream)
        if strm is None:
            return code
        return self._wait_code(strm, strm.drain())

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        """aclrtSynchronizeStreamWithTimeout: timeout < -1 is 107000 before the handle is
        looked at; then the handle; then timeout == 0 is 107000; -1 waits forever; on
        timeout 507046, and the stream stays usable."""
        self._check_open()
        ms = cabi.int32(timeout)
        if ms < -1:
            return ACL_ERROR_RT_PARAM_INVALID
        code, strm, _ = self._stream(stream)
        if strm is None:
            return code
        if ms == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return self._wait_code(strm, strm.drain(None if ms == -1 else ms / 1000.0))

    def stream_query(self, stream: int) -> tuple[int, int]:
        """aclrtStreamQuery: (0, COMPLETE) or (0, NOT_READY).  Choice: on an error the
        status output is ACL_STREAM_STATUS_RESERVED."""
        self._check_open()
        code, strm, _ = self._stream(stream)
        if strm is None:
            return code, int(StreamStatus.ACL_STREAM_STATUS_RESERVED)
        if strm.idle():
            return ACL_SUCCESS, int(StreamStatus.ACL_STREAM_STATUS_COMPLETE)
        return ACL_SUCCESS, int(StreamStatus.ACL_STREAM_STATUS_NOT_READY)
