"""What a requirement status rests on: the checks the model made, and the allowed outcomes it saw.

A *check* is one judgement of the model charged to one requirement: a return code
matched against what the profile allows, a read judged byte by byte, an output
compared with what it must be.  A requirement is only as well tested as its
checks: a pass with no check behind it is no pass.

For requirements whose spec allows several outcomes (a pinned copy may run at
once or later; two streams may land in either order; a MAY check may accept or
reject), the model also records which of the allowed outcomes it actually saw
(as litmus tests report "allowed / observed"): a backend that always runs
eagerly never exercises the pending window, and the report says so.

For the copies that succeeded, it also keeps what the checks rested on where a
backend's data path may change with the values (``Extent``): per requirement and per
kind of host memory the copy read or wrote, the smallest and largest count checked and
whether an odd offset was seen.  A pass that rests on small copies only says so.

The same object counts what masking did: steps the harness declined because
they put a masked requirement at stake, and violations of masked requirements
that were set aside (see ``Model.masks``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any
from typing import NamedTuple

ACCEPTED, REJECTED = "accepted", "rejected"
"""The two outcomes of a check the profile leaves open (success and rejection allowed)."""

PENDING = "still pending when read before a synchronisation"
COMPLETE_EARLY = "already complete when read before a synchronisation"
SOURCE_AT_CALL = "the source as it was at the call"
SOURCE_CHANGED = "the source as changed before the synchronisation"
EARLIER_LAST = "the earlier-issued copy landed last"
LATER_LAST = "the later-issued copy landed last"
QUERY_NOT_READY = "NOT_READY while its tasks might still run"
QUERY_COMPLETE = "COMPLETE while its tasks might still run"
WITHIN_TIMEOUT = "completed within the timeout"
TIMED_OUT = "timed out"

OUTCOMES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "PINNED-ASYNC": (PENDING, COMPLETE_EARLY),
        "PINNED-SOURCE-WINDOW": (SOURCE_AT_CALL, SOURCE_CHANGED),
        "STREAM-UNORDERED": (EARLIER_LAST, LATER_LAST),
        "STREAM-QUERY": (QUERY_NOT_READY, QUERY_COMPLETE),
        "SYNC-TIMEOUT": (WITHIN_TIMEOUT, TIMED_OUT),
        "COUNT-ZERO": (ACCEPTED, REJECTED),
        "STREAM-FOREIGN-DEVICE": (ACCEPTED, REJECTED),
    }
)
"""The allowed outcomes of the requirements about timing and nondeterminism, and of
those whose subject is a choice the profile leaves open; the report says which were
seen.  (Other requirements with an open check record theirs too, as ACCEPTED and
REJECTED, without a report line.)"""

BRANCH_NAMES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"SYNC-TIMEOUT": (WITHIN_TIMEOUT, TIMED_OUT)}
)
"""How the two ends of an open check are called, where not ACCEPTED / REJECTED."""


HOST_KINDS = ("pinned", "pageable", "registered", "unknown")
"""The kinds of host memory a copy's host side (the source of a copy to a symbol, the
destination of a copy from one) lies in, as the model knows it at the call: aclrtMallocHost
memory; memory the suite allocated as pageable; pageable memory whose start lies in a live
aclrtHostRegister registration; memory the model does not know (not the suite's own, freed,
or device memory)."""


class CopyShape(NamedTuple):
    """The values of one successful copy that a backend's data path may depend on."""

    kind: str
    """One of ``HOST_KINDS``."""
    nbytes: int
    """The copy's count (bytes)."""
    odd_offset: bool
    """The symbol offset is odd."""
    odd_host: bool
    """The host address (source or destination) is odd."""


@dataclass
class Extent:
    """What the checks of one requirement rested on, for the copies of one kind of host
    memory: a few numbers, however many copies."""

    copies: int = 0
    """Judgements of a copy of this kind under the requirement (a copy read twice counts
    twice)."""
    smallest: int = 0
    largest: int = 0
    odd_offset: bool = False
    odd_host: bool = False

    def add(self, shape: CopyShape) -> None:
        n = shape.nbytes
        if self.copies == 0:
            self.smallest = self.largest = n
        elif n < self.smallest:
            self.smallest = n
        elif n > self.largest:
            self.largest = n
        self.copies += 1
        if shape.odd_offset:
            self.odd_offset = True
        if shape.odd_host:
            self.odd_host = True

    def merge(self, other: Extent) -> None:
        if other.copies == 0:
            return
        if self.copies == 0:
            self.smallest, self.largest = other.smallest, other.largest
        else:
            self.smallest = min(self.smallest, other.smallest)
            self.largest = max(self.largest, other.largest)
        self.copies += other.copies
        self.odd_offset |= other.odd_offset
        self.odd_host |= other.odd_host

    def to_json(self) -> dict[str, Any]:
        return {
            "copies": self.copies,
            "smallest": self.smallest,
            "largest": self.largest,
            "odd_offset": self.odd_offset,
            "odd_host": self.odd_host,
        }

    def to_row(self) -> list[int]:
        """The compact form a test's tally keeps in results.json (one per requirement and
        kind of every test): [copies, smallest, largest, odd_offset, odd_host]."""
        return [
            self.copies,
            self.smallest,
            self.largest,
            int(self.odd_offset),
            int(self.odd_host),
        ]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | Sequence[int]) -> Extent:
        """From ``to_json``'s form or ``to_row``'s."""
        if isinstance(doc, Mapping):
            return cls(
                int(doc.get("copies", 0)),
                int(doc.get("smallest", 0)),
                int(doc.get("largest", 0)),
                bool(doc.get("odd_offset")),
                bool(doc.get("odd_host")),
            )
        copies, smallest, largest, odd_offset, odd_host = doc
        return cls(int(copies), int(smallest), int(largest), bool(odd_offset), bool(odd_host))


