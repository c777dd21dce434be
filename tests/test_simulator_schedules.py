"""Simulator: the legal scheduling freedoms (eager, lazy, random) and pinned_read."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from test_simulator_fixtures import open_simulator
from test_simulator_support import D2H
from test_simulator_support import H2D
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym
from test_simulator_support import watchdog

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.simulator.streams import Schedule

SCHEDULES = [
    {"schedule": "eager"},
    {"schedule": "lazy"},
    {"schedule": "random", "seed": 1},
    {"schedule": "random", "seed": 2, "max_delay_ms": 3.0},
    {"schedule": "random", "seed": 3, "pinned_read": "call"},
    {"schedule": "lazy", "pinned_read": "call"},
]


@pytest.fixture
def lazy() -> Iterator[Simulator]:
    yield from open_simulator(schedule="lazy")


@pytest.mark.parametrize("options", SCHEDULES, ids=lambda o: "-".join(map(str, o.values())))
def test_every_schedule_gives_the_ordered_result_after_sync(options: dict[str, object]) -> None:
    with Simulator(**options) as sim, watchdog(sim):  # type: ignore[arg-type]
        assert sim.set_device(0) == 0
        a, b, c, d = (sim.create_stream()[1] for _ in range(4))
        _, e1 = sim.create_event()
        _, e2 = sim.create_event()
        s64 = sym(sim, "g_u64")
        # a: 8 x 'A'; then b (after e1): bytes 2..5 'B'; then c (after e2): byte 3 'C'.
        g = gate(sim, a)
        assert sim.memcpy_to_symbol_async(s64, host(sim, b"A" * 8), 8, 0, H2D, a) == 0
        assert sim.record_event(e1, a) == 0
        assert sim.stream_wait_event(b, e1) == 0
        b_src = host(sim, b"B" * 4, "registered")
        assert sim.memcpy_to_symbol_async(s64, b_src, 4, 2, H2D, b) == 0
        assert sim.record_event(e2, b) == 0
        assert sim.stream_wait_event(c, e2) == 0
        assert sim.memcpy_to_symbol_async(s64, host(sim, b"C"), 1, 3, H2D, c) == 0
        # Unordered streams writing different variables, many small copies each; d is not
        # behind the gate, so its pageable copies (which drain d) return.
        arr256, arr4k = sym(sim, "g_arr256"), sym(sim, "g_arr4k")
        for i in range(40):
            assert sim.memcpy_to_symbol_async(arr256, host(sim, bytes([i])), 1, i, H2D, a) == 0
            src = host(sim, bytes([i]), "pageable" if i % 2 else "pinned")
            assert sim.memcpy_to_symbol_async(arr4k, src, 1, i, H2D, d) == 0
        assert read_var(sim, "g_u64") == initial(sim, "g_u64")  # all behind the gate
        assert sim.open_gate(g) == 0
        assert sim.synchronize_device() == 0
        assert read_var(sim, "g_u64") == b"AABCBBAA"
        assert read_var(sim, "g_arr256", 0, 40) == bytes(range(40))
        assert read_var(sim, "g_arr4k", 0, 40) == bytes(range(40))
        assert read_var(sim, "g_u32") == initial(sim, "g_u32")


def test_lazy_runs_nothing_until_somebody_waits(lazy: Simulator) -> None:
    sim = lazy
    src = host(sim, b"\x5a\x5b", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 2, 0, H2D, 0) == 0
    time.sleep(0.05)
    assert read_var(sim, "g_u32") == initial(sim, "g_u32")
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert read_var(sim, "g_u32")[:2] == b"\x5a\x5b"


@pytest.mark.parametrize(
    "waiter",
    [
        "event_wait",
        "synchronize_event",
        "pageable",
        "destroy",
        "device",
        "reset",
        "timeout",
        "from_pageable",
    ],
)
def test_lazy_every_kind_of_wait_makes_progress(lazy: Simulator, waiter: str) -> None:
    sim = lazy
    _, a = sim.create_stream()
    _, e = sim.create_event()
    src = host(sim, b"\x77", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, a) == 0
    assert sim.record_event(e, a) == 0

    def wait() -> int:
        if waiter == "event_wait":
            _, b = sim.create_stream()
            assert sim.stream_wait_event(b, e) == 0
            return sim.synchronize_stream(b)  # a itself is never synchronised
        if waiter == "synchronize_event":
            return sim.synchronize_event(e)
        if waiter == "pageable":
            return sim.memcpy_to_symbol_async(
                sym(sim, "g_u32"), host(sim, b"xxxx", "pageable"), 4, 0, H2D, a
            )
        if waiter == "from_pageable":
            return sim.memcpy_from_symbol_async(
                host(sim, b"\0", "pageable"), 1, sym(sim, "g_u32"), 1, 0, D2H, a
            )
        if waiter == "destroy":
            return sim.destroy_stream(a)
        if waiter == "device":
            return sim.synchronize_device()
        if waiter == "timeout":
            return sim.synchronize_stream_with_timeout(a, 10_000)
        code = sim.reset_device(0)
        assert sim.set_device(0) == 0
        return code

    assert bounded(sim, wait)[0] == 0
    if waiter != "reset":  # a reset re-initialises the device
        assert read_var(sim, "g_u8") == b"\x77"


def test_eager_runs_tasks_without_being_asked() -> None:
    with Simulator(schedule="eager") as sim:
        assert sim.set_device(0) == 0
        src = host(sim, b"\x13", "pinned")
        assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
        deadline = time.monotonic() + 10
        while read_var(sim, "g_u8") != b"\x13":  # no synchronisation, no query
            assert time.monotonic() < deadline
            time.sleep(0.001)


def test_random_delays_are_seeded() -> None:
    def draws(seed: int, key: str) -> list[float]:
        delay = Schedule("random", seed, 0.001).delays(key)
        assert delay is not None
        return [delay() for _ in range(50)]

    assert draws(7, "s0") == draws(7, "s0")
    assert draws(7, "s0") != draws(8, "s0")
    assert draws(7, "s0") != draws(7, "s1")
    assert all(0.0 <= d <= 0.001 for d in draws(7, "s0"))
    assert any(d == 0.0 for d in draws(7, "s0")) and any(d > 0.0 for d in draws(7, "s0"))
    assert Schedule("eager").delays("s0") is None
    assert Schedule("lazy").delays("s0") is None


def test_unknown_schedule_is_rejected() -> None:
    with pytest.raises(ValueError, match="schedule"):
        Schedule("sometimes")
    with pytest.raises(ValueError, match="schedule"):
        Simulator(schedule="sometimes")
