"""What a successful call does to the model: one handler per effect, and the table.

The profile says, for each answer it allows, what the call did (an effect: a class
of ``effects.py``); ``apply`` finds the handler of that effect in ``HANDLERS`` and
runs it.  A handler updates the model's state (``model_state.ModelState``: streams,
events, host buffers, what is known complete) and returns the violations it sees in
the call's outputs (a NULL handle, a changed address, a wrong status).  The handlers of
the calls that move or own memory (the copies, host buffers) are in
``apply_memory.py``.  Every effect class has exactly one handler: this is checked when
the module is imported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import charging
from . import effects as fx
from .apply_memory import copy_to_symbol
from .apply_memory import free_host_buffer
from .apply_memory import new_host_buffer
from .apply_memory import read_symbol
from .apply_memory import register_host
from .apply_memory import unregister_host
from .apply_memory import write_host
from .constants import StreamStatus
from .evidence import QUERY_COMPLETE
from .evidence import QUERY_NOT_READY
from .judgement import Cause
from .judgement import Judgement
from .judgement import Violation
from .model_state import ModelState
from .order import Clock
from .order import Gate
from .requirement_ids import DEVICE_CALLS
from .requirement_ids import EVENT_CALLS
from .requirement_ids import GETSYMBOL_ADDRESS
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import STREAM_CALLS
from .requirement_ids import STREAM_QUERY
from .requirement_ids import SYMBOL_SIZE_AS_DECLARED

Handler = Callable[..., list[Violation]]
"""``handler(state, effect, judgement, outputs) -> violations``; the effect is an
instance of the class the handler is registered for."""


def apply(
    state: ModelState, effect: object, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    """Apply ``effect``, the effect of the answer ``call`` was settled with, to ``state``."""
    return HANDLERS[type(effect)](state, effect, call, out)


def _new_stream(
    state: ModelState, e: fx.NewStream, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    handle = int(out.get("stream") or 0)
    if handle == 0:
        return [
            Violation(
                STREAM_CALLS,
                "aclrtCreateStream returned ACL_SUCCESS but a NULL stream",
                call=call,
            )
        ]
    try:
        state.world.add_stream(handle, e.device)
    except ValueError as err:
        return [Violation(STREAM_CALLS, str(err), call=call)]
    return []


def _destroy_stream(
    state: ModelState, e: fx.DestroyStream, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    if e.drains:
        state.complete(e.stream.queue.frontier, (STREAM_CALLS, call))
    elif not state.all_done(e.stream.queue.frontier):
        # The text does not say what becomes of the tasks (STREAM-CALLS): they may run
        # after the call, or be discarded.
        state.order.abandon(e.stream.queue)
    state.world.kill_stream(e.stream)
    return []


def _sync_stream(
    state: ModelState, e: fx.SyncStream, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.complete(e.stream.queue.frontier, (charging.sync_promise(call.name), call))
    return []


def _query_stream(
    state: ModelState, e: fx.QueryStream, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    status = out.get("status")
    frontier = e.stream.queue.frontier
    complete, not_ready = (
        StreamStatus.ACL_STREAM_STATUS_COMPLETE,
        StreamStatus.ACL_STREAM_STATUS_NOT_READY,
    )
    open_question = False
    if state.order.closed_gate_before(frontier) is not None:
        allowed = {not_ready}
        why = "a closed gate blocks the stream"
    elif state.all_done(frontier):
        allowed = {complete}
        why = "every task of the stream is known complete"
    else:
        allowed = {complete, not_ready}
        why = "the stream's tasks may or may not have run"
        open_question = True
    if status not in allowed:
        names = " or ".join(s.name for s in sorted(allowed))
        if e.stream.after_rejection and status == not_ready:
            why += "; a call on it was rejected since it was last synchronised"
        busy = e.stream.after_rejection and status == not_ready
        # Busy with nothing of its own after a synchronous copy: the likelier reading
        # is that the copy, which belongs to no stream, was queued on this one.
        queued = e.stream.after_sync_copy and status == not_ready
        if queued:
            why += "; an aclrtMemcpyToSymbol returned since it was last known complete"
        # Busy where a promise said every task was complete: that promise broken is the
        # first reading (a drain that SHOULD happen under spec is not a MUST of the query);
        # a second look tells it from a query that lies.
        promises = _promises_behind(state, frontier) if status == not_ready else []
        if promises:
            why += f" since {promises[0][1].label} returned"
        charge = charging.busy_stream(busy, queued, [req for req, _c in promises])
        return [
            Violation(
                charge.requirement,
                f"aclrtStreamQuery reported status {status!r}",
                call=call,
                allowed=f"{names} ({why})",
                observed=str(status),
                also=charge.also,
                requery=call.args.get("stream") if promises else None,
            )
        ]
    if open_question:
        state.tally.saw(STREAM_QUERY, QUERY_COMPLETE if status == complete else QUERY_NOT_READY)
    if status == complete:
        e.stream.after_sync_copy = False
        state.complete(frontier, (STREAM_QUERY, call))
    return []


def _promises_behind(state: ModelState, frontier: Clock) -> list[Cause]:
    """The promises that made the last of ``frontier``'s tasks known complete, when they
    are another call's (a query's own earlier COMPLETE is the query's answer)."""
    promises = state.promises_of(frontier)
    return [] if any(req == STREAM_QUERY for req, _c in promises) else promises