@dataclass
class Tally:
    """Checks and outcomes seen, per requirement (for one test, or summed over a run)."""

    checks: Counter[str] = field(default_factory=Counter)
    seen: dict[str, set[str]] = field(default_factory=dict)
    declined: Counter[str] = field(default_factory=Counter)
    """Masked requirement -> steps not made because they would have put it at stake."""
    set_aside: Counter[str] = field(default_factory=Counter)
    """Masked requirement -> violations of it that were seen and set aside."""
    coverage: dict[str, dict[str, Extent]] = field(default_factory=dict)
    """Requirement -> host memory kind -> what its checks of successful copies rested on."""
    last_shape: tuple[object, CopyShape | None] | None = field(
        default=None, repr=False, compare=False
    )
    """(call, its shape): the shape of the call being judged, worked out once for its
    answer and its effect (not merged, not written)."""

    def check(self, *requirements: str | None) -> None:
        for r in requirements:
            if r:
                self.checks[r] += 1

    def check_copy(self, shape: CopyShape | None, *requirements: str | None) -> None:
        """Checks of ``requirements`` that judged a successful copy of ``shape`` (None: not
        known, counted as ``check`` does)."""
        self.check(*requirements)
        self.cover(shape, *requirements)

    def cover(self, shape: CopyShape | None, *requirements: str | None) -> None:
        """A check of ``requirements`` already counted judged a successful copy of
        ``shape`` too (a read judges the bytes of every copy it shows)."""
        if shape is None:
            return
        coverage = self.coverage
        for r in requirements:
            if r:
                kinds = coverage.get(r)
                if kinds is None:
                    kinds = coverage[r] = {}
                extent = kinds.get(shape.kind)
                if extent is None:
                    kinds[shape.kind] = Extent(
                        1, shape.nbytes, shape.nbytes, shape.odd_offset, shape.odd_host
                    )
                else:
                    extent.add(shape)

    def saw(self, requirement: str, outcome: str) -> None:
        self.seen.setdefault(requirement, set()).add(outcome)

    def branch(self, requirement: str, accepted: bool) -> None:
        """An open check of ``requirement`` went one way."""
        names = BRANCH_NAMES.get(requirement, (ACCEPTED, REJECTED))
        self.saw(requirement, names[0] if accepted else names[1])

    def merge(self, other: Tally) -> None:
        self.checks.update(other.checks)
        for r, s in other.seen.items():
            self.seen.setdefault(r, set()).update(s)
        self.declined.update(other.declined)
        self.set_aside.update(other.set_aside)
        for r, kinds in other.coverage.items():
            mine = self.coverage.setdefault(r, {})
            for k, e in kinds.items():
                mine.setdefault(k, Extent()).merge(e)

    def to_json(self) -> dict[str, Any]:
        return {
            "checks": dict(sorted(self.checks.items())),
            "seen": {r: sorted(s) for r, s in sorted(self.seen.items())},
            "declined": dict(sorted(self.declined.items())),
            "set_aside": dict(sorted(self.set_aside.items())),
            "coverage": {
                r: {k: e.to_row() for k, e in sorted(kinds.items())}
                for r, kinds in sorted(self.coverage.items())
            },
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> Tally:
        ev = cls()
        if not doc:
            return ev
        ev.checks.update({str(k): int(v) for k, v in (doc.get("checks") or {}).items()})
        for r, s in (doc.get("seen") or {}).items():
            ev.seen[str(r)] = {str(x) for x in s}
        ev.declined.update({str(k): int(v) for k, v in (doc.get("declined") or {}).items()})
        ev.set_aside.update({str(k): int(v) for k, v in (doc.get("set_aside") or {}).items()})
        # Absent from the tallies of suites before coverage was kept: no coverage known.
        for r, kinds in (doc.get("coverage") or {}).items():
            ev.coverage[str(r)] = {str(k): Extent.from_json(e) for k, e in kinds.items()}
        return ev

    @classmethod
    def total(cls, parts: Iterable[Tally]) -> Tally:
        out = cls()
        for p in parts:
            out.merge(p)
        return out
