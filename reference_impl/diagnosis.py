"""The story that explains wrong bytes, and the requirement it is charged to.

A read that shows bytes no allowed candidate explains is a mismatch
(``memory.Mismatch``).  ``diagnose`` turns it into a violation: it looks for the
likeliest story that explains the bytes (a copy that ran too early past a gate, a
copy that landed on another device, copies undone by another device's
reset, an overwritten copy that shows through, a copy
known complete that did not land, a pageable source read late, a rejected call that
wrote anyway, a stray write) and asks ``charging`` for the requirement that story
breaks and its other readings (``also``).  The checks are tried in that order: the first story that
fits wins.
"""

from __future__ import annotations

import numpy as np

from . import charging
from .judgement import Judgement
from .judgement import Violation
from .judgement import hex_bytes
from .memory import INITIAL
from .memory import Candidate
from .memory import Mismatch
from .memory import VarMemory
from .memory import Write
from .model_state import ModelState
from .model_state import Rejected
from .order import covers
from .state import Symbol


def _explains(var: VarMemory, c: Candidate, m: Mismatch) -> bool:
    """Does candidate ``c`` explain every byte of mismatch ``m``?"""
    if isinstance(c, Write) and (c.offset > m.lo or c.end < m.hi):
        return False
    obs = np.frombuffer(m.observed, dtype=np.uint8)
    mask = np.zeros(len(obs), dtype=bool)
    var.mark(c, m.lo, m.hi, obs, mask)
    return m.explained(mask)


def _older_contents_explain(var: VarMemory, m: Mismatch) -> bool:
    """Does every byte of mismatch ``m`` hold what was there before: the initial contents
    or a copy since overwritten, byte by byte (a copy that did not land over bytes that
    earlier copies wrote in parts)?"""
    obs = np.frombuffer(m.observed, dtype=np.uint8)
    mask = np.zeros(len(obs), dtype=bool)
    older: list[Candidate] = [INITIAL, *var.retired]
    for c in older:
        x, y = m.lo, m.hi
        if isinstance(c, Write):
            x, y = max(x, c.offset), min(y, c.end)
        if x < y:
            var.mark(c, x, y, obs[x - m.lo : y - m.lo], mask[x - m.lo : y - m.lo])
    return m.explained(mask)


def _blocked_write_shown(var: VarMemory, m: Mismatch) -> Write | None:
    """A copy that could not have run yet (behind a closed gate) whose bytes the
    mismatch shows: one that explains it all, else one that explains bytes no allowed
    candidate does, when the blocked copies and the allowed candidates together explain
    every byte (two copies behind one gate, side by side, both ran too early)."""
    one = next((w for w in m.blocked if _explains(var, w, m)), None)
    if one is not None or not m.blocked:
        return one
    obs = np.frombuffer(m.observed, dtype=np.uint8)

    def marked(cands: list[Candidate]) -> np.ndarray:
        mask = np.zeros(len(obs), dtype=bool)
        for c in cands:
            x, y = m.lo, m.hi
            if isinstance(c, Write):
                x, y = max(x, c.offset), min(y, c.end)
            if x < y:
                # Views of the arrays: mark() fills in the part this candidate covers.
                var.mark(c, x, y, obs[x - m.lo : y - m.lo], mask[x - m.lo : y - m.lo])
        return mask

    allowed = marked(m.candidates)
    if m.explained(allowed) or not m.explained(allowed | marked(list(m.blocked))):
        return None
    return next((w for w in m.blocked if (marked([w]) & ~allowed).any()), None)


