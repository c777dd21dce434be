"""Failures a vendor can act on.

A :class:`ConformanceFailure` says, for someone who has never read this code:
which requirement was broken (ID, level, the spec sentence), the call that
broke it in C form, what the profile allows there, what the backend did, and
the call sequence that led there.  It keeps the trace of calls for the
reproducer tools.  :class:`BackendCrash` and :class:`BackendTimeout` are the
backend failing to answer at all: reported as CRASH and TIMEOUT, not FAIL.
"""

from __future__ import annotations

import copy
import re
import textwrap
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from acl_conformance.reference_impl import Judgement
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import charging
from acl_conformance.reference_impl.catalogue import BY_ID
from acl_conformance.reference_impl.record import CallRecord

HISTORY_SHOWN = 40
"""Calls shown in a failure message; the full trace is kept alongside."""


def _requirement_block(req_id: str | None, profile: str) -> list[str]:
    if req_id is None:
        return ["requirement: none (the call sequence left the spec's domain)"]
    r = BY_ID.get(req_id)
    if r is None:
        return [f"requirement: {req_id}"]
    level = r.level(profile)
    lines = [
        f"requirement: {r.id} ({level.value if level else 'n/a'} under profile {profile}): {r.title}"
    ]
    for q in r.quote:
        lines.append(
            textwrap.fill(f'"{q}"', 96, initial_indent="  spec: ", subsequent_indent="        ")
        )
    if profile == "cann" and r.cann:
        lines.append(
            textwrap.fill(r.cann, 96, initial_indent="  cann: ", subsequent_indent="        ")
        )
    if r.silent:
        lines.append(
            textwrap.fill(
                r.silent,
                96,
                initial_indent="  where the text is silent: ",
                subsequent_indent="        ",
            )
        )
    return lines


@dataclass(frozen=True)
class FailureSnapshot:
    """What a failure keeps of the test that raised it (the harness takes it)."""

    profile: str
    trace: list[CallRecord]
    """The calls the test made, as the backend answered them (for trace files)."""
    history: tuple[Judgement, ...]
    """The model's history: every call it judged, the suite's own set-up included."""
    fixtures: list[dict[str, Any]]
    """The backend's fixture variables (name, size, address)."""
    capabilities: dict[str, Any]
    invalid_handle: int | None
    """The handle the backend offers as garbage; None if it could not say."""
    again: Callable[[], FailureSnapshot] | None = field(default=None, compare=False)
    """Takes the same snapshot anew: a failure charged again later (to another
    requirement, once the other host threads are done) shows the calls made by then."""


def backend_facts(snapshot: FailureSnapshot | None) -> dict[str, Any]:
    """The fixture variables, capabilities and invalid handle of the backend, for trace
    files (a replay maps the recorded addresses and handles onto another run's)."""
    if snapshot is None:
        return {}
    return {
        "fixtures": list(snapshot.fixtures),
        "capabilities": dict(snapshot.capabilities),
        "invalid_handle": snapshot.invalid_handle,
    }


def test_calls(snapshot: FailureSnapshot) -> list[str]:
    """The calls the test made, in C form with their step numbers, without the suite's
    own set-up calls."""
    return [call.label for call in snapshot.history if not call.setup]


def _history(snapshot: FailureSnapshot) -> list[str]:
    calls = test_calls(snapshot)
    setup = len(snapshot.history) - len(calls)
    shown = calls[-HISTORY_SHOWN:]
    out = ["calls made, in order (C form; #N is the step):"]
    if setup:
        out.append(
            f"  ({setup} set-up calls, reading the variables' starting contents, are left out)"
        )
    if len(calls) > len(shown):
        out.append(f"  ... {len(calls) - len(shown)} earlier calls (see the trace file)")
    out += [f"  {line};" for line in shown]
    return out


