"""What a failure keeps of the harness that raised it, taken into a plain object
(failure.py knows nothing of the harness)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Protocol

from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.adapters.traced import Traced
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl.record import CallRecord

from .failure import FailureSnapshot


class Snapshotted(Protocol):
    """What a snapshot reads of a harness."""

    @property
    def adapter(self) -> Traced: ...
    @property
    def profile(self) -> str: ...
    @property
    def caps(self) -> Capabilities: ...
    @property
    def model(self) -> Model: ...
    @property
    def fixtures(self) -> Mapping[str, FixtureVariable]: ...
    def trace_records(self) -> list[CallRecord]: ...


def snapshot(h: Snapshotted) -> FailureSnapshot:
    """A snapshot of the harness now: its calls, the model's history, the backend's facts
    (``again`` takes a fresh one, for a failure that outlives more calls)."""
    try:
        invalid: int | None = h.adapter.invalid_handle()
    except Exception:  # a backend that is gone cannot say; the trace is still useful
        invalid = None
    return FailureSnapshot(
        profile=h.profile,
        trace=h.trace_records(),
        history=tuple(h.model.history),
        fixtures=[asdict(f) for f in h.fixtures.values()],
        capabilities=asdict(h.caps),
        invalid_handle=invalid,
        again=lambda: snapshot(h),
    )
