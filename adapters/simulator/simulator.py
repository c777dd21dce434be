"""The ACL call layer: each contract call, with CANN's checks in CANN's order.

The order of checks and the codes are those of cann-runtime-facts.md
(sections 2, 4, 5 and 7).  Where the facts leave a behaviour open, the choice
made here is marked ``Choice:`` in the method's docstring.

Locking: the handle tables have one lock, held only to look up or change
them, never while waiting; the device table, host memory and each stream
have their own.  Waits (synchronisations, drains) hold no lock.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from acl_conformance.adapters.base import Adapter, Capabilities, FixtureVariable
from acl_conformance.reference_impl.constants import (
    ACL_ERROR_FAILURE,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED,
    ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_INVALID_SYMBOL,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_HOST_REG_IOMEMORY,
    ACL_HOST_REG_MAPPED,
    ACL_HOST_REG_PINNED,
    ACL_HOST_REG_READONLY,
    ACL_SUCCESS,
    FROM_SYMBOL_KINDS,
    HOST_REGISTER_ALIGNMENT,
    SIZE_MAX,
    TO_SYMBOL_KINDS,
    StreamStatus,
)

from . import cabi
from .devices import Context, Devices
from .events import Event, Gate
from .hostmem import HostMemory, Registration
from .layout import DEFAULT_FIXTURES, ByteArray, Layout
from .options import Options, parse
from .streams import Schedule, Stream, Task, Wait
from .symbols import SymbolTable

__version__ = "0.1.0"

# Codes of rt_error_codes.h that constants.py does not list (CANN header values).
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008

HANDLE_BASE = 0x5600_2000_0000
"""Stream and event handles are fake object addresses from here on, one counter for both."""
HANDLE_STEP = 0x200
INVALID_HANDLE = HANDLE_BASE - HANDLE_STEP
"""Below every handle ever issued: never a live stream or event."""

_REGISTER_FLAGS = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY
_REGISTER_FLAGS |= ACL_HOST_REG_PINNED


class SimulatorClosed(RuntimeError):
    """A call was made after ``close()``."""


def _abort_all(streams: set[Stream], gates: dict[int, Gate]) -> None:
    for stream in list(streams):
        stream.abort()
    for gate in list(gates.values()):
        gate.open()


def _copy_task(dst: ByteArray, src: ByteArray) -> Task:
    def run() -> None:
        np.copyto(dst, src)

    return run


class Simulator(Adapter):
    """The bundled backend: an independent, in-process implementation of the ACL calls."""

    name = "sim"
    calls_may_hang = False
    """In-process, and its calls only ever wait for streams, whose gates the suite opens."""

    def __init__(
        self,
        *,
        devices: int | str = 2,
        schedule: str = "eager",
        seed: int | str = 0,
        pinned_read: str = "execute",
        max_delay_ms: float | str = 1.0,
        extra_fixtures: Sequence[tuple[str, int]] | str = (),
        max_streams: int | str = 1984,
        host_limit: int | str = 1 << 32,
        host_reuse: bool | str = False,
        pageable_waits: str = "stream",
        default_stream: bool | str = True,
    ) -> None:
        """Options may be given as values or as strings (see ``from_options``)."""
        self.options: Options = parse(
            {
                "devices": devices,
                "schedule": schedule,
                "seed": seed,
                "pinned_read": pinned_read,
                "max_delay_ms": max_delay_ms,
                "extra_fixtures": extra_fixtures,
                "max_streams": max_streams,
                "host_limit": host_limit,
                "host_reuse": host_reuse,
                "pageable_waits": pageable_waits,
                "default_stream": default_stream,
            }
        )
        opts = self.options
        self.layout = Layout(DEFAULT_FIXTURES + opts.extra_fixtures)
        self._symbols = SymbolTable(self.layout.variables)
        self._schedule = Schedule(opts.schedule, opts.seed, opts.max_delay_ms / 1000.0)
        self._snapshot_source = opts.pinned_read == "call"
        self._host = HostMemory(opts.host_limit, reuse=opts.host_reuse)
        self._lock = threading.Lock()
        self._objects: dict[int, Stream | Event] = {}
        self._gates: dict[int, Gate] = {}
        self._live_streams: set[Stream] = set()
        self._handles = itertools.count(HANDLE_BASE, HANDLE_STEP)
        self._gate_ids = itertools.count(1)
        self._stream_keys = itertools.count()
        self._closed = False
        self._init_count = 0
        self._init_config: str | None = None
        self._devices = Devices(opts.devices, self.layout, self._new_default_stream)
        # A simulator dropped without close() must not leave blocked worker threads behind.
        weakref.finalize(self, _abort_all, self._live_streams, self._gates)

    @classmethod
    def from_options(cls, options: Mapping[str, str] | None = None) -> Simulator:
        """A simulator from string options, e.g. ``{"devices": "2", "schedule": "random"}``.

        ValueError (one line, naming the option) for an unknown option or a bad value.
        """
        raw: dict[str, Any] = dict(options or {})
        parse(raw)  # report unknown names before the keyword call would
        return cls(**raw)

    # -- identity and declarations ------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(
            devices=self.options.devices,
            default_stream=self.options.default_stream,
            events=True,
            host_register=True,
            gate=True,
            threads=True,
        )

    def fixtures(self) -> list[FixtureVariable]:
        return [FixtureVariable(v.name, v.size, v.shadow) for v in self.layout.variables]

    def invalid_handle(self) -> int:
        return INVALID_HANDLE

    def close(self) -> None:
        """Stop every worker thread (tasks not yet run are dropped).  Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            gates = list(self._gates.values())
            streams = list(self._live_streams)
            self._live_streams.clear()
        # Abort first, so that no waiter is told that a task completed; then open the gates,
        # so that a worker blocked on one can see the abort; then join.
        for stream in streams:
            stream.abort()
        for gate in gates:
            gate.open()
        for stream in streams:
            stream.join()

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise SimulatorClosed("the simulator is closed")

    # -- internal helpers ---------------------------------------------------
    def _new_stream(self, handle: int, device: int, key: str) -> Stream:
        stream = Stream(handle, device, self._schedule, key)
        with self._lock:
            self._live_streams.add(stream)
        return stream

    def _new_default_stream(self, device: int, generation: int) -> Stream:
        return self._new_stream(0, device, f"d{device}g{generation}-default")

    def _retire(self, streams: Sequence[Stream]) -> Wait:
        """Wait for every task of ``streams``, then end their workers."""
        result = Wait.DONE
        for stream in streams:
            if stream.retire() is not Wait.DONE:
                result = Wait.STOPPED
            with self._lock:
                self._live_streams.discard(stream)
        return result

    def _stream(self, stream: int) -> tuple[int, Stream | None, Context | None]:
        """Resolve a stream argument: (code, stream, this thread's context).

        NULL is the current context's default stream (107002 without one; 100000 with
        ``default_stream=0``); anything that is not a live stream handle is 107017.
        """
        handle = cabi.pointer(stream)
        ctx = self._devices.current()
        if handle == 0:
            if not self.options.default_stream:
                return ACL_ERROR_INVALID_PARAM, None, ctx
            if ctx is None:
                return ACL_ERROR_RT_CONTEXT_NULL, None, None
            return ACL_SUCCESS, ctx.default_stream, ctx
        with self._lock:
            obj = self._objects.get(handle)
        if not isinstance(obj, Stream):
            return ACL_ERROR_RT_INVALID_HANDLE, None, ctx
        return ACL_SUCCESS, obj, ctx

    def _event(self, event: int) -> Event | None:
        with self._lock:
            obj = self._objects.get(cabi.pointer(event))
        return obj if isinstance(obj, Event) else None

    @staticmethod
    def _submit_check(stream: Stream, ctx: Context | None) -> int:
        """A task submitted to a stream needs a current context, and the stream's own."""
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL
        if stream.device != ctx.device:
            return ACL_ERROR_RT_STREAM_CONTEXT
        return ACL_SUCCESS

    def _pageable_drain(self, stream: Stream) -> int:
        """What a pageable copy waits for before copying: its stream, or with
        ``pageable_waits=device`` every stream of the stream's device."""
        if self.options.pageable_waits == "stream":
            return self._wait_code(stream, stream.drain())
        ctx = self._devices.context_of(stream.device)
        with self._lock:
            others = [] if ctx is None else [ctx.default_stream, *ctx.streams.values()]
        code = ACL_SUCCESS
        for s in [stream, *(o for o in others if o is not stream)]:
            code = self._wait_code(s, s.drain()) or code
        return code

    @staticmethod
    def _wait_code(stream: Stream, result: Wait) -> int:
        if result is Wait.TIMEOUT:
            return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        if result is Wait.STOPPED:
            return ACL_ERROR_RT_INTERNAL_ERROR
        if stream.take_failure() is not None:
            return ACL_ERROR_RT_INTERNAL_ERROR
        return ACL_SUCCESS

    def _symbol_range(
        self, symbol: int, offset: int, count: int
    ) -> tuple[int, Context | None, ByteArray | None]:
        """GetSymbolInfo plus the bounds checks: (code, context, the device bytes addressed).

        Order (MEM:2279-2297): current context (107002), exact symbol (107043),
        ``offset + count`` overflowing size_t (500001), past the end (100000).
        """
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, None, None
        var = self._symbols.lookup(symbol)
        if var is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, None, None
        if offset > SIZE_MAX - count:
            return ACL_ERROR_FAILURE, None, None
        if offset + count > var.size:
            return ACL_ERROR_INVALID_PARAM, None, None
        start = var.offset + offset
        return ACL_SUCCESS, ctx, ctx.memory[start : start + count]

    # -- process and devices -----------------------------------------------
    def init(self, config_path: str | None = None) -> int:
        """aclInit.  Choice: it is reference-counted, a repeat with the same config returns
        100002 and takes a reference, a repeat with a different config returns 100000 and
        does not; nothing else in the simulator needs aclInit (CANN checks it nowhere on
        these paths)."""
        self._check_open()
        with self._lock:
            if self._init_count > 0:
                if config_path != self._init_config:
                    return ACL_ERROR_INVALID_PARAM
                self._init_count += 1
                return ACL_ERROR_REPEAT_INITIALIZE
            self._init_count = 1
            self._init_config = config_path
            return ACL_SUCCESS

    def finalize(self) -> int:
        """aclFinalize: drops one aclInit reference; 100037 when there is none (never
        initialised, or finalised already).  Choice: devices are left as they are."""
        self._check_open()
        with self._lock:
            if self._init_count == 0:
                return ACL_ERROR_REPEAT_FINALIZE
            self._init_count -= 1
            return ACL_SUCCESS

    def get_version_str(self) -> tuple[int, str]:
        return ACL_SUCCESS, f"acl-conformance-simulator {__version__} ({self.options.describe()})"

    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice.  An id out of range is 107001 (ACL_ERROR_RT_INVALID_DEVICEID)."""
        self._check_open()
        device = cabi.int32(device_id)
        if not self._devices.valid(device):
            return ACL_ERROR_RT_INVALID_DEVICEID
        self._devices.set_device(device)
        return ACL_SUCCESS

    def get_device(self) -> tuple[int, int]:
        """aclrtGetDevice: (107002, -1) when this thread has no current device."""
        self._check_open()
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, -1
        return ACL_SUCCESS, ctx.device

    def reset_device(self, device_id: int) -> int:
        """aclrtResetDevice: drop one reference; the last one waits for every pending task of
        the device, destroys its streams and events, and discards its memory (the next
        context starts from the initial pattern).  Choice: resetting a device that holds
        no reference is a no-op returning 0; an id out of range is 107001."""
        self._check_open()
        device = cabi.int32(device_id)
        if not self._devices.valid(device):
            return ACL_ERROR_RT_INVALID_DEVICEID
        ended = self._devices.release(device)
        if ended is None:
            return ACL_SUCCESS
        with self._lock:
            for handle in itertools.chain(ended.streams, ended.events):
                self._objects.pop(handle, None)
        result = self._retire([*ended.streams.values(), ended.default_stream])
        return ACL_SUCCESS if result is Wait.DONE else ACL_ERROR_RT_INTERNAL_ERROR

    def get_device_count(self) -> tuple[int, int]:
        return ACL_SUCCESS, self._devices.count

    def synchronize_device(self) -> int:
        """aclrtSynchronizeDevice: wait for every task issued so far on the current device."""
        self._check_open()
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL
        with self._lock:
            streams = [ctx.default_stream, *ctx.streams.values()]
        targets = [(s, s.issued()) for s in streams]
        code = ACL_SUCCESS
        for stream, seq in targets:
            code = self._wait_code(stream, stream.wait_for(seq)) or code
        return code

    # -- streams ------------------------------------------------------------
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        """aclrtCreateStream.  More than ``max_streams`` per device (the default stream
        included) is 207008 (ACL_ERROR_RT_NO_STREAM_RESOURCE)."""
        self._check_open()
        if null_stream:
            return ACL_ERROR_INVALID_PARAM, 0
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
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

    # -- events -------------------------------------------------------------
    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        """aclrtCreateEvent: NULL output 100000; no current device 107002."""
        self._check_open()
        if null_event:
            return ACL_ERROR_INVALID_PARAM, 0
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        with self._lock:
            handle = next(self._handles)
            event = Event(handle, ctx.device)
            self._objects[handle] = event
            ctx.events[handle] = event
        return ACL_SUCCESS, handle

    def record_event(self, event: int, stream: int) -> int:
        """aclrtRecordEvent: NULL event 100000; then the event handle (107017), then the
        stream (NULL = default; 107002, 107017), then 107003 for another context's stream.
        Choice: an event may be recorded on a stream of another device than the event's."""
        self._check_open()
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM
        evt = self._event(event)
        if evt is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        code = self._submit_check(strm, ctx)
        if code:
            return code
        return ACL_SUCCESS if evt.record(strm) else ACL_ERROR_RT_INVALID_HANDLE

    def stream_wait_event(self, stream: int, event: int) -> int:
        """aclrtStreamWaitEvent: NULL event 100000; then the stream (NULL = default;
        107002, 107017), then the event (107017), then 107003 for another context's
        stream.  The wait captures the event's most recent record now; an event never
        recorded makes the wait a no-op (nothing is enqueued)."""
        self._check_open()
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        evt = self._event(event)
        if evt is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        code = self._submit_check(strm, ctx)
        if code:
            return code
        record = evt.latest()
        if record is None:
            return ACL_SUCCESS
        source, seq = record.stream, record.seq

        def wait() -> None:
            source.wait_for(seq)

        return ACL_SUCCESS if strm.enqueue(wait) is not None else ACL_ERROR_RT_INVALID_HANDLE

    def synchronize_event(self, event: int) -> int:
        """aclrtSynchronizeEvent: wait for the latest record; never recorded: returns 0."""
        self._check_open()
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM
        evt = self._event(event)
        if evt is None:
            return ACL_ERROR_RT_INVALID_HANDLE
        record = evt.latest()
        if record is None:
            return ACL_SUCCESS
        result = record.stream.wait_for(record.seq)
        return ACL_SUCCESS if result is Wait.DONE else ACL_ERROR_RT_INTERNAL_ERROR

    def destroy_event(self, event: int) -> int:
        """aclrtDestroyEvent: NULL 100000; not a live event 107017.  Pending waits on it
        still complete (they hold the record they captured)."""
        self._check_open()
        handle = cabi.pointer(event)
        if handle == 0:
            return ACL_ERROR_INVALID_PARAM
        with self._lock:
            obj = self._objects.get(handle)
            if not isinstance(obj, Event):
                return ACL_ERROR_RT_INVALID_HANDLE
            del self._objects[handle]
        # The device table's lock is never taken while holding ours (set_device takes
        # them in the other order), hence two steps.
        ctx = self._devices.context_of(obj.device)
        if ctx is not None:
            with self._lock:
                ctx.events.pop(handle, None)
        return ACL_SUCCESS

    # -- host memory --------------------------------------------------------
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        """aclrtMallocHost: NULL output or size 0 100000; more than ``host_limit`` 207001."""
        self._check_open()
        n = cabi.size_t(size)
        if null_host_ptr or n == 0:
            return ACL_ERROR_INVALID_PARAM, 0
        address = self._host.allocate(n, pinned=True)
        if address is None:
            return ACL_ERROR_RT_MEMORY_ALLOCATION, 0
        return ACL_SUCCESS, address

    def free_host(self, host_ptr: int) -> int:
        """aclrtFreeHost: NULL 100000.  Choice: a pointer that is not the start of live
        aclrtMallocHost memory is 107000."""
        self._check_open()
        address = cabi.pointer(host_ptr)
        if address == 0:
            return ACL_ERROR_INVALID_PARAM
        if not self._host.free(address, pinned=True):
            return ACL_ERROR_RT_PARAM_INVALID
        return ACL_SUCCESS

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        """malloc: 4096-aligned zero-filled memory; size 0 gives a unique address of an
        empty buffer; more than ``host_limit`` is 207001 (malloc returned NULL)."""
        self._check_open()
        address = self._host.allocate(cabi.size_t(size), pinned=False)
        if address is None:
            return ACL_ERROR_RT_MEMORY_ALLOCATION, 0
        return ACL_SUCCESS, address

    def free_pageable(self, ptr: int) -> int:
        """free: NULL is a no-op (0).  Choice: anything but the start of a live pageable
        buffer is 100000 (C would have undefined behaviour)."""
        self._check_open()
        address = cabi.pointer(ptr)
        if address == 0:
            return ACL_SUCCESS
        return ACL_SUCCESS if self._host.free(address, pinned=False) else ACL_ERROR_INVALID_PARAM

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        """aclrtHostRegisterV2.  Order: NULL pointer, size 0, a flag outside the known bits
        (or 0), a pointer not 4096-aligned: 100000 each; then (choice) a range not inside
        one live host buffer: 107000; then a range overlapping a registered one or lying in
        aclrtMallocHost memory (already page-locked): 507910."""
        self._check_open()
        address, n, flags = cabi.pointer(ptr), cabi.size_t(size), cabi.uint32(flag)
        if address == 0 or n == 0:
            return ACL_ERROR_INVALID_PARAM
        if flags == 0 or flags & ~_REGISTER_FLAGS:
            return ACL_ERROR_INVALID_PARAM
        if address % HOST_REGISTER_ALIGNMENT:
            return ACL_ERROR_INVALID_PARAM
        outcome = self._host.register(address, n)
        if outcome is Registration.OUTSIDE:
            return ACL_ERROR_RT_PARAM_INVALID
        if outcome is Registration.OVERLAP:
            return ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
        return ACL_SUCCESS

    def host_unregister(self, ptr: int) -> int:
        """aclrtHostUnregister: NULL 100000.  Choice: anything but the exact start of a
        registered range (interior pointers included) is 507911."""
        self._check_open()
        address = cabi.pointer(ptr)
        if address == 0:
            return ACL_ERROR_INVALID_PARAM
        if not self._host.unregister(address):
            return ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
        return ACL_SUCCESS

    def write_host(self, dst: int, data: bytes) -> int:
        """Host memcpy into simulated memory: 100000 unless the bytes lie in one live buffer."""
        self._check_open()
        payload = bytes(data)
        view = self._host.view(cabi.pointer(dst), len(payload))
        if view is None:
            return ACL_ERROR_INVALID_PARAM
        view[:] = np.frombuffer(payload, dtype=np.uint8)
        return ACL_SUCCESS

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        """Host memcpy out of simulated memory: (100000, b"") unless in one live buffer."""
        self._check_open()
        view = self._host.view(cabi.pointer(src), cabi.size_t(count))
        if view is None:
            return ACL_ERROR_INVALID_PARAM, b""
        return ACL_SUCCESS, view.tobytes()

    # -- symbols ------------------------------------------------------------
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        """aclrtGetSymbolAddress: NULL symbol, then NULL output, 100000; then 107002 without
        a current device, 107043 unless ``symbol`` is exactly a variable's shadow address."""
        self._check_open()
        sym = cabi.pointer(symbol)
        if sym == 0 or null_dev_ptr:
            return ACL_ERROR_INVALID_PARAM, 0
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        var = self._symbols.lookup(sym)
        if var is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, 0
        return ACL_SUCCESS, self.layout.device_address(ctx.device, var)

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        """aclrtGetSymbolSize: the same checks as aclrtGetSymbolAddress."""
        self._check_open()
        sym = cabi.pointer(symbol)
        if sym == 0 or null_size:
            return ACL_ERROR_INVALID_PARAM, 0
        if self._devices.current() is None:
            return ACL_ERROR_RT_CONTEXT_NULL, 0
        var = self._symbols.lookup(sym)
        if var is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, 0
        return ACL_SUCCESS, var.size

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        """aclrtMemcpyToSymbolAsync.

        Order: ``count == 0`` is 0 before anything else; NULL symbol, NULL src, kind not
        H2D/DEFAULT: 100000; no current device 107002; not a symbol 107043; overflow
        500001; past the end 100000; the stream (NULL = default): not a live stream 107017.
        Then, by the start pointer of ``src``: *pinned* (aclrtMallocHost or registered):
        another context's stream 107003, else a task that reads the source when it runs
        (or at the call, with ``pinned_read="call"``); *pageable*: drain the stream (any
        device's), copy, return.  Choice: a source range that does not lie in one live
        host buffer is 107000, nothing written or enqueued (for pageable: after the drain).
        """
        self._check_open()
        sym, src_ptr = cabi.pointer(symbol), cabi.pointer(src)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        if sym == 0 or src_ptr == 0 or k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        code, _, dst = self._symbol_range(sym, off, n)
        if dst is None:
            return code
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        if self._host.is_pinned(src_ptr):
            code = self._submit_check(strm, ctx)
            if code:
                return code
            source = self._host.view(src_ptr, n)
            if source is None:
                return ACL_ERROR_RT_PARAM_INVALID
            if self._snapshot_source:
                source = source.copy()
            if strm.enqueue(_copy_task(dst, source)) is None:
                return ACL_ERROR_RT_INVALID_HANDLE
            return ACL_SUCCESS
        code = self._pageable_drain(strm)
        if code:
            return code
        source = self._host.view(src_ptr, n)
        if source is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(dst, source)
        return ACL_SUCCESS

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        """aclrtMemcpyToSymbol: the same checks (no stream); the copy is done at the call,
        outside every stream.  Choice: a source not in one live host buffer is 107000."""
        self._check_open()
        sym, src_ptr = cabi.pointer(symbol), cabi.pointer(src)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        if sym == 0 or src_ptr == 0 or k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        code, _, dst = self._symbol_range(sym, off, n)
        if dst is None:
            return code
        source = self._host.view(src_ptr, n)
        if source is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(dst, source)
        return ACL_SUCCESS

    @staticmethod
    def _from_checks(dst: int, dst_max: int, symbol: int, count: int, kind: int) -> int:
        # CheckMemcpyFromSymbol (MEM:2299-2325), in order.
        if symbol == 0 or dst == 0 or count > dst_max or kind not in FROM_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        return ACL_SUCCESS

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        """aclrtMemcpyFromSymbol: ``count == 0`` 0; NULL symbol, NULL dst, count > dstMax,
        kind not D2H/DEFAULT: 100000; then lookup, overflow and bounds as for To*.  Reads
        the device at the call.  Choice: a destination not in one live host buffer is
        107000."""
        self._check_open()
        dst_ptr, sym = cabi.pointer(dst), cabi.pointer(symbol)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        code = self._from_checks(dst_ptr, cabi.size_t(dst_max), sym, n, k)
        if code:
            return code
        code, _, source = self._symbol_range(sym, off, n)
        if source is None:
            return code
        target = self._host.view(dst_ptr, n)
        if target is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(target, source)
        return ACL_SUCCESS

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        """aclrtMemcpyFromSymbolAsync: the checks of aclrtMemcpyFromSymbol, then the stream
        (107017).  Pinned destination: 107003 for another context's stream, else a task
        that reads the device and writes ``dst`` when it runs (``pinned_read`` does not
        apply: the device must be read in stream order).  Pageable: drain, copy, return."""
        self._check_open()
        dst_ptr, sym = cabi.pointer(dst), cabi.pointer(symbol)
        n, off, k = cabi.size_t(count), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        code = self._from_checks(dst_ptr, cabi.size_t(dst_max), sym, n, k)
        if code:
            return code
        code, _, source = self._symbol_range(sym, off, n)
        if source is None:
            return code
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        if self._host.is_pinned(dst_ptr):
            code = self._submit_check(strm, ctx)
            if code:
                return code
            target = self._host.view(dst_ptr, n)
            if target is None:
                return ACL_ERROR_RT_PARAM_INVALID
            if strm.enqueue(_copy_task(target, source)) is None:
                return ACL_ERROR_RT_INVALID_HANDLE
            return ACL_SUCCESS
        code = self._pageable_drain(strm)
        if code:
            return code
        target = self._host.view(dst_ptr, n)
        if target is None:
            return ACL_ERROR_RT_PARAM_INVALID
        np.copyto(target, source)
        return ACL_SUCCESS

    # -- the stream gate ----------------------------------------------------
    def launch_gate(self, stream: int) -> tuple[int, int]:
        """aclrtLaunchHostFunc with a blocking host function: the stream (NULL = default;
        107002, 107017), then 107003 for another context's stream."""
        self._check_open()
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code, 0
        code = self._submit_check(strm, ctx)
        if code:
            return code, 0
        with self._lock:
            gate = Gate(next(self._gate_ids))
            self._gates[gate.id] = gate
        if strm.enqueue(gate.task) is None:
            return ACL_ERROR_RT_INVALID_HANDLE, 0
        return ACL_SUCCESS, gate.id

    def open_gate(self, gate: int) -> int:
        """Open a gate: 0 (also when already open, or after ``close``); 100000 for an id
        that is no gate."""
        with self._lock:
            g = self._gates.get(int(gate))
        if g is None:
            return ACL_ERROR_INVALID_PARAM
        g.open()
        return ACL_SUCCESS

    # -- white-box access for the simulator's own tests (not part of the contract) ----
    def snapshot(self, device: int) -> bytes:
        """The whole device image of ``device`` (guards included) as it is now; the initial
        image if the device has no context."""
        ctx = self._devices.context_of(device)
        return (ctx.memory if ctx is not None else self.layout.image()).tobytes()

    def worker_threads(self) -> list[threading.Thread]:
        """The worker threads of the streams that are still live."""
        with self._lock:
            streams = list(self._live_streams)
        return [t for s in streams if (t := s.thread) is not None and t.is_alive()]
