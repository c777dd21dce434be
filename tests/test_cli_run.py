"""``acl-conformance run``, ``replay`` and ``reproducer`` end to end, as a vendor and a CI use them."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cann_support import compile_program

from acl_conformance import reports
from acl_conformance.conformance.command_line import cli

ROOT = Path(__file__).resolve().parent.parent
MUTANT = "acl_conformance.adapters.variants.mutants:DeviceToHostAccepted"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _report(d: Path) -> dict:
    doc: dict = json.loads((d / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, reports.schema(), cls=jsonschema.Draft202012Validator)
    return doc


def _row(report: dict, rid: str) -> dict:
    return next(r for r in report["requirements"] if r["id"] == rid)


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """A conformance run on the simulator (exit status, what it printed, its report
    folder): made once for the tests of this module that need the correct backend's."""
    d = tmp_path_factory.mktemp("clean") / "report"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main(["run", "--mode", "conformance", "--report-dir", str(d)])
    return rc, out.getvalue(), d


@pytest.mark.xdist_group("clean_run")  # one worker makes the run for both (tox: loadgroup)
def test_conformance_run_on_the_simulator(clean_run: tuple[int, str, Path]) -> None:
    rc, out, d = clean_run
    assert rc == 0, out[-3000:]
    for name in ("report.json", "report.md", "report.html", "junit.xml", "results.json"):
        assert (d / name).is_file(), name
    report = _report(d)
    assert report["verdict"] == "conformant"
    assert report["run"]["mode"] == "conformance" and report["run"]["seed"] is None
    assert report["execution_target"]["profile"] == "spec"
    assert report["execution_target"]["backend_version"].startswith("acl-conformance-simulator")
    assert report["summary"]["pass"] == report["summary"]["total"] > 40
    # junit.xml: one test case per requirement, none failing, named after the backend
    root = ET.parse(d / "junit.xml").getroot()
    assert sum(1 for _ in root.iter("testcase")) == report["summary"]["total"]
    assert root.get("failures") == "0" and root.get("name") == "acl-conformance sim spec"
    if (ROOT / ".git").exists() and shutil.which("git"):
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        assert report["suite"]["commit"] == head
    # the terminal shows the table and the verdict
    assert re.search(r"^KIND-REJECTED\s+MUST\s+pass", out, re.M)
    assert "verdict: CONFORMANT" in out


def test_a_mutant_fails_with_a_short_counterexample_that_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys,
        "run",
        "--adapter",
        MUTANT,
        "--requirement",
        "KIND-REJECTED",
        "--examples",
        "5",
        "--report-dir",
        str(d),
    )
    assert rc == 1, out[-3000:]
    report = _report(d)
    row = _row(report, "KIND-REJECTED")
    assert row["status"] == "fail"
    c = row["counterexample"]
    assert 1 <= len(c["calls"]) <= 10, c["calls"]
    assert any("ACL_MEMCPY_DEVICE_TO_HOST" in line for line in c["calls"])
    assert "verdict: NOT CONFORMANT" in out and "KIND-REJECTED (MUST): fail" in out
    trace = d / c["trace_file"]  # the report names its traces relative to its folder
    assert trace.is_file()

    rc, out, _ = _run(capsys, "replay", str(trace))
    assert rc == 1 and "reproduced: KIND-REJECTED" in out, out[-2000:]
    assert "MISMATCH [KIND-REJECTED]" in out
    rc, out, _ = _run(capsys, "replay", str(trace), "--adapter", "sim")
    assert rc == 0 and "not reproduced" in out, out[-2000:]
    # A call the profile allows takes one line: a long trace replays in a screenful.
    steps = [line for line in out.splitlines() if line.startswith("#")]
    assert steps and all(line.endswith(": ok") for line in steps), out[-2000:]
    assert len(out.splitlines()) <= len(steps) + 6, out[-2000:]

    source = tmp_path / "repro.c"
    rc, _, err = _run(capsys, "reproducer", str(trace), "-o", str(source))
    assert rc == 0, err
    text = source.read_text()
    assert "aclInit(NULL)" in text and "aclFinalize()" in text
    assert "ACL_MEMCPY_DEVICE_TO_HOST" in text
    _compile_and_run_against_the_double(source, tmp_path)


