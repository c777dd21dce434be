"""tox.ini: the environments ``tox list`` shows are exactly the project's seven.

A description such as ``ruff: lint and format check`` is read by tox as a factor
condition (``ruff:`` applies the rest to environments with the factor ``ruff``),
which invents an environment ``ruff`` that runs the whole test suite and leaves
``lint`` without a description of its own.
"""

from __future__ import annotations

import configparser
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = {"py", "lint", "type", "conformance", "selfcheck", "cann", "hunt"}
FACTOR_PREFIX = re.compile(r"^\s*[\w.!,-]+:\s")
"""What tox takes for a factor condition at the start of a value's line."""


def _tox_list() -> dict[str, str]:
    """Environment -> description, as ``tox list`` prints them."""
    if importlib.util.find_spec("tox") is None:
        pytest.skip("tox is not installed")
    out = subprocess.run(
        [sys.executable, "-m", "tox", "list", "-c", str(ROOT / "tox.ini")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr or out.stdout
    envs: dict[str, str] = {}
    for line in out.stdout.splitlines():
        name, arrow, description = line.partition(" -> ")
        if arrow:
            envs[name.strip()] = description.strip()
    return envs


def test_tox_lists_exactly_the_projects_environments() -> None:
    envs = _tox_list()
    assert set(envs) == ENVIRONMENTS, f"tox list shows {sorted(envs)}"


def test_every_environment_has_a_description_of_its_own() -> None:
    envs = _tox_list()
    assert all(envs.values()), envs
    # An environment that inherits [testenv]'s description (as lint did) repeats py's.
    assert len(set(envs.values())) == len(envs), envs


def test_no_description_starts_like_a_factor_condition() -> None:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "tox.ini", encoding="utf-8")
    for section in cfg.sections():
        for line in cfg[section].get("description", "").splitlines():
            assert not FACTOR_PREFIX.match(line), f"[{section}] description: {line!r}"


def test_the_factor_check_can_fail() -> None:
    assert FACTOR_PREFIX.match("ruff: lint and format check")
    assert FACTOR_PREFIX.match("py311,py312: the tests")
    assert not FACTOR_PREFIX.match("lint and format check (ruff)")
    assert not FACTOR_PREFIX.match("the suite (ASCEND_HOME_PATH from set_env.sh); skips")
