"""The contract every backend meets: one method per ACL call, close to the C API.

Each method is the snake_case name of the C call (see
``acl_conformance.reference_impl.calls.CALLS`` for the C function each stands
for) and returns the ``aclError`` integer, plus the call's outputs where C has
out-parameters: ``create_stream() -> (code, stream)``.  Arguments and outputs
are plain integers (stream, event and gate handles; host addresses; device
addresses), bytes and strings, so that

- NULL (0), a destroyed handle, garbage, an interior pointer or an
  unregistered host address can be passed on purpose, and
- every call is a record (name, arguments, result) that can be logged, sent
  over a pipe, replayed and printed as C.

A backend declares its :class:`Capabilities` and its fixture variables (the
device variables it holds: a real backend cannot declare new ones at run time).

The suite always talks to a backend through :class:`Traced`, which records the
trace of calls.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED


class CallTimeout(Exception):
    """Raised by an adapter that enforces its own time limit on a call (a backend in
    another process, say) when the call did not answer in time: the suite reports
    TIMEOUT.  Any other exception from an adapter call is reported as CRASH."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers; the suite skips, with a reason, what it does not."""

    devices: int = 1
    """How many devices the suite may use (each holds its own instance of every variable)."""
    default_stream: bool = True
    """NULL means the current device's default stream."""
    events: bool = True
    host_register: bool = True
    gate: bool = True
    """launch_gate / open_gate: a host task that blocks a stream until opened."""
    threads: bool = True
    """Several host threads may call at once."""
    symbol_apis: bool = True
    """The backend has the symbol APIs (aclrtMemcpyToSymbolAsync and its siblings).  A
    release without them (CANN before 9.1.0; its ACL version number does not tell) says
    False, and every requirement is reported not supported."""


@dataclass(frozen=True)
class FixtureVariable:
    """A device variable the backend holds: its name, declared size and host shadow address."""

    name: str
    size: int
    address: int
    """The host shadow address, ``&var`` in C: what aclrtMemcpyToSymbolAsync takes as symbol."""


class Adapter(ABC):
    """One backend.  Every method returns the aclError code first."""

    name: str = "adapter"

    isolation: str = "run"
    """How long one instance of the backend may serve the suite: ``"run"`` (one per worker
    process: every test of the worker, each example and shrink step), ``"test"`` (a fresh
    instance for each test), ``"example"`` (a fresh one for every harness: each Hypothesis
    example and shrink step).  A backend whose state outlives a test (a per-process table
    that fills up, a leak) must not fail a later test: such a backend asks for more
    isolation, at the cost of starting it more often."""

    calls_may_hang: bool = True
    """Whether a call can fail to return (a real runtime, a driver, a third-party backend).
    The suite then makes every call in a worker thread of its own with a time limit, so
    a hang becomes TIMEOUT.  An in-process backend whose calls only ever wait for the
    suite's own gates (the bundled simulator) says False and is called directly."""

    # -- identity and declarations ------------------------------------------
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abstractmethod
    def fixtures(self) -> list[FixtureVariable]:
        """The device variables, in the order they are laid out in device memory (so that
        the suite knows each one's neighbour)."""

    @abstractmethod
    def invalid_handle(self) -> int:
        """A non-zero integer that is neither a live stream nor a live event, and that
        the backend can be handed without crashing (for CANN: readable memory holding
        a wrong magic)."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release everything (threads, processes).  Idempotent."""

    # -- process and devices -----------------------------------------------
    @abstractmethod
    def init(self, config_path: str | None = None) -> int: ...

    @abstractmethod
    def finalize(self) -> int: ...

    @abstractmethod
    def get_version_str(self) -> tuple[int, str]: ...

    @abstractmethod
    def set_device(self, device_id: int) -> int: ...

    @abstractmethod
    def get_device(self) -> tuple[int, int]: ...

    @abstractmethod
    def reset_device(self, device_id: int) -> int: ...

    @abstractmethod
    def get_device_count(self) -> tuple[int, int]: ...

    @abstractmethod
    def synchronize_device(self) -> int: ...

    # -- streams ------------------------------------------------------------
    @abstractmethod
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        """``null_stream``: pass NULL as the output pointer."""

    @abstractmethod
    def destroy_stream(self, stream: int) -> int: ...

    @abstractmethod
    def synchronize_stream(self, stream: int) -> int: ...

    @abstractmethod
    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int: ...

    @abstractmethod
    def stream_query(self, stream: int) -> tuple[int, int]:
        """(code, aclrtStreamStatus)."""

    # -- events -------------------------------------------------------------
    @abstractmethod
    def create_event(self, null_event: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def record_event(self, event: int, stream: int) -> int: ...

    @abstractmethod
    def stream_wait_event(self, stream: int, event: int) -> int: ...

    @abstractmethod
    def synchronize_event(self, event: int) -> int: ...

    @abstractmethod
    def destroy_event(self, event: int) -> int: ...

    # -- host memory --------------------------------------------------------
    @abstractmethod
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        """aclrtMallocHost: (code, address of page-locked memory)."""

    @abstractmethod
    def free_host(self, host_ptr: int) -> int: ...

    @abstractmethod
    def malloc_pageable(self, size: int) -> tuple[int, int]:
        """Ordinary (pageable) host memory, as malloc gives: (0, address), or an error."""

    @abstractmethod
    def free_pageable(self, ptr: int) -> int: ...

    @abstractmethod
    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        """aclrtHostRegisterV2(ptr, size, flag): page-lock pageable memory."""

    @abstractmethod
    def host_unregister(self, ptr: int) -> int: ...

    @abstractmethod
    def write_host(self, dst: int, data: bytes) -> int:
        """Store ``data`` at host address ``dst`` (memcpy on the host side)."""

    @abstractmethod
    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        """Load ``count`` bytes from host address ``src``."""

    # -- symbols ------------------------------------------------------------
    @abstractmethod
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int: ...

    @abstractmethod
    def memcpy_to_symbol(
        self, symbol: int, src: int, count: int, offset: int, kind: int
    ) -> int: ...

    @abstractmethod
    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int: ...

    @abstractmethod
    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int: ...

    # -- the stream gate ----------------------------------------------------
    @abstractmethod
    def launch_gate(self, stream: int) -> tuple[int, int]:
        """Enqueue on ``stream`` a host task that blocks it until ``open_gate``: (code, gate)."""

    @abstractmethod
    def open_gate(self, gate: int) -> int: ...


# Output names of the calls that return more than a code, in the order of the tuple.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "get_version_str": ("version",),
    "get_device": ("device_id",),
    "get_device_count": ("count",),
    "create_stream": ("stream",),
    "stream_query": ("status",),
    "create_event": ("event",),
    "malloc_host": ("host_ptr",),
    "malloc_pageable": ("ptr",),
    "read_host": ("data",),
    "get_symbol_address": ("dev_ptr",),
    "get_symbol_size": ("size",),
    "launch_gate": ("gate",),
}