def _compile_and_run_against_the_double(source: Path, tmp_path: Path) -> None:
    """The reproducer compiles with the system compiler against the C double's headers,
    links with the double, and tells a correct double from one with the bug planted."""
    from acl_conformance.adapters.cann import build

    try:
        cc = build.c_compiler()
        libs = {
            "correct": build.build_double(()),
            "bug": build.build_double(build.double_defines("kind-unchecked")),
        }
    except Exception as exc:  # no compiler here: say so rather than pass
        pytest.skip(f"cannot build the C double: {exc}")
    results = {}
    for name, lib in libs.items():
        exe = tmp_path / f"repro-{name}"
        compile_program(cc, source, exe, lib)
        results[name] = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    ok, bug = results["correct"], results["bug"]
    assert ok.returncode == 0 and "0 mismatch(es)" in ok.stdout, ok.stdout[-2000:]
    assert bug.returncode >= 1, bug.stdout[-2000:]
    assert "MISMATCH #" in bug.stdout and "ACL_MEMCPY_DEVICE_TO_HOST" in bug.stdout


def _expectations(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "expectations.txt"
    p.write_text(textwrap.dedent(text))
    return p


def test_expectations_turn_a_known_failure_into_an_expected_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = _expectations(
        tmp_path, "# ours\nKIND-REJECTED  D2H accepted, see the tracker  https://example.org/7\n"
    )
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys, "run", "--adapter", MUTANT, "--requirement", "KIND-REJECTED",
        "--expectations", str(exp), "--examples", "5", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 0, out[-3000:]
    report = _report(d)
    assert _row(report, "KIND-REJECTED")["status"] == "xfail"
    assert report["expectations"]["expected_failures"] == ["KIND-REJECTED"]


def test_a_listed_concurrency_failure_is_expected_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A failure seen only with several host threads is charged to CONCURRENCY-THREADS
    # after the model has judged it: the expectations entry must still apply.
    exp = _expectations(tmp_path, "CONCURRENCY-THREADS  writes lost with several threads\n")
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys, "run", "--adapter", "acl_conformance.adapters.variants:variant",
        "--adapter-option", "name=threads-lose-writes", "--requirement", "CONCURRENCY-THREADS",
        "--expectations", str(exp), "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 0, out[-3000:]
    assert _row(_report(d), "CONCURRENCY-THREADS")["status"] == "xfail"


def test_an_unexpected_pass_fails_the_gate_and_a_stale_entry_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = _expectations(
        tmp_path,
        """
        KIND-REJECTED                       fixed long ago
        test_kinds.py::test_no_such_test    a typo, or a test that was renamed
        """,
    )
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys, "run", "--requirement", "KIND-REJECTED", "--expectations", str(exp),
        "--examples", "3", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:]
    report = _report(d)
    assert report["expectations"]["unexpected_passes"]
    assert report["expectations"]["unused"] == ["test_kinds.py::test_no_such_test"]
    assert "unexpected pass of" in out and "remove the entry" in out
    assert "entry 'test_kinds.py::test_no_such_test' matched no test that ran" in out
    # the gate fails, the backend is conformant: both said, and a CI dashboard sees red
    assert "gate: FAIL" in out and "verdict: CONFORMANT" in out
    assert report["gate"]["result"] == "fail" and report["verdict"] == "conformant"
    root = ET.parse(d / "junit.xml").getroot()
    assert root.get("failures") == "1"
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == ["KIND-REJECTED"]


