"""Expectations files: parsing, matching, stale entries, errors that name the line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from acl_conformance.conformance.gating import starter
from acl_conformance.conformance.gating.expectations import SKIPS
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import ExpectationsError
from acl_conformance.conformance.gating.expectations import short_id
from acl_conformance.conformance.gating.expectations import written

TEXT = """
# known failures of backend X
KIND-REJECTED          D2H accepted, fix pending     https://example.org/issues/7
test_pinned.py::test_returns_at_once_behind_a_closed_gate   gate unsupported in the driver
test_bounds.py         whole file: bounds not checked yet
"""


def test_parse_and_match() -> None:
    e = Expectations.parse(TEXT, "x.txt")
    assert [x.key for x in e.entries] == [
        "KIND-REJECTED",
        "test_pinned.py::test_returns_at_once_behind_a_closed_gate",
        "test_bounds.py",
    ]
    assert e.entries[0].link == "https://example.org/issues/7"
    assert e.entries[1].link is None and e.entries[1].reason == "gate unsupported in the driver"
    # requirement entries apply to failures, not to tests
    assert e.match("a/b/test_kinds.py::test_other[x]") is None
    assert list(e.requirements()) == ["KIND-REJECTED"]
    assert e.match("../site/suite/test_bounds.py::test_past[g_u8]").key == "test_bounds.py"
    assert e.match("suite/test_pinned.py::test_returns_at_once_behind_a_closed_gate") is not None
    assert e.match("suite/test_pinned.py::test_returns_at_once_behind_a_closed_gate_not") is None
    assert e.match("suite/test_effect.py::test_x") is None


@pytest.mark.parametrize(
    "text,message",
    [
        ("KIND-REJECTED\n", "line 1: 'KIND-REJECTED' has no reason"),
        ("\n\nNOT-A-REQ  reason\n", "line 3: 'NOT-A-REQ' is not a requirement ID"),
        ("foo  reason\n", "line 1: 'foo' is neither a requirement ID nor a test id"),
        (
            "STREAM-FIFO a\nSTREAM-FIFO b\n",
            "line 2: 'STREAM-FIFO' is listed twice (first on line 1)",
        ),
    ],
)
def test_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(ExpectationsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Expectations.parse(text, "f.txt")


def test_unreadable_file(tmp_path) -> None:
    with pytest.raises(ExpectationsError, match="cannot be read"):
        Expectations.load(tmp_path / "missing.txt")


def test_short_id() -> None:
    assert short_id("../../x/suite/test_a.py::T::t[1]") == "test_a.py::T::t[1]"


def test_a_file_that_is_not_utf8_is_an_error_naming_the_byte(tmp_path) -> None:
    path = tmp_path / "exp.txt"
    path.write_bytes(b"KIND-REJECTED  caf\xe9\n")
    with pytest.raises(ExpectationsError, match=r"^expectations file .*: not UTF-8 text \(byte 18"):
        Expectations.load(path)


def test_a_skips_file_is_named_as_such_and_matches_by_requirement_too(tmp_path) -> None:
    with pytest.raises(
        ExpectationsError, match=r"^skips file f.txt, line 1: .*write why it is listed"
    ):
        Expectations.parse("test_a.py::t\n", "f.txt", SKIPS)
    skips = Expectations.parse("KIND-REJECTED  hangs\ntest_b.py  slow\n", "f.txt", SKIPS)
    assert skips.match_test("x/test_a.py::t", ["KIND-REJECTED"]).key == "KIND-REJECTED"
    assert skips.match_test("x/test_b.py::t[1]", []).key == "test_b.py"
    assert skips.match_test("x/test_a.py::t", ["KIND-ACCEPTED"]) is None


SPACED = "test_bounds.py::test_writes_at_the_boundaries[async pageable-g_arr1m]"


def test_a_requirement_found_in_a_test_is_an_entry_of_its_own() -> None:
    e = Expectations.parse(
        f'PAGEABLE-BLOCKS in "{SPACED}"  returns early from 1 MiB copies  https://example.org/34\n'
        "PAGEABLE-BLOCKS in test_pinned.py::test_y  a second test finds it too\n"
        "PAGEABLE-BLOCKS  wherever it is checked\n",
        "f.txt",
    )
    found, other, plain = e.entries
    assert (found.key, found.requirement, found.test) == (
        f'PAGEABLE-BLOCKS in "{SPACED}"',  # as it is written: reports name it so
        "PAGEABLE-BLOCKS",
        SPACED,
    )
    assert found.reason == "returns early from 1 MiB copies"
    assert found.link == "https://example.org/34"
    assert found.is_found_in_test and not found.is_requirement and found.target == "test"
    assert plain.is_requirement and plain.target == "requirement" and not plain.test
    # it expects a failure of its requirement in its tests, not every failure of them,
    # and it is not a requirement entry (those mask the requirement elsewhere)
    assert e.match(f"suite/{SPACED}") is None
    assert list(e.requirements()) == ["PAGEABLE-BLOCKS"]
    assert e.found_in(f"../suite/{SPACED}") == {"PAGEABLE-BLOCKS": found}
    assert e.found_in("suite/test_pinned.py::test_y[x]") == {"PAGEABLE-BLOCKS": other}
    assert e.found_in("suite/test_pinned.py::test_yz") == {}
    # a prefix covers the tests under it, as a test entry's does
    prefix = Expectations.parse("EFFECT-BYTES in test_bounds.py  all of them\n")
    assert set(prefix.found_in(f"x/{SPACED}")) == {"EFFECT-BYTES"}


def test_a_reason_that_begins_with_in_is_still_a_reason() -> None:
    (e,) = Expectations.parse("KIND-REJECTED in progress, see the tracker\n").entries
    assert (e.key, e.reason, e.is_requirement) == (
        "KIND-REJECTED",
        "in progress, see the tracker",
        True,
    )


@pytest.mark.parametrize(
    "test_id",
    [
        SPACED,
        'test_a.py::t[say "hi"]',
        "test_a.py::t[a #b]",
        "test_a.py::t[#b]",
        "test_a.py::t[back\\slash]",
        "test_a.py::t[\\xe9 x]",
        "test_a.py::t[ends in \\]",
        "test_a.py::t[plain]",
    ],
)
def test_every_test_id_can_be_written(test_id: str) -> None:
    """What :func:`written` makes of an id reads back as the id, alone or after ``in``,
    with the reason and link after it."""
    line = f"{written(test_id)}   the reason  https://example.org/1#c2"
    (e,) = Expectations.parse(line).entries
    assert (e.test, e.reason, e.link) == (test_id, "the reason", "https://example.org/1#c2")
    assert e.key == written(test_id)  # what the reports print can be pasted back
    (s,) = Expectations.parse(f"EFFECT-BYTES in {written(test_id)} why # a comment").entries
    assert (s.test, s.requirement, s.reason) == (test_id, "EFFECT-BYTES", "why")
    if " " not in test_id and '"' not in test_id and not test_id.endswith("\\"):
        assert written(test_id) == test_id  # quoted only when it must be


SUITE = ["--pyargs", "acl_conformance.conformance.suite"]


def test_the_suites_own_test_ids_can_all_be_written() -> None:
    """Every id of the suite's tests (363 of them hold a space) reads back whole."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q", *SUITE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ids = [short_id(line) for line in out.splitlines() if "::" in line]
    assert len(ids) > 500 and any(" " in i for i in ids)
    text = "".join(f"{written(i)}  listed\nKIND-REJECTED in {written(i)}  found\n" for i in ids)
    entries = Expectations.parse(text).entries
    assert [e.test for e in entries] == [i for i in ids for _ in (1, 2)]


