"""The simulator's events (create, record, wait, synchronise, destroy) and the gate (what it holds, pinned and pageable copies behind it)."""

from __future__ import annotations

import time

import pytest
from simulator_streams_support import NOT_READY
from simulator_streams_support import assert_blocks_until_opened
from simulator_streams_support import dead_stream
from simulator_streams_support import foreign_stream
from simulator_streams_support import new_event
from simulator_streams_support import new_stream
from simulator_streams_support import sim_fixture  # noqa: F401 (a fixture, by its name= )
from test_simulator_fixtures import SCHEDULES  # noqa: F401 (the fixtures bare, eager)
from test_simulator_fixtures import bare_fixture  # noqa: F401 (the fixtures bare, eager)
from test_simulator_fixtures import eager_fixture  # noqa: F401 (the fixtures bare, eager)
from test_simulator_fixtures import open_simulator  # noqa: F401 (the fixtures bare, eager)
from test_simulator_support import D2H
from test_simulator_support import H2D
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


# -- events -------------------------------------------------------------------------------
def test_create_event_checks(bare: Simulator) -> None:
    assert bare.create_event(null_event=True) == (ACL_ERROR_INVALID_PARAM, 0)
    assert bare.create_event() == (ACL_ERROR_RT_CONTEXT_NULL, 0)
    assert bare.set_device(0) == 0
    e1, e2 = new_event(bare), new_event(bare)
    assert e1 != e2 and bare.invalid_handle() not in (e1, e2)


def test_event_handle_checks(eager: Simulator) -> None:
    sim = eager
    e = new_event(sim)
    dead = new_event(sim)
    assert sim.destroy_event(dead) == 0
    s = new_stream(sim)
    # NULL event: 100000 before anything, even with a bad stream.
    assert sim.record_event(0, sim.invalid_handle()) == ACL_ERROR_INVALID_PARAM
    assert sim.stream_wait_event(sim.invalid_handle(), 0) == ACL_ERROR_INVALID_PARAM
    assert sim.synchronize_event(0) == ACL_ERROR_INVALID_PARAM
    assert sim.destroy_event(0) == ACL_ERROR_INVALID_PARAM
    for bad in (dead, sim.invalid_handle(), 0x31, s):
        assert sim.record_event(bad, 0) == ACL_ERROR_RT_INVALID_HANDLE
        assert sim.stream_wait_event(0, bad) == ACL_ERROR_RT_INVALID_HANDLE
        assert sim.synchronize_event(bad) == ACL_ERROR_RT_INVALID_HANDLE
        assert sim.destroy_event(bad) == ACL_ERROR_RT_INVALID_HANDLE
    for bad in (dead_stream(sim), sim.invalid_handle(), e):
        assert sim.record_event(e, bad) == ACL_ERROR_RT_INVALID_HANDLE
        assert sim.stream_wait_event(bad, e) == ACL_ERROR_RT_INVALID_HANDLE
    # Record: the event is checked before the stream; wait: the stream before the event.
    assert sim.record_event(dead, sim.invalid_handle()) == ACL_ERROR_RT_INVALID_HANDLE
    foreign = foreign_stream(sim)
    assert sim.record_event(e, foreign) == ACL_ERROR_RT_STREAM_CONTEXT
    assert sim.stream_wait_event(foreign, e) == ACL_ERROR_RT_STREAM_CONTEXT
    assert sim.launch_gate(foreign) == (ACL_ERROR_RT_STREAM_CONTEXT, 0)
    assert sim.record_event(e, 0) == 0 and sim.record_event(e, s) == 0
    assert sim.stream_wait_event(s, e) == 0 and sim.stream_wait_event(0, e) == 0
    assert sim.synchronize_event(e) == 0
    assert sim.destroy_event(e) == 0


def test_record_and_wait_with_null_stream_need_a_device(bare: Simulator) -> None:
    assert bare.set_device(0) == 0
    e = new_event(bare)
    import threading

    out: list[int] = []

    def other_thread() -> None:
        out.append(bare.record_event(e, 0))
        out.append(bare.stream_wait_event(0, e))
        out.append(bare.synchronize_event(e))

    t = threading.Thread(target=other_thread)
    t.start()
    t.join(10)
    assert out == [ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_NULL, 0]


def test_never_recorded_event(sim: Simulator) -> None:
    e = new_event(sim)
    s = new_stream(sim)
    assert sim.synchronize_event(e) == 0
    # A wait on a never-recorded event orders nothing: s is not blocked by 0's gate.
    g = gate(sim, 0)
    assert sim.stream_wait_event(s, e) == 0
    src = host(sim, b"\x21", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(s))[0] == 0
    assert read_var(sim, "g_u8") == b"\x21"
    sim.open_gate(g)


