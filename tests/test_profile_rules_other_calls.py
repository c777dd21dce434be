"""The profiles' rules for the calls around the copies: streams, events, host memory, devices, init; settling."""

from __future__ import annotations

from typing import Any

import pytest
from profile_rules_support import DESTROYED
from profile_rules_support import EITHER
from profile_rules_support import REJECT
from profile_rules_support import SOME_ERRORS
from profile_rules_support import base_to
from profile_rules_support import codes
from profile_rules_support import spec_class
from profile_rules_support import world_with_dead_stream
from world import PAGEABLE
from world import PINNED
from world import announce
from world import make_world


# --- streams ------------------------------------------------------------------------
def test_stream_calls_cann() -> None:
    w = world_with_dead_stream("cann")
    assert codes(w.allowed("create_stream")) == {0}
    assert codes(w.allowed("create_stream", null_stream=True)) == {100000}
    assert codes(w.allowed("destroy_stream", stream=0)) == {100000}
    assert codes(w.allowed("destroy_stream", stream=DESTROYED)) == {107017}
    assert codes(w.allowed("destroy_stream", stream=0xDEAD)) == {107017}
    assert codes(w.allowed("destroy_stream", stream=w.stream)) == {0}
    assert codes(w.allowed("destroy_stream", stream=0x300)) is None  # another device's: open
    assert codes(w.allowed("synchronize_stream", stream=0)) == {0}
    assert codes(w.allowed("synchronize_stream", stream=w.stream)) == {0}
    assert codes(w.allowed("synchronize_stream", stream=DESTROYED)) == {107017}
    assert codes(w.allowed("synchronize_stream", stream=0x300)) == {0, 107003}
    assert codes(w.allowed("stream_query", stream=0xDEAD)) == {107017}
    assert codes(w.allowed("stream_query", stream=w.stream)) == {0}


def test_sync_timeout_cann() -> None:
    w = world_with_dead_stream("cann")
    s = w.stream
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-2)) == {107000}
    # timeout < -1 is checked at the ACL layer, before the handle
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=0xDEAD, timeout=-2)) == {
        107000
    }
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=0xDEAD, timeout=0)) == {107017}
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=0)) == {107000}
    # -1 waits forever: it never times out (acl_rt.h:2822); a positive limit may
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-1)) == {0}
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100)) == {0, 507046}
    w.ok("launch_gate", stream=s, outputs={"gate": 1})
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100)) == {507046}
    # behind a closed gate a wait of -1 cannot have returned: neither success nor a time-out
    forever = w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-1)
    assert forever.match(0) is None and forever.match(507046) is None
    assert forever.match(507000) is not None
    assert forever.primary.requirement == "SYNC-TIMEOUT"
    assert (
        w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100).primary.requirement
        == "SYNC-TIMEOUT"
    )


def test_sync_timeout_spec() -> None:
    w = make_world("spec")
    s = w.stream
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=0)) == EITHER
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-5)) == EITHER
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=50)) == EITHER
    assert w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-1).match(507046) is None
    w.ok("launch_gate", stream=s, outputs={"gate": 1})
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=50)) == REJECT
    forever = w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-1)
    assert forever.match(0) is None and forever.match(507046) is None


@pytest.mark.parametrize("profile", ["cann", "spec"])
def test_blocking_calls_cannot_succeed_behind_a_closed_gate(profile: str) -> None:
    w = make_world(profile)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 5})
    for call, args in [
        ("synchronize_stream", {"stream": w.stream}),
        ("synchronize_device", {}),
    ]:
        outcome = w.allowed(call, **args)
        assert not outcome.accepts_success(), call
        assert outcome.primary.requirement == "PINNED-COMPLETE-AFTER-SYNC"
    assert w.allowed("synchronize_stream", stream=w.other_stream).accepts_success()
    w.ok("open_gate", gate=5)
    assert w.allowed("synchronize_stream", stream=w.stream).accepts_success()


# --- events -----------------------------------------------------------------------
def test_event_calls() -> None:
    w = make_world("cann")
    assert codes(w.allowed("create_event")) == {0}
    assert codes(w.allowed("create_event", null_event=True)) == {100000}
    w.ok("create_event", outputs={"event": 0xE1})
    for call, args in [
        ("record_event", {"event": 0, "stream": w.stream}),
        ("stream_wait_event", {"stream": w.stream, "event": 0}),
        ("synchronize_event", {"event": 0}),
        ("destroy_event", {"event": 0}),
    ]:
        assert codes(w.allowed(call, **args)) == {100000}, call
    assert codes(w.allowed("record_event", event=0xE1, stream=0xDEAD)) == {107017}
    assert codes(w.allowed("record_event", event=0xE1, stream=w.stream)) == {0}
    assert codes(w.allowed("record_event", event=0xBAD, stream=w.stream)) is None
    # never recorded: nothing to wait for; success or an error, no effect either way
    unrecorded = w.allowed("synchronize_event", event=0xE1)
    assert unrecorded.accepts_success() and unrecorded.accepts_failure()
    w.ok("record_event", event=0xE1, stream=w.stream)
    assert codes(w.allowed("synchronize_event", event=0xE1)) == {0}
    w.ok("destroy_event", event=0xE1)
    assert codes(w.allowed("synchronize_event", event=0xE1)) is None
    assert not w.allowed("synchronize_event", event=0xE1).accepts_success()