@pytest.mark.xdist_group("clean_run")
def test_a_backend_with_three_bugs_gets_every_requirement_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], clean_run: tuple[int, str, Path]
) -> None:
    """Issue 10's scenario: three planted bugs in different areas.  Exactly their three
    requirements fail, no requirement is left unknown; listed as expected failures, the
    gate passes (exit 0) while the verdict stays red, and a requirement that ran fewer
    checks than on the correct backend says what masking took."""
    three = ["KIND-REJECTED", "SYMBOL-INTERIOR", "STREAM-QUERY"]
    backend = ["--adapter", "acl_conformance.adapters.variants:variant",
               "--adapter-option", "name=three-bugs"]  # fmt: skip
    # Listed as expected failures, exactly the three are xfail (they failed) and the rest
    # pass; the same backend unlisted fails exactly these (test_variants[three-bugs-cann]).
    exp = _expectations(
        tmp_path, "".join(f"{r}  planted bug  https://example.org/{r}\n" for r in three)
    )
    d = tmp_path / "listed"
    rc, out, err = _run(capsys, "run", *backend, "--expectations", str(exp), "--report-dir", str(d))
    assert rc == 0, out[-3000:] + err[-3000:]
    listed = _report(d)
    assert {r["id"]: r["status"] for r in listed["requirements"] if r["status"] != "pass"} == (
        dict.fromkeys(three, "xfail")
    )
    assert listed["gate"]["result"] == "pass" and listed["verdict"] == "not conformant"
    # (the tests that stopped at a step of a listed requirement are counted: declined)
    headline = listed["verdict_headline"]
    assert re.fullmatch(
        r"NOT CONFORMANT \(3 expected failures, \d+ of \d+ tests declined\)", headline
    )
    assert "gate: PASS" in out and f"verdict: {headline}" in out
    root = ET.parse(d / "junit.xml").getroot()
    assert root.get("failures") == "0"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["gate"] == "pass" and props["verdict"] == "not conformant"
    for name in ("report.md", "report.html"):
        text = (d / name).read_text()
        assert headline in text and "https://example.org/SYMBOL-INTERIOR" in text

    # the correct backend's run, with the same budget (conformance mode locks the
    # standard settings profile, which a ci run without --examples uses too)
    clean = {r["id"]: r["checks"] for r in _report(clean_run[2])["requirements"]}
    for r in listed["requirements"]:
        assert r["checks"] > 0, r["id"]
        if r["checks"] < clean[r["id"]] and r["id"] not in three:
            assert r["masked"], f"{r['id']}: fewer checks than on the correct backend, unexplained"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "--adapter", "nope"], "adapter 'nope': unknown"),
        (["run", "--mode", "conformance", "--seed", "3"], "remove --seed"),
        # --adapter-option is one of the options a conformance run takes: the run gets as
        # far as looking the adapter up
        (
            ["run", "--mode", "conformance", "--adapter", "nope", "--adapter-option", "k=v"],
            "adapter 'nope': unknown",
        ),
        (["run", "--requirement", "NOT-A-REQ"], "--requirement 'NOT-A-REQ': not a requirement"),
        (["run", "--examples", "0"], "--examples 0: must be at least 1"),
        (["run", "--adapter-option", "novalue"], "expected KEY=VALUE"),
        (["run", "--call-timeout", "0"], "--call-timeout 0: must be more than 0 seconds"),
        (["replay", "/no/such/trace.json", "--call-timeout", "-1"], "must be more than 0"),
        (["replay", "/no/such/trace.json"], "cannot be read"),
        (["reproducer", "/no/such/trace.json", "-o", "x.c"], "cannot be read"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    if argv[0] == "run":
        argv = [*argv, "--report-dir", str(tmp_path / "r")]
    rc, out, err = _run(capsys, *argv)
    assert rc == 2
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in out + err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "--profile", "nope"], "argument --profile: invalid choice: 'nope'"),
        (["run", "--seed", "abc"], "argument --seed: invalid int value: 'abc'"),
        (["run", "--mode", "release"], "argument --mode: invalid choice: 'release'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_malformed_command_lines_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_malformed_expectations_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = _expectations(tmp_path, "KIND-REJECTED\n")
    rc, _, err = _run(capsys, "run", "--expectations", str(exp), "--report-dir", str(tmp_path))
    assert rc == 2 and "line 1: 'KIND-REJECTED' has no reason" in err


BACKENDS = '''
import os, signal, time
from acl_conformance.adapters.simulator import Simulator

class DiesOnNullSize(Simulator):
    """Takes its process down when asked for a symbol's size through a NULL pointer."""
    def get_symbol_size(self, symbol, null_size=False):
        if null_size:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().get_symbol_size(symbol, null_size)

class HangsInQuery(Simulator):
    """Never answers aclrtStreamQuery."""
    calls_may_hang = True
    def stream_query(self, stream):
        time.sleep(60)
        return super().stream_query(stream)

class HangsInFinalize(Simulator):
    """Never returns from aclFinalize, nor from being released."""
    def finalize(self):
        time.sleep(3600)
        return 0
    def close(self):
        time.sleep(3600)

class DeclaresTooLittle(Simulator):
    """Holds only two of the fixture variables."""
    def fixtures(self):
        return [f for f in super().fixtures() if f.name in ("g_u8", "g_arr256")]

class CannotSayWhatItCan(Simulator):
    def capabilities(self):
        raise RuntimeError("capabilities not implemented")

class HangsInInit(Simulator):
    """Never returns from aclInit."""
    def init(self, config_path=None):
        time.sleep(3600)
        return 0
'''


@pytest.fixture
def backends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "broken_backends.py").write_text(BACKENDS)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return "broken_backends"


