"""The model's parts check their own wiring when imported (handlers and requirement IDs),
and the public queries the suite asks answer as the spec says."""

from __future__ import annotations

import dataclasses

import pytest
from world import BUF_SIZE
from world import PAGEABLE
from world import PINNED
from world import W
from world import initial
from world import make_world

from acl_conformance.reference_impl import CallRecord
from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import PendingRead
from acl_conformance.reference_impl import apply
from acl_conformance.reference_impl import effects
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.catalogue import BY_ID
from acl_conformance.reference_impl.requirement_ids import STREAM_FIFO
from acl_conformance.reference_impl.requirement_ids import req

EFFECTS = [
    c
    for c in vars(effects).values()
    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == effects.__name__
]


def test_every_effect_class_has_one_handler() -> None:
    assert len(EFFECTS) >= 20
    assert set(apply.HANDLERS) == set(EFFECTS)


def test_the_table_check_can_fail() -> None:
    pairs = apply.TABLE
    with pytest.raises(RuntimeError, match="without a handler"):
        apply.handlers(pairs[1:])
    with pytest.raises(RuntimeError, match="two handlers"):
        apply.handlers((*pairs, pairs[0]))
    with pytest.raises(RuntimeError, match="not effects"):
        apply.handlers((*pairs, (int, pairs[0][1])))


def test_requirement_ids_are_checked() -> None:
    assert STREAM_FIFO == "STREAM-FIFO" and STREAM_FIFO in BY_ID
    with pytest.raises(ValueError, match="not a requirement"):
        req("STREAM-FIF0")


# --- the queries the suite's machines and clause tests ask ------------------------
@pytest.fixture(params=["spec", "cann"])
def w(request: pytest.FixtureRequest) -> W:
    return make_world(request.param)


def test_last_call_is_the_latest_announced() -> None:
    m = Model("spec", Capabilities())
    assert m.last_call() is None
    first = m.judge("get_device_count")
    assert m.last_call() is first is m.history[-1] and first.label.startswith("#1 ")
    m.judge("get_device", 1)
    last = m.last_call()
    assert last is not None and last.label == "#2 [thread 1] aclrtGetDevice(&device_id)"
    assert last.c_function == "aclrtGetDevice" and last.thread == 1 and not last.settled


def test_current_device_is_per_host_thread(w: W) -> None:
    assert w.model.current_device() == 0
    assert w.model.current_device(1) is None
    w.ok("set_device", thread=1, device_id=1)
    assert w.model.current_device(1) == 1
    assert w.model.current_device(0) == 0


def test_is_pageable(w: W) -> None:
    m = w.model
    assert m.is_pageable(PAGEABLE, 64)
    assert m.is_pageable(PAGEABLE + BUF_SIZE - 64, 64)
    assert not m.is_pageable(PINNED, 64)
    assert not m.is_pageable(PAGEABLE + BUF_SIZE - 64, 65)  # runs past the buffer: unknown
    assert not m.is_pageable(0x1234, 1)  # not memory the suite allocated
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert not m.is_pageable(PAGEABLE, 64)  # registered: page-locked
    assert m.is_pageable(PAGEABLE + 4096, 64)  # the page after it
    # Starts in the registered page and runs past it: CANN goes by the start (pinned);
    # under spec it may be either, so it is not certainly pageable.
    assert not m.is_pageable(PAGEABLE + 4096 - 32, 64)
    # Starts before a registered page and runs into it: pageable by its start (cann),
    # either (spec).
    w.ok("host_unregister", ptr=PAGEABLE)
    w.ok("host_register", ptr=PAGEABLE + 4096, size=4096)
    assert m.is_pageable(PAGEABLE + 4096 - 32, 64) == (m.profile.name == "cann")


def test_stream_waits_behind_closed_gate(w: W) -> None:
    m = w.model
    assert not m.stream_waits_behind_closed_gate(w.stream)
    assert not m.stream_waits_behind_closed_gate(0)  # the default stream, never used
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    assert m.stream_waits_behind_closed_gate(w.stream)
    assert not m.stream_waits_behind_closed_gate(w.other_stream)
    assert not m.stream_waits_behind_closed_gate(0)
    assert not m.stream_waits_behind_closed_gate(0xBAD)  # no stream at all
    # An event wait makes the other stream follow the gate.
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("stream_wait_event", stream=w.other_stream, event=0xE1)
    assert m.stream_waits_behind_closed_gate(w.other_stream)
    w.ok("open_gate", gate=1)
    assert not m.stream_waits_behind_closed_gate(w.stream)
    assert not m.stream_waits_behind_closed_gate(w.other_stream)


def test_null_stream_waits_on_the_current_device_of_the_thread(w: W) -> None:
    m = w.model
    w.ok("launch_gate", stream=0, outputs={"gate": 7})
    assert m.stream_waits_behind_closed_gate(0)
    assert not m.stream_waits_behind_closed_gate(w.stream)
    w.ok("set_device", thread=1, device_id=1)
    assert not m.stream_waits_behind_closed_gate(0, thread=1)  # device 1's default stream


