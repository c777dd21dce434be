"""Helpers shared by the simulator's tests (no tests here).

Every blocking call a test makes goes through :func:`bounded`, so that a
simulator bug makes the test fail after a timeout instead of hanging; gates
are opened from timers with :class:`OpenLater`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import MemcpyKind

H2D = int(MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)
D2H = int(MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
DEFAULT = int(MemcpyKind.ACL_MEMCPY_DEFAULT)

HANG = 20.0
"""Seconds after which a blocking call is declared hung (generous: loaded 2-core CI)."""

T = TypeVar("T")


def symbols(sim: Simulator) -> dict[str, FixtureVariable]:
    return {v.name: v for v in sim.fixtures()}


def sym(sim: Simulator, name: str) -> int:
    return symbols(sim)[name].address


def expected_pattern(index: int, size: int) -> bytes:
    """The documented initial bytes of fixture number ``index`` (computed independently)."""
    return bytes((index * 37 + i * 11 + 0x5A) & 0xFF for i in range(size))


def initial(sim: Simulator, name: str) -> bytes:
    names = [v.name for v in sim.fixtures()]
    return expected_pattern(names.index(name), symbols(sim)[name].size)


def host(sim: Simulator, data: bytes, memory: str = "pinned") -> int:
    """A host buffer holding ``data``: ``pinned`` (aclrtMallocHost), ``pageable`` or
    ``registered`` (pageable, then aclrtHostRegisterV2)."""
    size = max(len(data), 1)
    if memory == "pinned":
        code, ptr = sim.malloc_host(size)
    else:
        code, ptr = sim.malloc_pageable(size)
    assert code == 0
    if memory == "registered":
        assert sim.host_register(ptr, size) == 0
    assert sim.write_host(ptr, data) == 0
    return ptr


def read_var(sim: Simulator, name: str, offset: int = 0, count: int | None = None) -> bytes:
    """The current bytes of a variable on the current device (aclrtMemcpyFromSymbol)."""
    size = symbols(sim)[name].size
    n = size - offset if count is None else count
    code, buf = sim.malloc_pageable(n)
    assert code == 0
    assert sim.memcpy_from_symbol(buf, n, sym(sim, name), n, offset, D2H) == 0
    code, data = sim.read_host(buf, n)
    assert code == 0
    assert sim.free_pageable(buf) == 0
    return data


@contextmanager
def watchdog(sim: Simulator, timeout: float = HANG) -> Iterator[None]:
    """Fail the test if the block takes longer than ``timeout`` seconds: the watchdog then
    closes the simulator, which releases every wait, so the test fails instead of hanging."""
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        sim.close()

    timer = threading.Timer(timeout, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
    if fired.is_set():
        pytest.fail(f"a call blocked for more than {timeout} s (the watchdog closed the simulator)")


def bounded(sim: Simulator, fn: Callable[[], T], timeout: float = HANG) -> tuple[T, float]:
    """Call ``fn`` on this thread under a watchdog: its result and the monotonic time it
    returned."""
    with watchdog(sim, timeout):
        result = fn()
        at = time.monotonic()
    return result, at


class OpenLater:
    """Open ``gate`` from a timer after ``delay`` seconds; ``opened_at`` is the monotonic
    time just before opening (None until then)."""

    def __init__(self, sim: Simulator, gate: int, delay: float) -> None:
        self.opened_at: float | None = None
        self._sim = sim
        self._gate = gate
        self._timer = threading.Timer(delay, self._open)
        self._timer.daemon = True
        self._timer.start()

    def _open(self) -> None:
        self.opened_at = time.monotonic()
        self._sim.open_gate(self._gate)

    def cancel(self) -> None:
        self._timer.cancel()


def gate(sim: Simulator, stream: int = 0) -> int:
    code, g = sim.launch_gate(stream)
    assert code == 0
    return g


# -- white-box views of a simulator (not part of the contract) ---------------------------------
def device_image(sim: Simulator, device: int) -> bytes:
    """The whole device image of ``device`` (guards included) as it is now; the initial
    image if the device has no context."""
    ctx = sim._devices.context_of(device)
    return (ctx.memory if ctx is not None else sim.layout.image()).tobytes()


def worker_threads(sim: Simulator) -> list[threading.Thread]:
    """The worker threads of the simulator's streams that are still live."""
    with sim._lock:
        streams = list(sim._live_streams)
    return [t for s in streams if (t := s.thread) is not None and t.is_alive()]
