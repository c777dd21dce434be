"""What a failure is for the test at hand (masked, expected, known or its own), and the
calls declined before they are made because a masked requirement is at stake."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from .failure import ConformanceFailure
from .failure import Declined
from .failure import ExpectedFailure
from .failure import KnownFailure

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


def classify(h: Harness, f: ConformanceFailure) -> BaseException:
    """What failure ``f`` is for this test, by the requirements it cites or could
    equally be charged to: Declined when one is masked (the test ends, having said
    nothing more); an expected failure when the expectations file lists one; a known
    failure when another test of the run found the same one first; else a failure
    of its own, an exception type per identity (requirement and call).  On a backend that
    served earlier harnesses (``h.provisional``) the run's shared state is only read."""
    cited = [r for r in (f.requirement, *f.also) if r]
    masked = next((r for r in cited if r in h.model.masks), None)
    if masked is not None:
        h.model.evidence.set_aside[masked] += 1
        first = f.violations[0] if f.violations else None
        call = first.call.label if first is not None and first.call is not None else ""
        return Declined(masked, call, "the backend broke it here")
    for requirement in cited:
        entry = h.expected.get(requirement)
        if entry is not None:
            return ExpectedFailure(f, *entry)
    if f.setup_error is not None or f.requirement is None:
        return f
    if h.run is not None and h.provisional:
        # Found on a backend that served earlier harnesses: it may be their leftovers, so
        # the run is not told of it (no claim, no failed requirement) until fresh backends
        # find it too (``attempts.py``); it may still be one another test found first.
        owner = h.run.owner(f.identity)
        if owner is not None and owner != h.test_id:
            return KnownFailure(f, owner)
    elif h.run is not None:
        owner = h.run.claim(f.identity, h.test_id)
        h.run.mark_failed(f.requirement, f.also)
        if owner != h.test_id:
            return KnownFailure(f, owner)
    return f.retyped()


def decline_if_masked(h: Harness, name: str, thread: int, args: dict[str, Any]) -> None:
    """Do not make a call that must be rejected for a masked reason: a backend known to
    get that wrong may accept it and do what the model cannot follow."""
    with h.lock:
        masked = h.model.masked_stake(h.model.preview(name, thread, **args))
    if masked is not None:
        h.model.evidence.declined[masked] += 1
        label = h.model.render(name, args)
        raise Declined(masked, label, "the call must be rejected for that reason")
