"""Helpers of the cann tests: running the suite against the agent in a pytest process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acl_conformance.conformance.session.suite_command import suite_command

BAD = ("fail", "crash", "timeout", "error", "xpass")


@dataclass
class Run:
    """One suite run: its results document, wall time and output."""

    results: list[dict[str, Any]]
    doc: dict[str, Any]
    wall: float
    returncode: int
    output: str

    def statuses(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out

    def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        return [r for r in self.results if r["status"] in statuses]

    def summary(self) -> str:
        bad = [
            f"{r['suite_id']}: {r['status']} {r.get('failed_requirement') or ''} "
            f"{(r.get('message') or '')[:300]}"
            for r in self.with_status(*BAD)
        ]
        return (
            f"{self.statuses()} in {self.wall:.1f} s; " + "\n".join(bad[:10]) + self.output[-2000:]
        )


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the outer pytest's and pytest-xdist's variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS"))
    }
    env.update(extra)
    return env


def run_suite(
    tmp: Path,
    options: Sequence[str],
    profile: str = "cann",
    extra: Sequence[str] = (),
    timeout: float = 600.0,
    env: dict[str, str] | None = None,
) -> Run:
    """``pytest --pyargs <suite> --acl-adapter cann`` with these adapter options, in ``tmp``
    (``env``: variables added to the run's environment)."""
    out = tmp / f"results-{time.monotonic_ns()}.json"
    cmd = suite_command(
        profile,
        adapter="cann",
        adapter_options=options,
        hypothesis_profile=None,
        results=out,
        extra=extra,
    )
    t0 = time.monotonic()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp, env=clean_env(**(env or {}))
    )
    wall = time.monotonic() - t0
    text = proc.stdout + proc.stderr
    assert out.exists(), f"no results from {' '.join(cmd)}: {text[-3000:]}"
    doc = json.loads(out.read_text())
    return Run(list(doc["results"]), doc, wall, proc.returncode, text)


@dataclass
class CliRun:
    """One ``acl-conformance run``: its exit status, output and report.json (None if none)."""

    returncode: int
    output: str
    report: dict[str, Any] | None
    wall: float


def run_cli(tmp: Path, args: Sequence[str], timeout: float = 600.0) -> CliRun:
    """``acl-conformance run ARGS --report-dir <fresh dir in tmp>``, in ``tmp``."""
    report_dir = tmp / f"report-{time.monotonic_ns()}"
    cmd = [
        sys.executable,
        "-m",
        "acl_conformance.conformance.command_line.cli",
        "run",
        *args,
        "--report-dir",
        str(report_dir),
    ]
    t0 = time.monotonic()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp, env=clean_env()
    )
    wall = time.monotonic() - t0
    path = report_dir / "report.json"
    report = json.loads(path.read_text()) if path.exists() else None
    return CliRun(proc.returncode, proc.stdout + proc.stderr, report, wall)


def processes_with(variable: str) -> list[int]:
    """The running processes (not zombies) whose environment holds ``variable=``."""
    found = []
    needle = variable.encode() + b"="
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(e.startswith(needle) for e in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def compile_program(cc: Sequence[str], source: Path, exe: Path, lib: Path) -> None:
    """Compile the C program ``source`` (a reproducer) into ``exe`` with compiler ``cc``,
    against the ACL headers and the C double ``lib``, warnings as errors; assert that it
    compiled."""
    from acl_conformance.adapters.cann import build

    proc = subprocess.run(
        build.reproducer_command(cc, source, exe, lib), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
