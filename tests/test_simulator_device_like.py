"""The simulator's device-like options: each behaves as a real asynchronous device does, and
each is off by default.

``setup_ms`` (creating a context takes that long), ``frees_wait`` (aclrtFreeHost and
aclrtHostUnregister wait until every stream of every device is idle), ``host_funcs_serial``
(a closed gate holds the gates of the device's other streams), ``pageable_staged`` (a
pageable copy takes its source at the call) and the ``device_like`` shorthand.
"""

from __future__ import annotations

import threading
import time

import pytest
from simulator_streams_support import assert_blocks_until_opened
from simulator_streams_support import new_stream
from test_simulator_support import H2D
from test_simulator_support import HANG
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.simulator.options import DEVICE_LIKE_SETUP_MS
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


def _until(what: str, condition: object) -> None:
    """Wait until ``condition()`` holds (a state another thread reaches), at most HANG s."""
    deadline = time.monotonic() + HANG
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.001)


def test_options_are_off_by_default_and_named_when_on() -> None:
    sim = Simulator()
    try:
        o = sim.options
        assert (o.setup_ms, o.frees_wait, o.host_funcs_serial, o.pageable_staged) == (
            0,
            False,
            False,
            False,
        )
    finally:
        sim.close()
    sim = Simulator.from_options({"device_like": "1", "setup_ms": "20"})
    try:
        o = sim.options
        assert (o.setup_ms, o.frees_wait, o.host_funcs_serial, o.pageable_staged) == (
            20,
            True,
            True,
            True,
        )
        assert sim.get_version_str()[1].endswith(
            "setup_ms=20, frees_wait=1, host_funcs_serial=1, pageable_staged=1)"
        )
    finally:
        sim.close()
    sim = Simulator(device_like=True, frees_wait=False)  # each may still be turned off
    try:
        assert sim.options.setup_ms == DEVICE_LIKE_SETUP_MS and not sim.options.frees_wait
    finally:
        sim.close()
    with pytest.raises(ValueError, match="setup_ms=-1: 0 to 60000"):
        Simulator(setup_ms=-1)
    with pytest.raises(ValueError, match="simulator option device_like='maybe'"):
        Simulator.from_options({"device_like": "maybe"})


def test_setup_ms_makes_every_context_creation_take_that_long() -> None:
    """The first aclrtSetDevice of a device, and the first after its last reset, create a
    context: each takes at least setup_ms."""
    sim = Simulator(setup_ms=30)
    try:
        for _ in range(2):
            t0 = time.monotonic()
            assert sim.set_device(1) == 0
            assert time.monotonic() - t0 >= 0.030
            assert sim.reset_device(1) == 0
    finally:
        sim.close()


@pytest.mark.parametrize("call", ["free_host", "host_unregister"])
@pytest.mark.parametrize("device", [0, 1])
def test_frees_wait_for_every_stream_of_every_device(call: str, device: int) -> None:
    """With frees_wait, freeing page-locked memory or unregistering host memory does not
    return while a gate is closed on any device's stream."""
    sim = Simulator(frees_wait=True)
    try:
        assert sim.set_device(device) == 0
        g = gate(sim, new_stream(sim))
        assert sim.set_device(0) == 0
        if call == "free_host":
            ptr = host(sim, bytes(64), "pinned")
            result = assert_blocks_until_opened(sim, g, lambda: sim.free_host(ptr))
        else:
            ptr = host(sim, bytes(4096), "registered")
            result = assert_blocks_until_opened(sim, g, lambda: sim.host_unregister(ptr))
        assert result == 0
    finally:
        sim.close()


def test_without_frees_wait_a_free_returns_behind_a_closed_gate() -> None:
    sim = Simulator()
    try:
        assert sim.set_device(0) == 0
        g = gate(sim, new_stream(sim))
        ptr = host(sim, bytes(64), "pinned")
        assert bounded(sim, lambda: sim.free_host(ptr))[0] == 0
        assert sim.open_gate(g) == 0
    finally:
        sim.close()


@pytest.mark.parametrize("serial", [True, False], ids=["serial", "default"])
def test_host_funcs_serial_a_closed_gate_holds_the_other_streams_gates(serial: bool) -> None:
    """With host_funcs_serial, once gate A runs (holding its device's host function lock),
    gate B on another stream of the device does not run, open as it is, until A opens; a
    gate on another device is not held.  By default B runs as soon as it is open."""
    sim = Simulator(host_funcs_serial=serial)
    try:
        assert sim.set_device(0) == 0
        s1, s2 = new_stream(sim), new_stream(sim)
        g_a = gate(sim, s1)
        if serial:  # white-box: A's host function is running
            _until("gate A holds the host function lock", sim._host_func_locks[0].locked)
        g_b = gate(sim, s2)
        assert sim.open_gate(g_b) == 0
        if serial:
            assert sim.synchronize_stream_with_timeout(s2, 100) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
            assert sim.set_device(1) == 0
            other = new_stream(sim)
            assert sim.open_gate(gate(sim, other)) == 0
            assert bounded(sim, lambda: sim.synchronize_stream(other))[0] == 0
            assert sim.set_device(0) == 0
            assert assert_blocks_until_opened(sim, g_a, lambda: sim.synchronize_stream(s2)) == 0
        else:
            assert bounded(sim, lambda: sim.synchronize_stream(s2))[0] == 0
            assert sim.open_gate(g_a) == 0
    finally:
        sim.close()


@pytest.mark.parametrize("staged", [True, False], ids=["staged", "default"])
def test_pageable_staged_lands_the_source_as_at_the_call(staged: bool) -> None:
    """A pageable copy behind a closed gate; another host thread changes the source while
    the copy waits, then opens the gate.  Staged, the variable gets the source as at the
    call; by default (drain, then copy) it gets the source as changed."""
    sim = Simulator(pageable_staged=staged)
    try:
        assert sim.set_device(0) == 0
        s = new_stream(sim)
        g = gate(sim, s)
        src = host(sim, b"\x11" * 8, "pageable")
        codes: list[int] = []

        def copy() -> None:
            assert sim.set_device(0) == 0
            codes.append(sim.memcpy_to_symbol_async(sym(sim, "g_u64"), src, 8, 0, H2D, s))

        t = threading.Thread(target=copy)
        t.start()
        if staged:  # white-box: the call has staged its source and issued the copy
            stream = sim._objects[s]
            _until("the staged copy is issued", lambda: stream.issued() == 2)  # type: ignore[union-attr]
        # (By default the copy is made once the gate opens, after this change, wherever
        # the other thread is now.)
        assert sim.write_host(src, b"\x22" * 8) == 0
        assert sim.open_gate(g) == 0
        t.join(HANG)
        assert not t.is_alive() and codes == [0]
        assert read_var(sim, "g_u64") == (b"\x11" if staged else b"\x22") * 8
    finally:
        sim.close()
