"""Build hook only (the project is described in pyproject.toml).

Records the git commit the package is built from in
``acl_conformance/_build_info.json``, so that a report can name the exact
suite that produced it even when the suite was installed from a wheel.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(HERE), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class BuildPyWithCommit(build_py):
    def run(self) -> None:
        super().run()
        commit = _git("rev-parse", "HEAD")
        status = _git("status", "--porcelain", "--untracked-files=no")
        info = {"commit": commit, "dirty": bool(status) if status is not None else None}
        target = Path(self.build_lib) / "acl_conformance" / "_build_info.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(info) + "\n")


setup(cmdclass={"build_py": BuildPyWithCommit})
