"""Fail closed: a run that does not reach its end, for any reason, is "did not reach its
end": never conformant, a non-zero exit in both modes, marked in every format; a worker
that dies names its test, and the failure it was recording is kept and charged.

The faults are made by a backend of the test's own (one that kills its process in one
call) and by a test-only pytest plugin (``PYTEST_PLUGINS``, loaded in pytest and its
workers) that breaks the plugin's recording of a failure: it raises, runs out of memory
or kills its process, once."""

from __future__ import annotations

import json
import os
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from test_reports import RUN
from test_reports import SUITE
from test_reports import _results
from test_reports import _test

from acl_conformance import reports
from acl_conformance.conformance.command_line import cli

MUTANT = "acl_conformance.adapters.variants.mutants:DeviceToHostAccepted"

BACKEND = textwrap.dedent(
    '''
    import os
    import signal

    from acl_conformance.adapters.simulator import Simulator


    class KilledOnNullSize(Simulator):
        """Its process is killed (SIGKILL, as the kernel's OOM killer does) when asked for
        a symbol's size through a NULL pointer: one test of the suite asks that."""

        def get_symbol_size(self, symbol, null_size=False):
            if null_size:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().get_symbol_size(symbol, null_size)
    '''
)

DYING = "test_companion.py::test_address_and_size_checks[NULL out-get_symbol_size-null_size]"
DYING_REQUIREMENTS = {"GETSYMBOL-ADDRESS", "GETSYMBOL-SIZE"}

FAULTS = textwrap.dedent(
    '''
    """Breaks the recording of a failure once (ACL_TEST_FAULT names how; ACL_TEST_FAULT_ONCE
    a file made when it has happened), or raises in the worker's report hook."""
    import os
    import signal

    import pytest

    from acl_conformance.conformance.plugin import reporting

    _trace_doc = reporting._trace_doc


    def _once():
        mark = os.environ.get("ACL_TEST_FAULT_ONCE")
        if not mark or os.path.exists(mark):
            return False
        open(mark, "w").close()
        return True


    def _faulty_trace_doc(item, failure, status):
        fault = os.environ.get("ACL_TEST_FAULT")
        if fault in ("memory", "raise", "kill") and _once():
            if fault == "memory":
                raise MemoryError()
            if fault == "raise":
                raise RuntimeError("the trace could not be encoded")
            os.kill(os.getpid(), signal.SIGKILL)
        return _trace_doc(item, failure, status)


    reporting._trace_doc = _faulty_trace_doc


    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(report):
        props = dict(report.user_properties)
        if (
            os.environ.get("ACL_TEST_FAULT") == "internal"
            and os.environ.get("PYTEST_XDIST_WORKER")
            and ("acl_failure" in props or "failures" in props)
            and _once()
        ):
            raise MemoryError()
        if (
            os.environ.get("ACL_TEST_FAULT") == "controller"
            and not os.environ.get("PYTEST_XDIST_WORKER")
            and ("acl_failure" in props or "failures" in props)
            and _once()
        ):
            os.kill(os.getpid(), signal.SIGKILL)  # pytest itself, as the OOM killer might
    '''
)


@pytest.fixture
def faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's backend and fault plugin importable by pytest and its workers."""
    (tmp_path / "dying_backend.py").write_text(BACKEND)
    (tmp_path / "acl_test_faults.py").write_text(FAULTS)
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + (os.pathsep + path if path else ""))
    monkeypatch.setenv("ACL_TEST_FAULT_ONCE", str(tmp_path / "fault-happened"))
    # Under the project's own pytest-xdist run this process is a worker: the suite's pytest
    # would inherit that mark and take its controller for a worker.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _report(d: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((d / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, reports.schema(), cls=jsonschema.Draft202012Validator)
    return doc


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in report["requirements"]}


