"""``python -m acl_conformance.adapters.cann.installed``: the suite against a CANN installation.

What ``tox -e cann`` runs.  With ``ASCEND_HOME_PATH`` (and ``SOC_VERSION`` and
``ASCENDC_CMAKE_DIR``, which CANN's ``set_env.sh`` sets) it builds the agent with
CMake and the ASC toolchain, then runs the conformance suite against it:
``acl-conformance run --adapter cann --adapter-option agent=<the agent> ...``.
Without an installation it says why it skips and exits 0.

Arguments after the module name are passed on to the run (e.g. ``--profile spec``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from .build import BuildError
from .build import build_agent_asc


def skip_reason(env: Mapping[str, str] | None = None) -> str | None:
    """Why the real-CANN run cannot happen here, or None."""
    e: Mapping[str, str] = os.environ if env is None else env
    home = e.get("ASCEND_HOME_PATH")
    if not home:
        return "ASCEND_HOME_PATH is not set (no CANN installation; source CANN's set_env.sh)"
    if not os.path.isfile(os.path.join(home, "lib64", "libacl_rt.so")):
        return f"ASCEND_HOME_PATH={home} has no lib64/libacl_rt.so"
    if not e.get("SOC_VERSION"):
        return "SOC_VERSION is not set (e.g. Ascend910B1)"
    if not e.get("ASCENDC_CMAKE_DIR"):
        return "ASCENDC_CMAKE_DIR is not set (CANN's set_env.sh sets it)"
    if shutil.which("cmake") is None:
        return "cmake is not installed"
    return None


def command(agent: str, extra: Sequence[str]) -> list[str]:
    """The run: ``acl-conformance run`` against the agent, under the cann profile by default."""
    return [
        sys.executable,
        "-m",
        "acl_conformance.conformance.command_line.cli",
        "run",
        "--adapter",
        "cann",
        "--adapter-option",
        f"agent={agent}",
        *([] if "--profile" in extra else ["--profile", "cann"]),
        *extra,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    extra = list(sys.argv[1:] if argv is None else argv)
    reason = skip_reason()
    if reason is not None:
        print(f"tox -e cann: SKIPPED: {reason}")
        return 0
    try:
        agent = build_agent_asc(Path(os.environ["ASCEND_HOME_PATH"]))
    except BuildError as exc:
        print(f"tox -e cann: the agent could not be built: {exc}", file=sys.stderr)
        return 2
    cmd = command(str(agent), extra)
    print("tox -e cann:", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
