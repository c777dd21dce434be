"""Simulator: streams, events and the gate (codes, order of checks, and what waits for what)."""

from __future__ import annotations

import time

import pytest
from simulator_streams_support import COMPLETE
from simulator_streams_support import NOT_READY
from simulator_streams_support import RESERVED
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
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


# -- create / destroy -------------------------------------------------------------------
def test_create_stream_checks(bare: Simulator) -> None:
    assert bare.create_stream(null_stream=True) == (ACL_ERROR_INVALID_PARAM, 0)
    assert bare.create_stream() == (ACL_ERROR_RT_CONTEXT_NULL, 0)
    assert bare.set_device(0) == 0
    a, b = new_stream(bare), new_stream(bare)
    assert a != b and bare.invalid_handle() not in (a, b)


def test_stream_limit_counts_the_default_stream() -> None:
    with Simulator(max_streams=4) as s:
        assert s.set_device(0) == 0
        streams = [new_stream(s) for _ in range(3)]
        assert s.create_stream() == (207008, 0)
        assert s.destroy_stream(streams[0]) == 0
        assert s.create_stream()[0] == 0


def test_destroy_stream_checks(eager: Simulator) -> None:
    sim = eager
    assert sim.destroy_stream(0) == ACL_ERROR_INVALID_PARAM
    assert sim.destroy_stream(sim.invalid_handle()) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.destroy_stream(0x1234) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.destroy_stream(new_event(sim)) == ACL_ERROR_RT_INVALID_HANDLE
    s = new_stream(sim)
    assert sim.destroy_stream(s) == 0
    assert sim.destroy_stream(s) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.destroy_stream(foreign_stream(sim)) == ACL_ERROR_RT_STREAM_CONTEXT


def test_destroy_stream_without_a_current_device(bare: Simulator) -> None:
    assert bare.set_device(0) == 0
    s = new_stream(bare)
    import threading

    out: list[int] = []
    t = threading.Thread(target=lambda: out.append(bare.destroy_stream(s)))
    t.start()
    t.join(10)
    assert out == [ACL_ERROR_RT_CONTEXT_NULL]
    assert bare.destroy_stream(s) == 0


def test_destroy_stream_waits_for_pending_tasks(sim: Simulator) -> None:
    s = new_stream(sim)
    g = gate(sim, s)
    src = host(sim, b"\x42", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, s) == 0
    assert assert_blocks_until_opened(sim, g, lambda: sim.destroy_stream(s)) == 0
    assert read_var(sim, "g_u8") == b"\x42"
    assert sim.synchronize_stream(s) == ACL_ERROR_RT_INVALID_HANDLE


# -- synchronize ---------------------------------------------------------------------------
@pytest.mark.parametrize("call", ["synchronize_stream", "stream_query", "launch_gate"])
def test_stream_argument_checks(eager: Simulator, call: str) -> None:
    sim = eager
    fn = getattr(sim, call)
    for bad in (sim.invalid_handle(), 0x99, dead_stream(sim), new_event(sim)):
        result = fn(bad)
        code = result[0] if isinstance(result, tuple) else result
        assert code == ACL_ERROR_RT_INVALID_HANDLE
        if call == "stream_query":
            assert result == (ACL_ERROR_RT_INVALID_HANDLE, RESERVED)


@pytest.mark.parametrize(
    "call", ["synchronize_stream", "stream_query", "launch_gate", "synchronize_stream_with_timeout"]
)
def test_null_stream_without_a_device_is_107002(bare: Simulator, call: str) -> None:
    args = (0, 10) if call.endswith("timeout") else (0,)
    result = getattr(bare, call)(*args)
    assert (result[0] if isinstance(result, tuple) else result) == ACL_ERROR_RT_CONTEXT_NULL


def test_synchronize_stream_waits(sim: Simulator) -> None:
    s = new_stream(sim)
    g = gate(sim, s)
    src = host(sim, b"\x07" * 4, "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, s) == 0
    assert assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream(s)) == 0
    assert read_var(sim, "g_u32") == b"\x07" * 4


def test_synchronize_foreign_stream_is_allowed(eager: Simulator) -> None:
    s = foreign_stream(eager)
    assert eager.synchronize_stream(s) == 0
    assert eager.stream_query(s) == (0, COMPLETE)
    assert eager.synchronize_stream_with_timeout(s, 100) == 0


def test_synchronize_with_timeout_checks(eager: Simulator) -> None:
    sim = eager
    bad = sim.invalid_handle()
    # timeout < -1 before the handle; the handle before timeout == 0.
    assert sim.synchronize_stream_with_timeout(bad, -2) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.synchronize_stream_with_timeout(bad, -(2**31)) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.synchronize_stream_with_timeout(bad, 0) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.synchronize_stream_with_timeout(bad, -1) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.synchronize_stream_with_timeout(bad, 5) == ACL_ERROR_RT_INVALID_HANDLE
    assert sim.synchronize_stream_with_timeout(0, 0) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.synchronize_stream_with_timeout(0, -1) == 0
    assert sim.synchronize_stream_with_timeout(0, 1) == 0
    assert sim.synchronize_stream_with_timeout(new_stream(sim), 2**31 - 1) == 0


def test_synchronize_with_timeout_times_out_and_the_stream_stays_usable(sim: Simulator) -> None:
    g = gate(sim)
    src = host(sim, b"\x66", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
    t0 = time.monotonic()
    code, _ = bounded(sim, lambda: sim.synchronize_stream_with_timeout(0, 50))
    assert code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert time.monotonic() - t0 >= 0.045
    assert read_var(sim, "g_u8") == initial(sim, "g_u8")
    assert sim.open_gate(g) == 0
    assert bounded(sim, lambda: sim.synchronize_stream_with_timeout(0, -1))[0] == 0
    assert read_var(sim, "g_u8") == b"\x66"
    assert sim.synchronize_stream_with_timeout(0, 10) == 0


def test_synchronize_with_minus_one_waits_for_the_gate(sim: Simulator) -> None:
    g = gate(sim)
    assert (
        assert_blocks_until_opened(sim, g, lambda: sim.synchronize_stream_with_timeout(0, -1)) == 0
    )


# -- query --------------------------------------------------------------------------------
def test_stream_query(sim: Simulator) -> None:
    s = new_stream(sim)
    assert sim.stream_query(s) == (0, COMPLETE)
    assert sim.stream_query(0) == (0, COMPLETE)
    g = gate(sim, s)
    assert sim.stream_query(s) == (0, NOT_READY)
    assert sim.stream_query(0) == (0, COMPLETE)
    assert sim.open_gate(g) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(s))[0] == 0
    assert sim.stream_query(s) == (0, COMPLETE)


def test_polling_query_eventually_completes(sim: Simulator) -> None:
    # Under every schedule (lazy included) a stream that is only ever queried makes progress.
    src = host(sim, b"\x31", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
    deadline = time.monotonic() + 10
    while sim.stream_query(0) != (0, COMPLETE):
        assert time.monotonic() < deadline, "query never saw the stream complete"
        time.sleep(0.001)
    assert read_var(sim, "g_u8") == b"\x31"