def diagnose(
    state: ModelState, device: int, sym: Symbol, m: Mismatch, call: Judgement | None
) -> Violation:
    """The violation mismatch ``m`` of a read of ``sym`` on ``device`` (by ``call``; None:
    an observation of no call) is charged to, with what was allowed, what was seen, and the
    other readings."""
    var = state.var(device, sym)
    writes = [c for c in m.candidates if isinstance(c, Write)]
    done = [w for w in writes if state.order.is_done(w.task)]
    charge = charging.unexplained_bytes()
    missing: bytes | None = None
    late: str | None = None
    older = False
    rejected = [r for r in state.rejected.get((device, sym.name), ()) if r.source is not None]
    if (w := _blocked_write_shown(var, m)) is not None:
        gate = state.order.blocked(w.task)
        charge = charging.ran_past_gate(gate is not None and gate.task.queue != w.task.queue)
    elif (other := _other_instance_write(state, device, sym, m)) is not None:
        charge = charging.other_instance(other.call.label, other.mode)
        # A copy that should have been complete at its return and ran later, once
        # another device was current, lands there too.
        late = charging.own_promise(other.mode)
    elif (reset := _reset_elsewhere(state, device, sym, writes, m)) is not None:
        charge = charging.reset_elsewhere(reset.label)
    elif any(_explains(var, w, m) for w in var.retired):
        # The most recent overwritten write that shows through names the broken order.
        old = next(w for w in reversed(var.retired) if _explains(var, w, m))
        charge = _overwritten(state, old, done)
        hider = next((d for d in done if old.task.happens_before(d.task)), None)
        if hider is not None and hider.offset <= m.lo and m.hi <= hider.end:
            # The copy that should be on top may never have run at all: a second
            # look tells (see Violation.missing).
            value = hider.value(m.lo, m.hi)
            missing = value.tobytes() if value is not None else None
            late = _own_promise(state, hider)
            older = charging.order_may_be_lost_copy(charge)
    elif done and (_explains(var, INITIAL, m) or _older_contents_explain(var, m)):
        w = done[-1]
        cause = state.meta[w.wid].done_by
        by = cause[1] if cause is not None else None
        value = w.value(m.lo, m.hi)
        missing = value.tobytes() if value is not None else None
        late = _own_promise(state, w)
        charge = charging.known_complete_missing(
            w.call.label,
            cause[0] if cause is not None else None,
            by.label if by is not None and by is not w.call else None,
            late,
        )
    elif (ran_late := _late_pinned_read(state, var, done, m)) is not None:
        # A page-locked copy reads its source when it runs: bytes its source held only
        # after it was known complete say that it ran after that, late.
        cause = state.meta[ran_late.wid].done_by
        by = cause[1] if cause is not None else None
        charge = charging.ran_late(
            ran_late.call.label,
            cause[0] if cause is not None else None,
            by.label if by is not None else None,
        )
    elif any(
        # (overwritten since, or not: a copy that ran late, reading its source late, may
        # also land after a later copy over the same bytes)
        _source_now_explains(state, w, m)
        for w in [*var.retired, *done]
        if w.mode == "pageable"
    ):
        charge = charging.pageable_source_reused()
    elif any(_rejected_explains(r, m) for r in rejected):
        r = next(r for r in rejected if _rejected_explains(r, m))
        charge = charging.rejected_wrote(r.call.label)
    elif not writes:
        others = [
            v for (d, n), v in state.memory.items() if d == device and n != sym.name and v.writes
        ]
        charge = charging.stray(bool(var.writes), bool(others))
    allowed = []
    for c in m.candidates:
        v = var.value_of(c, m.lo, m.hi)
        if c is INITIAL:
            allowed.append(f"{hex_bytes(v)} (initial contents)")
        elif isinstance(c, Write):
            status = "complete" if state.order.is_done(c.task) else "may have run"
            extra = (
                " or any value its source held while the copy was pending" if c.alternatives else ""
            )
            allowed.append(f"{hex_bytes(v)} from {c.call.label} ({status}){extra}")
        else:
            allowed.append("any value (unspecified contents)")
    details = [f"not yet possible: {w.call.label} (behind a closed gate)" for w in m.blocked]
    where, runs = _where(m)
    return Violation(
        charge.requirement,
        f"device {device}, {sym.name} {where}: {charge.why}",
        call=call,
        allowed="; or ".join(allowed) or "nothing (every candidate was blocked)",
        observed=hex_bytes(m.observed),
        details=[*runs, *details],
        also=charge.also,
        read=(device, sym.name, m.lo, m.hi),
        missing=missing,
        wrong=m.wrong,
        late=late,
        older_write_shows=older,
        racing=len(m.candidates) > 1,
    )


