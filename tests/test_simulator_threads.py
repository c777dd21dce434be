"""Simulator: several host threads calling at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Iterator

import pytest
from test_simulator_fixtures import SCHEDULES
from test_simulator_fixtures import open_simulator
from test_simulator_support import DEFAULT
from test_simulator_support import H2D
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator

THREADS = 4
ROUNDS = 60


@pytest.fixture(params=SCHEDULES)
def sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    yield from open_simulator(set_device=False, schedule=request.param, seed=5, max_delay_ms=0.2)


def run_threads(n: int, body: Callable[[int], None], timeout: float = 30.0) -> None:
    """Run ``body(i)`` on ``n`` threads started together; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def main(i: int) -> None:
        try:
            barrier.wait(timeout)
            body(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=main, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_threads_with_their_own_streams_and_ranges(sim: Simulator) -> None:
    # Thread i works on device i % 2, its own stream, and its own 512-byte slice of g_arr4k.
    results: dict[int, bytes] = {}

    def body(i: int) -> None:
        device = i % 2
        assert sim.set_device(device) == 0
        code, stream = sim.create_stream()
        assert code == 0
        last = b""
        for r in range(ROUNDS):
            data = bytes([(i * 31 + r) & 0xFF]) * 512
            kind = ("pinned", "pageable", "registered")[r % 3]
            src = host(sim, data, kind)
            code = sim.memcpy_to_symbol_async(sym(sim, "g_arr4k"), src, 512, i * 512, H2D, stream)
            assert code == 0
            last = data
        assert sim.synchronize_stream(stream) == 0
        assert sim.destroy_stream(stream) == 0
        results[i] = last

    run_threads(THREADS, body)
    for device in (0, 1):
        assert sim.set_device(device) == 0
        for i in range(THREADS):
            expected = (
                results[i] if i % 2 == device else initial(sim, "g_arr4k")[i * 512 : i * 512 + 512]
            )
            assert read_var(sim, "g_arr4k", i * 512, 512) == expected


def test_threads_sharing_the_default_stream(sim: Simulator) -> None:
    assert sim.set_device(0) == 0

    def body(i: int) -> None:
        assert sim.set_device(0) == 0
        for r in range(ROUNDS):
            src = host(sim, bytes([i + 1, r]), "pinned")
            assert sim.memcpy_to_symbol_async(sym(sim, "g_arr256"), src, 2, i * 2, DEFAULT, 0) == 0
        assert sim.synchronize_stream(0) == 0

    run_threads(THREADS, body)
    assert sim.synchronize_stream(0) == 0
    data = read_var(sim, "g_arr256", 0, THREADS * 2)
    assert data == b"".join(bytes([i + 1, ROUNDS - 1]) for i in range(THREADS))


def test_concurrent_handles_are_unique_and_valid(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    made: list[list[int]] = [[] for _ in range(THREADS)]

    def body(i: int) -> None:
        assert sim.set_device(i % 2) == 0
        for _ in range(25):
            code, s = sim.create_stream()
            assert code == 0
            code, e = sim.create_event()
            assert code == 0
            assert sim.record_event(e, s) == 0
            assert sim.stream_wait_event(0, e) == 0
            assert sim.synchronize_event(e) == 0
            code, p = sim.malloc_host(64)
            assert code == 0
            made[i] += [s, e, p]
            assert sim.destroy_event(e) == 0
            assert sim.destroy_stream(s) == 0
            assert sim.free_host(p) == 0
        assert sim.synchronize_device() == 0

    run_threads(THREADS, body)
    flat = [h for hs in made for h in hs]
    assert len(flat) == len(set(flat))
    assert sim.invalid_handle() not in flat


def test_set_and_reset_from_many_threads_keep_the_reference_count(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    src = host(sim, b"\x3c", "pinned")
    assert sim.memcpy_to_symbol(sym(sim, "g_u8"), src, 1, 0, H2D) == 0

    def body(i: int) -> None:
        for _ in range(30):
            assert sim.set_device(0) == 0
            assert sim.get_symbol_size(sym(sim, "g_u8")) == (0, 1)
            assert sim.reset_device(0) == 0

    run_threads(THREADS, body)
    # The main thread's reference was never dropped: same context, same bytes.
    assert sim.get_device() == (0, 0)
    assert read_var(sim, "g_u8") == b"\x3c"


def test_concurrent_host_memory(sim: Simulator) -> None:
    addresses: list[list[int]] = [[] for _ in range(THREADS)]

    def body(i: int) -> None:
        for r in range(50):
            code, p = sim.malloc_pageable(4096)
            assert code == 0
            assert sim.host_register(p, 4096) == 0
            assert sim.write_host(p, bytes([i, r])) == 0
            assert sim.read_host(p, 2) == (0, bytes([i, r]))
            assert sim.host_unregister(p) == 0
            addresses[i].append(p)
            if r % 2:
                assert sim.free_pageable(p) == 0

    run_threads(THREADS, body)
    flat = [a for xs in addresses for a in xs]
    assert len(flat) == len(set(flat))
