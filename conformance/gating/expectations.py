"""Expectations files: a backend's known failures, kept in the backend's own repository.

One entry per line; ``#`` starts a comment::

    # id                                  reason                           link
    STREAM-NULL-DEFAULT                   NULL is rejected, see issue      https://example.org/b/12
    test_pinned.py::test_registered_memory_acts_pinned   no HostRegister yet

The id is a requirement ID or a test id: the part of a pytest node id from the
test file name on (``test_kinds.py::test_x[1]``), or a prefix of it ending at
``::`` or ``[``.  A reason is required; a link (http:// or https://) is optional.

What an entry means:

- a **requirement**: a failure that cites it is expected.  The test stops at
  that failure (Hypothesis does not shrink it) and counts as an expected
  failure; a failure of the same test that cites another requirement is still
  a failure.  The entry is stale when no test fails citing it;
- a **test**: that test is expected to fail, whatever it cites.  It runs without
  shrinking; if it passes, that is an unexpected pass and the entry is stale.

An entry that matches no test that ran is reported as unused (a typo, or a
test that was renamed).

A *skips file* (``--acl-skips``) has the same format; its tests are not run at
all (a requirement entry: the tests that check it).  So has a *flakes file*
(``--acl-flakes``): a flaky failure (one whose trace does not fail again when replayed
against a fresh backend) of a listed requirement or test is accepted by the gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePath

from acl_conformance.reference_impl.catalogue import BY_ID

_REQ_LIKE = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+")


EXPECTATIONS = "expectations file"
SKIPS = "skips file"
FLAKES = "flakes file"
"""What a file of this format is, as its errors name it."""


class ExpectationsError(Exception):
    """A malformed expectations file; the message names the file and line."""


@dataclass(frozen=True)
class Entry:
    key: str
    reason: str
    link: str | None
    line: int

    @property
    def is_requirement(self) -> bool:
        return bool(_REQ_LIKE.fullmatch(self.key))

    def describe(self) -> str:
        return f"{self.key}: {self.reason}" + (f" ({self.link})" if self.link else "")


def id_from_file(file: str | PurePath, name: str) -> str:
    """The test id of expectations files and reports: the name of the test's file,
    whatever directory pytest saw it in, then the test's name in that file
    (``test_kinds.py::test_x[1]``)."""
    return f"{PurePath(file).name}::{name}"


def short_id(nodeid: str) -> str:
    """:func:`id_from_file` of a test known by its node id."""
    path, sep, rest = nodeid.partition("::")
    return id_from_file(path, rest) if sep else PurePath(path).name


@dataclass
class Expectations:
    entries: list[Entry] = field(default_factory=list)
    source: str = ""

    @classmethod
    def empty(cls) -> Expectations:
        return cls()

    @classmethod
    def load(cls, path: str | Path, what: str = EXPECTATIONS) -> Expectations:
        """Read and parse the file at ``path``; ``what`` names it in errors."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ExpectationsError(f"{what} {p}: cannot be read ({exc.strerror or exc})") from None
        except UnicodeDecodeError as exc:
            raise ExpectationsError(
                f"{what} {p}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})"
            ) from None
        return cls.parse(text, str(p), what)

    @classmethod
    def parse(
        cls, text: str, source: str = "<expectations>", what: str = EXPECTATIONS
    ) -> Expectations:
        entries: list[Entry] = []
        seen: dict[str, int] = {}
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            key, _, rest = line.partition(" ")
            words = rest.split()
            link = words[-1] if words and re.match(r"https?://", words[-1]) else None
            reason = " ".join(words[:-1] if link else words)
            where = f"{what} {source}, line {n}"
            if not reason:
                why = {EXPECTATIONS: "it is expected to fail", FLAKES: "it is flaky"}.get(
                    what, "it is listed"
                )
                raise ExpectationsError(f"{where}: {key!r} has no reason (write why {why})")
            if _REQ_LIKE.fullmatch(key) and key not in BY_ID:
                raise ExpectationsError(
                    f"{where}: {key!r} is not a requirement ID (see 'acl-conformance list')"
                )
            if not _REQ_LIKE.fullmatch(key) and not key.startswith("test_"):
                raise ExpectationsError(
                    f"{where}: {key!r} is neither a requirement ID nor a test id (test_<file>.py::<test>)"
                )
            if key in seen:
                raise ExpectationsError(
                    f"{where}: {key!r} is listed twice (first on line {seen[key]})"
                )
            seen[key] = n
            entries.append(Entry(key, reason, link, n))
        return cls(entries, source)

    def match(self, nodeid: str) -> Entry | None:
        """The test-id entry covering a test, if any."""
        sid = short_id(nodeid)
        for e in self.entries:
            if e.is_requirement:
                continue
            if sid == e.key or sid.startswith(e.key + "::") or sid.startswith(e.key + "["):
                return e
        return None

    def match_test(self, nodeid: str, requirements: list[str]) -> Entry | None:
        """The entry covering a test by its id or by a requirement it checks (how a skips
        file lists tests), if any."""
        by_requirement = self.requirements()
        return self.match(nodeid) or next(
            (by_requirement[r] for r in requirements if r in by_requirement), None
        )

    def requirements(self) -> dict[str, Entry]:
        """The requirement entries, by requirement ID."""
        return {e.key: e for e in self.entries if e.is_requirement}