RUNS_SHOWN = 3
"""Runs of wrong bytes named at each end of a summary."""


def _where(m: Mismatch) -> tuple[str, list[str]]:
    """Where the wrong bytes of ``m`` are, in words, and the lines naming their runs: one
    run is its range; many are summarised (how many bytes, how many runs, the first and
    last few), however many there are."""
    if m.wrong is None:
        return f"bytes [{m.lo}, {m.hi})", []
    runs = m.runs()
    where = (
        f"bytes [{m.lo}, {m.hi}): {m.wrong_count:,} of these {m.hi - m.lo:,} bytes differ, "
        f"in {len(runs):,} runs"
    )
    shown = [f"[{a}, {b})" for a, b in runs[:RUNS_SHOWN]]
    if len(runs) > 2 * RUNS_SHOWN:
        shown.append(f"... {len(runs) - 2 * RUNS_SHOWN:,} more ...")
        shown += [f"[{a}, {b})" for a, b in runs[-RUNS_SHOWN:]]
    else:
        shown += [f"[{a}, {b})" for a, b in runs[RUNS_SHOWN:]]
    line = (
        f"wrong bytes, by run: {', '.join(shown)} (the first at offset {m.lo}; allowed and "
        "backend show the bytes from there)"
    )
    return where, [line]


def _overwritten(state: ModelState, old: Write, done: list[Write]) -> charging.Charge:
    """The charge of an overwritten copy that shows through (``charging.overwritten``):
    the copy known complete that should hide it, and how each was known complete."""
    hider = next((d for d in done if old.task.happens_before(d.task)), None)
    own = _own_promise(state, old)
    if hider is None:
        return charging.overwritten(charging.Overwritten(old.call.label, own))
    cause = state.meta[old.wid].done_by
    by = cause[1] if cause is not None else None
    return charging.overwritten(
        charging.Overwritten(
            old.call.label,
            own,
            hider=hider.call.label,
            hider_promise=_promise(state, hider),
            hider_own=_own_promise(state, hider),
            known_before_hider=covers(
                state.meta[hider.wid].issued_done, old.task.queue, old.task.index
            ),
            promise=_promise(state, old),
            promised_by=by.label if by is not None and by is not old.call else None,
            same_stream=hider.task.queue == old.task.queue,
        )
    )


def _own_promise(state: ModelState, w: Write) -> str | None:
    """The requirement under which ``w``'s own call promised it complete at its return
    (pageable, synchronous copies), if it did."""
    return charging.own_promise(w.mode, state.meta[w.wid].own_promise)


def _promise(state: ModelState, w: Write) -> str | None:
    """The requirement whose promise made ``w`` known complete (a synchronisation, a
    query, or its own call for a copy complete at return)."""
    cause = state.meta[w.wid].done_by
    return cause[0] if cause is not None else None


def _other_instance_write(state: ModelState, device: int, sym: Symbol, m: Mismatch) -> Write | None:
    """A write to the same variable on another device that explains the mismatch (with
    the others made there, overwritten since or not, if one alone does not)."""
    obs = np.frombuffer(m.observed, dtype=np.uint8)
    for (d, name), var in state.memory.items():
        if d == device or name != sym.name:
            continue
        there = [
            c for _a, _b, cands in var.segments(m.lo, m.hi) for c in cands if isinstance(c, Write)
        ] + [w for w in var.retired if w.offset < m.hi and m.lo < w.end]
        one = next((w for w in there if _explains(var, w, m)), None)
        if one is not None:
            return one
        mask = np.zeros(len(obs), dtype=bool)
        for w in there:
            x, y = max(m.lo, w.offset), min(m.hi, w.end)
            # Views of the arrays: mark() fills in the part this write covers.
            var.mark(w, x, y, obs[x - m.lo : y - m.lo], mask[x - m.lo : y - m.lo])
        if there and m.explained(mask):
            return there[-1]
    return None


