"""Bytes read from a device variable, judged against the memory model.

``observe``: bytes of a variable read now (a synchronous read, or one from pageable
memory, complete at its return).  ``check_read``: the bytes an asynchronous read into
page-locked memory left in its destination, once a synchronisation covered it (judged
against the variable as it was when the read was issued, and the copies that may have
run since).  Each mismatch is diagnosed (``diagnosis.py``), the checks counted
(``tally.py``), and violations of masked requirements set aside.
"""

from __future__ import annotations

import numpy as np

from . import charging
from .diagnosis import diagnose
from .judgement import Judgement
from .judgement import Violation
from .judgement import hex_bytes
from .memory import INITIAL
from .memory import VarMemory
from .memory import Write
from .model_state import ModelState
from .model_state import PendingRead
from .requirement_ids import DEVICE_RESET_CONTENTS
from .state import Symbol
from .tally import read_checks

VIOLATIONS_PER_READ = 8
"""Wrong ranges of one read diagnosed at most (a read's wrong bytes in one range are one
already, ``memory.SUMMARY_RUNS``): a read wrong in thousands of ranges fails its test
with the first ones, at the cost of a few, not of thousands of diagnoses and second
looks.  Those past it are left unjudged: the test stops at the failure."""


def observe(
    state: ModelState, device: int, sym: Symbol, offset: int, data: bytes, call: Judgement | None
) -> list[Violation]:
    """Judge bytes ``data`` of ``sym`` on ``device`` at ``offset``, read now by ``call``
    (None: an observation that is no call).  Unspecified contents (never read, or after
    a reset) read whole become the variable's known contents."""
    var = state.var(device, sym)
    obs = np.frombuffer(data, dtype=np.uint8)
    if offset == 0 and len(data) == sym.size and var.segment_count() == 1:
        ((_a, _b, cands),) = var.segments()
        if len(cands) == 1 and cands[0] is not INITIAL and not isinstance(cands[0], Write):
            # Unspecified contents (never read, or after a reset): what is read now is
            # the new start.
            if (device, sym.name) in state.reset:
                state.reset.discard((device, sym.name))
                state.tally.check(DEVICE_RESET_CONTENTS)
                state.after_reset[(device, sym.name)] = obs.copy()
            var.forget(obs.copy())
            state.last_read = (call, [(offset, offset + len(data), None)])
            return []

    def visible(w: Write) -> bool:
        return state.order.blocked(w.task) is None

    state.last_read = (call, var.allowed(offset, offset + len(data), visible, False))
    mismatches = var.check(offset, obs, visible)
    read_checks(state, device, sym, var, offset, obs, visible)
    out: list[Violation] = []
    for m in mismatches:
        if len(out) >= VIOLATIONS_PER_READ:
            break
        v = diagnose(state, device, sym, m, call)
        if state.screen([v]):
            out.append(v)
        else:
            # A known-broken requirement explains it: what was read is the truth now.
            var.resync(m.lo, np.frombuffer(m.observed, dtype=np.uint8))
    return out


def check_read(state: ModelState, read: PendingRead, observed: bytes) -> list[Violation]:
    """Judge the bytes asynchronous ``read`` left in its destination (it must be known
    complete: see ``Model.ready_reads``)."""
    if not read.ready:
        raise RuntimeError(f"{read.call.label} is not known complete yet")
    read.checked = True
    state.reads.remove(read)
    var = state.var(read.device, read.symbol)
    lo, hi = read.offset, read.offset + read.count
    tmp = VarMemory.from_segments(var.size, var.initial, read.snapshot)
    for w in read.extra:
        tmp.add(w)
    # Relative to the read, a write is complete when it happens before it.
    tmp.prune(lo, hi, lambda w: w.task.happens_before(read.task))
    gates = read.gates_at_completion

    def visible(w: Write) -> bool:
        return not any(g.task is w.task or g.task.happens_before(w.task) for g in gates)

    obs = np.frombuffer(bytes(observed), dtype=np.uint8)
    mismatches = tmp.check(lo, obs, visible)
    if mismatches and _untouched(state, read, bytes(observed)):
        promise, by = read.ready_by or (None, None)
        charge = charging.unwritten_read(promise)
        return state.screen(
            [
                Violation(
                    charge.requirement,
                    f"the asynchronous read had not written its destination, though it "
                    f"was known complete because "
                    f"{by.label if by is not None else 'a synchronisation'} returned",
                    call=read.call,
                    allowed="the variable's bytes in the destination",
                    observed=f"the destination as it was before the read: {hex_bytes(observed)}",
                    # The same bytes are what a read that wrote nothing, or one that read
                    # the wrong place and found there what the destination held, leaves:
                    # a second look tells them apart (see Violation.unwritten).
                    also=charge.also,
                    read=(read.device, read.symbol.name, lo, hi),
                    unwritten=(read.address, bytes(observed)),
                )
            ]
        )
    read_checks(state, read.device, read.symbol, tmp, lo, obs, visible)
    state.host_write(read.dest, read.dest_offset, bytes(observed))
    found: list[Violation] = []
    for m in mismatches:
        if len(found) >= VIOLATIONS_PER_READ:
            break
        found += state.screen([diagnose(state, read.device, read.symbol, m, read.call)])
    return found


def _untouched(state: ModelState, read: PendingRead, observed: bytes) -> bool:
    """Does the destination still hold what the host last wrote there (all of it known)?"""
    lo, hi = read.dest_offset, read.dest_offset + read.count
    undefined = state.undefined.get(read.dest.address)
    if undefined is not None and undefined[lo:hi].any():
        return False
    return bytes(read.dest.contents[lo:hi]) == observed
