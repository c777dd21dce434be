"""The harness: backend and model in step, failures a vendor can read, hangs and crashes contained."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from test_simulator_support import watchdog

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import BackendCrash
from acl_conformance.conformance.harness.failure import BackendTimeout
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import ExpectedFailure
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.runstate import RunState


class Lying(Simulator):
    """Accepts ACL_MEMCPY_DEVICE_TO_HOST on the To copies (and copies)."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return super().memcpy_to_symbol_async(
            symbol, src, count, offset, 1 if kind == 2 else kind, stream
        )


class BoundLessThan(Simulator):
    """Rejects a copy that ends exactly at the end of the variable."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        size = self.get_symbol_size(symbol)[1]
        if count and offset + count == size:
            return 100000
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class Hanging(Simulator):
    calls_may_hang = True  # what a backend that can hang declares: calls get a time limit

    def synchronize_stream(self, stream: int) -> int:
        time.sleep(30)
        return 0


class Crashing(Simulator):
    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        raise OSError("the backend went away")


def harness(adapter: Any, profile: str = "cann", timeout: float = 30.0) -> Harness:
    adapter.init(None)
    h = Harness(adapter, profile, call_timeout=timeout)
    h.model.world.initialized = True
    h.call("set_device", device_id=0)
    return h


def test_a_correct_call_passes_and_returns_outputs() -> None:
    h = harness(Simulator())
    try:
        s = h.stream()
        src = h.pinned(16, ops.pattern(1, 16))
        r = ops.to_symbol_async(h, "g_arr256", src, count=16, stream=s)
        assert r.ok and r.code == 0
        ops.sync(h, s)
        assert h.observe("g_arr256")[:16] == ops.pattern(1, 16)
    finally:
        h.close()
        h.adapter.close()


def test_failure_message_is_written_for_a_vendor() -> None:
    h = harness(Lying())
    try:
        src = h.pageable(16, ops.pattern(2, 16))
        with pytest.raises(ConformanceFailure) as exc:
            ops.to_symbol_async(h, "g_arr256", src, count=16, kind=ops.D2H)
        f = exc.value
        text = str(f)
        assert f.requirement == "KIND-REJECTED"
        assert text.startswith("[KIND-REJECTED]")
        assert '"This API only supports ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT."' in text
        assert (
            "aclrtMemcpyToSymbolAsync(&g_arr256, pageable" in text
            and "ACL_MEMCPY_DEVICE_TO_HOST" in text
        )
        assert "allowed:  ACL_ERROR_INVALID_PARAM (100000)" in text
        assert "backend:  ACL_SUCCESS (0)" in text
        assert "aclrtSetDevice(0);" in text  # the call sequence that led there
        assert f.trace and f.trace[-1].name == "memcpy_to_symbol_async"
    finally:
        h.close()
        h.adapter.close()


def test_an_ambiguous_failure_names_its_other_reading_and_meets_its_expectation() -> None:
    # End-exact on the NULL stream: the bound or the default stream, one call cannot
    # tell.  The failure cites one and names the other; an expectations entry for
    # either makes it the known failure it is.
    h = harness(BoundLessThan())
    try:
        src = h.pageable(1, ops.pattern(3, 1))
        with pytest.raises(ConformanceFailure) as exc:
            ops.to_symbol_async(h, "g_u8", src, count=1, stream=0)
        assert (exc.value.requirement, exc.value.also) == (
            "STREAM-NULL-DEFAULT",
            ("BOUNDS-END-EXACT",),
        )
        h.triage.expected["BOUNDS-END-EXACT"] = ("BOUNDS-END-EXACT", "BOUNDS-END-EXACT: known")
        with pytest.raises(ExpectedFailure) as known:
            ops.to_symbol_async(h, "g_u8", src, count=1, stream=0)
        assert known.value.key == "BOUNDS-END-EXACT"
        under = exc.value.under("CONCURRENCY-THREADS", "with 4 host threads")
        assert under.also == ("STREAM-NULL-DEFAULT", "BOUNDS-END-EXACT")
        # charged to the threads, it is the known failure of any of them
        assert isinstance(h.classify(under), ExpectedFailure)
        h.triage.expected = {
            "CONCURRENCY-THREADS": ("CONCURRENCY-THREADS", "CONCURRENCY-THREADS: x")
        }
        assert isinstance(h.classify(under), ExpectedFailure)
        h.triage.expected = {}
        own = h.classify(under)
        assert isinstance(own, ConformanceFailure) and own.requirement == "CONCURRENCY-THREADS"
        # one exception type per identity: Hypothesis tells distinct failures apart
        assert type(own) is type(h.classify(under)) is not type(exc.value)
        assert own.identity == "CONCURRENCY-THREADS at aclrtMemcpyToSymbolAsync"
    finally:
        h.close()
        h.adapter.close()


def test_hanging_backend_times_out_and_poisons_the_harness() -> None:
    h = harness(Hanging(), timeout=0.5)
    s = h.stream()
    t0 = time.monotonic()
    with pytest.raises(
        BackendTimeout, match=r"aclrtSynchronizeStream\(stream0\) did not return within 0.5 s"
    ):
        ops.sync(h, s)
    assert time.monotonic() - t0 < 5
    assert h.poisoned
    # a later call meets the same hang, as charged (one hang, one failure)
    with pytest.raises(BackendTimeout, match=r"the backend hung: aclrtSynchronizeStream"):
        h.call("get_device_count")
    h.close()


def test_crashing_backend_is_a_crash_not_a_failure() -> None:
    h = harness(Crashing())
    with pytest.raises(BackendCrash, match="raised OSError: the backend went away") as exc:
        h.call("get_symbol_size", symbol=ops.symbol(h, "g_u32"))
    assert not isinstance(exc.value, ConformanceFailure)
    h.close()
    h.adapter.close()


def test_arguments_c_cannot_represent_are_a_suite_bug() -> None:
    h = harness(Simulator())
    try:
        with pytest.raises(ValueError, match="does not fit size_t"):
            h.call(
                "memcpy_to_symbol_async",
                symbol=ops.symbol(h, "g_u8"),
                src=1,
                count=1,
                offset=2**64,
                kind=1,
                stream=0,
            )
    finally:
        h.close()
        h.adapter.close()


def test_gate_opened_by_a_timer_is_known_before_the_call_is_judged() -> None:
    h = harness(Simulator())
    try:
        s = h.stream()
        g = h.close_stream_gate(s)
        src = h.pageable(16, ops.pattern(3, 16))
        h.open_later(g, 0.2)
        r = ops.to_symbol_async(h, "g_arr256", src, count=16, stream=s)  # waits for the gate
        assert g in r.gates_open
        assert h.observe("g_arr256")[:16] == ops.pattern(3, 16)
    finally:
        h.close()
        h.adapter.close()


class SelfTimed(Simulator):
    """An adapter with its own per-call limit (as a backend in another process has)."""

    def synchronize_stream(self, stream: int) -> int:
        from acl_conformance.adapters.base import CallTimeout

        raise CallTimeout("no answer within 0.1 s")


def test_an_adapters_own_call_timeout_is_a_timeout() -> None:
    h = harness(SelfTimed())
    s = h.stream()
    with pytest.raises(BackendTimeout, match=r"aclrtSynchronizeStream\(stream0\) did not return"):
        ops.sync(h, s)
    assert h.poisoned
    h.close()
    h.adapter.close()


def test_a_call_that_legally_waits_for_another_streams_gate_is_released_and_judged() -> None:
    """A pageable copy that waits for every stream of its device (slower than it must be,
    and legal): the suite opens its gates after a while and judges the call knowing that."""
    h = harness(Simulator(pageable_waits="device"), profile="spec")
    try:
        held, other = h.stream(), h.stream()
        g = h.close_stream_gate(held)
        src = h.pageable(16, ops.pattern(3, 16))
        t0 = time.monotonic()
        r = ops.to_symbol_async(h, "g_arr256", src, count=16, stream=other)
        assert r.ok and g in r.gates_open  # released, not timed out
        assert time.monotonic() - t0 < 5
        assert h.observe("g_arr256")[:16] == ops.pattern(3, 16)
    finally:
        h.close()
        h.adapter.close()


def test_a_gate_is_not_released_under_a_call_that_returns_in_time() -> None:
    h = harness(Simulator(), profile="spec")
    try:
        held, other = h.stream(), h.stream()
        g = h.close_stream_gate(held)
        src = h.pageable(16, ops.pattern(4, 16))
        r = ops.to_symbol_async(h, "g_arr256", src, count=16, stream=other)
        assert r.ok and g not in r.gates_open
        time.sleep(0.4)
        assert not h.gate_is_open(g)
    finally:
        h.close()
        h.adapter.close()


class InWorkers(Simulator):
    calls_may_hang = True  # every call is made from a worker OS thread of the harness


def test_the_trace_numbers_host_threads_as_the_harness_and_the_model_do() -> None:
    earlier = harness(InWorkers())  # a test before, on the same backend, other OS threads
    earlier.close()
    h = Harness(earlier.adapter, "cann")
    h.model.world.initialized = True
    h.call("set_device", device_id=0)
    try:
        numbers: list[int] = []

        def other() -> None:
            numbers.append(h.thread_no())
            h.call("set_device", device_id=0)
            h.call("get_device")

        t = threading.Thread(target=other)
        t.start()
        t.join()
        h.call("get_device")
        assert h.thread_no() == 0 and numbers == [1]
        recs = [r for r in h.trace_records() if r.name in ("set_device", "get_device")]
        assert [(r.name, r.thread) for r in recs] == [
            ("set_device", 0),
            ("set_device", 1),
            ("get_device", 1),
            ("get_device", 0),
        ]
        assert [c.label.split(" ", 1)[1] for c in h.model.history if c.thread == 1] == [
            "[thread 1] aclrtSetDevice(0)",
            "[thread 1] aclrtGetDevice(&device_id)",
        ]
    finally:
        h.close()
        h.adapter.close()


# -- a device that legally waits for more (the simulator's device-like options) -----------
def _until_held(sim: Simulator, device: int) -> None:
    """White-box: wait until a host function of ``device`` holds its lock (a gate runs)."""
    deadline = time.monotonic() + 10
    while not sim._host_func_locks[device].locked():
        assert time.monotonic() < deadline, "no gate ever ran"
        time.sleep(0.001)


@pytest.mark.parametrize("profile", ["spec", "cann"])
def test_a_closed_gate_holding_another_streams_open_gate_is_judged_legal(profile: str) -> None:
    """host_funcs_serial: gate A runs, closed; gate B on another stream is opened but cannot
    run.  A short synchronisation of B times out, B is NOT_READY, and a wait for B is
    released (the suite opens A) and judged knowing A opened: nothing is a violation."""
    sim = Simulator(host_funcs_serial=True)
    h = harness(sim, profile=profile)
    try:
        with watchdog(sim):  # a hang fails the test
            s1, s2 = h.stream(), h.stream()
            h.close_stream_gate(s1)
            _until_held(sim, 0)
            g_b = h.close_stream_gate(s2)
            src = h.pinned(16, ops.pattern(5, 16))
            ops.to_symbol_async(h, "g_arr256", src, count=16, stream=s2)
            h.open_stream_gate(g_b)
            assert h.call("synchronize_stream_with_timeout", stream=s2, timeout=20).code == 507046
            assert h.call("stream_query", stream=s2)["status"] == 1  # NOT_READY
            h.watch("g_arr256", 0.05)
            r = ops.sync(h, s2)
            assert r.ok and set(h.stream_gates.launched) <= r.gates_open  # released, not timed out
            assert h.observe("g_arr256")[:16] == ops.pattern(5, 16)
    finally:
        h.close()
        h.adapter.close()


@pytest.mark.parametrize("call", ["free_host", "host_unregister"])
def test_a_free_that_waits_for_the_device_is_released_and_judged(call: str) -> None:
    """frees_wait: a page-locked copy pending behind a closed gate on device 1, then the
    free of its source (or the unregistration of another page) on device 0: the call waits
    for the gate, the suite opens it, and the call and the bytes are judged knowing that."""
    sim = Simulator(frees_wait=True)
    h = harness(sim, profile="spec")
    try:
        with watchdog(sim):  # a hang fails the test
            src = h.pinned(16, ops.pattern(6, 16))
            page = h.pageable(2 * 4096)
            ptr = (page.address + 4095) & ~4095
            assert h.call("host_register", ptr=ptr, size=4096).ok
            with h.on_device(1):
                s = h.stream()
                g = h.close_stream_gate(s)
                h.baseline("g_arr256")
                ops.to_symbol_async(h, "g_arr256", src, count=16, stream=s)
            if call == "free_host":
                r = h.call("free_host", host_ptr=src.address)
            else:
                r = h.call("host_unregister", ptr=ptr)
            assert r.ok and g in r.gates_open  # released, not timed out
            with h.on_device(1):
                ops.sync(h, s)
                h.observe("g_arr256")  # judged: the copy ran before (or while) its source went
    finally:
        h.close()
        h.adapter.close()


def test_a_slow_context_creation_under_a_closed_gate_is_released_and_judged() -> None:
    """setup_ms longer than the suite waits before opening its gates: setting a new device
    while a gate is closed has the gate opened; what follows is judged knowing that."""
    sim = Simulator(setup_ms=400)
    h = harness(sim, profile="cann")
    try:
        with watchdog(sim):  # a hang fails the test
            s = h.stream()
            g = h.close_stream_gate(s)
            src = h.pinned(16, ops.pattern(7, 16))
            ops.to_symbol_async(h, "g_arr256", src, count=16, stream=s)
            r = h.call("set_device", device_id=1)
            assert r.ok and g in r.gates_open
            h.call("set_device", device_id=0)
            h.call("stream_query", stream=s)  # COMPLETE or NOT_READY: the gate is open
            ops.sync(h, s)
            assert h.observe("g_arr256")[:16] == ops.pattern(7, 16)
    finally:
        h.close()
        h.adapter.close()


def test_an_expected_failure_counts_as_failed_in_the_run() -> None:
    """An expected failure marks its requirement failed in the run's shared state, as an
    unexpected one does: later tests that do not carry it steer around it (an entry
    ``R in TEST`` masks nothing from the start), as in a run without the entry; it claims
    no failure identity (a later test that meets it unlisted is not its known failure)."""
    h = harness(BoundLessThan())
    try:
        run = RunState.create()
        h.triage.run = run
        h.triage.expected = {"BOUNDS-END-EXACT": ("BOUNDS-END-EXACT in test_a.py::t", "known")}
        src = h.pageable(1, ops.pattern(3, 1))
        with pytest.raises(ExpectedFailure) as known:
            ops.to_symbol_async(h, "g_u8", src, count=1, stream=h.stream())
        assert known.value.key == "BOUNDS-END-EXACT in test_a.py::t"
        assert run.failed() == {"BOUNDS-END-EXACT"}
        assert run.owner(known.value.failure.identity) is None
    finally:
        h.close()
        h.adapter.close()