def test_event_waits_behind_closed_gate(w: W) -> None:
    m = w.model
    w.ok("create_event", outputs={"event": 0xE1})
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    assert not m.event_waits_behind_closed_gate(0xE1)  # never recorded
    w.ok("record_event", event=0xE1, stream=w.other_stream)
    assert not m.event_waits_behind_closed_gate(0xE1)  # recorded on a free stream
    w.ok("record_event", event=0xE1, stream=w.stream)
    assert m.event_waits_behind_closed_gate(0xE1)
    assert not m.event_waits_behind_closed_gate(0xE2)  # no such event
    w.ok("open_gate", gate=1)
    assert not m.event_waits_behind_closed_gate(0xE1)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 2})
    w.ok("record_event", event=0xE1, stream=w.stream)
    w.ok("destroy_event", event=0xE1)
    assert not m.event_waits_behind_closed_gate(0xE1)  # destroyed


def test_streams_behind_first_gate(w: W) -> None:
    m = w.model
    assert m.streams_behind_first_gate() is None
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 1})
    w.ok("launch_gate", stream=w.other_stream, outputs={"gate": 2})
    assert m.streams_behind_first_gate() == (1, [w.stream])
    w.ok("open_gate", gate=1)
    assert m.streams_behind_first_gate() == (2, [w.other_stream])
    w.ok("open_gate", gate=2)
    assert m.streams_behind_first_gate() is None
    w.ok("launch_gate", stream=0, outputs={"gate": 3})  # in the default stream
    assert m.streams_behind_first_gate() == (3, [])


def test_devices_made_current(w: W) -> None:
    assert w.model.devices_made_current() == {0}
    w.ok("set_device", thread=1, device_id=1)
    assert w.model.devices_made_current() == {0, 1}
    w.ok("set_device", thread=0, device_id=1)
    assert w.model.devices_made_current() == {1}


def test_stream_device(w: W) -> None:
    m = w.model
    assert m.stream_device(w.stream) == 0
    assert m.stream_device(w.foreign_stream) == 1
    assert m.stream_device(0) is None  # NULL: the default stream is no created stream
    assert m.stream_device(0xBAD) is None
    w.ok("destroy_stream", stream=w.stream)
    assert m.stream_device(w.stream) is None


def test_render_names_handles_and_addresses(w: W) -> None:
    announced = len(w.model.history)
    line = w.model.render(
        "memcpy_to_symbol_async",
        {
            "symbol": w.sym["g_u32"],
            "src": PINNED + 8,
            "count": 4,
            "offset": 0,
            "kind": 1,
            "stream": w.stream,
        },
    )
    assert line.startswith("aclrtMemcpyToSymbolAsync(&g_u32, ")
    assert " + 8, 4, 0, " in line and "ACL_MEMCPY_HOST_TO_DEVICE" in line
    assert line.endswith(", stream1)")  # the second stream created, by its name
    assert f"0x{w.stream:x}" not in line
    assert len(w.model.history) == announced  # rendering announces nothing


# --- the one judging step ----------------------------------------------------------
def test_one_step_judges_a_recorded_call_and_what_it_read(w: W) -> None:
    """``judge``: the timer's gates first, the call (its record, set-up or not), then the
    asynchronous reads the call completed, read back through ``read_back``."""
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 5})
    w.ok("malloc_host", size=64, outputs={"host_ptr": 0x7E00_0000_0000, "contents": bytes(64)})
    read = {"dst": 0x7E00_0000_0000, "dst_max": 64, "symbol": w.sym["g_u32"], "count": 4}
    w.ok("memcpy_from_symbol_async", **read, offset=0, kind=2, stream=w.stream)
    before = len(w.model.history)
    record = CallRecord(9, "synchronize_stream", {"stream": w.stream}, 0, {}, thread=0)
    asked: list[PendingRead] = []

    def read_back(r: PendingRead) -> bytes:
        asked.append(r)
        return initial("g_u32", 4)

    step = judge(w.model, record, read_back=read_back, opened=[5], setup=True)
    gate, sync = w.model.history[before:]
    assert gate.name == "open_gate" and gate.settled and not gate.setup
    assert step.judgement is sync and sync.record is record and sync.setup and sync.settled
    assert step.record is record and step.violations == []
    assert step.reads == tuple(asked) and [r.call.name for r in asked] == [
        "memcpy_from_symbol_async"
    ]
    assert w.model.ready_reads() == []


def test_a_violation_points_at_the_call_it_judged(w: W) -> None:
    record = CallRecord(1, "get_device", {}, 0, {"device_id": 1})
    (v,) = judge(w.model, record).violations
    # a device the thread did not set, which no other thread set either: the call's own
    # report is wrong
    assert v.requirement == "DEVICE-CALLS" and v.call is w.model.last_call()
    assert v.call is not None and v.call.record is record and v.call.c_function == "aclrtGetDevice"
    assert v.labelled_lines()[0] == f"  call:     {v.call.label}"
