"""Expectations files: parsing, matching, stale entries, errors that name the line."""

from __future__ import annotations

import pytest

from acl_conformance.conformance.gating.expectations import SKIPS
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import ExpectationsError
from acl_conformance.conformance.gating.expectations import short_id

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
