"""Start an expectations file from a first run of the suite (one made without one)::

    acl-conformance run --adapter mybackend --mode ci --report-dir first
    python3 -m acl_conformance.conformance.gating.starter first > expectations.txt

Reads the run's ``results.json`` (every failure of every test) and ``report.json``
(each requirement's status) from the report folder, and writes one entry per line:

- each failure a test found (a wrong answer, flaky or not) becomes ``REQUIREMENT in
  TEST``: the requirement the failure cites, in the test that found it.  Not a
  requirement entry: that would mask the requirement from the start in the tests that do
  not carry it, so a bug only such a test finds would never be seen again and the entry
  would come out stale whether the bug is there or not;
- a requirement whose row is ``crash`` or ``timeout`` becomes a requirement entry (the
  backend died or hung in a test that carries it; a hang is better listed in a skips
  file, which costs no call limit);
- a requirement left ``unknown`` is written as a comment, with why: an undecided
  requirement is not a known failure.  It usually follows from another failure (its
  tests were declined, or cut short); decide, then uncomment the line, fix what stops
  its tests, or list those tests in a skips file.

The reasons say what the first run saw; replace them with your own and add links to
your issue tracker.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from acl_conformance.reports.status import Status

from .expectations import written

_FOUND = (Status.FAIL, Status.FLAKY)
"""The failures that become ``REQUIREMENT in TEST``: wrong answers (a crash or a hang
charges its test's requirements, not one)."""


def _first_line(message: object, limit: int = 100) -> str:
    """A failure's message as a reason: its first line, without the requirement in
    brackets or a "#", cut to ``limit`` characters."""
    line = str(message or "").strip().split("\n", 1)[0]
    if line.startswith("[") and "] " in line:
        line = line.split("] ", 1)[1]
    line = line.replace("#", "")  # a "#" that starts a word would start a comment
    return line if len(line) <= limit else line[: limit - 3] + "..."


def entries(results: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """The lines of an expectations file that accounts for everything the run found."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    for test in results["results"]:
        for f in test.get("failures") or []:
            requirement = f.get("requirement")
            if f.get("status") not in _FOUND or not requirement or f.get("expected"):
                continue
            pair = (str(requirement), str(test["suite_id"]))
            if pair in seen:
                continue
            seen.add(pair)
            entry = f"{pair[0]} in {written(pair[1])}"
            lines.append(f"{entry:<60}  first run: {_first_line(f.get('message'))}")
    undecided: list[str] = []
    for row in report["requirements"]:
        if row["status"] in (Status.CRASH, Status.TIMEOUT):
            test = (row.get("counterexample") or {}).get("test") or "the first run"
            why = _first_line(row.get("reason")) or f"first seen in {test}"
            lines.append(f"{row['id']:<60}  first run: {row['status']}: {why}")
        elif row["status"] == Status.UNKNOWN:
            undecided.append(f"# {row['id']:<58}  unknown: {row.get('reason') or 'undecided'}")
    if undecided:
        lines += [
            "",
            "# Left undecided by the first run: not known failures.  Most follow from a",
            "# failure above (their tests were declined or cut short); decide each one: fix",
            "# what stops its tests, list those tests in a skips file, or uncomment it.",
            *undecided,
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the expectations file for the report folder named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write(
            "usage: python3 -m acl_conformance.conformance.gating.starter REPORT_DIR\n"
        )
        return 2
    folder = Path(args[0])
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{folder}: not the report folder of a run ({exc})\n")
        return 2
    sys.stdout.write(
        f"# known failures, from the run in {folder.name}: replace each reason with yours\n"
    )
    for line in entries(results, report):
        sys.stdout.write(line.rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
