"""How often the suite's copies meet each hunt-only variant's condition: in the ci run
(none should) and in a bug hunt (dozens should).

``python bench/hunt_reach.py [--minutes 4] [--workers 2] [--profile spec] [NAME ...]``
(run from the repository root or bench/; NAME: hunt-only variants, default every one).
For each, a legal backend (the variant's class with its bug switched off: it answers as
the simulator does and only writes down each copy it took, and whether the variant's
condition held for it) runs through

- the tests of the requirement the variant breaks, as the premise test
  (tests/test_hunt.py) runs them,
- the whole ci run (``acl-conformance run``, the gate),
- a hunt (``acl-conformance hunt --minutes M --workers N``),

and one line each says how many copies met the condition, of how many.  The hunt's
figures depend on the machine (examples per second).  The ci run is derandomised, but
not to the last copy: the same tests through two probe modules that differ only in
code never called gave 9576 and 9650 copies here (the cause is not pinned down; timers
that open gates are a suspect).  A change of the suite's tests may reach
a condition: then the premise test fails, and this bench tells by how much.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.adapters.variants import CATALOGUE
from acl_conformance.reference_impl.constants import ACL_SUCCESS

LOG = "HUNT_REACH_LOG"
"""The environment variable naming the folder the probes write to (a file a process)."""


def reach(name: str, **options: Any) -> Adapter:
    """The probe of hunt-only variant ``name``: its class, its bug switched off."""
    cls = BY_NAME[name].build

    class Reach(cls):  # type: ignore[misc, valid-type]
        def loses_last_byte(self, *args: Any) -> bool:
            return False

        def memcpy_to_symbol_async(
            self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
        ) -> int:
            args = (symbol, src, count, offset, kind, stream)
            # exactly when the variant would shorten it (LastByteLost)
            hit = (
                count > 0
                and self._would_copy(symbol, src, count, offset, kind)
                and cls.loses_last_byte(self, *args)
            )
            code: int = super().memcpy_to_symbol_async(*args)
            if code == ACL_SUCCESS:  # a copy the backend took (not one refused for its stream)
                with open(Path(os.environ[LOG]) / f"{os.getpid()}.log", "a") as f:
                    f.write("hit\n" if hit else "copy\n")
            return code

    return Reach(**options)


def _count(folder: Path) -> tuple[int, int]:
    lines = [ln for f in folder.glob("*.log") for ln in f.read_text().split()]
    return lines.count("hit"), len(lines)


def _cli(*args: str, log: Path) -> None:
    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, LOG: str(log)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "acl_conformance.conformance.command_line.cli", *args]
    subprocess.run(cmd, env=env, capture_output=True, timeout=3600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=[v.name for v in CATALOGUE if v.hunt_only])
    ap.add_argument("--minutes", type=float, default=4.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="spec")
    a = ap.parse_args()
    print(f"{'variant':48s} {'requirement tests':>18s} {'ci run':>14s} {'hunt':>16s}")
    for name in a.names:
        v = BY_NAME[name]
        req = v.catches[a.profile]
        adapter = ["--adapter", "hunt_reach:reach", "--adapter-option", f"name={name}"]
        figures = []
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            runs = {
                # one process, as the premise test runs them
                "targeted": [
                    "run",
                    *adapter,
                    "--profile",
                    a.profile,
                    "--requirement",
                    req,
                    "--jobs",
                    "1",
                ],
                "ci": ["run", *adapter, "--profile", a.profile],
                "hunt": [
                    "hunt",
                    *adapter,
                    "--profile",
                    a.profile,
                    "--minutes",
                    str(a.minutes),
                    "--workers",
                    str(a.workers),
                    "--database",
                    str(t / "db"),
                ],
            }
            for key, args in runs.items():
                (t / key).mkdir()
                extra = ["--report-dir", str(t / f"report-{key}")] if args[0] == "run" else []
                _cli(*args, *extra, log=t / key)
                hits, copies = _count(t / key)
                figures.append(f"{hits}/{copies}")
        print(f"{name:48s} {figures[0]:>18s} {figures[1]:>14s} {figures[2]:>16s}", flush=True)


if __name__ == "__main__":
    main()
