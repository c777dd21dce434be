"""Page-locked host memory: the call is asynchronous; the copy is complete after a sync."""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.authoring import registrations
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.suite.suite_helpers import PAGE
from acl_conformance.conformance.suite.suite_helpers import first_page
from acl_conformance.conformance.suite.suite_helpers import gate_opened_later
from acl_conformance.conformance.suite.suite_helpers import returned_while_closed
from acl_conformance.conformance.suite.suite_helpers import stream_status

VAR = "g_arr256"
SAFETY = 3.0
"""Seconds after which a timer opens the gate anyway: a backend that wrongly waits
returns then (and fails), instead of hanging the run."""


def registered_page(h: Harness, fill: bytes) -> tuple[HostBuffer, int]:
    """A malloc buffer with one 4 KiB page registered (aclrtHostRegisterV2 needs 4 KiB alignment)."""
    buf = h.pageable(3 * PAGE, ops.pattern(30, 3 * PAGE))
    off = first_page(buf)
    h.write(buf, off, fill)
    r = h.call("host_register", ptr=buf.at(off), size=PAGE)
    if not r.ok:
        h.fail(
            "PINNED-REGISTERED", f"aclrtHostRegisterV2 of a 4 KiB aligned page failed with {r.code}"
        )
    return buf, off


def behind_gate_returns_at_once(
    h: Harness, src: HostBuffer | int, requirement: str, src_offset: int = 0
) -> None:
    with gate_opened_later(h, SAFETY) as (s, g):
        r = ops.to_symbol_async(h, VAR, src, count=32, stream=s, src_offset=src_offset)
        returned_early = returned_while_closed(r, g)
        h.observe(VAR)  # the copy cannot have run: the gate is ahead of it
    if not returned_early:
        h.fail(
            requirement,
            f"the page-locked copy did not return until the gate ahead of it in its stream opened ({SAFETY:g} s)",
            call=h.model.last_call(),
            allowed="return at once: a successful call means the task is delivered, not executed",
            observed="the call waited for the stream",
        )
    ops.sync(h, s)
    h.observe(VAR)


@pytest.mark.requirement("PINNED-ASYNC", "STREAM-FIFO")
@pytest.mark.needs(gate=True)
def test_returns_at_once_behind_a_closed_gate(harness: Harness) -> None:
    h = harness
    behind_gate_returns_at_once(h, h.pinned(64, ops.pattern(31, 64)), "PINNED-ASYNC")


@pytest.mark.requirement("PINNED-COMPLETE-AFTER-SYNC", "EFFECT-BYTES")
@pytest.mark.parametrize("how", ["stream", "device", "event", "query"])
def test_complete_after_a_synchronisation(harness: Harness, how: str) -> None:
    h = harness
    src = h.pinned(256, ops.pattern(32, 256))
    dst = h.pinned(256, bytes(256))
    s = h.stream()
    ops.to_symbol_async(h, VAR, src, count=256, stream=s)
    # An asynchronous read behind it, into page-locked memory: its destination is looked at
    # in host memory once the synchronisation returns, with no call that could itself make
    # a lazy device run what it holds (as a synchronous read may).
    ops.from_symbol_async(h, dst, VAR, count=256, stream=s)
    if how == "stream":
        ops.sync(h, s)
    elif how == "device":
        h.call("synchronize_device")  # the call itself is under test here
    elif how == "event":
        e = ops.event(h)
        ops.record(h, e, s)
        h.call("synchronize_event", event=e)
    else:
        for _ in range(10_000):
            if stream_status(h, s) == 0:
                break
        else:
            ops.sync(h, s)
    assert h.observe(VAR) == ops.pattern(32, 256)


@pytest.mark.requirement("PINNED-SOURCE-WINDOW", "PINNED-COMPLETE-AFTER-SYNC")
@pytest.mark.needs(gate=True)
@pytest.mark.parametrize("gated", [False, True], ids=["running", "behind-gate"])
def test_source_changed_before_the_sync(harness: Harness, gated: bool) -> None:
    """Each destination byte may hold any value its source byte held until the sync."""
    h = harness
    src = h.pinned(64, ops.pattern(33, 64))
    s = h.stream()
    g = h.close_stream_gate(s) if gated else None
    ops.to_symbol_async(h, VAR, src, count=64, stream=s)
    h.write(src, 8, ops.pattern(34, 16))
    h.write(src, 40, ops.pattern(35, 8))
    if g is not None:
        h.open_stream_gate(g)
    ops.sync(h, s)
    h.write(src, 0, ops.pattern(36, 64))  # after the sync: must not matter
    h.observe(VAR)  # each byte: a value its source byte held between the call and the sync


@pytest.mark.requirement("PINNED-REGISTERED", "PINNED-ASYNC")
@pytest.mark.needs(gate=True, host_register=True)
def test_registered_memory_acts_pinned(harness: Harness) -> None:
    h = harness
    buf, off = registered_page(h, ops.pattern(37, 4096))
    behind_gate_returns_at_once(h, buf, "PINNED-REGISTERED", src_offset=off)


