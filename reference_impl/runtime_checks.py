"""The runtime checks of the rules, and the runtime checks several calls share.

A *runtime check* is one validation a runtime makes of a call's arguments or state
(not a *check* of the report, a judgement charged to a requirement).  A rule lists the
runtime checks a call fails (``RuntimeCheck``) in the order the open-source CANN runtime
makes them; a profile (profiles.py) folds that list into the call's allowed answers.
This module holds what every rule module needs: the ``RuntimeCheck`` record with its
bindings ``MUST`` and ``MAY``, the ``Folding`` interface the rules see of a profile, the
shared runtime checks (current device, symbol lookup, bounds, stream handle, undefined
memory) and small builders of allowed answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from . import charging
from .constants import ACL_ERROR_FAILURE
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_CONTEXT_NULL
from .constants import ACL_ERROR_RT_INVALID_HANDLE
from .constants import ACL_ERROR_RT_INVALID_SYMBOL
from .constants import ACL_SUCCESS
from .constants import SIZE_MAX
from .order import Gate
from .outcome import ANY_ERROR
from .outcome import SUCCESS
from .outcome import AllowedAnswers
from .outcome import Alternative
from .outcome import Codes
from .requirement_ids import CHECK_ORDER
from .requirement_ids import DEVICE_CURRENT
from .requirement_ids import STREAM_EVENT_ORDER
from .requirement_ids import STREAM_INVALID_HANDLE
from .requirement_ids import STREAM_NULL_DEFAULT
from .state import HostRange
from .state import Stream
from .state import StreamArg
from .state import Symbol
from .state import World

MUST = "must"
"""The check's failure must reject the call."""
MAY = "may"
"""The check's failure may reject the call, or the call may go on."""


@dataclass(frozen=True)
class RuntimeCheck:
    """A failed runtime check of one call, in CANN's order."""

    requirement: str | None
    why: str
    code: int | None
    """CANN's code; None where the facts give no exact code (any non-zero)."""
    spec: str | None = MUST
    cann: str | None = MUST
    """How binding the check is in each profile; None: not a failure there."""


class Folding(Protocol):
    """What a rule needs of a profile: how it folds checks, and its few assumptions."""

    name: str
    destroy_waits: bool
    """aclrtDestroyStream waits for the stream's tasks."""

    def fold(self, checks: list[RuntimeCheck], success: Alternative) -> AllowedAnswers:
        """The allowed answers of a call that failed ``checks`` and would otherwise give ``success``."""
        ...

    def count_zero(self, requirement: str) -> AllowedAnswers:
        """The allowed answers of a copy of 0 bytes."""
        ...

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:
        """(takes the asynchronous path, the call may or may not wait)."""
        ...


Rule = Callable[..., AllowedAnswers]
"""A call's rule: ``rule(profile, world, thread, **args)`` -> its allowed answers."""


IMPOSSIBLE = Alternative(SUCCESS, None, None, "")
"""A placeholder success for calls that cannot succeed; fold drops it unless a
check said the call may go on, in which case success without effect is allowed."""


# -- shared checks --------------------------------------------------------
def current_device(
    world: World, thread: int, checks: list[RuntimeCheck], requirement: str = DEVICE_CURRENT
) -> int:
    """The device current in ``thread``; adds a check if there is none."""
    dev = world.current_device(thread)
    if dev is None:
        # CANN sets a configured default device implicitly, else 107002
        # (runtime.cc:5397-5432); the model assumes device 0 for the first.
        checks.append(
            RuntimeCheck(
                requirement,
                "no device is current in this thread",
                ACL_ERROR_RT_CONTEXT_NULL,
                MAY,
                MAY,
            )
        )
        return 0
    return dev


def lookup_symbol(
    world: World, symbol: int, checks: list[RuntimeCheck], unregistered: str, interior: str
) -> Symbol | None:
    """The registered variable at address ``symbol``; adds a check if there is none."""
    if symbol == 0:
        return None
    sym = world.symbols.get(symbol)
    if sym is None:
        inner = world.symbol_containing(symbol)
        if inner is not None:
            checks.append(
                RuntimeCheck(
                    interior,
                    f"symbol is &{inner.name} + {symbol - inner.address}, a pointer into a "
                    "variable, not a variable's address",
                    ACL_ERROR_RT_INVALID_SYMBOL,
                )
            )
        else:
            checks.append(
                RuntimeCheck(
                    unregistered,
                    "symbol is not the address of a registered device variable",
                    ACL_ERROR_RT_INVALID_SYMBOL,
                )
            )
    return sym


def check_bounds(
    sym: Symbol | None,
    offset: int,
    count: int,
    checks: list[RuntimeCheck],
    overflow: str,
    past_end: str,
) -> None:
    """Adds a check if ``offset + count`` wraps or runs past the end of ``sym``."""
    if sym is None:
        return
    if offset + count > SIZE_MAX:
        checks.append(
            RuntimeCheck(
                overflow, f"offset + count = {offset} + {count} wraps size_t", ACL_ERROR_FAILURE
            )
        )
    elif offset + count > sym.size:
        checks.append(
            RuntimeCheck(
                past_end,
                f"offset + count = {offset + count} > {sym.size}, the size of {sym.name}",
                ACL_ERROR_INVALID_PARAM,
            )
        )


