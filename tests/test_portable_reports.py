"""A failing run's reports travel: report.md names no absolute path, every report names its
trace files relative to the report folder, and the printed reproduce line fails the same
way from any folder.  report.html lists what needs attention first, and every rendering
says what the gate was measured against (no expectations file: every failure counts).

One short run of a mutant (a simulator that accepts ACL_MEMCPY_DEVICE_TO_HOST) over three
requirements, of which the failing one is not first in catalogue order.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from acl_conformance import reports
from acl_conformance.conformance.command_line import runner
from acl_conformance.reports import html
from acl_conformance.reports import markdown

# Its tests share a costly module fixture: one worker makes it, once (tox: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_portable_reports")

ROOT = Path(__file__).resolve().parent.parent
MUTANT = "acl_conformance.adapters.variants.mutants:DeviceToHostAccepted"
BROKEN = "KIND-REJECTED"
"""What the mutant breaks."""
REQUIREMENTS = ("KIND-ACCEPTED", BROKEN, "KIND-OUT-OF-ENUM")
FILES = ("report.md", "report.html", "report.json", "junit.xml")


class Run:
    def __init__(self, cwd: Path, report_dir: Path, done: subprocess.CompletedProcess[str]):
        self.cwd = cwd
        self.report_dir = report_dir
        self.out = done.stdout
        self.rc = done.returncode
        self.report: dict[str, Any] = json.loads((report_dir / "report.json").read_text())

    def text(self, name: str) -> str:
        return (self.report_dir / name).read_text(encoding="utf-8")

    def row(self, rid: str) -> dict[str, Any]:
        return next(r for r in self.report["requirements"] if r["id"] == rid)


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The mutant run as a vendor runs it: from a folder of their own, with a relative
    ``--report-dir``."""
    cwd = tmp_path_factory.mktemp("vendor")
    cmd = [sys.executable, "-m", "acl_conformance", "run", "--adapter", MUTANT]
    for r in REQUIREMENTS:
        cmd += ["--requirement", r]
    cmd += ["--examples", "5", "--jobs", "1", "--report-dir", "report"]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert (cwd / "report" / "report.json").is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    run = Run(cwd, cwd / "report", done)
    assert run.rc == 1 and run.row(BROKEN)["status"] == "fail", run.out[-3000:]
    return run


def absolute_paths(text: str, *known: Path) -> list[str]:
    """The absolute paths in ``text``: any of ``known`` (and the places a run's paths lead
    to: this checkout, the interpreter's prefix, the home folder), and anything that looks
    like one (``/word/word``, not part of a URL)."""
    found = []
    for base in {*known, ROOT, Path(sys.prefix), Path.home()}:
        for b in {str(base), str(base.resolve())}:
            if len(b) > 1 and b in text:
                found.append(b)
    found += re.findall(r"(?:(?<=^)|(?<=[\s`'\"(=]))/[\w.+-]+/[\w./+-]*", text, re.M)
    return found


def test_absolute_paths_can_be_found() -> None:
    """The check below is able to fail."""
    assert absolute_paths("trace: `/tmp/x/traces/t.json`")
    assert absolute_paths("see (/home/me/r.json)")
    assert absolute_paths("x", Path("/somewhere/else")) == []
    assert absolute_paths("in traces/t.json and https://example.org/a/b") == []


def test_report_md_names_no_absolute_path(failing: Run) -> None:
    md = failing.text("report.md")
    bad = absolute_paths(md, failing.cwd)
    assert not bad, f"report.md names absolute paths, which mean nothing on another machine: {bad}"


def test_trace_paths_are_relative_to_the_report_folder(failing: Run) -> None:
    c = failing.row(BROKEN)["counterexample"]
    traces = [c["trace_file"], (c.get("replay") or {}).get("trace_file")]
    assert traces[0], "the failure has no trace file"
    for t in filter(None, traces):
        assert not Path(t).is_absolute(), f"report.json names {t}: not relative to the report"
        assert (failing.report_dir / t).is_file(), f"{t} is not a file in the report folder"
        for name in FILES:
            text = failing.text(name)
            assert t in text, f"{name} does not name the trace {t}"
    where = str(failing.report_dir.resolve())
    for name in FILES:
        assert where not in failing.text(name), f"{name} names the report folder's full path"
    # The terminal names the trace from where the command was run.
    printed = re.findall(r"^trace: (.+)$", failing.out, re.M)
    assert printed and all((failing.cwd / p).is_file() for p in printed), printed


