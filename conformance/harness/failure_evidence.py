"""What a failure keeps of the harness that raised it, gathered into a plain object
(failure.py knows nothing of the harness)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from .failure import FailureEvidence

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


def gather(h: Harness) -> FailureEvidence:
    """The harness's evidence now: its calls, the model's history, the backend's facts."""
    try:
        invalid: int | None = h.adapter.invalid_handle()
    except Exception:  # a backend that is gone cannot say; the trace is still useful
        invalid = None
    return FailureEvidence(
        profile=h.profile,
        trace=h.trace_records(),
        history=tuple(h.model.history),
        fixtures=[asdict(f) for f in h.fixtures.values()],
        capabilities=asdict(h.caps),
        invalid_handle=invalid,
        again=lambda: gather(h),
    )
