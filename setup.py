"""Where the packages are, and a build hook (the project is described in pyproject.toml).

``acl_conformance.X.Y`` is the repository's ``X/Y.py``: the folders of the
design (reference_impl/, adapters/, conformance/, reports/) are installed under
the one package ``acl_conformance``, whose root is the folder of that name.
``PACKAGE_DIRS`` below is the only statement of that mapping; the package list
is computed from it (every folder under a mapped one, data folders included, so
that setuptools ships their files as package data without warnings).

The build hook records the git commit the package is built from in
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

PACKAGE_DIRS = {
    "acl_conformance": "acl_conformance",
    "acl_conformance.reference_impl": "reference_impl",
    "acl_conformance.adapters": "adapters",
    "acl_conformance.conformance": "conformance",
    "acl_conformance.reports": "reports",
}
"""Package name -> the repository folder that holds it (one line per folder)."""


def packages(root: Path = HERE) -> list[str]:
    """Every package of the distribution: each mapped folder and every folder below it."""
    found = []
    for name, folder in PACKAGE_DIRS.items():
        base = root / folder
        for d in sorted([base, *(p for p in base.rglob("*") if p.is_dir())]):
            rel = d.relative_to(base).parts
            if any(part.startswith((".", "_")) or "." in part for part in rel):
                continue  # __pycache__, hidden folders, egg-info
            found.append(".".join([name, *rel]))
    return found


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


if __name__ == "__main__":
    setup(
        package_dir=PACKAGE_DIRS,
        packages=packages(),
        cmdclass={"build_py": BuildPyWithCommit},
    )