class ConformanceFailure(AssertionError):
    """The backend did something the profile does not allow."""

    def __init__(
        self,
        violations: list[Violation],
        snapshot: FailureSnapshot | None,
        setup_error: str | None = None,
    ):
        self.violations = violations
        self.snapshot = snapshot
        self.profile = snapshot.profile if snapshot is not None else "?"
        self.requirement = violations[0].requirement if violations else None
        self.also: tuple[str, ...] = violations[0].also if violations else ()
        """Other requirements this failure could equally be charged to."""
        self.trace: list[CallRecord] = list(snapshot.trace) if snapshot is not None else []
        self.history = test_calls(snapshot) if snapshot is not None else []
        self.backend = backend_facts(snapshot)
        self.setup_error = setup_error
        self.by_test = False
        """A check the test made itself (a timing it measured, an order of returns), not
        the model's judgement of a call: replaying the calls does not repeat it."""
        super().__init__(self._message(snapshot))

    def under(self, requirement: str, context: str) -> ConformanceFailure:
        """The same failure, charged to ``requirement`` because of how it arose (e.g. only
        with several host threads at once); the model's own reading is kept in the text."""
        first = self.violations[0]
        charge = charging.in_context(
            charging.Charge(first.requirement, first.also), requirement, context
        )
        v = Violation(
            charge.requirement,
            f"{context}: {first.message}",
            call=first.call,
            allowed=first.allowed,
            observed=first.observed,
            details=[f"taken alone the model reads it as [{first.requirement}]", *first.details],
            also=charge.also,
        )
        snapshot = self.snapshot
        if snapshot is not None and snapshot.again is not None:
            snapshot = snapshot.again()
        return ConformanceFailure([v, *self.violations[1:]], snapshot)

    @property
    def identity(self) -> str:
        """What makes two failures the same one: the requirement and the ACL call that went
        wrong (``KIND-REJECTED at aclrtMemcpyToSymbolAsync``; ``... at a check of the
        test`` for a check the test made of no call)."""
        first = self.violations[0] if self.violations else None
        call = first.call if first is not None else None
        where = call.c_function if call is not None else "a check of the test"
        return f"{self.requirement or 'setup'} at {where}"

    def retyped(self) -> ConformanceFailure:
        """This failure as an instance of the class of its identity: distinct failures are
        distinct exception types, so Hypothesis shrinks each apart and never slides from
        one to another while shrinking."""
        cls = failure_type(self.identity)
        twin = cls.__new__(cls)
        twin.__dict__.update(self.__dict__)
        twin.args = self.args
        return twin

    @classmethod
    def setup(cls, message: str, snapshot: FailureSnapshot | None) -> ConformanceFailure:
        """A call the suite needs to set up a test failed: reported against no requirement."""
        return cls([Violation(None, message)], snapshot, setup_error=message)

    def _message(self, snapshot: FailureSnapshot | None) -> str:
        if not self.violations:  # pragma: no cover
            return "conformance failure"
        first = self.violations[0]
        lines = [f"[{first.requirement or 'setup'}] {first.message}"]
        lines += _requirement_block(first.requirement, self.profile)
        lines += first.labelled_lines(indent="", observed="backend")
        lines += first.details
        for extra in self.violations[1:4]:
            lines.append(f"also: [{extra.requirement}] {extra.message}")
        if snapshot is not None:
            lines += _history(snapshot)
        return "\n".join(lines)


_TYPES: dict[str, type[ConformanceFailure]] = {}


def failure_type(identity: str) -> type[ConformanceFailure]:
    """The exception class of one failure identity (made once per process)."""
    cls = _TYPES.get(identity)
    if cls is None:
        name = "ConformanceFailure_" + re.sub(r"[^A-Za-z0-9]+", "_", identity).strip("_")
        cls = _TYPES[identity] = type(name, (ConformanceFailure,), {"__module__": __name__})
    return cls


EXPECTED = "expected failure: "
"""How the reason of an expected failure starts (the plugin reports it as xfail)."""


class _StoppedFailure(unittest.SkipTest):
    """A failure found but not reported as one: a skip to pytest and Hypothesis alike, so
    that the test stops there without shrinking; its reason is ``prefix``, why, and the
    failure's first line (the plugin reports the test by the reason's prefix, and takes
    what the stop knows from the exception itself)."""

    def __init__(self, failure: ConformanceFailure, prefix: str, why: str) -> None:
        self.failure = failure
        first = str(failure).splitlines()[0] if str(failure) else ""
        super().__init__(f"{prefix}{why} -- {first}")


class ExpectedFailure(_StoppedFailure):
    """A failure that the backend's expectations file lists (by the requirement it
    cites): the test stops here, without shrinking, and is reported as an expected
    failure."""

    def __init__(self, failure: ConformanceFailure, key: str, describe: str) -> None:
        self.key = key
        super().__init__(failure, EXPECTED, describe)


KNOWN = "known failure: "
"""How the reason of a known failure starts (one found, and shrunk, by another test)."""


class KnownFailure(_StoppedFailure):
    """A failure whose identity another test of the run already found (and shrinks): this
    test stops here, without shrinking it again, and cites that test's counterexample."""

    def __init__(self, failure: ConformanceFailure, owner: str) -> None:
        self.owner = owner
        super().__init__(failure, KNOWN, f"{failure.identity}, as in {owner}")


DECLINED = "declined: "
"""How the reason of a declined test starts."""


