"""``acl-conformance run``: the suite through pytest, then the reports and the verdict.

The suite always runs in a pytest process of its own, under pytest-xdist (one
worker or more): a backend that kills its process takes a worker with it, and
pytest-xdist reports that test and carries on with a fresh worker, so the run
still finishes and says what happened.

Fail closed: a run that did not reach its end (a worker lost, pytest's internal error
or an exit status other than 0, 1 or 5, the suite's own error while recording a
failure, tests that never ran, a report not written whole; ``reports/ending.py``) is
never conformant and fails the gate, in every format.

Exit status: in ``--mode ci`` the gate's (0: nothing changed against the
expectations file, 1: something did); in ``--mode conformance`` the verdict's (0:
conformant, 1: not conformant); 1 for a run that did not reach its end whose report
could not be made (one line on stderr); 2 a usage or set-up error (one line on stderr,
no traceback).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path
from typing import Any
from typing import TextIO

from acl_conformance import reports
from acl_conformance.conformance.gating import results as results_doc
from acl_conformance.conformance.gating import shards
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import ExpectationsError
from acl_conformance.conformance.session import adapter_options
from acl_conformance.conformance.session import placement
from acl_conformance.conformance.session.suite_command import suite_command
from acl_conformance.conformance.session.supervise import Interrupted
from acl_conformance.conformance.session.supervise import Supervisor
from acl_conformance.reference_impl.catalogue import BY_ID
from acl_conformance.reference_impl.catalogue import PROFILES
from acl_conformance.reports.evidence_text import gate_basis
from acl_conformance.reports.evidence_text import small_everywhere
from acl_conformance.reports.evidence_text import small_everywhere_text
from acl_conformance.reports.evidence_text import small_note
from acl_conformance.reports.status import SHOWN
from acl_conformance.reports.status import Status

from . import finds_gate
from . import staging
from .buildinfo import suite_info

DEFAULT_REPORT_DIR = "acl-conformance-report"


class RunError(Exception):
    """A usage or set-up error: the message is one line; the exit status is 2 (or
    ``status``: 1 for a run that did not reach its end and could not say so in a report)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def _error_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}{': ' + text if text else ''}"


def _commit_quietly(where: Path, report_dir: Path) -> None:
    """Put what the run wrote (its results, its traces) in place of the previous report,
    whose verdict must not pass for this run's."""
    with contextlib.suppress(staging.ReportDirError, OSError):
        staging.commit(where, report_dir)


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
    verbose: bool = False
    """Name each test as it finishes, and say which test runs long."""
    skips: Path | None = None
    """Tests not to run (the expectations file's format; ci mode)."""
    flakes: Path | None = None
    """Flaky failures the gate accepts (the expectations file's format; ci mode)."""
    pytest_args: list[str] = field(default_factory=list)
    """Passed to pytest as they are, after the suite's own (ci mode)."""
    time_budget: float | None = None
    """Minutes the run may take: then it is stopped, and reports what finished."""
    given: set[str] = field(default_factory=set)
    """The options given on the command line (a conformance run locks the others)."""
    shard: str | None = None
    """``K/N``: run part K of N of the suite's tests (``shards.partition``)."""
    durations: Path | None = None
    """With ``shard``: the results.json of an earlier run, whose test times balance the parts."""
    devices_per_worker: int | None = None
    """Give each worker this many devices of its own (device groups; docs/running.md)."""
    replay: Path | None = None
    """A bug hunt's folder: its saved finds are replayed first; one that still fails
    fails the gate (``finds_gate.py``)."""


CONFORMANCE_ALLOWED = {
    "adapter",
    "adapter_option",
    "profile",
    "report_dir",
    "mode",
    "verbose",
    "time_budget",
    "shard",
    "durations",
    "jobs",
    "devices_per_worker",
}
"""What a conformance run may be given: none of it changes how a verdict is made (the
profile is what the run claims, spec or cann, and the report names it; a run its time
budget stops is not conformant: what it did not reach is unknown; the shards of a run,
merged, are the run: a shard alone has no verdict; the number of workers only decides
which process runs a test, and each test's examples depend on its own id, never on its
worker; a device group is the devices the backend shows each worker, as an
``--adapter-option devices=N`` would be: a group of one makes the two-device
requirements "not supported", which the report says)."""

