"""Reports: per-requirement statuses from per-test results, the verdict, the renderers, the schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from acl_conformance import reports
from acl_conformance.conformance import results

jsonschema = pytest.importorskip("jsonschema")

SUITE = {"name": "acl-conformance", "version": "0.1.0", "commit": "unknown", "dirty": None}
RUN = {
    "mode": "ci",
    "jobs": 2,
    "command": ["acl-conformance", "run"],
    "machine": "Linux",
    "python": "3.11",
    "hypothesis": "6",
    "pytest": "9",
    "numpy": "2",
}


def _test(sid: str, status: str, reqs: list[str], failed: str | None = None, **kw: Any) -> dict:
    return {
        "nodeid": sid,
        "suite_id": sid,
        "status": status,
        "phase": "call",
        "requirements": reqs,
        "failed_requirement": failed,
        "also_explained_by": kw.get("also", []),
        "call_count": 3 if failed else None,
        "calls": ["#1 aclrtSetDevice(0)", "#2 aclrtMemcpyToSymbolAsync(...)"] if failed else [],
        "allowed": "any non-zero aclError" if failed else None,
        "observed": "ACL_SUCCESS (0)" if failed else None,
        "message": '<a> & "quoted"' if failed else None,
        "skip_reason": None,
        "expected_failure": kw.get("expected"),
        "trace_file": "t.json" if failed else None,
        "reproduce": "pytest x" if failed else None,
        "duration_s": 0.1,
    }


def _results(tests: list[dict], selected: list[str] | None = None, **exp: Any) -> dict:
    return results.document(
        adapter="sim",
        adapter_options={},
        profile="spec",
        backend_name="sim",
        backend_version="sim 1",
        capabilities={"devices": 2},
        hypothesis_profile="ci",
        seed=None,
        examples=None,
        workers=2,
        started="2026-01-01T00:00:00+00:00",
        duration_s=1.0,
        exitstatus=1,
        results=tests,
        selected=selected or [],
        expectations={"file": exp.get("file"), "entries": exp.get("entries", [])},
    )


def _row(report: dict, rid: str) -> dict:
    return next(r for r in report["requirements"] if r["id"] == rid)


def _validate(report: dict) -> None:
    jsonschema.validate(report, reports.schema(), cls=jsonschema.Draft202012Validator)


def test_statuses_are_the_worst_a_test_says() -> None:
    tests = [
        _test("t_a", "pass", ["KIND-ACCEPTED", "EFFECT-BYTES"]),
        _test("t_b", "fail", ["KIND-REJECTED", "HYGIENE-NO-WRITE"], failed="KIND-REJECTED"),
        _test("t_c", "crash", ["BOUNDS-OVERFLOW"]),
        _test("t_d", "timeout", ["PAGEABLE-BLOCKS"]),
        _test("t_e", "not_supported", ["DEVICE-INSTANCE"]),
        _test("t_f", "xfail", ["STREAM-FIFO"], expected="STREAM-FIFO"),
        _test("t_g", "error", ["STREAM-QUERY"]),
        _test("t_h", "skipped", ["COUNT-ZERO"]),
        _test("t_i", "pass", ["COUNT-ZERO"]),
    ]
    report = reports.build(_results(tests), SUITE, RUN)
    _validate(report)
    assert _row(report, "KIND-ACCEPTED")["status"] == "pass"
    assert _row(report, "KIND-REJECTED")["status"] == "fail"
    # cut short by KIND-REJECTED's failure: what it would have found is unknown
    hyg = _row(report, "HYGIENE-NO-WRITE")
    assert hyg["status"] == "unknown" and hyg["cut_short_by"] == ["KIND-REJECTED"]
    assert _row(report, "BOUNDS-OVERFLOW")["status"] == "crash"
    assert _row(report, "PAGEABLE-BLOCKS")["status"] == "timeout"
    assert _row(report, "DEVICE-INSTANCE")["status"] == "not_supported"
    assert _row(report, "STREAM-FIFO")["status"] == "xfail"
    assert _row(report, "STREAM-QUERY")["status"] == "unknown"
    assert _row(report, "COUNT-ZERO")["status"] == "pass"  # a skipped test says nothing
    # a requirement no test reported on is never a pass
    assert (
        _row(report, "SYNC-TIMEOUT")["status"] == "unknown"
        and not _row(report, "SYNC-TIMEOUT")["tests"]
    )
    c = _row(report, "KIND-REJECTED")["counterexample"]
    assert c["calls"] and c["allowed"] == "any non-zero aclError" and c["trace_file"] == "t.json"
    assert report["verdict"] == "not conformant"
    assert "KIND-REJECTED (MUST): fail" in report["verdict_reasons"]
    assert any("cut short by the failure of KIND-REJECTED" in r for r in report["verdict_reasons"])
    s = report["summary"]
    assert (
        s["total"]
        == len(report["requirements"])
        == sum(
            s[k] for k in ("pass", "fail", "not_supported", "crash", "timeout", "unknown", "xfail")
        )
    )


def test_all_passing_is_conformant_and_a_selection_reports_only_itself() -> None:
    tests = [_test("t_a", "pass", ["KIND-ACCEPTED"]), _test("t_b", "pass", ["KIND-REJECTED"])]
    report = reports.build(_results(tests, selected=["KIND-ACCEPTED", "KIND-REJECTED"]), SUITE, RUN)
    _validate(report)
    assert [r["id"] for r in report["requirements"]] == ["KIND-ACCEPTED", "KIND-REJECTED"]
    assert report["verdict"] == "conformant" and report["verdict_reasons"] == []


def test_an_ambiguous_failure_is_charged_to_the_clear_one() -> None:
    # A rejected end-exact copy on the NULL stream breaks the bound or the default
    # stream; a rejected end-exact copy on a stream of its own breaks the bound.
    ambiguous = _test(
        "t_null",
        "fail",
        ["BOUNDS-END-EXACT", "EFFECT-BYTES"],
        failed="STREAM-NULL-DEFAULT",
        also=["BOUNDS-END-EXACT"],
    )
    clear = _test("t_bound", "fail", ["BOUNDS-END-EXACT"], failed="BOUNDS-END-EXACT")
    null_ok = _test("t_stream", "pass", ["STREAM-NULL-DEFAULT"])
    selected = ["BOUNDS-END-EXACT", "EFFECT-BYTES", "STREAM-NULL-DEFAULT"]

    report = reports.build(_results([ambiguous, clear, null_ok], selected), SUITE, RUN)
    _validate(report)
    bound = _row(report, "BOUNDS-END-EXACT")
    assert bound["status"] == "fail" and bound["cut_short_by"] == []
    assert {t["nodeid"]: t["status"] for t in bound["tests"]} == {
        "t_null": "fail",
        "t_bound": "fail",
    }
    assert bound["counterexample"]["test"] == "t_bound"  # the failure that cites it
    assert _row(report, "STREAM-NULL-DEFAULT")["status"] == "pass"
    assert [t["nodeid"] for t in _row(report, "STREAM-NULL-DEFAULT")["tests"]] == ["t_stream"]
    effect = _row(report, "EFFECT-BYTES")
    assert effect["status"] == "unknown" and effect["cut_short_by"] == ["BOUNDS-END-EXACT"]

    # Alone, nothing else explains it: the cited requirement fails.
    report = reports.build(_results([ambiguous, null_ok], selected), SUITE, RUN)
    assert _row(report, "STREAM-NULL-DEFAULT")["status"] == "fail"
    assert _row(report, "BOUNDS-END-EXACT")["status"] == "unknown"


def test_a_run_that_checked_nothing_is_not_conformant() -> None:
    report = reports.build(_results([], selected=["NO-SUCH-REQUIREMENT"]), SUITE, RUN)
    assert report["requirements"] == []
    assert report["verdict"] == "not conformant"
    assert report["verdict_reasons"] == ["no requirement was checked"]


def _entry(key: str, kind: str) -> dict:
    return {"key": key, "kind": kind, "reason": "r", "link": None}


def test_stale_and_unused_entries() -> None:
    tests = [
        _test("test_a.py::t", "xpass", ["KIND-ACCEPTED"], expected="test_a.py::t"),
        _test("test_b.py::t", "pass", ["KIND-REJECTED"]),
        _test(
            "test_c.py::t", "xfail", ["BOUNDS-OVERFLOW", "EFFECT-BYTES"], expected="BOUNDS-OVERFLOW"
        ),
        _test("test_d.py::t", "pass", ["EFFECT-BYTES"]),
    ]
    tests[2]["failed_requirement"] = "BOUNDS-OVERFLOW"
    doc = _results(
        tests,
        file="exp.txt",
        entries=[
            _entry("test_a.py::t", "test"),  # listed test passed: stale
            _entry("KIND-REJECTED", "requirement"),  # nothing failed citing it: stale
            _entry("BOUNDS-OVERFLOW", "requirement"),  # failed as expected
            _entry("STREAM-FIFO", "requirement"),  # no test of it ran: unused
            _entry("test_zz.py::nothing", "test"),  # matches nothing: unused
        ],
    )
    report = reports.build(doc, SUITE, RUN)
    _validate(report)
    assert _row(report, "KIND-ACCEPTED")["status"] == "pass"
    assert _row(report, "BOUNDS-OVERFLOW")["status"] == "xfail"
    # the expected failure stopped test_c: it says nothing of EFFECT-BYTES
    assert _row(report, "EFFECT-BYTES")["status"] == "pass"
    assert report["expectations"]["unexpected_passes"] == [
        "KIND-REJECTED (entry KIND-REJECTED): no test failed citing it",
        "test_a.py::t (entry test_a.py::t)",
    ]
    assert report["expectations"]["unused"] == ["STREAM-FIFO", "test_zz.py::nothing"]
    assert report["verdict"] == "not conformant"
    assert sum("stale" in r for r in report["verdict_reasons"]) == 2


def test_renderings_escape_and_fetch_nothing(tmp_path) -> None:
    tests = [_test("t_b", "fail", ["KIND-REJECTED"], failed="KIND-REJECTED")]
    report = reports.build(_results(tests), SUITE, RUN)
    paths = reports.write(report, tmp_path)
    assert [p.name for p in paths] == ["report.json", "report.md", "report.html"]
    _validate(json.loads((tmp_path / "report.json").read_text()))
    html = (tmp_path / "report.html").read_text()
    assert '<a> & "quoted"' not in html and "&lt;a&gt; &amp; &quot;quoted&quot;" in html
    # self-contained: no scripts, no stylesheets or images from anywhere
    assert not re.search(r"<(script|link|img|iframe)\b", html)
    assert not re.search(r"<[^>]*\b(src|href)\s*=", html)
    assert html.count("<tr style=") == len(report["requirements"])
    assert "<details open>" in html  # the failing row opens on its counterexample
    md = (tmp_path / "report.md").read_text()
    assert "| KIND-REJECTED | MUST | kinds | **FAIL** |" in md
    assert "## Counterexamples" in md and "aclrtMemcpyToSymbolAsync(...);" in md


def test_schema_rejects_what_it_must() -> None:
    report = reports.build(_results([_test("t_a", "pass", ["KIND-ACCEPTED"])]), SUITE, RUN)
    _validate(report)
    for damage in (
        lambda r: r.pop("verdict"),
        lambda r: r["summary"].update(pass_=1),
        lambda r: r["requirements"][0].update(status="passed"),
        lambda r: r["suite"].update(commit="abc"),
        lambda r: r["execution_target"].update(profile="other"),
    ):
        broken = json.loads(json.dumps(report))
        damage(broken)
        with pytest.raises(jsonschema.ValidationError):
            _validate(broken)
