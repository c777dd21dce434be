"""Expectations files: a backend's known failures, kept in the backend's own repository.

One entry per line; a ``#`` that starts a word (at the line's start or after a space,
outside a quoted id) starts a comment::

    # id                                  reason                           link
    STREAM-NULL-DEFAULT                   NULL is rejected, see issue      https://example.org/b/12
    test_pinned.py::test_registered_memory_acts_pinned   no HostRegister yet
    PAGEABLE-BLOCKS in "test_bounds.py::test_writes_at_the_boundaries[async pageable-g_arr1m]"  returns early from 1 MiB copies

An entry names one of:

- a **requirement** ID (``acl-conformance list``);
- a **test** id: the part of a pytest node id from the test file name on
  (``test_kinds.py::test_x[1]``), or a prefix of it ending at ``::`` or ``[``;
- a **requirement found in a test**: ``REQUIREMENT in TEST`` (the word ``in`` between
  them; TEST a test id or prefix as above).

A test id that holds a space (a parametrized id such as ``[async pageable-g_arr1m]``), a
double quote or a ``#`` that starts a word is written in double quotes; inside them
``\\"`` is a double quote and ``\\\\`` a backslash, any other backslash stands for itself
(so Python's ``json.dumps`` of an id writes it; :func:`written` does).  After the id comes
the reason (required, the rest of the line) and, last, a link (http:// or https://,
optional).  A line that cannot be read whole is an error that names the file and line:
an unclosed quote, text glued to a closing quote, an unquoted id cut at a space (a ``[``
left open, or a backslash where a space was meant), a requirement ID that does not exist,
an entry listed twice.  Nothing is ever cut silently.

What an entry means:

- a **requirement found in a test** (the way to list a bug that a test which does not
  carry the requirement finds): in the tests the test id covers, a failure that cites
  the requirement (or could equally be charged to it) is expected.  Those tests do not
  steer around the requirement (it is never masked in them from the start), so they go on
  finding the bug: the test stops at the failure (Hypothesis does not shrink it), counts
  as an expected failure and runs again with it masked, so that its other requirements
  are still decided.  A failure citing anything else is still a failure.  The other
  tests that do not carry the requirement steer around it from the start, as for a
  requirement entry, so that the run's failures do not hang on the order its workers
  take the tests in.  The entry is stale when the tests it covers ran to their end and
  none failed citing the requirement: the gate tells a backend that still has the bug
  (PASS) from one that was fixed (FAIL, stale);
- a **requirement**: a requirement the backend breaks wherever it is checked.  It is
  *masked* from the start in every test that does not carry it (they steer around it, so
  one bug is one row and costs no test a failure), and in the tests that carry it a
  failure that cites it is expected, as above.  The entry is stale when no test failed
  citing it.  Because the tests that do not carry it steer around it, a failure only
  they can find is never seen with this entry: the entry comes out stale whether the bug
  is there or not.  List such a bug as a requirement found in a test;
- a **test**: that test is expected to fail, whatever it cites.  It runs without
  shrinking; if it passes, that is an unexpected pass and the entry is stale.

An entry that matches no test that ran is reported as unused (a typo, or a test that was
renamed).

A *skips file* (``--acl-skips``) has the same format; its tests are not run at all (a
requirement entry: the tests that check it; a requirement found in a test is not an entry
of a skips file: list the test).  So has a *flakes file* (``--acl-flakes``): a flaky
failure (one whose trace does not fail again when replayed against a fresh backend) of a
listed requirement or test, or of a requirement in a listed test, is accepted by the gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePath

from acl_conformance.reference_impl.catalogue import BY_ID

_REQ_LIKE = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+")
_LINK = re.compile(r"https?://")
IN = "in"
"""The word between a requirement and the test it is found in."""


EXPECTATIONS = "expectations file"
SKIPS = "skips file"
FLAKES = "flakes file"
"""What a file of this format is, as its errors name it."""

_QUOTE_HINT = 'write an id that holds a space in double quotes: "test_a.py::test_x[a b]"'


class ExpectationsError(Exception):
    """A malformed expectations file; the message names the file and line."""


@dataclass(frozen=True)
class Entry:
    key: str
    """The entry as the reports name it, as the file takes it: the requirement ID, the
    test id, or ``REQUIREMENT in TEST`` (an id with a space in double quotes)."""
    reason: str
    link: str | None
    line: int
    requirement: str = ""
    """The requirement it names (a requirement entry, or one found in a test); "" for a test."""
    test: str = ""
    """The test id (or prefix) it names (a test entry, or a requirement found in a test);
    "" for a requirement entry."""

    @property
    def is_requirement(self) -> bool:
        """A requirement entry (wherever the requirement is checked)."""
        return bool(self.requirement) and not self.test

    @property
    def is_found_in_test(self) -> bool:
        """A requirement found in a test (``REQUIREMENT in TEST``)."""
        return bool(self.requirement) and bool(self.test)

    @property
    def target(self) -> str:
        """What the entry lists, as the results document names it: ``requirement`` for a
        requirement entry, ``test`` for a test or a requirement found in a test (its
        ``requirement`` says which)."""
        return "requirement" if self.is_requirement else "test"

    def covers(self, nodeid: str) -> bool:
        """Does the entry's test id cover this test (itself, or a prefix of its id ending
        at ``::`` or ``[``)?"""
        return bool(self.test) and covers(self.test, short_id(nodeid))

    def describe(self) -> str:
        return f"{self.key}: {self.reason}" + (f" ({self.link})" if self.link else "")


def covers(key: str, sid: str) -> bool:
    """Does test id (or prefix) ``key`` cover the test whose id is ``sid``?"""
    return sid == key or sid.startswith(key + "::") or sid.startswith(key + "[")


def id_from_file(file: str | PurePath, name: str) -> str:
    """The test id of expectations files and reports: the name of the test's file,
    whatever directory pytest saw it in, then the test's name in that file
    (``test_kinds.py::test_x[1]``)."""
    return f"{PurePath(file).name}::{name}"


def short_id(nodeid: str) -> str:
    """:func:`id_from_file` of a test known by its node id."""
    path, sep, rest = nodeid.partition("::")
    return id_from_file(path, rest) if sep else PurePath(path).name


def written(test_id: str) -> str:
    """A test id as an expectations file takes it: as it is, or in double quotes when it
    holds a space, a double quote or a ``#`` that would start a comment."""
    if test_id and not re.search(r'[\s"]|^#', test_id) and not test_id.endswith("\\"):
        return test_id
    return '"' + test_id.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class _Word:
    text: str
    quoted: bool
    end: int
    """Where the word ends in its line."""