def test_the_printed_reproduce_line_fails_the_same_way_from_another_folder(
    failing: Run, tmp_path: Path
) -> None:
    lines = re.findall(r"^reproduce: (.+)$", failing.out, re.M)
    assert len(lines) == 1, f"expected one reproduce line, for {BROKEN}: {lines}"
    line = lines[0]
    c = failing.row(BROKEN)["counterexample"]
    assert c["reproduce"] == line, "the reports and the terminal give different commands"
    assert not absolute_paths(line, failing.cwd), f"the line names a path of this machine: {line}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A shell where the environment with acl-conformance installed is the active one.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-c", line], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
    )
    said = done.stdout + done.stderr
    # pytest's 1: a test failed (not 2, 4 or 5: interrupted, a usage error, nothing ran)
    assert done.returncode == 1, (
        f"`{line}` from {elsewhere}: exit {done.returncode}\n{said[-3000:]}"
    )
    first = c["message"].splitlines()[0]
    assert first.startswith(f"[{BROKEN}]")
    assert first in said, f"the reproduce run did not fail on {BROKEN}:\n{said[-3000:]}"
    assert sorted(p.name for p in elsewhere.iterdir()) == [], "the line wrote into the folder"


class _Rows(HTMLParser):
    """The cells' text of every table row of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def requirement_rows(page: str, ids: set[str]) -> list[str]:
    """The requirement IDs of the page's rows, top to bottom."""
    parser = _Rows()
    parser.feed(page)
    return [r[0] for r in parser.rows if r and r[0] in ids]


def _attention_first(report: dict[str, Any], needs: set[str]) -> None:
    page = html.render(report)
    ids = {r["id"] for r in report["requirements"]}
    order = requirement_rows(page, ids)
    assert sorted(order) == sorted(ids), "every requirement has its row"
    first = order[: len(needs)]
    assert set(first) == needs, (
        f"report.html lists {order}: what needs attention ({sorted(needs)}) should come first"
    )


def test_html_lists_the_failing_rows_first(failing: Run) -> None:
    catalogue = [r["id"] for r in failing.report["requirements"]]
    failed = {r["id"] for r in failing.report["requirements"] if r["status"] != "pass"}
    assert failed == {BROKEN} and catalogue[0] != BROKEN, "the run no longer tests the order"
    _attention_first(failing.report, failed)
    # what passed keeps catalogue order below
    page_order = requirement_rows(failing.text("report.html"), set(catalogue))
    assert page_order[1:] == [r for r in catalogue if r not in failed]


def _with_expectations(failing: Run, listed: str) -> dict[str, Any]:
    """The same run's report, had an expectations file listed ``listed`` as failing."""
    results = json.loads((failing.report_dir / "results.json").read_text())
    results["expectations"] = {
        "file": str(failing.cwd / "ci" / "expectations.txt"),
        "entries": [{"key": listed, "target": "requirement", "reason": "was broken", "link": None}],
    }
    return reports.build(results, failing.report["suite"], failing.report["run"])


def test_html_lists_an_unexpected_pass_first_too(failing: Run) -> None:
    passed = [r["id"] for r in failing.report["requirements"] if r["status"] == "pass"]
    stale = passed[-1]  # the last in catalogue order: it moves up
    report = _with_expectations(failing, stale)
    assert report["expectations"]["unexpected_passes"], "the entry should be stale"
    _attention_first(report, {BROKEN, stale})


def _gate_line(text: str) -> str:
    lines = [x for x in text.splitlines() if re.match(r"^\W*gate\W", x)]
    assert lines, "no gate line"
    return lines[0]


def test_without_an_expectations_file_the_gate_does_not_claim_one(failing: Run) -> None:
    assert failing.report["expectations"]["file"] is None
    for where, text in (
        ("the terminal", failing.out),
        ("report.md", failing.text("report.md")),
        (
            "junit.xml",
            ET.parse(failing.report_dir / "junit.xml")
            .getroot()
            .find("testsuite")
            .findtext("system-out"),
        ),  # type: ignore[union-attr]
    ):
        line = _gate_line(text or "")
        assert "expectations file" not in line.replace("no expectations file", ""), (
            f"{where} says {line!r}: no expectations file was given"
        )
        assert "no expectations file" in line, (
            f"{where}: {line!r} should say what it was measured against"
        )
    page = failing.text("report.html")
    assert "no expectations file" in page[: page.index("<h2>Requirements</h2>")]


def test_with_an_expectations_file_the_gate_names_it(failing: Run) -> None:
    report = _with_expectations(failing, BROKEN)
    for where, text in (
        ("the terminal", runner.answers_text(report, "ci")),
        ("report.md", markdown.render(report)),
    ):
        line = _gate_line(text)
        assert "expectations.txt" in line and "no expectations file" not in line, (where, line)
    md = markdown.render(report)
    assert not absolute_paths(md, failing.cwd), "report.md names the expectations file's full path"
    assert str(failing.cwd) not in html.render(report), "report.html names a path of this machine"
