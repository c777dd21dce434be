"""The tally a call or a read adds to: the checks it made and the outcomes it saw.

Nothing here judges: the judgements are the profile's (return codes) and the memory
model's (bytes).  This module records, in ``ModelState.tally``, which requirements a
matched answer or a read exercised, and which of the outcomes a requirement leaves
open were seen (see ``evidence.Tally``).  ``hygiene`` also keeps the per-stream
flags (a rejected call since the last synchronisation, a synchronous copy since the
stream was last known complete) that name the likelier cause of a busy stream.

A check that judged a successful copy (its answer, or later the bytes it left) also
records the copy's shape (``copy_shape``: its count, its kind of host memory, odd
offsets) under the requirement, so that the report can say what sizes a pass rests on.
A rejected copy, or one of no bytes, moves none: its size says nothing of a data path,
and is not kept.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .constants import ACL_SUCCESS
from .constants import MemcpyKind
from .evidence import COMPLETE_EARLY
from .evidence import EARLIER_LAST
from .evidence import LATER_LAST
from .evidence import PENDING
from .evidence import SOURCE_AT_CALL
from .evidence import SOURCE_CHANGED
from .evidence import CopyShape
from .judgement import Judgement
from .memory import Candidate
from .memory import VarMemory
from .memory import Write
from .model_state import ModelState
from .outcome import Alternative
from .requirement_ids import DEVICE_CURRENT
from .requirement_ids import DEVICE_INSTANCE
from .requirement_ids import EFFECT_BYTES
from .requirement_ids import EFFECT_NEIGHBOURS
from .requirement_ids import EFFECT_NO_STRAY
from .requirement_ids import FROMSYMBOL_KINDS
from .requirement_ids import HYGIENE_NO_ENQUEUE
from .requirement_ids import HYGIENE_NO_WRITE
from .requirement_ids import HYGIENE_STREAM_USABLE
from .requirement_ids import KIND_DEFAULT_HOST_SOURCE
from .requirement_ids import PAGEABLE_SOURCE_REUSE
from .requirement_ids import PINNED_ASYNC
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import PINNED_SOURCE_WINDOW
from .requirement_ids import RETURN_CODES
from .requirement_ids import STREAM_EVENT_ORDER
from .requirement_ids import STREAM_FIFO
from .requirement_ids import STREAM_UNORDERED
from .requirement_ids import SYNC_ERROR_REPORTING
from .state import Symbol

_SYMBOL_COPIES = frozenset(
    {"memcpy_to_symbol_async", "memcpy_to_symbol", "memcpy_from_symbol", "memcpy_from_symbol_async"}
)
"""The four copies of the contract: each matched answer checks RETURN-CODES."""


def copy_shape(state: ModelState, call: Judgement) -> CopyShape | None:
    """The shape of a copy to or from a symbol as the model knows it now, at its call: its
    count, the kind of host memory its host side lies in, and whether its symbol offset or
    host address is odd (None for another call, and for a copy of no bytes: like a
    rejected one, it says nothing of a data path)."""
    if call.name not in _SYMBOL_COPIES:
        return None
    last = state.tally.last_shape
    if last is not None and last[0] is call:
        return last[1]  # worked out for its answer, now asked for its effect
    shape = _shape(state, call)
    state.tally.last_shape = (call, shape)
    return shape


def _shape(state: ModelState, call: Judgement) -> CopyShape | None:
    to = call.name.startswith("memcpy_to")
    address = int(call.args.get("src" if to else "dst") or 0)
    count = int(call.args.get("count") or 0)
    if count <= 0:
        return None
    rng = state.world.host_range(address, count) if address else None
    if rng is None or rng.buffer is None:
        kind = "unknown"
    elif rng.buffer.pinned:
        kind = "pinned"
    else:
        # Registered memory is pageable memory made page-locked from its start: the path
        # a backend takes depends on the start (profile.pinned_path looks at it too).
        kind = "registered" if rng.start_pinned else "pageable"
    offset = int(call.args.get("offset") or 0)
    return CopyShape(kind, count, offset % 2 == 1, address % 2 == 1)


def count_match(state: ModelState, call: Judgement, alt: Alternative, code: int) -> None:
    """The checks a matched answer passed, and which way an open check went."""
    ev = state.tally
    shape = copy_shape(state, call) if code == ACL_SUCCESS else None
    ev.check_copy(shape, alt.requirement, *alt.also)
    if call.name in _SYMBOL_COPIES:
        ev.check_copy(shape, RETURN_CODES)
    if code == ACL_SUCCESS:
        kind = call.args.get("kind")
        if call.name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
            if kind == MemcpyKind.ACL_MEMCPY_DEFAULT:
                ev.check_copy(shape, KIND_DEFAULT_HOST_SOURCE)
        elif call.name in ("memcpy_from_symbol", "memcpy_from_symbol_async") and kind:
            ev.check_copy(shape, FROMSYMBOL_KINDS)
    alts = call.allowed_answers.alternatives
    if len(alts) > 1 and call.allowed_answers.accepts_success():
        rejections = [a for a in alts if ACL_SUCCESS not in a.codes and a.requirement]
        if alt in rejections:
            assert alt.requirement is not None
            ev.branch(alt.requirement, accepted=False)
        elif code == ACL_SUCCESS:
            for a in rejections:
                assert a.requirement is not None
                ev.check_copy(shape, a.requirement)
                ev.branch(a.requirement, accepted=True)


def hygiene(state: ModelState, call: Judgement, code: int) -> None:
    """After a rejected call on a stream, that the stream still behaves is checked."""
    if code == ACL_SUCCESS and call.name in ("memcpy_to_symbol", "synchronize_device"):
        dev = state.world.current_device(call.thread)
        for s in [*state.world.streams.values(), *state.world.default_streams.values()]:
            if s.device == dev:
                s.after_sync_copy = call.name == "memcpy_to_symbol"
    handle = call.args.get("stream")
    if handle is None or call.name in ("destroy_stream", "launch_gate"):
        return
    stream = state.world.streams.get(int(handle)) if handle else None
    if handle == 0 and state.caps.default_stream:
        dev = state.world.current_device(call.thread)
        stream = state.world.default_stream(0 if dev is None else dev)
    if stream is None or not stream.alive:
        return
    if code != ACL_SUCCESS:
        stream.after_rejection = True
    elif stream.after_rejection:
        if call.name.startswith("memcpy"):
            state.tally.check(HYGIENE_STREAM_USABLE)
        elif call.name == "stream_query":
            state.tally.check(HYGIENE_NO_ENQUEUE)
        elif call.name.startswith("synchronize"):
            state.tally.check(SYNC_ERROR_REPORTING, HYGIENE_NO_ENQUEUE)
            stream.after_rejection = False
    if code == ACL_SUCCESS and call.name.startswith("synchronize"):
        stream.after_sync_copy = False


def read_checks(
    state: ModelState,
    device: int,
    sym: Symbol,
    var: VarMemory,
    lo: int,
    obs: np.ndarray,
    visible: Callable[[Write], bool],
) -> None:
    """The checks a read of [lo, lo + len(obs)) made, and the outcomes it saw."""
    ev = state.tally
    hi = lo + len(obs)
    if any(d != device and n == sym.name and v.writes for (d, n), v in state.memory.items()):
        ev.check(DEVICE_INSTANCE, DEVICE_CURRENT)
    if not var.writes:
        ev.check(EFFECT_NEIGHBOURS)
        return
    if any(
        r.source is not None and r.offset < hi and lo < r.offset + len(r.source)
        for r in state.rejected.get((device, sym.name), ())
    ):
        ev.check(HYGIENE_NO_WRITE)
    if any(w.offset < hi and lo < w.end for w in var.retired):
        ev.check(STREAM_FIFO)
    for a, b, cands in var.segments(lo, hi):
        seg = obs[a - lo : b - lo]
        writes = [c for c in cands if isinstance(c, Write)]
        if not writes:
            ev.check(EFFECT_NO_STRAY)
            continue
        ev.check(EFFECT_BYTES)
        shown = [w for w in writes if visible(w)]
        for w in shown:
            ev.cover(state.meta[w.wid].shape, EFFECT_BYTES)
        for w in writes:
            if w not in shown:
                gate = state.order.blocked(w.task)
                ev.check_copy(
                    state.meta[w.wid].shape,
                    STREAM_EVENT_ORDER
                    if gate is not None and gate.task.queue != w.task.queue
                    else STREAM_FIFO,
                )
        for w in shown:
            _write_tally(state, w, a, b, seg, cands)
        unordered = [
            (x, y)
            for i, x in enumerate(shown)
            for y in shown[i + 1 :]
            if x.task.queue != y.task.queue
            and not x.task.happens_before(y.task)
            and not y.task.happens_before(x.task)
        ]
        for x, y in unordered[:1]:
            ev.check(STREAM_UNORDERED)
            ev.cover(state.meta[x.wid].shape, STREAM_UNORDERED)
            ev.cover(state.meta[y.wid].shape, STREAM_UNORDERED)
            vx, vy = x.value(a, b), y.value(a, b)
            if vx is None or vy is None or np.array_equal(vx, vy):
                continue
            later, earlier = (vx, vy) if x.wid > y.wid else (vy, vx)
            if np.array_equal(seg, later):
                ev.saw(STREAM_UNORDERED, LATER_LAST)
            elif np.array_equal(seg, earlier):
                ev.saw(STREAM_UNORDERED, EARLIER_LAST)


def _write_tally(
    state: ModelState, w: Write, a: int, b: int, seg: np.ndarray, cands: tuple[Candidate, ...]
) -> None:
    ev = state.tally
    meta = state.meta[w.wid]
    mine = w.value(a, b)
    shape = meta.shape
    if state.order.is_done(w.task):
        ev.check_copy(shape, meta.done_by[0] if meta.done_by else PINNED_COMPLETE_AFTER_SYNC)
        if (
            w.mode == "pageable"
            and meta.source is not None
            and meta.source.version > meta.source_version
        ):
            ev.check_copy(shape, PAGEABLE_SOURCE_REUSE)
    elif w.mode == "pinned" and mine is not None:
        others = [c for c in cands if c is not w]
        other_values = [meta.var.value_of(c, a, b) for c in others]
        if np.array_equal(seg, mine) and all(
            v is not None and not np.array_equal(v, mine) for v in other_values
        ):
            ev.check_copy(shape, PINNED_ASYNC)
            ev.saw(PINNED_ASYNC, COMPLETE_EARLY)
        elif not np.array_equal(seg, mine) and any(
            v is not None and np.array_equal(seg, v) for v in other_values
        ):
            ev.check_copy(shape, PINNED_ASYNC)
            ev.saw(PINNED_ASYNC, PENDING)
    if w.alternatives and mine is not None:
        ev.check_copy(shape, PINNED_SOURCE_WINDOW)
        if np.array_equal(seg, mine):
            ev.saw(PINNED_SOURCE_WINDOW, SOURCE_AT_CALL)
        else:
            for alt_lo, alt in w.alternatives:
                x, y = max(a, alt_lo), min(b, alt_lo + len(alt))
                if (
                    x < y
                    and np.array_equal(seg[x - a : y - a], alt[x - alt_lo : y - alt_lo])
                    and not np.array_equal(seg[x - a : y - a], mine[x - a : y - a])
                ):
                    ev.saw(PINNED_SOURCE_WINDOW, SOURCE_CHANGED)
                    break