@pytest.mark.parametrize(
    "line,message",
    [
        # issue 34: a backslash-escaped space was cut there, the rest glued to the reason
        (
            "test_bounds.py::test_x[async\\ pageable-g_arr1m]  reason",
            r"'test_bounds.py::test_x\[async\\\\' is cut at a space .* in double quotes",
        ),
        (
            "test_bounds.py::test_x[async pageable-g_arr1m]  reason",
            r"'test_bounds.py::test_x\[async' is cut at a space",
        ),
        (
            "PAGEABLE-BLOCKS in test_bounds.py::test_x[async pageable]  reason",
            r"'test_bounds.py::test_x\[async' is cut at a space",
        ),
        ('"test_a.py::t[a b]  reason', r"the quote that opens .* is never closed"),
        ('"test_a.py::t[a b]"reason', r"text right after the closing quote"),
        ('test_a.py::t[a"b]  reason', r".* holds a quote: write the whole id in double quotes"),
        ("PAGEABLE-BLOCKS in", r"'PAGEABLE-BLOCKS' in what\?"),
        ("PAGEABLE-BLOCKS in bounds.py::t  reason", r"'bounds.py::t' is not a test id"),
        ("PAGEABLE-BLOCK in test_a.py::t  reason", r"'PAGEABLE-BLOCK' is not a requirement ID"),
        (
            'PAGEABLE-BLOCKS in "test_a.py::t[a b]"',
            r"'PAGEABLE-BLOCKS in \"test_a.py::t\[a b\]\"' has no reason",
        ),
        ('"test_a.py::t[a b]"   # only a comment', r"'\"test_a.py::t\[a b\]\"' has no reason"),
        (
            'EFFECT-BYTES in "test_a.py::t[a b]" x\nEFFECT-BYTES in "test_a.py::t[a b]" y',
            r"'EFFECT-BYTES in \"test_a.py::t\[a b\]\"' is listed twice \(first on line 2\)",
        ),
    ],
)
def test_a_line_that_cannot_be_read_whole_is_an_error_naming_it(line: str, message: str) -> None:
    last = 2 + line.count("\n")  # the header is line 1
    with pytest.raises(
        ExpectationsError, match=rf"^expectations file f.txt, line {last}: " + message
    ):
        Expectations.parse("# header\n" + line + "\n", "f.txt")