def test_event_orders_streams(sim: Simulator) -> None:
    a, b = new_stream(sim), new_stream(sim)
    e = new_event(sim)
    first = host(sim, b"X" * 8, "pinned")
    second = host(sim, b"Y" * 4, "pinned")
    g = gate(sim, a)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u64"), first, 8, 0, H2D, a) == 0
    assert sim.record_event(e, a) == 0
    assert sim.stream_wait_event(b, e) == 0
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u64"), second, 4, 2, H2D, b) == 0
    # b is held by a's gate through the event.
    assert sim.stream_query(b) == (0, NOT_READY)
    assert sim.synchronize_stream_with_timeout(b, 30) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert read_var(sim, "g_u64") == initial(sim, "g_u64")
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream(b)) == 0
    assert read_var(sim, "g_u64") == b"XXYYYYXX"


def test_wait_captures_the_record_current_at_the_wait(sim: Simulator) -> None:
    a, b, c = new_stream(sim), new_stream(sim), new_stream(sim)
    e = new_event(sim)
    g = gate(sim, a)
    assert sim.record_event(e, a) == 0
    assert sim.stream_wait_event(b, e) == 0
    assert sim.record_event(e, c) == 0  # a later record, on an idle stream
    assert bounded(sim, lambda: sim.synchronize_event(e))[0] == 0  # the latest record: done
    # b still waits for the record it captured, behind a's gate.
    assert sim.synchronize_stream_with_timeout(b, 30) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream(b)) == 0


def test_wait_before_a_record_does_not_wait_for_it(sim: Simulator) -> None:
    a, b = new_stream(sim), new_stream(sim)
    e = new_event(sim)
    assert sim.record_event(e, a) == 0
    assert bounded(sim, lambda: sim.synchronize_event(e))[0] == 0
    assert sim.stream_wait_event(b, e) == 0  # captures the completed record
    g = gate(sim, a)
    assert sim.record_event(e, a) == 0  # a new record, behind the gate
    assert bounded(sim, lambda: sim.synchronize_stream(b))[0] == 0
    assert sim.synchronize_stream_with_timeout(a, 20) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    sim.open_gate(g)


def test_synchronize_event_waits_for_the_latest_record(sim: Simulator) -> None:
    a = new_stream(sim)
    e = new_event(sim)
    assert sim.record_event(e, 0) == 0
    g = gate(sim, a)
    src = host(sim, b"\x5e", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, a) == 0
    assert sim.record_event(e, a) == 0
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_event(e)) == 0
    assert read_var(sim, "g_u8") == b"\x5e"


def test_destroyed_event_still_releases_its_waiters(sim: Simulator) -> None:
    a, b = new_stream(sim), new_stream(sim)
    e = new_event(sim)
    g = gate(sim, a)
    assert sim.record_event(e, a) == 0
    assert sim.stream_wait_event(b, e) == 0
    assert sim.destroy_event(e) == 0
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream(b)) == 0


def test_event_wait_across_devices(eager: Simulator) -> None:
    sim = eager
    e = new_event(sim)
    g = gate(sim, 0)
    assert sim.record_event(e, 0) == 0
    assert sim.set_device(1) == 0
    s1 = new_stream(sim)
    assert sim.stream_wait_event(s1, e) == 0
    assert sim.stream_query(s1) == (0, NOT_READY)
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream(s1)) == 0


# -- the gate -----------------------------------------------------------------------------
def test_gate_checks(eager: Simulator) -> None:
    sim = eager
    assert sim.open_gate(0) == ACL_ERROR_INVALID_PARAM
    assert sim.open_gate(12345) == ACL_ERROR_INVALID_PARAM
    code, g = sim.launch_gate(0)
    assert code == 0 and g != 0
    code, g2 = sim.launch_gate(new_stream(sim))
    assert code == 0 and g2 != g
    assert sim.open_gate(g) == 0
    assert sim.open_gate(g) == 0  # opening twice is harmless
    assert sim.open_gate(g2) == 0
    assert sim.synchronize_device() == 0


def test_gate_holds_only_its_stream(sim: Simulator) -> None:
    s = new_stream(sim)
    g = gate(sim, 0)
    src = host(sim, b"\x12", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(s))[0] == 0
    assert read_var(sim, "g_u8") == b"\x12"
    assert sim.stream_query(0) == (0, NOT_READY)
    sim.open_gate(g)


