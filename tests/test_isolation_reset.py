"""Isolation ``reset``: one backend instance serves every harness of a worker, brought back
to a known state through the contract after each (``conformance/harness/reset.py``,
``conformance/session/context.py``), and a failure on a reused instance is checked on fresh ones
(``conformance/session/attempts.py``).

- one instance serves every harness, and a variable one harness wrote holds its first-read
  bytes again when the next harness reads it; with the rewrite left out it does not (the
  check can fail), and the suite notices and replaces the instance;
- only what copies wrote is rewritten: four bytes of the 16 MiB variable cost a four-byte
  rewrite, a harness that wrote nothing costs none;
- the clean-up and the reset are judged as a test's calls are: a wrong answer there (a
  call fails, a read-back differs, the clean-up failed) or a hang is the test's failure,
  charged to a requirement and naming the call, and the instance is replaced; a reset the
  suite cannot make is no failure of the backend, and the instance is replaced too; the
  count of instances and the list of restarts say why; so do a crash and a hang;
- a device reset costs no fresh instance: each variable of the reset device that the
  instance read is read once and compared with its first-read bytes, only what differs
  is rewritten (a device that zero-fills its variables on a reset gets them back; one
  that gives back the starting bytes costs one read of g_arr16m), a variable no harness
  read is left as the reset left it, and the reset's reads are judged (a wrong one is
  the test's failure, charged); the instance's aclrtSetDevice references are brought
  back down to one;
- the same through the agent: one agent process serves harness after harness, and an
  agent that dies in its reset is replaced;
- through the plugin: a test that fails on a reused instance and passes on fresh ones
  passes, "recovered", the run's shared state hears nothing of the failure, and the
  worker gives every later harness a fresh instance; a failure that fresh instances find
  too stands, charged to its requirement; with one instance and no reset (the control)
  the leak fails the test (flaky, as its replay against a fresh backend passes);
- the catalogue's leaking variant (``stream-table-fills``) passes the whole suite by
  recovery, and fails STREAM-CALLS with one instance and no reset.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cann_support import clean_env
from plugin_support import by_suite_id
from plugin_support import run_fake_suite
from plugin_support import write_fake_module
from reset_support import COUNTS_PLUGIN
from reset_support import agent_counts
from reset_support import counting_env

from acl_conformance.adapters.base import CallTimeout
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.gating.results import instances
from acl_conformance.conformance.harness import reset
from acl_conformance.conformance.harness.failure import BackendCrash
from acl_conformance.conformance.harness.failure import BackendTimeout
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.ledger import Ledger
from acl_conformance.conformance.harness.ledger import Written
from acl_conformance.conformance.session import context
from acl_conformance.conformance.session.context import Suite
from acl_conformance.conformance.session.suite_command import suite_command
from acl_conformance.reports.evidence_text import instances_text

VAR = "g_u32"


def _suite(backend: str = "Resetting", **options: str) -> Suite:
    return Suite(adapter_name=f"reset_support:{backend}", adapter_options=options, profile="spec")


@pytest.fixture
def suite() -> Iterator[Suite]:
    s = _suite()
    try:
        yield s
    finally:
        s.close()


def _other_bytes(data: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in data)


def _write(h: Harness, var: str = VAR) -> bytes:
    """Write other bytes than ``var`` holds into it (synchronously); what it held."""
    before = h.observe(var)
    src = h.pageable(len(before), _other_bytes(before))
    ops.to_symbol(h, var, src, count=len(before))
    assert h.observe(var) != before
    return before


def _written_then_read(suite: Suite) -> tuple[bytes, bytes]:
    """One harness writes g_u32; the next reads it: (what the first read, what the next
    read)."""
    with suite.harness() as h:
        before = _write(h)
    with suite.harness() as h:
        after = h.observe(VAR)
    return before, after


# -- the reset ------------------------------------------------------------------------------------
def test_one_instance_serves_and_a_written_variable_is_restored(suite: Suite) -> None:
    first = suite.adapter()
    before, after = _written_then_read(suite)
    assert after == before
    assert suite.adapter() is first
    assert suite.instances_started == Counter({"start": 1}) and not suite.reset_failures


def test_without_the_rewrite_the_next_harness_sees_the_write(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the test above: with a reset that rewrites nothing, the next
    harness reads what the first one wrote; the suite sees that the variable moved and
    replaces the instance."""
    monkeypatch.setattr(reset, "restore", lambda *args: [])
    before, after = _written_then_read(suite)
    assert after == _other_bytes(before)
    assert "g_u32 on device 0 held other bytes" in suite.reset_failures[0], suite.reset_failures
    suite.adapter()
    assert suite.instances_started == Counter({"start": 1, "failed reset": 1})