def _word(line: str, start: int, where: str) -> _Word | None:
    """The word of ``line`` from ``start`` on (spaces first skipped): a double-quoted
    string, or the text up to the next space; None at the line's end."""
    i = start
    while i < len(line) and line[i].isspace():
        i += 1
    if i == len(line):
        return None
    if line[i] != '"':
        j = i
        while j < len(line) and not line[j].isspace():
            j += 1
        return _Word(line[i:j], False, j)
    out: list[str] = []
    j = i + 1
    while j < len(line):
        c = line[j]
        if c == "\\" and j + 1 < len(line) and line[j + 1] in '"\\':
            out.append(line[j + 1])
            j += 2
            continue
        if c == '"':
            if j + 1 < len(line) and not line[j + 1].isspace():
                raise ExpectationsError(
                    f"{where}: text right after the closing quote of "
                    f"{line[i : j + 1]!r} (put a space between the id and the reason)"
                )
            return _Word("".join(out), True, j + 1)
        out.append(c)
        j += 1
    raise ExpectationsError(f"{where}: the quote that opens {line[i:]!r} is never closed")


def _uncommented(text: str) -> str:
    """``text`` up to a ``#`` that starts a word (a comment)."""
    m = re.search(r"(^|\s)#", text)
    return text[: m.start()] if m else text


