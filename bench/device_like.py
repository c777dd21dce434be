"""The suite's time on a device that behaves like real hardware, against the simulator.

A real asynchronous device is slow to set up (a context takes about 200 ms), frees and
unregisters wait for the whole device, and the host functions of its streams run one at
a time.  The bundled C double plays such a device (``double=device-like:200``); this
bench runs the whole suite (standard Hypothesis settings profile, ``--jobs 2``) through
the agent and that double, and on the simulator, alternated for a few rounds in the same
run (``python bench/device_like.py [spec|cann] [rounds]``, default spec and 2), and
compares the median walls.  Each run must be conformant.

It prints each run, the agents each device-like run started (and why), the median of
those started for a failed reset (``failed_reset_agents:``; the conformant double's
resets never fail, so the target is 0: a harness that resets a device or writes a large
variable is undone through the contract, docs/design.md "Isolation and backend
instances"), and last ``device_like_ratio: <median wall device-like / median wall
simulator>`` (target <= 1.5).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from suite_runs import ENV
from suite_runs import arguments
from suite_runs import warm_up

DEVICE_LIKE = ["--adapter", "cann", "--adapter-option", "double=device-like:200"]
"""A device with the real hardware's facts at realistic values: 200 ms context creation,
frees and unregisters that wait for the device, host functions serialized per device,
pageable copies staged at the call."""


def run(profile: str, backend: list[str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds and the report of one conformance run of the whole suite."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "acl_conformance",
            "run",
            *backend,
            "--profile",
            profile,
            "--jobs",
            "2",
            "--report-dir",
            tmp,
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=ENV)
        wall = time.perf_counter() - t0
        report_path = Path(tmp) / "report.json"
        if proc.returncode != 0 or not report_path.exists():
            sys.exit(
                f"not conformant ({' '.join(backend) or 'simulator'}, exit {proc.returncode}):\n"
                f"{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
            )
        report: dict[str, Any] = json.loads(report_path.read_text())
    return wall, report


def main() -> None:
    profile, rounds = arguments()
    if len(sys.argv) <= 2:
        rounds = 2
    warm_up()
    run(profile, DEVICE_LIKE)  # builds the double and the agent once, outside the timing
    device: list[float] = []
    simulator: list[float] = []
    started: list[int] = []
    failed_resets: list[int] = []
    for k in range(rounds):
        d, d_report = run(profile, DEVICE_LIKE)
        s, _ = run(profile, [])
        device.append(d)
        simulator.append(s)
        agents = d_report["run"].get("instances") or {}
        started.append(int(agents.get("started") or 0))
        failed_resets.append(int((agents.get("reasons") or {}).get("failed reset") or 0))
        reasons = ", ".join(f"{k} {v}" for k, v in sorted((agents.get("reasons") or {}).items()))
        print(
            f"round {k + 1}: device-like {d:.1f} s ({d_report['run']['tests']} tests, "
            f"agents started: {agents.get('started')} ({reasons})); simulator {s:.1f} s"
        )
    d_med, s_med = statistics.median(device), statistics.median(simulator)
    print(
        f"profile {profile}, Hypothesis settings profile standard, --jobs 2, median of {rounds} rounds"
    )
    print(f"device-like (cann agent, double=device-like:200): {d_med:.1f} s wall")
    print(f"simulator: {s_med:.1f} s wall")
    print(f"agents_started: {int(statistics.median(started))}")
    print(f"failed_reset_agents: {int(statistics.median(failed_resets))}")
    print(f"device_like_ratio: {d_med / s_med:.2f}")


if __name__ == "__main__":
    main()
