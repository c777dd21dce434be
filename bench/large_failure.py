"""One large failure through the whole path, in bounded memory (issue 35, item 5).

The backend is the catalogue mutant ``large-pageable-drops-page-tails``: a pageable
``aclrtMemcpyToSymbolAsync`` of more than 8 MiB loses the last byte of every 4 KiB page,
so the 16 MiB copy of ``g_arr16m`` leaves 4,096 wrong bytes, each its own run.  The bench
runs, each as its own process under an 8 GB address-space limit (``ulimit -v 8000000``):

1. the run: ``acl-conformance run`` of the tests that make that copy (``--requirement
   EFFECT-BYTES -k "g_arr16m and pageable"``, ``--jobs 2``): the failure, its second
   look, the replay of its trace against a fresh backend, its reports.  The test that
   fails today (test_bounds' boundary writes) is parametrized, so nothing is shrunk;
   a Hypothesis test that makes the copy and matches ``-k`` is shrunk as any is;
2. ``acl-conformance replay`` of the trace it wrote;
3. ``acl-conformance reproducer`` of it, compiled as the project's tests compile
   reproducers (the system compiler, the C double's headers), and run against the
   correct C double and against the C double with the same bug planted
   (``large-pageable-drops``).

It prints a line per stage, then:

- ``peak_rss_mb:`` the largest peak resident set of any process of any stage (a run's
  workers, its controller, the replay, the reproducer's writer);
- ``trace_mb:`` the failing trace, its JSON and its data file together;
- ``replay_lines:`` every line replay prints (one per call the profile allows, a block
  for the wrong read), and ``replay_wrong_read_lines:`` the wrong read's block alone (its
  call, what was allowed and observed, the summary of the wrong runs);
- last, ``large_failure_ok: yes|no``: yes when peak RSS <= 1024 MB, the trace <= 2 x the
  16 MiB payload, the replay's output <= 60 lines, the run and the replay both
  charge the failure to EFFECT-BYTES, and the reproducer compiles, passes the correct
  double and fails the one with the bug.

With ``--clean`` it first runs the whole suite (ci mode, ``--jobs 2``) against the
correct simulator and prints ``clean_peak_rss_mb:``, the largest peak RSS of a process of
a normal run, for comparison (docs/running.md gives both figures).

Usage: ``ulimit -v 8000000; python bench/large_failure.py [spec|cann] [--clean]``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from suite_runs import ENV

VARIANT = "large-pageable-drops-page-tails"
DOUBLE_BUG = "large-pageable-drops"
REQUIREMENT = "EFFECT-BYTES"
PAYLOAD = 16 << 20
"""The failing copy's bytes (all of g_arr16m)."""
LIMIT_BYTES = 8_000_000 * 1024
"""``ulimit -v 8000000``, for every process the bench starts."""

