"""A call as the model was told of it, and what the model found wrong.

A :class:`Judgement` is one call announced to the model (``Model.judge``): its step
number, host thread, name and arguments, what the profile allows for it, whether the
suite made it for itself (set-up), and the record of the backend's answer when it was
judged from one.  The model's history is a list of them, and everything the model
remembers of a call (a write, a pending read, a rejected copy, a promise of completion)
points at one.  Its C form is kept as text: handles and addresses are named as they
were when the call was made, and a label (``#7 aclrtMemcpyToSymbolAsync(...)``) is
rendered from it only for people.

A :class:`Violation` is a step where the backend did something the profile does not
allow: the requirement it breaks, the judgement of the call, and, in words, what was
allowed and what was observed.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import numpy.typing as npt

from .calls import CALLS
from .outcome import AllowedAnswers
from .record import CallRecord


@dataclass(eq=False)
class Judgement:
    """One call announced to the model, and every answer the profile allows for it."""

    number: int
    """The model's step number (``#N`` in the label): one per call announced, from 1."""
    thread: int
    """The host thread that made the call (0 for the first one)."""
    name: str
    """The contract's name of the call (a key of ``CALLS``)."""
    args: dict[str, Any]
    text: str
    """The call in C form, handles and addresses named as they were at the call."""
    allowed_answers: AllowedAnswers
    """Every answer the profile allows."""
    setup: bool = False
    """The suite made the call for itself (reading starting contents, scratch memory):
    it is left out of counterexamples."""
    note: str | None = None
    """Why the suite made the call when not for the test's own steps (its clean-up, its
    reset), said beside it in C form."""
    record: CallRecord | None = None
    """The backend's answer, when the call was judged from one (``step.judge``)."""
    settled: bool = False
    """The backend's answer was judged (``Model.settle``)."""

    @property
    def label(self) -> str:
        """The call for people: ``#N [thread T] <C form>`` (the thread when not 0)."""
        note = f" /* {self.note} */" if self.note else ""
        return (
            f"#{self.number} "
            + (f"[thread {self.thread}] " if self.thread else "")
            + self.text
            + note
        )

    @property
    def c_function(self) -> str:
        """The C function the call stands for (``aclrtMemcpyToSymbolAsync``, ``malloc``)."""
        return CALLS[self.name].c_name

    def allowed_text(self) -> str:
        """Every answer the profile allows, in words."""
        return self.allowed_answers.allowed_codes()


Cause = tuple[str, Judgement]
"""Why tasks became known complete: (the requirement that promised it, the call that did)."""


@dataclass
class Violation:
    """A step where the backend did something the profile does not allow."""

    requirement: str | None
    message: str
    call: Judgement | None = None
    """The call judged wrong (None: a check a test made itself, or no call)."""
    allowed: str = ""
    """What the profile allows there, in words."""
    observed: str = ""
    """What the backend did, in words."""
    details: list[str] = field(default_factory=list)
    also: tuple[str, ...] = ()
    """Other requirements the same observation could be charged to (see Alternative.also)."""
    read: tuple[int, str, int, int] | None = None
    """For bytes a read got wrong: (device, variable, start, end) of the bytes."""
    missing: bytes | None = None
    """For a copy known complete whose bytes are not there: the bytes it should have left
    (a second look tells a copy that ran late from one that wrote nothing there)."""
    early: tuple[int, str, int, bytes] | None = None
    """For a pageable copy that returned while a gate ahead of it was closed: (device,
    variable, offset, the bytes it copies).  A second look while the gate is still closed
    tells a copy made without draining its stream (its bytes are there) from one that
    did not block at all (they are not)."""
    wrong: npt.NDArray[np.bool_] | None = None
    """For bytes a read got wrong, summarised (many runs in one range): True at the bytes of
    ``read``'s range that no candidate explained, the others being right (a second look
    asks whether the wrong ones came late, not whether the right ones are still there)."""
    late: str | None = None
    """The requirement certainly broken if the second look finds those bytes there: the
    promise of the copy's own call (complete at its return), which came before any other."""
    requery: int | None = None
    """For a query that found a stream busy after a promise said its tasks were complete:
    the stream's handle.  A second look (synchronise it, query it again) tells the
    promise broken (complete now) from a query that lies (busy still)."""
    racing: bool = False
    """For bytes a read got wrong: more than one candidate was allowed there (copies that
    may or may not have run when the read ran), so a later read that shows allowed bytes
    does not tell that this read was the one that lied."""
    older_write_shows: bool = False
    """For missing bytes: an older copy's bytes show there (not the initial contents), so
    bytes still missing after a second look may be that copy running after the missing
    one as much as the missing one writing nothing: both readings stay."""
    unwritten: tuple[int, bytes] | None = None
    """For an asynchronous read whose destination still held what the host last wrote
    there once a synchronisation covered it: (the destination's host address, those
    bytes).  A second look (every stream and the device synchronised again, the
    destination read again) tells a read that ran late (the destination changed: the
    promise of completion was false) from one that did not put the variable's bytes there
    at all, or put wrong bytes that happen to equal the old ones (it did not change: the
    read is wrong)."""

    def labelled_lines(self, indent: str = "  ", observed: str = "observed") -> list[str]:
        """The call, what the spec allows and what was observed (``observed`` names it), one
        aligned line each, those that are set."""
        call = self.call.label if self.call is not None else ""
        pairs = (("call", call), ("allowed", self.allowed), (observed, self.observed))
        return [f"{indent}{label + ':':<10}{value}" for label, value in pairs if value]

    def render(self) -> str:
        lines = [f"[{self.requirement or 'unspecified'}] {self.message}"]
        lines += self.labelled_lines()
        lines.extend(f"  {d}" for d in self.details)
        return "\n".join(lines)


_SHOW = 32
"""Bytes shown of a value in a failure message."""


def hex_bytes(data: bytes | npt.NDArray[np.uint8] | None) -> str:
    """The first bytes of a value in hex, for a failure message."""
    if data is None:
        return "<any value>"
    shown = bytes(data[:_SHOW])  # the first bytes only: a value may be 16 MiB
    more = f"... ({len(data)} bytes)" if len(data) > _SHOW else ""
    return (shown.hex(" ") or "<empty>") + more


def some(*requirements: str | None) -> tuple[str, ...]:
    """The requirements given, each once, in order, without None."""
    return tuple(dict.fromkeys(r for r in requirements if r))