HEARTBEAT_S = 30
"""``--verbose``: how long a test runs before the suite says it is still running."""


def default_jobs() -> int:
    """One worker per CPU this process may use (``placement.usable_cpus``).  No longer
    capped at 4: the cap was there for a host's count, which overstates what a container
    or a ``taskset`` may use; the usable count does not, and a run scales with it (the
    suite has some 590 tests, far more than a runner has CPUs, and work stealing keeps
    every worker busy; a worker costs one Python process and its backend instances)."""
    return placement.usable_cpus().usable


@dataclass(frozen=True)
class Workers:
    """How many workers a run has, why, and each one's devices (when grouped)."""

    jobs: int
    why: str
    """E.g. ``1 CPU usable by this process (affinity), host has 2``, or ``--jobs 4``."""
    groups: list[list[int]] = field(default_factory=list)
    """Worker ``gwI``'s devices, for each I (empty: the workers share every device)."""

    def header(self) -> str:
        """The run's first line: ``1 worker: 1 CPU usable ...``, and the device groups."""
        text = f"{self.jobs} worker{'' if self.jobs == 1 else 's'}: {self.why}"
        if self.groups:
            text += f"; devices per worker: {placement.groups_text(self.groups)}"
        return text


@functools.lru_cache(maxsize=4)
def _device_count(adapter: str, options: tuple[tuple[str, str], ...]) -> int:
    try:
        return placement.probe_device_count(adapter, dict(options))
    except Exception as exc:  # a backend that cannot be started or asked: one line
        raise RunError(
            f"--devices-per-worker: cannot ask backend {adapter!r} how many devices it has: "
            + " ".join(str(exc).split())
        ) from None


def _jobs_given(opts: RunOptions) -> str:
    return f"--jobs {opts.jobs}" if "jobs" in opts.given else "as the run was given"