@pytest.mark.parametrize("memory", ["pinned", "registered"])
def test_pinned_copy_behind_a_closed_gate_returns_at_once_and_is_not_visible(
    sim: Simulator, memory: str
) -> None:
    g = gate(sim)
    src = host(sim, b"\xaa\xbb\xcc\xdd", memory)
    # The gate stays closed: a call that waited would be stopped by the watchdog.
    code, _ = bounded(sim, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0))
    assert code == 0
    time.sleep(0.05)  # give a wrong eager worker the chance to run it anyway
    assert read_var(sim, "g_u32") == initial(sim, "g_u32")
    assert sim.stream_query(0) == (0, NOT_READY)
    assert sim.open_gate(g) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert read_var(sim, "g_u32") == b"\xaa\xbb\xcc\xdd"


def test_pageable_copy_behind_a_closed_gate_blocks_until_it_opens(sim: Simulator) -> None:
    g = gate(sim)
    src = host(sim, b"\x01\x02\x03\x04", "pageable")
    code = assert_blocks_until_opened(
        sim, g, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0)
    )
    assert code == 0
    # Complete at return, without any synchronisation.
    assert read_var(sim, "g_u32") == b"\x01\x02\x03\x04"


def test_pageable_copy_on_a_foreign_stream_drains_that_stream(eager: Simulator) -> None:
    sim = eager
    assert sim.set_device(1) == 0
    foreign = new_stream(sim)
    g = gate(sim, foreign)  # launched while device 1 is current
    assert sim.set_device(0) == 0
    src = host(sim, b"\x0f", "pageable")
    code = assert_blocks_until_opened(
        sim, g, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, foreign)
    )
    assert code == 0
    assert read_var(sim, "g_u8") == b"\x0f"  # on the current device (0)
    assert sim.set_device(1) == 0
    assert read_var(sim, "g_u8") == initial(sim, "g_u8")


def test_pageable_from_symbol_behind_a_closed_gate_blocks(sim: Simulator) -> None:
    g = gate(sim)
    src = host(sim, b"\x77" * 4, "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0) == 0
    dst = host(sim, bytes(4), "pageable")
    code = assert_blocks_until_opened(
        sim, g, lambda: sim.memcpy_from_symbol_async(dst, 4, sym(sim, "g_u32"), 4, 0, D2H, 0)
    )
    assert code == 0
    assert sim.read_host(dst, 4) == (0, b"\x77" * 4)  # it drained the earlier copy first


def test_pageable_copy_drains_earlier_pinned_copies(sim: Simulator) -> None:
    pinned = host(sim, b"P" * 8, "pinned")
    pageable = host(sim, b"Q" * 4, "pageable")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u64"), pinned, 8, 0, H2D, 0) == 0
    code, _ = bounded(
        sim, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u64"), pageable, 4, 2, H2D, 0)
    )
    assert code == 0
    assert read_var(sim, "g_u64") == b"PPQQQQPP"


def test_failed_task_is_reported_once_at_sync(eager: Simulator) -> None:
    # White-box: a task that raises (a simulator bug) surfaces as 507000 at the next
    # synchronisation, once, like a failed task in CANN; the stream stays usable.
    stream = eager._devices.current().default_stream  # type: ignore[union-attr]

    def boom() -> None:
        raise RuntimeError("injected")

    assert stream.enqueue(boom) is not None
    assert eager.synchronize_stream(0) == 507000
    assert eager.synchronize_stream(0) == 0


@pytest.mark.parametrize("waits", ["device", "stream"])
def test_pageable_waits_device_drains_every_stream_of_the_device(waits: str) -> None:
    """pageable_waits=device (a legal variant): a pageable copy waits for another stream's
    gate too; by default it waits for its own stream only."""
    sim = Simulator(pageable_waits=waits)
    try:
        assert sim.set_device(0) == 0
        other = new_stream(sim)
        g = gate(sim, other)
        src = host(sim, b"\x01\x02\x03\x04", "pageable")

        def copy() -> int:
            return sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0)

        if waits == "device":
            assert assert_blocks_until_opened(sim, g, copy) == 0
        else:
            assert bounded(sim, copy)[0] == 0
            assert sim.open_gate(g) == 0
        assert read_var(sim, "g_u32") == b"\x01\x02\x03\x04"
    finally:
        sim.close()


@pytest.mark.parametrize("call", ["copy", "sync", "query", "gate"])
def test_without_a_default_stream_null_is_rejected(call: str) -> None:
    sim = Simulator(default_stream=False)
    try:
        assert not sim.capabilities().default_stream
        assert sim.set_device(0) == 0
        src = host(sim, b"\x01", "pageable")
        code = {
            "copy": lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0),
            "sync": lambda: sim.synchronize_stream(0),
            "query": lambda: sim.stream_query(0)[0],
            "gate": lambda: sim.launch_gate(0)[0],
        }[call]()
        assert code == ACL_ERROR_INVALID_PARAM
        s = new_stream(sim)
        assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    finally:
        sim.close()
