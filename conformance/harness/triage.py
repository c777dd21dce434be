"""Triage: what a failure is for the test at hand (masked, expected, known or its own),
and the calls declined before they are made because a masked requirement is at stake."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from acl_conformance.reference_impl import Model

from .failure import ConformanceFailure
from .failure import Declined
from .failure import ExpectedFailure
from .failure import KnownFailure
from .runstate import RunState


@dataclass
class Triage:
    """How one harness's failures are charged."""

    model: Model
    """The harness's model: its masks, and its tally of what masking took."""
    run: RunState | None = None
    """The run's shared state (failed requirements, failure owners), if any."""
    test_id: str = ""
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Requirement -> (entry key, description): failures citing it are expected ones."""
    provisional: bool = False
    """The backend served an earlier harness: a failure found here is checked again on
    fresh backends before the run counts it (the run's shared state is not told of it)."""

    def classify(self, f: ConformanceFailure) -> BaseException:
        """What failure ``f`` is for this test, by the requirements it cites or could
        equally be charged to: Declined when one is masked (the test ends, having said
        nothing more); an expected failure when the expectations file lists one; a known
        failure when another test of the run found the same one first; else a failure of
        its own, an exception type per identity (requirement and call).  When
        ``provisional`` the run's shared state is only read."""
        cited = [r for r in (f.requirement, *f.also) if r]
        masked = next((r for r in cited if r in self.model.masks), None)
        if masked is not None:
            self.model.tally.set_aside[masked] += 1
            first = f.violations[0] if f.violations else None
            call = first.call.label if first is not None and first.call is not None else ""
            return Declined(masked, call, "the backend broke it here")
        for requirement in cited:
            entry = self.expected.get(requirement)
            if entry is not None:
                if self.run is not None and not self.provisional and f.requirement is not None:
                    # Known to fail now, as an unexpected failure would be: later tests that
                    # do not carry what it cites steer around it (the entry may name another
                    # of its readings), as they did in the run that the expectations file
                    # was written from.
                    self.run.mark_failed(f.requirement, f.also)
                return ExpectedFailure(f, *entry)
        if f.setup_error is not None or f.requirement is None:
            return f
        if self.run is not None and self.provisional:
            # Found on a backend that served earlier harnesses: it may be their leftovers,
            # so the run is not told of it (no claim, no failed requirement) until fresh
            # backends find it too (``attempts.py``); it may still be one another test
            # found first.
            owner = self.run.owner(f.identity)
            if owner is not None and owner != self.test_id:
                return KnownFailure(f, owner)
        elif self.run is not None:
            owner = self.run.claim(f.identity, self.test_id)
            self.run.mark_failed(f.requirement, f.also)
            if owner != self.test_id:
                return KnownFailure(f, owner)
        return f.retyped()

    def decline_if_masked(
        self, name: str, thread: int, args: dict[str, Any], lock: threading.RLock
    ) -> None:
        """Do not make a call that must be rejected for a masked reason: a backend known to
        get that wrong may accept it and do what the model cannot follow.  ``lock``: held
        while the model is asked."""
        with lock:
            masked = self.model.masked_stake(self.model.preview(name, thread, **args))
        if masked is not None:
            self.model.tally.declined[masked] += 1
            label = self.model.render(name, args)
            raise Declined(masked, label, "the call must be rejected for that reason")