# --- host memory ----------------------------------------------------------------------
def test_host_memory_calls_cann() -> None:
    w = make_world("cann")
    assert codes(w.allowed("malloc_host", size=0)) == {100000}
    assert codes(w.allowed("malloc_host", size=64, null_host_ptr=True)) == {100000}
    assert codes(w.allowed("malloc_host", size=64)) == {0}
    bad = announce(w.model, "malloc_host", size=64).settle(0, host_ptr=0x7000_0000_0010)
    assert [v.requirement for v in bad] == ["HOST-MEMORY-CALLS"]  # not 64-byte aligned
    assert codes(w.allowed("free_host", host_ptr=PINNED)) == {0}
    assert codes(w.allowed("free_host", host_ptr=PAGEABLE)) is None
    # aclrtHostRegisterV2
    assert codes(w.allowed("host_register", ptr=PAGEABLE, size=4096)) == {0}
    assert codes(w.allowed("host_register", ptr=PAGEABLE + 64, size=4096)) is None  # misaligned
    assert not w.allowed("host_register", ptr=PAGEABLE + 64, size=4096).accepts_success()
    assert not w.allowed("host_register", ptr=PINNED, size=4096).accepts_success()
    assert not w.allowed("host_register", ptr=0, size=4096).accepts_success()
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert not w.allowed("host_register", ptr=PAGEABLE, size=4096).accepts_success()
    assert codes(w.allowed("host_unregister", ptr=PAGEABLE + 4096)) == {507911}
    assert codes(w.allowed("host_unregister", ptr=PAGEABLE)) == {0}


def test_host_memory_calls_spec() -> None:
    w = make_world("spec")
    assert spec_class(w.allowed("malloc_host", size=0)) == EITHER
    assert spec_class(w.allowed("host_register", ptr=PAGEABLE + 64, size=4096)) == EITHER
    assert announce(w.model, "malloc_host", size=64).settle(0, host_ptr=0x7000_0000_0010) == []
    assert spec_class(w.allowed("host_unregister", ptr=PAGEABLE)) == REJECT


# --- devices, init ------------------------------------------------------------------
def test_device_calls() -> None:
    for profile in ("cann", "spec"):
        w = make_world(profile)
        assert codes(w.allowed("set_device", device_id=1)) == {0}
        assert not w.allowed("set_device", device_id=2).accepts_success()
        assert not w.allowed("set_device", device_id=-1).accepts_success()
        assert not w.allowed("get_device", thread=3).accepts_success()
        assert announce(w.model, "get_device").settle(0, device_id=0) == []
        # another device than the thread's current one, which no other thread set: the
        # call's own report (DEVICE-CALLS); another thread's choice is DEVICE-CURRENT
        # (tests/test_lifecycle_switch.py)
        assert [v.requirement for v in announce(w.model, "get_device").settle(0, device_id=1)] == [
            "DEVICE-CALLS"
        ]
        assert announce(w.model, "get_device_count").settle(0, count=2) == []
        assert [
            v.requirement for v in announce(w.model, "get_device_count").settle(0, count=1)
        ] == ["DEVICE-CALLS"]
        assert not w.allowed("reset_device", device_id=5).accepts_success()


def test_init_calls() -> None:
    w = make_world("cann")
    assert codes(w.allowed("init", config_path=None)) == {100002}
    w.ok("finalize")
    assert codes(w.allowed("finalize")) == {100037}
    w = make_world("spec")
    assert spec_class(w.allowed("init", config_path=None)) == EITHER


# --- settle -------------------------------------------------------------------------
def test_settle_reports_the_requirement_and_what_was_allowed() -> None:
    w = make_world("cann")
    (v,) = announce(w.model, "memcpy_to_symbol_async", **base_to(w, kind=2)).settle(107000)
    assert v.requirement == "KIND-REJECTED"
    assert "ACL_ERROR_INVALID_PARAM (100000)" in v.allowed
    assert "ACL_ERROR_RT_PARAM_INVALID (107000)" in v.observed
    assert (
        "aclrtMemcpyToSymbolAsync(&g_arr256, pinned0, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST, stream1)"
        in v.call.label
    )
    text = v.render()
    assert text.startswith("[KIND-REJECTED]") and "allowed:" in text


@pytest.mark.parametrize("profile", ["spec", "cann"])
@pytest.mark.parametrize(
    ("over", "cited", "also"),
    [
        ({}, "KIND-ACCEPTED", ()),
        ({"offset": 240}, "BOUNDS-END-EXACT", ()),
        ({"stream": 0}, "STREAM-NULL-DEFAULT", ()),
        ({"stream": 0, "offset": 240}, "STREAM-NULL-DEFAULT", ("BOUNDS-END-EXACT",)),
    ],
)
def test_a_refused_valid_copy_names_every_requirement_it_could_break(
    profile: str, over: dict[str, Any], cited: str, also: tuple[str, ...]
) -> None:
    w = make_world(profile)
    (v,) = announce(w.model, "memcpy_to_symbol_async", **base_to(w, **over)).settle(100000)
    assert (v.requirement, v.also) == (cited, also)


@pytest.mark.parametrize("code", SOME_ERRORS)
def test_spec_accepts_any_rejection_code(code: int) -> None:
    w = make_world("spec")
    assert announce(w.model, "memcpy_to_symbol_async", **base_to(w, offset=300)).settle(code) == []
    (v,) = announce(w.model, "memcpy_to_symbol_async", **base_to(w, offset=300)).settle(0)
    assert v.requirement == "BOUNDS-PAST-END"


def test_a_judgement_settles_once() -> None:
    w = make_world("cann")
    announced = announce(w.model, "get_device_count")
    announced.settle(0, count=2)
    with pytest.raises(RuntimeError, match="already settled"):
        announced.settle(0, count=2)
