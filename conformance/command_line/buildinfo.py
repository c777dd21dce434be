"""Which suite made a report: its version and the git commit it was built from.

A wheel carries the commit in ``acl_conformance/_build_info.json`` (written by
the build hook in setup.py); an editable install or a source checkout asks git.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import acl_conformance

_HEX = frozenset("0123456789abcdef")


def _valid(commit: object) -> bool:
    return isinstance(commit, str) and len(commit) == 40 and set(commit) <= _HEX


def _from_git() -> tuple[str | None, bool | None]:
    # conformance/command_line/buildinfo.py: the checkout's root is two folders up
    here = Path(__file__).resolve().parent
    if not (here.parents[1] / "pyproject.toml").is_file():
        return None, None  # installed, not a source checkout: whatever git is around is not ours
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return head.stdout.strip(), dirty


def suite_info() -> dict[str, Any]:
    """{name, version, commit ('unknown' if none can be found), dirty}."""
    commit: str | None = None
    dirty: bool | None = None
    try:
        text = resources.files("acl_conformance").joinpath("_build_info.json").read_text()
        data = json.loads(text)
        commit, dirty = data.get("commit"), data.get("dirty")
    except (OSError, ValueError):
        pass
    if not _valid(commit):
        commit, dirty = _from_git()
    return {
        "name": "acl-conformance",
        "version": acl_conformance.__version__,
        "commit": commit if _valid(commit) else "unknown",
        "dirty": dirty,
    }
