"""The simulator's state and what every call shares: handle tables, locks, lookups.

``SimulatorCore`` holds the state (layout, symbol table, host memory, devices,
the handle table of streams and events, the gates) and the lookups every ACL call
makes (a stream argument, an event, a symbol range, the wait codes); the calls
themselves are in the ``calls_*`` modules, one API area each, and ``simulator``
puts them together.

Locking: the handle tables have one lock, held only to look up or change
them, never while waiting; the device table, host memory and each stream
have their own.  Waits (synchronisations, drains) hold no lock.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeVar

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl.constants import ACL_ERROR_FAILURE
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_SYMBOL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import SIZE_MAX

from . import cabi
from .devices import Context
from .devices import Devices
from .events import Event
from .events import Gate
from .hostmem import HostMemory
from .layout import DEFAULT_FIXTURES
from .layout import ByteArray
from .layout import Layout
from .options import Options
from .options import parse
from .streams import Schedule
from .streams import Stream
from .streams import Wait
from .symbols import SymbolTable

__version__ = "0.1.0"

HANDLE_BASE = 0x5600_2000_0000
"""Stream and event handles are fake object addresses from here on, one counter for both."""
HANDLE_STEP = 0x200
INVALID_HANDLE = HANDLE_BASE - HANDLE_STEP
"""Below every handle ever issued: never a live stream or event."""


class SimulatorClosed(RuntimeError):
    """A call was made after ``close()``."""


def _abort_all(streams: set[Stream], gates: dict[int, Gate]) -> None:
    for stream in list(streams):
        stream.abort()
    for gate in list(gates.values()):
        gate.open()


_S = TypeVar("_S", bound="SimulatorCore")


class SimulatorCore(Adapter):
    """The simulator's state and the lookups its calls share.  Abstract: the calls are in the
    ``calls_*`` classes, which ``Simulator`` combines."""

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
        zero_filled: bool | str = False,
        setup_ms: float | str | None = None,
        frees_wait: bool | str | None = None,
        host_funcs_serial: bool | str | None = None,
        pageable_staged: bool | str | None = None,
        device_like: bool | str = False,
        device_ids: Sequence[int] | str = (),
        touch_log: str = "",
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
                "zero_filled": zero_filled,
                "device_like": device_like,
                "device_ids": device_ids,
                "touch_log": touch_log,
                # None: not given (device_like decides); the shorthand never overrides these.
                **{
                    k: v
                    for k, v in {
                        "setup_ms": setup_ms,
                        "frees_wait": frees_wait,
                        "host_funcs_serial": host_funcs_serial,
                        "pageable_staged": pageable_staged,
                    }.items()
                    if v is not None
                },
            }
        )
        opts = self.options
        self.layout = Layout(DEFAULT_FIXTURES + opts.extra_fixtures, zero_filled=opts.zero_filled)
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
        self._devices = Devices(
            len(opts.visible),
            self.layout,
            self._new_default_stream,
            physical=opts.visible,
            touch_log=opts.touch_log,
        )
        self._setup_lock = threading.Lock()
        """``setup_ms``: one context creation at a time."""
        self._host_func_locks = [threading.Lock() for _ in opts.visible]
        """``host_funcs_serial``: held while a host function (gate) of the device runs."""
        # A simulator dropped without close() must not leave blocked worker threads behind.
        weakref.finalize(self, _abort_all, self._live_streams, self._gates)

    @classmethod
    def from_options(cls: type[_S], options: Mapping[str, str] | None = None) -> _S:
        """A simulator from string options, e.g. ``{"devices": "2", "schedule": "random"}``.

        ValueError (one line, naming the option) for an unknown option or a bad value.
        """
        raw: dict[str, Any] = dict(options or {})
        parse(raw)  # report unknown names before the keyword call would
        return cls(**raw)

    # -- identity and declarations ------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(
            devices=len(self.options.visible),
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

    def __enter__(self: _S) -> _S:
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
        """The live event whose handle is ``event``, or None."""
        with self._lock:
            obj = self._objects.get(cabi.pointer(event))
        return obj if isinstance(obj, Event) else None

    def _event_arg(self, event: int) -> tuple[int, Event | None]:
        """Resolve an event argument: (code, event).  NULL is 100000; anything that is not
        a live event handle is 107017."""
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM, None
        evt = self._event(event)
        return (ACL_SUCCESS, evt) if evt is not None else (ACL_ERROR_RT_INVALID_HANDLE, None)

    def _create_context(self, null_output: bool) -> tuple[int, Context | None]:
        """The checks a create call (stream, event) makes first: (code, context).  A NULL
        output is 100000, no current device 107002."""
        if null_output:
            return ACL_ERROR_INVALID_PARAM, None
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, None
        return ACL_SUCCESS, ctx

    def _submit_stream(self, stream: int) -> tuple[int, Stream | None]:
        """Resolve the stream a task is submitted to: ``_stream``, then ``submit_check``.
        (code, stream); the stream is None when the code is an error."""
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code, None
        code = self.submit_check(strm, ctx)
        return (code, None) if code else (ACL_SUCCESS, strm)

    @staticmethod
    def submit_check(stream: Stream, ctx: Context | None) -> int:
        """A task submitted to a stream needs a current context, and the stream's own (the
        variants of adapters/variants override it)."""
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

    def _wait_every_device_idle(self) -> None:
        """``frees_wait``: wait until every stream of every live context has run what was
        issued before now (what freeing page-locked memory does on a device that cannot tell
        which tasks still use it)."""
        targets = []
        for ctx in self._devices.contexts():
            with self._lock:
                streams = [ctx.default_stream, *ctx.streams.values()]
            targets += [(s, s.issued()) for s in streams]
        for stream, seq in targets:
            stream.wait_for(seq)

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