def workers(opts: RunOptions) -> Workers:
    """The run's workers (RunError, one line, for device groups the backend cannot make)."""
    cpus = placement.usable_cpus()
    k = opts.devices_per_worker
    if k is None:
        if opts.jobs is not None:
            return Workers(opts.jobs, _jobs_given(opts))
        return Workers(cpus.usable, cpus.describe())
    if k < 1:
        raise RunError(f"--devices-per-worker {k}: must be at least 1")
    options = adapter_options.parse(opts.adapter_options, "--adapter-option")
    if placement.DEVICE_IDS in options:
        raise RunError(
            f"--adapter-option {placement.DEVICE_IDS}: set by --devices-per-worker for each "
            "worker; give one or the other"
        )
    count = _device_count(opts.adapter, tuple(sorted(options.items())))
    if opts.jobs is not None:
        jobs, why = opts.jobs, _jobs_given(opts)
    else:
        jobs = min(cpus.usable, count // k)
        why = f"{cpus.describe()}; {count} devices, {k} per worker"
    if jobs < 1 or jobs * k > count:
        raise RunError(
            f"--devices-per-worker {k}: {max(jobs, 1)} worker(s) need {max(jobs, 1) * k} "
            f"devices; the backend has {count}"
        )
    return Workers(jobs, why, placement.device_groups(jobs, k))


def check(opts: RunOptions) -> None:
    """Reject what cannot run, before anything runs (RunError, one line)."""
    if opts.mode not in ("conformance", "ci"):
        raise RunError(f"--mode {opts.mode!r}: expected conformance or ci")
    if opts.mode == "conformance":
        locked = sorted(opts.given - CONFORMANCE_ALLOWED)
        if locked:
            flags = ", ".join(
                "--pytest-args (and what follows --)" if g == "pytest_args" else "--" + g
                for g in (g.replace("_", "-") if g != "pytest_args" else g for g in locked)
            )
            raise RunError(
                f"--mode conformance locks every option but --adapter, --adapter-option, "
                f"--profile, --report-dir, --verbose, --time-budget, --shard, --durations, --jobs and "
                f"--devices-per-worker (a "
                f"conformance result is made with the suite's fixed settings); remove {flags}"
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
    if opts.devices_per_worker is not None and opts.devices_per_worker < 1:
        raise RunError(f"--devices-per-worker {opts.devices_per_worker}: must be at least 1")
    if opts.time_budget is not None and not opts.time_budget > 0:
        raise RunError(f"--time-budget {opts.time_budget:g}: must be more than 0 minutes")
    check_backend(opts.call_timeout, opts.adapter_options)
    workers(opts)  # device groups the backend cannot make: said before anything runs
    for flag, path in (
        ("--expectations", opts.expectations),
        ("--skips", opts.skips),
        ("--flakes", opts.flakes),
    ):
        if path is not None:
            _check_list_file(flag, path)
    _check_shard(opts)
    if opts.replay is not None and not opts.replay.is_dir():
        raise RunError(f"--replay {opts.replay}: not a directory (a hunt's --database folder)")
    if opts.report_dir.exists() and not opts.report_dir.is_dir():
        raise RunError(f"--report-dir {opts.report_dir}: exists and is not a directory")


def _check_shard(opts: RunOptions) -> None:
    """``--shard K/N`` well formed; ``--durations`` only with it, and a results file."""
    if opts.durations is not None and opts.shard is None:
        raise RunError("--durations balances shards: give it with --shard K/N")
    try:
        if opts.shard is not None:
            shards.parse(opts.shard)
        if opts.durations is not None:
            shards.load_durations(opts.durations)
    except shards.ShardError as exc:
        raise RunError(str(exc)) from None


def check_backend(call_timeout: float | None, options: list[str]) -> None:
    """The call time limit and the adapter options of a command that starts a backend
    (``run``, ``hunt``): RunError, one line, where they cannot be used."""
    if call_timeout is not None and not call_timeout > 0:
        raise RunError(f"--call-timeout {call_timeout:g}: must be more than 0 seconds")
    try:
        adapter_options.parse(options, "--adapter-option")
    except ValueError as exc:
        raise RunError(str(exc)) from None


def _check_list_file(flag: str, path: Path) -> None:
    """An expectations or skip list that parses (RunError, one line, if not)."""
    try:
        Expectations.load(path)
    except ExpectationsError as exc:
        raise RunError(f"{flag}: {exc}" if flag != "--expectations" else str(exc)) from None
    except UnicodeDecodeError as exc:
        raise RunError(
            f"{flag} {path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start})"
        ) from None


def pytest_command(opts: RunOptions, where: Path | None = None) -> list[str]:
    """The pytest command line of a run writing into folder ``where`` (default: the report
    folder; ``-c`` the null device: the caller's own pytest configuration, if any, must
    not change the suite)."""
    d = (opts.report_dir if where is None else where).resolve()
    cmd = suite_command(
        opts.profile,
        adapter=opts.adapter,
        adapter_options=opts.adapter_options,
        results=d / "results.json",
        workers=workers(opts).jobs,
        rootdir=d,
        extra=["--tb=no", "--no-header", "--acl-trace-dir", str(d / "traces")],
    )
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
    if opts.devices_per_worker is not None:
        cmd += ["--acl-devices-per-worker", str(opts.devices_per_worker)]
    if opts.skips is not None:
        cmd += ["--acl-skips", str(opts.skips.resolve())]
    if opts.flakes is not None:
        cmd += ["--acl-flakes", str(opts.flakes.resolve())]
    if opts.verbose:
        cmd += ["--acl-progress", "--acl-heartbeat", str(HEARTBEAT_S)]
    if opts.shard is not None:
        cmd += ["--acl-shard", opts.shard]
    if opts.durations is not None:
        cmd += ["--acl-durations", str(opts.durations.resolve())]
    return [*cmd, *opts.pytest_args]


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def run_info(opts: RunOptions, argv: list[str]) -> dict[str, Any]:
    w = workers(opts)
    cpus = placement.usable_cpus()
    # The CPUs this process may use, not the host's count, say how many workers it had.
    return {
        "mode": opts.mode,
        "jobs": w.jobs,
        "workers": w.header(),
        **({"device_groups": {f"gw{i}": g for i, g in enumerate(w.groups)}} if w.groups else {}),
        "command": ["acl-conformance", *argv],
        "machine": f"{platform.platform()}, {platform.machine()}, {cpus.host} CPUs",
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


_SAID_ONCE = ("bringing up nodes...",)
"""Status lines pytest-xdist rewrites in place on a terminal, and repeats in a pipe."""


INTERNAL_ERROR = "INTERNALERROR>"
"""How pytest prints each line of an internal error's traceback: kept off the terminal
(the report says in one line what went wrong, and that the run did not reach its end)."""


def _pass_through(lines: Iterable[str], out: TextIO) -> None:
    said: set[str] = set()
    for line in lines:
        text = line.strip()
        if INTERNAL_ERROR in line:
            before = line[: line.index(INTERNAL_ERROR)]  # the progress dots it follows
            if before.strip():
                out.write(before)
            if INTERNAL_ERROR not in said:
                said.add(INTERNAL_ERROR)
                out.write(
                    "\nacl-conformance: pytest stopped with an internal error (said in one "
                    "line below: the run did not reach its end)\n"
                )
                out.flush()
            continue
        if text in _SAID_ONCE:
            if text in said:
                continue
            said.add(text)
        out.write(line)
        out.flush()


def run_pytest(
    opts: RunOptions, out: TextIO, where: Path | None = None, sup: Supervisor | None = None
) -> tuple[int, str]:
    """Run the suite writing into folder ``where`` (default: the report folder), passing
    its progress through; (pytest's exit status, its stderr).  Under a supervisor, pytest
    runs in a process group of its own that a signal stops whole."""
    d = opts.report_dir if where is None else where
    d.mkdir(parents=True, exist_ok=True)
    results = d / "results.json"
    if results.exists():
        results.unlink()  # a stale file must not pass for this run's
    with Supervisor() if sup is None else contextlib.nullcontext(sup) as s:
        proc = s.popen(
            pytest_command(opts, d),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=d,
        )
        assert proc.stdout is not None and proc.stderr is not None
        err_chunks: list[str] = []
        stderr, stdout = proc.stderr, proc.stdout
        # Both pipes drained alongside, so that neither fills up and stalls pytest, while
        # this thread waits for pytest and hears the signals.
        readers = [
            threading.Thread(target=lambda: err_chunks.append(stderr.read()), daemon=True),
            threading.Thread(target=_pass_through, args=(stdout, out), daemon=True),
        ]
        for t in readers:
            t.start()
        rc = s.wait(proc)
        for t in readers:
            t.join(timeout=10)
    return rc, "".join(err_chunks)


STATUS_TEXT = {
    Status.PASS: "pass",
    Status.FAIL: "FAIL",
    Status.CRASH: "CRASH",
    Status.TIMEOUT: "TIMEOUT",
    Status.FLAKY: "FLAKY",
    Status.UNKNOWN: "UNKNOWN",
    Status.XFAIL: "xfail",
    Status.NOT_SUPPORTED: "not supported",
}
"""How the terminal writes a requirement's status (every one of ``status.SHOWN``)."""


def summary_table(report: dict[str, Any]) -> str:
    rows = report["requirements"]
    width = max(len(r["id"]) for r in rows)
    lines = [f"{'requirement':{width}}  level   status         checks  evidence"]
    lines.append("-" * len(lines[0]))
    # A kind of host memory small under every requirement is said once, below the table.
    small, below = small_everywhere(rows)
    for r in rows:
        lines.append(
            f"{r['id']:{width}}  {r['level']:6}  {STATUS_TEXT[r['status']]:13}  "
            f"{r.get('checks', 0):>6}  {_evidence_note(r, small)}".rstrip()
        )
    s = report["summary"]
    lines.append("-" * len(lines[0]))
    lines.append(
        ", ".join(f"{k} {s.get(k, 0)}" for k in SHOWN if k is not Status.NOT_SUPPORTED)
        + f", not supported {s['not_supported']}; {s['total']} requirements"
    )
    if small:
        lines.append(small_everywhere_text(small, below))
    return "\n".join(lines)


def _evidence_note(r: dict[str, Any], small_everywhere: Collection[str] = ()) -> str:
    """The short form of what a row rests on, for the terminal."""
    notes = []
    if r.get("reason"):
        notes.append(r["reason"])
    o = r.get("outcomes")
    if o and o["not_seen"]:
        notes.append(f"never seen: {'; '.join(o['not_seen'])}")
    small = small_note(r.get("coverage"), small_everywhere)
    if small:
        notes.append(small)
    d = r.get("declined")
    if d and d.get("tests") and r["status"] != Status.UNKNOWN:
        notes.append(f"declined {d['tests']} of {d['of']} tests")
    e = r.get("expected_failure")
    if e:
        notes.append(f"expected: {e['key']}")
    f = r.get("flake")
    if f:
        notes.append(f"a listed flake: {f['key']}")
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
    gate_lines = [f"gate: {gate['result'].upper()} ({gate_basis(report)})"]
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
    """ci mode follows the gate; conformance mode follows the verdict.  A shard has neither
    of its own (its shards merged have): 1 when it was stopped, or found a failure the
    gate would not accept (a requirement left undecided by its part is not one)."""
    if report["run"].get("shard"):
        found = any(
            r["status"] in (Status.FAIL, Status.CRASH, Status.TIMEOUT)
            or (r["status"] == Status.FLAKY and not r.get("flake"))
            for r in report["requirements"]
        )
        return 1 if found or report["run"].get("interrupted") else 0
    if mode == "ci":
        return 0 if report["gate"]["result"] == "pass" else 1
    return 0 if report["verdict"] == "conformant" else 1


def failures_text(report: dict[str, Any], report_dir: Path | None = None) -> str:
    """Each failing requirement's counterexample, as a vendor reads it.  The report names
    its trace files relative to its own folder; printed here from where the command was
    run (``report_dir``, as it was given)."""

    def where(trace_file: str) -> str:
        return str(report_dir / trace_file) if report_dir is not None else trace_file

    out = []
    for r in report["requirements"]:
        c = r.get("counterexample")
        if not c:
            continue
        out.append(f"== {r['id']} ({STATUS_TEXT[r['status']]}) in {c['test']}")
        out.append((c.get("message") or "").rstrip())
        if c.get("trace_file"):
            out.append(f"trace: {where(c['trace_file'])}")
        replayed = c.get("replay") or {}
        if replayed.get("reproduced") is False:
            out.append(
                "replayed against a fresh backend: every call allowed (flaky)"
                + (
                    f"; its trace: {where(replayed['trace_file'])}"
                    if replayed.get("trace_file")
                    else ""
                )
            )
        if c.get("reproduce"):
            out.append(f"reproduce: {c['reproduce']}")
        out.append("")
    return "\n".join(out)


def run(opts: RunOptions, argv: list[str], out: TextIO | None = None) -> int:
    """The whole command: check, run the suite, write the reports, print the verdict.

    Everything is written into a staging folder beside the report folder and moved into
    place once the report is complete.  A run stopped before its end (SIGINT, SIGTERM, or
    ``--time-budget`` spent) stops pytest and its workers, and still writes the report of
    what finished, marked interrupted (the rest of the requirements ``unknown``, not
    reached; the gate failing); a signal then raises :class:`~.supervise.Interrupted`
    once the report is in place, carrying the report's exit status."""
    out = sys.stdout if out is None else out
    check(opts)
    try:
        where = staging.prepare(opts.report_dir)
    except staging.ReportDirError as exc:
        raise RunError(str(exc)) from None
    stopped: Interrupted | None = None
    deadline = time.monotonic() + opts.time_budget * 60 if opts.time_budget is not None else None
    started = time.monotonic()
    out.write(f"acl-conformance: {workers(opts).header()}\n")
    replayed: list[finds_gate.Replayed] = []
    try:
        if opts.replay is not None:  # a bug hunt's finds, first
            options = adapter_options.parse(opts.adapter_options, "--adapter-option")
            replayed = finds_gate.replay_all(
                opts.replay, opts.adapter, options, opts.profile, opts.call_timeout, out
            )
        with Supervisor(deadline=deadline) as sup:
            try:
                rc, stderr = run_pytest(opts, out, where, sup)
            except Interrupted as exc:
                # From here on a signal is only noted: what finished goes into place whole.
                stopped, rc, stderr = exc, -1, ""
            try:
                report = _report(opts, argv, rc, stderr, where, stopped, time.monotonic() - started)
                finds_gate.mark(report, replayed)
            except (RunError, Interrupted):
                raise
            except Exception as exc:  # a MemoryError too: one line, never a verdict
                _commit_quietly(where, opts.report_dir)  # the previous report goes
                raise RunError(
                    f"the run did not reach its end: its report could not be made "
                    f"({_error_line(exc)}); not conformant",
                    status=1,
                ) from None
            unwritten: str | None = None
            try:
                reports.write(report, where)
            except OSError as exc:
                unwritten = f"the report could not be written ({_error_line(exc)})"
                reports.mark_ended(report, unwritten)
            try:
                staging.commit(where, opts.report_dir)
            except staging.ReportDirError as exc:
                raise RunError(str(exc)) from None
    finally:
        staging.discard(where)
    written = [
        opts.report_dir / n for n in ("report.json", "report.md", "report.html", "junit.xml")
    ]
    _print_report(report, opts.mode, stderr, written, out, opts.report_dir)
    status = exit_status(report, opts.mode)
    if unwritten is not None:
        raise RunError(f"the run did not reach its end: {unwritten}; not conformant", status=1)
    if stopped is not None and stopped.signum is not None:
        stopped.reported = True
        raise stopped
    return status


def _report(
    opts: RunOptions,
    argv: list[str],
    rc: int,
    stderr: str,
    where: Path,
    stopped: Interrupted | None = None,
    elapsed: float = 0.0,
) -> dict[str, Any]:
    """The report of the run pytest made in ``where`` (its results.json made to name the
    report folder, where its traces will be); of what finished, when it was ``stopped``."""
    results_path = where / "results.json"
    if stopped is not None:
        results = _stopped_results(results_path, elapsed)
        if results is None:
            raise stopped  # it stopped before the suite began: there is nothing to report
        results["interrupted"] = (
            f"{stopped.reason} after {elapsed:.0f} s"
            if stopped.signum is not None
            else f"--time-budget {opts.time_budget:g} min spent after {elapsed:.0f} s"
        )
        results["collected"] = results_doc.read_collected(results_doc.collected_path(results_path))
        if opts.shard is not None and not results.get("shard"):
            results["shard"] = results_doc.read_shard(results_doc.shard_path(results_path))
    else:
        if rc == 4:  # pytest's usage error: the plugin's one line (a wrong adapter, say)
            raise RunError(_usage_error_line(stderr))
        results = _written_results(results_path, rc, stderr, elapsed)
    if reports.ending.reasons(results) and not results.get("collected"):
        # what the run was to run: the requirements whose tests it left are unknown
        results["collected"] = results_doc.read_collected(results_doc.collected_path(results_path))
    results = staging.relocate(results, where, opts.report_dir)
    results_path.write_text(json.dumps(results, indent=1) + "\n")
    return reports.build(results, suite_info(), run_info(opts, argv))


def rebase_traces(doc: Any, results_dir: Path, report_dir: Path) -> Any:
    """``doc`` (a results document, or part of one) with each trace file it names made
    relative to ``report_dir`` instead of ``results_dir`` (the plugin records them relative
    to the results file's folder), for a report written elsewhere than its results."""
    if isinstance(doc, list):
        return [rebase_traces(v, results_dir, report_dir) for v in doc]
    if not isinstance(doc, dict):
        return doc
    out = {k: rebase_traces(v, results_dir, report_dir) for k, v in doc.items()}
    if isinstance(out.get("trace_file"), str):
        at = results_dir.resolve() / out["trace_file"]
        try:
            out["trace_file"] = Path(os.path.relpath(at, report_dir.resolve())).as_posix()
        except ValueError:  # another drive: no relative path leads there
            out["trace_file"] = str(at)
    return out


def _written_results(results_path: Path, rc: int, stderr: str, elapsed: float) -> dict[str, Any]:
    """The results document pytest wrote; when it wrote none (or one cut short: it died,
    or ran out of memory, before its end), the one made from its journal, marked as a run
    that did not reach its end.  RunError (one line) when there is nothing to report."""
    try:
        doc: dict[str, Any] = json.loads(results_path.read_text())
        return doc
    except (OSError, ValueError) as exc:
        problem = "wrote no results" if isinstance(exc, OSError) else "left its results cut short"
    journaled = results_doc.from_journal(results_doc.journal_path(results_path), elapsed)
    if journaled is None:  # it ended before the suite began
        raise RunError(
            f"the suite did not run to the end (pytest exit {rc}): {_usage_error_line(stderr)}"
        )
    ended = [
        *journaled.get(results_doc.ENDED, []),
        f"pytest ended (exit status {rc}{', killed by ' + _signal_name(-rc) if rc < 0 else ''}) "
        f"and {problem}: the report is made from its journal",
    ]
    # The tests its processes were running then: named, with the failures they had found.
    collected = results_doc.read_collected(results_doc.collected_path(results_path)) or []
    listed = {t["nodeid"]: t for t in collected}
    seen = {r.get("nodeid") for r in journaled["results"]}
    for note in results_doc.read_all_inflight(results_path):
        nodeid = note.get("nodeid")
        if not nodeid or nodeid in seen:
            continue
        t = listed.get(nodeid, {})
        record, why = results_doc.unfinished_record(
            nodeid,
            t.get("suite_id", nodeid),
            list(t.get("requirements", [])),
            note,
            f"pytest ended while worker {note.get('worker')} ran it",
            False,
            results_path.parent,
        )
        journaled["results"].append(record)
        ended.append(why)
    journaled[results_doc.ENDED] = ended
    journaled["exitstatus"] = rc
    return journaled


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _stopped_results(results_path: Path, elapsed: float) -> dict[str, Any] | None:
    """What a stopped run's pytest left: its results.json if it managed to write one (it
    may, on SIGINT), else the results document made from its journal."""
    try:
        doc: dict[str, Any] = json.loads(results_path.read_text())
        return doc
    except (OSError, ValueError):
        return results_doc.from_journal(results_doc.journal_path(results_path), elapsed)


def _print_report(
    report: dict[str, Any],
    mode: str,
    stderr: str,
    written: list[Path],
    out: TextIO,
    report_dir: Path | None = None,
) -> None:
    out.write("\n" + summary_table(report) + "\n")
    instances = reports.instances_text(report["run"])
    if instances:
        out.write(instances + "\n")
    stopped = reports.interrupted_text(report["run"])
    if stopped:
        out.write(stopped + "\n")
    part = reports.shards_text(report["run"])
    if part:
        out.write(part + "\n")
    masking = masking_text(report)
    if masking:
        out.write(masking + "\n")
    out.write("\n")
    text = failures_text(report, report_dir)
    if text:
        out.write(text + "\n")
    for key in report["expectations"]["unused"]:
        out.write(f"expectations: entry {key!r} matched no test that ran (stale, or a typo)\n")
    for p in report["expectations"]["unexpected_passes"]:
        out.write(f"expectations: unexpected pass of {p}: remove the entry\n")
    out.write(answers_text(report, mode) + "\n")
    for line in stderr.splitlines():
        if line.startswith(results_doc.END_OF_RUN):  # the backend would not shut down cleanly
            out.write(line + "\n")
    out.write("reports: " + ", ".join(str(p) for p in written) + "\n")
