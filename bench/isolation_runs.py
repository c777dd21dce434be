"""Whole conformance runs through the agent under each isolation, side by side.

Each round runs ``acl-conformance run --adapter cann --adapter-option double=<DOUBLE>
--adapter-option isolation=<I> --profile cann`` once per isolation, in turn (so that a
machine whose load changes spreads it over all of them), and prints per run its wall
time, the CPU time of its processes (user + sys) and the backend instances (agents) its
processes started, by reason (``Suite.instances_started``, which a small plugin written
for the occasion saves at the end of each pytest process).

Run: ``python bench/isolation_runs.py [DOUBLE] [ROUNDS] [ISOLATION ...]`` (default:
``1``, 2 rounds, ``reset example``); e.g. ``python bench/isolation_runs.py
stream-limit:200 1 reset run``.  The last lines are the medians per isolation.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = """
import json, os
from pathlib import Path
from acl_conformance.conformance.plugin import shared

def pytest_sessionfinish(session):
    suite = session.config.stash.get(shared.SUITE, None)
    if suite is not None:
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        path = Path(os.environ["BENCH_AGENTS"]) / f"agents-{name}.json"
        path.write_text(json.dumps(dict(suite.instances_started)))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(double: str, isolation: str, tmp: Path) -> tuple[float, float, int, dict[str, int]]:
    """(wall s, CPU s, exit status, agents by reason) of one run."""
    out = Path(tempfile.mkdtemp(dir=tmp))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in (str(tmp), os.environ.get("PYTHONPATH")) if p),
        PYTEST_ADDOPTS="-p bench_agent_counts",
        BENCH_AGENTS=str(out),
    )
    cmd = [
        sys.executable,
        "-m",
        "acl_conformance.conformance.command_line.cli",
        "run",
        "--adapter",
        "cann",
        "--adapter-option",
        f"double={double}",
        "--adapter-option",
        f"isolation={isolation}",
        "--profile",
        "cann",
        "--report-dir",
        str(out / "report"),
    ]
    cpu, t0 = _cpu(), time.perf_counter()
    rc = subprocess.run(cmd, capture_output=True, env=env, cwd=out, timeout=3600).returncode
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu
    agents: collections.Counter[str] = collections.Counter()
    for path in out.glob("agents-*.json"):
        agents.update(json.loads(path.read_text()))
    return wall, cpu, rc, dict(agents)


def main() -> None:
    double = sys.argv[1] if len(sys.argv) > 1 else "1"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    isolations = sys.argv[3:] or ["reset", "example"]
    walls: dict[str, list[float]] = {i: [] for i in isolations}
    cpus: dict[str, list[float]] = {i: [] for i in isolations}
    with tempfile.TemporaryDirectory(prefix="acl-bench-isolation-") as name:
        tmp = Path(name)
        (tmp / "bench_agent_counts.py").write_text(PLUGIN)
        for k in range(rounds):
            for isolation in isolations:
                wall, cpu, rc, agents = one_run(double, isolation, tmp)
                walls[isolation].append(wall)
                cpus[isolation].append(cpu)
                print(
                    f"round {k + 1} isolation={isolation:8} exit {rc}  wall {wall:6.1f} s  "
                    f"cpu {cpu:6.1f} s  agents {sum(agents.values())} {agents}",
                    flush=True,
                )
    for isolation in isolations:
        print(
            f"median isolation={isolation:8} wall {statistics.median(walls[isolation]):6.1f} s  "
            f"cpu {statistics.median(cpus[isolation]):6.1f} s"
        )


if __name__ == "__main__":
    main()