def test_a_backend_that_kills_its_process_is_a_crash_and_the_run_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backends: str
) -> None:
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys, "run", "--adapter", f"{backends}:DiesOnNullSize", "--requirement",
        "GETSYMBOL-SIZE", "--jobs", "1", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:]
    report = _report(d)
    row = _row(report, "GETSYMBOL-SIZE")
    assert row["status"] == "crash"
    assert any(t["status"] == "pass" for t in row["tests"])  # the others still ran


def test_a_backend_that_hangs_is_a_timeout_and_the_run_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backends: str
) -> None:
    d = tmp_path / "report"
    rc, out, _ = _run(
        capsys, "run", "--adapter", f"{backends}:HangsInQuery", "--requirement", "STREAM-QUERY",
        "--call-timeout", "1", "--examples", "3", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 1, out[-3000:]
    report = _report(d)
    assert _row(report, "STREAM-QUERY")["status"] == "timeout"
    assert report["run"]["duration_s"] < 120
    assert "STREAM-QUERY" in out and "TIMEOUT" in out


def test_a_backend_that_hangs_while_starting_ends_the_run_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backends: str
) -> None:
    # It declares nothing about hanging: start-up calls are always time-limited.
    rc, out, err = _run(
        capsys, "run", "--adapter", f"{backends}:HangsInInit", "--call-timeout", "2",
        "--report-dir", str(tmp_path / "r"),
    )  # fmt: skip
    assert rc == 2, out[-3000:]
    assert len(err.strip().splitlines()) == 1, err
    assert "aclInit(NULL)" in err and "did not return within 2 s" in err


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        ("DeclaresTooLittle", "it declares no fixture variable g_u32, g_u64, g_struct12,"),
        ("CannotSayWhatItCan", "its declarations could not be read: RuntimeError: capabilities"),
    ],
)
def test_a_backend_that_declares_too_little_is_a_set_up_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backends: str, backend: str, message: str
) -> None:
    rc, out, err = _run(
        capsys, "run", "--adapter", f"{backends}:{backend}", "--report-dir", str(tmp_path / "r")
    )
    assert rc == 2, out[-3000:]
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_backend_that_hangs_while_shutting_down_does_not_hang_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backends: str
) -> None:
    d = tmp_path / "r"
    rc, out, _ = _run(
        capsys, "run", "--adapter", f"{backends}:HangsInFinalize", "--requirement",
        "KIND-REJECTED", "--call-timeout", "2", "--report-dir", str(d),
    )  # fmt: skip
    assert rc == 0, out[-3000:]  # every test was judged, and passed
    assert _row(_report(d), "KIND-REJECTED")["status"] == "pass"
    assert "at the end of the run: aclFinalize on backend" in out
    assert "did not return within 2 s" in out


def test_module_entry_point_runs_the_cli() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "acl_conformance.conformance.command_line.cli",
            "list",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["requirements"]