def _check_did_not_reach_its_end(d: Path, out: str, err: str, *why: str) -> dict[str, Any]:
    """Every format says the run did not reach its end (and ``why``); never conformant; no
    traceback on the terminal."""
    report = _report(d)
    ended = "; ".join(report["run"]["did_not_reach_its_end"])
    for w in why:
        assert w in ended, ended
    assert report["run"]["interrupted"]
    assert report["verdict"] == "not conformant"
    assert report["verdict_headline"].startswith("NOT CONFORMANT (did not reach its end")
    assert any(r.startswith("the run did not reach its end: ") for r in report["verdict_reasons"])
    assert report["gate"]["result"] == "fail"
    for name in ("report.md", "report.html"):
        assert "Did not reach its end: " in (d / name).read_text(), name
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    case = [c for c in suite.iter("testcase") if c.get("name") == "the run reached its end"]
    assert len(case) == 1 and case[0].find("failure") is not None
    assert "Did not reach its end: " in out
    assert "NOT CONFORMANT (did not reach its end" in out  # (then the tests declined, if any)
    assert "Traceback" not in out + err and "INTERNALERROR>" not in out + err
    return report


# -- a worker killed mid-test ------------------------------------------------------------


def _check_killed(d: Path, out: str, err: str) -> dict[str, Any]:
    report = _check_did_not_reach_its_end(d, out, err, DYING, "its process died")
    rows = _rows(report)
    crashed = {rid for rid, r in rows.items() if r["status"] == "crash"}
    assert crashed == DYING_REQUIREMENTS & set(rows), crashed  # its test's, and no other's
    for rid in crashed:
        assert DYING in rows[rid]["reason"], rows[rid]["reason"]
    assert [rid for rid, r in rows.items() if r["status"] == "unknown"] == []
    assert {r["status"] for rid, r in rows.items() if rid not in crashed} <= {
        "pass",
        "not_supported",
    }
    return report


@pytest.mark.parametrize("profile", ["spec", "cann"])
def test_a_worker_killed_mid_test_is_named_and_charged_to_its_requirements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], faults: Path, profile: str
) -> None:
    d = tmp_path / "report"
    rc, out, err = _run(
        capsys, "run", "--adapter", "dying_backend:KilledOnNullSize", "--profile", profile,
        "--requirement", "GETSYMBOL-SIZE", "--requirement", "GETSYMBOL-ADDRESS",
        "--requirement", "STREAM-CALLS", "--jobs", "2", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:] + err
    _check_killed(d, out, err)
    assert _rows(_report(d))["STREAM-CALLS"]["status"] == "pass"