def test_the_references_the_reset_takes_are_counted(suite: Suite) -> None:
    """The reset brings each device's aclrtSetDevice references down to one (however many
    the harnesses took) and makes device 0 current (one more): the next harness's model
    counts them, so that as many aclrtResetDevice calls as it counts end the device's
    context (a stream created there is destroyed with it)."""
    for _ in range(3):
        with suite.harness() as h:
            h.call("set_device", device_id=1)
            h.call("set_device", device_id=1)
            _write(h)  # a write on device 1: the reset rewrites it there
    with suite.harness() as h:
        # device 1: the one left; device 0: that one, the reset's and this harness's
        assert h.model.device_references(1) == 1
        assert h.model.device_references(0) == 3
        h.call("set_device", device_id=1)
        s = h.stream()
        h.call("set_device", device_id=0)
        for _ in range(h.model.device_references(1)):
            h.call("reset_device", device_id=1)
        # the context of device 1 ended: its stream with it (judged by the model)
        h.call("synchronize_stream", stream=s)
    sim = suite.adapter().inner
    counted = suite.adapter().references()
    assert all(sim._devices.references(d) == counted.get(d, 0) for d in (0, 1))


def test_only_what_was_written_is_rewritten(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = suite.adapter().inner
    rewrites: list[tuple[int, int, int]] = []
    real = inner.memcpy_to_symbol

    def spy(symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        rewrites.append((symbol, offset, count))
        return real(symbol, src, count, offset, kind)

    monkeypatch.setattr(inner, "memcpy_to_symbol", spy)
    with suite.harness() as h:
        big = ops.symbol(h, "g_arr16m")
        src = h.pinned(4, b"\x01\x02\x03\x04")
        s = h.stream()
        ops.to_symbol_async(h, "g_arr16m", src, count=4, offset=1000, stream=s)
        ops.sync(h, s)
        assert rewrites == []  # (the harness itself made no synchronous copy)
    assert rewrites == [(big, 1000, 4)]
    rewrites.clear()
    with suite.harness() as h:
        assert h.observe("g_arr16m", offset=1000, count=4) != b"\x01\x02\x03\x04"
        h.observe("g_u8")
    assert rewrites == []
    assert suite.instances_started == Counter({"start": 1}) and not suite.reset_failures


def test_the_plan_rewrites_what_accepted_copies_may_have_written(suite: Suite) -> None:
    with suite.harness() as h:
        fixtures = h.fixtures
    f = {name: v.address for name, v in fixtures.items()}
    sizes = {name: v.size for name, v in fixtures.items()}

    def plan(*writes: Written) -> reset.Ranges:
        return reset.plan(Ledger(devices_used={0, 1}, writes=list(writes)), fixtures)

    exact = plan(
        Written(0, f["g_arr4k"], 10, 5),
        Written(0, f["g_arr4k"], 12, 8),  # overlaps the first: joined
        Written(0, f["g_arr4k"], 20, 4),  # touches them: joined
        Written(0, f["g_arr4k"], 100, 1),
        Written(1, f["g_u32"], 0, 4),
        Written(None, f["g_u8"], 0, 1),  # the device is not known: every device used
    )
    spanned = plan(*[Written(0, f["g_arr4k"], 2 * k, 1) for k in range(reset.MAX_RANGES + 1)])
    stray = plan(Written(1, f["g_arr4k"] + 8, 0, 4))  # not a variable's start
    past = plan(Written(0, f["g_arr4k"], 4090, 8))  # past its end
    assert exact == {
        (0, "g_arr4k"): [(10, 24), (100, 101)],
        (1, "g_u32"): [(0, 4)],
        (0, "g_u8"): [(0, 1)],
        (1, "g_u8"): [(0, 1)],
    }
    assert spanned == {(0, "g_arr4k"): [(0, 2 * reset.MAX_RANGES + 1)]}
    every = {(1, name): [(0, n)] for name, n in sizes.items()}
    assert stray == every
    assert past == {(0, name): span for (_, name), span in every.items()}


def _fails_a_call(monkeypatch: pytest.MonkeyPatch, h: Harness) -> None:
    monkeypatch.setattr(h.adapter.inner, "memcpy_to_symbol", lambda **kw: 100000)


def _writes_nothing(monkeypatch: pytest.MonkeyPatch, h: Harness) -> None:
    monkeypatch.setattr(h.adapter.inner, "memcpy_to_symbol", lambda **kw: 0)


def _leaves_a_stream(monkeypatch: pytest.MonkeyPatch, h: Harness) -> None:
    h.stream()
    monkeypatch.setattr(h.adapter.inner, "destroy_stream", lambda stream: 107017)


BROKEN: dict[str, tuple[Callable[[pytest.MonkeyPatch, Harness], None], str, str]] = {
    # (how the backend breaks, the call the failure names, the stage it names)
    "a call fails": (_fails_a_call, "aclrtMemcpyToSymbol(&g_u32", "the suite's reset"),
    "a read-back differs": (_writes_nothing, "aclrtMemcpyFromSymbol(", "the suite's reset"),
    "the clean-up failed": (_leaves_a_stream, "aclrtDestroyStream(", "the suite's clean-up"),
}


@pytest.mark.parametrize("how", list(BROKEN))
def test_a_wrong_answer_in_the_reset_is_the_tests_failure(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The clean-up and the reset are judged as a test's calls are: a wrong answer there
    is the test's failure, charged to a requirement, naming the call and the stage; the
    instance is replaced, and the restart is listed as charged."""
    breaks, call, stage = BROKEN[how]
    first = suite.adapter()
    with pytest.raises(ConformanceFailure) as caught, suite.harness() as h:
        _write(h)
        breaks(monkeypatch, h)
    f = caught.value
    text = str(f)
    assert f.requirement is not None, text
    assert call in text and stage in text, text
    with suite.harness() as h:
        assert h.adapter is not first
        _write(h)  # the fresh instance works, and is reset
    assert suite.instances_started == Counter({"start": 1, "failed reset": 1})
    (restart,) = suite.restarts_listed
    assert restart["charged"] and restart["requirement"] == f.requirement, restart


def test_a_failed_reset_starts_a_fresh_instance(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reset the suite cannot make (the run declines its rewrite: a call in the same
    situation hung earlier) is no failure of the backend: the instance is replaced, the
    count says why, and the restart is listed as charged to nothing, with why."""
    first = suite.adapter()
    hung = {"requirement": "TOSYMBOL-SYNC", "call": "aclrtMemcpyToSymbol", "what": "hung"}
    with suite.harness() as h:
        _write(h)
        monkeypatch.setattr(
            h.backend,
            "would_hang",
            lambda name, args: hung if name == "memcpy_to_symbol" else None,
        )
    assert len(suite.reset_failures) == 1 and "not made" in suite.reset_failures[0]
    with suite.harness() as h:
        assert h.adapter is not first
    assert suite.instances_started == Counter({"start": 1, "failed reset": 1})
    (restart,) = suite.restarts_listed
    assert not restart["charged"] and "not made" in restart["why"], restart


def test_a_reset_that_hangs_is_a_timeout_and_starts_a_fresh_instance() -> None:
    """A backend whose calls may hang: the reset is bounded by the call timeout, and its
    hang is the test's, charged to the requirement the call's success stands for."""
    suite = _suite("HangsWhenAsked")
    suite.call_timeout = 0.5
    first = suite.adapter()
    try:
        with pytest.raises(BackendTimeout) as caught, suite.harness() as h:
            src = h.pageable(4, b"\x01\x02\x03\x04")
            ops.to_symbol_async(h, VAR, src, count=4)
            ops.sync(h)
            first.inner.hang.set()  # the reset's aclrtMemcpyToSymbol hangs
        hang = caught.value
        assert hang.requirement and "aclrtMemcpyToSymbol(" in str(hang), str(hang)
        assert "did not return within 0.5 s" in str(hang)
        first.inner.hang.clear()
        suite.next_test()  # (within one test, a later harness meets the same hang at once)
        with suite.harness() as h:
            assert h.adapter is not first
        assert suite.instances_started == Counter({"start": 1, "timeout": 1})
        (restart,) = suite.restarts_listed
        assert restart["charged"] and restart["requirement"] == hang.requirement
    finally:
        first.inner.released.set()
        suite.close()


@pytest.mark.parametrize(
    "raised,reason", [(RuntimeError("boom"), "crash"), (CallTimeout("no answer"), "timeout")]
)
def test_a_crash_or_a_hang_starts_a_fresh_instance(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, raised: Exception, reason: str
) -> None:
    def fails(stream: int) -> tuple[int, int]:
        raise raised

    with pytest.raises(BackendCrash), suite.harness() as h:
        monkeypatch.setattr(h.adapter.inner, "stream_query", fails)
        h.call("stream_query", stream=0)
    suite.adapter()
    assert suite.instances_started == Counter({"start": 1, reason: 1}) and not suite.reset_failures


# -- large variables and device resets --------------------------------------------------------------
BIG = "g_arr16m"
MIB16 = 16 << 20


def _reset_device(h: Harness, device: int) -> None:
    """End ``device``'s context (as many aclrtResetDevice as it holds references, from the
    other device), then set it again."""
    h.call("set_device", device_id=1 - device)
    for _ in range(h.model.device_references(device)):
        h.call("reset_device", device_id=device)
    h.call("set_device", device_id=device)


def _writes_big_then_resets(suite: Suite) -> bytes:
    """A harness writes four bytes of g_arr16m on device 1, then resets device 1 (g_arr1m,
    never read there, included): what it first read of g_arr16m there."""
    with suite.harness() as h:
        h.call("set_device", device_id=1)
        src = h.pageable(4, b"\x01\x02\x03\x04")
        ops.to_symbol(h, BIG, src, count=4, offset=1000)
        _reset_device(h, 1)
        return h.first_reads[(1, BIG)]


def test_differing_runs_are_whole_blocks() -> None:
    block = 4096
    want = bytes(range(256)) * (3 * block // 256) + b"\x07" * 10
    now = bytearray(want)
    now[5] ^= 1  # block 0
    now[2 * block + 1] ^= 1  # block 2
    now[3 * block + 9] ^= 1  # the short last block
    assert reset.differing_runs(bytes(now), want) == [(0, block), (2 * block, 3 * block + 10)]
    assert reset.differing_runs(want, want) == []
    assert reset.differing_runs(want[:100], want) == [(100, len(want))]


@pytest.mark.parametrize("rewrite", [True, False])
def test_a_device_reset_is_undone_without_a_fresh_instance(
    monkeypatch: pytest.MonkeyPatch, rewrite: bool
) -> None:
    """A harness wrote part of g_arr16m and reset the device, whose next context starts
    zero-filled: the reset reads g_arr16m (the instance read it first), rewrites what
    differs, and the next harness reads the starting bytes there, on the same instance
    (g_arr1m, which no harness read there, is left as the device reset left it).  The
    control: with nothing rewritten, the next harness reads zeros, and the suite replaces
    the instance."""
    if not rewrite:
        monkeypatch.setattr(reset, "_rewrite", lambda *args: None)
    suite = _suite("ZeroedOnReset")
    try:
        first = suite.adapter()
        start = _writes_big_then_resets(suite)
        with suite.harness() as h:
            h.call("set_device", device_id=1)
            after = h.observe(BIG, offset=0, count=MIB16)
            assert h.adapter is first
        if rewrite:
            assert after == start
            assert suite.instances_started == Counter({"start": 1}), suite.reset_failures
            assert not suite.reset_failures
        else:
            assert after == bytes(MIB16)
            (why,) = suite.reset_failures
            assert "g_arr16m on device 1" in why and "held other bytes" in why, why
    finally:
        suite.close()


def test_a_device_reset_that_restores_the_starting_bytes_costs_one_read() -> None:
    """The device gives its variables their starting bytes back on a reset (as the bundled
    backends do): the reset reads g_arr16m once and rewrites none of it."""
    suite = _suite("ZeroedOnReset", zero="0")
    try:
        inner = suite.adapter().inner
        with suite.harness() as h:
            h.call("set_device", device_id=1)
            src = h.pageable(4, b"\x01\x02\x03\x04")
            ops.to_symbol(h, BIG, src, count=4, offset=1000)
            _reset_device(h, 1)
            inner.moved.clear()
        # (the read of g_arr4k, whole, reads its neighbour g_arr1m first: 1 MiB)
        large = [(call, n) for call, n in inner.moved if n >= 1 << 20]
        assert sorted(large) == [("from", 1 << 20), ("from", MIB16)], large
        assert suite.instances_started == Counter({"start": 1}) and not suite.reset_failures
    finally:
        suite.close()


def test_a_wrong_read_of_a_large_variable_in_the_reset_is_charged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reset's read of g_arr16m after a device reset (the harness's starting read of
    it) is judged as a test's call is: a read the profile does not allow is the test's
    failure, charged to a requirement, and the instance is replaced."""
    suite = _suite("ZeroedOnReset")
    try:
        first = suite.adapter()
        with suite.harness() as h:
            h.observe(BIG, device=1)  # the instance reads it: later resets restore it
        with pytest.raises(ConformanceFailure) as caught, suite.harness() as h:
            h.call("set_device", device_id=1)
            _reset_device(h, 1)
            real = first.inner.memcpy_from_symbol

            def fails_large(**kw: int) -> int:
                return 100000 if kw["count"] >= MIB16 else real(**kw)

            monkeypatch.setattr(first.inner, "memcpy_from_symbol", fails_large)
        f = caught.value
        assert f.requirement is not None and "aclrtMemcpyFromSymbol(" in str(f), str(f)
        with suite.harness() as h:
            assert h.adapter is not first
        assert suite.instances_started == Counter({"start": 1, "failed reset": 1})
        (restart,) = suite.restarts_listed
        assert restart["charged"], restart
    finally:
        suite.close()


# -- through the agent ------------------------------------------------------------------------------
def test_one_agent_serves_and_is_reset() -> None:
    """The cann adapter's default: harness after harness on one agent process, a written
    variable back to its first-read bytes for the next."""
    suite = Suite(adapter_name="cann", adapter_options={"double": "1"}, profile="cann")
    try:
        pid = suite.adapter().inner.pid
        before, after = _written_then_read(suite)
        assert after == before and suite.adapter().inner.pid == pid
        assert suite.instances_started == Counter({"start": 1}) and not suite.reset_failures
    finally:
        suite.close()


def test_an_agent_that_dies_in_its_reset_is_replaced() -> None:
    """The double segfaults in aclrtMemcpyToSymbol, which only the reset calls here: the
    crash is the test's (a CRASH naming the call and the reset), and the next harness has a
    fresh agent."""
    suite = Suite(
        adapter_name="cann",
        adapter_options={"double": "segv-on:aclrtMemcpyToSymbol"},
        profile="cann",
    )
    try:
        pid = suite.adapter().inner.pid
        with pytest.raises(BackendCrash) as caught, suite.harness() as h:
            src = h.pinned(4, b"\x01\x02\x03\x04")
            s = h.stream()
            ops.to_symbol_async(h, VAR, src, count=4, stream=s)
            ops.sync(h, s)
        text = str(caught.value)
        assert "aclrtMemcpyToSymbol(" in text and "the suite's reset" in text, text
        assert "SIGSEGV" in text
        suite.next_test()
        with suite.harness() as h:
            assert h.adapter.inner.pid != pid
            h.observe(VAR)
        assert suite.instances_started == Counter({"start": 1, "crash": 1})
        assert [r["charged"] for r in suite.restarts_listed] == [True]
    finally:
        suite.close()


# -- rechecks on fresh instances, through the plugin -------------------------------------------
@pytest.fixture
def in_suite(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    from acl_conformance.conformance.plugin import shared

    monkeypatch.setattr(shared, "SUITE_DIR", (pytester.path / "fake_suite").resolve())
    monkeypatch.setattr(shared, "suite_modules", lambda: {"test_x.py", "test_y.py"})


TWO_STREAMS_EACH = """
import pytest

@pytest.mark.requirement("STREAM-CALLS")
def test_a(harness):
    harness.stream()
    harness.stream()

@pytest.mark.requirement("STREAM-CALLS")
def test_b(harness):
    harness.stream()
    harness.stream()

@pytest.mark.requirement("STREAM-CALLS")
def test_c(harness):
    harness.stream()
    harness.stream()
"""
"""Three tests that create two streams each: against a backend that allows three per
instance, the second test meets the limit on a reused instance."""


def _fake_run(pytester: pytest.Pytester, source: str, backend: str, *options: str) -> Any:
    write_fake_module(pytester, source)
    opts = [a for o in options for a in ("--acl-adapter-option", o)]
    result, doc = run_fake_suite(pytester, f"--acl-adapter=reset_support:{backend}", *opts)
    return result, by_suite_id(doc), context.current()


def test_a_failure_fresh_instances_do_not_find_is_recovered(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    result, recs, suite = _fake_run(pytester, TWO_STREAMS_EACH, "StreamsRunOut")
    result.assert_outcomes(passed=3)
    assert {sid: r["status"] for sid, r in recs.items()} == dict.fromkeys(
        ("test_x.py::test_a", "test_x.py::test_b", "test_x.py::test_c"), "pass"
    )
    assert recs["test_x.py::test_b"]["attempts"] == 1 and not recs["test_x.py::test_b"]["failures"]
    assert suite.recovered == ["test_x.py::test_b"]
    # what it failed on, on the reused instance, is kept and told
    (why,) = suite.recovered_failures
    assert why.startswith("[STREAM-CALLS] aclrtCreateStream"), why
    doc = instances(suite.instances_started, suite.recovered, [], suite.recovered_failures)
    assert f"test_x.py::test_b failed on a reused instance ({why})" in instances_text(
        {"instances": doc}
    )
    # test_b again on a fresh instance, then test_c on one of its own
    assert suite.instances_started == Counter(
        {"start": 1, "recheck on a fresh backend instance": 1, "after a recovery": 1}
    )
    assert suite.run is not None and suite.run.failed() == frozenset()


def test_the_leak_fails_a_test_with_one_instance_and_no_reset(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """The control of the test above: the same backend asking for isolation run."""
    _, recs, suite = _fake_run(pytester, TWO_STREAMS_EACH, "StreamsRunOut", "isolation=run")
    assert recs["test_x.py::test_a"]["status"] == "pass"
    # (flaky: the failing trace, replayed against a fresh backend, passes)
    assert recs["test_x.py::test_b"]["status"] in ("fail", "flaky"), recs["test_x.py::test_b"]
    assert "207008" in (recs["test_x.py::test_b"]["message"] or "")
    assert not suite.recovered and suite.instances_started["start"] == 1
    # no instance but the replays of the failing trace (each against a fresh backend)
    assert set(suite.instances_started) <= {"start", "replay of a failing trace"}


A_REAL_BUG = """
import pytest

@pytest.mark.requirement("KIND-ACCEPTED")
def test_first(harness):
    harness.observe("g_u8")

@pytest.mark.requirement("EFFECT-BYTES")
def test_bug(harness):
    harness.observe("g_u8")
    harness.fail("EFFECT-BYTES", "planted failure")
"""


def test_a_failure_fresh_instances_find_too_stands(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    _, recs, suite = _fake_run(pytester, A_REAL_BUG, "Resetting")
    bug = recs["test_x.py::test_bug"]
    assert bug["status"] == "fail" and recs["test_x.py::test_first"]["status"] == "pass"
    (f,) = bug["failures"]
    assert f["requirement"] == "EFFECT-BYTES" and f["same_as"] is None
    # charged by the run once the recheck found it; attempt 2, with it masked, declines
    assert suite.run is not None and suite.run.failed() == {"EFFECT-BYTES"}
    assert bug["attempts"] == 2 and bug["masks"] == ["EFFECT-BYTES"]
    assert not suite.recovered
    assert suite.instances_started == Counter(
        {"start": 1, "recheck on a fresh backend instance": 1}
    )


# -- the catalogue's leaking variant, the whole suite ----------------------------------------------
def _variant_run(
    tmp: Path, options: list[str], extra: list[str]
) -> tuple[dict[str, Any], Counter[str], list[str]]:
    counts = tmp / f"counts-{time.monotonic_ns()}"
    out = counts / "results.json"
    cmd = suite_command(
        "cann",
        adapter="acl_conformance.adapters.variants:variant",
        adapter_options=["name=stream-table-fills", *options],
        results=out,
        extra=["--acl-examples", "10", "-p", COUNTS_PLUGIN, *extra],
    )
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=tmp,
        timeout=600,
        env=clean_env(**counting_env(counts)),
    )
    assert out.exists(), (proc.stdout + proc.stderr)[-3000:]
    agents, recovered, _ = agent_counts(counts)
    return json.loads(out.read_text()), agents, recovered


def test_the_leaking_variant_passes_by_recovery_and_fails_without(tmp_path: Path) -> None:
    doc, agents, recovered = _variant_run(tmp_path, [], [])
    bad = [r["suite_id"] for r in doc["results"] if r["status"] not in ("pass", "skipped")]
    assert not bad and len(doc["results"]) >= 240, bad
    assert recovered and agents["recheck on a fresh backend instance"] >= 1, (agents, recovered)
    assert agents["start"] == 1 and not agents["failed reset"], agents

    # The control: one instance, no reset, no recheck (up to the first failure, unshrunk).
    doc, agents, recovered = _variant_run(
        tmp_path, ["isolation=run"], ["--acl-no-shrink", "--acl-stop-on", "STREAM-CALLS"]
    )
    failed = [r for r in doc["results"] if r["status"] in ("fail", "flaky")]
    assert failed and not recovered, agents
    assert not agents["recheck on a fresh backend instance"] and not agents["after a recovery"], (
        agents
    )
    assert any(
        r["failed_requirement"] == "STREAM-CALLS" and "207008" in (r["message"] or "")
        for r in failed
    ), [(r["suite_id"], r["failed_requirement"]) for r in failed]
