"""The profiles: for each call, (abstract state, arguments) -> its allowed answers.

Each call's rule (rules_copies.py, rules_streams.py, rules_events.py,
rules_devices.py, rules_host.py) lists its runtime checks in the order the open-source
CANN runtime makes them (cann-runtime-facts.md sections 2 and 4).  A runtime check
(runtime_checks.py) says which requirement it stands for, CANN's exact code, and how
binding it is in each profile.  The two profiles fold the same list
differently:

- ``cann``: the first check that fails decides the code; a check CANN makes
  only on some configurations (or that the facts only infer) is a branch:
  its code is allowed *and* the call may go on.
- ``spec``: where the text demands rejection, any non-zero code; where the
  text is silent, success and rejection are both accepted.

A profile finds a call's rule in ``RULES``, a table from call name to rule
checked against ``CALLS`` at import.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from typing import ClassVar

from . import rules_copies
from . import rules_devices
from . import rules_events
from . import rules_host
from . import rules_streams
from .calls import CALLS
from .catalogue import PROFILES
from .outcome import ANY_ERROR
from .outcome import SUCCESS
from .outcome import AllowedAnswers
from .outcome import Alternative
from .outcome import Codes
from .runtime_checks import MAY
from .runtime_checks import MUST
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import failing_after
from .runtime_checks import on_null_stream
from .state import HostRange
from .state import World

__all__ = [
    "MAY",
    "MUST",
    "RULES",
    "CannProfile",
    "Profile",
    "Rule",
    "RuntimeCheck",
    "SpecProfile",
    "get_profile",
]


def _merge(tables: Iterable[Mapping[str, Rule]]) -> Mapping[str, Rule]:
    """The rule tables of the rule modules as one; raises unless every call of
    ``CALLS`` has exactly one rule and every rule is for a call of ``CALLS``."""
    merged: dict[str, Rule] = {}
    for table in tables:
        for call, rule in table.items():
            if call in merged:
                raise RuntimeError(f"two rules for the call {call!r}")
            merged[call] = rule
    # Every call of the contract is judged by the model, so each needs its rule.
    missing = sorted(set(CALLS) - set(merged))
    unknown = sorted(set(merged) - set(CALLS))
    if missing or unknown:
        raise RuntimeError(f"rules missing for calls {missing}; rules for unknown calls {unknown}")
    return MappingProxyType(merged)


RULES: Mapping[str, Rule] = _merge(
    [
        rules_copies.RULES,
        rules_streams.RULES,
        rules_events.RULES,
        rules_devices.RULES,
        rules_host.RULES,
    ]
)
"""Call name -> its rule, ``rule(profile, world, thread, **args)``; one per call of CALLS."""


_TAKES_A_STREAM = frozenset(
    name for name, spec in CALLS.items() if any(p.name == "stream" for p in spec.params)
)
"""The calls with a stream argument (NULL: the default stream)."""


class Profile:
    """The rules shared by both profiles; subclasses decide how checks fold."""

    name = ""
    destroy_waits = False
    """aclrtDestroyStream waits for the stream's tasks (documented for CANN,
    06_stream_management.md:248); the text says nothing, so spec does not assume it."""
    rules: ClassVar[Mapping[str, Rule]] = RULES
    """Call name -> rule; a subclass that judges a call its own way maps it to its own rule."""

    def allowed_answers(
        self, world: World, call: str, thread: int, args: Mapping[str, Any]
    ) -> AllowedAnswers:
        """The allowed answers of ``call(**args)`` made by host ``thread``."""
        rule = self.rules.get(call)
        if rule is None:
            raise KeyError(f"the {self.name} profile has no rule for {call!r}")
        allowed = rule(self, world, thread, **args)
        if args.get("stream") == 0 and world.caps.default_stream and call in _TAKES_A_STREAM:
            return on_null_stream(allowed)
        return allowed

    # -- folding ----------------------------------------------------------
    def fold(
        self, checks: list[RuntimeCheck], success: Alternative
    ) -> AllowedAnswers:  # pragma: no cover
        """The allowed answers of a call that failed ``checks`` and would otherwise give ``success``."""
        raise NotImplementedError

    def count_zero(self, requirement: str) -> AllowedAnswers:  # pragma: no cover
        """The allowed answers of a copy of 0 bytes."""
        raise NotImplementedError

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:  # pragma: no cover
        """(takes the asynchronous path, the call may or may not wait)."""
        raise NotImplementedError


class CannProfile(Profile):
    """The exact codes and order of checks of the open-source CANN runtime."""

    name = "cann"
    destroy_waits = True

    def fold(self, checks: list[RuntimeCheck], success: Alternative) -> AllowedAnswers:
        branches: list[Alternative] = []
        for i, c in enumerate(checks):
            if c.cann is None:
                continue
            later = failing_after(checks[i + 1 :], "cann")
            alt = Alternative(
                Codes.only(c.code) if c.code is not None else ANY_ERROR,
                None,
                c.requirement,
                c.why,
                later,
                order_codes=frozenset(
                    d.code for d in checks[i + 1 :] if d.cann is not None and d.code is not None
                ),
            )
            if c.cann == MUST:
                return AllowedAnswers((alt, *branches))
            branches.append(alt)
        return AllowedAnswers((success, *branches))

    def count_zero(self, requirement: str) -> AllowedAnswers:
        return AllowedAnswers(
            (
                Alternative(
                    SUCCESS,
                    None,
                    requirement,
                    "count == 0 returns ACL_SUCCESS before any other check",
                ),
            )
        )

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:
        # Only the start pointer decides (register_memory.cc:20-40); a registration made on
        # memory since freed may or may not still hold.
        if rng.start_pinned:
            return True, False
        return (True, True) if rng.start_stale else (False, False)


class SpecProfile(Profile):
    """What the text says; any rejection code; every reasonable behaviour where silent."""

    name = "spec"

    def fold(self, checks: list[RuntimeCheck], success: Alternative) -> AllowedAnswers:
        musts = [c for c in checks if c.spec == MUST]
        if musts:
            return AllowedAnswers(
                (
                    Alternative(
                        ANY_ERROR,
                        None,
                        musts[0].requirement,
                        "; ".join(c.why for c in musts),
                        failing_after(musts[1:], "spec"),
                    ),
                )
            )
        mays = [c for c in checks if c.spec == MAY]
        if mays:
            rejection = Alternative(
                ANY_ERROR, None, mays[0].requirement, "; ".join(c.why for c in mays)
            )
            return AllowedAnswers((success, rejection))
        return AllowedAnswers((success,))

    def count_zero(self, requirement: str) -> AllowedAnswers:
        return AllowedAnswers(
            (
                Alternative(SUCCESS, None, requirement, "count == 0 copies nothing"),
                Alternative(
                    ANY_ERROR,
                    None,
                    requirement,
                    "the text does not say whether count == 0 is an error",
                ),
            )
        )

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:
        if rng.all_pinned:
            return True, False
        if not rng.any_pinned and not rng.any_stale:
            return False, False
        # Partly page-locked: judged as pinned for memory (the weaker claim), and
        # the call may or may not wait.
        return True, True


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (``spec`` or ``cann``)."""
    if name == "spec":
        return SpecProfile()
    if name == "cann":
        return CannProfile()
    raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