def _sync_device(
    state: ModelState, e: fx.SyncDevice, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    for s in [state.world.default_stream(e.device), *state.world.streams.values()]:
        if s.alive and s.device == e.device:
            state.complete(s.queue.frontier, (PINNED_COMPLETE_AFTER_SYNC, call))
    return []


def _new_event(
    state: ModelState, e: fx.NewEvent, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    handle = int(out.get("event") or 0)
    if handle == 0:
        return [
            Violation(
                EVENT_CALLS,
                "aclrtCreateEvent returned ACL_SUCCESS but a NULL event",
                call=call,
            )
        ]
    try:
        state.world.add_event(handle, e.device)
    except ValueError as err:
        return [Violation(EVENT_CALLS, str(err), call=call)]
    return []


def _record_event(
    state: ModelState, e: fx.RecordEvent, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    # The record is a task of its stream (the stream is not complete until it ran);
    # the event captures it and everything before it.
    state.order.enqueue(e.stream.queue)
    e.event.captured = dict(e.stream.queue.frontier)
    return []


def _wait_event(
    state: ModelState, e: fx.WaitEvent, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    if e.event.captured is not None:
        state.order.import_clock(e.stream.queue, e.event.captured)
    # The wait is a task of its stream too: the stream is not complete before it ran.
    state.order.enqueue(e.stream.queue)
    return []


def _sync_event(
    state: ModelState, e: fx.SyncEvent, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    if e.event.captured is not None:
        state.complete(e.event.captured, (PINNED_COMPLETE_AFTER_SYNC, call))
    return []


def _destroy_event(
    state: ModelState, e: fx.DestroyEvent, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.world.kill_event(e.event)
    return []


def _set_device(
    state: ModelState, e: fx.SetDevice, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.world.current[call.thread] = e.device
    state.world.refcount[e.device] = state.world.refcount.get(e.device, 0) + 1
    return []


def _reset_device(
    state: ModelState, e: fx.ResetDevice, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    n = state.world.refcount.get(e.device, 0) - 1
    state.world.refcount[e.device] = n
    if n > 0:
        return []
    for s in [state.world.default_stream(e.device), *list(state.world.streams.values())]:
        if s.alive and s.device == e.device:
            state.complete(s.queue.frontier, (DEVICE_CALLS, call))
            if not s.default:
                state.world.kill_stream(s)
    state.forget_device(e.device)
    state.resets.append((e.device, call))
    for t, d in list(state.world.current.items()):
        if d == e.device:
            state.world.current[t] = None
    return []


def _report_device(
    state: ModelState, e: fx.ReportDevice, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    got = out.get("device_id")
    if got != e.device:
        others = {d for t, d in state.world.current.items() if t != call.thread and d is not None}
        # Another host thread's choice: the current device is not per thread (the copies
        # follow the same wrong device); else the thread's own current device misreported.
        charge = charging.reported_device(got in others)
        return [
            Violation(
                charge.requirement,
                f"aclrtGetDevice reported {got!r}: {charge.why}",
                call=call,
                allowed=str(e.device),
                observed=str(got),
                also=charge.also,
            )
        ]
    return []


def _report_device_count(
    state: ModelState, e: fx.ReportDeviceCount, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    got = out.get("count")
    if got != e.count:
        return [
            Violation(
                DEVICE_CALLS,
                f"aclrtGetDeviceCount reported {got!r}, the backend declares {e.count}",
                call=call,
                allowed=str(e.count),
                observed=str(got),
            )
        ]
    return []


def _report_symbol_address(
    state: ModelState, e: fx.ReportSymbolAddress, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    got = int(out.get("dev_ptr") or 0)
    if got == 0:
        return [
            Violation(
                GETSYMBOL_ADDRESS,
                "aclrtGetSymbolAddress returned success but a NULL device address",
                call=call,
            )
        ]
    key = (e.device, e.symbol.name)
    before = state.addresses.setdefault(key, got)
    if before != got:
        return [
            Violation(
                GETSYMBOL_ADDRESS,
                f"the device address of {e.symbol.name} on device {e.device} changed without a reset",
                call=call,
                allowed=f"0x{before:x} (as reported before)",
                observed=f"0x{got:x}",
            )
        ]
    return []


def _report_symbol_size(
    state: ModelState, e: fx.ReportSymbolSize, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    got = out.get("size")
    if got != e.symbol.size:
        return [
            Violation(
                SYMBOL_SIZE_AS_DECLARED,
                f"aclrtGetSymbolSize reported {got!r} for {e.symbol.name}",
                call=call,
                allowed=f"{e.symbol.size} (the declared size)",
                observed=str(got),
            )
        ]
    state.tally.check(SYMBOL_SIZE_AS_DECLARED)
    return []


def _launch_gate(
    state: ModelState, e: fx.LaunchGate, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    gid = int(out["gate"])
    task = state.order.enqueue(e.stream.queue)
    gate = Gate(gid, task)
    state.gates[gid] = gate
    state.order.add_gate(gate)
    return []


def _open_gate(
    state: ModelState, e: fx.OpenGate, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    gate = state.gates.get(e.gate)
    if gate is not None and not gate.open:
        state.order.open_gate(gate)
    return []


def _init(state: ModelState, e: fx.Init, call: Judgement, out: dict[str, Any]) -> list[Violation]:
    state.world.initialized = True
    return []


def _finalize(
    state: ModelState, e: fx.Finalize, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    state.world.initialized = False
    state.world.finalized = True
    return []


def _nothing(
    state: ModelState, e: fx.Nothing, call: Judgement, out: dict[str, Any]
) -> list[Violation]:
    return []


TABLE: tuple[tuple[type, Handler], ...] = (
    (fx.CopyToSymbol, copy_to_symbol),
    (fx.ReadSymbol, read_symbol),
    (fx.NewStream, _new_stream),
    (fx.DestroyStream, _destroy_stream),
    (fx.SyncStream, _sync_stream),
    (fx.QueryStream, _query_stream),
    (fx.SyncDevice, _sync_device),
    (fx.NewEvent, _new_event),
    (fx.RecordEvent, _record_event),
    (fx.WaitEvent, _wait_event),
    (fx.SyncEvent, _sync_event),
    (fx.DestroyEvent, _destroy_event),
    (fx.NewHostBuffer, new_host_buffer),
    (fx.FreeHostBuffer, free_host_buffer),
    (fx.RegisterHost, register_host),
    (fx.UnregisterHost, unregister_host),
    (fx.WriteHost, write_host),
    (fx.SetDevice, _set_device),
    (fx.ResetDevice, _reset_device),
    (fx.ReportDevice, _report_device),
    (fx.ReportDeviceCount, _report_device_count),
    (fx.ReportSymbolAddress, _report_symbol_address),
    (fx.ReportSymbolSize, _report_symbol_size),
    (fx.LaunchGate, _launch_gate),
    (fx.OpenGate, _open_gate),
    (fx.Init, _init),
    (fx.Finalize, _finalize),
    (fx.Nothing, _nothing),
)
"""Each effect class of ``effects.py`` and its handler."""


def handlers(pairs: tuple[tuple[type, Handler], ...]) -> Mapping[type, Handler]:
    """``pairs`` (effect class, handler) as a mapping, once checked to hold one handler per
    effect class of ``effects.py``."""
    effects = {
        cls
        for cls in vars(fx).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == fx.__name__
    }
    table: dict[type, Handler] = {}
    for cls, handler in pairs:
        if cls in table:
            raise RuntimeError(f"effect {cls.__name__} has two handlers")
        table[cls] = handler
    if missing := sorted(c.__name__ for c in effects - table.keys()):
        raise RuntimeError(f"effects without a handler: {', '.join(missing)}")
    if strays := sorted(c.__name__ for c in table.keys() - effects):
        raise RuntimeError(f"handlers of classes that are not effects: {', '.join(strays)}")
    return MappingProxyType(table)


HANDLERS = handlers(TABLE)
"""The handler of each effect class of ``effects.py``."""
