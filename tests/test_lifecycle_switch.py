"""Issue 23: what the model charges a backend that gets the current device or the NULL
stream wrong across aclrtSetDevice switches, and how it reads an event recorded again.

Each rejection must name the requirement a vendor would look up."""

from __future__ import annotations

import pytest
from model_scenarios_support import copy
from model_scenarios_support import reqs
from world import PAGEABLE
from world import W
from world import call
from world import make_world

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import (
    ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED as REGISTERED,
)
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import SIZE_MAX

PROFILES = ("spec", "cann")


@pytest.mark.parametrize("profile", PROFILES)
def test_get_device_reporting_another_threads_choice_is_device_current(profile: str) -> None:
    w = make_world(profile)
    w.ok("set_device", thread=1, device_id=1)
    # thread 0 set device 0 last; a process-wide current device would answer 1
    v = call(w.model, "get_device", ACL_SUCCESS, 0, {"device_id": 1})
    assert [x.requirement for x in v] == ["DEVICE-CURRENT"]
    assert not call(w.model, "get_device", ACL_SUCCESS, 1, {"device_id": 1})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", ["record_event", "stream_wait_event"])
def test_null_refused_as_another_contexts_stream_is_null_default(profile: str, name: str) -> None:
    w = make_world(profile)
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("set_device", device_id=1)
    w.ok("set_device", device_id=0)
    # NULL after a switch, taken for device 1's default stream: "another context's stream"
    v = call(w.model, name, ACL_ERROR_RT_STREAM_CONTEXT, 0, event=0xE1, stream=0)
    assert v and v[0].requirement == "STREAM-NULL-DEFAULT"
    assert "STREAM-EVENT-ORDER" in v[0].also
    # the same refusal of a named stream keeps its own charge
    v = call(w.model, name, ACL_ERROR_RT_STREAM_CONTEXT, 0, event=0xE1, stream=w.stream)
    assert v and v[0].requirement != "STREAM-NULL-DEFAULT"


def test_a_wait_follows_the_record_before_it_not_a_later_one() -> None:
    """A wait issued before the event is recorded again keeps the first record: the
    waiting stream is held by a gate only the first record waits for, and a second record
    on an idle stream does not release it (nor does one behind another gate hold a wait
    issued after the first record ran)."""
    w: W = make_world("spec")
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    w.ok("record_event", event=0xE1, stream=w.foreign_stream)  # a record elsewhere, later
    assert not w.allowed("synchronize_stream", stream=w.other_stream).accepts_success()
    w.ok("open_gate", gate=1)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 2})
    w.ok("record_event", event=0xE1, stream=w.stream)  # recorded again, behind gate 2
    # other_stream's wait was issued before: gate 2 does not hold it
    assert w.allowed("synchronize_stream", stream=w.other_stream).accepts_success()
    w.ok("open_gate", gate=2)


# --- what each life-cycle bug must cite (issue 23's blind measure) ----------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_get_device_reporting_a_device_the_thread_left_is_device_calls(profile: str) -> None:
    """aclrtGetDevice naming a device the thread set before, not its current one: the
    call's own report is wrong ("report the current device"), no other thread is involved."""
    w = make_world(profile)
    w.ok("set_device", device_id=1)
    v = call(w.model, "get_device", ACL_SUCCESS, 0, {"device_id": 0})
    assert [x.requirement for x in v] == ["DEVICE-CALLS"]
    assert "DEVICE-CURRENT" in v[0].also


