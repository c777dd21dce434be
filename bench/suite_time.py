"""Wall time of the whole conformance suite on the simulator, ci profile, at -n 2 and -n 0.

Both runs are made in this process's environment, one after the other, each a
fresh pytest process.  Last line: ``seconds: <wall at -n 2>`` (target <= 60;
-n 2 should be at least 1.6x faster than -n 0).
"""

from __future__ import annotations

import subprocess
import sys
import time

SUITE = "acl_conformance.conformance.suite"


def run(workers: int, profile: str) -> tuple[float, str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--pyargs",
        SUITE,
        "--acl-profile",
        profile,
        "--acl-hypothesis-profile",
        "ci",
        "-n",
        str(workers),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    last = (proc.stdout.strip().splitlines() or ["<no output>"])[-1]
    if proc.returncode != 0:
        sys.exit(
            f"the suite failed at -n {workers}: {last}\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
        )
    return wall, last


def main() -> None:
    profile = sys.argv[1] if len(sys.argv) > 1 else "spec"
    serial, s_line = run(0, profile)
    parallel, p_line = run(2, profile)
    print(f"profile {profile}, Hypothesis profile ci")
    print(f"-n 0: {serial:.1f} s wall ({s_line})")
    print(f"-n 2: {parallel:.1f} s wall ({p_line})")
    print(f"speed-up: {serial / parallel:.2f}x")
    print(f"seconds: {parallel:.1f}")


if __name__ == "__main__":
    main()
