"""Wall time of the whole conformance suite on the simulator, standard Hypothesis settings
profile, at -n 2 and -n 0.

Both runs are made in this process's environment, one after the other, each a
fresh pytest process (-n 2 with ``--dist worksteal``, as ``acl-conformance run`` does),
alternated for three rounds (``python bench/suite_time.py [spec|cann] [rounds]``); the
medians are compared.  Last line: ``seconds: <wall at -n 2>`` (target <= 30;
-n 2 should be at least 1.6x faster than -n 0).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from suite_runs import ENV
from suite_runs import arguments
from suite_runs import warm_up

from acl_conformance.conformance.session.suite_command import suite_command


def run(workers: int, profile: str) -> tuple[float, str]:
    cmd = suite_command(profile, workers=workers)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=ENV)
    wall = time.perf_counter() - t0
    last = (proc.stdout.strip().splitlines() or ["<no output>"])[-1]
    if proc.returncode != 0:
        sys.exit(
            f"the suite failed at -n {workers}: {last}\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
        )
    return wall, last


def main() -> None:
    profile, rounds = arguments()
    warm_up()
    # Alternated, so that both settings see the same passing load of a shared machine;
    # the medians are compared.
    serial: list[float] = []
    parallel: list[float] = []
    for k in range(rounds):
        s, s_line = run(0, profile)
        p, p_line = run(2, profile)
        serial.append(s)
        parallel.append(p)
        print(f"round {k + 1}: -n 0 {s:.1f} s ({s_line}); -n 2 {p:.1f} s ({p_line})")
    s_med, p_med = statistics.median(serial), statistics.median(parallel)
    print(f"profile {profile}, Hypothesis settings profile standard, median of {rounds} rounds")
    print(f"-n 0: {s_med:.1f} s wall")
    print(f"-n 2: {p_med:.1f} s wall")
    print(f"speed-up: {s_med / p_med:.2f}x")
    print(f"seconds: {p_med:.1f}")


if __name__ == "__main__":
    main()
