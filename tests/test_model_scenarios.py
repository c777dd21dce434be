"""The memory model on the scenarios of the spec: what it accepts, what it rejects, and why.

Each rejection must name the requirement a vendor would look up.
"""

from __future__ import annotations

import pytest
from world import PAGEABLE, PINNED, W, initial, make_world

from acl_conformance.reference_impl.model import Expectation

H2D = 1
PIN = bytes(range(256)) * 32
"""The pinned buffer's contents (see world.make_world)."""
PAGE = bytes(255 - (i % 256) for i in range(8192))


def init(name: str) -> bytes:
    from world import SYMBOLS

    return initial(name, SYMBOLS[name])


def copy(
    w: W,
    name: str = "g_arr256",
    src: int = PINNED,
    count: int = 16,
    offset: int = 0,
    stream: int | None = None,
    thread: int = 0,
) -> list:
    return w.model.call(
        "memcpy_to_symbol_async",
        0,
        thread=thread,
        symbol=w.sym[name],
        src=src,
        count=count,
        offset=offset,
        kind=H2D,
        stream=w.stream if stream is None else stream,
    )


def expect_copy(w: W, src: int = PINNED, offset: int = 0, kind: int = H2D) -> Expectation:
    """The model's expectation of a 16-byte aclrtMemcpyToSymbolAsync into g_arr256 on the
    world's stream, to settle with what the backend said."""
    return w.model.expect(
        "memcpy_to_symbol_async",
        symbol=w.sym["g_arr256"],
        src=src,
        count=16,
        offset=offset,
        kind=kind,
        stream=w.stream,
    )


def reqs(violations: list) -> set[str | None]:
    return {v.requirement for v in violations}


def after(name: str, offset: int, data: bytes) -> bytes:
    base = bytearray(init(name))
    base[offset : offset + len(data)] = data
    return bytes(base)


@pytest.fixture(params=["spec", "cann"])
def w(request: pytest.FixtureRequest) -> W:
    return make_world(request.param)


def observe(w: W, name: str, data: bytes, device: int = 0) -> set[str | None]:
    return reqs(w.model.observe(device, name, 0, data))


# --- pinned ------------------------------------------------------------------
def test_pinned_copy_is_pending_until_a_sync(w: W) -> None:
    assert copy(w) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # not run yet: legal
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16])) == set()  # ran: legal
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16])) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == {"PINNED-COMPLETE-AFTER-SYNC"}


def test_pinned_copy_behind_a_closed_gate_is_not_visible(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    assert copy(w) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16])) == {"STREAM-FIFO"}
    assert observe(w, "g_arr256", init("g_arr256")) == set()
    assert w.model.gate_ids() == [1]
    w.ok("open_gate", gate=1)
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16])) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == set()


def test_gate_reaches_other_streams_through_events(w: W) -> None:
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    assert copy(w, stream=w.other_stream) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16])) == {"STREAM-EVENT-ORDER"}
    outcome = w.allowed("synchronize_stream", stream=w.other_stream)
    assert not outcome.accepts_success()


def test_two_copies_behind_an_event_that_ran_too_early_are_an_order_violation(w: W) -> None:
    # Two copies side by side, each behind a gate through an event: a read showing both
    # is one run of wrong bytes that no single copy explains; it is still an ordering
    # violation (the bytes are theirs), not bytes outside every copy's range.
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    assert copy(w, stream=w.other_stream, count=16) == []
    assert copy(w, stream=w.other_stream, src=PINNED + 16, count=16, offset=16) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:32])) == {"STREAM-EVENT-ORDER"}
    # Bytes no copy would write there are still stray.
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:16] + b"\xee" * 16)) != {
        "STREAM-EVENT-ORDER"
    }


def test_source_changed_while_pending(w: W) -> None:
    assert copy(w, count=4) == []
    w.ok("write_host", dst=PINNED + 1, data=b"\xee\xee")
    # each destination byte: any value its source byte held in the window
    for data in (PIN[:4], b"\x00\xee\xee\x03", b"\x00\x01\xee\x03", b"\x00\xee\x02\x03"):
        assert observe(w, "g_arr256", after("g_arr256", 0, data)) == set(), data
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\xee\x01\x02\x03")) == {"EFFECT-BYTES"}
    w.ok("synchronize_stream", stream=w.stream)
    w.ok("write_host", dst=PINNED + 3, data=b"\x77")  # after the sync: too late to matter
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x00\xee\x02\x03")) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x00\xee\x02\x77")) != set()


