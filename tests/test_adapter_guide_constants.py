"""The adapter guide's constants are the suite's: every number docs/writing-an-adapter.md
gives for an ACL constant is the one reference_impl/constants.py holds, and every constant
there (a module-level integer, a member of one of its enums) is in the guide, so that the
two never drift apart."""

from __future__ import annotations

import re
from enum import IntEnum
from pathlib import Path

from acl_conformance.reference_impl import constants

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "writing-an-adapter.md"
ROW = re.compile(
    r"^\|\s*`(?P<name>[A-Z][A-Z0-9_]+)`\s*\|\s*(?P<value>-?(?:0[xX][0-9a-fA-F]+|\d+))\s*\|"
)


def documented(text: str) -> dict[str, list[int]]:
    """Each constant a table of ``text`` gives a number for: name -> the numbers given."""
    found: dict[str, list[int]] = {}
    for line in text.splitlines():
        m = ROW.match(line.strip())
        if m:
            found.setdefault(m["name"], []).append(int(m["value"], 0))
    return found


def suite_constants() -> dict[str, int]:
    """Every integer constant of reference_impl/constants.py: module-level ints and the
    members of its IntEnums (stream statuses, copy kinds)."""
    out: dict[str, int] = {}
    plain: dict[str, int] = {}
    for name, value in vars(constants).items():
        if isinstance(value, type) and issubclass(value, IntEnum) and value is not IntEnum:
            out |= {m.name: int(m) for m in value}
        elif name.isupper() and type(value) is int:
            plain[name] = value
    # H2D, D2H, DEFAULT: the suite's shorthands for enum members, not names a backend meets
    shorthands = {n for n, v in plain.items() if not n.startswith("ACL_") and v in out.values()}
    return out | {n: v for n, v in plain.items() if n not in shorthands}


def test_the_reading_of_the_tables_can_fail() -> None:
    sample = "| `ACL_X` | 0x10 |\n| `ACL_Y` | 7 | words |\n| not a row |\n`ACL_Z` 3\n"
    assert documented(sample) == {"ACL_X": [16], "ACL_Y": [7]}


def test_the_suite_has_the_constants_an_adapter_needs() -> None:
    """What the guide is checked against is there (errors, kinds, stream statuses)."""
    ours = suite_constants()
    assert {"ACL_SUCCESS", "ACL_MEMCPY_DEFAULT", "ACL_STREAM_STATUS_NOT_READY"} <= set(ours)
    assert set(constants.ERROR_NAMES.values()) <= set(ours)


def test_every_number_in_the_guide_is_the_suite_s() -> None:
    ours = suite_constants()
    wrong = {
        name: values
        for name, values in documented(GUIDE.read_text(encoding="utf-8")).items()
        if name in ours and any(v != ours[name] for v in values)
    }
    assert not wrong, (
        "writing-an-adapter.md gives these numbers, reference_impl/constants.py others: "
        + ", ".join(f"{n} = {vs} (constants.py: {ours[n]})" for n, vs in sorted(wrong.items()))
    )
    unknown = sorted(set(documented(GUIDE.read_text(encoding="utf-8"))) - set(ours))
    assert not unknown, f"writing-an-adapter.md lists constants that constants.py lacks: {unknown}"


def test_every_constant_of_the_suite_is_in_the_guide() -> None:
    missing = sorted(set(suite_constants()) - set(documented(GUIDE.read_text(encoding="utf-8"))))
    assert not missing, (
        "an adapter may meet these, and docs/writing-an-adapter.md (## Constants) does not "
        f"give their numbers: {missing}"
    )
