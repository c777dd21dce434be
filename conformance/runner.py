"""``acl-conformance run``: the suite through pytest, then the reports and the verdict.

The suite always runs in a pytest process of its own, under pytest-xdist (one
worker or more): a backend that kills its process takes a worker with it, and
pytest-xdist reports that test and carries on with a fresh worker, so the run
still finishes and says what happened.

Exit status: in ``--mode ci`` the gate's (0: nothing changed against the
expectations file, 1: something did); in ``--mode conformance`` the verdict's (0:
conformant, 1: not conformant); 2 a usage or set-up error (one line on stderr, no
traceback).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TextIO

from acl_conformance import reports
from acl_conformance.conformance.expectations import Expectations, ExpectationsError
from acl_conformance.reference_impl.catalogue import BY_ID, PROFILES

from . import results as results_doc
from .buildinfo import suite_info

SUITE = "acl_conformance.conformance.suite"
DEFAULT_REPORT_DIR = "acl-conformance-report"


class RunError(Exception):
    """A usage or set-up error: the message is one line; the exit status is 2."""


@dataclass
class RunOptions:
    adapter: str = "sim"
    adapter_options: list[str] = field(default_factory=list)
    profile: str = "spec"
    examples: int | None = None
    jobs: int | None = None
    seed: int | None = None
    report_dir: Path = Path(DEFAULT_REPORT_DIR)
    expectations: Path | None = None
    mode: str = "ci"
    call_timeout: float | None = None
    requirements: list[str] = field(default_factory=list)
    """Run only the tests of these requirements (and report only these)."""
    no_shrink: bool = False
    """Report each failure as first found, without shrinking it."""
    given: set[str] = field(default_factory=set)
    """The options given on the command line (a conformance run locks the others)."""


CONFORMANCE_ALLOWED = {"adapter", "adapter_option", "report_dir", "mode"}


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def check(opts: RunOptions) -> None:
    """Reject what cannot run, before anything runs (RunError, one line)."""
    if opts.mode not in ("conformance", "ci"):
        raise RunError(f"--mode {opts.mode!r}: expected conformance or ci")
    if opts.mode == "conformance":
        locked = sorted(opts.given - CONFORMANCE_ALLOWED)
        if locked:
            flags = ", ".join("--" + g.replace("_", "-") for g in locked)
            raise RunError(
                f"--mode conformance locks every option but --adapter, --adapter-option and "
                f"--report-dir (a conformance result is made with the suite's fixed settings); "
                f"remove {flags}"
            )
    if opts.profile not in PROFILES:
        raise RunError(f"--profile {opts.profile!r}: expected one of {', '.join(PROFILES)}")
    unknown = [r for r in opts.requirements if r not in BY_ID]
    if unknown:
        raise RunError(
            f"--requirement {unknown[0]!r}: not a requirement ID (see 'acl-conformance list')"
        )
    if opts.examples is not None and opts.examples < 1:
        raise RunError(f"--examples {opts.examples}: must be at least 1")
    if opts.jobs is not None and opts.jobs < 1:
        raise RunError(f"--jobs {opts.jobs}: must be at least 1")
    if opts.call_timeout is not None and not opts.call_timeout > 0:
        raise RunError(f"--call-timeout {opts.call_timeout:g}: must be more than 0 seconds")
    for o in opts.adapter_options:
        key, sep, _ = o.partition("=")
        if not sep or not key.strip():
            raise RunError(f"--adapter-option {o!r}: expected KEY=VALUE")
    if opts.expectations is not None:
        try:
            Expectations.load(opts.expectations)
        except ExpectationsError as exc:
            raise RunError(str(exc)) from None
    if opts.report_dir.exists() and not opts.report_dir.is_dir():
        raise RunError(f"--report-dir {opts.report_dir}: exists and is not a directory")


def pytest_command(opts: RunOptions) -> list[str]:
    """The pytest command line of a run (``-c`` the null device: the caller's own pytest
    configuration, if any, must not change the suite)."""
    d = opts.report_dir.resolve()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        os.devnull,
        "--rootdir",
        str(d),
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        "--no-header",
        "--pyargs",
        SUITE,
        "--acl-adapter",
        opts.adapter,
        *(a for o in opts.adapter_options for a in ("--acl-adapter-option", o)),
        "--acl-profile",
        opts.profile,
        "--acl-hypothesis-profile",
        "ci",
        "--acl-results",
        str(d / "results.json"),
        "--acl-trace-dir",
        str(d / "traces"),
        "-n",
        str(opts.jobs or default_jobs()),
        "--dist",
        "worksteal",
    ]
    if opts.examples is not None:
        cmd += ["--acl-examples", str(opts.examples)]
    if opts.seed is not None:
        cmd += ["--acl-seed", str(opts.seed)]
    if opts.expectations is not None:
        cmd += ["--acl-expectations", str(opts.expectations.resolve())]
    if opts.call_timeout is not None:
        cmd += ["--acl-call-timeout", str(opts.call_timeout)]
    for r in opts.requirements:
        cmd += ["--acl-requirement", r]
    if opts.no_shrink:
        cmd += ["--acl-no-shrink"]
    return cmd


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def run_info(opts: RunOptions, argv: list[str]) -> dict[str, Any]:
    return {
        "mode": opts.mode,
        "jobs": opts.jobs or default_jobs(),
        "command": ["acl-conformance", *argv],
        "machine": f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "hypothesis": _version("hypothesis"),
        "pytest": _version("pytest"),
        "numpy": _version("numpy"),
    }


def _usage_error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("ERROR: "):
            return line.removeprefix("ERROR: ").strip()
    tail = [line for line in stderr.strip().splitlines() if line.strip()]
    return tail[-1].strip() if tail else "pytest stopped without saying why"


def run_pytest(opts: RunOptions, out: TextIO) -> tuple[int, str]:
    """Run the suite, passing its progress through; (pytest's exit status, its stderr)."""
    opts.report_dir.mkdir(parents=True, exist_ok=True)
    results = opts.report_dir / "results.json"
    if results.exists():
        results.unlink()  # a stale file must not pass for this run's
    proc = subprocess.Popen(
        pytest_command(opts),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=opts.report_dir,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err_chunks: list[str] = []
    stderr = proc.stderr
    # Drained alongside, so that neither pipe fills up and stalls pytest.
    t = threading.Thread(target=lambda: err_chunks.append(stderr.read()), daemon=True)
    t.start()
    for line in proc.stdout:
        out.write(line)
        out.flush()
    rc = proc.wait()
    t.join()
    return rc, "".join(err_chunks)


STATUS_TEXT = {
    "pass": "pass",
    "fail": "FAIL",
    "crash": "CRASH",
    "timeout": "TIMEOUT",
    "unknown": "UNKNOWN",
    "xfail": "xfail",
    "not_supported": "not supported",
}


def summary_table(report: dict[str, Any]) -> str:
    rows = report["requirements"]
    width = max(len(r["id"]) for r in rows)
    lines = [f"{'requirement':{width}}  level   status         checks  evidence"]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(
            f"{r['id']:{width}}  {r['level']:6}  {STATUS_TEXT[r['status']]:13}  "
            f"{r.get('checks', 0):>6}  {_evidence_note(r)}".rstrip()
        )
    s = report["summary"]
    lines.append("-" * len(lines[0]))
    lines.append(
        ", ".join(f"{k} {s[k]}" for k in ("pass", "fail", "crash", "timeout", "unknown", "xfail"))
        + f", not supported {s['not_supported']}; {s['total']} requirements"
    )
    return "\n".join(lines)


def _evidence_note(r: dict[str, Any]) -> str:
    """The short form of what a row rests on, for the terminal."""
    notes = []
    if r.get("reason"):
        notes.append(r["reason"])
    o = r.get("outcomes")
    if o and o["not_seen"]:
        notes.append(f"never seen: {'; '.join(o['not_seen'])}")
    e = r.get("expected_failure")
    if e:
        notes.append(f"expected: {e['key']}")
    return "; ".join(notes)


def masking_text(report: dict[str, Any]) -> str:
    """One line per masked requirement: what masking took from the run (the reports say,
    per requirement, how many of its tests ran with it masked)."""
    return "\n".join(
        f"masked: {m['requirement']} (listed, or known to fail): {m['tests']} tests ran with it "
        f"masked, {m['declined']} steps declined, {m['set_aside']} violations of it set aside"
        for m in report.get("masking") or []
    )


def answers_text(report: dict[str, Any], mode: str) -> str:
    """The two answers, the one that sets the exit status first."""
    t = report["execution_target"]
    gate = report["gate"]
    gate_lines = [f"gate: {gate['result'].upper()} (against the expectations file)"]
    gate_lines += [f"  - {x}" for x in gate["reasons"]]
    verdict_lines = [
        f"verdict: {report['verdict_headline']} ({t['backend_version']}; profile {t['profile']}, "
        f"mode {mode})"
    ]
    verdict_lines += [f"  - {x}" for x in report["verdict_reasons"]]
    verdict_lines += [f"  - not met, does not decide: {x}" for x in report.get("advisories") or []]
    first, second = (gate_lines, verdict_lines) if mode == "ci" else (verdict_lines, gate_lines)
    if mode == "conformance" and not report["expectations"].get("file"):
        second = []  # a conformance run has no expectations file: the gate says nothing more
    return "\n".join(first + second)


def exit_status(report: dict[str, Any], mode: str) -> int:
    """ci mode follows the gate; conformance mode follows the verdict."""
    if mode == "ci":
        return 0 if report["gate"]["result"] == "pass" else 1
    return 0 if report["verdict"] == "conformant" else 1


def failures_text(report: dict[str, Any]) -> str:
    """Each failing requirement's counterexample, as a vendor reads it."""
    out = []
    for r in report["requirements"]:
        c = r.get("counterexample")
        if not c:
            continue
        out.append(f"== {r['id']} ({STATUS_TEXT[r['status']]}) in {c['test']}")
        out.append((c.get("message") or "").rstrip())
        if c.get("trace_file"):
            out.append(f"trace: {c['trace_file']}")
        if c.get("reproduce"):
            out.append(f"reproduce: {c['reproduce']}")
        out.append("")
    return "\n".join(out)


def run(opts: RunOptions, argv: list[str], out: TextIO | None = None) -> int:
    """The whole command: check, run the suite, write the reports, print the verdict."""
    out = sys.stdout if out is None else out
    check(opts)
    rc, stderr = run_pytest(opts, out)
    results_path = opts.report_dir / "results.json"
    if rc == 4:  # pytest's usage error: the plugin's one line (a wrong adapter, say)
        raise RunError(_usage_error_line(stderr))
    if not results_path.exists():
        raise RunError(
            f"the suite did not run to the end (pytest exit {rc}): {_usage_error_line(stderr)}"
        )
    results = json.loads(results_path.read_text())
    report = reports.build(results, suite_info(), run_info(opts, argv))
    written = reports.write(report, opts.report_dir)
    out.write("\n" + summary_table(report) + "\n")
    masking = masking_text(report)
    if masking:
        out.write(masking + "\n")
    out.write("\n")
    text = failures_text(report)
    if text:
        out.write(text + "\n")
    for key in report["expectations"]["unused"]:
        out.write(f"expectations: entry {key!r} matched no test that ran (stale, or a typo)\n")
    for p in report["expectations"]["unexpected_passes"]:
        out.write(f"expectations: unexpected pass of {p}: remove the entry\n")
    out.write(answers_text(report, opts.mode) + "\n")
    for line in stderr.splitlines():
        if line.startswith(results_doc.END_OF_RUN):  # the backend would not shut down cleanly
            out.write(line + "\n")
    out.write("reports: " + ", ".join(str(p) for p in written) + "\n")
    return exit_status(report, opts.mode)