def test_registered_memory_acts_pinned_until_unregistered(w: W) -> None:
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # pending: the old bytes are legal
    w.ok("synchronize_stream", stream=w.stream)
    w.ok("host_unregister", ptr=PAGEABLE)
    assert copy(w, src=PAGEABLE + 8, count=8, offset=8) == []
    # pageable again: complete at return
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == {"PAGEABLE-BLOCKS"}
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()


def _reuse_registered_address(w: W) -> None:
    """Register a page, free its memory without unregistering, allocate again at the same
    address (as malloc does)."""
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    w.ok("free_pageable", ptr=PAGEABLE)
    w.ok("malloc_pageable", size=4096, outputs={"ptr": PAGEABLE, "contents": PAGE[:4096]})


def test_freed_address_reused_with_its_registration_outliving_the_free(w: W) -> None:
    """As in CANN: the registration still applies to the new memory (the copy is pinned)."""
    _reuse_registered_address(w)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # pending, as a pinned copy may be
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    code = w.model.call("host_register", 507910, ptr=PAGEABLE, size=4096)
    assert code == [], "the registration that outlived the free overlaps the new one"
    assert w.model.call("host_unregister", 0, ptr=PAGEABLE) == []


def test_freed_address_reused_with_its_registration_gone(w: W) -> None:
    """A backend whose registration dies with the memory: the copy is pageable, complete at
    return, and the old registration is not there to undo."""
    _reuse_registered_address(w)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    assert w.model.call("host_unregister", 507911, ptr=PAGEABLE) == []
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert copy(w, src=PAGEABLE + 8, count=8, offset=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()  # pinned: pending


def test_a_live_registration_still_decides(w: W) -> None:
    """Reuse does not weaken what a live registration means."""
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    again = w.model.call("host_register", 0, ptr=PAGEABLE, size=4096)
    assert reqs(again) == ({"HOST-MEMORY-CALLS"} if w.model.profile.name == "cann" else set())
    assert reqs(w.model.call("host_unregister", 507911, ptr=PAGEABLE)) == {"PINNED-REGISTERED"}


# --- pageable ----------------------------------------------------------------
def test_pageable_copy_is_complete_at_return(w: W) -> None:
    assert copy(w, src=PAGEABLE) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == {"PAGEABLE-BLOCKS"}


def test_pageable_source_reused_right_after_the_call(w: W) -> None:
    assert copy(w, src=PAGEABLE) == []
    w.ok("write_host", dst=PAGEABLE, data=b"\x11" * 16)
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x11" * 16)) == {"PAGEABLE-SOURCE-REUSE"}
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()


def test_pageable_copy_drains_its_stream(w: W) -> None:
    assert copy(w, count=8) == []  # pinned, pending
    assert copy(w, src=PAGEABLE, count=4, offset=8) == []  # pageable: waits for the pinned one
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8] + PAGE[:4])) == set()
    # The pinned copy is missing: the pageable call promised it was done (it drains the stream).
    assert observe(w, "g_arr256", after("g_arr256", 8, PAGE[:4])) == {"PAGEABLE-DRAINS-STREAM"}


def test_pageable_copy_returning_behind_a_closed_gate(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 3})
    assert reqs(copy(w, src=PAGEABLE)) == {"PAGEABLE-BLOCKS"}


def test_pageable_copy_that_waited_for_the_gate(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 3})
    exp = expect_copy(w, src=PAGEABLE)
    w.ok("open_gate", gate=3)  # a timer opened the gate while the call was blocked
    assert exp.settle(0) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()


# --- streams and events --------------------------------------------------------
def test_later_copy_on_the_same_stream_wins(w: W) -> None:
    assert copy(w, count=8) == []
    assert copy(w, src=PINNED + 100, count=8) == []
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[100:108])) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8])) == {"STREAM-FIFO"}


