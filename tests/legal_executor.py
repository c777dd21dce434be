"""A tiny legal backend for the model's own tests: one history, one random legal schedule.

It executes a history of host operations against concrete memory, choosing at
random (from a seed) everything the spec leaves open: when a queued task runs,
how copies are cut into pieces (copies are not atomic), how streams
interleave, when a page-locked source is read.  Every call is reported to the
model as it happens, with the result this backend gave; the model must accept
everything (soundness).  Faults can be planted to check that the model
rejects what no legal schedule could produce (power).

It shares nothing with the model but the call names: it keeps real bytes and
real queues, not candidate sets.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from world import announce
from world import call
from world import observe_now

from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import StreamStatus
from acl_conformance.reference_impl.observation import check_read

VARS = {"g_a": 8, "g_b": 16, "g_c": 40}
"""Fixture variables of the executor, laid out in this order."""
SYMBOL_BASE = 0x5555_0000_0000
BUF_SIZE = 64
SOURCES = ("pinned0", "pinned1", "pageable0", "pageable1")
"""Source buffers: two from aclrtMallocHost, two from malloc (4 KiB aligned, registrable)."""
READBACK = 0x6100_0000_0000


def buffer_address(name: str) -> int:
    i = SOURCES.index(name)
    return (0x7F00_0000_0000 if name.startswith("pinned") else 0x6000_0000_0000) + i * 0x10000


def initial_contents(name: str) -> bytes:
    i = SOURCES.index(name)
    return bytes(((i * BUF_SIZE + j) * 7 + 1) & 0xFF for j in range(BUF_SIZE))


def var_initial(name: str) -> bytes:
    k = list(VARS).index(name)
    return bytes((0xA0 + k * 16 + j * 3) & 0xFF for j in range(VARS[name]))


@dataclass(eq=False)
class _Task:
    kind: str
    """'copy', 'read', 'gate', 'record', 'wait'."""
    var: str = ""
    offset: int = 0
    count: int = 0
    buf: bytearray | None = None
    buf_off: int = 0
    pos: int = 0
    gate: int = 0
    record: _Task | None = None
    done: bool = False
    write_no: int = -1


@dataclass
class Fault:
    """A planted bug: what a wrong backend would do to one write."""

    kind: str
    """'drop' (never written), 'shift' (written at offset + delta), 'swap' (runs after the
    next write of its stream), or 'flip' (one byte of the final observation is flipped)."""
    write: int = 0
    delta: int = 1
    var: str = "g_a"
    index: int = 0


@dataclass
class Run:
    violations: list[Violation] = field(default_factory=list)
    final: dict[str, bytes] = field(default_factory=dict)


class Executor:
    """Runs one history under the schedule ``seed`` picks, reporting to ``model``."""

    def __init__(self, model: Model, seed: int, streams: int, fault: Fault | None = None) -> None:
        self.m = model
        self.rng = random.Random(seed)
        self.fault = fault
        self.violations: list[Violation] = []
        self.dev = {n: bytearray(var_initial(n)) for n in VARS}
        self.host = {n: bytearray(initial_contents(n)) for n in SOURCES}
        self.registered: set[str] = set()
        self.handles = [0] + [0x100 + i for i in range(1, streams)]
        self.queues: list[deque[_Task]] = [deque() for _ in self.handles]
        self.events: dict[int, _Task | None] = {}
        self.gates: dict[int, bool] = {}
        self.writes = 0
        self.held: tuple[int, _Task] | None = None
        self.readbacks: dict[int, bytearray] = {}
        self._setup()

    # -- reporting --------------------------------------------------------
    def report(
        self, name: str, code: int = 0, outputs: dict[str, Any] | None = None, **args: Any
    ) -> None:
        self.violations += call(self.m, name, code, outputs=outputs, **args)

    def _setup(self) -> None:
        addr = SYMBOL_BASE
        self.sym = {}
        for name, size in VARS.items():
            self.m.add_symbol(name, addr, size)
            observe_now(self.m, 0, name, 0, var_initial(name))  # the starting contents
            self.sym[name] = addr
            addr += size
        self.report("set_device", device_id=0)
        for h in self.handles[1:]:
            self.report("create_stream", outputs={"stream": h})
        for n in SOURCES:
            call = "malloc_host" if n.startswith("pinned") else "malloc_pageable"
            key = "host_ptr" if n.startswith("pinned") else "ptr"
            self.report(
                call,
                size=BUF_SIZE,
                outputs={key: buffer_address(n), "contents": initial_contents(n)},
            )
        self.report(
            "malloc_pageable", size=BUF_SIZE, outputs={"ptr": READBACK, "contents": bytes(BUF_SIZE)}
        )
        self.readback = bytearray(BUF_SIZE)

    # -- the device -------------------------------------------------------
    def _ready(self, t: _Task) -> bool:
        if t.kind == "gate":
            return self.gates[t.gate]
        if t.kind == "wait":
            return t.record is None or t.record.done
        return True

    def _heads(self) -> list[int]:
        return [i for i, q in enumerate(self.queues) if q and self._ready(q[0])]

    def _step(self, i: int) -> None:
        t = self.queues[i][0]
        if t.kind in ("copy", "read"):
            n = self.rng.randint(1, t.count - t.pos)
            self._move(t, t.pos, t.pos + n)
            t.pos += n
            if t.pos < t.count:
                return
        t.done = True
        self.queues[i].popleft()

    def _move(self, t: _Task, a: int, b: int) -> None:
        assert t.buf is not None
        if t.kind == "read":
            t.buf[t.buf_off + a : t.buf_off + b] = self.dev[t.var][t.offset + a : t.offset + b]
            return
        f = self.fault
        if f is not None and f.write == t.write_no and f.kind == "drop":
            return
        offset = t.offset
        if f is not None and f.write == t.write_no and f.kind == "shift":
            offset = min(max(offset + f.delta, 0), VARS[t.var] - t.count)
        # Read the source now: a page-locked source is read when the task runs.
        self.dev[t.var][offset + a : offset + b] = t.buf[t.buf_off + a : t.buf_off + b]

    def wander(self, steps: int) -> None:
        """Let the device run a little: any ready task may progress at any time."""
        for _ in range(steps):
            heads = self._heads()
            if not heads:
                return
            self._step(self.rng.choice(heads))

    def run_until(self, done: Any, open_gates: bool = True) -> bool:
        """Run random ready tasks until ``done()``; open a gate (as a timer would) if stuck."""
        while not done():
            heads = self._heads()
            if heads:
                self._step(self.rng.choice(heads))
                continue
            if not open_gates:
                return False
            closed = [q[0].gate for q in self.queues if q and q[0].kind == "gate"]
            assert closed, "stuck with no gate to open"
            self.open_gate(self.rng.choice(closed))
        return True

    def _enqueue(self, s: int, t: _Task) -> None:
        if self.held is not None and self.held[0] == s:
            held = self.held[1]
            self.held = None
            if t.kind == "copy":
                self.queues[s].append(t)  # the planted swap: the later write goes first
                self.queues[s].append(held)
                return
            self.queues[s].append(held)
        self.queues[s].append(t)

    def _release_held(self) -> None:
        if self.held is not None:
            s, t = self.held
            self.held = None
            self.queues[s].append(t)

    # -- host operations --------------------------------------------------
    def pinned_kind(self, buf: str) -> bool:
        return buf.startswith("pinned") or buf in self.registered

    def write(self, s: int, var: str, offset: int, count: int, buf: str, src_off: int) -> None:
        no = self.writes
        self.writes += 1
        args = dict(
            symbol=self.sym[var],
            src=buffer_address(buf) + src_off,
            count=count,
            offset=offset,
            kind=1,
            stream=self.handles[s],
        )
        announced = announce(self.m, "memcpy_to_symbol_async", **args)
        t = _Task("copy", var, offset, count, self.host[buf], src_off, write_no=no)
        if self.pinned_kind(buf):
            f = self.fault
            if f is not None and f.kind == "swap" and f.write == no and self.held is None:
                self.held = (s, t)
            else:
                self._enqueue(s, t)
        else:
            self._release_held()
            q = self.queues[s]
            self.run_until(lambda: not q)  # pageable: drain the stream first
            self._move(t, 0, count)  # then copy at the call
        self.violations += announced.settle(0)

    def sync_write(self, var: str, offset: int, count: int, buf: str, src_off: int) -> None:
        no = self.writes
        self.writes += 1
        t = _Task("copy", var, offset, count, self.host[buf], src_off, write_no=no)
        self._move(t, 0, count)
        self.report(
            "memcpy_to_symbol",
            symbol=self.sym[var],
            src=buffer_address(buf) + src_off,
            count=count,
            offset=offset,
            kind=1,
        )

    def mutate(self, buf: str, offset: int, data: bytes) -> None:
        self.host[buf][offset : offset + len(data)] = data
        self.report("write_host", dst=buffer_address(buf) + offset, data=data)

    def sync(self, s: int) -> None:
        self._release_held()
        q = self.queues[s]
        self.run_until(lambda: not q)
        self.report("synchronize_stream", stream=self.handles[s])

    def sync_device(self) -> None:
        self._release_held()
        self.run_until(lambda: not any(self.queues))
        self.report("synchronize_device")

    def sync_timeout(self, s: int) -> None:
        self._release_held()
        q = self.queues[s]
        finished = self.run_until(lambda: not q, open_gates=False)
        code = 0 if finished else ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        self.report("synchronize_stream_with_timeout", code, stream=self.handles[s], timeout=10)

    def query(self, s: int) -> None:
        status = (
            StreamStatus.ACL_STREAM_STATUS_NOT_READY
            if self.queues[s]
            else StreamStatus.ACL_STREAM_STATUS_COMPLETE
        )
        if self.held is not None and self.held[0] == s:
            status = StreamStatus.ACL_STREAM_STATUS_NOT_READY
        self.report("stream_query", outputs={"status": int(status)}, stream=self.handles[s])

    def record(self, e: int, s: int) -> None:
        if e not in self.events:
            self.report("create_event", outputs={"event": 0xE00 + e})
        self._release_held()
        t = _Task("record")
        self.events[e] = t
        self._enqueue(s, t)
        self.report("record_event", event=0xE00 + e, stream=self.handles[s])

    def wait(self, s: int, e: int) -> None:
        if e not in self.events:
            self.report("create_event", outputs={"event": 0xE00 + e})
            self.events[e] = None
        self._release_held()
        self._enqueue(s, _Task("wait", record=self.events[e]))
        self.report("stream_wait_event", stream=self.handles[s], event=0xE00 + e)

    def sync_event(self, e: int) -> None:
        if e not in self.events:
            return
        rec = self.events[e]
        self._release_held()
        if rec is not None:
            self.run_until(lambda: rec.done)
        self.report("synchronize_event", event=0xE00 + e)

    def gate(self, s: int) -> int:
        gid = len(self.gates) + 1
        self.gates[gid] = False
        self._release_held()
        self._enqueue(s, _Task("gate", gate=gid))
        self.report("launch_gate", outputs={"gate": gid}, stream=self.handles[s])
        return gid

    def open_gate(self, gid: int) -> None:
        if gid in self.gates and not self.gates[gid]:
            self.gates[gid] = True
            self.report("open_gate", gate=gid)

    def register(self, buf: str) -> None:
        if buf.startswith("pageable") and buf not in self.registered:
            self.registered.add(buf)
            self.report("host_register", ptr=buffer_address(buf), size=BUF_SIZE)

    def unregister(self, buf: str) -> None:
        if buf in self.registered:
            self.registered.discard(buf)
            self.report("host_unregister", ptr=buffer_address(buf))

    def observe(self, var: str, flip: int | None = None) -> bytes:
        data = bytearray(self.dev[var])
        if flip is not None:
            data[flip] ^= 0xFF
        self.readback[: len(data)] = data
        self.report(
            "memcpy_from_symbol",
            outputs={"observed": bytes(data)},
            dst=READBACK,
            dst_max=BUF_SIZE,
            symbol=self.sym[var],
            count=len(data),
            offset=0,
            kind=2,
        )
        return bytes(data)

    def read_async(self, s: int, var: str, offset: int, count: int) -> None:
        addr = 0x7E00_0000_0000 + len(self.readbacks) * 0x1000
        buf = bytearray(BUF_SIZE)
        self.readbacks[addr] = buf
        self.report(
            "malloc_host", size=BUF_SIZE, outputs={"host_ptr": addr, "contents": bytes(BUF_SIZE)}
        )
        self._release_held()
        self._enqueue(s, _Task("read", var, offset, count, buf, 0))
        self.report(
            "memcpy_from_symbol_async",
            dst=addr,
            dst_max=BUF_SIZE,
            symbol=self.sym[var],
            count=count,
            offset=offset,
            kind=2,
            stream=self.handles[s],
        )

    def check_reads(self) -> None:
        for r in self.m.ready_reads():
            buf = self.readbacks[r.address - r.dest_offset]
            self.violations += check_read(
                self.m, r, bytes(buf[r.dest_offset : r.dest_offset + r.count])
            )

    def apply(self, op: tuple[Any, ...]) -> None:
        name, *args = op
        getattr(self, name)(*args)
        self.check_reads()


def run_history(
    ops: list[tuple[Any, ...]],
    seed: int,
    streams: int,
    profile: str = "spec",
    fault: Fault | None = None,
    wander: int = 3,
) -> Run:
    """Execute ``ops`` under the schedule ``seed`` picks; report to a fresh model."""
    model = Model(profile, Capabilities(devices=1))
    ex = Executor(model, seed, streams, fault)
    for op in ops:
        ex.apply(op)
        ex.wander(ex.rng.randint(0, wander))
    ex.sync_device()
    ex.check_reads()
    run = Run(ex.violations)
    for var in VARS:
        flip = (
            fault.index if fault is not None and fault.kind == "flip" and fault.var == var else None
        )
        run.final[var] = ex.observe(var, flip)
    run.violations = ex.violations
    return run
