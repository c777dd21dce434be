"""Soundness and power on a device-like double: many seeds, and every planted bug.

``python bench/device_like_checks.py seeds [N] [SETUP_MS]``: the whole suite (standard
Hypothesis settings profile, ``--jobs 2``) through the agent and ``double=device-like:SETUP_MS``
(default 200 ms) under both behaviour profiles, seeded 1..N (default 20); every run must
be conformant.  Prints one line a run and last ``device_like_conformant: <ok>/<runs>``.

``python bench/device_like_checks.py bugs [SETUP_MS]``: every planted bug and fault of the
double, each with every device option on, under both behaviour profiles: a bug must fail
a test of the requirement it breaks (the tests of that requirement, as
tests/test_cann_suite.py does with the plain double); ``segv-on`` must give a crash and
``hang-sync`` a timeout, the rest of the run going on.  Prints one line a check and last
``device_like_bugs_caught: <caught>/<checks>``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from suite_runs import ENV

BUGS = {
    "bound-off-by-one": "BOUNDS-PAST-END",
    "kind-unchecked": "KIND-REJECTED",
    "pageable-late": "PAGEABLE-BLOCKS",
}
"""The double's planted bugs (adapters/cann/build.py ``BUGS``) and what each breaks."""

FAULTS = {
    "segv-on:aclrtHostUnregister": ("crash", ["HOST-MEMORY-CALLS", "PINNED-REGISTERED"]),
    "hang-sync": ("timeout", ["STREAM-CALLS", "SYNC-TIMEOUT", "BOUNDS-OVERFLOW"]),
}
"""The double's faults, the status each must give, and requirements whose tests meet it."""


def acl_run(
    options: list[str], profile: str, extra: list[str]
) -> tuple[float, int, dict[str, Any]]:
    """Wall seconds, exit status and report of one ``acl-conformance run`` through the agent."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "acl_conformance", "run", "--adapter", "cann"]
        for o in options:
            cmd += ["--adapter-option", o]
        cmd += ["--profile", profile, "--jobs", "2", "--report-dir", tmp, *extra]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=ENV)
        wall = time.perf_counter() - t0
        path = Path(tmp) / "report.json"
        if not path.exists():
            sys.exit(f"no report ({' '.join(cmd)}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
        report: dict[str, Any] = json.loads(path.read_text())
        return wall, proc.returncode, report


def not_passing(report: dict[str, Any]) -> dict[str, str]:
    return {
        r["id"]: r["status"]
        for r in report["requirements"]
        if r["status"] not in ("pass", "not_supported")
    }


def seeds(n: int, setup_ms: int) -> None:
    double = f"double=device-like:{setup_ms}"
    ok = runs = 0
    for seed in range(1, n + 1):
        for profile in ("spec", "cann"):
            wall, rc, report = acl_run([double], profile, ["--seed", str(seed)])
            runs += 1
            bad = not_passing(report)
            good = rc == 0 and not bad
            ok += good
            print(
                f"seed {seed} {profile}: {'conformant' if good else 'NOT CONFORMANT'} "
                f"in {wall:.1f} s, {report['run']['tests']} tests"
                + ("" if good else f", exit {rc}: {bad}"),
                flush=True,
            )
    print(f"device_like_conformant: {ok}/{runs}")


def bugs(setup_ms: int) -> None:
    device = f"device-like:{setup_ms}"
    caught = checks = 0
    for bug, requirement in BUGS.items():
        for profile in ("spec", "cann"):
            _, _, report = acl_run(
                [f"double={device},{bug}"], profile, ["--requirement", requirement]
            )
            checks += 1
            status = not_passing(report).get(requirement, "pass")
            caught += status == "fail"
            print(f"{bug} ({requirement}) {profile}: {status}", flush=True)
    for fault, (want, requirements) in FAULTS.items():
        for profile in ("spec", "cann"):
            extra = [a for r in requirements for a in ("--requirement", r)]
            _, _, report = acl_run(
                [f"double={device},{fault}", "timeout=2"], profile, ["--examples", "10", *extra]
            )
            checks += 1
            statuses = not_passing(report)
            seen = want in statuses.values()
            caught += seen
            print(f"{fault} {profile}: {statuses or 'all pass'}", flush=True)
    print(f"device_like_bugs_caught: {caught}/{checks}")


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "seeds"
    if what == "seeds":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
        ms = int(sys.argv[3]) if len(sys.argv) > 3 else 200
        seeds(n, ms)
    elif what == "bugs":
        bugs(int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    else:
        sys.exit(f"usage: {sys.argv[0]} seeds [N] [SETUP_MS] | bugs [SETUP_MS]")


if __name__ == "__main__":
    main()