def _check_test_id(word: _Word, where: str, role: str) -> None:
    """A test id that was cut where it should not have been is an error."""
    text = word.text
    if not text.startswith("test_"):
        raise ExpectationsError(
            f"{where}: {text!r} is not a test id (test_<file>.py::<test>){role}"
        )
    if word.quoted:
        return
    if text.count("[") > text.count("]") or text.endswith("\\"):
        raise ExpectationsError(
            f"{where}: {text!r} is cut at a space (a backslash does not join words here): "
            + _QUOTE_HINT
        )
    if '"' in text:
        raise ExpectationsError(
            f"{where}: {text!r} holds a quote: write the whole id in double quotes"
        )


def _check_requirement(key: str, where: str) -> None:
    if key not in BY_ID:
        raise ExpectationsError(
            f"{where}: {key!r} is not a requirement ID (see 'acl-conformance list')"
        )


def _parse_line(raw: str, n: int, source: str, what: str) -> Entry | None:
    """The entry on line ``n`` (None for a blank line or a comment)."""
    where = f"{what} {source}, line {n}"
    if not raw.strip() or raw.lstrip().startswith("#"):
        return None
    first = _word(raw, 0, where)
    assert first is not None  # the line is not blank
    requirement, test, end = "", "", first.end
    if _REQ_LIKE.fullmatch(first.text):
        _check_requirement(first.text, where)
        requirement = first.text
        # The next word, as plain text: a reason may hold quotes of its own.
        scope = re.match(r"\s+(\S+)", raw[end:])
        if scope is not None and scope.group(1) == IN:
            target = _word(raw, end + scope.end(), where)
            if target is None:
                raise ExpectationsError(
                    f"{where}: {requirement!r} in what? (REQUIREMENT in TEST reason)"
                )
            if target.quoted or target.text.startswith("test_"):
                _check_test_id(target, where, "")
                if what == SKIPS:
                    raise ExpectationsError(
                        f"{where}: a skips file lists tests or requirements, not a requirement "
                        f"in a test: list the test alone ({written(target.text)})"
                    )
                test, end = target.text, target.end
            elif "::" in target.text or target.text.endswith(".py"):
                _check_test_id(target, where, " after 'in'")
            # else a reason that begins with the word "in" ("in progress")
    else:
        if not first.text.startswith("test_"):
            raise ExpectationsError(
                f"{where}: {first.text!r} is neither a requirement ID nor a test id "
                "(test_<file>.py::<test>)"
            )
        _check_test_id(first, where, "")
        test = first.text
    words = _uncommented(raw[end:]).split()
    link = words[-1] if words and _LINK.match(words[-1]) else None
    reason = " ".join(words[:-1] if link else words)
    # As it would be written: every report that names the entry can be pasted back.
    key = written(test) if test else requirement
    key = f"{requirement} {IN} {key}" if test and requirement else key
    if not reason:
        why = {EXPECTATIONS: "it is expected to fail", FLAKES: "it is flaky"}.get(
            what, "it is listed"
        )
        raise ExpectationsError(f"{where}: {key!r} has no reason (write why {why})")
    return Entry(key, reason, link, n, requirement, test)


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
        """The entries of ``text``; the first line that cannot be read whole is an
        :class:`ExpectationsError` naming ``source`` and the line."""
        entries: list[Entry] = []
        seen: dict[str, int] = {}
        for n, raw in enumerate(text.splitlines(), 1):
            entry = _parse_line(raw, n, source, what)
            if entry is None:
                continue
            if entry.key in seen:
                raise ExpectationsError(
                    f"{what} {source}, line {n}: {entry.key!r} is listed twice "
                    f"(first on line {seen[entry.key]})"
                )
            seen[entry.key] = n
            entries.append(entry)
        return cls(entries, source)

    def match(self, nodeid: str) -> Entry | None:
        """The test entry covering a test, if any (not a requirement found in a test: that
        one expects a failure of its requirement only, see :meth:`found_in`)."""
        for e in self.entries:
            if e.test and not e.requirement and e.covers(nodeid):
                return e
        return None

    def found_in(self, nodeid: str) -> dict[str, Entry]:
        """The entries ``REQUIREMENT in TEST`` that cover a test, by requirement (the first
        listed, when two cover it)."""
        out: dict[str, Entry] = {}
        for e in self.entries:
            if e.is_found_in_test and e.covers(nodeid):
                out.setdefault(e.requirement, e)
        return out

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
