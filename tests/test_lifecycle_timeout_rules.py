"""The model's answers for issue 23: two defects in one call (CHECK-ORDER), and a stream
destroyed with tasks pending under spec (its tasks may run later or never)."""

from __future__ import annotations

from world import PINNED
from world import W
from world import call
from world import initial
from world import make_world

from acl_conformance.reference_impl.constants import ACL_SUCCESS

UNREGISTERED = 0x4444_0000_0000
"""A host address that is no variable."""


def test_the_code_of_a_later_check_is_charged_to_check_order() -> None:
    w = make_world("cann")
    args = dict(symbol=UNREGISTERED, src=PINNED, count=4, offset=0, kind=2, stream=w.stream)
    # CANN checks the kind (100000) before it looks the symbol up (107043)
    v = call(w.model, "memcpy_to_symbol_async", 107043, **args)
    assert [x.requirement for x in v] == ["CHECK-ORDER"]
    assert "KIND-REJECTED" in v[0].also
    # a code no check of the call gives is the first check's failure
    v = call(w.model, "memcpy_to_symbol_async", 507000, **args)
    assert [x.requirement for x in v] == ["KIND-REJECTED"]
    assert not call(w.model, "memcpy_to_symbol_async", 100000, **args)


def test_two_defects_under_spec_any_error() -> None:
    w = make_world("spec")
    args = dict(symbol=UNREGISTERED, src=PINNED, count=4, offset=0, kind=2, stream=w.stream)
    for code in (100000, 107043, 507000):
        assert not call(w.model, "memcpy_to_symbol_async", code, **args)
    assert call(w.model, "memcpy_to_symbol_async", ACL_SUCCESS, **args)


def _destroyed_with_a_copy_pending(profile: str) -> tuple[W, bytes]:
    """A world with a copy of 4 bytes into g_u32 and an event record behind closed gate 1;
    and the bytes the copy writes."""
    w = make_world(profile)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    w.ok(
        "memcpy_to_symbol_async",
        symbol=w.sym["g_u32"],
        src=PINNED,
        count=4,
        offset=0,
        kind=1,
        stream=w.stream,
    )
    w.ok("create_event", outputs={"event": 0x900})
    w.ok("record_event", event=0x900, stream=w.stream)
    return w, bytes(range(4))


def test_spec_destroy_may_discard_what_has_not_run() -> None:
    w, copied = _destroyed_with_a_copy_pending("spec")
    w.ok("destroy_stream", stream=w.stream)  # returns at once, the gate still closed
    w.ok("open_gate", gate=1)
    w.ok("synchronize_device")
    assert not w.observe("g_u32", initial("g_u32", 4))  # discarded
    assert not w.observe("g_u32", copied)  # or run
    # the event's record may have been discarded with the stream
    sync = w.allowed("synchronize_event", event=0x900)
    assert sync.accepts_success() and sync.match(507000) is not None


def test_cann_destroy_waits_for_the_tasks() -> None:
    w, copied = _destroyed_with_a_copy_pending("cann")
    w.ok("open_gate", gate=1)
    w.ok("destroy_stream", stream=w.stream)
    assert w.observe("g_u32", initial("g_u32", 4))  # the copy must have run
    assert not w.observe("g_u32", copied)
    assert w.allowed("synchronize_event", event=0x900).match(507000) is None


def test_a_time_out_of_a_wait_forever_is_charged_to_sync_timeout() -> None:
    for profile in ("cann", "spec"):
        w = make_world(profile)
        v = call(w.model, "synchronize_stream_with_timeout", 507046, stream=w.stream, timeout=-1)
        assert [x.requirement for x in v] == ["SYNC-TIMEOUT"], profile
