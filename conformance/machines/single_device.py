"""Machine (a): one device, several streams, events, gates and pinned, pageable and registered host memory."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import Bundle
from hypothesis.stateful import consumes
from hypothesis.stateful import initialize
from hypothesis.stateful import invariant
from hypothesis.stateful import multiple
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import events_life
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.authoring import registrations
from acl_conformance.conformance.authoring import sizes
from acl_conformance.conformance.authoring import timeouts
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.session.context import FIXTURES_NEEDED

from .common import HarnessMachine
from .common import declinable

VARS = ("g_u8", "g_u32", "g_u64", "g_struct12", "g_struct24", "g_arr256", "g_arr4k")
MAX_STREAMS = 4
MAX_BUFFERS = 6
MAX_READS = 4
DEFECTS = (*(d.name for d in defects.for_call(defects.TO_ASYNC)), "count 0")
"""Every defect of the table (conformance/authoring/defects.py), and a count of 0."""
DEFECT_PAIRS = tuple(defects.pairs(defects.TO_ASYNC))
"""Two defects of the table in one call (CHECK-ORDER)."""
LARGE_ONE_IN = 64
"""About one copy step in this many is a large copy (``large_copy``): rare enough that
the ci run makes a few, reachable for a bug hunt that looks for the size where a
backend's path changes."""
MAX_LARGE = 2
"""Large copies in one example at most (each has a buffer of its own)."""