def test_a_skips_file_takes_no_requirement_found_in_a_test() -> None:
    with pytest.raises(ExpectationsError, match=r"skips file f.txt, line 1: .*list the test alone"):
        Expectations.parse('EFFECT-BYTES in "test_a.py::t[a b]"  slow\n', "f.txt", SKIPS)


def test_the_starter_lists_failures_in_their_tests_and_leaves_unknown_undecided() -> None:
    """docs/ci.md's starter: a failure becomes ``R in "TEST"`` (once per test), a crash or
    a hang its requirement, an unknown row a comment saying why; what it writes parses."""
    spaced = "test_bounds.py::t[async pageable-g]"
    fail = {"requirement": "EFFECT-BYTES", "also": ["PAGEABLE-BLOCKS"], "status": "fail"}
    results = {
        "results": [
            {"suite_id": spaced, "failures": [{**fail, "message": "[EFFECT-BYTES] lost #22"}]},
            {"suite_id": spaced, "failures": [fail]},  # the same pair: once
            {"suite_id": "test_b.py::t", "failures": [{**fail, "status": "flaky"}]},
            {"suite_id": "test_c.py::t", "failures": [{**fail, "expected": "EFFECT-BYTES"}]},
            {"suite_id": "test_d.py::t", "failures": [{"requirement": None, "status": "crash"}]},
        ]
    }
    report = {
        "requirements": [
            {"id": "EFFECT-BYTES", "status": "fail", "reason": None},
            {"id": "STREAM-QUERY", "status": "timeout", "reason": "aclrtStreamQuery hung"},
            {"id": "STREAM-FIFO", "status": "unknown", "reason": "no check of it ran"},
            {"id": "KIND-REJECTED", "status": "pass", "reason": None},
        ]
    }
    lines = starter.entries(results, report)
    listed = Expectations.parse("\n".join(lines), "generated").entries
    assert [(e.requirement, e.test) for e in listed] == [
        ("EFFECT-BYTES", spaced),
        ("EFFECT-BYTES", "test_b.py::t"),
        ("STREAM-QUERY", ""),
    ]
    assert listed[0].reason == "first run: lost 22"
    assert lines[0].startswith(f'EFFECT-BYTES in "{spaced}"')
    assert "# STREAM-FIFO" in "\n".join(lines) and "no check of it ran" in lines[-1]


def test_a_reason_may_hold_quotes() -> None:
    text = 'KIND-REJECTED "D2H" accepted, see "the driver\ntest_a.py::t  says "done"early\n'
    reasons = [e.reason for e in Expectations.parse(text).entries]
    assert reasons == ['"D2H" accepted, see "the driver', 'says "done"early']