def test_a_worker_killed_mid_test_in_conformance_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], faults: Path
) -> None:
    """The whole suite: only the dying test's requirements are charged, every other one is
    decided (0 unknown), and the verdict is not conformant, exit 1."""
    d = tmp_path / "report"
    rc, out, err = _run(
        capsys, "run", "--mode", "conformance", "--adapter", "dying_backend:KilledOnNullSize",
        "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:] + err
    report = _check_killed(d, out, err)
    assert len([r for r in report["requirements"] if r["status"] == "pass"]) > 40


# -- the suite's own recording of a failure breaks ---------------------------------------


@pytest.mark.parametrize(
    ("fault", "mode", "profile", "why"),
    [
        ("memory", "ci", "spec", "the suite could not record it: MemoryError"),
        ("raise", "conformance", "spec", "RuntimeError: the trace could not be encoded"),
        ("memory", "ci", "cann", "the suite could not record it: MemoryError"),
    ],
)
def test_an_error_while_recording_a_failure_keeps_it_and_the_run_did_not_reach_its_end(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    faults: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    mode: str,
    profile: str,
    why: str,
) -> None:
    monkeypatch.setenv("PYTEST_PLUGINS", "acl_test_faults")
    monkeypatch.setenv("ACL_TEST_FAULT", fault)
    d = tmp_path / "report"
    argv = ["run", "--adapter", MUTANT, "--report-dir", str(d)]
    if mode == "ci":
        argv += ["--profile", profile, "--requirement", "KIND-REJECTED", "--requirement",
                 "STREAM-CALLS"]  # fmt: skip
    else:
        argv += ["--mode", "conformance"]
    rc, out, err = _run(capsys, *argv)
    assert rc == 1, out[-3000:] + err
    report = _check_did_not_reach_its_end(d, out, err, why)
    rows = _rows(report)
    # the failure being recorded is kept: its requirement, test, call and trace path
    row = rows["KIND-REJECTED"]
    assert row["status"] == "fail"
    c = row["counterexample"]
    assert c["test"] in report["run"]["did_not_reach_its_end"][0]
    assert "aclrtMemcpyToSymbolAsync(" in c["message"] and "call:" in c["message"]
    assert c["calls"] and ".trace.json" in c["message"]
    assert rows["STREAM-CALLS"]["status"] == "pass"
    assert [rid for rid, r in rows.items() if r["status"] == "unknown"] == []


def test_a_worker_killed_while_recording_a_failure_keeps_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    faults: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As when the kernel's OOM killer takes a worker that writes a large trace: the test is
    named, its failure is charged to the requirement it cites (not the test's others, which
    it did not get to decide: unknown, saying why), and every other requirement is decided."""
    monkeypatch.setenv("PYTEST_PLUGINS", "acl_test_faults")
    monkeypatch.setenv("ACL_TEST_FAULT", "kill")
    d = tmp_path / "report"
    rc, out, err = _run(
        capsys, "run", "--adapter", MUTANT, "--requirement", "KIND-REJECTED",
        "--requirement", "HYGIENE-NO-ENQUEUE", "--requirement", "STREAM-CALLS",
        "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:] + err
    report = _check_did_not_reach_its_end(
        d, out, err, "its process died", "while the suite was recording its failure of"
    )
    rows = _rows(report)
    dead = next(
        t
        for r in report["requirements"]
        for t in r["tests"]
        if t["status"] == "error" and t["nodeid"] in report["run"]["did_not_reach_its_end"][0]
    )
    assert rows["KIND-REJECTED"]["status"] == "fail"
    assert "was being recorded" in rows["KIND-REJECTED"]["counterexample"]["message"] or (
        rows["KIND-REJECTED"]["counterexample"]["test"] != dead["nodeid"]
    )
    assert [rid for rid, r in rows.items() if r["status"] == "crash"] == []
    carried = {
        rid for rid, r in rows.items() if any(t["nodeid"] == dead["nodeid"] for t in r["tests"])
    }
    for rid, r in rows.items():
        if r["status"] == "unknown":
            assert rid in carried and dead["nodeid"] in r["reason"], (rid, r["reason"])
    assert rows["STREAM-CALLS"]["status"] == "pass"


def test_an_internal_error_in_a_worker_is_never_conformant(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    faults: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A MemoryError the plugin does not catch (in a report hook): pytest stops with an
    internal error, exit status 3, after part of the run; the test that was running is
    named, what did not run is unknown (not reached), in one line, never a traceback."""
    monkeypatch.setenv("PYTEST_PLUGINS", "acl_test_faults")
    monkeypatch.setenv("ACL_TEST_FAULT", "internal")
    d = tmp_path / "report"
    rc, out, err = _run(
        capsys, "run", "--mode", "conformance", "--adapter", MUTANT, "--report-dir", str(d)
    )  # fmt: skip
    assert rc == 1, out[-3000:] + err
    report = _check_did_not_reach_its_end(
        d, out, err, "pytest stopped with an internal error", "MemoryError", "exit status 3"
    )
    assert report["run"]["pytest_exitstatus"] == 3
    assert "pytest stopped with an internal error" in out


def test_pytest_killed_before_it_wrote_its_results_reports_from_its_journal(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    faults: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pytest itself is killed: no results.json.  The report is made from its journal (what
    finished keeps its status, the failure found is kept), marked, never conformant."""
    monkeypatch.setenv("PYTEST_PLUGINS", "acl_test_faults")
    monkeypatch.setenv("ACL_TEST_FAULT", "controller")
    d = tmp_path / "report"
    rc, out, err = _run(
        capsys, "run", "--adapter", MUTANT, "--requirement", "KIND-REJECTED",
        "--requirement", "STREAM-CALLS", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:] + err
    report = _check_did_not_reach_its_end(
        d, out, err, "pytest ended (exit status -9, killed by SIGKILL) and wrote no results"
    )
    assert _rows(report)["KIND-REJECTED"]["status"] == "fail"


# -- the reports -------------------------------------------------------------------------


def test_pytest_exit_status_3_with_a_results_file_is_never_conformant() -> None:
    """The results of every test it ran passed; pytest still ended with an internal error."""
    doc = _results([_test("t_kind", "pass", ["KIND-ACCEPTED"])], ["KIND-ACCEPTED"])
    doc["exitstatus"] = 0
    assert reports.build(doc, SUITE, RUN)["verdict"] == "conformant"
    for status in (2, 3, 4, 7):
        doc["exitstatus"] = status
        report = reports.build(doc, SUITE, RUN)
        assert report["verdict"] == "not conformant", status
        assert report["gate"]["result"] == "fail"
        assert report["verdict_headline"] == "NOT CONFORMANT (did not reach its end)"
        assert f"pytest ended with exit status {status}" in "; ".join(report["verdict_reasons"])


def test_what_the_plugin_saw_go_wrong_makes_what_did_not_finish_unknown() -> None:
    doc = _results(
        [_test("t_kind", "pass", ["KIND-ACCEPTED"]), _test("t_bad", "pass", ["KIND-REJECTED"])],
        ["KIND-ACCEPTED", "KIND-REJECTED", "BOUNDS-END-EXACT"],
    )
    doc["exitstatus"] = 1
    doc["did_not_reach_its_end"] = ["worker gw0 was lost: Not properly terminated"]
    doc["collected"] = [
        {"nodeid": s, "suite_id": s, "requirements": r, "skipped": False}
        for s, r in (
            ("t_kind", ["KIND-ACCEPTED"]),
            ("t_bad", ["KIND-REJECTED"]),
            ("t_bound", ["BOUNDS-END-EXACT"]),
        )
    ]
    report = reports.build(doc, SUITE, RUN)
    rows = _rows(report)
    assert rows["KIND-ACCEPTED"]["status"] == "pass"  # every test of it finished
    assert rows["BOUNDS-END-EXACT"]["status"] == "unknown"
    assert "worker gw0 was lost" in rows["BOUNDS-END-EXACT"]["reason"]
    assert report["verdict"] == "not conformant"
    assert report["run"]["did_not_reach_its_end"] == doc["did_not_reach_its_end"]


@pytest.mark.parametrize("mode", ["ci", "conformance"])
def test_a_report_that_cannot_be_rendered_whole_is_marked_and_fails(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    """An exception (a MemoryError, say) while rendering one format: the others are written,
    marked; the one that failed is written as a few lines saying so; exit 1."""
    doc = _results([_test("t_kind", "pass", ["KIND-ACCEPTED"])], ["KIND-ACCEPTED"])
    doc["exitstatus"] = 0
    src = tmp_path / "results.json"
    src.write_text(json.dumps(doc))

    def broken(report: dict[str, Any]) -> str:
        raise MemoryError("rendering")

    monkeypatch.setitem(reports._RENDER, "report.html", broken)
    d = tmp_path / "report"
    rc, out, err = _run(capsys, "report", str(src), "--mode", mode, "--report-dir", str(d))
    assert rc == 1, out + err
    report = json.loads((d / "report.json").read_text())
    assert report["verdict"] == "not conformant" and report["gate"]["result"] == "fail"
    why = "; ".join(report["run"]["did_not_reach_its_end"])
    assert "the report could not be written whole (report.html: MemoryError" in why
    assert (
        "Did not reach its end: the report could not be written whole"
        in (d / "report.md").read_text()
    )
    assert "NOT CONFORMANT: the run did not reach its end" in (d / "report.html").read_text()
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures") or 0) >= 1
    assert "Traceback" not in out + err


def test_a_report_that_cannot_be_made_is_one_line_and_leaves_no_previous_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's report cannot be made (a MemoryError while building it): one line, exit 1,
    and the previous report in the folder (a conformant one) is gone, not left to pass for
    this run's."""
    from acl_conformance.conformance.command_line import runner

    d = tmp_path / "report"
    d.mkdir()
    (d / "report.json").write_text('{"verdict": "conformant"}\n')

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise MemoryError()

    monkeypatch.setattr(runner.reports, "build", broken)
    rc, out, err = _run(
        capsys, "run", "--requirement", "STREAM-CALLS", "--jobs", "1", "--report-dir", str(d)
    )
    assert rc == 1, out[-2000:] + err
    assert err.strip().splitlines() == [
        "acl-conformance run: the run did not reach its end: its report could not be made "
        "(MemoryError); not conformant"
    ], err
    assert not (d / "report.json").exists()
    assert (d / "results.json").exists()  # what the run found is kept


def test_an_unexpected_error_of_the_command_is_one_line_and_never_a_pass(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from acl_conformance.conformance.command_line import runner

    def broken(*args: Any, **kwargs: Any) -> int:
        raise ValueError("something the suite did not foresee")

    monkeypatch.setattr(runner, "run", broken)
    rc, _out, err = _run(capsys, "run", "--mode", "conformance")
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "ValueError: something the suite did not foresee" in err
    assert "the run did not reach its end" in err
