"""A thin adapter: every method of the contract, each handed to a backend.

This template hands every call to the suite's bundled simulator, so that it runs
(and passes) as it is.  A vendor replaces ``self._backend.<call>(...)`` in each
method with the call into their own runtime (ctypes into the shared library, a
pybind11 module, a request to a process that holds the device) and returns what
that call returned: the ``aclError`` integer first, then the outputs C returns
through pointers.  Handles (streams, events, gates) and addresses are plain
integers: pass them through as the runtime gave them, never wrap or check them
here; the suite passes NULL, destroyed handles and garbage on purpose.

See docs/writing-an-adapter.md in acl-conformance for the contract, method by method.
"""

from __future__ import annotations

from collections.abc import Mapping

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED


class TemplateAdapter(Adapter):
    """The template backend: the contract, each call handed on to the bundled simulator."""

    name = "template"

    isolation = "run"
    """One instance serves every test of a worker process.  Say ``"test"`` or ``"example"``
    if your runtime keeps state that a test does not undo (a table that fills up)."""

    calls_may_hang = True
    """A real runtime can hang: the suite then makes each call in a worker thread with a
    time limit (``--call-timeout``; by default at least 10 s, more if your backend shows
    slower calls) and reports a hang as TIMEOUT.  Keep True unless every call of your
    backend is guaranteed to return."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        # Where a vendor opens the runtime: load the library, start the agent process.
        # The template's options are the simulator's (``devices=1`` and so on).
        self._backend = Simulator.from_options(options or {})

    # -- declarations ---------------------------------------------------------
    def capabilities(self) -> Capabilities:
        # Declare only what your runtime really offers: the suite reports the tests that
        # need a missing capability as not supported instead of failing them.
        return self._backend.capabilities()

    def fixtures(self) -> list[FixtureVariable]:
        # The device variables your test binary defines (name, declared size, &var), in
        # the order they are laid out in device memory.
        return self._backend.fixtures()

    def invalid_handle(self) -> int:
        # A non-zero value that is no live stream or event and that your runtime can be
        # handed without crashing.
        return self._backend.invalid_handle()

    def close(self) -> None:
        # Release everything the adapter started (threads, processes).  Idempotent.
        self._backend.close()

    # -- process and devices: aclInit, aclFinalize, aclsysGetVersionStr, aclrt*Device --
    def init(self, config_path: str | None = None) -> int:
        return self._backend.init(config_path)

    def finalize(self) -> int:
        return self._backend.finalize()

    def get_version_str(self) -> tuple[int, str]:
        code, version = self._backend.get_version_str()
        return code, f"template adapter over {version}"

    def set_device(self, device_id: int) -> int:
        return self._backend.set_device(device_id)

    def get_device(self) -> tuple[int, int]:
        return self._backend.get_device()

    def reset_device(self, device_id: int) -> int:
        return self._backend.reset_device(device_id)

    def get_device_count(self) -> tuple[int, int]:
        return self._backend.get_device_count()

    def synchronize_device(self) -> int:
        return self._backend.synchronize_device()

    # -- streams: aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream* ------
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        return self._backend.create_stream(null_stream)

    def destroy_stream(self, stream: int) -> int:
        return self._backend.destroy_stream(stream)

    def synchronize_stream(self, stream: int) -> int:
        return self._backend.synchronize_stream(stream)

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        return self._backend.synchronize_stream_with_timeout(stream, timeout)

    def stream_query(self, stream: int) -> tuple[int, int]:
        return self._backend.stream_query(stream)

    # -- events: aclrtCreateEvent, aclrtRecordEvent, aclrtStreamWaitEvent, ... --------
    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        return self._backend.create_event(null_event)

    def record_event(self, event: int, stream: int) -> int:
        return self._backend.record_event(event, stream)

    def stream_wait_event(self, stream: int, event: int) -> int:
        return self._backend.stream_wait_event(stream, event)

    def synchronize_event(self, event: int) -> int:
        return self._backend.synchronize_event(event)

    def destroy_event(self, event: int) -> int:
        return self._backend.destroy_event(event)

    # -- host memory: aclrtMallocHost, aclrtFreeHost, malloc/free, registration --------
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        return self._backend.malloc_host(size, null_host_ptr)

    def free_host(self, host_ptr: int) -> int:
        return self._backend.free_host(host_ptr)

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        return self._backend.malloc_pageable(size)

    def free_pageable(self, ptr: int) -> int:
        return self._backend.free_pageable(ptr)

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        return self._backend.host_register(ptr, size, flag)

    def host_unregister(self, ptr: int) -> int:
        return self._backend.host_unregister(ptr)

    def write_host(self, dst: int, data: bytes) -> int:
        # memcpy into host memory of the backend's process (for an in-process runtime:
        # ctypes.memmove to the address).
        return self._backend.write_host(dst, data)

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        return self._backend.read_host(src, count)

    # -- symbols: aclrtGetSymbolAddress/Size and the four symbol copies ---------------
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        return self._backend.get_symbol_address(symbol, null_dev_ptr)

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        return self._backend.get_symbol_size(symbol, null_size)

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return self._backend.memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        return self._backend.memcpy_to_symbol(symbol, src, count, offset, kind)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return self._backend.memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return self._backend.memcpy_from_symbol_async(
            dst, dst_max, symbol, count, offset, kind, stream
        )

    # -- the stream gate: a host task that blocks a stream until opened ---------------
    def launch_gate(self, stream: int) -> tuple[int, int]:
        # On CANN: aclrtLaunchHostFunc with a function that waits on a condition variable.
        return self._backend.launch_gate(stream)

    def open_gate(self, gate: int) -> int:
        return self._backend.open_gate(gate)