@pytest.mark.requirement("PINNED-REGISTERED", "PAGEABLE-BLOCKS")
@pytest.mark.needs(gate=True, host_register=True)
def test_unregistered_memory_is_pageable_again(harness: Harness) -> None:
    h = harness
    buf, off = registered_page(h, ops.pattern(38, 4096))
    h.call("host_unregister", ptr=buf.at(off))
    with gate_opened_later(h, 0.3) as (s, _g):
        ops.to_symbol_async(h, VAR, buf, count=32, stream=s, src_offset=off)  # waits for the gate
    assert h.observe(VAR)[:32] == ops.pattern(38, 32)


@pytest.mark.requirement("PINNED-START-POINTER")
@pytest.mark.needs(host_register=True)
def test_source_starting_in_registered_memory(harness: Harness) -> None:
    """A source that starts in the registered page and runs past it: either path is accepted."""
    h = harness
    buf, off = registered_page(h, ops.pattern(39, 4096))
    s = h.stream()
    ops.to_symbol_async(h, VAR, buf, count=64, stream=s, src_offset=off + 4096 - 32)
    h.observe(VAR)
    ops.sync(h, s)
    h.observe(VAR)


STARTS = {
    "in the page before": (0, 64),
    "in the registered page": (PAGE + 64, 64),
    "across into the registered page": (PAGE - 32, 64),
    "across out of the registered page": (2 * PAGE - 32, 64),
    "at the first byte after it": (2 * PAGE, 64),
    "in the page after": (2 * PAGE + 64, 64),
}


@pytest.mark.requirement(
    "PINNED-REGISTERED", "PINNED-START-POINTER", "PAGEABLE-BLOCKS", "PINNED-ASYNC"
)
@pytest.mark.needs(gate=True, host_register=True)
@pytest.mark.parametrize("where", list(STARTS))
def test_a_registered_page_inside_a_larger_allocation(harness: Harness, where: str) -> None:
    """Only the middle page of a three-page allocation is registered: a copy from the
    pages around it is pageable, one from inside it page-locked, and one that starts on
    one side and runs into the other is judged by where it starts (CANN) or may be
    either (spec).  The model says which; behind a closed gate the timing shows."""
    h = harness
    buf = h.pageable(4 * PAGE, ops.pattern(620, 4 * PAGE))
    base = first_page(buf)
    assert h.call("host_register", ptr=buf.at(base + PAGE), size=PAGE).ok
    start, count = STARTS[where]
    # a pageable copy waits for the gate; a pinned one does not
    with gate_opened_later(h, 0.3) as (s, g):
        r = ops.to_symbol_async(h, VAR, buf, count=count, stream=s, src_offset=base + start)
        returned_early = returned_while_closed(r, g)
    ops.sync(h, s)
    assert h.observe(VAR)[:count] == ops.pattern(620, 4 * PAGE)[base + start : base + start + count]
    if where == "in the registered page" and not returned_early:
        h.fail(
            "PINNED-REGISTERED",
            "a copy from the registered page waited for the gate ahead of it",
            allowed="return at once: registered memory is page-locked",
            observed="the call waited for the stream",
        )


@pytest.mark.requirement("PINNED-REGISTERED", "HOST-MEMORY-CALLS", "PAGEABLE-BLOCKS")
@pytest.mark.needs(gate=True, host_register=True)
def test_unregister_then_register_the_same_memory_again(harness: Harness) -> None:
    """Registered, unregistered, registered again: each time the same memory takes the
    path its registration says."""
    h = harness
    buf, off = registered_page(h, ops.pattern(630, PAGE))
    behind_gate_returns_at_once(h, buf, "PINNED-REGISTERED", src_offset=off)
    assert h.call("host_unregister", ptr=buf.at(off)).ok
    with gate_opened_later(h, 0.3) as (s, _g):
        h.write(buf, off, ops.pattern(631, 32))
        ops.to_symbol_async(h, VAR, buf, count=32, stream=s, src_offset=off)  # pageable: waits
    assert h.observe(VAR)[:32] == ops.pattern(631, 32)
    assert h.call("host_register", ptr=buf.at(off), size=PAGE).ok
    h.write(buf, off, ops.pattern(632, 32))
    behind_gate_returns_at_once(h, buf, "PINNED-REGISTERED", src_offset=off)


@pytest.mark.requirement(
    "PINNED-REGISTERED",
    "PINNED-ASYNC",
    "PAGEABLE-BLOCKS",
    "PAGEABLE-DRAINS-STREAM",
    "HOST-MEMORY-CALLS",
)
@pytest.mark.needs(gate=True, host_register=True)
@pytest.mark.parametrize("drop", [0, 1], ids=["first", "second-same-allocation"])
def test_several_ranges_one_unregistered_then_registered_again(harness: Harness, drop: int) -> None:
    """Three ranges registered (two pages of one allocation, one of another); one that is
    not the most recent unregistered: the others still act page-locked, it pageable;
    registered again, it acts page-locked again (conformance/authoring/registrations.py)."""
    h = harness
    ranges = registrations.disjoint_ranges(h, 640)
    registrations.unregister_one_then_register_again(h, VAR, ranges, drop, 650)
