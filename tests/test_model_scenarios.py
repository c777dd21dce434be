"""The memory model on the scenarios of the spec: what it accepts, what it rejects, and why.

Each rejection must name the requirement a vendor would look up."""

from __future__ import annotations

from model_scenarios_support import PAGE
from model_scenarios_support import PIN
from model_scenarios_support import _reuse_registered_address
from model_scenarios_support import after
from model_scenarios_support import announce_copy
from model_scenarios_support import copy
from model_scenarios_support import init
from model_scenarios_support import observe
from model_scenarios_support import reqs
from model_scenarios_support import w_fixture  # noqa: F401 (a fixture, by its name= )
from world import PAGEABLE
from world import PINNED
from world import W
from world import announce
from world import call
from world import observe_now


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
    # pageable again: complete at return (where PINNED-REGISTERED is a MUST, a copy from
    # memory unregistered since that acts page-locked is charged there)
    expected = "PINNED-REGISTERED" if w.model.profile.name == "cann" else "PAGEABLE-BLOCKS"
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == {expected}
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()


def test_with_pageable_copies_known_not_to_block_unregistered_memory_is_charged_there(
    w: W,
) -> None:
    """Where copies from memory never registered are known not to block (PAGEABLE-BLOCKS
    masked: it failed earlier in the run), a copy from memory unregistered since that acts
    page-locked is that same bug, not the unregistration's: set aside, not charged to
    PINNED-REGISTERED."""
    w.model.masks = frozenset({"PAGEABLE-BLOCKS"})
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    w.ok("host_unregister", ptr=PAGEABLE)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # not landed yet: the masked bug
    w.model.set_aside.clear()
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 5})
    w.model.masks = frozenset({"PAGEABLE-DRAINS-STREAM"})
    # returned while a gate ahead was closed: the drain's (masked), set aside as well
    assert copy(w, src=PAGEABLE + 8, count=8, offset=8) == []
    assert [v.requirement for v in w.model.set_aside] == ["PAGEABLE-DRAINS-STREAM"]
    assert "PINNED-REGISTERED" in w.model.set_aside[0].also


def test_a_test_that_carries_the_pageable_requirement_known_to_fail_charges_it(w: W) -> None:
    """Not masked (the test checks it), but known to fail in the run: the copy from memory
    unregistered since that did not block is the pageable bug again."""
    w.model.known_failing = frozenset({"PAGEABLE-BLOCKS"})
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    w.ok("host_unregister", ptr=PAGEABLE)
    assert copy(w, src=PAGEABLE, count=8) == []
    (v,) = observe_now(w.model, 0, "g_arr256", 0, init("g_arr256"))
    assert (v.requirement, v.late) == ("PAGEABLE-BLOCKS", "PAGEABLE-BLOCKS")


def test_freed_address_reused_with_its_registration_outliving_the_free(w: W) -> None:
    """As in CANN: the registration still applies to the new memory (the copy is pinned)."""
    _reuse_registered_address(w)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # pending, as a pinned copy may be
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    code = call(w.model, "host_register", 507910, ptr=PAGEABLE, size=4096)
    assert code == [], "the registration that outlived the free overlaps the new one"
    assert call(w.model, "host_unregister", 0, ptr=PAGEABLE) == []


