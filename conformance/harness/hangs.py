"""How long a call may take before it counts as hung, and what "the same hang" is.

**The limit adapts to the backend.**  Without a limit given on the command line
(``--call-timeout`` / ``--acl-call-timeout``), one call may take ``max(FLOOR_SECONDS,
FACTOR x the slowest call that completed so far)``: the run learns how slow the backend
is from the calls it answered.  A simulator answers in microseconds, so a call that
does not return is reported after ``FLOOR_SECONDS``, not after a minute; a real device,
whose context creation takes hundreds of milliseconds and whose synchronisations wait
for queued copies, raises its own limit as it shows how slow it legitimately is.  The
floor is what keeps that sound before the run has seen a slow call: no legal call of
the suite's tests (a 16 MiB copy, a synchronisation of a queue of them, creating a
context on a real device) takes anything near ``FLOOR_SECONDS`` on a working backend,
and a backend that does needs a limit given on the command line (which then holds
for every call, unchanged).  Starting a backend and releasing it (``aclInit``, closing
it, resetting it between tests) are bounded by ``STARTUP_SECONDS`` instead, unless a
limit is given: a real runtime's start-up is far slower than any one call.

**One hang, one failure.**  A call that does not return is described by its
*situation*: the C function and, for each handle it takes, whether it is NULL (the
default stream) or a handle the test made (:func:`situation`).  The run remembers the
situations that hung (``runstate.RunState.mark_hung``); a later call in the same
situation, in any test of the run, is declined instead of made (it would hang again and
cost another whole limit), citing the test that found the hang.  The hang itself is
charged to one requirement: the one the call's success stands for under the profile.
"""

from __future__ import annotations

import threading
from typing import Any

from acl_conformance.reference_impl.calls import CALLS

FLOOR_SECONDS = 10.0
"""The least a call may take before it counts as hung, when no limit is given."""

FACTOR = 10.0
"""How many times the slowest call that completed a call may take, when no limit is given."""

STARTUP_SECONDS = 60.0
"""How long starting, resetting or releasing a backend may take, when no limit is given."""

_HANDLE_TYPES = {"aclrtStream": "stream", "aclrtEvent": "event"}


class CallLimit:
    """The time limit on one backend call: ``fixed`` when the run gives one, else adaptive
    (``max(FLOOR_SECONDS, FACTOR x slowest completed call)``); one per pytest process,
    shared by its harnesses."""

    def __init__(
        self, fixed: float | None = None, floor: float = FLOOR_SECONDS, factor: float = FACTOR
    ) -> None:
        self.fixed = fixed
        self.floor = floor
        self.factor = factor
        self.slowest = 0.0
        """The longest a call that completed took, in seconds."""
        self._lock = threading.Lock()

    def seconds(self) -> float:
        """The limit on the next call."""
        if self.fixed is not None:
            return self.fixed
        return max(self.floor, self.factor * self.slowest)

    def startup_seconds(self) -> float:
        """The limit on starting, resetting or releasing a backend."""
        if self.fixed is not None:
            return self.fixed
        return max(STARTUP_SECONDS, self.seconds())

    def observe(self, elapsed: float) -> None:
        """A call completed after ``elapsed`` seconds."""
        if elapsed > self.slowest:
            with self._lock:
                self.slowest = max(self.slowest, elapsed)

    def describe(self) -> str:
        """The limit as a failure message states it."""
        if self.fixed is not None:
            return f"{self.fixed:g} s (given on the command line)"
        return (
            f"{self.seconds():g} s (the larger of {self.floor:g} s and {self.factor:g} x the "
            f"slowest call that completed in this run, {self.slowest:.3g} s)"
        )


def situation(name: str, args: dict[str, Any]) -> str:
    """The situation of call ``name(**args)`` as far as a hang goes: its C function and, for
    each stream or event it takes, NULL or a handle (``aclrtSynchronizeStream(stream=NULL)``,
    ``aclrtSynchronizeEvent(event=<event>)``)."""
    spec = CALLS[name]
    parts = []
    for p in spec.params:
        kind = _HANDLE_TYPES.get(p.ctype)
        if kind is None or p.name not in args:
            continue
        parts.append(f"{p.name}={'NULL' if not args[p.name] else f'<{kind}>'}")
    return f"{spec.c_name}({', '.join(parts)})"