def _reset_elsewhere(
    state: ModelState, device: int, sym: Symbol, writes: list[Write], m: Mismatch
) -> Judgement | None:
    """A reset of another device, made after every copy to this device was issued, that
    explains the bytes: what the reset device's instance of the variable held
    when first read after that reset (the contents a reset brings), zeros, or what this
    variable held before those copies (its starting contents, copies since overwritten).
    That reset reached this device's instance.  None when no such reset explains them."""
    if not state.resets:
        return None
    latest = _latest_copy(state, device)
    var = state.var(device, sym)
    obs = np.frombuffer(m.observed, dtype=np.uint8)
    for d, call in reversed(state.resets):
        if call.number <= latest or d == device:
            # A copy to this device since (a stray or late write is its own story), or
            # this device's own reset: older resets elsewhere explain nothing here.
            return None
        brought = state.after_reset.get((d, sym.name))
        if brought is not None and m.explained(brought[m.lo : m.hi] == obs):
            return call
        if writes and (
            m.explained(obs == 0) or _explains(var, INITIAL, m) or _older_contents_explain(var, m)
        ):
            return call
    return None


def _latest_copy(state: ModelState, device: int) -> int:
    """The step number of the latest copy to any variable of ``device`` the model still
    holds (pending, complete or overwritten), 0 if none."""
    latest = 0
    for (d, _name), v in state.memory.items():
        if d != device:
            continue
        for _a, _b, cands in v.segments():
            latest = max([latest, *(c.call.number for c in cands if isinstance(c, Write))])
        latest = max([latest, *(w.call.number for w in v.retired)])
    return latest


def _source_now_explains(state: ModelState, w: Write, m: Mismatch) -> bool:
    """Are the bytes those ``w``'s pageable source held after the call (changed since): each
    byte one its source byte held as it is now, or after one of the host's later writes
    the buffer keeps?"""
    meta = state.meta[w.wid]
    source = meta.source
    if source is None or m.lo < w.offset or m.hi > w.end:
        return False
    lo = meta.source_offset + (m.lo - w.offset)
    n = m.hi - m.lo
    observed = np.frombuffer(m.observed, dtype=np.uint8)
    now = np.frombuffer(bytes(source.contents[lo : lo + n]), dtype=np.uint8)
    explained = observed == now
    for version, offset, data in source.changes:
        if version <= meta.source_version or m.explained(explained):
            continue
        x, y = max(lo, offset), min(lo + n, offset + len(data))
        if x < y:
            held = np.frombuffer(data[x - offset : y - offset], dtype=np.uint8)
            explained[x - lo : y - lo] |= observed[x - lo : y - lo] == held
    return m.explained(explained)


def _late_pinned_read(
    state: ModelState, var: VarMemory, done: list[Write], m: Mismatch
) -> Write | None:
    """A page-locked copy known complete (overwritten since, or not) whose source, as the
    host changed it after the call, explains the bytes: the latest such copy."""
    known = [w for w in [*var.retired, *done] if w.mode == "pinned" and state.order.is_done(w.task)]
    return next((w for w in reversed(known) if _source_now_explains(state, w, m)), None)


def _rejected_explains(r: Rejected, m: Mismatch) -> bool:
    """Are the bytes those the rejected copy ``r`` would have written?"""
    if r.source is None or m.lo < r.offset or m.hi > r.offset + len(r.source):
        return False
    would = np.frombuffer(r.source[m.lo - r.offset : m.hi - r.offset], dtype=np.uint8)
    return m.explained(would == np.frombuffer(m.observed, dtype=np.uint8))