class SingleDeviceMachine(HarnessMachine):
    """Copies, syncs, events, gates, host mutation and observations on device 0."""

    streams = Bundle("streams")
    events = Bundle("events")
    buffers = Bundle("buffers")
    gates = Bundle("gates")

    def __init__(self) -> None:
        super().__init__()
        self.n_streams = 0
        self.n_buffers = 0
        self.gates_made = 0
        self.gates_opened = 0
        self.event_life_cycles = 0
        self.registered_ranges = False
        self.large_copies = 0

    # -- resources -------------------------------------------------------------
    @initialize(target=buffers)
    def first_buffers(self) -> object:
        self.n_buffers = 2
        return multiple(
            self.h.pinned(4096, self.unique(4096)), self.h.pageable(4096, self.unique(4096))
        )

    @initialize(target=streams)
    def first_stream(self) -> int:
        self.n_streams = 1
        return self.h.stream()

    @precondition(lambda self: self.n_streams < MAX_STREAMS)
    @rule(target=streams)
    def create_stream(self) -> int:
        self.n_streams += 1
        return self.h.stream()

    @precondition(lambda self: self.n_streams > 1)
    @rule(stream=consumes(streams))
    @declinable
    def destroy_stream(self, stream: int) -> None:
        self.before_wait(stream)
        self.n_streams -= 1
        self.h.call("destroy_stream", stream=stream)

    @precondition(lambda self: self.n_buffers < MAX_BUFFERS)
    @rule(target=buffers, memory=st.sampled_from(["pinned", "pageable", "registered"]))
    def allocate(self, memory: str) -> HostBuffer:
        self.n_buffers += 1
        if memory == "pinned":
            return self.h.pinned(4096, self.unique(4096))
        buf = self.h.pageable(8192, self.unique(8192))
        if memory == "registered" and self.h.caps.host_register:
            page = (buf.address + 4095) & ~4095
            self.h.call("host_register", ptr=page, size=4096)
        return buf

    # Once per example: a whole life cycle each time, and the example budget is shared.
    @precondition(
        lambda self: self.h.caps.host_register and self.h.caps.gate and not self.registered_ranges
    )
    @rule(
        var=st.sampled_from(VARS[-2:]),
        order=st.permutations(range(3)),
        drop=st.integers(0, 1),
    )
    @declinable
    def registrations_life_cycle(self, var: str, order: list[int], drop: int) -> None:
        """Three ranges registered (two in one allocation, one in another), one that is not
        the most recent unregistered, the others still page-locked and it pageable, then
        registered again and page-locked again (conformance/authoring/registrations.py)."""
        # A gate the machine closed could hold the helper's streams (a backend may run the
        # gates of a device one at a time): a timer opens it, as for any call that waits.
        self.unblock_later()
        self.registered_ranges = True
        ranges = registrations.disjoint_ranges(self.h, self.tag + 1)
        tag = self.tag + 2
        self.tag += 2 + 2 * len(ranges) + 2  # the fills, then one pattern per checking copy
        registrations.unregister_one_then_register_again(
            self.h, var, [ranges[i] for i in order], drop, tag
        )

    @rule(buf=buffers, data=st.data())
    @declinable
    def mutate(self, buf: HostBuffer, data: st.DataObject) -> None:
        """The host changes a source, maybe while a copy from it is pending."""
        offset = data.draw(st.integers(0, buf.size - 1), label="offset")
        count = data.draw(st.integers(1, min(256, buf.size - offset)), label="count")
        self.h.write(buf, offset, self.unique(count))

    # -- copies ------------------------------------------------------------------
    def _copy_args(self, var: str, buf: HostBuffer, data: st.DataObject) -> tuple[int, int, int]:
        n = ops.size(self.h, var)
        count = data.draw(st.integers(1, min(n, 512)), label="count")
        offset = data.draw(st.integers(0, n - count), label="offset")
        src_off = data.draw(st.integers(0, buf.size - count), label="src_offset")
        return count, offset, src_off

    @rule(
        stream=st.one_of(st.just(ops.NULL), streams),
        var=st.sampled_from(VARS),
        buf=buffers,
        kind=st.sampled_from([ops.H2D, ops.DEFAULT]),
        fresh=st.booleans(),
        data=st.data(),
    )
    @declinable
    def copy(
        self, stream: int, var: str, buf: HostBuffer, kind: int, fresh: bool, data: st.DataObject
    ) -> None:
        stream = self.s(stream)
        large = data.draw(st.integers(0, LARGE_ONE_IN - 1), label="large") == LARGE_ONE_IN - 1
        if large and self.large_copies < MAX_LARGE:
            self.large_copy(stream, data)
            return
        count, offset, src_off = self._copy_args(var, buf, data)
        if fresh:
            self.h.write(buf, src_off, self.unique(count))
        if self.is_pageable(buf, src_off, count):
            self.before_wait(stream)
        ops.to_symbol_async(
            self.h,
            var,
            buf,
            count=count,
            offset=offset,
            kind=kind,
            stream=stream,
            src_offset=src_off,
        )

    def large_copy(self, stream: int, data: st.DataObject) -> None:
        """A copy at or one byte either side of a size where backends switch paths
        (conformance/authoring/sizes.py: 4 KiB, 64 KiB, 1 MiB, 2 MiB, the largest
        variable), at an offset up to 3, from a buffer of its own in pinned, pageable or
        registered memory; followed at once, as in test_sizes.py, by a write over its
        source, a query of its stream and a read of its last byte; a page-locked one is
        then synchronised and its last byte read again.  (Kind H2D: ACL_MEMCPY_DEFAULT is
        the small copies' to vary.)"""
        h = self.h
        top = sizes.largest(h, FIXTURES_NEEDED)
        edge = data.draw(st.sampled_from([*sizes.THRESHOLDS, top]), label="edge")
        count = min(top, edge + data.draw(st.integers(-1, 1), label="delta"))
        offset = data.draw(st.integers(0, min(3, top - count)), label="offset")
        memories = [m for m in sizes.MEMORIES if m != "registered" or h.caps.host_register]
        memory = data.draw(st.sampled_from(memories), label="memory")
        c = sizes.fitting(h, FIXTURES_NEEDED, count, offset)
        assert c is not None  # count + offset <= the largest variable's size
        self.large_copies += 1
        buf, base = sizes.host_memory(h, memory, c.count + c.host_offset)
        at = base + c.host_offset
        if memory == "pageable":
            self.before_wait(stream)
        r = ops.to_symbol_async(h, c.var, buf, c.count, c.offset, stream=stream, src_offset=at)
        self.tag += 2
        sizes.overwrite_source(h, buf, at, c.count, self.tag - 1)
        h.call("stream_query", stream=stream)
        sizes.read_tail(h, c)
        if r.ok and memory != "pageable":
            self.before_wait(stream)
            ops.sync(h, stream)
            sizes.read_tail(h, c)

    @rule(
        stream=st.one_of(st.just(ops.NULL), streams),
        var=st.sampled_from(VARS),
        buf=buffers,
        defect=st.one_of(st.sampled_from(DEFECTS), st.sampled_from(DEFECT_PAIRS)),
        data=st.data(),
    )
    @declinable
    def invalid_copy(
        self, stream: int, var: str, buf: HostBuffer, defect: str, data: st.DataObject
    ) -> None:
        stream = self.s(stream)
        count, offset, src_off = self._copy_args(var, buf, data)
        args = defects.valid_args(self.h, defects.TO_ASYNC, var, buf, count, offset, stream)
        args["src"] = buf.at(src_off)
        if defect == "count 0":
            args["count"] = 0
        else:
            site = defects.site(self.h, var, count, buf.address)
            args = defects.apply_named(args, site, defect)
        if self.is_pageable(buf, src_off, count):
            self.before_wait(args["stream"])
        self.h.call("memcpy_to_symbol_async", **args)

    @rule(var=st.sampled_from(VARS), buf=buffers, data=st.data())
    @declinable
    def copy_sync(self, var: str, buf: HostBuffer, data: st.DataObject) -> None:
        """aclrtMemcpyToSymbol: complete at return, in no stream."""
        count, offset, src_off = self._copy_args(var, buf, data)
        self.h.write(buf, src_off, self.unique(count))
        ops.to_symbol(self.h, var, buf, count=count, offset=offset, src_offset=src_off)

    # -- synchronisation -------------------------------------------------------------
    @rule(stream=st.one_of(st.just(ops.NULL), streams))
    @declinable
    def synchronize(self, stream: int) -> None:
        stream = self.s(stream)
        self.before_wait(stream)
        ops.sync(self.h, stream)

    @rule()
    @declinable
    def synchronize_device(self) -> None:
        self.before_wait(None)
        ops.sync_device(self.h)

    @rule(stream=streams, timeout=timeouts.timeouts())
    @declinable
    def synchronize_with_timeout(self, stream: int, timeout: int) -> None:
        # A long limit on a closed gate would wait it out (a second per example):
        # open the gate from a timer instead, well within the limit.
        if timeouts.waits_out(timeout):
            self.before_wait(stream)
        timeouts.sync_with_timeout(self.h, stream, timeout)

    @rule(stream=st.one_of(st.just(ops.NULL), streams))
    @declinable
    def query(self, stream: int) -> None:
        self.h.call("stream_query", stream=self.s(stream))

    # -- events and gates -----------------------------------------------------------
    @precondition(lambda self: self.h.caps.events)
    @rule(target=events)
    def create_event(self) -> int:
        return ops.event(self.h)

    @rule(event=events, stream=st.one_of(st.just(ops.NULL), streams))
    @declinable
    def record(self, event: int, stream: int) -> None:
        ops.record(self.h, event, self.s(stream))

    @rule(stream=st.one_of(st.just(ops.NULL), streams), event=events)
    @declinable
    def wait(self, stream: int, event: int) -> None:
        ops.wait(self.h, self.s(stream), event)

    @rule(event=events)
    @declinable
    def synchronize_event(self, event: int) -> None:
        if self.h.model.event_waits_behind_closed_gate(event):
            self.unblock_later()
        self.h.call("synchronize_event", event=event)

    @precondition(
        lambda self: self.h.caps.events and self.h.caps.gate and self.event_life_cycles < 1
    )
    @rule(how=st.sampled_from(events_life.LIFE_CYCLES), upper=st.booleans())
    @declinable
    def event_life_cycle(self, how: str, upper: bool) -> None:
        """A whole life cycle of an event past its first record (events_life.py), on
        streams of its own: recorded again, recorded again while waited for, or recorded
        on a stream then destroyed."""
        self.event_life_cycles += 1
        # Its gates may queue behind the machine's (host functions of a device may run one
        # at a time): open those from a timer first.
        self.before_wait(None)
        self.tag += 8
        events_life.run(self.h, how, "g_arr256", self.tag, offset=128 if upper else 0)

    # Counted here, not read from the model: timers open gates at moments of their
    # own, and a precondition must not depend on timing.
    @precondition(lambda self: self.h.caps.gate and self.gates_made - self.gates_opened < 2)
    @rule(target=gates, stream=st.one_of(st.just(ops.NULL), streams))
    def close_gate(self, stream: int) -> int:
        self.gates_made += 1
        return self.h.close_stream_gate(self.s(stream))

    @rule(gate=consumes(gates))
    @declinable
    def open_gate(self, gate: int) -> None:
        self.gates_opened += 1
        self.h.open_stream_gate(gate)

    # -- observation ----------------------------------------------------------------------
    @rule(var=st.sampled_from(VARS))
    @declinable
    def observe(self, var: str) -> None:
        self.h.observe(var)

    @precondition(lambda self: self.read_buffers < MAX_READS)
    @rule(
        stream=st.one_of(st.just(ops.NULL), streams),
        var=st.sampled_from(VARS),
        pinned=st.booleans(),
    )
    @declinable
    def read_async(self, stream: int, var: str, pinned: bool) -> None:
        """aclrtMemcpyFromSymbolAsync into memory of its own; judged once a sync covers it."""
        stream = self.s(stream)
        self.read_buffers += 1
        n = ops.size(self.h, var)
        dst = self.h.pinned(n) if pinned else self.h.pageable(n)
        if not pinned:
            self.before_wait(stream)
        ops.from_symbol_async(self.h, dst, var, count=n, stream=stream)

    @invariant()
    def gated_streams_are_not_ready(self) -> None:
        """A stream with a closed gate ahead can never report COMPLETE."""
        first = self.h.model.streams_behind_first_gate()
        if first is None:
            return
        gate, held = first
        for stream in held:
            if not self.h.gate_is_open(gate):
                # Judged by the model: NOT_READY is the only answer it allows here.
                self.h.call("stream_query", stream=stream)
