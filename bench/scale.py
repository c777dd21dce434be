"""How evenly ``--shard K/N`` splits the suite: each shard's wall time, balanced by the
durations of an earlier run, and without them (the same number of tests per shard).

``python bench/scale.py [--durations RESULTS.json] [--shards 4] [--jobs 2] [--examples N]
[--profile spec] [--rounds 3]``: without ``--durations`` the whole suite runs once first (simulator,
standard Hypothesis settings profile) and its results.json gives the durations.  Then the
N shards run one after another (so that they do not compete for the CPUs), each a fresh
pytest process as ``acl-conformance run --shard K/N`` starts it, balanced by the
durations and without them alternately, for a few rounds (the median of each shard).  Each shard's wall time includes its pytest start and
collection, as a CI job's would.  Last line: ``shard_balance: <slowest shard / mean
shard>`` of the balanced shards (target <= 1.3); the line before it gives the figure of
the unbalanced ones.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite_runs import ENV
from suite_runs import warm_up

from acl_conformance.conformance.session.suite_command import suite_command

CPU: list[float] = []
"""The CPU seconds (user and system, pytest and its workers) of each :func:`run`, in order."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(
    profile: str, jobs: int, examples: int | None, results: Path, extra: list[str]
) -> tuple[float, str]:
    """One run of the suite (a shard, with ``extra``); its wall time and last line (its CPU
    time goes to :data:`CPU`)."""
    more = ["--acl-examples", str(examples)] if examples is not None else []
    cmd = suite_command(profile, workers=jobs, results=results, extra=[*more, *extra])
    t0, c0 = time.perf_counter(), _cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=ENV)
    wall = time.perf_counter() - t0
    CPU.append(_cpu() - c0)
    last = (proc.stdout.strip().splitlines() or ["<no output>"])[-1]
    if proc.returncode != 0 or not results.is_file():
        sys.exit(f"the suite failed ({' '.join(extra)}): {last}\n{proc.stderr[-2000:]}")
    return wall, last


BALANCED_CPU: list[float] = []


def shards(
    n: int,
    rounds: int,
    profile: str,
    jobs: int,
    examples: int | None,
    where: Path,
    durations: Path,
) -> tuple[list[float], list[float]]:
    """The median wall time of each of the ``n`` shards balanced by ``durations``, and of
    each without them, over ``rounds`` rounds; one shard at a time, the balanced and the
    unbalanced shard K alternated, so that both see the same passing load.  The median
    CPU time of each balanced shard goes to :data:`BALANCED_CPU`."""
    balanced: list[list[float]] = [[] for _ in range(n)]
    unbalanced: list[list[float]] = [[] for _ in range(n)]
    cpu: list[list[float]] = [[] for _ in range(n)]
    for r in range(1, rounds + 1):
        for k in range(1, n + 1):
            for times, extra, tag in (
                (balanced, ["--acl-durations", str(durations)], "balanced"),
                (unbalanced, [], "unbalanced"),
            ):
                wall, last = run(
                    profile,
                    jobs,
                    examples,
                    where / f"{tag}-{k}.json",
                    ["--acl-shard", f"{k}/{n}", *extra],
                )
                print(
                    f"  round {r}, shard {k}/{n} ({tag}): {wall:.1f} s wall, {CPU[-1]:.1f} s "
                    f"CPU ({last})",
                    flush=True,
                )
                times[k - 1].append(wall)
                if tag == "balanced":
                    cpu[k - 1].append(CPU[-1])
    BALANCED_CPU[:] = [statistics.median(c) for c in cpu]
    return [statistics.median(t) for t in balanced], [statistics.median(t) for t in unbalanced]


def balance(walls: list[float]) -> float:
    """The slowest shard over the mean shard (1.0: perfectly even)."""
    return max(walls) / statistics.mean(walls)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--durations", type=Path, help="results.json of an earlier run")
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers per shard")
    p.add_argument("--examples", type=int, help="Hypothesis examples per test")
    p.add_argument("--profile", default="spec")
    p.add_argument("--rounds", type=int, default=3, help="runs of each shard (the median)")
    a = p.parse_args()
    warm_up()
    with tempfile.TemporaryDirectory(prefix="acl-scale-") as tmp:
        where = Path(tmp)
        durations = a.durations
        if durations is None:
            durations = where / "whole.json"
            wall, last = run(a.profile, a.jobs, a.examples, durations, [])
            print(f"unsharded run for the durations: {wall:.1f} s ({last})", flush=True)
        print(f"{a.shards} shards, balanced by {durations.name} and not, one at a time:")
        balanced, unbalanced = shards(
            a.shards, a.rounds, a.profile, a.jobs, a.examples, where, durations
        )
    print(
        f"profile {a.profile}, -n {a.jobs} per shard, examples "
        f"{a.examples or 'of the standard settings profile'}, median of {a.rounds} rounds"
    )
    print("balanced shards (s): " + ", ".join(f"{w:.1f}" for w in balanced))
    print("unbalanced shards (s): " + ", ".join(f"{w:.1f}" for w in unbalanced))
    print("balanced shards, CPU (s): " + ", ".join(f"{c:.1f}" for c in BALANCED_CPU))
    # The CPU seconds are less disturbed by other work on a shared machine than the wall.
    print(f"shard_balance by CPU time: {balance(BALANCED_CPU):.2f}")
    print(f"shard_balance without durations: {balance(unbalanced):.2f}")
    print(f"shard_balance: {balance(balanced):.2f}")


if __name__ == "__main__":
    main()
