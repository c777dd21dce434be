"""The suite's gates (host tasks that block a stream until opened): which are open, and
opening them from a timer or the releaser as well as from the test."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


def claim(h: Harness, gate: int) -> bool:
    """Mark ``gate`` open; False if someone (a timer) already did: open it only once."""
    with h.lock:
        if gate in h.open_gates:
            return False
        h.open_gates.add(gate)
        return True


def any_closed(h: Harness) -> bool:
    """Is a gate of this harness still closed?"""
    with h.lock:
        return any(g not in h.open_gates for g in h.gates)


def open_raw(h: Harness, gate: int) -> None:
    """Open ``gate`` from a timer or the releaser, past the model."""
    # Marked open *before* the backend opens it, so a call that returns after the gate
    # really opened always sees the mark (a correct backend is never blamed); the model
    # learns of it before the next settle.
    if claim(h, gate):
        with h.adapter.host_thread(h.thread_no()):
            h.adapter.open_gate(gate)


def release(h: Harness) -> None:
    """From the releaser: a call waits for longer than it needs to; open every gate that
    no test timer owns."""
    for g in list(h.gates):
        if g not in h.timed:
            open_raw(h, g)