def test_different_streams_are_unordered(w: W) -> None:
    assert copy(w, count=8) == []
    assert copy(w, src=PINNED + 100, count=8, stream=w.other_stream) == []
    w.ok("synchronize_device")
    for data in (PIN[:8], PIN[100:108], PIN[:4] + PIN[104:108], PIN[100:104] + PIN[4:8]):
        assert observe(w, "g_arr256", after("g_arr256", 0, data)) == set()


def test_event_orders_two_streams(w: W) -> None:
    w.ok("create_event", outputs={"event": 0xE1})
    assert copy(w, count=8) == []
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    assert copy(w, src=PINNED + 100, count=8, stream=w.other_stream) == []
    w.ok("synchronize_stream", stream=w.other_stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[100:108])) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8])) == {"STREAM-EVENT-ORDER"}


def test_wait_on_a_never_recorded_event_orders_nothing(w: W) -> None:
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    assert copy(w, count=8) == []
    w.ok("record_event", event=0xE1, stream=w.stream)  # recorded after the wait: too late
    assert copy(w, src=PINNED + 100, count=8, offset=8, stream=w.other_stream) == []
    w.ok("synchronize_stream", stream=w.other_stream)
    # the first copy is not ordered before the sync: with or without it, both legal
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8] + PIN[100:108])) == set()
    assert observe(w, "g_arr256", after("g_arr256", 8, PIN[100:108])) == set()


def test_event_sync_completes_what_it_captured(w: W) -> None:
    w.ok("create_event", outputs={"event": 0xE1})
    assert copy(w, count=8) == []
    w.ok("record_event", event=0xE1, stream=w.stream)
    assert copy(w, src=PINNED + 100, count=8, offset=8) == []
    w.ok("synchronize_event", event=0xE1)
    assert (
        observe(w, "g_arr256", after("g_arr256", 0, PIN[:8])) == set()
    )  # second copy may be pending
    assert observe(w, "g_arr256", init("g_arr256")) == {"PINNED-COMPLETE-AFTER-SYNC"}


def test_query_complete_counts_as_a_sync(w: W) -> None:
    """A violation that follows from a backend's claim of completion is charged to the call
    that made the claim (here aclrtStreamQuery), not to the copy or the read."""
    assert copy(w, count=8) == []
    assert w.model.expect("stream_query", stream=w.stream).settle(0, status=0) == []
    v = w.model.observe(0, "g_arr256", 0, init("g_arr256"))
    assert [x.requirement for x in v] == ["STREAM-QUERY"]
    assert "because #" in v[0].message and "aclrtStreamQuery" in v[0].message


def test_query_must_say_not_ready_behind_a_gate_and_complete_when_done(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 9})
    assert reqs(w.model.expect("stream_query", stream=w.stream).settle(0, status=0)) == {
        "STREAM-QUERY"
    }
    w.ok("open_gate", gate=9)
    w.ok("synchronize_stream", stream=w.stream)
    assert reqs(w.model.expect("stream_query", stream=w.stream).settle(0, status=1)) == {
        "STREAM-QUERY"
    }
    assert w.model.expect("stream_query", stream=w.stream).settle(0, status=0) == []


def test_sync_with_timeout_that_succeeded_is_a_sync(w: W) -> None:
    assert copy(w, count=8) == []
    assert w.model.call("synchronize_stream_with_timeout", 507046, stream=w.stream, timeout=5) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # timed out: still pending
    assert w.model.call("synchronize_stream_with_timeout", 0, stream=w.stream, timeout=5) == []
    # The copy did not run although the synchronisation said so: charged to that call.
    assert observe(w, "g_arr256", init("g_arr256")) == {"SYNC-TIMEOUT"}


def test_null_stream_is_the_current_devices_default_stream(w: W) -> None:
    assert copy(w, count=8, stream=0) == []
    w.ok("synchronize_stream", stream=w.stream)  # another stream: orders nothing
    assert observe(w, "g_arr256", init("g_arr256")) == set()
    w.ok("synchronize_stream", stream=0)
    assert observe(w, "g_arr256", init("g_arr256")) == {"PINNED-COMPLETE-AFTER-SYNC"}


