"""What the whole-suite benches share: their arguments, environment and warm-up.

``suite_time.py`` and ``failing_run.py`` each time whole-suite runs, one fresh pytest
process a run (the command line is :func:`suite_command`'s), alternated for a few
rounds, and compare the medians.
"""

from __future__ import annotations

import os
import subprocess
import sys

from acl_conformance.conformance.session.suite_command import SUITE

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Every run compiles the same modules; with bytecode caching on, and one warm-up
collection first (:func:`warm_up`), no run pays for it and the figures are the suite's
own."""


def arguments() -> tuple[str, int]:
    """``[spec|cann] [rounds]`` from the command line: the profile (default spec) and the
    number of rounds (default 3)."""
    profile = sys.argv[1] if len(sys.argv) > 1 else "spec"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    return profile, rounds


def warm_up() -> None:
    """Collect the suite once, so that the modules are compiled before any run is timed."""
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "--pyargs", SUITE],
        capture_output=True,
        timeout=600,
        env=ENV,
    )