def test_freed_address_reused_with_its_registration_gone(w: W) -> None:
    """A backend whose registration dies with the memory: the copy is pageable, complete at
    return, and the old registration is not there to undo."""
    _reuse_registered_address(w)
    assert copy(w, src=PAGEABLE, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    assert call(w.model, "host_unregister", 507911, ptr=PAGEABLE) == []
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert copy(w, src=PAGEABLE + 8, count=8, offset=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()  # pinned: pending


def test_a_live_registration_still_decides(w: W) -> None:
    """Reuse does not weaken what a live registration means."""
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    again = call(w.model, "host_register", 0, ptr=PAGEABLE, size=4096)
    assert reqs(again) == ({"HOST-MEMORY-CALLS"} if w.model.profile.name == "cann" else set())
    assert reqs(call(w.model, "host_unregister", 507911, ptr=PAGEABLE)) == {"PINNED-REGISTERED"}


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


def test_pageable_source_read_late_after_two_changes(w: W) -> None:
    """A copy that ran late read its source as it was some time after the call: the bytes are
    a value the source held in between, not only the one it holds now."""
    assert copy(w, src=PAGEABLE) == []
    w.ok("write_host", dst=PAGEABLE, data=b"\x11" * 16)
    w.ok("write_host", dst=PAGEABLE, data=b"\x22" * 16)
    seen = after("g_arr256", 0, b"\x11" * 16)
    assert observe(w, "g_arr256", seen) == {"PAGEABLE-SOURCE-REUSE"}


def test_a_copy_that_did_not_land_over_bytes_earlier_copies_wrote_in_parts(w: W) -> None:
    """Bytes that hold what was there before, some from an earlier copy and some initial: the
    complete copy did not land (the promise of its return), not bytes that match nothing."""
    assert copy(w, src=PAGEABLE + 100, count=4) == []  # bytes [0, 4)
    assert copy(w, src=PAGEABLE, count=8) == []  # bytes [0, 8): complete at its return
    before = PAGE[100:104] + init("g_arr256")[4:8]
    assert observe(w, "g_arr256", after("g_arr256", 0, before)) == {"PAGEABLE-BLOCKS"}


def test_pageable_copy_drains_its_stream(w: W) -> None:
    assert copy(w, count=8) == []  # pinned, pending
    assert copy(w, src=PAGEABLE, count=4, offset=8) == []  # pageable: waits for the pinned one
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8] + PAGE[:4])) == set()
    # The pinned copy is missing: the pageable call promised it was done (it drains the stream).
    assert observe(w, "g_arr256", after("g_arr256", 8, PAGE[:4])) == {"PAGEABLE-DRAINS-STREAM"}


def test_pageable_copy_returning_behind_a_closed_gate(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 3})
    # It did not drain its stream; whether it made its own copy before returning, the
    # bytes read later tell (the other reading).
    (v,) = copy(w, src=PAGEABLE)
    assert (v.requirement, v.also) == ("PAGEABLE-DRAINS-STREAM", ("PAGEABLE-BLOCKS",))


def test_pageable_copy_that_waited_for_the_gate(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 3})
    announced = announce_copy(w, src=PAGEABLE)
    w.ok("open_gate", gate=3)  # a timer opened the gate while the call was blocked
    assert announced.settle(0) == []
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
    assert announce(w.model, "stream_query", stream=w.stream).settle(0, status=0) == []
    v = observe_now(w.model, 0, "g_arr256", 0, init("g_arr256"))
    assert [x.requirement for x in v] == ["STREAM-QUERY"]
    assert "because #" in v[0].message and "aclrtStreamQuery" in v[0].message


def test_query_must_say_not_ready_behind_a_gate_and_complete_when_done(w: W) -> None:
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 9})
    assert reqs(announce(w.model, "stream_query", stream=w.stream).settle(0, status=0)) == {
        "STREAM-QUERY"
    }
    w.ok("open_gate", gate=9)
    w.ok("synchronize_stream", stream=w.stream)
    # Busy after the synchronisation returned: the synchronisation's promise or the query is
    # wrong; the model names the promise first, the harness's second look tells them apart
    # (tests/test_pervasive_failure.py).
    (v,) = announce(w.model, "stream_query", stream=w.stream).settle(0, status=1)
    assert (v.requirement, v.also) == ("PINNED-COMPLETE-AFTER-SYNC", ("STREAM-QUERY",))
    assert announce(w.model, "stream_query", stream=w.stream).settle(0, status=0) == []


def test_sync_with_timeout_that_succeeded_is_a_sync(w: W) -> None:
    assert copy(w, count=8) == []
    assert (
        call(w.model, "synchronize_stream_with_timeout", 507046, stream=w.stream, timeout=5) == []
    )
    assert observe(w, "g_arr256", init("g_arr256")) == set()  # timed out: still pending
    assert call(w.model, "synchronize_stream_with_timeout", 0, stream=w.stream, timeout=5) == []
    # The copy did not run although the synchronisation said so: charged to that call.
    assert observe(w, "g_arr256", init("g_arr256")) == {"SYNC-TIMEOUT"}


def test_null_stream_is_the_current_devices_default_stream(w: W) -> None:
    assert copy(w, count=8, stream=0) == []
    w.ok("synchronize_stream", stream=w.stream)  # another stream: orders nothing
    assert observe(w, "g_arr256", init("g_arr256")) == set()
    w.ok("synchronize_stream", stream=0)
    assert observe(w, "g_arr256", init("g_arr256")) == {"PINNED-COMPLETE-AFTER-SYNC"}