@pytest.mark.parametrize("profile", PROFILES)
def test_event_calls_refused_on_valid_arguments_are_event_calls(profile: str) -> None:
    """An event recorded on a stream destroyed since is still a valid event: a wait on it
    or a synchronisation of it refused as an invalid handle is EVENT-CALLS' matter ("succeed
    on valid arguments"); the order or completion it stands for is another reading."""
    w = make_world(profile)
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("record_event", event=0xE1, stream=w.other_stream)
    # complete before the destroy (spec leaves a destroy with tasks pending open)
    w.ok("synchronize_stream", stream=w.other_stream)
    w.ok("destroy_stream", stream=w.other_stream)
    v = call(w.model, "stream_wait_event", ACL_ERROR_RT_INVALID_HANDLE, stream=w.stream, event=0xE1)
    assert [x.requirement for x in v] == ["EVENT-CALLS"] and "STREAM-EVENT-ORDER" in v[0].also
    v = call(w.model, "synchronize_event", ACL_ERROR_RT_INVALID_HANDLE, event=0xE1)
    assert [x.requirement for x in v] == ["EVENT-CALLS"]
    assert {"PINNED-COMPLETE-AFTER-SYNC", "SYNC-ERROR-REPORTING"} <= set(v[0].also)
    # a stream synchronisation that reports an error without a failure keeps its charge
    v = call(w.model, "synchronize_stream", ACL_ERROR_RT_INVALID_HANDLE, stream=w.stream)
    assert [x.requirement for x in v] == ["SYNC-ERROR-REPORTING"]


@pytest.mark.parametrize("profile", PROFILES)
def test_registering_again_where_a_range_was_unregistered_is_host_memory_calls(
    profile: str,
) -> None:
    """A range overlapping only ranges unregistered since is not already registered: a
    backend that registered memory before and refuses this one keeps a dead registration
    (HOST-MEMORY-CALLS, a MUST under both profiles).  A first registration refused stays
    PINNED-REGISTERED's (a SHOULD under spec: the text does not name aclrtHostRegister)."""
    w = make_world(profile)
    assert reqs(call(w.model, "host_register", REGISTERED, ptr=PAGEABLE, size=4096)) == {
        "PINNED-REGISTERED"
    }
    w.ok("host_register", ptr=PAGEABLE + 4096, size=4096)
    w.ok("host_unregister", ptr=PAGEABLE + 4096)
    v = call(w.model, "host_register", REGISTERED, ptr=PAGEABLE, size=8192)
    assert [x.requirement for x in v] == ["HOST-MEMORY-CALLS"]
    assert "PINNED-REGISTERED" in v[0].also


@pytest.mark.parametrize("profile", PROFILES)
def test_a_copy_from_memory_unregistered_since_that_does_not_block(profile: str) -> None:
    """After aclrtHostUnregister the memory is pageable: a copy from it that returns while a
    gate ahead of it is closed broke PINNED-REGISTERED where that is a MUST (cann); under
    spec the memory is the text's malloc memory and the pageable requirement is charged,
    PINNED-REGISTERED another reading."""
    w = make_world(profile)
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    w.ok("host_unregister", ptr=PAGEABLE)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    v = copy(w, src=PAGEABLE, count=8, stream=w.stream)
    if profile == "cann":
        assert [x.requirement for x in v] == ["PINNED-REGISTERED"]
        assert "PAGEABLE-BLOCKS" in v[0].also
    else:
        assert [x.requirement for x in v] == ["PAGEABLE-DRAINS-STREAM"]
        assert {"PAGEABLE-BLOCKS", "PINNED-REGISTERED"} <= set(v[0].also)


@pytest.mark.parametrize("profile", PROFILES)
def test_dst_max_code_for_a_read_whose_offset_overflows_is_dst_max(profile: str) -> None:
    """count fits dstMax, offset + count does not (here it wraps): a refusal with dstMax's
    code (100000) where cann gives the bounds' code says the backend bounded offset + count
    by dstMax (FROMSYMBOL-DSTMAX); under spec any error is allowed for this read."""
    w = make_world(profile)
    args = dict(dst=PAGEABLE, dst_max=64, symbol=w.sym["g_arr256"], count=16, kind=D2H)
    v = call(w.model, "memcpy_from_symbol", ACL_ERROR_INVALID_PARAM, offset=SIZE_MAX, **args)
    assert [x.requirement for x in v] == (["FROMSYMBOL-DSTMAX"] if profile == "cann" else [])
    # a valid read of dstMax bytes at an offset, refused: dstMax misread, under both
    v = call(
        w.model, "memcpy_from_symbol", ACL_ERROR_INVALID_PARAM, offset=100, **{**args, "count": 64}
    )
    assert [x.requirement for x in v] == ["FROMSYMBOL-DSTMAX"]