class Declined(unittest.SkipTest):
    """A step the test did not take, or could not go past, because it puts at stake a
    requirement that is masked (known to fail in this run, or listed as an expected
    failure): the test ends there, having said nothing of what it would have gone on to
    check.  Machines catch it and go on with their next step."""

    def __init__(self, requirement: str, call: str, why: str, *, masked: bool = True) -> None:
        """``masked``: the step puts a masked requirement at stake (False: a call in a
        situation that hung earlier in the run, ``hangs.py``; ``why`` says so)."""
        self.requirement = requirement
        self.call = call
        what = f"{requirement} is masked; " if masked else ""
        super().__init__(f"{DECLINED}{what}{why}: {call}")


class BackendCrash(Exception):
    """The backend raised, died or became unusable instead of answering (status crash).
    A call that raised is charged to the requirement its success stands for (as a hang
    is); a backend that died between calls, or at its start, to none."""

    call: str | None = None
    """The call that raised, in C form (None: not a call of a harness)."""
    requirement: str | None = None
    """The requirement the crash is charged to: the one the call's success stands for."""
    identity: str | None = None
    """The failure identity (the requirement and the C function), when charged."""
    owner: str | None = None
    """The test that met the same failure first, when another one did."""

    def charge_to(
        self, requirement: str | None, c_function: str, snapshot: FailureSnapshot | None
    ) -> None:
        """Charge this crash of :attr:`call` to ``requirement`` (the one the call's success
        stands for) and say so in the message, for a vendor: the call, what it raised, the
        spec's sentence, the calls before it."""
        self.requirement = requirement
        self.identity = f"{requirement or 'setup'} crashed at {c_function}"
        profile = snapshot.profile if snapshot is not None else "spec"
        first = str(self.args[0]) if self.args else ""
        lines = [
            f"[{requirement or 'setup'}] the backend crashed: {first}",
            *_requirement_block(requirement, profile),
            "  backend: the call raised instead of answering; the suite released the "
            "backend instance",
        ]
        if snapshot is not None:
            lines += _history(snapshot)
        lines.append(f"  {self.call};  <- raised")
        self.args = ("\n".join(lines),)

    def __init__(self, message: str, snapshot: FailureSnapshot | None = None):
        # Each record as it stands now: a call that never returned is recorded so, even
        # once the released backend makes its abandoned thread raise.
        self.trace: list[CallRecord] = (
            [copy.copy(r) for r in snapshot.trace] if snapshot is not None else []
        )
        self.history = test_calls(snapshot) if snapshot is not None else []
        self.backend = backend_facts(snapshot)
        super().__init__(message)


class BackendTimeout(BackendCrash):
    """A call did not return in time (status timeout).  A call of a test that hung is
    charged to a requirement (:meth:`charge`); one of starting or releasing a backend is
    not."""

    call: str | None = None
    """The call that did not return, in C form (None: a start-up or release call)."""
    limit: str | None = None
    """The limit it did not return within, in words."""
    requirement: str | None = None
    """The requirement the hang is charged to: the one the call's success stands for."""
    situation: str | None = None
    """The call's situation (``hangs.situation``): later calls in it are declined."""
    identity: str | None = None
    """The failure identity: one hang, one identity, whichever test meets it."""
    allowed: str | None = None
    """What the profile allows the call to answer, in words (set by :meth:`charge`)."""
    owner: str | None = None
    """The test that met the same hang first, when another one did (it owns the
    counterexample)."""

    def charge(
        self,
        requirement: str | None,
        situation: str,
        allowed: str,
        snapshot: FailureSnapshot | None,
    ) -> None:
        """Charge this hang to ``requirement`` (the one the call's success stands for; the
        profile ``allowed`` these answers) and say so in the message, for a vendor: the
        call, the limit, the spec's sentence, the calls before it."""
        self.requirement = requirement
        self.allowed = allowed
        self.situation = situation
        self.identity = f"{requirement or 'setup'} hung at {situation}"
        profile = snapshot.profile if snapshot is not None else "spec"
        lines = [
            f"[{requirement or 'setup'}] the backend hung: {self.call} did not return "
            f"within {self.limit}",
            *_requirement_block(requirement, profile),
            f"  allowed: {allowed}",
            "  backend: the call never returned; the suite abandoned it and released the "
            "backend instance",
            f"  every later call of the run in the same situation, {situation}, is declined "
            "(not made), so that the other requirements are decided without it",
        ]
        if snapshot is not None:
            lines += _history(snapshot)
        lines.append(f"  {self.call};  <- did not return")
        self.args = ("\n".join(lines),)
