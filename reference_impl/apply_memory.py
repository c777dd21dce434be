"""What the calls that move or own memory do to the model: copies, host buffers.

The handlers of the effects of the copies (``CopyToSymbol``, ``ReadSymbol``) and of
host memory (``NewHostBuffer``, ``FreeHostBuffer``, ``RegisterHost``,
``UnregisterHost``, ``WriteHost``); ``apply.py`` dispatches to them.  Each takes the
model's state (``model_state.ModelState``), the effect, the judgement of the call and its
outputs.  A copy becomes a ``Write`` in the variable's memory model, ordered as a task of its stream (pinned), complete at its return after draining its
stream (pageable), or complete at its return in no stream (synchronous).  A read is
judged now (synchronous, pageable), or once a synchronisation covers it (pinned into
page-locked memory: a ``PendingRead``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import charging
from . import effects as fx
from .constants import MALLOC_HOST_ALIGNMENT
from .judgement import Judgement
from .judgement import Violation
from .memory import Bytes
from .memory import Write
from .model_state import ModelState
from .model_state import PendingRead
from .model_state import WriteMeta
from .observation import observe
from .requirement_ids import FROMSYMBOL_BYTES
from .requirement_ids import HOST_MEMORY_CALLS
from .requirement_ids import PAGEABLE_BLOCKS
from .requirement_ids import PAGEABLE_DRAINS_STREAM
from .requirement_ids import PINNED_START_POINTER
from .requirement_ids import TOSYMBOL_SYNC
from .tally import copy_shape


def copy_to_symbol(
    state: ModelState, e: fx.CopyToSymbol, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    violations: list[Violation] = []
    var = state.var(e.device, e.symbol)
    shape = copy_shape(state, call)
    if e.either_kind:
        # The source starts in page-locked memory and runs past it (or lies in memory
        # whose registration may not have outlived a free): either path is accepted.
        state.tally.check_copy(shape, PINNED_START_POINTER)
    base: Bytes | None = None
    if e.source is not None:
        lo = e.source_offset
        undefined = state.undefined.get(e.source.address)
        if undefined is None or not undefined[lo : lo + e.count].any():
            base = np.frombuffer(bytes(e.source.contents[lo : lo + e.count]), dtype=np.uint8)
    if e.mode == "pageable":
        assert e.stream is not None
        q = e.stream.queue
        g = state.order.closed_gate_before(q.frontier)
        # From memory that was registered and is no more, the likelier reading of a copy
        # that acts page-locked is that the unregistration did not take.
        was = e.source is not None and state.world.was_registered(
            e.source.address + e.source_offset
        )
        if g is not None:
            # It did not wait for its stream: it did not drain it, and may not have made
            # its own copy before returning either (the bytes, read later, tell).
            charge = charging.pageable_not_blocking(
                state.profile.name,
                was,
                state.masks | state.known_failing,
                PAGEABLE_DRAINS_STREAM,
                PAGEABLE_BLOCKS,
            )
            violations.append(
                Violation(
                    charge.requirement,
                    f"the pageable copy returned while gate {g.gid} ahead of it in {e.stream.name} was still closed"
                    + (" (its source was registered once, then unregistered)" if was else ""),
                    call=call,
                    allowed="return only after every earlier task of the stream and the copy are complete",
                    observed="returned before the gate opened",
                    also=charge.also,
                    early=(e.device, e.symbol.name, e.offset, base.tobytes())
                    if base is not None
                    else None,
                )
            )
        else:
            if not state.all_done(q.frontier):
                state.tally.check_copy(shape, PAGEABLE_DRAINS_STREAM)
            state.complete(q.frontier, (PAGEABLE_DRAINS_STREAM, call))
        # Its own copy, complete at its return.  In its stream, its completion says the
        # stream's earlier tasks are complete too: only while the drain is believed (a
        # backend known not to drain may run them after it).
        own = q if PAGEABLE_DRAINS_STREAM not in state.masks else state.host_queue(call.thread)
        task = state.order.enqueue(own)
        # The promise of completion at return: a copy found missing later is charged to it.
        promise = charging.pageable_promise(
            state.profile.name, was, state.masks | state.known_failing
        )
        state.tally.check_copy(shape, PAGEABLE_BLOCKS)
        state.complete({own.key: task.index}, (promise, call))
    elif e.mode == "pinned":
        assert e.stream is not None
        task = state.order.enqueue(e.stream.queue)
    else:
        hq = state.host_queue(call.thread)
        task = state.order.enqueue(hq)
        state.complete({hq.key: task.index}, (TOSYMBOL_SYNC, call))
    w = Write(state.new_id(), call, task, e.offset, e.count, base, e.mode)
    state.meta[w.wid] = WriteMeta(
        var,
        e.device,
        e.symbol,
        e.source,
        e.source_offset,
        dict(state.order.done),
        e.source.version if e.source is not None else 0,
        own_promise=promise if e.mode == "pageable" else None,
        shape=shape,
    )
    var.add(w)
    if state.order.is_done(task):
        state.meta[w.wid].done_by = (state.meta[w.wid].own_promise or TOSYMBOL_SYNC, call)
    for r in state.reads:
        if (
            not r.ready
            and r.device == e.device
            and r.symbol is e.symbol
            and w.offset < r.offset + r.count
            and r.offset < w.end
            and not r.task.happens_before(w.task)
        ):
            r.extra.append(w)
    if state.order.is_done(task):
        var.prune(w.offset, w.end, state.is_done)
    else:
        state.pending.append(w)
        if e.source is not None:
            e.source.open_writes.append((w, e.source_offset))
    return violations


def read_symbol(
    state: ModelState, e: fx.ReadSymbol, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    if e.dest is None:
        return []
    if e.mode == "pinned":
        assert e.stream is not None
        task = state.order.enqueue(e.stream.queue)
        var = state.var(e.device, e.symbol)
        read = PendingRead(
            call,
            task,
            e.device,
            e.symbol,
            e.offset,
            e.count,
            e.dest,
            e.dest_offset,
            var.snapshot(e.offset, e.offset + e.count),
        )
        state.reads.append(read)
        if state.order.is_done(task):  # pragma: no cover - a new task is never done
            read.ready = True
        return []
    violations: list[Violation] = []
    if e.mode == "pageable":
        assert e.stream is not None
        g = state.order.closed_gate_before(e.stream.queue.frontier)
        if g is not None:
            violations.append(
                Violation(
                    FROMSYMBOL_BYTES,
                    f"the pageable read returned while gate {g.gid} ahead of it in {e.stream.name} was still closed",
                    call=call,
                    allowed="return only after the stream's earlier tasks and the read are complete",
                )
            )
        else:
            state.complete(e.stream.queue.frontier, (FROMSYMBOL_BYTES, call))
    if "observed" not in out:
        raise TypeError(f"settle() of {call.label} needs observed=<the dst bytes after the call>")
    data = bytes(out["observed"])
    if len(data) != e.count:
        raise ValueError(f"{call.label}: observed has {len(data)} bytes, the read {e.count}")
    violations += observe(state, e.device, e.symbol, e.offset, data, call)
    state.host_write(e.dest, e.dest_offset, data)
    return violations


def new_host_buffer(
    state: ModelState, e: fx.NewHostBuffer, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    address = int(out.get("host_ptr") or out.get("ptr") or 0)
    what = "aclrtMallocHost" if e.pinned else "malloc"
    if address == 0:
        return [
            Violation(
                HOST_MEMORY_CALLS,
                f"{what} returned success but a NULL pointer",
                call=call,
            )
        ]
    violations = []
    if e.pinned and state.profile.name == "cann" and address % MALLOC_HOST_ALIGNMENT:
        violations.append(
            Violation(
                HOST_MEMORY_CALLS,
                f"aclrtMallocHost returned 0x{address:x}, not {MALLOC_HOST_ALIGNMENT}-byte aligned",
                call=call,
            )
        )
    contents = out.get("contents")
    name = state.world.fresh_name("pinned" if e.pinned else "pageable")
    try:
        buf = state.world.add_buffer(
            address,
            e.size,
            e.pinned,
            bytes(contents) if contents is not None else bytes(e.size),
            name,
        )
    except ValueError as err:
        return [*violations, Violation(HOST_MEMORY_CALLS, f"{what}: {err}", call=call)]
    if contents is None:
        state.undefined[buf.address] = np.ones(e.size, dtype=bool)
    else:
        state.undefined.pop(buf.address, None)
    return violations


def free_host_buffer(
    state: ModelState, e: fx.FreeHostBuffer, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    for w, _off in e.buffer.open_writes:
        # The copy may still read freed memory: its bytes are unspecified.
        w.base = None
        w.alternatives.clear()
    e.buffer.open_writes.clear()
    state.world.release_buffer(e.buffer)
    return []


def register_host(
    state: ModelState, e: fx.RegisterHost, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.world.register(e.address, e.size)
    return []


def unregister_host(
    state: ModelState, e: fx.UnregisterHost, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    reg = state.world.registered.pop(e.address, None)
    if reg is not None:
        state.world.unregistered.append((reg.address, reg.size))
    return []


def write_host(
    state: ModelState, e: fx.WriteHost, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.host_write(e.buffer, e.offset, e.data)
    return []