CONTRACT_CALLS: tuple[str, ...] = tuple(
    name
    for name, member in vars(Adapter).items()
    if getattr(member, "__isabstractmethod__", False)
    and name not in ("capabilities", "fixtures", "invalid_handle")
)
"""The names of the ACL (and helper) calls of the contract."""


@dataclass
class CallRecord:
    """One call as made: what was asked, what came back, when, from which thread."""

    seq: int
    name: str
    args: dict[str, Any]
    code: int | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    thread: int = 0
    started: float = 0.0
    ended: float = 0.0
    error: str | None = None
    """Set when the adapter raised instead of answering."""

    def to_json(self) -> dict[str, Any]:
        def enc(v: Any) -> Any:
            if isinstance(v, (bytes, bytearray, memoryview)):
                return {"hex": bytes(v).hex()}
            return v

        return {
            "seq": self.seq,
            "name": self.name,
            "args": {k: enc(v) for k, v in self.args.items()},
            "code": self.code,
            "outputs": {k: enc(v) for k, v in self.outputs.items()},
            "thread": self.thread,
            "started": self.started,
            "ended": self.ended,
            "error": self.error,
        }


class Traced(Adapter):
    """Wraps an adapter and records every call it makes (thread-safe)."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls_may_hang = inner.calls_may_hang
        self.trace: list[CallRecord] = []
        self.lock = threading.Lock()
        """Held while the trace changes."""
        self._threads: dict[int, int] = {}

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def fixtures(self) -> list[FixtureVariable]:
        return self.inner.fixtures()

    def invalid_handle(self) -> int:
        return self.inner.invalid_handle()

    def close(self) -> None:
        self.inner.close()

    def _thread_no(self) -> int:
        ident = threading.get_ident()
        with self.lock:
            return self._threads.setdefault(ident, len(self._threads))

    def _call(self, name: str, fn: Callable[..., Any], **args: Any) -> Any:
        rec = CallRecord(0, name, dict(args), thread=self._thread_no())
        with self.lock:
            rec.seq = len(self.trace) + 1
            self.trace.append(rec)
        rec.started = time.monotonic()
        try:
            result = fn(**args)
        except BaseException as exc:
            rec.ended = time.monotonic()
            rec.error = f"{type(exc).__name__}: {exc}"
            raise
        rec.ended = time.monotonic()
        if isinstance(result, tuple):
            rec.code = int(result[0])
            rec.outputs = dict(zip(OUTPUTS.get(name, ()), result[1:], strict=False))
        else:
            rec.code = int(result)
        return result

    def init(self, config_path: str | None = None) -> int:
        return int(self._call("init", self.inner.init, config_path=config_path))

    def finalize(self) -> int:
        return int(self._call("finalize", self.inner.finalize))

    def get_version_str(self) -> tuple[int, str]:
        r: tuple[int, str] = self._call("get_version_str", self.inner.get_version_str)
        return r

    def set_device(self, device_id: int) -> int:
        return int(self._call("set_device", self.inner.set_device, device_id=device_id))

    def get_device(self) -> tuple[int, int]:
        r: tuple[int, int] = self._call("get_device", self.inner.get_device)
        return r

    def reset_device(self, device_id: int) -> int:
        return int(self._call("reset_device", self.inner.reset_device, device_id=device_id))

    def get_device_count(self) -> tuple[int, int]:
        r: tuple[int, int] = self._call("get_device_count", self.inner.get_device_count)
        return r

    def synchronize_device(self) -> int:
        return int(self._call("synchronize_device", self.inner.synchronize_device))

    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        r: tuple[int, int] = self._call(
            "create_stream", self.inner.create_stream, null_stream=null_stream
        )
        return r

    def destroy_stream(self, stream: int) -> int:
        return int(self._call("destroy_stream", self.inner.destroy_stream, stream=stream))

    def synchronize_stream(self, stream: int) -> int:
        return int(self._call("synchronize_stream", self.inner.synchronize_stream, stream=stream))

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        return int(
            self._call(
                "synchronize_stream_with_timeout",
                self.inner.synchronize_stream_with_timeout,
                stream=stream,
                timeout=timeout,
            )
        )

    def stream_query(self, stream: int) -> tuple[int, int]:
        r: tuple[int, int] = self._call("stream_query", self.inner.stream_query, stream=stream)
        return r

    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        r: tuple[int, int] = self._call(
            "create_event", self.inner.create_event, null_event=null_event
        )
        return r

    def record_event(self, event: int, stream: int) -> int:
        return int(self._call("record_event", self.inner.record_event, event=event, stream=stream))

    def stream_wait_event(self, stream: int, event: int) -> int:
        return int(
            self._call(
                "stream_wait_event", self.inner.stream_wait_event, stream=stream, event=event
            )
        )

    def synchronize_event(self, event: int) -> int:
        return int(self._call("synchronize_event", self.inner.synchronize_event, event=event))

    def destroy_event(self, event: int) -> int:
        return int(self._call("destroy_event", self.inner.destroy_event, event=event))

    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        r: tuple[int, int] = self._call(
            "malloc_host", self.inner.malloc_host, size=size, null_host_ptr=null_host_ptr
        )
        return r

    def free_host(self, host_ptr: int) -> int:
        return int(self._call("free_host", self.inner.free_host, host_ptr=host_ptr))

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        r: tuple[int, int] = self._call("malloc_pageable", self.inner.malloc_pageable, size=size)
        return r

    def free_pageable(self, ptr: int) -> int:
        return int(self._call("free_pageable", self.inner.free_pageable, ptr=ptr))

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        return int(
            self._call("host_register", self.inner.host_register, ptr=ptr, size=size, flag=flag)
        )

    def host_unregister(self, ptr: int) -> int:
        return int(self._call("host_unregister", self.inner.host_unregister, ptr=ptr))

    def write_host(self, dst: int, data: bytes) -> int:
        return int(self._call("write_host", self.inner.write_host, dst=dst, data=bytes(data)))

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        r: tuple[int, bytes] = self._call("read_host", self.inner.read_host, src=src, count=count)
        return r

    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        r: tuple[int, int] = self._call(
            "get_symbol_address",
            self.inner.get_symbol_address,
            symbol=symbol,
            null_dev_ptr=null_dev_ptr,
        )
        return r

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        r: tuple[int, int] = self._call(
            "get_symbol_size", self.inner.get_symbol_size, symbol=symbol, null_size=null_size
        )
        return r

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return int(
            self._call(
                "memcpy_to_symbol_async",
                self.inner.memcpy_to_symbol_async,
                symbol=symbol,
                src=src,
                count=count,
                offset=offset,
                kind=kind,
                stream=stream,
            )
        )

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        return int(
            self._call(
                "memcpy_to_symbol",
                self.inner.memcpy_to_symbol,
                symbol=symbol,
                src=src,
                count=count,
                offset=offset,
                kind=kind,
            )
        )

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return int(
            self._call(
                "memcpy_from_symbol",
                self.inner.memcpy_from_symbol,
                dst=dst,
                dst_max=dst_max,
                symbol=symbol,
                count=count,
                offset=offset,
                kind=kind,
            )
        )

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return int(
            self._call(
                "memcpy_from_symbol_async",
                self.inner.memcpy_from_symbol_async,
                dst=dst,
                dst_max=dst_max,
                symbol=symbol,
                count=count,
                offset=offset,
                kind=kind,
                stream=stream,
            )
        )

    def launch_gate(self, stream: int) -> tuple[int, int]:
        r: tuple[int, int] = self._call("launch_gate", self.inner.launch_gate, stream=stream)
        return r

    def open_gate(self, gate: int) -> int:
        return int(self._call("open_gate", self.inner.open_gate, gate=gate))
