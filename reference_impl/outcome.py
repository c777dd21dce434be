"""What a profile allows for one call (its allowed answers): alternatives of (return
codes, effect).

A profile never predicts one answer where the spec leaves several open: it
returns every legal alternative, each with the set of codes that select it,
the effect a success has (None for "nothing happens"), and the requirement it
stands for, so that a mismatch can be reported against the right clause.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import ACL_SUCCESS
from .constants import error_name


@dataclass(frozen=True)
class Codes:
    """A set of aclError values: explicit, or "any non-zero code"."""

    values: frozenset[int] | None
    """None means every non-zero code (but those of ``excluded``)."""
    excluded: frozenset[int] = frozenset()
    """With ``values`` None: the non-zero codes that are not allowed."""

    @staticmethod
    def only(*codes: int) -> Codes:
        return Codes(frozenset(codes))

    @staticmethod
    def any_error_but(*codes: int) -> Codes:
        """Every non-zero code except ``codes``."""
        return Codes(None, frozenset(codes))

    def __contains__(self, code: object) -> bool:
        if not isinstance(code, int):
            return False
        if self.values is None:
            return code != ACL_SUCCESS and code not in self.excluded
        return code in self.values

    def describe(self) -> str:
        if self.values is None:
            but = " or ".join(f"{error_name(c)} ({c})" for c in sorted(self.excluded))
            return f"any non-zero aclError but {but}" if but else "any non-zero aclError"
        return " or ".join(f"{error_name(c)} ({c})" for c in sorted(self.values))


ANY_ERROR = Codes(None)
SUCCESS = Codes.only(ACL_SUCCESS)


@dataclass(frozen=True)
class Alternative:
    """One allowed answer of a call."""

    codes: Codes
    effect: object | None
    """An effect description the model applies (see apply.py), or None."""
    requirement: str | None
    """The requirement ID this answer stands for (None: outside the spec)."""
    why: str
    """The reason, in words, shown in failure messages."""
    also: tuple[str, ...] = ()
    """Other requirements a deviation from this answer could equally be charged to
    (a rejected end-exact copy on the NULL stream breaks either the bound or the
    default stream: one call cannot tell which)."""
    shadow: tuple[str, ...] = ()
    """Requirements a *rejection with another code* could be charged to as well: checks
    the call passes that a backend could get wrong (a bound that misfires at the very
    end rejects with the bound's code).  Not a reading of a wrong success."""
    order_codes: frozenset[int] = frozenset()
    """The codes of the checks that fail after the one that decides this answer: a
    rejection with one of them (and not this answer's) made the checks in another order
    (CHECK-ORDER)."""


@dataclass(frozen=True)
class AllowedAnswers:
    """The allowed answers of one call under one profile."""

    alternatives: tuple[Alternative, ...]

    def __post_init__(self) -> None:
        if not self.alternatives:  # pragma: no cover - a bug in a profile
            raise ValueError("allowed answers need at least one alternative")

    def match(self, code: int) -> Alternative | None:
        """The first alternative whose codes contain ``code``, or None."""
        for alt in self.alternatives:
            if code in alt.codes:
                return alt
        return None

    @property
    def primary(self) -> Alternative:
        """The alternative a mismatch is reported against."""
        return self.alternatives[0]

    def allowed_codes(self) -> str:
        return "; or ".join(f"{a.codes.describe()} ({a.why})" for a in self.alternatives)

    def accepts_success(self) -> bool:
        return any(ACL_SUCCESS in a.codes for a in self.alternatives)

    def accepts_failure(self) -> bool:
        return any(
            a.codes.values is None or a.codes.values - {ACL_SUCCESS} for a in self.alternatives
        )
