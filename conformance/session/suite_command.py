"""The pytest command line that runs the whole conformance suite in a process of its own.

``acl-conformance run``, the self-checks, the benches and the cann tests all start the
suite this one way; each adds only what is its own (``extra``, placed last).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

SUITE = "acl_conformance.conformance.suite"
"""The suite, as pytest's ``--pyargs`` names it."""


def suite_command(
    profile: str,
    *,
    adapter: str | None = None,
    adapter_options: Iterable[str] = (),
    hypothesis_profile: str | None = "standard",
    results: Path | None = None,
    workers: int | None = None,
    rootdir: Path | None = None,
    extra: Iterable[str] = (),
) -> list[str]:
    """``python -m pytest ... --pyargs <suite>`` under spec profile ``profile``.

    ``adapter`` and ``adapter_options`` (``KEY=VALUE``): the backend (default: the
    plugin's, the simulator); ``hypothesis_profile``: None leaves the plugin's default;
    ``results``: where results.json goes; ``workers``: pytest-xdist's ``-n`` (more than
    0 with work stealing: the machines' shards come last and go to whichever worker is
    free, where the default hands them out in fixed chunks); ``rootdir``: the run ignores
    the caller's own pytest configuration (``-c`` the null device) and has this root.
    """
    cmd = [sys.executable, "-m", "pytest"]
    if rootdir is not None:
        cmd += ["-c", os.devnull, "--rootdir", str(rootdir)]
    cmd += ["-p", "no:cacheprovider", "-q", "--pyargs", SUITE]
    if adapter is not None:
        cmd += ["--acl-adapter", adapter]
    cmd += [a for o in adapter_options for a in ("--acl-adapter-option", o)]
    cmd += ["--acl-profile", profile]
    if hypothesis_profile is not None:
        cmd += ["--acl-hypothesis-profile", hypothesis_profile]
    if results is not None:
        cmd += ["--acl-results", str(results)]
    if workers is not None:
        cmd += ["-n", str(workers), *(["--dist", "worksteal"] if workers else [])]
    return [*cmd, *extra]