# --- the synchronous copy ------------------------------------------------------
def test_memcpy_to_symbol_is_complete_at_return_but_unordered_with_streams(w: W) -> None:
    assert copy(w, count=8) == []  # pinned, pending
    assert (
        w.model.call(
            "memcpy_to_symbol",
            0,
            symbol=w.sym["g_arr256"],
            src=PAGEABLE,
            count=8,
            offset=0,
            kind=H2D,
        )
        == []
    )
    # the pending pinned copy may still land on top
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8])) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == {"TOSYMBOL-SYNC"}


# --- effect: strays, neighbours, devices, hygiene --------------------------------
def test_stray_byte_in_the_same_variable(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=4, offset=4) == []
    data = bytearray(after("g_arr256", 4, PAGE[:4]))
    data[8] ^= 0xFF
    assert observe(w, "g_arr256", bytes(data)) == {"EFFECT-NO-STRAY"}


def test_neighbour_variable_changed(w: W) -> None:
    assert copy(w, name="g_u64", src=PAGEABLE, count=8) == []
    data = bytearray(init("g_arr256"))
    data[0] ^= 0xFF
    assert observe(w, "g_arr256", bytes(data)) == {"EFFECT-NEIGHBOURS"}


def test_each_device_has_its_own_instance(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=16) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()
    assert observe(w, "g_arr256", init("g_arr256"), device=1) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == {"DEVICE-INSTANCE"}


def test_copy_goes_to_the_current_device(w: W) -> None:
    w.ok("set_device", device_id=1)
    assert copy(w, src=PAGEABLE, count=16, stream=w.foreign_stream) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == set()
    assert observe(w, "g_arr256", init("g_arr256"), device=0) == set()


def test_threads_have_their_own_current_device(w: W) -> None:
    w.ok("set_device", thread=1, device_id=1)
    assert copy(w, src=PAGEABLE, count=16, stream=0, thread=1) == []
    assert observe(w, "g_arr256", init("g_arr256"), device=0) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == set()


def test_rejected_call_writes_nothing(w: W) -> None:
    bad = expect_copy(w, src=PAGEABLE, offset=250)
    assert bad.settle(100000) == []
    w.ok("synchronize_stream", stream=w.stream)
    data = bytearray(init("g_arr256"))
    data[250:256] = PAGE[:6]  # the rejected copy's bytes, clipped into the variable
    assert observe(w, "g_arr256", bytes(data)) == {"HYGIENE-NO-WRITE"}
    assert observe(w, "g_arr256", init("g_arr256")) == set()


def test_rejected_call_that_returned_success(w: W) -> None:
    (v,) = expect_copy(w, kind=2).settle(0)
    assert v.requirement == "KIND-REJECTED"


# --- asynchronous reads -------------------------------------------------------------
def read_async(w: W, stream: int, count: int = 16) -> None:
    w.ok("malloc_host", size=4096, outputs={"host_ptr": 0x7E00_0000_0000, "contents": bytes(4096)})
    w.ok(
        "memcpy_from_symbol_async",
        dst=0x7E00_0000_0000,
        dst_max=4096,
        symbol=w.sym["g_arr256"],
        count=count,
        offset=0,
        kind=2,
        stream=stream,
    )


def test_async_read_sees_what_its_stream_wrote_before(w: W) -> None:
    assert copy(w, count=8) == []
    read_async(w, w.stream)
    assert w.model.ready_reads() == []
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert w.model.check_read(r, after("g_arr256", 0, PIN[:8])[:16]) == []
    assert w.model.ready_reads() == []


def test_async_read_that_missed_an_earlier_copy(w: W) -> None:
    assert copy(w, count=8) == []
    read_async(w, w.stream)
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert w.model.check_read(r, init("g_arr256")[:16]) != []


def test_async_read_may_see_a_later_copy_of_another_stream(w: W) -> None:
    read_async(w, w.stream)
    assert copy(w, count=8, stream=w.other_stream) == []
    w.ok("synchronize_device")
    (r,) = w.model.ready_reads()
    assert w.model.check_read(r, after("g_arr256", 0, PIN[:8])[:16]) == []


