"""The failure path: the whole suite against backends with bugs, beside the correct one.

Runs the whole conformance suite (standard Hypothesis settings profile, ``-n 2 --dist
worksteal``, as ``acl-conformance run`` does) against the correct simulator, a backend with one
planted bug (``d2h-accepted``) and one with three in different areas
(``three-bugs``: D2H accepted, interior pointer accepted, stream query always
complete), alternated for a few rounds (``python bench/failing_run.py [spec|cann]
[rounds]``); the medians are compared.  Each run's failing requirements are printed,
so that a fast run that found the wrong thing shows.

Last lines: ``ratio_1: <wall one-bug / wall clean>`` and ``ratio_3: <wall three-bug /
wall clean>`` (target: both <= 1.5).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite_runs import ENV
from suite_runs import arguments
from suite_runs import warm_up

from acl_conformance.conformance.session.suite_command import suite_command

BACKENDS = {
    "clean": None,
    "one-bug": "d2h-accepted",
    "three-bug": "three-bugs",
}


def run(variant: str | None, profile: str) -> tuple[float, list[str]]:
    """Wall seconds of one whole-suite run, and the requirements that failed in it."""
    with tempfile.TemporaryDirectory(prefix="acl-bench-") as tmp:
        results = Path(tmp) / "results.json"
        cmd = suite_command(
            profile,
            adapter=None if variant is None else "acl_conformance.adapters.variants:variant",
            adapter_options=[] if variant is None else [f"name={variant}"],
            results=results,
            workers=2,
        )
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=ENV, cwd=tmp)
        wall = time.perf_counter() - t0
        if not results.exists():
            sys.exit(f"the suite did not finish against {variant}: {proc.stdout[-2000:]}")
        from acl_conformance import reports

        report = reports.build(json.loads(results.read_text()), {}, {})
        failed = [r["id"] for r in report["requirements"] if r["status"] != "pass"]
        return wall, failed


def main() -> None:
    profile, rounds = arguments()
    warm_up()
    walls: dict[str, list[float]] = {k: [] for k in BACKENDS}
    for k in range(rounds):
        for name, variant in BACKENDS.items():
            wall, failed = run(variant, profile)
            walls[name].append(wall)
            print(f"round {k + 1}: {name:9} {wall:6.1f} s; not passing: {', '.join(failed) or '-'}")
    med = {k: statistics.median(v) for k, v in walls.items()}
    print(
        f"profile {profile}, Hypothesis settings profile standard, -n 2, median of {rounds} rounds"
    )
    for name in BACKENDS:
        print(f"{name}: {med[name]:.1f} s wall")
    print(f"ratio_1: {med['one-bug'] / med['clean']:.2f}")
    print(f"ratio_3: {med['three-bug'] / med['clean']:.2f}")


if __name__ == "__main__":
    main()
