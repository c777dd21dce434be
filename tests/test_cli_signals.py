"""``acl-conformance run`` interrupted (Ctrl-C, a CI cancel): nothing of the run is left
running, the exit status says which signal, and the report folder holds the previous
complete report or nothing, never a mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from acl_conformance.conformance.supervise import group_alive

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

SLOW_BACKEND = textwrap.dedent(
    """
    import time

    from acl_conformance.adapters.simulator import Simulator


    class Slow(Simulator):
        '''The simulator, with calls that take a while (a remote or a loaded device).'''

        def set_device(self, device_id):
            time.sleep(0.5)
            return super().set_device(device_id)

        def memcpy_to_symbol_async(self, *args, **kwargs):
            time.sleep(0.5)
            return super().memcpy_to_symbol_async(*args, **kwargs)
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


@pytest.mark.parametrize(
    ("signum", "status", "previous"),
    [(signal.SIGINT, 130, True), (signal.SIGTERM, 143, False)],
    ids=["SIGINT-keeps-the-previous-report", "SIGTERM-leaves-nothing"],
)
def test_an_interrupted_run_leaves_no_process_and_no_mixed_report(
    tmp_path: Path, signum: int, status: int, previous: bool
) -> None:
    (tmp_path / "slow_backend.py").write_text(SLOW_BACKEND)
    d = tmp_path / "report"
    if previous:
        for name, text in PREVIOUS.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
    before = _snapshot(d) if previous else {}
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "acl_conformance",
                "run",
                "--adapter",
                "slow_backend:Slow",
                "--jobs",
                "2",
                "--report-dir",
                str(d),
            ],
            stdout=o,
            stderr=e,
            env=env,
            cwd=tmp_path,
        )
    try:
        # pytest and both workers up (a loaded machine takes its time)
        seen: set[int] = set()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= _descendants(proc.pid)
            if len(_alive(seen)) >= 3:
                break
            time.sleep(0.2)
        assert proc.poll() is None, err.read_text()[-2000:]
        assert len(_alive(seen)) >= 3, f"the run did not start its workers: {_table()}"
        time.sleep(2)  # into the tests
        seen |= _descendants(proc.pid)
        groups = {_table()[p][1] for p in _alive(seen)}
        assert proc.pid not in groups, "pytest must run in a process group of its own"

        sent = time.monotonic()
        os.kill(proc.pid, signum)  # the command alone, as a CI runner does
        rc = proc.wait(timeout=10)
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
    assert "interrupted" in err.read_text() and "no report written" in err.read_text()
    assert "Traceback" not in err.read_text()
    time.sleep(1)  # nothing of the run writes afterwards
    assert _snapshot(d) == before
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_a_supervised_child_past_its_time_is_stopped_with_its_group() -> None:
    from acl_conformance.conformance.supervise import Supervisor

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