def test_async_read_never_sees_a_later_copy_of_its_own_stream(w: W) -> None:
    read_async(w, w.stream)
    assert copy(w, count=8) == []
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert w.model.check_read(r, after("g_arr256", 0, PIN[:8])[:16]) != []
    # and its destination now holds what was read, as a source for later copies
    w.ok("synchronize_device")


def test_sync_read_into_pageable_memory(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=8) == []

    def read() -> Expectation:
        """A 16-byte aclrtMemcpyFromSymbol of g_arr256 into pageable memory."""
        return w.model.expect(
            "memcpy_from_symbol",
            dst=PAGEABLE + 4096,
            dst_max=16,
            symbol=w.sym["g_arr256"],
            count=16,
            offset=0,
            kind=2,
        )

    assert read().settle(0, observed=after("g_arr256", 0, PAGE[:8])[:16]) == []
    assert reqs(read().settle(0, observed=init("g_arr256")[:16])) == {"PAGEABLE-BLOCKS"}


# --- host memory edge cases -------------------------------------------------------
def test_unwritten_malloc_memory_copies_unspecified_bytes(w: W) -> None:
    w.ok("malloc_pageable", size=64, outputs={"ptr": 0x6100_0000_0000})
    assert copy(w, src=0x6100_0000_0000, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x42" * 8)) == set()
    w.ok("write_host", dst=0x6100_0000_0000, data=b"\x01" * 8)
    assert copy(w, src=0x6100_0000_0000, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x42" * 8)) != set()


def test_freeing_a_pending_source_makes_its_bytes_unspecified(w: W) -> None:
    assert copy(w, count=8) == []
    w.ok("free_host", host_ptr=PINNED)
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x99" * 8)) == set()


# --- device reset ----------------------------------------------------------------------
def test_contents_after_a_reset_are_unspecified_then_learned(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=16) == []
    w.ok("reset_device", device_id=0)
    assert w.model.world.current_device(0) is None
    assert w.model.world.classify_stream(w.stream).name == "DESTROYED"
    anything = bytes(256)
    assert observe(w, "g_arr256", anything) == set()
    changed = bytearray(anything)
    changed[3] = 1
    assert observe(w, "g_arr256", bytes(changed)) == {"EFFECT-NO-STRAY"}


def test_symbol_address_is_stable_per_device(w: W) -> None:
    s = w.sym["g_u32"]
    assert w.model.expect("get_symbol_address", symbol=s).settle(0, dev_ptr=0x1000) == []
    assert w.model.expect("get_symbol_address", symbol=s).settle(0, dev_ptr=0x1000) == []
    assert reqs(w.model.expect("get_symbol_address", symbol=s).settle(0, dev_ptr=0x2000)) == {
        "GETSYMBOL-ADDRESS"
    }
    w.ok("set_device", device_id=1)
    assert w.model.expect("get_symbol_address", symbol=s).settle(0, dev_ptr=0x2000) == []


def test_diagnosis_names_the_calls(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=4) == []
    (v,) = w.model.observe(0, "g_arr256", 0, init("g_arr256"))
    text = v.render()
    assert "g_arr256 bytes [0, 4)" in text
    assert (
        "aclrtMemcpyToSymbolAsync(&g_arr256, host0, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, stream1)"
        in text
    )
    assert "(complete)" in text and "observed:" in text


def test_bytes_of_several_copies_on_another_device_are_charged_to_the_instance(w: W) -> None:
    """Two copies on device 1, partly overlapping: their bytes together, seen on device 0,
    name the instance, even though neither copy alone explains them."""
    w.ok("set_device", device_id=1)
    assert copy(w, src=PAGEABLE, count=8, stream=0) == []
    assert copy(w, src=PAGEABLE + 100, count=2, offset=6, stream=0) == []
    w.ok("set_device", device_id=0)
    seen = bytearray(init("g_arr256"))
    seen[0:8] = PAGE[0:8]
    seen[6:8] = PAGE[100:102]
    assert observe(w, "g_arr256", bytes(seen)) == {"DEVICE-INSTANCE"}