def resolve_stream(
    world: World,
    handle: int,
    device: int,
    checks: list[RuntimeCheck],
    invalid: str = STREAM_INVALID_HANDLE,
) -> Stream | None:
    """The stream ``handle`` names (NULL: ``device``'s default); adds a check if none."""
    arg = world.classify_stream(handle)
    if arg is StreamArg.DEFAULT:
        if not world.caps.default_stream:
            checks.append(
                RuntimeCheck(
                    STREAM_NULL_DEFAULT,
                    "stream is NULL and the backend declares no default stream",
                    None,
                    MAY,
                    None,
                )
            )
        return world.default_stream(device)
    if arg is StreamArg.LIVE:
        return world.streams[handle]
    checks.append(RuntimeCheck(invalid, f"stream is {arg.value}", ACL_ERROR_RT_INVALID_HANDLE))
    return None


def foreign(stream: Stream | None, device: int) -> bool:
    """Whether ``stream`` belongs to a device other than ``device``."""
    return stream is not None and stream.device != device


def undefined_memory(rng: HostRange | None, what: str, checks: list[RuntimeCheck]) -> None:
    """Adds a check if ``rng`` is not host memory the suite allocated."""
    if rng is not None and not rng.known:
        checks.append(
            RuntimeCheck(
                None,
                f"{what} is not host memory the suite allocated (undefined behaviour)",
                None,
                MAY,
                MAY,
            )
        )


# -- builders of allowed answers -------------------------------------------
def shadowed(allowed: AllowedAnswers, shadow: list[str]) -> AllowedAnswers:
    """``allowed`` with ``shadow`` as what a rejection with a wrong code could be charged
    to as well (see Alternative.shadow)."""
    if not shadow:
        return allowed
    return AllowedAnswers(
        tuple(
            a
            if ACL_SUCCESS in a.codes
            else dataclasses.replace(
                a, shadow=tuple(r for r in dict.fromkeys(shadow) if r != a.requirement)
            )
            for a in allowed.alternatives
        )
    )


def on_null_stream(allowed: AllowedAnswers) -> AllowedAnswers:
    """``allowed`` for a call made on the NULL stream by a backend that declares a default
    stream: a refusal of what had to succeed could equally be charged to
    STREAM-NULL-DEFAULT (NULL not taken as the default stream), whatever else it breaks;
    a refusal that breaks nothing else (the suite's own stream gate) is charged there.
    What is allowed does not change, only what a deviation is charged to."""

    def read(a: Alternative) -> Alternative:
        if ACL_SUCCESS not in a.codes or a.requirement == STREAM_NULL_DEFAULT:
            return a
        charge = charging.refused_on_null(charging.Charge(a.requirement, a.also))
        return dataclasses.replace(a, requirement=charge.requirement, also=charge.also)

    return AllowedAnswers(tuple(read(a) for a in allowed.alternatives))


def failing_after(checks: list[RuntimeCheck], profile: str) -> tuple[str, ...]:
    """What else a call that fails several checks at once puts at stake: the other checks'
    requirements, and CHECK-ORDER (which one decides the code)."""
    reqs = [c.requirement for c in checks if c.requirement and getattr(c, profile) == MUST]
    return (*dict.fromkeys(reqs), CHECK_ORDER) if reqs else ()


def one(codes: Codes, effect: object | None, requirement: str | None, why: str) -> AllowedAnswers:
    """Allowed answers of a single alternative."""
    return AllowedAnswers((Alternative(codes, effect, requirement, why),))


def blocked_answers(requirement: str, stream: Stream, gate: Gate) -> AllowedAnswers:
    """A call that must wait for ``stream`` while a closed gate is ahead of its tasks: no
    success yet.  A gate on another stream holds it through an event wait, so a success
    may as well mean that the wait did not order anything."""
    through_event = gate.task.queue != stream.queue.key
    return AllowedAnswers(
        (
            Alternative(
                ANY_ERROR,
                None,
                requirement,
                f"gate {gate.gid} ahead in {stream.name} is closed: the call cannot return success before it opens",
                also=(STREAM_EVENT_ORDER,) if through_event else (),
            ),
        )
    )


def blocked(world: World, requirement: str, streams: Iterable[Stream]) -> AllowedAnswers | None:
    """The allowed answers of a call that waits for ``streams`` while a closed gate is ahead of one
    of them (see blocked_answers); None where no gate holds any of them."""
    for s in streams:
        g = world.order.closed_gate_before(s.queue.frontier)
        if g is not None:
            return blocked_answers(requirement, s, g)
    return None


def device_streams(world: World, device: int) -> list[Stream]:
    """The live streams of ``device``, its default stream first."""
    return [
        s
        for s in [world.default_stream(device), *world.streams.values()]
        if s.alive and s.device == device
    ]


def succeeds(
    profile: Folding,
    checks: list[RuntimeCheck],
    effect: object | None,
    requirement: str | None,
    why: str,
    also: tuple[str, ...] = (),
) -> AllowedAnswers:
    """The allowed answers of a call that failed ``checks`` and would otherwise succeed with
    ``effect``, the success charged to ``requirement`` (and ``also``)."""
    return profile.fold(checks, Alternative(SUCCESS, effect, requirement, why, also))


def created(
    profile: Folding,
    world: World,
    thread: int,
    null_output: bool,
    requirement: str,
    handle: str,
    effect: Callable[[int], object],
) -> AllowedAnswers:
    """The allowed answers of a call that creates a ``handle`` ("stream", "event") on the
    current device: its output pointer may be NULL; ``effect(device)`` is the creation."""
    checks: list[RuntimeCheck] = []
    if null_output:
        checks.append(
            RuntimeCheck(
                requirement, f"the {handle} output pointer is NULL", ACL_ERROR_INVALID_PARAM
            )
        )
    device = current_device(world, thread, checks, requirement)
    article = "an" if handle[0] in "aeiou" else "a"
    return succeeds(
        profile, checks, effect(device), requirement, f"creating {article} {handle} succeeds"
    )
