"""Reports of a run stopped before its end (what finished is decided, the rest is unknown,
not reached; the gate fails) and of flaky failures (neither pass nor fail; a flakes file
lets the gate accept them)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from test_reports import RUN
from test_reports import SUITE
from test_reports import _results
from test_reports import _row
from test_reports import _test
from test_reports import _validate

from acl_conformance import reports
from acl_conformance.conformance.gating import results

SELECTED = ["KIND-ACCEPTED", "KIND-REJECTED", "BOUNDS-END-EXACT", "EFFECT-BYTES"]


def _collected(*tests: tuple[str, list[str]], skipped: tuple[str, ...] = ()) -> list[dict]:
    return [
        {"nodeid": sid, "suite_id": sid, "requirements": reqs, "skipped": sid in skipped}
        for sid, reqs in tests
    ]


def _stopped(doc: dict[str, Any], collected: list[dict] | None) -> dict[str, Any]:
    doc["interrupted"] = "SIGTERM after 9 s"
    doc["collected"] = collected
    return doc


def test_a_stopped_run_decides_what_finished_and_leaves_the_rest_not_reached() -> None:
    finished = [
        _test("t_kind", "pass", ["KIND-ACCEPTED"]),
        _test("t_bad", "fail", ["KIND-REJECTED"], failed="KIND-REJECTED"),
        _test("t_bound_a", "pass", ["BOUNDS-END-EXACT"]),
    ]
    collected = _collected(
        ("t_kind", ["KIND-ACCEPTED"]),
        ("t_bad", ["KIND-REJECTED"]),
        ("t_bound_a", ["BOUNDS-END-EXACT"]),
        ("t_bound_b", ["BOUNDS-END-EXACT", "EFFECT-BYTES"]),
        ("t_profile_only", ["KIND-ACCEPTED"]),
    )
    collected[-1]["skipped"] = True  # another profile's: never to run, so never missed
    report = reports.build(_stopped(_results(finished, SELECTED), collected), SUITE, RUN)
    _validate(report)

    assert _row(report, "KIND-ACCEPTED")["status"] == "pass"  # every test of it finished
    assert _row(report, "KIND-REJECTED")["status"] == "fail"  # a failure seen stands
    for rid in ("BOUNDS-END-EXACT", "EFFECT-BYTES"):
        row = _row(report, rid)
        assert row["status"] == "unknown", rid
        assert row["reason"].startswith("not reached: t_bound_b did not finish"), row["reason"]
        assert "SIGTERM after 9 s" in row["reason"]
    assert report["run"]["interrupted"] == "SIGTERM after 9 s"
    assert report["run"]["tests_collected"] == 5 and report["run"]["tests"] == 3
    assert report["gate"]["result"] == "fail"
    assert any("did not reach its end" in r for r in report["gate"]["reasons"])
    assert report["verdict"] == "not conformant"
    assert report["verdict_headline"].startswith("NOT CONFORMANT (interrupted")

    # the same finished tests, from a run that reached its end: no unknown row
    whole = reports.build(_results(finished, ["KIND-ACCEPTED", "BOUNDS-END-EXACT"]), SUITE, RUN)
    # (KIND-REJECTED was not asked about, but a failure charged to it is reported)
    assert {r["id"]: r["status"] for r in whole["requirements"]} == {
        "KIND-ACCEPTED": "pass",
        "KIND-REJECTED": "fail",
        "BOUNDS-END-EXACT": "pass",
    }
    assert whole["run"]["interrupted"] is None


def test_a_run_stopped_before_it_knew_its_tests_decides_only_what_it_saw_fail() -> None:
    finished = [
        _test("t_kind", "pass", ["KIND-ACCEPTED"]),
        _test("t_bad", "fail", ["KIND-REJECTED"], failed="KIND-REJECTED"),
    ]
    report = reports.build(_stopped(_results(finished, SELECTED), None), SUITE, RUN)
    assert _row(report, "KIND-REJECTED")["status"] == "fail"
    row = _row(report, "KIND-ACCEPTED")
    assert row["status"] == "unknown" and row["reason"].startswith("not reached")
    assert report["run"]["tests_collected"] is None


def test_every_rendering_says_the_run_was_stopped(tmp_path: Path) -> None:
    finished = [_test("t_kind", "pass", ["KIND-ACCEPTED"])]
    collected = _collected(("t_kind", ["KIND-ACCEPTED"]), ("t_more", ["KIND-ACCEPTED"]))
    report = reports.build(_stopped(_results(finished, ["KIND-ACCEPTED"]), collected), SUITE, RUN)
    reports.write(report, tmp_path)
    _validate(json.loads((tmp_path / "report.json").read_text()))
    assert (
        "Interrupted: the run was stopped (SIGTERM after 9 s); 1 of 2 tests"
        in (tmp_path / "report.md").read_text()
    )
    assert "Interrupted: the run was stopped" in (tmp_path / "report.html").read_text()
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    stopped = [c for c in suite.iter("testcase") if c.get("name") == "the run reached its end"]
    assert len(stopped) == 1 and stopped[0].find("failure") is not None
    assert int(suite.get("failures") or 0) >= 2  # the run, and the requirement not reached


def test_the_journal_keeps_what_finished(tmp_path: Path) -> None:
    path = results.journal_path(tmp_path / "results.json")
    journal = results.Journal(path)
    header = {
        k: v
        for k, v in _results([], SELECTED).items()
        if k
        in (
            "adapter",
            "adapter_options",
            "profile",
            "hypothesis_profile",
            "seed",
            "examples",
            "workers",
            "started",
            "selected",
            "expectations",
            "flakes",
        )
    }
    journal.write("header", header)
    journal.write("backend", {"name": "sim", "version": "sim 9", "capabilities": {"devices": 2}})
    journal.write("record", _test("t_kind", "pass", ["KIND-ACCEPTED"]))
    journal.close()
    with path.open("a") as f:
        f.write('{"record": {"nodeid": "cut sh')  # the line a kill cut in half
    doc = results.from_journal(path, 12.0)
    assert doc is not None
    assert [t["suite_id"] for t in doc["results"]] == ["t_kind"]
    assert doc["backend_version"] == "sim 9" and doc["duration_s"] == 12.0
    assert results.from_journal(tmp_path / "missing.jsonl", 1.0) is None


def _flaky(sid: str, reqs: list[str], failed: str, **kw: Any) -> dict:
    t = _test(sid, "flaky", reqs, failed=failed, **kw)
    t["failures"][0]["status"] = "flaky"
    t["failures"][0]["replay"] = {"reproduced": False, "broken": [], "trace_file": "r.json"}
    t["failures"][0]["flake"] = kw.get("flake")
    return t


def _with_flakes(doc: dict[str, Any], *keys: str) -> dict[str, Any]:
    doc["flakes"] = {
        "file": "flakes.txt",
        "entries": [
            {"key": k, "target": "test" if k.startswith("t") else "requirement", "reason": "timing"}
            for k in keys
        ],
    }
    return doc


def test_a_failure_that_does_not_replay_is_flaky_and_the_flakes_file_accepts_it(
    tmp_path: Path,
) -> None:
    tests = [
        _flaky("t_once", ["EFFECT-BYTES"], "EFFECT-BYTES"),
        _test("t_kind", "pass", ["KIND-ACCEPTED"]),
    ]
    selected = ["EFFECT-BYTES", "KIND-ACCEPTED"]
    report = reports.build(_results(tests, selected), SUITE, RUN)
    _validate(report)
    row = _row(report, "EFFECT-BYTES")
    assert row["status"] == "flaky" and "did not fail again" in row["reason"]
    assert row["counterexample"]["replay"]["reproduced"] is False
    assert report["summary"]["flaky"] == 1
    assert report["gate"]["result"] == "fail" and report["verdict"] == "not conformant"

    listed = reports.build(_with_flakes(_results(tests, selected), "EFFECT-BYTES"), SUITE, RUN)
    _validate(listed)
    assert _row(listed, "EFFECT-BYTES")["status"] == "flaky"
    assert _row(listed, "EFFECT-BYTES")["flake"]["key"] == "EFFECT-BYTES"
    assert listed["gate"]["result"] == "pass"
    assert listed["expectations"]["flakes"]["accepted"] == ["EFFECT-BYTES"]
    assert listed["verdict"] == "not conformant"  # a flake is not a pass
    reports.write(listed, tmp_path)
    case = next(
        c
        for c in ET.parse(tmp_path / "junit.xml").iter("testcase")
        if c.get("name") == "EFFECT-BYTES"
    )
    assert case.find("skipped") is not None and case.find("failure") is None

    # a flakes entry for another requirement accepts nothing here
    other = reports.build(_with_flakes(_results(tests, selected), "KIND-ACCEPTED"), SUITE, RUN)
    assert other["gate"]["result"] == "fail"


@pytest.mark.parametrize("clear_kind", ["fail", "flaky"])
def test_a_flaky_bug_is_one_row_with_one_status(clear_kind: str) -> None:
    owner = (
        _flaky("t_owner", ["EFFECT-BYTES"], "EFFECT-BYTES")
        if clear_kind == "flaky"
        else _test("t_owner", "fail", ["EFFECT-BYTES"], failed="EFFECT-BYTES")
    )
    again = _test("t_again", "fail", ["EFFECT-BYTES"], failed="EFFECT-BYTES", same_as="t_owner")
    # cites another requirement, and could equally be charged to EFFECT-BYTES
    ambiguous = _test(
        "t_threads",
        "fail",
        ["STREAM-FIFO"],
        failed="STREAM-FIFO",
        also=["EFFECT-BYTES"],
        checks={"STREAM-FIFO": 3},
    )
    ambiguous["failures"][0]["identity"] = "STREAM-FIFO at aclrtMemcpyFromSymbol"
    report = reports.build(
        _results([owner, again, ambiguous], ["EFFECT-BYTES", "STREAM-FIFO"]), SUITE, RUN
    )
    row = _row(report, "EFFECT-BYTES")
    assert row["status"] == clear_kind and row["failures"] == 3
    assert _row(report, "STREAM-FIFO")["status"] == "pass"
