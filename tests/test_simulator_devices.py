"""Simulator: devices, contexts, init/finalize, identity, options and lifetime."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from test_simulator_fixtures import open_simulator
from test_simulator_support import H2D
from test_simulator_support import OpenLater
from test_simulator_support import bounded
from test_simulator_support import device_image
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym
from test_simulator_support import worker_threads

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.simulator import SimulatorClosed
from acl_conformance.adapters.traced import Traced
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_REPEAT_FINALIZE
from acl_conformance.reference_impl.constants import ACL_ERROR_REPEAT_INITIALIZE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE

INVALID_DEVICE = 107001


@pytest.fixture
def sim() -> Iterator[Simulator]:
    yield from open_simulator(set_device=False)


def in_thread(fn: object) -> object:
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()))  # type: ignore[operator]
    t.start()
    t.join(20)
    assert out, "thread did not finish"
    return out[0]


# -- devices -------------------------------------------------------------------------------
def test_device_count_and_capabilities(sim: Simulator) -> None:
    assert sim.get_device_count() == (0, 2)
    assert sim.capabilities() == Capabilities(
        devices=2, default_stream=True, events=True, host_register=True, gate=True, threads=True
    )
    with Simulator(devices=3) as s3:
        assert s3.get_device_count() == (0, 3)
        assert s3.capabilities().devices == 3
        assert s3.set_device(2) == 0


@pytest.mark.parametrize("device", [-1, 2, 3, 2**31 - 1, -(2**31)])
def test_set_and_reset_device_out_of_range(sim: Simulator, device: int) -> None:
    assert sim.set_device(device) == INVALID_DEVICE
    assert sim.reset_device(device) == INVALID_DEVICE
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)


def test_get_device(sim: Simulator) -> None:
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert sim.set_device(1) == 0
    assert sim.get_device() == (0, 1)
    assert sim.set_device(0) == 0
    assert sim.get_device() == (0, 0)


def test_current_device_is_per_thread(sim: Simulator) -> None:
    assert sim.set_device(1) == 0
    assert in_thread(sim.get_device) == (ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert in_thread(lambda: (sim.set_device(0), sim.get_device())) == (0, (0, 0))
    assert sim.get_device() == (0, 1)


def test_each_device_has_its_own_instance(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    src = host(sim, b"\x01\x02\x03\x04", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0) == 0
    assert sim.synchronize_stream(0) == 0
    assert read_var(sim, "g_u32") == b"\x01\x02\x03\x04"
    assert sim.set_device(1) == 0
    assert read_var(sim, "g_u32") == initial(sim, "g_u32")
    assert sim.memcpy_to_symbol(sym(sim, "g_u32"), src, 2, 2, H2D) == 0
    assert read_var(sim, "g_u32") == initial(sim, "g_u32")[:2] + b"\x01\x02"
    assert sim.set_device(0) == 0
    assert read_var(sim, "g_u32") == b"\x01\x02\x03\x04"


def test_default_stream_is_shared_by_threads_of_one_device(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    g = gate(sim)

    def other() -> tuple[int, int]:
        assert sim.set_device(0) == 0
        return sim.stream_query(0)

    assert in_thread(other) == (0, 1)  # NOT_READY: the same default stream, held by the gate
    assert sim.open_gate(g) == 0
    assert sim.synchronize_stream(0) == 0


def test_default_streams_of_two_devices_are_distinct(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    g = gate(sim)
    assert sim.set_device(1) == 0
    assert sim.stream_query(0) == (0, 0)
    assert sim.set_device(0) == 0
    assert sim.stream_query(0) == (0, 1)
    sim.open_gate(g)


def test_reset_reinitialises_the_device_and_ends_its_objects(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    src = host(sim, b"\xee" * 4, "pinned")
    assert sim.memcpy_to_symbol(sym(sim, "g_u32"), src, 4, 0, H2D) == 0
    _, stream = sim.create_stream()
    _, event = sim.create_event()
    assert sim.reset_device(0) == 0
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert sim.memcpy_to_symbol(sym(sim, "g_u32"), src, 4, 0, H2D) == ACL_ERROR_RT_CONTEXT_NULL
    assert sim.synchronize_stream(stream) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.synchronize_event(event) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.set_device(0) == 0
    assert read_var(sim, "g_u32") == initial(sim, "g_u32")
    assert sim.synchronize_stream(stream) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.destroy_event(event) == ACL_ERROR_RT_INVALID_HANDLE


def test_reset_is_reference_counted(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    assert sim.set_device(0) == 0
    src = host(sim, b"\x01", "pinned")
    assert sim.memcpy_to_symbol(sym(sim, "g_u8"), src, 1, 0, H2D) == 0
    assert sim.reset_device(0) == 0
    assert sim.get_device() == (0, 0)
    assert read_var(sim, "g_u8") == b"\x01"
    assert sim.reset_device(0) == 0
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert sim.reset_device(0) == 0  # no reference left: a no-op


def test_reset_of_a_device_never_set_is_a_noop(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    assert sim.reset_device(1) == 0
    assert sim.get_device() == (0, 0)


def test_reset_by_another_thread_ends_this_threads_context(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    assert in_thread(lambda: sim.reset_device(0)) == 0
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert sim.create_stream() == (ACL_ERROR_RT_CONTEXT_NULL, 0)
    # A new context made by another thread does not revive this thread's old one.
    assert in_thread(lambda: sim.set_device(0)) == 0
    assert sim.get_device() == (ACL_ERROR_RT_CONTEXT_NULL, -1)


def test_reset_waits_for_pending_tasks(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    _, stream = sim.create_stream()
    g = gate(sim, stream)
    opener = OpenLater(sim, g, 0.4)
    started = time.monotonic()
    code, returned = bounded(sim, lambda: sim.reset_device(0))
    assert code == 0
    assert opener.opened_at is not None and started < opener.opened_at <= returned


def test_synchronize_device(sim: Simulator) -> None:
    assert sim.synchronize_device() == ACL_ERROR_RT_CONTEXT_NULL
    assert sim.set_device(0) == 0
    assert sim.synchronize_device() == 0
    _, a = sim.create_stream()
    src = host(sim, b"\x08" * 8, "pinned")
    g = gate(sim, a)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u64"), src, 8, 0, H2D, a) == 0
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0) == 0
    opener = OpenLater(sim, g, 0.4)
    started = time.monotonic()
    code, returned = bounded(sim, sim.synchronize_device)
    assert code == 0
    assert opener.opened_at is not None and started < opener.opened_at <= returned
    assert read_var(sim, "g_u64") == b"\x08" * 8
    assert read_var(sim, "g_u32") == b"\x08" * 4


def test_synchronize_device_ignores_other_devices(sim: Simulator) -> None:
    assert sim.set_device(1) == 0
    g = gate(sim)
    assert sim.set_device(0) == 0
    assert bounded(sim, sim.synchronize_device)[0] == 0
    sim.open_gate(g)


def test_device_memory_is_loaded_lazily_and_per_device(sim: Simulator) -> None:
    assert sim._devices.context_of(1) is None
    assert sim.set_device(0) == 0
    assert sim._devices.context_of(1) is None
    assert device_image(sim, 1) == device_image(sim, 0)  # both the initial image


# -- init / finalize, identity ------------------------------------------------------------------
def test_init_and_finalize(sim: Simulator) -> None:
    assert sim.finalize() == ACL_ERROR_REPEAT_FINALIZE
    assert sim.init() == 0
    assert sim.init() == ACL_ERROR_REPEAT_INITIALIZE
    assert sim.init("other.json") == ACL_ERROR_INVALID_PARAM
    assert sim.finalize() == 0
    assert sim.finalize() == 0
    assert sim.finalize() == ACL_ERROR_REPEAT_FINALIZE
    assert sim.init("cfg.json") == 0
    assert sim.init("cfg.json") == ACL_ERROR_REPEAT_INITIALIZE
    assert sim.init(None) == ACL_ERROR_INVALID_PARAM


def test_calls_do_not_need_init(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    assert sim.get_symbol_size(sym(sim, "g_u8")) == (0, 1)


def test_version_string(sim: Simulator) -> None:
    code, version = sim.get_version_str()
    assert code == 0
    assert version.startswith("acl-conformance-simulator 0.1.0 ")
    assert "schedule=eager" in version and "pinned_read=execute" in version
    with Simulator(schedule="random", seed=9) as s:
        assert "seed=9" in s.get_version_str()[1]


def test_invalid_handle_is_never_a_live_handle(sim: Simulator) -> None:
    bad = sim.invalid_handle()
    assert bad != 0
    assert sim.set_device(0) == 0
    handles = [sim.create_stream()[1] for _ in range(50)] + [
        sim.create_event()[1] for _ in range(50)
    ]
    assert bad not in handles
    assert sim.synchronize_stream(bad) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.synchronize_event(bad) == ACL_ERROR_RT_INVALID_HANDLE


def test_is_an_adapter_and_traceable(sim: Simulator) -> None:
    assert isinstance(sim, Adapter)
    traced = Traced(sim)
    assert traced.set_device(0) == 0
    assert traced.stream_query(0) == (0, 0)
    assert [r.name for r in traced.trace] == ["set_device", "stream_query"]
    assert traced.trace[1].outputs == {"status": 0}


# -- options -----------------------------------------------------------------------------
def test_from_options_parses_strings() -> None:
    with Simulator.from_options(
        {"devices": "3", "schedule": "random", "seed": "7", "pinned_read": "call"}
    ) as s:
        assert s.options.devices == 3
        assert s.options.schedule == "random" and s.options.seed == 7
        assert s.options.pinned_read == "call"
    with Simulator.from_options({}) as s:
        assert s.options.devices == 2 and s.options.schedule == "eager"
    with Simulator.from_options(None) as s:
        assert s.options.pinned_read == "execute"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"devcies": "2"}, "unknown simulator option 'devcies'"),
        ({"devices": "two"}, "devices='two'"),
        ({"devices": "0"}, "devices=0"),
        ({"schedule": "fast"}, "schedule='fast'"),
        ({"pinned_read": "never"}, "pinned_read='never'"),
        ({"seed": "1.5"}, "seed='1.5'"),
        ({"max_delay_ms": "-1"}, "max_delay_ms"),
        ({"extra_fixtures": "g_x"}, "extra_fixtures"),
        ({"extra_fixtures": "g_u8:4"}, "standard fixture"),
        ({"extra_fixtures": "g_x:0"}, "size 0"),
        ({"extra_fixtures": "2x:4"}, "not a C identifier"),
        ({"extra_fixtures": "g_x:4,g_x:8"}, "duplicate"),
    ],
)
def test_bad_options_raise_one_line_value_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Simulator.from_options(options)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_extra_fixtures() -> None:
    with Simulator(extra_fixtures="g_bench:100,g_more:3") as s:
        names = [v.name for v in s.fixtures()]
        assert names[-2:] == ["g_bench", "g_more"]
        assert s.set_device(0) == 0
        assert s.get_symbol_size(sym(s, "g_bench")) == (0, 100)
        assert read_var(s, "g_more") == initial(s, "g_more")
    with Simulator(extra_fixtures=[("g_b", 16)]) as s:
        assert s.fixtures()[-1].size == 16


# -- lifetime ---------------------------------------------------------------------------------
def test_close_stops_every_worker_and_is_idempotent() -> None:
    sim = Simulator(schedule="lazy")
    assert sim.set_device(0) == 0
    streams = [sim.create_stream()[1] for _ in range(4)]
    src = host(sim, b"\x01", "pinned")
    for s in streams:
        assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    gate(sim, streams[0])  # a worker blocked on a closed gate
    assert sim.stream_query(streams[0])[0] == 0  # (lazy) demand it, so the worker blocks
    _, e = sim.create_event()
    assert sim.record_event(e, streams[0]) == 0
    assert sim.stream_wait_event(streams[1], e) == 0
    assert sim.stream_query(streams[1])[0] == 0  # a worker blocked on another stream
    threads = worker_threads(sim)
    assert len(threads) >= 4
    t0 = time.monotonic()
    sim.close()
    assert time.monotonic() - t0 < 5
    assert not any(t.is_alive() for t in threads)
    assert worker_threads(sim) == []
    sim.close()
    with pytest.raises(SimulatorClosed):
        sim.set_device(0)
    assert sim.open_gate(1) == 0  # a timer firing after close must not fail


def test_close_releases_a_blocked_waiter() -> None:
    sim = Simulator()
    assert sim.set_device(0) == 0
    gate(sim)
    timer = threading.Timer(0.2, sim.close)
    timer.start()
    assert sim.synchronize_stream(0) == 507000
    timer.join()


def test_no_thread_leaks_across_simulators() -> None:
    before = {t for t in threading.enumerate() if t.name.startswith("acl-sim-")}
    for schedule in ("eager", "lazy", "random"):
        with Simulator(schedule=schedule) as sim:
            assert sim.set_device(0) == 0
            for _ in range(3):
                _, s = sim.create_stream()
                src = host(sim, b"\x01", "pinned")
                assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    after = {t for t in threading.enumerate() if t.name.startswith("acl-sim-")}
    assert after <= before


def test_destroy_joins_the_worker(sim: Simulator) -> None:
    assert sim.set_device(0) == 0
    _, s = sim.create_stream()
    src = host(sim, b"\x01", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    n = len(worker_threads(sim))
    assert sim.destroy_stream(s) == 0
    assert len(worker_threads(sim)) == n - 1


def test_a_dropped_simulator_stops_its_workers() -> None:
    import gc

    sim = Simulator()
    assert sim.set_device(0) == 0
    src = host(sim, b"\x01", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
    gate(sim)
    threads = worker_threads(sim)
    assert threads
    del sim
    gc.collect()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)


def test_create_stream_racing_a_reset_is_undone(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # White-box: make create_stream see its context end right after it inserted the stream,
    # as when another thread resets the device at that moment.
    assert sim.set_device(0) == 0
    monkeypatch.setattr(sim._devices, "context_of", lambda device: None)
    code, handle = sim.create_stream()
    assert (code, handle) == (ACL_ERROR_RT_CONTEXT_NULL, 0)
    monkeypatch.undo()
    assert sim.create_stream()[0] == 0
    assert len(sim._devices.current().streams) == 1  # type: ignore[union-attr]
