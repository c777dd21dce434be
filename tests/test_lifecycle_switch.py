"""Issue 23: what the model charges a backend that gets the current device or the NULL
stream wrong across aclrtSetDevice switches, and how it reads an event recorded again.

Each rejection must name the requirement a vendor would look up."""

from __future__ import annotations

import pytest
from world import W
from world import call
from world import make_world

from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_SUCCESS

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
