"""The one status enum: every status a report can show is a member, and the report schema
says the same words."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import pytest

from acl_conformance import reports
from acl_conformance.conformance.command_line import runner
from acl_conformance.reports import aggregate
from acl_conformance.reports import html
from acl_conformance.reports import markdown
from acl_conformance.reports.status import FAILURE_STATUSES
from acl_conformance.reports.status import REQUIREMENT_STATUSES
from acl_conformance.reports.status import SHOWN
from acl_conformance.reports.status import TEST_STATUSES
from acl_conformance.reports.status import Status


def _enum_at(schema: dict[str, Any], *path: str) -> list[str]:
    node: Any = schema["properties"]
    for key in path:
        node = node[key]
    return list(node["enum"])


def test_the_schema_s_status_enums_are_the_enum_s_values() -> None:
    schema = reports.schema()
    requirement = _enum_at(schema, "requirements", "items", "properties", "status")
    test = _enum_at(
        schema, "requirements", "items", "properties", "tests", "items", "properties", "status"
    )
    # (the same words; a JSON Schema enum's order means nothing)
    assert sorted(requirement) == sorted(s.value for s in REQUIREMENT_STATUSES)
    assert sorted(test) == sorted(s.value for s in TEST_STATUSES)
    assert set(requirement) | set(test) == {s.value for s in Status}


def test_every_status_a_report_shows_is_a_member() -> None:
    shown = set(REQUIREMENT_STATUSES)
    for table in (markdown.ICON, html.COLOUR, runner.STATUS_TEXT):
        assert all(isinstance(k, Status) for k in table) and set(table) == shown
    assert set(SHOWN) == shown and len(SHOWN) == len(shown)
    assert set(aggregate.SUMMARY_KEYS) == shown
    assert shown >= aggregate.BAD | aggregate.NOT_MET | aggregate.UNDECIDED_WHEN_STOPPED
    assert set(FAILURE_STATUSES) <= set(TEST_STATUSES)


def test_a_member_is_its_word() -> None:
    """The documents hold the words; a member reads and compares as its word."""
    for s in Status:
        assert s == s.value and str(s) == f"{s}" == s.value and Status(s.value) is s
        assert json.dumps(s) == json.dumps(s.value)
    assert isinstance(Status.PASS, str) and issubclass(Status, Enum)


@pytest.mark.parametrize("status", list(REQUIREMENT_STATUSES))
def test_a_report_of_each_requirement_status_renders(status: Status) -> None:
    """A report whose one requirement has ``status`` renders in every format, and its
    report.json holds the plain word."""
    doc = _results(status)
    report = reports.build(doc, {"name": "s", "version": "0", "commit": "c"}, _RUN)
    (row,) = report["requirements"]
    assert row["status"] == status.value and type(row["status"]) is str
    assert report["summary"][status.value] == 1
    assert markdown.ICON[status] in markdown.render(report)
    assert html.COLOUR[status] in html.render(report)
    assert runner.STATUS_TEXT[status] in runner.summary_table(report)
    assert reports.junit.render(report)


_RUN = {
    "mode": "ci",
    "jobs": 1,
    "command": [],
    "machine": "m",
    "python": "3",
    "hypothesis": "6",
    "pytest": "8",
    "numpy": "1",
}


def _results(status: Status) -> dict[str, Any]:
    """A results document with one requirement whose one test makes it ``status``."""
    test_status, failures, checks = {
        Status.PASS: (Status.PASS, [], 1),
        Status.FAIL: (Status.FAIL, [_failure(Status.FAIL)], 1),
        Status.CRASH: (Status.CRASH, [_failure(Status.CRASH)], 0),
        Status.TIMEOUT: (Status.TIMEOUT, [_failure(Status.TIMEOUT)], 0),
        Status.FLAKY: (Status.FLAKY, [_failure(Status.FLAKY)], 1),
        Status.UNKNOWN: (Status.ERROR, [], 0),
        Status.XFAIL: (Status.XFAIL, [_failure(Status.FAIL, expected="R-1")], 1),
        Status.NOT_SUPPORTED: (Status.NOT_SUPPORTED, [], 0),
    }[status]
    return {
        "schema": "acl-conformance-results/3",
        "adapter": "sim",
        "profile": "spec",
        "requirements": [
            {"id": "R-1", "clause": "c", "level": "MUST", "title": "t", "quote": ["q"]}
        ],
        "results": [
            {
                "nodeid": "t.py::t",
                "suite_id": "t.py::t",
                "status": test_status.value,
                "requirements": ["R-1"],
                "duration_s": 0.1,
                "failures": failures,
                "tally": {"checks": {"R-1": checks}} if checks else {},
                "completed": test_status in (Status.PASS, Status.XFAIL),
                "skip_reason": "not supported: no" if status is Status.NOT_SUPPORTED else None,
            }
        ],
    }


def _failure(status: Status, expected: str | None = None) -> dict[str, Any]:
    return {
        "requirement": "R-1",
        "also": [],
        "identity": "R-1 at a check",
        "status": status.value,
        "expected": expected,
        "same_as": None,
        "calls": ["aclInit(NULL)"],
        "call_count": 1,
        "message": f"[R-1] {status.value}",
    }
