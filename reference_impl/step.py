"""One recorded call, judged: the one way the suite drives the model.

The harness (each call a test makes, and the suite's own set-up reads) and the
reproducer (each call of a saved trace) hand the model a :class:`~.record.CallRecord`
and what they read back from the backend's host memory; :func:`judge` announces the
call, settles it with the backend's answer and judges the asynchronous reads that
answer completed.  What comes back is a :class:`Step`: the record, the judgement (what
the profile allowed), and the violations.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from .constants import ACL_SUCCESS
from .judgement import Judgement
from .judgement import Violation
from .model import Model
from .model_state import PendingRead
from .observation import check_read
from .record import CallRecord

ReadBack = Callable[[PendingRead], bytes]
"""What an asynchronous read left in host memory: the bytes at ``read.address``
(``read.count`` of them), read back from the backend (or from a recorded read-back)."""


@dataclass(frozen=True)
class Step:
    """One call judged: the record, what the profile allowed, and what was wrong."""

    record: CallRecord
    judgement: Judgement
    violations: list[Violation]
    """The violations of the call's answer and of the reads it completed (those of
    masked requirements are set aside in ``Model.set_aside``, not here)."""
    reads: tuple[PendingRead, ...] = ()
    """The asynchronous reads judged with it (a synchronisation completed them)."""


def judge(
    model: Model,
    record: CallRecord,
    observed: bytes | None = None,
    *,
    read_back: ReadBack | None = None,
    opened: Iterable[int] = (),
    setup: bool = False,
    note: str | None = None,
) -> Step:
    """Judge recorded call ``record`` (which answered: ``record.code`` is set).

        ``observed``: the bytes a read complete at its return left in its destination
        (``Model.reads_at_return``), read back after the call.  ``read_back``: how to read
        the destination of an asynchronous read that the call completed; without it, such
        reads are left for a later step.  ``opened``: gates a timer opened while the call
        waited (the model learns of them first, so a call that legitimately waited for one
        is judged as such).  ``setup``: the suite made the call for itself; ``note``: why, when
    it is its clean-up or reset (said beside the call in C form)."""
    for gate in opened:
        model.settle(model.judge("open_gate", record.thread, gate=gate), ACL_SUCCESS)
    judgement = model.judge(record.name, record.thread, **record.args)
    judgement.setup = setup
    judgement.note = note
    judgement.record = record
    outputs = dict(record.outputs)
    if observed is not None:
        outputs["observed"] = observed
    violations = model.settle(judgement, record.acl_error, **outputs)
    reads: list[PendingRead] = []
    if read_back is not None:
        for r in model.ready_reads():
            violations += check_read(model, r, read_back(r))
            reads.append(r)
    return Step(record, judgement, violations, tuple(reads))
