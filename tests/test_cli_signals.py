"""``acl-conformance run`` interrupted (Ctrl-C, a CI cancel, its own time budget): nothing of
the run is left running, the exit status says which signal, and the report folder holds the
report of what finished, marked interrupted, whole (never mixed with the previous one)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from acl_conformance.conformance.session.supervise import group_alive

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

SLOW_BACKEND = textwrap.dedent(
    """
    import time

    from acl_conformance.adapters.simulator import Simulator
    from acl_conformance.adapters.variants.mutants import BoundLessThan


    class Slow(Simulator):
        '''The simulator, with calls that take a while (a remote or a loaded device).'''

        def set_device(self, device_id):
            time.sleep(0.5)
            return super().set_device(device_id)

        def memcpy_to_symbol_async(self, *args, **kwargs):
            time.sleep(0.5)
            return super().memcpy_to_symbol_async(*args, **kwargs)


    class SlowAndWrong(Slow, BoundLessThan):
        '''Slow, and rejects a copy that ends exactly at the end of a variable (found by
        the first tests that run): a stopped run has a requirement decided.'''
    """
)

PREVIOUS = {
    "report.json": '{"previous": true}\n',
    "report.md": "# previous\n",
    "report.html": "<p>previous</p>\n",
    "junit.xml": "<testsuites/>\n",
    "results.json": '{"previous": true}\n',
    "traces/old.trace.json": '{"calls": []}\n',
}


def _table() -> dict[int, tuple[int, int, str]]:
    """pid -> (ppid, pgid, state) of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        out[int(entry)] = (int(fields[1]), int(fields[2]), fields[0])
    return out


def _descendants(root: int) -> set[int]:
    table = _table()
    found: set[int] = set()
    frontier = {root}
    while frontier:
        kids = {pid for pid, (ppid, _, _) in table.items() if ppid in frontier}
        frontier = kids - found
        found |= kids
    return found


def _alive(pids: set[int]) -> set[int]:
    table = _table()
    return {p for p in pids if p in table and table[p][2] != "Z"}


def _snapshot(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): p.read_text() for p in sorted(d.rglob("*")) if p.is_file()}


def _journal_failures(base: Path) -> int:
    """How many failed tests the run's journal (in its staging folder) holds so far."""
    return sum(
        sum(1 for line in j.read_text().splitlines() if '"status": "fail"' in line)
        for j in base.glob(".report.partial-*/results.journal.jsonl")
    )


def _check_stopped_report(d: Path, stopped: str) -> dict:
    """The report of a stopped run: whole, marked interrupted in every format, what finished
    decided and the rest unknown (not reached), the gate failing."""
    report = json.loads((d / "report.json").read_text())
    assert report["run"]["interrupted"].startswith(stopped), report["run"]
    assert 0 < report["run"]["tests"] < report["run"]["tests_collected"]
    statuses = {r["id"]: r for r in report["requirements"]}
    not_reached = [
        r for r in statuses.values() if (r.get("reason") or "").startswith("not reached")
    ]
    assert not_reached and all(r["status"] == "unknown" for r in not_reached)
    # the bug found before the stop is decided, with its counterexample
    failed = [r for r in statuses.values() if r["status"] == "fail"]
    assert failed and all(r["counterexample"]["calls"] for r in failed)
    assert report["gate"]["result"] == "fail" and report["verdict"] == "not conformant"
    assert "Interrupted: the run was stopped" in (d / "report.md").read_text()
    assert "Interrupted: the run was stopped" in (d / "report.html").read_text()
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    run_case = [c for c in suite.iter("testcase") if c.get("name") == "the run reached its end"]
    assert len(run_case) == 1 and run_case[0].find("failure") is not None
    return report


SLOW_RUN = [sys.executable, "-m", "acl_conformance", "run", "--adapter", "slow_backend:SlowAndWrong",
            "--jobs", "2"]  # fmt: skip
"""The run every test here interrupts (with SLOW_BACKEND on PYTHONPATH)."""


@pytest.mark.parametrize(
    ("signum", "status", "previous"),
    [(signal.SIGINT, 130, True), (signal.SIGTERM, 143, False)],
    ids=["SIGINT-replaces-the-previous-report", "SIGTERM"],
)
def test_an_interrupted_run_leaves_no_process_and_reports_what_finished(
    tmp_path: Path, signum: int, status: int, previous: bool
) -> None:
    (tmp_path / "slow_backend.py").write_text(SLOW_BACKEND)
    d = tmp_path / "report"
    if previous:
        for name, text in PREVIOUS.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(
            [*SLOW_RUN, "--report-dir", str(d)],
            stdout=o,
            stderr=e,
            env=env,
            cwd=tmp_path,
        )
    try:
        # pytest and both workers up, and a failure found (a loaded machine takes its time)
        seen: set[int] = set()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= _descendants(proc.pid)
            if len(_alive(seen)) >= 3 and _journal_failures(tmp_path) >= 1:
                break
            time.sleep(0.2)
        assert proc.poll() is None, err.read_text()[-2000:]
        assert len(_alive(seen)) >= 3, f"the run did not start its workers: {_table()}"
        assert _journal_failures(tmp_path) >= 1, "no failure was found"
        seen |= _descendants(proc.pid)
        groups = {_table()[p][1] for p in _alive(seen)}
        assert proc.pid not in groups, "pytest must run in a process group of its own"

        sent = time.monotonic()
        os.kill(proc.pid, signum)  # the command alone, as a CI runner does
        rc = proc.wait(timeout=30)
        while _alive(seen) and time.monotonic() < sent + 10:
            time.sleep(0.1)
        assert not _alive(seen), f"left running 10 s after the signal: {_alive(seen)}"
        for pgid in groups:
            assert not group_alive(pgid)
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in _alive(_descendants(proc.pid)):
            os.kill(p, signal.SIGKILL)

    assert rc == status, err.read_text()[-2000:]
    assert "interrupted" in err.read_text() and "report of what finished" in err.read_text()
    assert "Traceback" not in err.read_text()
    _check_stopped_report(d, signal.Signals(signum).name)
    # the previous report is replaced whole: nothing of it is mixed in
    assert not (d / "traces" / "old.trace.json").exists()
    time.sleep(1)  # nothing of the run writes afterwards
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_a_time_budget_ends_the_run_with_the_report_of_what_finished(tmp_path: Path) -> None:
    (tmp_path / "slow_backend.py").write_text(SLOW_BACKEND)
    d = tmp_path / "report"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    t0 = time.monotonic()
    done = subprocess.run(
        [*SLOW_RUN, "--time-budget", "0.5", "--report-dir", str(d)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr[-2000:]  # the gate fails
    assert time.monotonic() - t0 < 120
    assert "Interrupted: the run was stopped (--time-budget 0.5 min spent" in done.stdout
    assert "Traceback" not in done.stderr
    _check_stopped_report(d, "--time-budget 0.5 min spent")


def test_a_supervised_child_past_its_time_is_stopped_with_its_group() -> None:
    from acl_conformance.conformance.session.supervise import Supervisor

    with Supervisor(grace_s=1.0) as sup:
        proc = sup.popen(
            [sys.executable, "-c", "import subprocess, sys, time; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
             "time.sleep(60)"]
        )  # fmt: skip
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            sup.wait(proc, timeout=2)
        assert time.monotonic() - t0 < 10
        assert not group_alive(proc.pid)
