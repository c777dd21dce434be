"""What the calls that move or own memory do to the model: copies, host buffers.

The handlers of the effects of the copies (``CopyToSymbol``, ``ReadSymbol``) and of
host memory (``NewHostBuffer``, ``FreeHostBuffer``, ``RegisterHost``,
``UnregisterHost``, ``WriteHost``); ``apply.py`` dispatches to them.  A copy becomes a ``Write`` in the variable's memory model,
ordered as a task of its stream (pinned), complete at its return after draining its
stream (pageable), or complete at its return in no stream (synchronous).  A read is
judged now (synchronous, pageable), or once a synchronisation covers it (pinned into
page-locked memory: a ``PendingRead``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import numpy as np

from . import effects as fx
from .constants import MALLOC_HOST_ALIGNMENT
from .memory import Bytes
from .memory import Write
from .outcome import Violation
from .records import PendingRead
from .records import WriteMeta
from .requirement_ids import FROMSYMBOL_BYTES
from .requirement_ids import HOST_MEMORY_CALLS
from .requirement_ids import PAGEABLE_BLOCKS
from .requirement_ids import PAGEABLE_DRAINS_STREAM
from .requirement_ids import PINNED_REGISTERED
from .requirement_ids import PINNED_START_POINTER
from .requirement_ids import TOSYMBOL_SYNC

if TYPE_CHECKING:
    from .model import Judgement
    from .model import Model


def copy_to_symbol(
    model: Model, e: fx.CopyToSymbol, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    violations: list[Violation] = []
    var = model._var(e.device, e.symbol)
    if e.either_kind:
        # The source starts in page-locked memory and runs past it (or lies in memory
        # whose registration may not have outlived a free): either path is accepted.
        model.evidence.check(PINNED_START_POINTER)
    base: Bytes | None = None
    if e.source is not None:
        lo = e.source_offset
        undefined = model._undefined.get(e.source.address)
        if undefined is None or not undefined[lo : lo + e.count].any():
            base = np.frombuffer(bytes(e.source.contents[lo : lo + e.count]), dtype=np.uint8)
    if e.mode == "pageable":
        assert e.stream is not None
        q = e.stream.queue
        g = model.order.closed_gate_before(q.frontier)
        if g is not None:
            # From memory that was registered and is no more, the likelier reading is
            # that the unregistration did not take.
            was = e.source is not None and model.world.was_registered(
                e.source.address + e.source_offset
            )
            violations.append(
                Violation(
                    PINNED_REGISTERED if was else PAGEABLE_BLOCKS,
                    f"the pageable copy returned while gate {g.gid} ahead of it in {e.stream.name} was still closed"
                    + (" (its source was registered once, then unregistered)" if was else ""),
                    call=exp.label,
                    allowed="return only after every earlier task of the stream and the copy are complete",
                    observed="returned before the gate opened",
                    also=(PAGEABLE_BLOCKS,) if was else (),
                )
            )
        else:
            if not model._all_done(q.frontier):
                model.evidence.check(PAGEABLE_DRAINS_STREAM)
            model._complete(q.frontier, (PAGEABLE_DRAINS_STREAM, exp.label))
        task = model.order.enqueue(q, exp.label)
        model.evidence.check(PAGEABLE_BLOCKS)
        model._complete({q.key: task.index}, (PAGEABLE_BLOCKS, exp.label))
    elif e.mode == "pinned":
        assert e.stream is not None
        task = model.order.enqueue(e.stream.queue, exp.label)
    else:
        hq = model._host_queue(exp.thread)
        task = model.order.enqueue(hq, exp.label)
        model._complete({hq.key: task.index}, (TOSYMBOL_SYNC, exp.label))
    model._wid += 1
    w = Write(model._wid, exp.label, task, e.offset, e.count, base, e.mode)
    model._meta[w.wid] = WriteMeta(
        var,
        e.device,
        e.symbol,
        e.source,
        e.source_offset,
        dict(model.order.done),
        e.source.version if e.source is not None else 0,
    )
    var.add(w)
    if model.order.is_done(task):
        model._meta[w.wid].done_by = (
            PAGEABLE_BLOCKS if e.mode == "pageable" else TOSYMBOL_SYNC,
            exp.label,
        )
    for r in model._reads:
        if (
            not r.ready
            and r.device == e.device
            and r.symbol is e.symbol
            and w.offset < r.offset + r.count
            and r.offset < w.end
            and not r.task.happens_before(w.task)
        ):
            r.extra.append(w)
    if model.order.is_done(task):
        var.prune(w.offset, w.end, model._is_done)
    else:
        model._pending.append(w)
        if e.source is not None:
            e.source.open_writes.append((w, e.source_offset))
    return violations


def read_symbol(
    model: Model, e: fx.ReadSymbol, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    if e.dest is None:
        return []
    if e.mode == "pinned":
        assert e.stream is not None
        task = model.order.enqueue(e.stream.queue, exp.label)
        var = model._var(e.device, e.symbol)
        model._wid += 1
        read = PendingRead(
            model._wid,
            exp.label,
            task,
            e.device,
            e.symbol,
            e.offset,
            e.count,
            e.dest,
            e.dest_offset,
            var.snapshot(e.offset, e.offset + e.count),
        )
        model._reads.append(read)
        if model.order.is_done(task):  # pragma: no cover - a new task is never done
            read.ready = True
        return []
    violations: list[Violation] = []
    if e.mode == "pageable":
        assert e.stream is not None
        g = model.order.closed_gate_before(e.stream.queue.frontier)
        if g is not None:
            violations.append(
                Violation(
                    FROMSYMBOL_BYTES,
                    f"the pageable read returned while gate {g.gid} ahead of it in {e.stream.name} was still closed",
                    call=exp.label,
                    allowed="return only after the stream's earlier tasks and the read are complete",
                )
            )
        else:
            model._complete(e.stream.queue.frontier, (FROMSYMBOL_BYTES, exp.label))
    if "observed" not in out:
        raise TypeError(f"settle() of {exp.label} needs observed=<the dst bytes after the call>")
    data = bytes(out["observed"])
    if len(data) != e.count:
        raise ValueError(f"{exp.label}: observed has {len(data)} bytes, the read {e.count}")
    violations += model._observe_now(e.device, e.symbol, e.offset, data, exp.label)
    model._host_write(e.dest, e.dest_offset, data)
    return violations


def new_host_buffer(
    model: Model, e: fx.NewHostBuffer, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    address = int(out.get("host_ptr") or out.get("ptr") or 0)
    what = "aclrtMallocHost" if e.pinned else "malloc"
    if address == 0:
        return [
            Violation(
                HOST_MEMORY_CALLS,
                f"{what} returned success but a NULL pointer",
                call=exp.label,
            )
        ]
    violations = []
    if e.pinned and model.profile.name == "cann" and address % MALLOC_HOST_ALIGNMENT:
        violations.append(
            Violation(
                HOST_MEMORY_CALLS,
                f"aclrtMallocHost returned 0x{address:x}, not {MALLOC_HOST_ALIGNMENT}-byte aligned",
                call=exp.label,
            )
        )
    contents = out.get("contents")
    name = model.world.fresh_name("pinned" if e.pinned else "pageable")
    try:
        buf = model.world.add_buffer(
            address,
            e.size,
            e.pinned,
            bytes(contents) if contents is not None else bytes(e.size),
            name,
        )
    except ValueError as err:
        return [*violations, Violation(HOST_MEMORY_CALLS, f"{what}: {err}", call=exp.label)]
    if contents is None:
        model._undefined[buf.address] = np.ones(e.size, dtype=bool)
    else:
        model._undefined.pop(buf.address, None)
    return violations


def free_host_buffer(
    model: Model, e: fx.FreeHostBuffer, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    for w, _off in e.buffer.open_writes:
        # The copy may still read freed memory: its bytes are unspecified.
        w.base = None
        w.alternatives.clear()
    e.buffer.open_writes.clear()
    model.world.release_buffer(e.buffer)
    return []


def register_host(
    model: Model, e: fx.RegisterHost, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    model.world.register(e.address, e.size)
    return []


def unregister_host(
    model: Model, e: fx.UnregisterHost, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    reg = model.world.registered.pop(e.address, None)
    if reg is not None:
        model.world.unregistered.append((reg.address, reg.size))
    return []


def write_host(
    model: Model, e: fx.WriteHost, exp: Judgement, out: dict[str, Any]
) -> list[Violation]:
    model._host_write(e.buffer, e.offset, e.data)
    return []