_MEASURE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[2:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(str(peak))\n"
    "sys.exit(rc)\n"
)
"""A wrapper that runs a command and writes the largest peak RSS (KiB) of its processes:
``RUSAGE_CHILDREN`` counts every descendant waited for (pytest-xdist's workers too)."""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def measured(cmd: list[str], work: Path, what: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``cmd`` in ``work`` under the address-space limit: its result, and the largest
    peak RSS of its processes in MB."""
    peak_file = work / f"{what}.peak"
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(peak_file), *cmd],
        capture_output=True,
        text=True,
        cwd=work,
        env=ENV,
        timeout=1800,
        preexec_fn=_limit,
    )
    kib = int(peak_file.read_text()) if peak_file.exists() else 0
    return proc, kib // 1024


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "acl_conformance", *args]


def wrong_read_lines(replay_out: str) -> list[str]:
    """The lines replay prints for the calls it found wrong: each such call's label, its
    answer and its MISMATCH block."""
    blocks: list[list[str]] = []
    for line in replay_out.splitlines():
        if line.startswith("#"):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return [line for b in blocks if any("MISMATCH" in x for x in b) for line in b]


def reproducer_against_the_double(source: Path, work: Path) -> tuple[bool, str]:
    """Compile the reproducer as the project's tests do, run it against the correct C
    double and the one with the bug: (passes the one and fails the other, what happened)."""
    from acl_conformance.adapters.cann import build

    cc = build.c_compiler()
    outcomes = {}
    for name, spec in (("correct", ""), ("bug", DOUBLE_BUG)):
        lib = build.build_double(build.double_defines(spec))
        exe = work / f"repro-{name}"
        made = subprocess.run(
            build.reproducer_command(cc, source, exe, lib), capture_output=True, text=True
        )
        if made.returncode != 0:
            return False, f"the reproducer does not compile: {made.stderr[-800:]}"
        ran = subprocess.run(
            [str(exe)], capture_output=True, text=True, timeout=600, preexec_fn=_limit
        )
        outcomes[name] = ran
        last = (ran.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"reproducer against the {name} double: exit {ran.returncode}, {last}")
    ok = outcomes["correct"].returncode == 0 and outcomes["bug"].returncode >= 1
    return ok, "passes the correct double, fails the bug" if ok else "does not tell them apart"


def clean_run(profile: str, work: Path) -> None:
    """The whole suite against the correct simulator: the largest peak RSS of a process."""
    run, peak = measured(
        cli("run", "--profile", profile, "--jobs", "2", "--report-dir", str(work / "clean")),
        work,
        "clean",
    )
    print(f"clean run: exit {run.returncode}, {run.stdout.strip().splitlines()[-1:]}")
    print(f"clean_peak_rss_mb: {peak}")


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--clean"]
    profile = args[0] if args else "spec"
    checks: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="acl-large-failure-") as tmp:
        work = Path(tmp)
        if "--clean" in sys.argv[1:]:
            clean_run(profile, work)
        report_dir = work / "report"
        run, run_peak = measured(
            cli("run", "--adapter", "acl_conformance.adapters.variants:variant",
                "--adapter-option", f"name={VARIANT}", "--profile", profile,
                "--requirement", REQUIREMENT, "--jobs", "2", "--report-dir", str(report_dir),
                "--", "-k", "g_arr16m and pageable"),
            work,
            "run",
        )  # fmt: skip
        report_file = report_dir / "report.json"
        if not report_file.exists():
            print(run.stdout[-3000:], run.stderr[-3000:])
            print("large_failure_ok: no")
            return
        report = json.loads(report_file.read_text())
        row = next(r for r in report["requirements"] if r["id"] == REQUIREMENT)
        checks["run fails EFFECT-BYTES"] = row["status"] == "fail"
        sizes = {p.name: p.stat().st_size for p in report_dir.iterdir() if p.is_file()}
        print(
            f"run: exit {run.returncode}, {REQUIREMENT} {row['status']}, peak RSS {run_peak} MB; "
            + ", ".join(f"{k} {v // 1024} KiB" for k, v in sorted(sizes.items()))
        )
        traces = sorted(
            p for p in (report_dir / "traces").glob("*.trace.json") if ".replay." not in p.name
        )
        if not traces:
            print("the run wrote no trace")
            print("large_failure_ok: no")
            return
        trace = traces[0]
        side = trace.with_name(trace.name.removesuffix(".json") + ".data")
        trace_bytes = trace.stat().st_size + (side.stat().st_size if side.exists() else 0)
        checks["trace <= 2 x payload"] = trace_bytes <= 2 * PAYLOAD
        print(f"trace: {trace.name}: json {trace.stat().st_size // 1024} KiB + data file "
              f"{side.stat().st_size // 1024 if side.exists() else 0} KiB")  # fmt: skip

        replay, replay_peak = measured(cli("replay", str(trace)), work, "replay")
        lines = wrong_read_lines(replay.stdout)
        checks["replay reproduces EFFECT-BYTES"] = replay.returncode == 1 and (
            f"reproduced: {REQUIREMENT}" in replay.stdout
        )
        total = len(replay.stdout.splitlines())
        checks["replay <= 60 lines for one wrong read"] = len(lines) > 0 and total <= 60
        print(f"replay: exit {replay.returncode}, peak RSS {replay_peak} MB")

        source = work / "repro.c"
        made, repro_peak = measured(
            cli("reproducer", str(trace), "-o", str(source)), work, "reproducer"
        )
        print(f"reproducer: exit {made.returncode}, peak RSS {repro_peak} MB; "
              f"{made.stderr.strip()[-300:]}")  # fmt: skip
        if made.returncode == 0:
            ok, why = reproducer_against_the_double(source, work)
        else:
            ok, why = False, "not written"
        checks["reproducer fails the double's bug"] = ok
        print(f"reproducer: {why}")

        peak = max(run_peak, replay_peak, repro_peak)
        checks["peak RSS <= 1024 MB"] = peak <= 1024
        for name, passed in checks.items():
            print(f"  {'ok ' if passed else 'NOT'} {name}")
        print(f"peak_rss_mb: {peak}")
        print(f"trace_mb: {trace_bytes / (1 << 20):.1f}")
        print(f"replay_wrong_read_lines: {len(lines)}")
        print(f"replay_lines: {total}")
        print(f"large_failure_ok: {'yes' if all(checks.values()) else 'no'}")


if __name__ == "__main__":
    main()
