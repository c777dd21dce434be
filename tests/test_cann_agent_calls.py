"""Every contract call through the agent and the C double: round trips, bytes against the simulator, gates, threads, protocol errors, crashes and hangs."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cann_agent_support import D2H
from cann_agent_support import DEFAULT
from cann_agent_support import H2D
from cann_agent_support import _script
from cann_agent_support import agent_process
from cann_agent_support import fixture
from cann_agent_support import reaped

from acl_conformance.adapters.base import CONTRACT_CALLS
from acl_conformance.adapters.base import CallTimeout
from acl_conformance.adapters.cann import AgentDied
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import ProtocolError
from acl_conformance.adapters.cann.pool import SPARES
from acl_conformance.adapters.simulator import Simulator


def test_every_contract_call_round_trips(agent: CannAdapter) -> None:
    made: set[str] = set()
    a = agent

    def call(name: str, *args: Any, **kw: Any) -> Any:
        made.add(name)
        return getattr(a, name)(*args, **kw)

    assert call("init", None) == 0
    assert call("get_version_str")[0] == 0
    assert call("get_device_count") == (0, 2)
    assert call("set_device", 1) == 0
    assert call("get_device") == (0, 1)
    assert call("set_device", 0) == 0
    code, stream = call("create_stream")
    assert code == 0 and stream
    code, event = call("create_event")
    assert code == 0 and event
    code, pinned = call("malloc_host", 4096)
    code2, page = call("malloc_pageable", 3 * 4096)
    assert code == code2 == 0
    aligned = (page + 4095) & ~4095
    assert call("host_register", aligned, 4096) == 0
    assert call("host_unregister", aligned) == 0
    assert call("write_host", pinned, b"\x11" * 64) == 0
    assert call("read_host", pinned, 4) == (0, b"\x11" * 4)
    sym = fixture(a, "g_arr256")
    code, dev = call("get_symbol_address", sym)
    assert code == 0 and dev
    assert call("get_symbol_size", sym) == (0, 256)
    code, gate = call("launch_gate", stream)
    assert code == 0 and gate
    assert call("memcpy_to_symbol_async", sym, pinned, 64, 0, H2D, stream) == 0
    assert call("stream_query", stream) == (0, 1)  # behind the gate: not ready
    assert call("record_event", event, stream) == 0
    assert call("stream_wait_event", 0, event) == 0
    assert call("synchronize_stream_with_timeout", stream, 20) == 507046
    assert call("open_gate", gate) == 0
    assert call("synchronize_event", event) == 0
    assert call("synchronize_stream", stream) == 0
    assert call("stream_query", stream) == (0, 0)
    assert call("memcpy_to_symbol", sym, page, 8, 64, DEFAULT) == 0
    assert call("memcpy_from_symbol", page, 128, sym, 72, 0, D2H) == 0
    assert call("read_host", page, 72)[1] == b"\x11" * 64 + bytes(8)
    assert call("memcpy_from_symbol_async", pinned, 64, sym, 64, 0, D2H, stream) == 0
    assert call("synchronize_device") == 0
    assert call("destroy_event", event) == 0
    assert call("destroy_stream", stream) == 0
    assert call("free_host", pinned) == 0
    assert call("free_pageable", page) == 0
    assert call("reset_device", 0) == 0
    assert call("finalize") == 0
    assert made == set(CONTRACT_CALLS)


def test_codes_and_bytes_match_the_simulator(agent: CannAdapter) -> None:
    """The C double and the simulator, written apart, agree on every code of the script."""
    sim = Simulator()
    try:
        want = _script(sim)
    finally:
        sim.close()
    got = _script(agent)
    assert len(got) == len(want)
    diffs = [(w[0], w[1], g[1]) for w, g in zip(want, got, strict=True) if w != g]
    assert not diffs, "label, simulator, double:\n" + "\n".join(map(str, diffs))


def test_open_gate_while_a_call_waits_for_it(agent: CannAdapter) -> None:
    """A pageable copy behind a closed gate blocks its caller; another thread opens the gate."""
    a = agent
    assert a.set_device(0) == 0
    _, s = a.create_stream()
    _, buf = a.malloc_pageable(16)
    _, gate = a.launch_gate(s)
    timer = threading.Timer(0.3, lambda: a.open_gate(gate))
    t0 = time.monotonic()
    timer.start()
    assert a.memcpy_to_symbol_async(fixture(a, "g_u64"), buf, 8, 0, H2D, s) == 0
    waited = time.monotonic() - t0
    timer.join()
    assert 0.25 < waited < 5


def test_each_thread_has_its_own_context_and_agent_thread(agent: CannAdapter) -> None:
    a = agent

    def tasks() -> int:
        return len(os.listdir(f"/proc/{a.pid}/task"))

    assert a.set_device(1) == 0
    before = tasks()
    seen: list[tuple[int, int]] = []
    t = threading.Thread(target=lambda: seen.append(a.get_device()))
    t.start()
    t.join()
    assert seen == [(107002, -1)]  # a new host thread has no current device
    assert a.get_device() == (0, 1)  # carries the "bye" of t: its agent thread ends, soon
    deadline = time.monotonic() + 5
    while tasks() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tasks() == before
    called = threading.Barrier(7)
    done = threading.Event()

    def host_thread() -> None:
        a.set_device(0)
        called.wait(10)
        done.wait(10)  # stay alive until counted

    threads = [threading.Thread(target=host_thread) for _ in range(6)]
    for th in threads:
        th.start()
    called.wait(10)
    assert tasks() >= before + 6  # one agent thread each
    done.set()
    for th in threads:
        th.join()
    del th, threads
    import gc

    gc.collect()
    a.get_device()  # carries the "bye" of the ended threads
    deadline = time.monotonic() + 5
    while tasks() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tasks() <= before


def test_protocol_error_is_not_a_backend_answer(agent: CannAdapter) -> None:
    with pytest.raises(ProtocolError, match="unknown command 'frobnicate'"):
        agent_process(agent).call(1, "frobnicate")
    with pytest.raises(ProtocolError, match="bad int32 argument 'x'"):
        agent_process(agent).call(1, "set_device", ("x",))
    assert agent.get_device_count() == (0, 2)  # still fine


def test_close_reaps_the_agent_and_leaves_no_thread(double_agent: Path) -> None:
    """One agent's life (isolation=run: no warm spare is started; the spares have tests of
    their own below)."""
    assert SPARES.wait_idle()  # no spare being started by an earlier test meanwhile
    threads = threading.active_count()
    a = CannAdapter(agent=str(double_agent), isolation="run")
    pid = a.pid
    a.set_device(0)
    a.close()
    a.close()  # idempotent
    assert agent_process(a).proc.returncode == 0  # it quit on request
    assert reaped(pid)
    assert threading.active_count() == threads
    with pytest.raises(AgentDied):
        a.get_device()


def test_a_dropped_adapter_is_reaped(double_agent: Path) -> None:
    """Without close(): the finaliser kills and reaps the agent and the watchdog ends."""
    import gc

    assert SPARES.wait_idle()
    threads = threading.active_count()
    a = CannAdapter(agent=str(double_agent), isolation="run")
    pid = a.pid
    assert a.set_device(0) == 0
    del a
    gc.collect()
    deadline = time.monotonic() + 5
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() == threads
    assert reaped(pid)


def test_segfault_is_a_crash_naming_the_call(tmp_path: Path) -> None:
    a = CannAdapter(double="segv-on:aclrtStreamQuery")
    pid = a.pid
    try:
        assert a.set_device(0) == 0
        with pytest.raises(AgentDied) as info:
            a.stream_query(0)
        text = str(info.value)
        assert "SIGSEGV" in text and "aclrtStreamQuery(NULL" in text, text
        assert "\n" not in text
        with pytest.raises(AgentDied):  # and every later call at once
            a.get_device()
    finally:
        a.close()
    assert reaped(pid)


def test_hang_is_a_timeout_and_the_agent_is_killed() -> None:
    a = CannAdapter(double="hang-sync", timeout="0.5")
    pid = a.pid
    try:
        assert a.set_device(0) == 0
        t0 = time.monotonic()
        with pytest.raises(
            CallTimeout, match=r"^no answer within 0.5 s: the agent \(pid \d+\) was killed$"
        ):
            a.synchronize_stream(0)
        assert time.monotonic() - t0 < 5
        assert agent_process(a).proc.returncode == -9
        with pytest.raises(CallTimeout):
            a.get_device()
    finally:
        a.close()
    assert reaped(pid)


def test_a_timeout_fails_the_other_waiting_threads_as_timeouts() -> None:
    a = CannAdapter(double="hang-sync", timeout="1")
    errors: list[BaseException] = []

    def other() -> None:
        try:
            a.set_device(0)
            _, s = a.create_stream()
            a.launch_gate(s)  # never opened
            _, buf = a.malloc_pageable(8)
            a.memcpy_to_symbol_async(fixture(a, "g_u64"), buf, 8, 0, H2D, s)  # waits for g
        except BaseException as exc:
            errors.append(exc)

    try:
        assert a.set_device(0) == 0
        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.3)
        with pytest.raises(CallTimeout):
            a.synchronize_stream(0)
        t.join(10)
        assert not t.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], CallTimeout), errors
    finally:
        a.close()
